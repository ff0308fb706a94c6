#!/bin/sh
# cost: 30
# asan: yes
# waits: yes
test_description='gpuorch hosts clean: what no run used for DAYS goes (runs, source trees, builds, blobs no tree names); what is in use stays, a live run included'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'hosts clean tests'

# two programs of one source each (other.c: cputimer.c with a comment), both run
# spec SLEEP [MORE_PARAMS]: c.json, whose steps sleep SLEEP seconds first
spec() {
	cat >proj/experiments/c.json <<-JSON
	{"schema": 1, "name": "c", "phase": "clean test",
	 "sources": ["cpu/cputimer.c", "cpu/other.c"], "targets": {"H100": "sm_90a"},
	 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false},
	              "other": {"sources": ["cpu/other.c"], "needs_gpu": false}},
	 "problems": [{"name": "p", "params": {"work": 1000, "sleep": $1${2:-}}}],
	 "steps": [{"kind": "benchmark", "program": "cputimer", "timeout_s": 60},
	           {"kind": "correctness", "program": "other", "timeout_s": 60}]}
	JSON
}

count() { ls "$W/$1" 2>/dev/null | wc -l | tr -d " "; }
# age_all: everything but the execd, whose server leaves when its own
# binary changes (a touch too): the dry-run test saw its socket go mid-test.
# It waits first for the agent's build, which runs after a run's runner has
# ended and removes its copy of the sources when done (CI saw touch find
# them gone under load)
age_all() {
	wait_for 900 "! ls -d \"$W\"/agent/*.src.* >/dev/null 2>&1" &&
	find "$W" -path "$W/execd" -prune -o -exec touch -h -d "30 days ago" {} +
}

test_expect_success 'setup: two runs with different sources, all of it aged 30 days, then a third run' '
	sshd_start a && sshd_write_hosts_json hosts.json a && project_init &&
	W=$(sshd_var a WORKDIR) && echo "$W" >wdir &&
	{ echo "/* other */"; cat proj/cpu/cputimer.c; } >proj/cpu/other.c && spec 0 &&
	(cd proj && git add -A && git commit -qm c && "$GPUORCH" run experiments/c.json --hosts ../hosts.json) >r1.out 2>&1 &&
	echo "/* edited */" >>proj/cpu/other.c && (cd proj && git commit -qam edit) &&
	(cd proj && "$GPUORCH" run experiments/c.json --hosts ../hosts.json) >r2.out 2>&1 &&
	test "$(count content)" = 2 && test "$(count runs)" = 2 && test "$(count blobs)" = 3 &&
	test "$(count builds)" = 3 &&
	age_all &&
	(cd proj && "$GPUORCH" run experiments/c.json --hosts ../hosts.json) >r3.out 2>&1 &&
	run=$(last_run_dir) && test "$(jq_ $run/run.json hosts.0.ship.reused)" = true &&
	test "$(count runs)" = 3
'

test_expect_success '--dry-run says what would go and removes nothing' '
	W=$(cat wdir) && ls -R "$W" >before.ls &&
	"$GPUORCH" hosts clean --hosts hosts.json --older-than 7 --dry-run >dry.out && cat dry.out &&
	grep "^a  would remove from .*: 2 runs, 1 source tree, 1 build, 1 shipped file, 1 object, " dry.out &&
	ls -R "$W" >after.ls && test_cmp before.ls after.ls
'

test_expect_success 'clean removes the old runs, the old tree, its build and its blob; the current ones stay' '
	W=$(cat wdir) &&
	"$GPUORCH" hosts clean --hosts hosts.json --older-than 7 >clean.out && cat clean.out &&
	grep "^a  removed from .*: 2 runs, 1 source tree, 1 build, 1 shipped file, 1 object, " clean.out &&
	: "old other.c s object goes with its build; the objects of the builds that stay (cputimer.c, the edited" &&
	: "other.c), as old as it, stay" &&
	test "$(ls "$W"/objects/*.o | wc -l)" = 2 &&
	for b in "$W"/builds/*; do
		while read -r k; do test -f "$W/objects/$k.o" || { echo "$b: object $k gone"; return 1; }; done <"$b/objects" || return 1
	done &&
	test "$(count runs)" = 1 && test "$(count content)" = 1 && test "$(count builds)" = 2 &&
	test "$(count blobs)" = 2 &&
	"$GPUORCH" hosts clean --hosts hosts.json --older-than 7 >again.out &&
	grep "^a  removed from .*: 0 runs, 0 source trees, 0 builds, 0 shipped files, 0 objects, 0.0 MiB" again.out
'

test_expect_success 'a run after the clean ships nothing and rebuilds nothing' '
	(cd proj && "$GPUORCH" run experiments/c.json --hosts ../hosts.json) >r4.out 2>&1 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	test "$(jq_ $run/run.json hosts.0.ship.reused)" = true &&
	test "$(jq_ $run/run.json hosts.0.builds.0.reused)" = true
'

test_expect_success 'a live run keeps its sources and its run directory, however old they look' '
	W=$(cat wdir) &&
	# its first step waits (120 s at most) until the test has looked: it
	# meets the test in $TRASH/live, which the test enters at the end
	mkdir -p "$TRASH/live" &&
	echo "/* again */" >>proj/cpu/other.c && spec 0 ", \"meet\": \"$TRASH/live\", \"meet-n\": 2" &&
	(cd proj && git commit -qam live) &&
	{ (cd proj && exec "$GPUORCH" run experiments/c.json --hosts ../hosts.json >../live.out 2>&1) & } &&
	pid=$! &&
	wait_for 60 "grep -q \"^run \" live.out" &&
	id=$(sed -n "s/^run \([0-9a-f-]*\): .*/\1/p" live.out | head -n 1) &&
	wait_for 60 "grep -q step_started $W/runs/$id/journal 2>/dev/null" &&
	age_all &&
	"$GPUORCH" hosts clean --hosts hosts.json --older-than 7 >live-clean.out; cat live-clean.out &&
	grep "kept (a live run uses it): content/" live-clean.out &&
	grep "kept the sources of a live run" live-clean.out &&
	grep ": 2 runs, 1 source tree, " live-clean.out &&
	test "$(count runs)" = 1 && test "$(count content)" = 1 && test -d $W/runs/$id &&
	touch "$TRASH/live/the-test" &&
	wait $pid && grep "passed" live.out
'

test_expect_success 'bad input: --older-than not a positive number, clean options on another verb' '
	test_expect_code 2 "$GPUORCH" hosts clean --hosts hosts.json --older-than 0 2>e1 &&
	grep "expected a number of days above 0" e1 &&
	test_expect_code 2 "$GPUORCH" hosts clean --hosts hosts.json --older-than 2x 2>e2 &&
	test_expect_code 2 "$GPUORCH" hosts check --hosts hosts.json --dry-run 2>e3 &&
	grep "options of .hosts clean." e3
'

test_expect_success 'the execd: a running one is stopped, its build kept however old; removed once stopped and unused for the age' '
	W=$(cat wdir) &&
	(cd proj && "$GPUORCH" run experiments/c.json --hosts ../hosts.json) >r0.out 2>&1 &&
	wait_for 60 "ls \"$W\"/execd/*.sock >/dev/null 2>&1" &&
	x=$(ls "$W"/execd/gpuorch-execd-*.c) && b=${x%.c} &&
	touch -d "30 days ago" "$x" &&
	"$GPUORCH" hosts clean --hosts hosts.json --older-than 7 >x1.out && cat x1.out &&
	grep "^    stopped 1 running execd" x1.out &&
	! grep "old execd builds" x1.out && test -x "$b" &&
	: "its socket removed, the server leaves by itself" &&
	wait_for 60 "! pgrep -f \"$b\" >/dev/null" &&
	"$GPUORCH" hosts clean --hosts hosts.json --older-than 7 --dry-run >x2.out && cat x2.out &&
	grep "would remove execd/${b##*/} " x2.out && test -x "$b" &&
	"$GPUORCH" hosts clean --hosts hosts.json --older-than 7 >x3.out && cat x3.out &&
	grep "old execd builds" x3.out && grep "removed execd/${b##*/} " x3.out &&
	test ! -e "$b" && test ! -e "$x" &&
	(cd proj && "$GPUORCH" run experiments/c.json --hosts ../hosts.json) >r5.out 2>&1 &&
	wait_for 60 "test -x \"$b\""
'

# the host agent (docs/runner.md): its current version stays however old;
# another version, old and named by no running run, goes with its log
test_expect_success 'the host agent: this version kept however old; an old other version removed' '
	W=$(cat wdir) &&
	wait_for 120 "find \"$W/agent\" -name \"gpuorch-agent-*\" ! -name \"*.*\" -perm -100 | grep -q ." &&
	cur=$(find "$W/agent" -name "gpuorch-agent-*" ! -name "*.*" -perm -100 | head -n 1) &&
	cp "$cur" "$W/agent/gpuorch-agent-0123456789ab" && : >"$W/agent/gpuorch-agent-0123456789ab.log" &&
	cp "$cur" "$W/agent/gpuorch-agent-fedcba987654" &&
	touch -d "30 days ago" "$cur" "$W/agent/gpuorch-agent-0123456789ab" &&
	"$GPUORCH" hosts clean --hosts hosts.json --older-than 7 --dry-run >a1.out && cat a1.out &&
	grep "would remove agent/gpuorch-agent-0123456789ab " a1.out &&
	test -x "$W/agent/gpuorch-agent-0123456789ab" &&
	"$GPUORCH" hosts clean --hosts hosts.json --older-than 7 >a2.out && cat a2.out &&
	grep "old agent builds\|old execd and agent builds" a2.out &&
	grep "removed agent/gpuorch-agent-0123456789ab " a2.out &&
	test ! -e "$W/agent/gpuorch-agent-0123456789ab" && test ! -e "$W/agent/gpuorch-agent-0123456789ab.log" &&
	: "this gpuorch'"'"'s version stays, however old; another one not old yet stays too" &&
	test -x "$cur" && test -x "$W/agent/gpuorch-agent-fedcba987654" &&
	! grep "gpuorch-agent-fedcba987654\|removed agent/${cur##*/} " a2.out
'

test_done
