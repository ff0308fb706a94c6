#!/bin/sh
# cost: 55
# asan: yes
# waits: yes
test_description='gpuorch run through the host runner: builds bounded per host, a failing build phase kills its builds, a busy host is not a lost host, the probe reused while the host is unchanged, a rebooted host reports its step lost'
# The host's nvcc is a stand-in (first on the session's PATH) that logs when
# each build's link starts and ends, is slow or fails for some programs by
# name (the name is in the link's -o), and otherwise runs the real nvcc
# (--version and --dryrun, which a build asks of a wrapper nvcc outside a CUDA
# tree for its TOP, and the compiles of the sources into objects, -c, go
# straight to the real one). Checks are && chains (tests/lib/testlib.sh).
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'runner run tests'

MARK=gpuorch-t2240-$$-mark  # "-mark" ends it: no prefix of another run's marker
# a copy of sleep whose name carries the marker: pgrep -f finds every
# process a stand-in build started, and nothing else
SLEEPER="$TRASH/sleep-$MARK"
cp "$(command -v sleep)" "$SLEEPER"
test_at_exit "pkill -KILL -f '$MARK'"
REAL_NVCC=$(nvcc_path)
BLOG="$TRASH/builds.log"

survivors() {
	pgrep -f "$MARK" >/dev/null
}

# spec NAME BUILD_TIMEOUT STEP_PARAMS PROGRAM...: one CPU program per name,
# one benchmark step each. Each is built from its own copy of cpu/cputimer.c,
# cpu/NAME.c (committed): identical builds are one build (docs/spec.md), and
# an nvcc build's executable is named after its first source, so the link's
# -o names the program, as the stand-in nvcc needs
write_spec() {
	_n=$1 _bt=$2 _pp=$3
	shift 3
	_progs='' _steps='' _srcs=''
	for _p in "$@"; do
		cp proj/cpu/cputimer.c "proj/cpu/$_p.c" || return 1
		_srcs="$_srcs\"cpu/$_p.c\","
		_progs="$_progs\"$_p\": {\"sources\": [\"cpu/$_p.c\"], \"needs_gpu\": false},"
		_steps="$_steps{\"kind\": \"benchmark\", \"program\": \"$_p\", \"timeout_s\": 60},"
	done
	(cd proj && git add cpu && { git diff --cached --quiet || git commit -qm "sources of $_n"; }) ||
		return 1
	cat >"proj/experiments/$_n.json" <<JSON
{"schema": 1, "name": "$_n", "phase": "runner test $_n",
 "sources": [${_srcs%,}], "build": {"timeout_s": $_bt},
 "targets": {"H100": "sm_90a"},
 "programs": {${_progs%,}},
 "problems": [{"name": "p", "params": {$_pp}}],
 "steps": [${_steps%,}]}
JSON
}

# most_at_once: the most builds the stand-in nvcc ran at the same time
most_at_once() {
	sort -k2,2n "$BLOG" | awk '
		$1 == "start" { n++; if (n > max) max = n }
		$1 == "end" { n-- }
		END { print max + 0 }'
}

test_expect_success 'setup: a host whose nvcc is a logging stand-in, max_builds 2' '
	mkdir -p "$TRASH/bin" &&
	cat >"$TRASH/bin/nvcc" <<-EOF &&
	#!/bin/sh
	case "\$*" in *--version*|*--dryrun*|*" -c "*) exec "$REAL_NVCC" "\$@" ;; esac
	echo "start \$(date +%s%N) \$\$" >>"$BLOG"
	case "\$*" in
	*badprog*) "$SLEEPER" 0.5; echo "nvcc stand-in: error: badprog does not compile" >&2
		echo "end \$(date +%s%N) \$\$" >>"$BLOG"; exit 1 ;;
	*slowprog*) "$SLEEPER" 600 ;;
	*longprog*) "$SLEEPER" 27 ;;
	*) "$SLEEPER" 0.6 ;;
	esac
	"$REAL_NVCC" "\$@"; rc=\$?
	echo "end \$(date +%s%N) \$\$" >>"$BLOG"
	exit \$rc
	EOF
	chmod +x "$TRASH/bin/nvcc" &&
	sshd_start_with_path a "$TRASH/bin" &&
	sshd_write_hosts_json hosts.json a &&
	sed "s|\"name\": \"a\",|\"name\": \"a\", \"max_builds\": 2,|" hosts.json >h2.json &&
	mv h2.json hosts.json && grep "\"max_builds\": 2" hosts.json &&
	project_init
'

test_expect_success 'four builds run at most max_builds (2) at once, each with its own duration' '
	write_spec bound 120 "\"work\": 1000" p1 p2 p3 p4 &&
	: >"$BLOG" &&
	(cd proj && "$GPUORCH" run experiments/bound.json --hosts ../hosts.json --plain) >bound.out 2>&1 &&
	run=$(last_run_dir) &&
	cat "$BLOG" &&
	test $(grep -c "^start" "$BLOG") = 4 &&
	test "$(most_at_once)" = 2 &&
	for i in 0 1 2 3; do
		test "$(jq_ $run/run.json hosts.0.builds.$i.status)" = PASS &&
		test "$(jq_ $run/run.json hosts.0.steps.$i.status)" = PASS &&
		d=$(jq_ $run/run.json hosts.0.builds.$i.duration_s) &&
		echo "build $i took $d s" &&
		awk -v d="$d" "BEGIN { exit !(d >= 0.6 && d < 60) }" || return 1
	done &&
	test "$(jq_ $run/run.json hosts.0.builds.0.program)" = p1 &&
	test "$(jq_ $run/run.json hosts.0.builds.3.program)" = p4
'

test_expect_success 'a failing build kills the running builds: nothing of them is left, the rest is skipped' '
	# the slow builds would run to the 300-s build timeout (TIMEOUT, not
	# KILLED) if the failing one did not kill them
	write_spec failing 300 "\"work\": 1000" slowprog1 slowprog2 badprog &&
	sed "s|\"max_builds\": 2|\"max_builds\": 3|" hosts.json >hosts3.json &&
	start=$(test_now_ms) &&
	(cd proj && test_expect_code 1 "$GPUORCH" run experiments/failing.json --hosts ../hosts3.json \
		--plain) >failing.out 2>&1 &&
	elapsed=$(test_elapsed_ms $start) &&
	echo "took $elapsed ms" && cat failing.out &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.builds.2.status)" = FAIL &&
	jq_ $run/run.json hosts.0.builds.2.reason | grep "badprog does not compile" &&
	test "$(jq_ $run/run.json hosts.0.builds.0.status)" = KILLED &&
	test "$(jq_ $run/run.json hosts.0.builds.1.status)" = KILLED &&
	for i in 0 1 2; do
		test "$(jq_ $run/run.json hosts.0.steps.$i.status)" = SKIPPED || return 1
	done &&
	{ pgrep -af "$MARK" || true; } &&
	! survivors
'

test_expect_success 'a build silent for longer than the old 25 s poll limit: the host is busy, not lost' '
	write_spec long 120 "\"work\": 1000" longprog &&
	start=$(test_now_ms) &&
	(cd proj && "$GPUORCH" run experiments/long.json --hosts ../hosts.json --plain) >long.out 2>&1 &&
	elapsed=$(test_elapsed_ms $start) &&
	echo "took $elapsed ms" &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.status)" = ok &&
	test "$(jq_ $run/run.json hosts.0.builds.0.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS &&
	! grep -i "reconnect" long.out &&
	test $elapsed -ge 27000
'

test_expect_success 'the probe is reused while the host is unchanged (same boot, same tools)' '
	cat >"$TRASH/python3" <<-EOF &&
	#!/bin/sh
	echo x >>"$TRASH/python-calls"
	exec python3 "\$@"
	EOF
	chmod +x "$TRASH/python3" &&
	sed "s|\"name\": \"a\",|\"name\": \"a\", \"python\": \"$TRASH/python3\",|" hosts.json >hostsp.json &&
	: >"$TRASH/python-calls" &&
	"$GPUORCH" hosts check --hosts hostsp.json --json >p1.json &&
	n1=$(wc -l <"$TRASH/python-calls") &&
	"$GPUORCH" hosts check --hosts hostsp.json --json >p2.json &&
	n2=$(wc -l <"$TRASH/python-calls") &&
	echo "python ran $n1 times on the first probe, $n2 in all after the second" &&
	test $n1 -ge 1 && test $n2 = $n1 &&
	touch -d "+1 hour" "$TRASH/python3" &&
	"$GPUORCH" hosts check --hosts hostsp.json --json >p3.json &&
	n3=$(wc -l <"$TRASH/python-calls") &&
	echo "after the tool changed: $n3" &&
	test $n3 -gt $n2
'

test_expect_success 'a re-run uses the controller'"'"'s kept probe (no probe command); a changed host is probed again' '
	write_spec kept 120 "\"work\": 1000" p1 &&
	(cd proj && "$GPUORCH" run experiments/kept.json --hosts ../hostsp.json --plain) >kept1.out 2>&1 &&
	run=$(last_run_dir) &&
	! jq_ $run/run.json hosts.0.phases.1.detail | grep "kept from an earlier probe" &&
	: >"$TRASH/python-calls" &&
	(cd proj && "$GPUORCH" run experiments/kept.json --hosts ../hostsp.json --plain) >kept2.out 2>&1 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.phases.1.name)" = probe &&
	jq_ $run/run.json hosts.0.phases.1.detail | grep "kept from an earlier probe" &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS &&
	test ! -s "$TRASH/python-calls" &&
	touch -d "+2 hours" "$TRASH/python3" &&
	(cd proj && "$GPUORCH" run experiments/kept.json --hosts ../hostsp.json --plain) >kept3.out 2>&1 &&
	cat kept3.out &&
	grep "the host changed since its last probe" kept3.out &&
	test -s "$TRASH/python-calls" &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS
'

test_expect_success 'the host "reboots" mid-step (sshd restarted, runner and step gone): the step is lost, not passed' '
	cat >proj/experiments/reboot.json <<-JSON &&
	{"schema": 1, "name": "reboot", "phase": "runner test reboot",
	 "sources": ["cpu/cputimer.c"], "targets": {"H100": "sm_90a"},
	 "programs": {"p1": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
	 "problems": [{"name": "slow", "params": {"work": 1000, "sleep": 30, "marker": "$MARK-reboot"}},
	              {"name": "quick", "params": {"work": 1000}}],
	 "steps": [{"kind": "benchmark", "program": "p1", "timeout_s": 60}]}
	JSON
	{ (cd proj && "$GPUORCH" run experiments/reboot.json --hosts ../hosts.json \
		--reconnect-timeout 60 --plain >../reboot.out 2>&1; echo $? >../reboot.rc) & } &&
	wait_for 60 "grep -q \"^run \" reboot.out 2>/dev/null" &&
	id=$(sed -n "s/^run \([0-9a-f-]*\): .*/\1/p" reboot.out | head -n 1) && test -n "$id" &&
	rd="$SSHD_a_WORKDIR/runs/$id" &&
	wait_for 60 "grep -q step_started \"$rd/journal\" 2>/dev/null" &&
	wait_for 10 "pgrep -f \"marker=$MARK-reboot\"" &&
	sshd_kill a &&
	kill -KILL "$(cat "$rd/runner.pid")" &&
	for f in "$rd"/*/pgid; do kill_session "$(cat "$f")" || return 1; done &&
	! pgrep -f "marker=$MARK-reboot" &&
	sleep 1 &&
	sshd_restart a &&
	wait_for 120 "test -f reboot.rc" &&
	cat reboot.out &&
	test "$(cat reboot.rc)" = 1 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = INFRA_ERROR &&
	jq_ $run/run.json hosts.0.steps.0.reason | grep "vanished" &&
	test "$(jq_ $run/run.json hosts.0.steps.1.status)" = PASS &&
	grep reconnected reboot.out
'

test_expect_success 'no stand-in build is left running' '
	! survivors
'

test_done
