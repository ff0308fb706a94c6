#!/bin/sh
# cost: 130
# timeout: 2700
# asan: yes
# waits: yes
test_description='Slurm: a step job preempted by a job of a higher-priority partition is submitted once more (PREEMPTED, requeued once, both attempts recorded); preempted twice it is an INFRA_ERROR and nothing of the run is left in the queue; a step job whose node fails (NODE_FAIL) is requeued the same way'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/slurm.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'Slurm requeue tests'
if ! _why=$(slurm_available); then
	test_skip 'Slurm requeue tests' "$_why"
	test_done
fi

our_jobs() {
	squeue -h -t PENDING,RUNNING,CONFIGURING,COMPLETING -o "%i %j %T" | grep " gpuorch-" || true
}

# preempt_jobs N KIND FILE: (in the background) N times, wait (at most 600 s
# in all: builds under CI load took 100 s) for a KIND (step or build) job of gpuorch that runs and has not
# been preempted yet,
# then submit a job to partition "urgent" (PriorityTier 10) that needs the
# whole node: Slurm cancels the step job to make room (PreemptMode=CANCEL),
# which ends it PREEMPTED. Each preempted job id is appended to FILE.
preempt_jobs() {
	_n=0
	: >"$3"
	_end=$(( $(date +%s) + 600 ))
	while [ "$_n" -lt "$1" ] && [ "$(date +%s)" -lt "$_end" ]; do
		_id=$(squeue -h -t RUNNING -o "%i %j" | awk -v k="$2" '$2 ~ ("^gpuorch-.*-" k "-") { print $1 }' |
			grep -v -x -F -f "$3" | head -n 1)
		if [ -n "$_id" ]; then
			sbatch -Q -p urgent --exclusive -J urgent -o /dev/null --wrap "sleep 2" >/dev/null &&
			echo "$_id" >>"$3" &&
			_n=$((_n + 1))
			# the urgent job must run (and the step job end) before the next round
			_w=0
			while [ "$_w" -lt 40 ] && squeue -h -j "$_id" -t RUNNING -o %i 2>/dev/null | grep -q .; do
				sleep 0.25
				_w=$((_w + 1))
			done
		fi
		sleep 0.2
	done
}

# fail_node_under_step FILE: (in the background) wait (at most 600 s) for a
# step job of gpuorch that runs, set the node down under it, wait (20 s at
# most) until Slurm ends the job NODE_FAIL, and resume the node. The job id
# goes to FILE; returns 0 (the test checks what happened).
fail_node_under_step() {
	: >"$1"
	_end=$(( $(date +%s) + 600 ))
	while [ "$(date +%s)" -lt "$_end" ]; do
		_id=$(squeue -h -t RUNNING -o "%i %j" | awk '$2 ~ /^gpuorch-.*-step-/ { print $1 }' | head -n 1)
		if [ -n "$_id" ]; then
			scontrol update nodename=node1 state=down reason=t4012 &&
			echo "$_id" >>"$1"
			_w=0
			while [ "$_w" -lt 80 ] && ! scontrol -o show job "$_id" | grep -q "JobState=NODE_FAIL"; do
				sleep 0.25
				_w=$((_w + 1))
			done
			# ReturnToService=2 may have brought it back already (resume then
			# says "Invalid node state specified")
			scontrol update nodename=node1 state=resume 2>/dev/null
			return 0
		fi
		sleep 0.2
	done
}

test_expect_success 'setup: a single-node Slurm with a preempting partition, a login node, a project' '
	# JobRequeue=0: else Slurm requeues a job whose node failed by itself (and
	# slurmrestd 22.05 reads "requeue": false as true: v0.0.38 sends none)
	SLURM_CONF_EXTRA="JobRequeue=0
PreemptType=preempt/partition_prio
PreemptMode=CANCEL
PartitionName=urgent Nodes=node1 PriorityTier=10 MaxTime=60 State=UP" slurm_start 8 &&
	scontrol show partition urgent | grep "PriorityTier=10" &&
	slurm_login_start login &&
	slurm_cluster_json hosts.json login &&
	tok=$(slurm_token 3600) && test -n "$tok" &&
	project_init &&
	cat >proj/experiments/nap.json <<-EOF &&
	{
	  "schema": 1,
	  "name": "slurmnap",
	  "phase": "Test phase: one step job that runs long enough to be preempted",
	  "sources": ["cpu/cputimer.c"],
	  "build": {"flags": ["-O2"], "timeout_s": 300},
	  "targets": {"H100": "sm_90a"},
	  "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
	  "problems": [{"name": "nap", "params": {"work": 2000, "sleep": 10}}],
	  "steps": [{"kind": "correctness", "program": "cputimer", "timeout_s": 60}]
	}
	EOF
	(cd proj && git add -A && git commit -qm nap)
'

test_expect_success 'a step job preempted once: submitted once more, passes; the record holds both attempts' '
	preempt_jobs 1 step preempted1 &
	ppid=$! &&
	(cd proj && SLURM_JWT=$tok timeout 700 "$GPUORCH" run experiments/nap.json --hosts ../hosts.json --host hpc) >r1.out 2>r1.err
	rc=$? && wait $ppid &&
	cat r1.out && test $rc = 0 &&
	test "$(wc -l <preempted1)" = 1 && first=$(cat preempted1) &&
	scontrol -o show job "$first" | grep "JobState=PREEMPTED" &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	test "$(jq_ $run/run.json hosts.0.steps --len)" = 1 &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.requeued)" = 1 &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.attempts --len)" = 2 &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.attempts.0.job_id)" = "$first" &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.attempts.0.state)" = PREEMPTED &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.attempts.0.node)" = node1 &&
	second=$(jq_ $run/run.json hosts.0.steps.0.slurm.job_id) &&
	test "$second" != "$first" &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.attempts.1.job_id)" = "$second" &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.attempts.1.state)" = COMPLETED &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.state)" = COMPLETED &&
	scontrol -o show job "$second" | grep "JobState=COMPLETED" &&
	# the step ran again in the second job, afresh: not the first attempt'"'"'s outputs handed on
	s2=$(jq_ $run/run.json hosts.0.steps.0.slurm.start_unix_s) &&
	ran=$(jq_ $run/run.json hosts.0.steps.0.ran_from_unix_s) &&
	echo "second job started $s2, the step ran from $ran" &&
	test "${ran%.*}" -ge "$s2" &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.run_s)" -ge 5 &&
	test "$(jq_ $run/run.json hosts.0.builds.0.slurm.requeued)" = 0 &&
	jq_ $run/run.json hosts.0.steps.0.slurm.rundir | grep "\.try2$" &&
	test -s "$(jq_ $run/run.json hosts.0.steps.0.slurm.rundir)/journal" &&
	test "$(jq_ $run/run.json hosts.0.scheduler.jobs --len)" = 3 &&
	test "$(jq_ $run/run.json hosts.0.scheduler.jobs.2.job_id)" = "$second" &&
	test "$(jq_ $run/run.json hosts.0.scheduler.jobs.2.attempt)" = 2 &&
	grep "job $first ended PREEMPTED on node1 before its step ended: submitted once more" r1.out &&
	grep "submitted step-000-.*: job $second (second attempt)" r1.out &&
	grep "^  step correctness.cputimer.nap: PASS (job $second on node1" r1.out &&
	grep "3 jobs (1 builds, 1 steps, 1 requeued)" $run/report.md &&
	grep "^Requeued by gpuorch (Slurm ended the job PREEMPTED or NODE_FAIL): .correctness.cputimer.nap. job $first PREEMPTED on node1, then job $second COMPLETED\.$" $run/report.md &&
	test -z "$(our_jobs)"
'

test_expect_success 'preempted twice: INFRA_ERROR naming both jobs, exit 1, nothing of the run left pending or running' '
	preempt_jobs 2 step preempted2 &
	ppid=$! &&
	(cd proj && SLURM_JWT=$tok timeout 700 "$GPUORCH" run experiments/nap.json --hosts ../hosts.json --host hpc) >r2.out 2>r2.err
	rc=$? && wait $ppid &&
	cat r2.out && test $rc = 1 &&
	test "$(wc -l <preempted2)" = 2 &&
	first=$(sed -n 1p preempted2) && second=$(sed -n 2p preempted2) &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = INFRA_ERROR &&
	jq_ $run/run.json hosts.0.steps.0.reason >why &&
	grep "the Slurm job ended PREEMPTED twice: job $first PREEMPTED on node1, submitted once more as job $second, PREEMPTED on node1 (gpuorch requeues a job once)" why &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.job_id)" = "$second" &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.requeued)" = 1 &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.attempts.0.job_id)" = "$first" &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.attempts.1.state)" = PREEMPTED &&
	test "$(jq_ $run/run.json hosts.0.scheduler.jobs --len)" = 3 &&
	grep "Requeued by gpuorch .*job $first PREEMPTED on node1, then job $second PREEMPTED\.$" $run/report.md &&
	test -z "$(our_jobs)" &&
	wait_for 20 "test -z \"\$(squeue -h -o %i)\"" &&
	no=$(grep -c "submitted once more$" r2.out) && test "$no" = 1
'

test_expect_success 'a step job whose node fails under it: NODE_FAIL (NodeDown), requeued once, passes once the node is back' '
	fail_node_under_step failed1 &
	fpid=$! &&
	(cd proj && SLURM_JWT=$tok timeout 700 "$GPUORCH" run experiments/nap.json --hosts ../hosts.json --host hpc) >r3.out 2>r3.err
	rc=$? && wait $fpid &&
	cat r3.out && test $rc = 0 &&
	test "$(wc -l <failed1)" = 1 && first=$(cat failed1) &&
	scontrol -o show job "$first" | grep "JobState=NODE_FAIL" &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.requeued)" = 1 &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.attempts.0.job_id)" = "$first" &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.attempts.0.state)" = NODE_FAIL &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.attempts.0.reason)" = NodeDown &&
	second=$(jq_ $run/run.json hosts.0.steps.0.slurm.job_id) && test "$second" != "$first" &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.state)" = COMPLETED &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.run_s)" -ge 5 &&
	grep "job $first ended NODE_FAIL on node1 before its step ended: submitted once more" r3.out &&
	grep "job $first NODE_FAIL on node1, then job $second COMPLETED\.$" $run/report.md &&
	test -z "$(our_jobs)" &&
	wait_for 30 "scontrol -o show node node1 | grep -q \"State=IDLE\"" &&
	test -s r3.out
'

test_expect_success 'a build job preempted: the step job waiting on it is withdrawn, submitted again after the second build job, and passes' '
	# a build that takes seconds (1200 functions at -O2), a new one each time
	awk "BEGIN { for (i = 0; i < 1200; i++) printf \"int pad%d(int x) { int y = x; for (int k = 0; k < %d; k++) y = y * 31 + (y >> 3) + k; return y; }\\n\", i, i % 7 + 3 }" >proj/cpu/slowpad.c &&
	test "$(wc -l <proj/cpu/slowpad.c)" = 1200 &&
	sed -e "s/slurmnap/slurmslowbuild/" -e "s|\"sources\": \[\"cpu/cputimer.c\"\]|\"sources\": [\"cpu/cputimer.c\", \"cpu/slowpad.c\"]|g" \
		-e "s/\"sleep\": 10/\"sleep\": 1/" proj/experiments/nap.json >proj/experiments/slowbuild.json &&
	grep -c slowpad proj/experiments/slowbuild.json | grep -x 2 &&
	(cd proj && git add -A && git commit -qm slowbuild) &&
	: "only the preempter in the background: an & after the && chain ran the whole chain there, so the" &&
	: "run below could start before slowbuild.json existed (cannot open it) or beside the git commit" &&
	{ preempt_jobs 1 build preempted4 & } &&
	ppid=$! &&
	(cd proj && SLURM_JWT=$tok timeout 700 "$GPUORCH" run experiments/slowbuild.json --hosts ../hosts.json --host hpc) >r4.out 2>r4.err
	rc=$?; wait $ppid; prc=$?
	cat r4.out r4.err; echo "run exit $rc, preempt_jobs exit $prc, preempted: $(cat preempted4)"; squeue -h -o "%i %j %T %r" &&
	test $rc = 0 && test $prc = 0 &&
	test "$(wc -l <preempted4)" = 1 && b1=$(cat preempted4) &&
	scontrol -o show job "$b1" | grep "JobState=PREEMPTED" &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	test "$(jq_ $run/run.json hosts.0.builds.0.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.builds.0.slurm.requeued)" = 1 &&
	test "$(jq_ $run/run.json hosts.0.builds.0.slurm.attempts.0.job_id)" = "$b1" &&
	test "$(jq_ $run/run.json hosts.0.builds.0.slurm.attempts.0.state)" = PREEMPTED &&
	b2=$(jq_ $run/run.json hosts.0.builds.0.slurm.job_id) && test "$b2" != "$b1" &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.requeued)" = 0 &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.dependency_requested)" = "afterok:$b2" &&
	s1=$(sed -n "s/^  submitted step-000-[^:]*: job \([0-9]*\), after afterok:$b1\$/\1/p" r4.out) && test -n "$s1" &&
	grep "step-000-.*: job $s1 withdrawn (it waited on job $b1)" r4.out &&
	scontrol -o show job "$s1" | grep "JobState=CANCELLED" &&
	test "$(jq_ $run/run.json hosts.0.scheduler.jobs --len)" = 4 &&
	grep "build .cputimer. job $b1 PREEMPTED on node1, then job $b2 COMPLETED" $run/report.md &&
	test -z "$(our_jobs)"
'

test_done
