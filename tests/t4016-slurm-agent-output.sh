#!/bin/sh
# cost: 40
# asan: yes
# waits: yes
test_description='a Slurm job runs the host agent (built on the compute node, runner.sh where it cannot be) and keeps a step'"'"'s output to the SSH host'"'"'s cap'
# One executor interface, two implementations (remote/executor.h): a Slurm
# job runs the same host agent an SSH host does, on a plan written by the
# same hostrun_write_plan, so a step's output up to HOSTRUN_TEXT_CAP (4 MiB)
# comes whole in its end event (the Slurm path kept 64 KiB before), and
# the journal's runner_started names the agent. The first job builds the
# agent from the bundle the login node was sent (W/agent/); a failed build
# (MACHINE.failed) leaves the jobs to runner.sh, as a host without cc.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/slurm.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'Slurm agent tests'
if ! _why=$(slurm_available); then
	test_skip 'Slurm agent tests' "$_why"
	test_done
fi

# the step_end line of the job's journal of step 0 of RUN
step_end_line() {
	d=$(jq_ "$1/run.json" hosts.0.steps.0.slurm.rundir) &&
	grep "\"ev\":\"step_end\"" "$d/journal"
}

test_expect_success 'setup: a single-node Slurm, a login node, a script that prints 200 KiB and then its result' '
	slurm_start 4 &&
	slurm_login_start login &&
	slurm_cluster_json hosts.json login &&
	tok=$(slurm_token 3600) && test -n "$tok" &&
	project_init &&
	cat >proj/chatty.py <<-\PY &&
	import sys
	line = "x" * 1023 + "\n"
	sys.stdout.write("FIRST LINE\n")
	for i in range(200):
	    sys.stdout.write(line)
	sys.stdout.write("{\"schema\": 1, \"program\": \"chatty\", \"mode\": \"check\", \"status\": \"pass\", \"reason\": null, \"answer\": 42}\n")
	PY
	cat >proj/experiments/chatty.json <<-\JSON &&
	{
	  "schema": 1, "name": "chatty", "phase": "Test phase: 200 KiB of output from a Slurm job",
	  "sources": ["chatty.py"],
	  "programs": {"chatty": {"script": "chatty.py", "needs_gpu": false}},
	  "problems": [{"name": "p"}],
	  "steps": [{"kind": "correctness", "program": "chatty", "timeout_s": 120}]
	}
	JSON
	(cd proj && git add -A && git commit -qm chatty)
'

test_expect_success 'the job ran the host agent, built on the compute node from the bundle shipped to W/agent' '
	(cd proj && SLURM_JWT=$tok "$GPUORCH" run experiments/chatty.json --hosts ../hosts.json --host hpc) >run.out 2>run.err ||
		{ cat run.out run.err; false; } &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.runner)" = gpuorch-agent &&
	d=$(jq_ $run/run.json hosts.0.steps.0.slurm.rundir) &&
	grep "\"ev\":\"runner_started\".*\"runner\":\"gpuorch-agent\"" "$d/journal" &&
	W=$(sshd_var login WORKDIR) &&
	ls "$W"/agent/gpuorch-agent-*.bundle &&
	ls "$W"/agent/gpuorch-agent-*-"$(uname -m)" >bins && test "$(wc -l <bins)" = 1 &&
	test -x "$(cat bins)" &&
	grep "the host agent.s sources (.* bytes, built by the first job)" run.out
'

test_expect_success 'its 200 KiB of output came whole in the end event, as over SSH (not cut at 64 KiB), and whole into the log' '
	run=$(last_run_dir) &&
	step_end_line $run >end.json &&
	test "$(jq_ end.json stdout_truncated)" = false &&
	jq_ end.json stdout_text >text && test "$(wc -c <text)" -gt $((200 * 1024)) &&
	test "$(jq_ $run/run.json hosts.0.steps.0.result.answer)" = 42 &&
	log=$run/$(jq_ $run/run.json hosts.0.steps.0.stdout_log) &&
	test "$(head -n 1 $log)" = "FIRST LINE" &&
	test "$(wc -c <$log)" = $((11 + 200 * 1024 + $(tail -n 1 $log | wc -c)))
'

test_expect_success 'an agent that could not be built on the compute node (.failed): the jobs run runner.sh, same cap' '
	W=$(sshd_var login WORKDIR) &&
	b=$(ls "$W"/agent/gpuorch-agent-*-"$(uname -m)") &&
	rm -f "$b" && : >"$b.failed" &&
	(cd proj && SLURM_JWT=$tok "$GPUORCH" run experiments/chatty.json --hosts ../hosts.json --host hpc) >run2.out 2>run2.err ||
		{ cat run2.out run2.err; false; } &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.runner)" = runner.sh &&
	test ! -e "$b" &&
	step_end_line $run >end2.json &&
	test "$(jq_ end2.json stdout_truncated)" = false &&
	test "$(jq_ $run/run.json hosts.0.steps.0.result.answer)" = 42
'

test_done
