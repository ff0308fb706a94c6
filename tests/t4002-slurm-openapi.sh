#!/bin/sh
# asan: yes
test_description='Slurm API v0.0.39-v0.0.44 (Slurm 23.02-25.11, not in Debian 12): the adapters'"'"' submit body and the replies they read, against the published OpenAPI documents (tests/fixtures/slurm-openapi), strictly (no field the document does not list)'
. "$(dirname "$0")/lib/testlib.sh"

FIX=$SRCDIR/tests/fixtures/slurm-openapi
SHAPE=$(dirname "$SSHTOOL")/slurmshape
check() {
	python3 -W ignore "$SRCDIR/tests/lib/openapi-check.py" "$@"
}

if ! python3 -c 'import jsonschema' 2>/dev/null; then
	test_skip 'OpenAPI document checks' 'python3-jsonschema is not installed (scripts/test.sh installs it)'
	test_done
fi

test_expect_success 'the strict check refuses what the documents do not allow (a misspelt field, a string for an array, a number for a no_val struct)' '
	sed "s/\"job_state\"/\"job_stat\"/" "$FIX/reply-jobs.json" >bad1.json &&
	! check "$FIX/v0.0.42.json" "/slurm/v0.0.42/job/{job_id}" get response bad1.json >bad1.out &&
	grep "job_stat" bad1.out &&
	sed "0,/\"state\": \[/s//\"state\": \"IDLE\", \"x\": [/" "$FIX/reply-nodes.json" >bad2.json &&
	! check "$FIX/v0.0.42.json" "/slurm/v0.0.42/nodes/" get response bad2.json &&
	"$SHAPE" submit v0.0.42 | sed "s/\"time_limit\":\t{/\"time_limit\": 30, \"x\": {/" >bad3.json &&
	! check "$FIX/v0.0.42.json" "/slurm/v0.0.42/job/submit" post request bad3.json &&
	"$SHAPE" submit v0.0.38 >v38.json &&
	! check "$FIX/v0.0.42.json" "/slurm/v0.0.42/job/submit" post request v38.json >v38.out &&
	grep -i "environment\|gpus\|script" v38.out
'

for v in v0.0.39 v0.0.40 v0.0.41 v0.0.42 v0.0.43 v0.0.44; do
	# v0.0.39 replies differ (job_state a string, times numbers, exit_code a raw wait status
	# in a struct; partitions without a state): fixtures of their own
	case $v in
	v0.0.39) sfx=-v0.0.39 ;;
	*) sfx= ;;
	esac
	test_expect_success "$v: the submit body of a GPU job (account, qos, constraint, TRES, dependency, environment) is a valid job_submit_req" "
		\"\$SHAPE\" submit $v >submit-$v.json &&
		check \"\$FIX/$v.json\" /slurm/$v/job/submit post request submit-$v.json
	"
	test_expect_success "$v: the reply fixtures are valid replies of GET job, nodes and partition" "
		check \"\$FIX/$v.json\" '/slurm/$v/job/{job_id}' get response \"\$FIX/reply-jobs$sfx.json\" &&
		check \"\$FIX/$v.json\" /slurm/$v/jobs/ get response \"\$FIX/reply-jobs$sfx.json\" &&
		check \"\$FIX/$v.json\" /slurm/$v/nodes/ get response \"\$FIX/reply-nodes$sfx.json\" &&
		check \"\$FIX/$v.json\" '/slurm/$v/partition/{partition_name}' get response \"\$FIX/reply-partition$sfx.json\"
	"
	test_expect_success "$v: the adapter reads those replies: states (PREEMPTED and NODE_FAIL too), exit status vs signal, times, nodes, GPUs" "
		\"\$SHAPE\" jobs $v \"\$FIX/reply-jobs$sfx.json\" >jobs-$v.out &&
		grep -x 'job 101 state=COMPLETED reason=None node=gpu7 exit=0 signal=0 submit=1795400000 start=1795400004 end=1795400050 dep=' jobs-$v.out &&
		grep -x 'job 102 state=FAILED reason=NonZeroExitCode node=gpu7 exit=3 signal=0 .*' jobs-$v.out &&
		grep -x 'job 103 state=CANCELLED reason=None node=gpu8 exit=-1 signal=9 .*' jobs-$v.out &&
		grep -x 'job 104 state=PENDING reason=Resources node= exit=-1 signal=0 submit=1795400000 start=0 end=0 dep=afterok:100(unfulfilled)' jobs-$v.out &&
		grep -x 'job 105 state=TIMEOUT reason=TimeLimit node=gpu9 exit=-1 signal=15 .*' jobs-$v.out &&
		grep -x 'job 106 state=PREEMPTED reason=None node=gpu7 exit=-1 signal=15 .*' jobs-$v.out &&
		grep -x 'job 107 state=NODE_FAIL reason=NodeDown node=gpu8 exit=0 signal=0 .*' jobs-$v.out &&
		test \$(wc -l <jobs-$v.out) -eq 7 &&
		\"\$SHAPE\" nodes $v \"\$FIX/reply-nodes$sfx.json\" >nodes-$v.out &&
		grep -x 'node gpu7 state=MIXED cpus=16/64 gpus=2/4 in_gpu_partition=1 reason=' nodes-$v.out &&
		grep -x 'node gpu8 state=IDLE,DRAIN cpus=0/64 gpus=0/4 in_gpu_partition=1 reason=fan' nodes-$v.out &&
		grep -x 'node cpu1 state=IDLE cpus=0/32 gpus=0/0 in_gpu_partition=0 reason=' nodes-$v.out &&
		\"\$SHAPE\" partition $v \"\$FIX/reply-partition$sfx.json\" >part-$v.out &&
		if [ $v = v0.0.39 ]; then st=; else st=UP; fi &&
		grep -x \"partition gpu nodes=gpu\\\\[7-9\\\\] state=\$st total_nodes=3 total_cpus=192\" part-$v.out
	"
	test_expect_success "$v: its published document makes gpuorch pick $v" "
		\"\$SHAPE\" pick \"\$FIX/$v.json\" >pick-$v.out &&
		grep -x '$v (offered: $v)' pick-$v.out
	"
done

test_expect_success 'v0.0.39 and v0.0.40 are the versions the v0.0.38 body and replies are not: each refuses the other'"'"'s' '
	"$SHAPE" submit v0.0.38 >v38.json &&
	! check "$FIX/v0.0.39.json" /slurm/v0.0.39/job/submit post request v38.json &&
	! check "$FIX/v0.0.39.json" "/slurm/v0.0.39/job/{job_id}" get response "$FIX/reply-jobs.json" &&
	! check "$FIX/v0.0.40.json" "/slurm/v0.0.40/job/{job_id}" get response "$FIX/reply-jobs-v0.0.39.json" &&
	! check "$FIX/v0.0.39.json" "/slurm/v0.0.39/partition/{partition_name}" get response "$FIX/reply-partition.json"
'

test_expect_success 'v0.0.40 as Slurm 24.05.4 served it (Slinky) takes the same body and replies as 23.11.1'"'"'s' '
	"$SHAPE" submit v0.0.40 >s40.json &&
	check "$FIX/v0.0.40-slurm-24.05.json" /slurm/v0.0.40/job/submit post request s40.json &&
	check "$FIX/v0.0.40-slurm-24.05.json" "/slurm/v0.0.40/job/{job_id}" get response "$FIX/reply-jobs.json" &&
	check "$FIX/v0.0.40-slurm-24.05.json" /slurm/v0.0.40/nodes get response "$FIX/reply-nodes.json" &&
	check "$FIX/v0.0.40-slurm-24.05.json" "/slurm/v0.0.40/partition/{partition_name}" get response "$FIX/reply-partition.json"
'

test_expect_success 'Slurm 23.11 (v0.0.38, v0.0.39, v0.0.40 served): v0.0.40 picked; a daemon serving v0.0.36 and v0.0.37 only: none, both named' '
	printf "{\"paths\": {\"/slurm/v0.0.38/job/submit\": {}, \"/slurm/v0.0.39/job/submit\": {}, \"/slurm/v0.0.40/job/submit\": {}}}" >s2311.json &&
	"$SHAPE" pick s2311.json >s2311.out &&
	grep -x "v0.0.40 (offered: v0.0.38, v0.0.39, v0.0.40)" s2311.out &&
	printf "{\"paths\": {\"/slurm/v0.0.36/job/submit\": {}, \"/slurm/v0.0.37/job/submit\": {}}}" >old.json &&
	"$SHAPE" pick old.json >old.out &&
	grep -x "none (offered: v0.0.36, v0.0.37)" old.out
'

test_done
