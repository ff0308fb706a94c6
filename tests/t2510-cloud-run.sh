#!/bin/sh
# cost: 40
# asan: yes
# waits: yes
test_description='gpuorch run with a cloud instance: started, used, stopped, costed; Ctrl-C still stops it; a SIGKILLed controller is caught by the guard on the instance'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"
. "$SRCDIR/tests/lib/cloudlib.sh"

run_requires_sshd_nvcc 'cloud run tests'
GPUORCH_STATE_DIR=$TRASH/state
export GPUORCH_STATE_DIR

# spec NAME STEP-PARAMS: a one-program CPU experiment
write_spec() {
	cat >"proj/experiments/$1.json" <<JSON
{"schema": 1, "name": "$1", "phase": "cloud test $1",
 "sources": ["cpu/cputimer.c"],
 "targets": {"H100": "sm_90a"},
 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
 "problems": [{"name": "p", "params": {$2}}],
 "steps": [{"kind": "benchmark", "program": "cputimer", "timeout_s": 60}]}
JSON
}

# wait_new_step OUT: until the step of the run that prints to OUT has started
# on the instance (runs of earlier tests may still have runners there)
wait_new_step() {
	wait_for 60 "grep -q \"^run [0-9a-f-]*: \" $1" &&
	_id=$(sed -n "s/^run \([0-9a-f-]*\): .*/\1/p" "$1" | head -n 1) &&
	wait_for 60 "ls $(sshd_var box WORKDIR)/runs/$_id/*/pgid >/dev/null 2>&1"
}

state() {
	cat "$FAKECLOUD_DIR/state"
}

# the guard's idle window: idle_stop_min 0.5 below. 30 s, not less: the
# controller's heartbeats (every 7.5 s) are SSH commands, and on a loaded
# machine (CI runs many test files at a time on two cores, under ASan too)
# beats took over 4.5 s, and a 12 s window fired under a healthy run
IDLE_S=30

# the guard's action: a marker, then the stand-in cloud's stop (as a real
# guard would power the machine off). T2510_ACTION_DELAY=S puts S seconds
# between the two, to check by hand that the tests wait for the stop itself
ACTION="echo fired >>$TRASH/fired; ${T2510_ACTION_DELAY:+sleep $T2510_ACTION_DELAY; }FAKECLOUD_DIR=$TRASH/cloud-box $SRCDIR/tests/fixtures/cloud/fakecloud.sh stop"

test_expect_success 'setup: a stopped instance, a project' '
	cloud_init box && project_init &&
	cloud_hosts hosts.json box ", \"idle_stop_min\": 0.5, \"guard_action\": \"$ACTION\"" &&
	write_spec quick "\"work\": 1000" &&
	write_spec slow "\"work\": 1000, \"sleep\": 8"
'

test_expect_success '--dry-run shows what the instance provider runs; nothing is called' '
	(cd proj && "$GPUORCH" run experiments/quick.json --hosts ../hosts.json --dry-run) >dry.out &&
	grep "instance: provider command, price 3.6/h, idle guard on, after_run default" dry.out &&
	grep "start    $FAKECLOUD start" dry.out &&
	grep "status   $FAKECLOUD status" dry.out &&
	test ! -f "$FAKECLOUD_DIR/calls"
'

test_expect_success 'a run starts the stopped instance, runs, stops it; the cost is in the record and printed' '
	(cd proj && "$GPUORCH" run experiments/quick.json --hosts ../hosts.json --plain) >run.out 2>run.err ||
		{ cat run.out run.err; cat "$(sshd_var box WORKDIR)/guard/fired" 2>/dev/null; false; } &&
	run=$(last_run_dir) &&
	grep "box: starting the instance (command)" run.out &&
	grep "box: guard armed" run.out &&
	grep "box: stopping the instance" run.out &&
	grep "^cost: box [0-9.]* ([0-9]* s x 3.6/h, stopped)$" run.out &&
	grep "^cost: total [0-9.]*$" run.out &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.instance.started_by_gpuorch)" = true &&
	test "$(jq_ $run/run.json hosts.0.instance.after_run)" = stop &&
	test "$(jq_ $run/run.json provenance.instances.box.state_before)" = stopped &&
	awk -v p="$(jq_ $run/run.json provenance.instances.box.price_per_hour)" "BEGIN { exit !(p == 3.6) }" &&
	jq_ $run/run.json provenance.instances.box.stop_confirmed_at | grep "^20" &&
	billed=$(jq_ $run/run.json provenance.instances.box.billed_s) &&
	cost=$(jq_ $run/run.json provenance.instances.box.cost) &&
	total=$(jq_ $run/run.json provenance.instances_cost_total) &&
	test "$billed" -ge 1 &&
	awk -v b="$billed" -v c="$cost" -v t="$total" "BEGIN { e = b / 3600 * 3.6 - c; exit !(e < 1e-9 && e > -1e-9 && c == t) }" &&
	grep "^| box | command | stopped | yes | stop | $billed s observed | 3.6 USD | [0-9.]* USD |  |$" $run/report.md &&
	"$GPUORCH" runs >runs.out &&
	grep "^$(basename $run)  quick .* box  cost [0-9]\.[0-9][0-9][0-9][0-9]$" runs.out &&
	test "$(state)" = TERMINATED &&
	! cloud_reachable box &&
	: "the guard is gone (a process that has exited fires nothing), and did not fire" &&
	test -z "$(cloud_guard_pid box)" && test ! -f fired
'

test_expect_success 'an instance that was already running is used and kept (after_run default keep), not costed' '
	echo PROVISIONING >"$FAKECLOUD_DIR/state" && echo 0 >"$FAKECLOUD_DIR/pending" &&
	FAKECLOUD_DIR=$FAKECLOUD_DIR "$FAKECLOUD" status && wait_for 60 "cloud_reachable box" &&
	: >"$FAKECLOUD_DIR/calls" &&
	(cd proj && "$GPUORCH" run experiments/quick.json --hosts ../hosts.json --plain) >keep.out 2>&1 &&
	run=$(last_run_dir) &&
	grep "^cost: box not started by gpuorch (it was running): not counted" keep.out &&
	test "$(jq_ $run/run.json hosts.0.instance.started_by_gpuorch)" = false &&
	test "$(jq_ $run/run.json hosts.0.instance.after_run)" = keep &&
	test "$(jq_ $run/run.json hosts.0.instance.cost)" = null &&
	! grep "fakecloud.sh st[ao]" "$FAKECLOUD_DIR/calls" | grep -v status &&
	test "$(state)" = RUNNING && cloud_reachable box &&
	"$GPUORCH" hosts down --hosts hosts.json >/dev/null && test "$(state)" = TERMINATED
'

test_expect_success 'Ctrl-C mid-run: the run is recorded incomplete and the instance is still stopped' '
	( cd proj && exec "$GPUORCH" run experiments/slow.json --hosts ../hosts.json --plain >../int.out 2>&1 ) &
	pid=$! &&
	wait_new_step int.out &&
	kill -INT $pid &&
	{ wait $pid; echo $? >int.rc; } &&
	test "$(cat int.rc)" = 130 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json status)" = incomplete &&
	test "$(jq_ $run/run.json hosts.0.instance.after_run)" = stop &&
	jq_ $run/run.json hosts.0.instance.stop_confirmed_at | grep "^20" &&
	test "$(state)" = TERMINATED && ! cloud_reachable box
'

test_expect_success 'a start that fails: the host is unreachable, exit 3, the error recorded' '
	: >"$FAKECLOUD_DIR/fail_start" &&
	test_when_finished "rm -f \"$FAKECLOUD_DIR/fail_start\"" &&
	(cd proj && test_expect_code 3 "$GPUORCH" run experiments/quick.json --hosts ../hosts.json --plain) >fs.out 2>&1 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = infra_error &&
	test "$(jq_ $run/run.json hosts.0.status)" = unreachable &&
	jq_ $run/run.json hosts.0.error | grep "Quota .NVIDIA_L4_GPUS. exceeded" &&
	jq_ $run/run.json hosts.0.instance.error | grep "Quota" &&
	test "$(state)" = TERMINATED
'

test_expect_success 'preempted mid-run (the cloud stops it under a step): reported as preempted, not a failed step' '
	( cd proj && exec "$GPUORCH" run experiments/slow.json --hosts ../hosts.json --plain \
		--reconnect-timeout 3 >../pre.out 2>&1 ) &
	pid=$! &&
	wait_new_step pre.out &&
	FAKECLOUD_DIR=$FAKECLOUD_DIR "$FAKECLOUD" stop >/dev/null &&
	{ wait $pid; echo $? >pre.rc; } &&
	test "$(cat pre.rc)" = 3 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.status)" = preempted &&
	test "$(jq_ $run/run.json hosts.0.instance.preempted)" = true &&
	grep "the instance stopped under the run without gpuorch asking (preempted?)" pre.out &&
	grep "| box | command | stopped | yes | stop | .* | \*\*preempted\*\*" $run/report.md &&
	test "$(state)" = TERMINATED &&
	: "a preempted machine is off, its guard with it; here the guard is a local process: end it" &&
	g=$(cloud_guard_pid box) && { [ -z "$g" ] || kill $g 2>/dev/null || :; } && rm -f "$(sshd_var box WORKDIR)/guard/pid"
'

test_expect_success 'the controller SIGKILLed mid-run: the guard on the instance stops it after the step, within idle_stop_min' '
	rm -f fired &&
	( cd proj && exec "$GPUORCH" run experiments/slow.json --hosts ../hosts.json --plain >../kill.out 2>&1 ) &
	pid=$! &&
	wait_new_step kill.out &&
	kill -KILL $pid && { wait $pid || :; } &&
	t_kill=$(test_now_ms) &&
	test "$(state)" = RUNNING &&
	sleep 2 && test ! -f fired &&
	wait_for $((IDLE_S + 40)) "test -s fired" &&
	test "$(cut -d" " -f1 "$(sshd_var box WORKDIR)/guard/fired")" = idle &&
	: "the action echoes its marker first, then calls the stand-in cloud stop: wait for that stop too (under load it came after the status calls below)" &&
	wait_for 30 "test \"\$(state)\" != RUNNING" &&
	FAKECLOUD_DIR=$FAKECLOUD_DIR "$FAKECLOUD" status >/dev/null &&
	FAKECLOUD_DIR=$FAKECLOUD_DIR "$FAKECLOUD" status >/dev/null &&
	test "$(state)" = TERMINATED && ! cloud_reachable box &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json status)" = running
'

test_done
