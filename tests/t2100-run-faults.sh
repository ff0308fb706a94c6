#!/bin/sh
# cost: 35
# asan: yes
test_description='gpuorch run when things go wrong: lost host, bad keys, closed port, hangs, injection, SIGINT'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'run fault tests'

MARK=gpuorch-t2100-$$-mark  # "-mark" ends it: no prefix of another run's marker

# spec NAME STEP-PARAMS TIMEOUT: a one-program CPU experiment in proj/experiments/NAME.json
write_spec() {
	cat >"proj/experiments/$1.json" <<JSON
{"schema": 1, "name": "$1", "phase": "fault test $1",
 "sources": ["cpu/cputimer.c"],
 "targets": {"H100": "sm_90a"},
 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
 "problems": [{"name": "p", "params": {$2}}],
 "steps": [{"kind": "benchmark", "program": "cputimer", "timeout_s": $3}]}
JSON
}

# wait_step_running HOST: until a step of the newest remote run has a pgid file
wait_step_running() {
	wait_for 60 "ls $(sshd_var $1 WORKDIR)/runs/*/*/pgid >/dev/null 2>&1"
}

test_expect_success 'setup' '
	sshd_start a && sshd_start b && sshd_start c &&
	sshd_write_hosts_json hosts.json a b c &&
	project_init
'

test_expect_success 'a host whose sshd is killed mid-run fails alone; the record is complete' '
	write_spec slow "\"work\": 1000, \"sleep\": 6" 60 &&
	{ (cd proj && "$GPUORCH" run experiments/slow.json --hosts ../hosts.json \
		--reconnect-timeout 3 --plain >../lost.out 2>&1; echo $? >../lost.rc) & } &&
	wait_step_running b &&
	sshd_kill b &&
	wait_for 120 "test -f lost.rc" &&
	test "$(cat lost.rc)" = 1 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json status)" = complete &&
	test "$(jq_ $run/run.json outcome)" = failed &&
	test "$(jq_ $run/run.json hosts.0.status)" = ok &&
	test "$(jq_ $run/run.json hosts.2.status)" = ok &&
	test "$(jq_ $run/run.json hosts.1.status)" = failed &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.2.steps.0.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.1.steps.0.status)" = INFRA_ERROR &&
	jq_ $run/run.json hosts.1.error | grep -i "connection" &&
	grep -i "did not finish\|failed\|lost" $run/report.md
'

test_expect_success 'restart b' '
	sshd_restart b
'

test_expect_success 'a changed host key is refused and nothing is sent' '
	ssh-keygen -q -t ed25519 -N "" -f otherkey &&
	echo "[127.0.0.1]:$SSHD_a_PORT $(cut -d" " -f1,2 otherkey.pub)" >kh-changed &&
	sed "s#$SSHD_a_KNOWN_HOSTS#$TRASH/kh-changed#" hosts.json >hosts-changed.json &&
	sshd_forget_workdir a &&
	(cd proj && test_expect_code 3 "$GPUORCH" run experiments/basic.json \
		--hosts ../hosts-changed.json --host a) >changed.out 2>&1 &&
	grep -i "host key" changed.out && grep "SHA256:" changed.out &&
	test -z "$(ls "$SSHD_a_WORKDIR")" &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.status)" = unreachable
'

test_expect_success 'an unknown host key is refused unless --accept-new-host-key, which records it' '
	: >kh-empty &&
	sed "s#$SSHD_a_KNOWN_HOSTS#$TRASH/kh-empty#" hosts.json >hosts-new.json &&
	"$GPUORCH" hosts check --hosts hosts-new.json --host a >new1.out 2>&1;
	test $? = 3 && grep -i "unknown\|not known\|accept-new-host-key" new1.out &&
	"$GPUORCH" hosts check --hosts hosts-new.json --host a --accept-new-host-key >new2.out 2>&1 &&
	grep "$SSHD_a_PORT" kh-empty &&
	"$GPUORCH" hosts check --hosts hosts-new.json --host a >new3.out 2>&1
'

test_expect_success 'a wrong key gives an authentication error naming the host' '
	sed "s#$SSHD_a_IDENTITY#$TRASH/otherkey#" hosts.json >hosts-wrongkey.json &&
	"$GPUORCH" hosts check --hosts hosts-wrongkey.json --host a >auth.out 2>&1;
	test $? = 3 && grep -i "auth" auth.out && grep "a" auth.out
'

test_expect_success 'a closed port fails clearly within the connect timeout' '
	sshd_start d && port=$SSHD_d_PORT && sshd_stop d &&
	sed "s/\"port\": $SSHD_a_PORT/\"port\": $port/" hosts.json >hosts-closed.json &&
	t0=$(test_now_ms) &&
	"$GPUORCH" hosts check --hosts hosts-closed.json --host a >closed.out 2>&1;
	rc=$? && t=$(test_elapsed_ms $t0) &&
	echo "took $t ms (not judged: refused, not timed out)" &&
	test $rc = 3 && grep -i "refused" closed.out
'

test_expect_success 'a hanging step is killed at its timeout and nothing survives on the host' '
	write_spec hang "\"hang\": 1, \"marker\": \"$MARK\"" 3 &&
	(cd proj && test_expect_code 1 "$GPUORCH" run experiments/hang.json --hosts ../hosts.json \
		--host c --plain) >hang.out 2>&1 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = TIMEOUT &&
	sleep 1 &&
	! pgrep -f "$MARK"
'

test_expect_success 'names with spaces, quotes, $() and ; cannot inject commands' '
	mkdir -p "proj/we ird" &&
	echo data >"proj/we ird/a \$(touch INJ1); b'"'"'c\".txt" &&
	cat >proj/experiments/evil.json <<-\JSON &&
	{"schema": 1, "name": "evil $(touch INJ2); x'"'"'q\"", "phase": "p; touch INJ3 `touch INJ8`",
	 "sources": ["cpu/cputimer.c", "we ird/a $(touch INJ1); b'"'"'c\".txt"],
	 "targets": {"H100": "sm_90a"},
	 "programs": {"p $(touch INJ6)": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
	 "problems": [{"name": "q; touch INJ7", "params": {"work": 100, "marker": "$(touch INJ4)"}}],
	 "steps": [{"kind": "benchmark", "program": "p $(touch INJ6)", "timeout_s": 60}]}
	JSON
	(cd proj && "$GPUORCH" run experiments/evil.json --hosts ../hosts.json --host c) >evil.out 2>&1 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS &&
	ls "$SSHD_c_WORKDIR"/content/*/src/we\ ird/ | grep "touch INJ1" &&
	test -z "$(find "$TRASH" "$HOME" -maxdepth 8 -name "INJ*" 2>/dev/null)"
'

test_expect_success 'a compiled source or flag that nvcc would hand to a shell is refused' '
	sed -e "s#\"cpu/cputimer.c\"#\"cpu/x\$(touch INJ9).c\"#g" proj/experiments/evil.json >proj/experiments/evil2.json &&
	cp proj/cpu/cputimer.c "proj/cpu/x\$(touch INJ9).c" &&
	(cd proj && test_expect_code 2 "$GPUORCH" run experiments/evil2.json --hosts ../hosts.json --host c) >evil2.out 2>&1 &&
	grep "nvcc passes its arguments through a shell" evil2.out &&
	grep "programs.p \$(touch INJ6).sources\[0\]" evil2.out &&
	test -z "$(find "$TRASH" "$HOME" -maxdepth 8 -name "INJ*" 2>/dev/null)"
'

test_expect_success 'SIGINT mid-run records the run as incomplete and kills the remote step' '
	write_spec long "\"work\": 1000, \"sleep\": 30, \"marker\": \"$MARK-int\"" 120 &&
	rm -rf "$SSHD_c_WORKDIR"/runs &&
	{ (cd proj && exec "$GPUORCH" run experiments/long.json --hosts ../hosts.json --host c \
		--plain >../int.out 2>&1) & } &&
	pid=$! &&
	wait_for 60 "grep -q \"^run \" int.out" &&
	id=$(sed -n "s/^run \([0-9a-f-]*\): .*/\1/p" int.out | head -n 1) && test -n "$id" &&
	wait_for 60 "ls $SSHD_c_WORKDIR/runs/$id/*/pgid >/dev/null 2>&1" &&
	kill -INT $pid &&
	wait $pid; rc=$? &&
	test $rc = 130 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json status)" = incomplete &&
	grep -i "did not finish\|incomplete" $run/report.md &&
	wait_for 10 "! pgrep -f cputimer.*$MARK-int"
'

test_expect_success '--commit REV packages that commit and leaves the work tree alone' '
	(cd proj && git add -A && git commit -qm "specs" && git rev-parse HEAD) >revA &&
	(cd proj && "$GPUORCH" run experiments/basic.json --hosts ../hosts.json --host a --dry-run) >dryA.out &&
	cidA=$(sed -n "s/^content id  \([0-9a-f]*\).*/\1/p" dryA.out) && test -n "$cidA" &&
	echo "/* changed */" >>proj/cpu/cputimer.c &&
	(cd proj && git commit -qam "change B") &&
	echo "/* dirty */" >>proj/cpu/cputimer.c &&
	(cd proj && git status --porcelain && md5sum cpu/cputimer.c) >before &&
	(cd proj && "$GPUORCH" run experiments/basic.json --hosts ../hosts.json --host a \
		--commit $(cat ../revA)) >commit.out 2>&1 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json provenance.content_id)" = "$cidA" &&
	test "$(jq_ $run/run.json provenance.git.commit)" = "$(cat revA)" &&
	test "$(jq_ $run/run.json provenance.source)" = commit &&
	(cd proj && git status --porcelain && md5sum cpu/cputimer.c) >after &&
	test_cmp before after
'

test_expect_success 'a dirty work tree is recorded with its diff' '
	(cd proj && "$GPUORCH" run experiments/basic.json --hosts ../hosts.json --host a) >dirty.out 2>&1 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json provenance.git.dirty)" = true &&
	test "$(jq_ $run/run.json provenance.git.diff_file)" = source.diff &&
	grep "dirty" $run/source.diff
'

test_done
