#!/bin/sh
# cost: 25
# asan: yes
# waits: yes
test_description='gpuorch run --resume after a lost link or an interrupt: a step that finished on the host is collected, an interrupted one runs again (issue 31, items 7 and 8)'
# A run whose link was lost for longer than --reconnect-timeout ends
# infra_error while its host runner goes on alone; a run interrupted with
# SIGINT has its runner stopped (runner.sh kill). --resume takes up both:
# what ended on the host is collected from the runner's journal, what was
# stopped before it ended runs again (runner.sh reopen, docs/runner.md).
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'resume-after-fault tests'

# NAME SLEEP-OF-THE-FIRST-STEP [GATE]: with GATE (a directory), the first
# step leaves a file there and waits until the test adds a second one
# (cputimer --meet): it is running when the test strikes, however loaded
# the machine is
write_spec() {
	_gate=
	[ -z "${3:-}" ] || _gate=", \"meet\": \"$3\", \"meet-n\": 2"
	cat >"proj/experiments/$1.json" <<JSON
{"schema": 1, "name": "$1", "phase": "resume test $1",
 "sources": ["cpu/cputimer.c"], "targets": {"H100": "sm_90a"},
 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
 "problems": [{"name": "slow", "params": {"work": 1000, "sleep": $2$_gate}},
              {"name": "quick", "params": {"work": 1000}}],
 "steps": [{"kind": "benchmark", "program": "cputimer", "timeout_s": 60}]}
JSON
}

# start_bg NAME SPEC [ARGS...]: gpuorch run in the background; its pid in
# NAME.pid (wait for it in the same test)
start_bg() {
	_n=$1 _s=$2
	shift 2
	{ (cd proj && exec "$GPUORCH" run experiments/$_s.json --hosts ../hosts.json --plain "$@" \
		>../$_n.out 2>&1) & }
	echo $! >$_n.pid
}

run_id_of() {
	sed -n "s/^run \([0-9a-f-]*\): .*/\1/p" $1 | head -n 1
}

test_expect_success 'setup' '
	sshd_start a && sshd_write_hosts_json hosts.json a && project_init &&
	mkdir gate && write_spec slow 0 "$TRASH/gate" && write_spec slow2 6 && (cd proj && git add -A && git commit -qm spec)
'

test_expect_success 'sshd down longer than --reconnect-timeout mid-step: infra_error, and the host error names the runner left going and --resume' '
	start_bg lost slow --reconnect-timeout 2 &&
	wait_for 60 "grep -q \"^run \" lost.out" &&
	id=$(run_id_of lost.out) && echo $id >lost.id &&
	wait_for 60 "grep -q step_started $SSHD_a_WORKDIR/runs/$id/journal 2>/dev/null" &&
	wait_for 120 "test \"\$(ls gate | wc -l)\" = 1" &&
	sshd_kill a &&
	{ wait $(cat lost.pid); rc=$?; } ; cat lost.out &&
	: >gate/test &&
	test $rc = 3 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = infra_error &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = INFRA_ERROR &&
	jq_ $run/run.json hosts.0.error >err.txt && cat err.txt &&
	grep "the host runner (pid [0-9]*) goes on alone in .*/runs/$id" err.txt &&
	grep -- "--resume $id" err.txt
'

test_expect_success 'the runner finishes alone; --resume collects both steps as they ended there, nothing runs twice' '
	id=$(cat lost.id) &&
	wait_for 60 "test -f $SSHD_a_WORKDIR/runs/$id/runner.done" &&
	sshd_restart a &&
	(cd proj && "$GPUORCH" run experiments/slow.json --hosts ../hosts.json --plain --resume $id) >r1.out 2>&1;
	echo "exit $?" >>r1.out; cat r1.out &&
	grep "^exit 0" r1.out &&
	grep "^run $id: passed" r1.out &&
	run=$(last_run_dir) && test "$(basename $run)" = $id &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	test "$(jq_ $run/run.json hosts.0.status)" = ok &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.steps.1.status)" = PASS &&
	test "$(grep -c "\"ev\":\"step_started\"" $SSHD_a_WORKDIR/runs/$id/journal)" = 2 &&
	! grep "run again" r1.out
'

test_expect_success '--resume still refuses a run that passed' '
	id=$(cat lost.id) &&
	(cd proj && test_expect_code 2 "$GPUORCH" run experiments/slow.json --hosts ../hosts.json --resume $id) 2>done.err &&
	grep "run $id finished (outcome passed): there is nothing to resume" done.err
'

test_expect_success 'SIGINT mid-step: incomplete, the step INFRA_ERROR interrupted' '
	start_bg int slow2 &&
	wait_for 60 "grep -q \"^run \" int.out" &&
	id=$(run_id_of int.out) && echo $id >int.id &&
	wait_for 60 "grep -q step_started $SSHD_a_WORKDIR/runs/$id/journal 2>/dev/null" &&
	kill -INT $(cat int.pid) &&
	{ wait $(cat int.pid); rc=$?; } ; cat int.out &&
	test $rc = 130 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json status)" = incomplete &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = INFRA_ERROR &&
	test "$(jq_ $run/run.json hosts.0.steps.0.reason)" = interrupted &&
	test -f $SSHD_a_WORKDIR/runs/$id/runner.stopped
'

test_expect_success '--resume runs the interrupted step again (and the one never started) and passes' '
	id=$(cat int.id) &&
	(cd proj && "$GPUORCH" run experiments/slow2.json --hosts ../hosts.json --plain --resume $id) >r2.out 2>&1;
	echo "exit $?" >>r2.out; cat r2.out &&
	grep "^exit 0" r2.out &&
	grep "^run $id: passed" r2.out &&
	grep "resumed: 1 build and step stopped or lost before they ended run again" r2.out &&
	run=$(last_run_dir) && test "$(basename $run)" = $id &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.steps.1.status)" = PASS &&
	j=$SSHD_a_WORKDIR/runs/$id/journal &&
	test "$(grep -c "\"ev\":\"step_started\"" $j)" = 2 &&
	test "$(grep -c "\"ev\":\"step_end\"" $j)" = 2 &&
	! grep "\"status\":\"killed\"" $j &&
	test "$(grep -c "\"ev\":\"runner_ended\"" $j)" = 1 &&
	test "$(grep -c "\"ev\":\"runner_started\"" $j)" = 2 &&
	test ! -f $SSHD_a_WORKDIR/runs/$id/runner.stopped &&
	test -f $SSHD_a_WORKDIR/runs/$id/runner.done
'

test_done
