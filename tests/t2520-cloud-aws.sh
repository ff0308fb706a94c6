#!/bin/sh
# asan: yes
test_description='the native "aws" provider (EC2 Query API, SigV4 by libcurl) against tests/tools/ec2fake, which checks every signature itself with libcrypto'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"
. "$SRCDIR/tests/lib/cloudlib.sh"

EC2FAKE=${EC2FAKE:-$SRCDIR/build/tests/ec2fake}
run_requires_sshd_nvcc 'aws provider tests'
GPUORCH_STATE_DIR=$TRASH/state
export GPUORCH_STATE_DIR
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_SHARED_CREDENTIALS_FILE
KEY=AKIDGPUORCHTEST
SECRET=wJalrXUtnFEMI-K7MDENG-SECRET-9f3a
TOKEN=FQoGZXIvYXdzE-SESSION-TOKEN-77c1

# ec2_start [TOKEN]: a fake EC2 with i-0a1 (stopped); sets $ec2port
ec2_start() {
	rm -rf ec2 && mkdir ec2 &&
	{ "$EC2FAKE" ec2 "$KEY" "$SECRET" "${1:--}" 300 i-0a1=stopped & } &&
	ec2pid=$! && test_at_exit "kill $ec2pid" &&
	wait_for 10 "test -s ec2/port" && ec2port=$(cat ec2/port)
}

# aws_hosts FILE [INSTANCE-ID [EXTRA]]
aws_hosts() {
	cat >"$1" <<EOT
{"hosts": [{"name": "e", "address": "127.0.0.1", "port": $(sshd_var e PORT),
  "identity": "$(sshd_var e IDENTITY)", "known_hosts": "$(sshd_var e KNOWN_HOSTS)",
  "workdir": "$(sshd_var e WORKDIR)", "connect_timeout_s": 15,
  "instance": {"provider": "aws", "instance_id": "${2:-i-0a1}", "region": "us-east-1",
               "endpoint": "http://127.0.0.1:$ec2port/", "price_per_hour": 0.8048,
               "poll_s": 0.2, "retries": 0, "idle_stop_min": 0.5$3}}]}
EOT
}

with_env() {
	AWS_ACCESS_KEY_ID=$KEY AWS_SECRET_ACCESS_KEY=$SECRET "$@"
}

test_expect_success 'setup: the instance sshd, a fake EC2, a project' '
	sshd_start e && ec2_start && aws_hosts hosts.json && project_init &&
	cat >"proj/experiments/q.json" <<-JSON
	{"schema": 1, "name": "q", "phase": "aws test",
	 "sources": ["cpu/cputimer.c"], "targets": {"L4": "sm_89"},
	 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
	 "problems": [{"name": "p", "params": {"work": 1000}}],
	 "steps": [{"kind": "benchmark", "program": "cputimer", "timeout_s": 60}]}
	JSON
'

test_expect_success 'the server verifies SigV4 as AWS does: its published example passes, a changed signature fails' '
	"$EC2FAKE" --selftest >self.out &&
	grep "published vector accepted, changed signature rejected" self.out
'

test_expect_success 'status: a signed DescribeInstances, checked by the server' '
	with_env "$GPUORCH" hosts status --hosts hosts.json >st.out &&
	grep "^e  aws  stopped$" st.out &&
	test "$(cat ec2/log)" = "DescribeInstances i-0a1 sig=ok token=no"
'

test_expect_success 'a wrong secret: the server rejects the signature; exit 3, nothing started, the secret never shown' '
	: >ec2/log &&
	(cd proj && AWS_ACCESS_KEY_ID=$KEY AWS_SECRET_ACCESS_KEY=not-the-secret \
		test_expect_code 3 "$GPUORCH" run experiments/q.json --hosts ../hosts.json) >bad.out 2>bad.err &&
	grep "SignatureDoesNotMatch" bad.err && grep "check AWS_SECRET_ACCESS_KEY" bad.err &&
	grep "sig=bad" ec2/log && ! grep -v "^DescribeInstances" ec2/log &&
	! grep -r "not-the-secret" bad.out bad.err "$TRASH/reports" "$GPUORCH_STATE_DIR" 2>/dev/null
'

test_expect_success 'no credentials at all: a clear error naming the fix' '
	HOME=$TRASH/nohome test_expect_code 3 "$GPUORCH" hosts up --hosts hosts.json 2>nocred.err &&
	grep "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or put profile \[default\]" nocred.err
'

test_expect_success 'a run starts the instance through EC2, uses it, stops it; cost recorded; the secret is nowhere' '
	: >ec2/log &&
	(cd proj && with_env "$GPUORCH" run experiments/q.json --hosts ../hosts.json --plain) >run.out 2>&1 &&
	run=$(last_run_dir) &&
	grep "StartInstances i-0a1 sig=ok" ec2/log && grep "StopInstances i-0a1 sig=ok" ec2/log &&
	! grep "sig=bad" ec2/log &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	test "$(jq_ $run/run.json provenance.instances.e.provider)" = aws &&
	test "$(jq_ $run/run.json provenance.instances.e.started_by_gpuorch)" = true &&
	jq_ $run/run.json provenance.instances.e.stop_confirmed_at | grep "^20" &&
	# EC2 bills at least 60 s: the line and the row say so when the run was
	# shorter, and the cost is made of the figures they show
	obs=$(jq_ $run/run.json provenance.instances.e.observed_s) &&
	test "$(jq_ $run/run.json provenance.instances.e.billing_minimum_s)" = 60 &&
	cost=$(jq_ $run/run.json provenance.instances.e.cost) &&
	awk -v o="$obs" -v c="$cost" "BEGIN { b = o > 60 ? o : 60; e = b / 3600 * 0.8048 - c; exit !(e < 1e-9 && e > -1e-9) }" &&
	if test "$obs" -lt 60; then
		grep "^cost: e [0-9.]* ($obs s observed, billed as the provider.s minimum 60 s x 0.8048/h, stopped)$" run.out
	else
		grep "^cost: e [0-9.]* ($obs s x 0.8048/h, stopped)$" run.out
	fi &&
	grep "^## Cloud instances" $run/report.md &&
	grep "^| e | aws | stopped | yes | stop | $obs s observed (billed at least 60 s) | 0.8048 USD | [0-9.]* USD |  |$" $run/report.md &&
	grep "^\*\*Cost of the instances gpuorch started\*\*: [0-9.]*" $run/report.md &&
	with_env "$GPUORCH" hosts status --hosts hosts.json | grep "^e  aws  stopped$" &&
	! grep -r "$SECRET" run.out "$TRASH/reports" "$GPUORCH_STATE_DIR" 2>/dev/null
'

test_expect_success 'a session token is sent as X-Amz-Security-Token and signed (the server requires it)' '
	kill $ec2pid && ec2_start "$TOKEN" && aws_hosts hosts.json && unset AWS_SESSION_TOKEN &&
	with_env test_expect_code 1 "$GPUORCH" hosts status --hosts hosts.json >notok.out &&
	grep "SignatureDoesNotMatch" notok.out &&
	: >ec2/log &&
	AWS_SESSION_TOKEN=$TOKEN && export AWS_SESSION_TOKEN &&
	with_env "$GPUORCH" hosts status --hosts hosts.json >tok.out &&
	grep "^e  aws  stopped$" tok.out &&
	test "$(cat ec2/log)" = "DescribeInstances i-0a1 sig=ok token=yes"
'

test_expect_success 'credentials from a profile of ~/.aws/credentials' '
	mkdir -p home/.aws &&
	printf "[default]\naws_access_key_id = WRONG\naws_secret_access_key = WRONG\n\n[lab]\naws_access_key_id = %s\naws_secret_access_key = %s\naws_session_token = %s\n" \
		"$KEY" "$SECRET" "$TOKEN" >home/.aws/credentials &&
	aws_hosts prof.json i-0a1 ", \"profile\": \"lab\"" &&
	: >ec2/log &&
	HOME=$TRASH/home "$GPUORCH" hosts status --hosts prof.json >prof.out &&
	grep "^e  aws  stopped$" prof.out &&
	test "$(cat ec2/log)" = "DescribeInstances i-0a1 sig=ok token=yes"
'

test_expect_success 'throttling (RequestLimitExceeded) is retried with backoff' '
	echo 2 >ec2/throttle && : >ec2/log &&
	with_env "$GPUORCH" hosts status --hosts hosts.json >thr.out &&
	grep "^e  aws  stopped$" thr.out &&
	test "$(grep -c DescribeInstances ec2/log)" = 3
'

test_expect_success 'a truncated reply is not XML: retried, and an error when it persists' '
	echo 1 >ec2/truncate && : >ec2/log &&
	with_env "$GPUORCH" hosts status --hosts hosts.json >tr.out &&
	grep "^e  aws  stopped$" tr.out &&
	test "$(grep -c DescribeInstances ec2/log)" = 2 &&
	echo 9 >ec2/truncate &&
	with_env test_expect_code 1 "$GPUORCH" hosts status --hosts hosts.json >tr2.out &&
	grep "that are not XML (a truncated or foreign reply)" tr2.out &&
	echo 0 >ec2/truncate
'

test_expect_success 'an error reply (InternalError) and an unknown instance id are clear errors' '
	echo 9 >ec2/error &&
	with_env test_expect_code 1 "$GPUORCH" hosts status --hosts hosts.json >ie.out &&
	grep "EC2 DescribeInstances failed: HTTP 500 InternalError: An internal error has occurred." ie.out &&
	echo 0 >ec2/error &&
	aws_hosts unk.json i-0dead &&
	with_env test_expect_code 1 "$GPUORCH" hosts status --hosts unk.json >unk.out &&
	grep "HTTP 400 InvalidInstanceID.NotFound: The instance ID .i-0dead. does not exist" unk.out
'

test_done
