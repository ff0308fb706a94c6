#!/bin/sh
# cost: 320
# timeout: 2700
# asan: yes
# waits: yes
test_description='gpuorch run on a Slurm cluster: builds and steps as jobs through a real slurmrestd, sources over SFTP'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/slurm.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'Slurm run tests'
if ! _why=$(slurm_available); then
	test_skip 'Slurm run tests' "$_why"
	test_done
fi

# cluster_json FILE [EXTRA_SLURM_FIELDS]: cluster "hpc" whose login node is sshd "login"
cluster_json() {
	slurm_cluster_json "$1" login "${2:-}"
}

no_token_in() {
	# shellcheck disable=SC2154 # tok: set by the setup test body
	if grep -r -F -l -- "$tok" "$@"; then
		echo "the token leaked (files above)"
		return 1
	fi
}

test_expect_success 'setup: a single-node Slurm, a login node with scontrol, a project' '
	slurm_start 8 &&
	slurm_login_start login &&
	mkdir "$TRASH/meet" &&
	cluster_json hosts.json &&
	tok=$(slurm_token 3600) && test -n "$tok" &&
	project_init &&
	cat >proj/experiments/sweep.json <<-EOF &&
	{
	  "schema": 1,
	  "name": "slurmsweep",
	  "phase": "Test phase: a sweep whose variants run as separate Slurm jobs",
	  "sources": ["cpu/cputimer.c"],
	  "build": {"flags": ["-O2"], "timeout_s": 300},
	  "targets": {"H100": "sm_90a"},
	  "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
	  "problems": [{"name": "nap", "params": {"work": 2000, "meet": "$TRASH/meet", "sleep": 3}}],
	  "steps": [{"kind": "sweep", "program": "cputimer", "defines": {"V": [1, 2, 3, 4]}, "timeout_s": 60}]
	}
	EOF
	sed -e "s/slurmsweep/slurmlong/" -e "s/\"sleep\": 3/\"sleep\": 60/" -e "s/\"timeout_s\": 60}/\"timeout_s\": 120}/" \
		-e "s/\"kind\": \"sweep\", \"program\": \"cputimer\", \"defines\": {\"V\": \[1, 2, 3, 4\]}/\"kind\": \"sweep\", \"program\": \"cputimer\", \"defines\": {\"V\": [1, 2]}/" \
		proj/experiments/sweep.json >proj/experiments/long.json &&
	grep "\"sleep\": 60" proj/experiments/long.json && grep "\"timeout_s\": 120}" proj/experiments/long.json && grep "\[1, 2\]" proj/experiments/long.json &&
	sed -e "s/slurmsweep/slurmbad/" -e "s/\"-O2\"/\"-O2\", \"--no-such-nvcc-flag\"/" \
		proj/experiments/sweep.json >proj/experiments/badbuild.json &&
	grep no-such-nvcc-flag proj/experiments/badbuild.json &&
	(cd proj && git add -A && git commit -qm sweep)
'

test_expect_success 'basic.json on the cluster: every build and step ran as a Slurm job on node1' '
	(cd proj && SLURM_JWT=$tok "$GPUORCH" run experiments/basic.json --hosts ../hosts.json --host hpc) >run.out 2>run.err ||
		{ cat run.out run.err; false; } &&
	cat run.out &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	test "$(jq_ $run/run.json hosts.0.runner)" = slurm-job &&
	test "$(jq_ $run/run.json hosts.0.scheduler.api_version)" = v0.0.38 &&
	test "$(jq_ $run/run.json hosts.0.scheduler.partition)" = debug &&
	test "$(jq_ $run/run.json hosts.0.status)" = ok &&
	nb=$(jq_ $run/run.json hosts.0.builds --len) && test "$nb" -ge 1 &&
	i=0 && while [ $i -lt $nb ]; do
		test "$(jq_ $run/run.json hosts.0.builds.$i.status)" = PASS &&
		test "$(jq_ $run/run.json hosts.0.builds.$i.slurm.node)" = node1 &&
		test "$(jq_ $run/run.json hosts.0.builds.$i.slurm.state)" = COMPLETED || return 1
		i=$((i + 1))
	done &&
	test "$(jq_ $run/run.json hosts.0.steps.0.id)" = correctness.cputimer.small &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.node)" = node1 &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.state)" = COMPLETED &&
	jq_ $run/run.json hosts.0.steps.0.slurm.queue_wait_s >qw && test "$(cat qw)" -ge 0 &&
	jq_ $run/run.json hosts.0.steps.1.result.timing.median_us >med && test -s med &&
	test "$(jq_ $run/run.json hosts.0.steps.2.status)" = SKIPPED &&
	jq_ $run/run.json hosts.0.steps.2.reason | grep "names no \"arch\"" &&
	job=$(jq_ $run/run.json hosts.0.steps.1.slurm.job_id) &&
	scontrol -o show job "$job" >job.txt &&
	grep "JobName=gpuorch-.*-step-001-benchmark.cputimer.small" job.txt &&
	grep "BatchHost=node1" job.txt &&
	grep "JobState=COMPLETED" job.txt &&
	grep "^  step benchmark.cputimer.small: PASS (job $job on node1" run.out
'

test_expect_success 'a step job depended on its build job (afterok), and never ran before it ended' '
	run=$(last_run_dir) &&
	bjob=$(jq_ $run/run.json hosts.0.builds.0.slurm.job_id) &&
	grep "submitted step-000-correctness.cputimer.small: job [0-9]*, after afterok:$bjob" run.out &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.dependency_requested)" = "afterok:$bjob" &&
	bend=$(jq_ $run/run.json hosts.0.builds.0.slurm.end_unix_s) &&
	sstart=$(jq_ $run/run.json hosts.0.steps.0.slurm.start_unix_s) &&
	test "$sstart" -ge "$bend" &&
	: "the build job compiled its one source into an object" &&
	test "$(jq_ $run/run.json hosts.0.builds.0.objects_compiled)" = 1 &&
	test "$(jq_ $run/run.json hosts.0.builds.0.objects_reused)" = 0
'

test_expect_success 'nothing compiled or ran on the login node: the build logs come from jobs; the token is nowhere' '
	run=$(last_run_dir) &&
	d=$(jq_ $run/run.json hosts.0.builds.0.slurm.rundir) &&
	test -f "$d/journal" && test -f "$d/node.txt" && grep "^vm\|^$(hostname)" "$d/node.txt" &&
	ls "$d"/slurm-*.out &&
	no_token_in run.out run.err $run "$(sshd_var login WORKDIR)"
'

# each step of the sweep leaves a file in $TRASH/meet and waits (at most 120 s)
# until two are there, then sleeps 3 s: the first two steps overlap if, and
# only if, Slurm runs them at the same time, however long the builds took
test_expect_success 'a sweep: variants run as separate jobs at the same time (their run spans overlap)' '
	(cd proj && SLURM_JWT=$tok "$GPUORCH" run experiments/sweep.json --hosts ../hosts.json --host hpc) >sw.out 2>sw.err ||
		{ cat sw.out sw.err; false; } &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	n=$(jq_ $run/run.json hosts.0.steps --len) && test "$n" = 8 &&
	test "$(jq_ $run/run.json hosts.0.builds --len)" = 4 &&
	i=0 && : >spans && while [ $i -lt $n ]; do
		echo "$(jq_ $run/run.json hosts.0.steps.$i.ran_from_unix_s) $(jq_ $run/run.json hosts.0.steps.$i.ran_to_unix_s) $(jq_ $run/run.json hosts.0.steps.$i.slurm.job_id)" >>spans || return 1
		i=$((i + 1))
	done &&
	cat spans &&
	test $(cut -d" " -f3 spans | sort -u | wc -l) = 8 &&
	overlaps=$(awk "{ f[NR] = \$1; t[NR] = \$2 } END { n = 0; for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) if (f[i] < t[j] && f[j] < t[i]) n++; print n }" spans) &&
	echo "overlapping pairs: $overlaps" && test "$overlaps" -ge 1 &&
	test "$(jq_ $run/run.json hosts.0.sweeps --len)" = 1
'

test_expect_success 'the sweep'"'"'s report: a Cluster jobs section with node1'"'"'s jobs and how many ran at once, as Slurm'"'"'s times say' '
	run=$(last_run_dir) &&
	: >times && for kind in builds steps; do
		n=$(jq_ $run/run.json hosts.0.$kind --len) && i=0 &&
		while [ $i -lt $n ]; do
			echo "$(jq_ $run/run.json hosts.0.$kind.$i.slurm.start_unix_s) $(jq_ $run/run.json hosts.0.$kind.$i.slurm.end_unix_s)" >>times || return 1
			i=$((i + 1))
		done || return 1
	done &&
	test $(wc -l <times) = 12 &&
	# the most [start, end) spans open at one instant; a job within one second holds that second
	want=$(awk "{ s = \$1; e = (\$2 > \$1) ? \$2 : \$1 + 1; print s, 1; print e, -1 }" times |
		sort -k1,1n -k2,2n | awk "{ k += \$2; if (k > m) m = k } END { print m }") &&
	echo "at once: $want" &&
	grep -x "## Cluster jobs (Slurm)" $run/report.md &&
	grep "^\*\*hpc\*\*: slurmrestd .* (API v0.0.38, Slurm 22.05.8), partition .* 12 jobs (4 builds, 8 steps), at most .* in flight; \*\*$want ran at once\*\* at the most" $run/report.md &&
	: "a duration as report-format.c writes it: 5.2 s, 1m05s or 1h02m" &&
	dur="\([0-9]*[.][0-9] s\|[0-9]*m[0-5][0-9]s\|[0-9]*h[0-5][0-9]m\)" &&
	grep "^| node1 | — | — | — | 12 | 0 | $dur / $dur | $dur |$" $run/report.md
'

# our_jobs: the jobs of this test's runs still in the queue
our_jobs() {
	squeue -h -t PENDING,RUNNING,CONFIGURING -o "%i %j %T" | grep " gpuorch-" || true
}

test_expect_success 'a build that fails: its steps are recorded SKIPPED, their jobs never left pending' '
	(cd proj && SLURM_JWT=$tok test_expect_code 1 "$GPUORCH" run experiments/badbuild.json --hosts ../hosts.json --host hpc) >bb.out 2>bb.err ||
		{ cat bb.out bb.err; false; } &&
	cat bb.out &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.builds.0.status)" = FAIL &&
	jq_ $run/run.json hosts.0.builds.0.reason | grep "exit code" &&
	log=$(jq_ $run/run.json hosts.0.builds.0.log) && grep -i "no-such-nvcc-flag" "$run/$log" &&
	# every step: the failed build job never let one start (afterok)
	i=0 && while [ $i -lt 8 ]; do
		test "$(jq_ $run/run.json hosts.0.steps.$i.status)" = SKIPPED &&
		test "$(jq_ $run/run.json hosts.0.steps.$i.reason)" = "its build did not pass" || return 1
		i=$((i + 1))
	done &&
	test "$(jq_ $run/run.json hosts.0.builds.0.slurm.state)" = FAILED &&
	wait_for 10 "test -z \"\$(our_jobs)\"" || { our_jobs; false; }
'

test_expect_success 'a job cancelled from outside (scancel): the step says so, the run goes on to the end' '
	(cd proj && SLURM_JWT=$tok exec "$GPUORCH" run experiments/long.json --hosts ../hosts.json --host hpc >../sc.out 2>../sc.err) &
	pid=$! &&
	wait_for 600 "our_jobs | grep -q \"step-000.* RUNNING\"" &&
	job=$(our_jobs | grep "step-000" | cut -d" " -f1) &&
	scancel "$job" &&
	sleep 1 &&
	# then the rest, until the run ends (bounded): this test is about step 0
	i=0 && while kill -0 $pid 2>/dev/null && [ $i -lt 60 ]; do
		our_jobs | cut -d" " -f1 | xargs -r scancel; sleep 1; i=$((i + 1))
	done &&
	test_expect_code 1 wait $pid &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json status)" = complete &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = KILLED &&
	test "$(jq_ $run/run.json hosts.0.steps.0.reason)" = "the job was cancelled in Slurm (scancel or DELETE)" &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.state)" = CANCELLED &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.job_id)" = "$job"
'

test_expect_success 'Ctrl-C mid-run cancels every job of the run and records it incomplete' '
	(cd proj && SLURM_JWT=$tok exec "$GPUORCH" run experiments/long.json --hosts ../hosts.json --host hpc >../int.out 2>../int.err) &
	pid=$! &&
	wait_for 600 "test \$(our_jobs | grep -c RUNNING) -ge 2" &&
	kill -INT $pid &&
	test_expect_code 130 wait $pid &&
	wait_for 20 "test -z \"\$(our_jobs)\"" &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json status)" = incomplete &&
	grep "interrupted: cancelled every queued and running job of the run" int.out &&
	n=$(jq_ $run/run.json hosts.0.steps --len) && test "$n" = 4 &&
	i=0 && while [ $i -lt $n ]; do
		test "$(jq_ $run/run.json hosts.0.steps.$i.status)" = KILLED || return 1
		i=$((i + 1))
	done
'

test_expect_success 'a controller killed (SIGKILL) after submitting, its job ids unrecorded: --resume finds its jobs by name, submits only the rest, collects every step' '
	echo "/* resume */" >>proj/cpu/cputimer.c && (cd proj && git commit -qam "resume: new sources, new builds") &&
	: "its steps wait at a gate (a meet dir that needs 3 entries) that the test opens once the" &&
	: "controller is killed: two step jobs are then in the queue together, however slowly the" &&
	: "controller submits (under CI load, each step had ended before the next was submitted)" &&
	mkdir "$TRASH/gate" &&
	sed -e "s|\"meet\": \"$TRASH/meet\"|\"meet\": \"$TRASH/gate\", \"meet-n\": 3|" \
		proj/experiments/sweep.json >proj/experiments/gated.json &&
	grep -F "\"meet-n\": 3" proj/experiments/gated.json &&
	(cd proj && git add experiments/gated.json && git commit -qm gated) &&
	{ (cd proj && SLURM_JWT=$tok exec "$GPUORCH" run experiments/gated.json --hosts ../hosts.json --host hpc --plain >../kr.out 2>&1) & } &&
	pid=$! &&
	wait_for 600 "grep -q \"^run \" kr.out" &&
	id=$(sed -n "s/^run \([0-9a-f-]*\): .*/\1/p" kr.out | head -n 1) &&
	# the controller still running once two step jobs are in (if it ended
	# first, say how: its output)
	wait_for 600 "test \$(our_jobs | grep -c \"gpuorch-$id-step-\") -ge 2 || ! kill -0 $pid 2>/dev/null" &&
	{ kill -0 $pid 2>/dev/null || { echo "the run ended before two step jobs were in:"; cat kr.out; false; }; } &&
	kill -9 $pid && wait_for 10 "! kill -0 $pid 2>/dev/null" &&
	squeue -h -t all -o "%i %j" | sed -n "s/^\([0-9]*\) gpuorch-$id-\(.*\)/\1 \2/p" | sort -n >before.jobs && cat before.jobs &&
	touch "$TRASH/gate/opened-by-the-test" &&
	run=$(ls -d "$TRASH"/reports/*/$id) &&
	test "$(jq_ $run/run.json status)" = running &&
	# as if it died between its submits and recording them: the ids are found by the jobs names
	: >$run/journal.jsonl &&
	(cd proj && SLURM_JWT=$tok timeout 600 "$GPUORCH" run experiments/gated.json --hosts ../hosts.json --host hpc --plain --resume $id) >res.out 2>&1;
	echo "exit $?" >>res.out && cat res.out &&
	grep "^exit 0" res.out &&
	test "$(jq_ $run/run.json status)" = complete && test "$(jq_ $run/run.json outcome)" = passed &&
	test "$(jq_ $run/run.json hosts.0.steps --len)" = 8 &&
	while read -r j name; do
		grep -q "^  resumed $name: job $j, " res.out || { echo "job $j ($name) not adopted"; return 1; }
	done <before.jobs &&
	test "$(grep -c "^  resumed " res.out)" = "$(wc -l <before.jobs)" &&
	sed -n "s/^  submitted \([^:]*\): .*/\1/p" res.out >again &&
	! grep -x -F -f again before.jobs &&
	! cut -d" " -f2 before.jobs | grep -x -F -f - again &&
	test "$(jq_ $run/run.json hosts.0.scheduler.jobs --len)" = 12
'

test_expect_success 'slurmrestd restarted mid-run: requests retried with backoff, the run completes' '
	(cd proj && SLURM_JWT=$tok exec "$GPUORCH" run experiments/sweep.json --hosts ../hosts.json --host hpc >../rs.out 2>../rs.err) &
	pid=$! &&
	wait_for 600 "our_jobs | grep -q RUNNING" &&
	slurm_rest_stop && sleep 3 && slurm_rest_start &&
	wait $pid &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	test "$(jq_ $run/run.json hosts.0.steps --len)" = 8 &&
	test "$(jq_ $run/run.json hosts.0.builds.0.reused)" = true
'

test_done
