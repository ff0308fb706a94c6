#!/bin/sh
# cost: 200
# asan: yes
# waits: yes
test_description='gpuorch run on a Slurm cluster, the slow cases: a job pending for resources, a token minted again mid-run'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/slurm.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'Slurm run tests'
if ! _why=$(slurm_available); then
	test_skip 'Slurm run tests' "$_why"
	test_done
fi

cluster_json() {
	slurm_cluster_json "$1" login "${2:-}"
}

# sweep_spec FILE NAME VARIANTS SLEEP TIMEOUT: a sweep of a CPU program whose steps sleep
sweep_spec() {
	cat >"$1" <<EOF
{"schema": 1, "name": "$2", "phase": "Test phase: Slurm runs",
 "sources": ["cpu/cputimer.c"], "build": {"flags": ["-O2"], "timeout_s": 300},
 "targets": {"H100": "sm_90a"},
 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
 "problems": [{"name": "nap", "params": {"work": 2000, "sleep": $4}}],
 "steps": [{"kind": "sweep", "program": "cputimer", "defines": {"V": [$3]}, "timeout_s": $5}]}
EOF
}

test_expect_success 'setup: a single-node Slurm, a login node with scontrol, a project' '
	slurm_start 8 &&
	slurm_login_start login &&
	cluster_json hosts.json &&
	tok=$(slurm_token 3600) && test -n "$tok" &&
	project_init &&
	sweep_spec proj/experiments/sweep.json slurmsweep "1, 2, 3, 4" 10 120 &&
	sweep_spec proj/experiments/token.json slurmtoken 1 70 150 &&
	(cd proj && git add -A && git commit -qm specs)
'

# pending_seen RUN: the run's record as the run goes (run.json and the
# changes journaled since: journal.jsonl) names a job that waits for
# Resources or Priority
pending_seen() {
	cat "$1/run.json" "$1/journal.jsonl" 2>/dev/null |
		grep -q "\"pending_reason\":[[:space:]]*\"\(Resources\|Priority\)\""
}

test_expect_success 'a job that waits for resources: its pending reason is in the record while it waits, and after' '
	cluster_json big.json ", \"cpus_per_job\": 8" &&
	# a job of our own holds all 8 CPUs until the gate opens: the run'"'"'s
	# first job waits for Resources (or Priority) until then, however slow
	# the machine; the gate opens only once the record says so
	blocker=$(sbatch --parsable -p debug -c 8 -o /dev/null --wrap "while [ ! -e $TRASH/go-big ]; do sleep 0.2; done") &&
	test_when_finished "touch $TRASH/go-big; scancel $blocker 2>/dev/null || :" &&
	wait_for 120 "squeue -h -j $blocker -o %T | grep -q RUNNING" &&
	ls -d "$TRASH"/reports/*/*/ 2>/dev/null >runs.before || : &&
	{ (cd proj && SLURM_JWT=$tok "$GPUORCH" run experiments/sweep.json --hosts ../big.json --host hpc) >big.out 2>big.err & } &&
	gpid=$! &&
	test_when_finished "kill $gpid 2>/dev/null && wait $gpid; :" &&
	wait_for 120 "test -n \"\$(ls -d \"\$TRASH\"/reports/*/*/ 2>/dev/null | grep -vxF -f runs.before)\"" &&
	run=$(last_run_dir) &&
	wait_for 300 "pending_seen $run" &&
	: "the blocker still runs: the record said why before the wait ended" &&
	squeue -h -j $blocker -o %T | grep RUNNING &&
	touch "$TRASH/go-big" &&
	{ wait $gpid || { cat big.out big.err; false; }; } &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	reasons=$(grep -o "\"pending_reason\":[[:space:]]*\"[A-Za-z]*\"" $run/run.json | sort | uniq -c) &&
	echo "pending reasons recorded: $reasons" &&
	echo "$reasons" | grep -E "\"(Resources|Priority)\"" &&
	njobs=$(jq_ $run/run.json hosts.0.scheduler.jobs --len) && echo "jobs: $njobs" &&
	test "$njobs" = 12 &&
	j0=$(jq_ $run/run.json hosts.0.scheduler.jobs.0.job_id) &&
	b0=$(jq_ $run/run.json hosts.0.builds.0.slurm.job_id) &&
	echo "job 0: $j0, build 0: $b0" && test -n "$j0" && test "$j0" = "$b0" &&
	: "the first job waited behind the blocker: its own entry says why too" &&
	jq_ $run/run.json hosts.0.builds.0.slurm.pending_reason | grep -E "^(Resources|Priority)$"
'

test_expect_success 'a minted token that lives 60 s is minted again during a 70 s run; the run passes' '
	cluster_json short.json ", \"token_lifespan_s\": 60" &&
	(cd proj && unset SLURM_JWT && "$GPUORCH" run experiments/token.json --hosts ../short.json --host hpc) >tk.out 2>tk.err ||
		{ cat tk.out tk.err; false; } &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	test "$(jq_ $run/run.json hosts.0.scheduler.token_source)" = "scontrol token over SSH" &&
	mints=$(jq_ $run/run.json hosts.0.scheduler.token_mints) && echo "mints: $mints" &&
	test "$mints" -ge 2 &&
	d=$(jq_ $run/run.json hosts.0.steps.1.ran_to_unix_s) && f=$(jq_ $run/run.json hosts.0.steps.1.ran_from_unix_s) &&
	awk -v d=$d -v f=$f "BEGIN { exit !(d - f >= 65) }"
'

test_expect_success 'a drained node: jobs stay pending with the reason, queue_timeout_s ends them' '
	scontrol update nodename=node1 state=drain reason=gpuorch-test &&
	test_when_finished "scontrol update nodename=node1 state=resume" &&
	cluster_json qt.json ", \"queue_timeout_s\": 4" &&
	start=$(test_now_ms) &&
	(cd proj && SLURM_JWT=$tok test_expect_code 1 "$GPUORCH" run experiments/basic.json --hosts ../qt.json --host hpc) >qt.out 2>qt.err ||
		{ cat qt.out qt.err; false; } &&
	# ended by queue_timeout_s, not by the node or the 30 min time limit:
	# the reason recorded below says so (the time is not judged)
	el=$(test_elapsed_ms $start) && echo "took $el ms" &&
	cat qt.out &&
	grep "warning: job [0-9]*: .*Required node not available (down, drained or reserved)" qt.out &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.builds.0.status)" = TIMEOUT &&
	jq_ $run/run.json hosts.0.builds.0.reason | grep "pending for longer than queue_timeout_s (4 s): [A-Za-z]" &&
	jq_ $run/run.json hosts.0.builds.0.slurm.pending_reason | grep "[A-Za-z]" &&
	# its step jobs waited on the drained node too: timed out, or skipped with the build
	case "$(jq_ $run/run.json hosts.0.steps.0.status)" in TIMEOUT|SKIPPED) ;; *) false ;; esac &&
	test -z "$(squeue -h -t PENDING,RUNNING -o %i)"
'

test_expect_success '--queue-timeout on the command line overrides the entry'"'"'s queue_timeout_s (600 s there, 3 s given); a bad value is a usage error' '
	(cd proj && test_expect_code 2 "$GPUORCH" run experiments/basic.json --hosts ../qt.json --queue-timeout 3x) >bad.out 2>&1 &&
	grep "error: --queue-timeout: .3x. is not a number of seconds" bad.out &&
	scontrol update nodename=node1 state=drain reason=gpuorch-test &&
	test_when_finished "scontrol update nodename=node1 state=resume" &&
	cluster_json qt600.json ", \"queue_timeout_s\": 600" &&
	start=$(test_now_ms) &&
	(cd proj && SLURM_JWT=$tok test_expect_code 1 "$GPUORCH" run experiments/basic.json --hosts ../qt600.json --host hpc --queue-timeout 3) >qc.out 2>qc.err ||
		{ cat qc.out qc.err; false; } &&
	# the 3 s given won over the 600 s of the entry: the reason names 3 s
	el=$(test_elapsed_ms $start) && echo "took $el ms" &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.scheduler.queue_timeout_s)" = 3 &&
	test "$(jq_ $run/run.json hosts.0.builds.0.status)" = TIMEOUT &&
	jq_ $run/run.json hosts.0.builds.0.reason | grep "pending for longer than queue_timeout_s (3 s)" &&
	test -z "$(squeue -h -t PENDING,RUNNING -o %i)"
'

test_done
