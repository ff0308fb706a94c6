#!/bin/sh
# asan: yes
test_description='the "aws" provider against moto, a real EC2 API server: instances gpuorch launches (on-demand and spot), uses and terminates; an unknown instance; bad launch specs'
# moto_server (Python moto, on this image and CI's) answers the EC2 Query API
# on 127.0.0.1; it does not check signatures (t2520's ec2fake does) and its
# instances are records, not machines: each host entry reaches the suite's
# loopback sshd ("reach": "host") while its lifecycle runs against moto.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'moto EC2 tests'
if ! command -v moto_server >/dev/null 2>&1; then
	test_skip 'moto EC2 tests' 'moto_server is not installed (Python moto)'
	test_done
fi
GPUORCH_STATE_DIR=$TRASH/state
export GPUORCH_STATE_DIR
AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing-secret-7f3a
export AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_SHARED_CREDENTIALS_FILE

# ec2 ACTION [K=V...]: moto's answer (XML) on stdout
ec2() {
	_a=$1
	shift
	_q="Action=$_a&Version=2016-11-15"
	for _kv in "$@"; do _q="$_q&$_kv"; done
	curl -s -X POST "http://127.0.0.1:$MOTO_PORT/" -d "$_q" \
		-H "Authorization: AWS4-HMAC-SHA256 Credential=testing/20261124/us-east-1/ec2/aws4_request, SignedHeaders=host, Signature=0"
}
# live_ids: the instances moto has that are not terminated
live_ids() {
	ec2 DescribeInstances | tr -d "\n" | sed "s/<item>/\n<item>/g" |
		grep "<instanceState>.*<name>\(pending\|running\|stopping\|stopped\)</name>" |
		grep -o "<instanceId>i-[0-9a-f]*</instanceId>" | sed "s/<[^>]*>//g" | sort -u
}
state_of() {
	ec2 DescribeInstances InstanceId.1=$1 | tr -d "\n" | grep -o "<instanceState>.*</instanceState>" |
		grep -o "<name>[a-z-]*</name>" | head -n 1 | sed "s/<[^>]*>//g"
}

# hosts_json FILE INSTANCE-FIELDS
hosts_json() {
	cat >"$1" <<EOT
{"hosts": [{"name": "e", "address": "127.0.0.1", "port": $(sshd_var e PORT),
  "identity": "$(sshd_var e IDENTITY)", "known_hosts": "$(sshd_var e KNOWN_HOSTS)",
  "workdir": "$(sshd_var e WORKDIR)", "connect_timeout_s": 15,
  "instance": {"provider": "aws", "region": "us-east-1", "endpoint": "http://127.0.0.1:$MOTO_PORT/",
               "reach": "host", "price_per_hour": 0.8048, "poll_s": 0.2, "retries": 0,
               "guard_action": "echo fired >>$TRASH/guard-fired", $2}}]}
EOT
}

LAUNCH='"launch": {"image_id": "ami-12c6146b", "instance_type": "g6.xlarge", "key_name": "gpuorch-test"}'
SPOT='"launch": {"image_id": "ami-12c6146b", "instance_type": "p5.4xlarge", "market": "spot", "spot_max_price": 12.5}'

test_expect_success 'setup: the instance sshd, moto EC2 on a free port, a project' '
	sshd_start e && project_init &&
	MOTO_PORT=$(python3 -c "import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])") &&
	{ moto_server -H 127.0.0.1 -p $MOTO_PORT >moto.log 2>&1 & } && mpid=$! &&
	test_at_exit "kill $mpid" &&
	wait_for 120 "ec2 DescribeImages | grep -q ami-12c6146b" &&
	echo $MOTO_PORT >moto.port &&
	cat >"proj/experiments/q.json" <<-JSON
	{"schema": 1, "name": "q", "phase": "moto test",
	 "sources": ["cpu/cputimer.c"], "targets": {"L4": "sm_89"},
	 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
	 "problems": [{"name": "p", "params": {"work": 1000}}],
	 "steps": [{"kind": "benchmark", "program": "cputimer", "timeout_s": 60}]}
	JSON
	(cd proj && git add -A && git commit -qm q)
'

test_expect_success 'a run launches an on-demand instance (RunInstances), uses it and terminates it; the record has its id and cost' '
	MOTO_PORT=$(cat moto.port) && hosts_json od.json "$LAUNCH" &&
	test -z "$(live_ids)" &&
	(cd proj && "$GPUORCH" run experiments/q.json --hosts ../od.json --plain) >od.out 2>&1 ||
		{ cat od.out; false; } &&
	cat od.out &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	id=$(jq_ $run/run.json hosts.0.instance.instance_id) && echo "launched $id" &&
	expr "$id" : "i-[0-9a-f]*$" &&
	test "$(jq_ $run/run.json hosts.0.instance.launched_by_gpuorch)" = true &&
	test "$(jq_ $run/run.json hosts.0.instance.after_run)" = terminate &&
	test "$(jq_ $run/run.json hosts.0.instance.state_before)" = terminated &&
	test "$(state_of $id)" = terminated && test -z "$(live_ids)" &&
	grep "e: launching an instance (aws, token gpuorch-[0-9a-f]*)" od.out && grep "e: launched $id" od.out &&
	grep -i "cost" $run/report.md &&
	jq_ $run/run.json hosts.0.instance.cost &&
	! grep -r "testing-secret-7f3a" od.out $run "$GPUORCH_STATE_DIR" &&
	"$GPUORCH" hosts status --hosts od.json >st.out && cat st.out &&
	grep "^e  aws  none (gpuorch launches one for the next run)" st.out
'

test_expect_success 'a spot instance kept after the run is taken up again by the next run, then ended by hosts down' '
	MOTO_PORT=$(cat moto.port) && hosts_json spot.json "$SPOT, \"after_run\": \"keep\"" &&
	(cd proj && "$GPUORCH" run experiments/q.json --hosts ../spot.json --plain) >s1.out 2>&1 ||
		{ cat s1.out; false; } &&
	run=$(last_run_dir) && id=$(jq_ $run/run.json hosts.0.instance.instance_id) &&
	test "$(live_ids)" = "$id" && test "$(state_of $id)" = running &&
	ec2 DescribeInstances InstanceId.1=$id | grep -q "<instanceLifecycle>spot</instanceLifecycle>" &&
	ec2 DescribeInstances InstanceId.1=$id | grep -q "<instanceType>p5.4xlarge</instanceType>" &&
	"$GPUORCH" hosts status --hosts spot.json >s.st && cat s.st &&
	grep "^e  aws  launched $id" s.st && grep "^e  aws  running  started by gpuorch at" s.st &&
	(cd proj && "$GPUORCH" run experiments/q.json --hosts ../spot.json --plain) >s2.out 2>&1 ||
		{ cat s2.out; false; } &&
	grep "instance $id (launched by gpuorch before) is running" s2.out &&
	! grep "launching an instance" s2.out && test "$(live_ids)" = "$id" &&
	"$GPUORCH" hosts down --hosts spot.json >down.out && cat down.out &&
	grep "e: terminated; billed" down.out &&
	test "$(state_of $id)" = terminated && test -z "$(live_ids)" &&
	"$GPUORCH" hosts status --hosts spot.json | grep "none (gpuorch launches one"
'

test_expect_success 'after_run "stop": the launched instance is stopped (StopInstances), the next run starts it again (StartInstances); hosts down leaves it stopped' '
	MOTO_PORT=$(cat moto.port) && hosts_json stop.json "$LAUNCH, \"after_run\": \"stop\"" &&
	(cd proj && "$GPUORCH" run experiments/q.json --hosts ../stop.json --plain) >p1.out 2>&1 ||
		{ cat p1.out; false; } &&
	id=$(jq_ $(last_run_dir)/run.json hosts.0.instance.instance_id) &&
	test "$(state_of $id)" = stopped && test "$(jq_ $(last_run_dir)/run.json hosts.0.instance.after_run)" = stop &&
	"$GPUORCH" hosts status --hosts stop.json >p.st && cat p.st &&
	grep "^e  aws  launched $id" p.st && grep "^e  aws  stopped" p.st &&
	(cd proj && "$GPUORCH" run experiments/q.json --hosts ../stop.json --plain) >p2.out 2>&1 ||
		{ cat p2.out; false; } &&
	cat p2.out &&
	grep "instance $id (launched by gpuorch before) is stopped" p2.out &&
	grep "e: starting the instance (aws)" p2.out && ! grep "launching an instance" p2.out &&
	test "$(jq_ $(last_run_dir)/run.json hosts.0.instance.instance_id)" = "$id" &&
	test "$(jq_ $(last_run_dir)/run.json hosts.0.instance.started_by_gpuorch)" = true &&
	test "$(state_of $id)" = stopped &&
	"$GPUORCH" hosts down --hosts stop.json >pd.out && cat pd.out &&
	test "$(state_of $id)" = stopped
'

test_expect_success 'an instance launched before and terminated outside gpuorch: the next run launches a new one' '
	MOTO_PORT=$(cat moto.port) && hosts_json keep.json "$LAUNCH, \"after_run\": \"keep\"" &&
	(cd proj && "$GPUORCH" run experiments/q.json --hosts ../keep.json --plain) >k1.out 2>&1 &&
	old=$(jq_ $(last_run_dir)/run.json hosts.0.instance.instance_id) &&
	ec2 TerminateInstances InstanceId.1=$old >/dev/null && test "$(state_of $old)" = terminated &&
	(cd proj && "$GPUORCH" run experiments/q.json --hosts ../keep.json --plain) >k2.out 2>&1 ||
		{ cat k2.out; false; } &&
	cat k2.out && grep "instance $old launched before is gone: terminated" k2.out &&
	new=$(jq_ $(last_run_dir)/run.json hosts.0.instance.instance_id) &&
	test "$new" != "$old" && test "$(live_ids)" = "$new" &&
	"$GPUORCH" hosts down --hosts keep.json >/dev/null && test -z "$(live_ids)"
'

test_expect_success 'an unknown instance id: hosts status and run say what EC2 said; nothing runs' '
	MOTO_PORT=$(cat moto.port) && hosts_json bad.json "\"instance_id\": \"i-0000000000000dead\"" &&
	test_expect_code 1 "$GPUORCH" hosts status --hosts bad.json >bs.out 2>&1; cat bs.out &&
	grep "InvalidInstanceID.NotFound" bs.out &&
	(cd proj && test_expect_code 3 "$GPUORCH" run experiments/q.json --hosts ../bad.json --plain) >br.out 2>&1;
	cat br.out && grep "InvalidInstanceID.NotFound" br.out
'

test_expect_success 'bad launch specs are refused before anything is called (exit 2, where and how to fix)' '
	MOTO_PORT=$(cat moto.port) &&
	hosts_json b1.json "\"instance_id\": \"i-0a1\", $LAUNCH" &&
	test_expect_code 2 "$GPUORCH" hosts status --hosts b1.json 2>b1.err &&
	grep "give either \"instance_id\" (an instance that exists) or \"launch\"" b1.err &&
	hosts_json b2.json "\"instance_id\": \"i-0a1\", \"after_run\": \"terminate\"" &&
	test_expect_code 2 "$GPUORCH" hosts status --hosts b2.json 2>b2.err &&
	grep "\"terminate\" is only for instances gpuorch launches itself" b2.err &&
	hosts_json b3.json "\"launch\": {\"image_id\": \"ami-12c6146b\", \"instance_type\": \"g6.xlarge\", \"market\": \"reserved\"}" &&
	test_expect_code 2 "$GPUORCH" hosts status --hosts b3.json 2>b3.err &&
	grep "hosts\[0\].instance.launch.*market.*is not \"on-demand\" or \"spot\"" b3.err &&
	hosts_json b4.json "\"launch\": {\"image_id\": \"ami-12c6146b\", \"instance_type\": \"g6.xlarge\", \"spot_max_price\": 2}" &&
	test_expect_code 2 "$GPUORCH" hosts status --hosts b4.json 2>b4.err &&
	grep "is only for \"market\": \"spot\"" b4.err &&
	hosts_json b5.json "\"launch\": {\"instance_type\": \"g6.xlarge\"}" &&
	test_expect_code 2 "$GPUORCH" hosts status --hosts b5.json 2>b5.err && grep "image_id" b5.err &&
	test -z "$(live_ids)"
'

test_done
