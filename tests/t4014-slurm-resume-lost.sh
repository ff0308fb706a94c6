#!/bin/sh
# cost: 200
# asan: no
# waits: yes
test_description='slurmrestd down past the retry window mid-step: the host error names the job left running, and --resume collects it (issue 31, item 7)'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/slurm.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'Slurm resume tests'
if ! _why=$(slurm_available); then
	test_skip 'Slurm resume tests' "$_why"
	test_done
fi

our_jobs() {
	squeue -h -t PENDING,RUNNING,CONFIGURING -o "%i %j %T" | grep " gpuorch-" || true
}

test_expect_success 'setup: a single-node Slurm, a login node, a one-step spec' '
	slurm_start 4 &&
	slurm_login_start login &&
	slurm_cluster_json hosts.json login &&
	tok=$(slurm_token 3600) && test -n "$tok" &&
	project_init &&
	cat >proj/experiments/nap.json <<-EOF &&
	{"schema": 1, "name": "slurmnap", "phase": "resume after slurmrestd was lost",
	 "sources": ["cpu/cputimer.c"], "targets": {"H100": "sm_90a"},
	 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
	 "problems": [{"name": "nap", "params": {"work": 1000, "sleep": 120}}],
	 "steps": [{"kind": "benchmark", "program": "cputimer", "timeout_s": 300}]}
	EOF
	(cd proj && git add -A && git commit -qm nap)
'

test_expect_success 'slurmrestd stopped while the step job runs: the run fails, naming the job it left' '
	{ (cd proj && SLURM_JWT=$tok exec "$GPUORCH" run experiments/nap.json --hosts ../hosts.json --host hpc --plain >../lost.out 2>&1) & } &&
	pid=$! &&
	wait_for 600 "grep -q \"^run \" lost.out" &&
	id=$(sed -n "s/^run \([0-9a-f-]*\): .*/\1/p" lost.out | head -n 1) && echo $id >id &&
	wait_for 600 "our_jobs | grep \"gpuorch-$id-step-\" | grep -q RUNNING" &&
	slurm_rest_stop &&
	{ wait $pid; rc=$?; } ; cat lost.out &&
	test $rc != 0 &&
	job=$(our_jobs | sed -n "s/^\([0-9]*\) gpuorch-$id-step-.*/\1/p") && test -n "$job" &&
	run=$(last_run_dir) &&
	jq_ $run/run.json hosts.0.error >err.txt && cat err.txt &&
	grep "left in Slurm: \(.*, \)\?job $job (step-" err.txt &&
	grep -- "--resume $id" err.txt
'

test_expect_success 'slurmrestd back: --resume adopts the job and collects its step' '
	id=$(cat id) &&
	slurm_rest_start &&
	(cd proj && SLURM_JWT=$tok timeout 600 "$GPUORCH" run experiments/nap.json --hosts ../hosts.json --host hpc --plain --resume $id) >res.out 2>&1;
	echo "exit $?" >>res.out; cat res.out &&
	grep "^exit 0" res.out &&
	grep "^  resumed step-" res.out &&
	run=$(last_run_dir) && test "$(basename $run)" = $id &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS
'

test_done
