#!/bin/sh
# cost: 30
# waits: yes
test_description='the "aws" provider against moto behind a fault-injecting proxy (a reply dropped, 503, ExpiredToken on the Nth call of an action): no instance left running that the ledger does not know, none without a lifetime cap'
# moto_server answers EC2 on 127.0.0.1; tests/lib/ec2proxy.py sits in front
# of it and, per $TRASH/rules, drops the reply of the Nth call of an action
# (moto acted on it), answers 503, or ExpiredToken. After each test
# no_stray_instances asks moto itself (not through the proxy): every
# instance that is not terminated is in gpuorch's ledger and has the
# provider-side stop (shutdown behaviour "terminate", user data
# "shutdown -h +N"). Each host reaches the suite's loopback sshd
# ("reach": "host"), as in t2525.
# On 70a5877 (before issue 31's fixes) each case failed (run there before
# the lost-reply-and-503 and lifetime-from-launch cases were added):
# two RunInstances and an orphan; no tagged listing; hosts up left the
# instance running, printed no id until the end and said nothing with keep;
# a 503 forgot the kept instance and launched a second; the guard was
# disarmed before the ExpiredToken stop; the resumed record lacked the
# first instance.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'EC2 fault tests'
if ! command -v moto_server >/dev/null 2>&1; then
	test_skip 'EC2 fault tests' 'moto_server is not installed (Python moto)'
	test_done
fi
GPUORCH_STATE_DIR=$TRASH/state
export GPUORCH_STATE_DIR
AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing-secret-9c1e
export AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_SHARED_CREDENTIALS_FILE

# ec2 ACTION [K=V...]: moto's own answer (XML), not through the proxy
ec2() {
	_a=$1
	shift
	_q="Action=$_a&Version=2016-11-15"
	for _kv in "$@"; do _q="$_q&$_kv"; done
	curl -s -X POST "http://127.0.0.1:$(cat "$TRASH/moto.port")/" -d "$_q" \
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
# ids_of_run RUN: every instance moto has tagged gpuorch:run=RUN, any state
ids_of_run() {
	ec2 DescribeInstances Filter.1.Name=tag:gpuorch:run Filter.1.Value.1=$1 |
		grep -o "<instanceId>i-[0-9a-f]*</instanceId>" | sed "s/<[^>]*>//g" | sort -u
}
# no_stray_instances: every instance not terminated is known to the ledger
# and carries its lifetime cap from launch
no_stray_instances() {
	for _id in $(live_ids); do
		_tok=$(ec2 DescribeInstances InstanceId.1=$_id | tr -d "\n" |
			sed -n "s/.*<key>gpuorch:launch<\/key><value>\([^<]*\)<.*/\1/p")
		grep -l "\"$_id\"" "$GPUORCH_STATE_DIR"/instances/*.json >/dev/null 2>&1 ||
		{ [ -n "$_tok" ] && grep -l "\"launch_token\":[[:space:]]*\"$_tok\"" "$GPUORCH_STATE_DIR"/instances/*.json >/dev/null 2>&1; } ||
			{ echo "instance $_id runs and no ledger entry knows it (by id or launch token)"; return 1; }
		ec2 DescribeInstanceAttribute InstanceId=$_id Attribute=instanceInitiatedShutdownBehavior |
			grep -q "<value>terminate</value>" ||
			{ echo "instance $_id: shutdown does not terminate it"; return 1; }
		ec2 DescribeInstanceAttribute InstanceId=$_id Attribute=userData | tr -d "\n" |
			sed -n "s/.*<userData><value>\([^<]*\)<.*/\1/p" | base64 -d | grep -q "^shutdown -h +[0-9]" ||
			{ echo "instance $_id: no provider-side lifetime cap in its user data"; return 1; }
	done
	return 0
}
# faults 'ACTION N FAULT' ...: the proxy's rules from now on (counts restart)
# shellcheck disable=SC2120 # called with rules from test bodies, strings shellcheck does not parse
faults() {
	printf "%s\n" "$@" >"$TRASH/rules.tmp" && mv "$TRASH/rules.tmp" "$TRASH/rules"
}
calls_of() {
	grep -c "^$1 " "$TRASH/proxy.log"
}
guard_pid() {
	_w=$(sshd_var e WORKDIR)
	[ -s "$_w/guard/pid" ] && [ -f "$_w/guard/heartbeat" ] && kill -0 "$(cat "$_w/guard/pid")" 2>/dev/null &&
		cat "$_w/guard/pid"
	return 0
}
end_guard() {
	_w=$(sshd_var e WORKDIR)
	rm -f "$_w/guard/heartbeat"
	_g=$(cat "$_w/guard/pid" 2>/dev/null) && [ -n "$_g" ] && kill "$_g" 2>/dev/null
	rm -f "$_w/guard/pid"
	return 0
}

# fresh: each test starts from nothing running (so that one failing leaves
# nothing for the next to trip on): no instance, no ledger entry, no guard,
# no faults
fresh() {
	for _id in $(live_ids); do ec2 TerminateInstances InstanceId.1=$_id >/dev/null; done
	rm -f "$GPUORCH_STATE_DIR"/instances/*.json
	end_guard
	faults
	: >"$TRASH/proxy.log"
}

# hosts_json FILE INSTANCE-FIELDS [PORT]: the host reached as the loopback sshd
hosts_json() {
	cat >"$1" <<EOT
{"hosts": [{"name": "e", "address": "127.0.0.1", "port": ${3:-$(sshd_var e PORT)},
  "identity": "$(sshd_var e IDENTITY)", "known_hosts": "$(sshd_var e KNOWN_HOSTS)",
  "workdir": "$(sshd_var e WORKDIR)", "connect_timeout_s": 5,
  "instance": {"provider": "aws", "region": "us-east-1", "endpoint": "http://127.0.0.1:$(cat "$TRASH/proxy.port")/",
               "reach": "host", "price_per_hour": 0.8048, "poll_s": 0.2, "retries": 0,
               "guard_action": "echo fired >>$TRASH/guard-fired",
               "launch": {"image_id": "ami-12c6146b", "instance_type": "g6.xlarge"}$2}}]}
EOT
}

test_expect_success 'setup: the instance sshd, moto EC2 and the proxy in front of it, a project' '
	sshd_start e && project_init &&
	port=$(python3 -c "import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])") &&
	echo $port >moto.port &&
	{ moto_server -H 127.0.0.1 -p $port >moto.log 2>&1 & } && mpid=$! &&
	test_at_exit "kill $mpid" &&
	wait_for 120 "ec2 DescribeImages | grep -q ami-12c6146b" &&
	: >rules && : >proxy.log &&
	{ python3 "$SRCDIR/tests/lib/ec2proxy.py" "$TRASH/proxy.port" "http://127.0.0.1:$port/" \
		"$TRASH/rules" "$TRASH/proxy.log" 2>proxy.err & } && ppid=$! &&
	test_at_exit "kill $ppid" &&
	wait_for 30 "test -s proxy.port" &&
	test_at_exit end_guard &&
	cat >"proj/experiments/q.json" <<-JSON &&
	{"schema": 1, "name": "q", "phase": "fault test",
	 "sources": ["cpu/cputimer.c"], "targets": {"L4": "sm_89"},
	 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
	 "problems": [{"name": "p", "params": {"work": 1000}}],
	 "steps": [{"kind": "benchmark", "program": "cputimer", "timeout_s": 60}]}
	JSON
	cat >"proj/experiments/slow.json" <<-JSON &&
	{"schema": 1, "name": "slow", "phase": "fault test",
	 "sources": ["cpu/cputimer.c"], "targets": {"L4": "sm_89"},
	 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
	 "problems": [{"name": "p", "params": {"work": 1000, "sleep": 6}}],
	 "steps": [{"kind": "benchmark", "program": "cputimer", "timeout_s": 60}]}
	JSON
	(cd proj && git add -A && git commit -qm q)
'

test_expect_success 'the reply to RunInstances is lost (moto launched it): the instance is found by its tag, used and terminated; no second one' '
	fresh &&
	hosts_json lost.json "" && faults "RunInstances 1 drop" &&
	(cd proj && "$GPUORCH" run experiments/q.json --hosts ../lost.json --plain) >lost.out 2>&1 ||
		{ cat lost.out; false; } &&
	cat lost.out && run=$(last_run_dir) && rid=$(basename $run) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	id=$(jq_ $run/run.json hosts.0.instance.instance_id) &&
	: "one RunInstances, its reply dropped; the instance taken by its gpuorch:launch tag" &&
	test "$(calls_of RunInstances)" = 1 &&
	grep "^RunInstances 1 drop .*ClientToken=gpuorch-[0-9a-f]\{40\}" proxy.log &&
	grep "^DescribeInstances .*Filter.1.Name=tag%3Agpuorch%3Alaunch" proxy.log &&
	test "$(ids_of_run $rid)" = "$id" &&
	ec2 DescribeInstances InstanceId.1=$id | tr -d "\n" | grep "<key>gpuorch:host</key><value>e</value>" &&
	test "$(state_of $id)" = terminated &&
	test -z "$(live_ids)" && no_stray_instances
'

test_expect_success 'the reply to RunInstances is lost and EC2 cannot be asked either: the ledger keeps the token; hosts status shows it, the next run takes the instance up' '
	fresh &&
	hosts_json lost2.json "" && faults "RunInstances 1 drop" "DescribeInstances 2+ 503" &&
	(cd proj && test_expect_code 1 "$GPUORCH" run experiments/q.json --hosts ../lost2.json --plain) >l1.out 2>&1;
	cat l1.out && grep "MAY STILL BE BILLING" l1.out &&
	grep "it may have launched an instance all the same (tagged gpuorch:launch=gpuorch-[0-9a-f]*)" l1.out &&
	test "$(calls_of RunInstances)" = 1 &&
	id=$(live_ids) && test -n "$id" && no_stray_instances &&
	faults && "$GPUORCH" hosts status --hosts lost2.json >l.st 2>&1; cat l.st &&
	grep "^e  aws  a launch whose answer never came (token gpuorch-" l.st &&
	grep "^  $id  running  host e  run .*  in the ledger (host e)" l.st &&
	: >proxy.log &&
	(cd proj && "$GPUORCH" run experiments/q.json --hosts ../lost2.json --plain) >l2.out 2>&1 ||
		{ cat l2.out; false; } &&
	cat l2.out && grep "e: found $id, launched before (token gpuorch-[0-9a-f]*) without its answer" l2.out &&
	test "$(calls_of RunInstances)" = 0 &&
	test "$(jq_ $(last_run_dir)/run.json hosts.0.instance.instance_id)" = "$id" &&
	test "$(state_of $id)" = terminated && test -z "$(live_ids)" && no_stray_instances
'

test_expect_success 'hosts status lists an instance carrying gpuorch tags that no ledger knows' '
	fresh && hosts_json st.json "" &&
	stray=$(ec2 RunInstances ImageId=ami-12c6146b MinCount=1 MaxCount=1 \
		TagSpecification.1.ResourceType=instance TagSpecification.1.Tag.1.Key=gpuorch:host \
		TagSpecification.1.Tag.1.Value=e TagSpecification.1.Tag.2.Key=gpuorch:run \
		TagSpecification.1.Tag.2.Value=elsewhere |
		grep -o "<instanceId>i-[0-9a-f]*" | head -n 1 | sed "s/<instanceId>//") &&
	"$GPUORCH" hosts status --hosts st.json >st.out 2>&1; cat st.out &&
	grep "^  $stray  running  host e  run elsewhere  NOT IN THE LEDGER" st.out &&
	! no_stray_instances &&
	ec2 TerminateInstances InstanceId.1=$stray >/dev/null && no_stray_instances
'

test_expect_success 'hosts up where SSH never answers: the id is shown at once, exit 3, and the instance is terminated again' '
	fresh && closed=$(python3 -c "import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])") &&
	hosts_json nossh.json ", \"ssh_timeout_s\": 2, \"max_lifetime_min\": 1" $closed &&
	test_expect_code 3 "$GPUORCH" hosts up --hosts nossh.json >up.out 2>up.err; cat up.out up.err &&
	id=$(sed -n "s/^e: launched \(i-[0-9a-f]*\)$/\1/p" up.out) && test -n "$id" &&
	grep "SSH did not answer" up.err && grep "$id terminated again" up.err &&
	test "$(state_of $id)" = terminated && test -z "$(live_ids)" && no_stray_instances
'

test_expect_success 'hosts up: the lifetime cap of the guard counts from the launch, not from the first SSH login' '
	fresh && hosts_json cap.json ", \"max_lifetime_min\": 0.5" &&
	"$GPUORCH" hosts up --hosts cap.json >cap.out 2>&1 || { cat cap.out; false; } &&
	cat cap.out && grep "e: guard armed: stops the instance at its max lifetime (0.5 min from its start)" cap.out &&
	start=$(sed -n "s/.*\"start_requested_epoch\":[[:space:]]*\([0-9]*\).*/\1/p" "$GPUORCH_STATE_DIR/instances/e.json") &&
	deadline=$(cat "$(sshd_var e WORKDIR)/guard/deadline") && echo "launch $start, deadline $deadline" &&
	test "$deadline" -ge $((start + 29)) && test "$deadline" -le $((start + 31)) &&
	"$GPUORCH" hosts down --hosts cap.json && end_guard && test -z "$(live_ids)"
'

test_expect_success 'hosts up with after_run "keep" where SSH never answers: left running, said loudly, with its lifetime cap in place' '
	fresh && closed=$(python3 -c "import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])") &&
	hosts_json keep.json ", \"ssh_timeout_s\": 2, \"max_lifetime_min\": 1, \"after_run\": \"keep\"" $closed &&
	test_expect_code 3 "$GPUORCH" hosts up --hosts keep.json >kup.out 2>kup.err; cat kup.out kup.err &&
	id=$(sed -n "s/^e: launched \(i-[0-9a-f]*\)$/\1/p" kup.out) && test -n "$id" &&
	grep "WARNING: e: instance $id is RUNNING and billing" kup.err &&
	grep "gpuorch hosts down --hosts keep.json --host e" kup.err &&
	test "$(state_of $id)" = running && no_stray_instances &&
	ec2 DescribeInstanceAttribute InstanceId=$id Attribute=userData | tr -d "\n" |
		sed -n "s/.*<userData><value>\([^<]*\)<.*/\1/p" | base64 -d | grep "^shutdown -h +1$" &&
	"$GPUORCH" hosts down --hosts keep.json && test "$(state_of $id)" = terminated
'

test_expect_success 'Ctrl-C while hosts up waits for SSH: exit 130, the id was shown, the instance is terminated' '
	fresh && closed=$(python3 -c "import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])") &&
	hosts_json int.json ", \"ssh_timeout_s\": 120" $closed &&
	{ "$GPUORCH" hosts up --hosts int.json >int.out 2>int.err & } && pid=$! &&
	wait_for 60 "grep -q \"^e: launched i-\" int.out" &&
	kill -INT $pid && { wait $pid; echo $? >int.rc; } && cat int.out int.err &&
	test "$(cat int.rc)" = 130 &&
	id=$(sed -n "s/^e: launched \(i-[0-9a-f]*\)$/\1/p" int.out) && test -n "$id" &&
	test "$(state_of $id)" = terminated && test -z "$(live_ids)" && no_stray_instances
'

test_expect_success 'DescribeInstances answers 503 for a kept instance: nothing is forgotten, nothing launched, the run fails' '
	fresh && hosts_json kept.json ", \"after_run\": \"keep\"" &&
	(cd proj && "$GPUORCH" run experiments/q.json --hosts ../kept.json --plain) >k1.out 2>&1 ||
		{ cat k1.out; false; } &&
	id=$(jq_ $(last_run_dir)/run.json hosts.0.instance.instance_id) && test "$(live_ids)" = "$id" &&
	: "call 1 is the credential check; every status call after it answers 503" &&
	faults "DescribeInstances 2+ 503" && : >proxy.log &&
	(cd proj && test_expect_code 3 "$GPUORCH" run experiments/q.json --hosts ../kept.json --plain) >k2.out 2>&1;
	cat k2.out &&
	grep "cannot tell whether instance $id (launched by gpuorch before) is still there" k2.out &&
	! grep "launched before is gone" k2.out &&
	test "$(calls_of RunInstances)" = 0 &&
	test "$(live_ids)" = "$id" && no_stray_instances &&
	faults && "$GPUORCH" hosts down --hosts kept.json && test -z "$(live_ids)" && end_guard
'

test_expect_success 'TerminateInstances answers ExpiredToken: the run says it may still be billing, and the guard stays armed' '
	fresh &&
	faults "TerminateInstances 1+ expired" && hosts_json exp.json ", \"idle_stop_min\": 30" &&
	(cd proj && test_expect_code 1 "$GPUORCH" run experiments/q.json --hosts ../exp.json --plain) >x.out 2>&1;
	cat x.out && run=$(last_run_dir) &&
	grep "MAY STILL BE BILLING" x.out && grep "ExpiredToken" x.out &&
	id=$(jq_ $run/run.json hosts.0.instance.instance_id) &&
	test "$(jq_ $run/run.json hosts.0.instance.stop_failed)" = true &&
	test "$(state_of $id)" = running &&
	test -n "$(guard_pid)" && no_stray_instances &&
	faults && "$GPUORCH" hosts down --hosts exp.json && test "$(state_of $id)" = terminated &&
	end_guard && test -z "$(live_ids)"
'

test_expect_success 'the controller killed, the instance ended meanwhile, --resume: the record has both instances and both costs' '
	fresh && hosts_json res.json "" &&
	( cd proj && exec "$GPUORCH" run experiments/slow.json --hosts ../res.json --plain >../r1.out 2>&1 ) &
	pid=$! &&
	wait_for 60 "grep -q \"^run [0-9a-f-]*: \" r1.out" &&
	rid=$(sed -n "s/^run \([0-9a-f-]*\): .*/\1/p" r1.out | head -n 1) &&
	wait_for 90 "ls $(sshd_var e WORKDIR)/runs/$rid/*/pgid >/dev/null 2>&1" &&
	kill -KILL $pid && { wait $pid || :; } &&
	first=$(live_ids) && test -n "$first" &&
	: "the guard (or its lifetime cap) ends it while no controller runs" &&
	end_guard && ec2 TerminateInstances InstanceId.1=$first >/dev/null &&
	sleep 2 &&
	(cd proj && "$GPUORCH" run experiments/slow.json --hosts ../res.json --plain --resume $rid) >r2.out 2>&1 ||
		{ cat r2.out; false; } &&
	cat r2.out && run=$(last_run_dir) &&
	second=$(jq_ $run/run.json hosts.0.instance.instance_id) && test "$second" != "$first" &&
	test "$(jq_ $run/run.json hosts.0.instance.earlier_instances.0.instance_id)" = "$first" &&
	test "$(jq_ $run/run.json provenance.instances.e.earlier_instances.0.end)" = seen &&
	b1=$(jq_ $run/run.json hosts.0.instance.earlier_instances.0.billed_s) && test "$b1" -ge 2 &&
	c1=$(jq_ $run/run.json hosts.0.instance.earlier_instances.0.cost) &&
	c2=$(jq_ $run/run.json hosts.0.instance.cost) &&
	total=$(jq_ $run/run.json provenance.instances_cost_total) &&
	awk -v a="$c1" -v b="$c2" -v t="$total" "BEGIN { e = a + b - t; exit !(a > 0 && e < 1e-9 && e > -1e-9) }" &&
	grep "e: this run used instance $first before" r2.out &&
	grep "$first" $run/report.md &&
	test -z "$(live_ids)" && no_stray_instances
'

test_done
