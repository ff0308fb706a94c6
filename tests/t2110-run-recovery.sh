#!/bin/sh
# cost: 18
# asan: yes
test_description='gpuorch run reconnects to a host whose sshd came back and collects the step; exit codes and signals decoded; live view on a terminal'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'recovery tests'

# write_spec NAME TIMEOUT PROBLEM-JSON...: a CPU experiment with one benchmark step
write_spec() {
	_n=$1 _t=$2
	shift 2
	_p=$(printf '%s,' "$@")
	cat >"proj/experiments/$_n.json" <<JSON
{"schema": 1, "name": "$_n", "phase": "recovery test $_n",
 "sources": ["cpu/cputimer.c"], "targets": {"H100": "sm_90a"},
 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
 "problems": [${_p%,}],
 "steps": [{"kind": "benchmark", "program": "cputimer", "timeout_s": $_t}]}
JSON
}

test_expect_success 'setup' '
	sshd_start a && sshd_write_hosts_json hosts.json a && project_init
'

test_expect_success 'a lost connection is re-established and the step collected' '
	write_spec slow 60 "{\"name\": \"p\", \"params\": {\"work\": 1000, \"sleep\": 6}}" &&
	{ (cd proj && "$GPUORCH" run experiments/slow.json --hosts ../hosts.json \
		--reconnect-timeout 60 --plain >../slow.out 2>&1; echo $? >../slow.rc) & } &&
	wait_for 60 "grep -q \"^run \" slow.out" &&
	id=$(sed -n "s/^run \([0-9a-f-]*\): .*/\1/p" slow.out | head -n 1) &&
	wait_for 60 "ls $SSHD_a_WORKDIR/runs/$id/*/pgid >/dev/null 2>&1" &&
	sshd_kill a && sleep 2 && sshd_restart a &&
	wait_for 120 "test -f slow.rc" &&
	test "$(cat slow.rc)" = 0 &&
	grep "connection lost (.\{3,\}); reconnecting (up to 60 s)" slow.out &&
	grep "reconnected" slow.out &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.status)" = ok &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS &&
	jq_ $run/run.json hosts.0.steps.0.result.timing.median_us
'

test_expect_success 'a program exit code is FAIL with the code, a signal is KILLED with the signal' '
	write_spec codes 60 "{\"name\": \"exit3\", \"params\": {\"exit\": 3}}" \
		"{\"name\": \"kill9\", \"params\": {\"signal\": 9}}" \
		"{\"name\": \"ok\", \"params\": {\"work\": 1000}}" &&
	(cd proj && test_expect_code 1 "$GPUORCH" run experiments/codes.json --hosts ../hosts.json --plain) >codes.out 2>&1 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = FAIL &&
	test "$(jq_ $run/run.json hosts.0.steps.0.exit_code)" = 3 &&
	jq_ $run/run.json hosts.0.steps.0.reason | grep "exit code 3" &&
	test "$(jq_ $run/run.json hosts.0.steps.1.status)" = KILLED &&
	test "$(jq_ $run/run.json hosts.0.steps.1.signal)" = 9 &&
	test "$(jq_ $run/run.json hosts.0.steps.2.status)" = PASS
'

if command -v script >/dev/null 2>&1; then
	test_expect_success 'on a terminal the live view is a table redrawn in place' '
		write_spec tty 60 "{\"name\": \"p\", \"params\": {\"work\": 1000, \"sleep\": 2}}" &&
		(cd proj && TERM=xterm script -qec "\"$GPUORCH\" run experiments/tty.json --hosts ../hosts.json" /dev/null) >tty.out 2>&1 &&
		grep -q "$(printf "\033")\[2K" tty.out &&
		grep -q "$(printf "\033")\[[0-9]*A" tty.out
	'
else
	test_skip 'live view on a terminal' 'no script(1) to make a pseudo-terminal (bsdutils)'
fi

test_done
