#!/bin/sh
# cost: 16
# asan: yes
# waits: yes
test_description='cloud instances, provider "command" and the presets: gpuorch hosts up|down|status against a loopback instance (a real sshd that runs only while a stand-in cloud CLI says RUNNING)'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/cloudlib.sh"

if ! _why=$(sshd_available); then
	test_skip 'cloud command tests' "$_why"
	test_done
fi
GPUORCH_STATE_DIR=$TRASH/state
export GPUORCH_STATE_DIR

test_expect_success 'setup: a stopped instance whose sshd is down' '
	cloud_init box && cloud_hosts hosts.json box "" &&
	! cloud_reachable box
'

test_expect_success 'bad instances exit 2 naming the file and path; no cloud command runs' '
	sed "s/\"provider\": \"command\"/\"provider\": \"comand\"/" hosts.json >bad1.json &&
	test_expect_code 2 "$GPUORCH" hosts up --hosts bad1.json 2>bad1.err &&
	grep "bad1.json: .hosts\[0\].instance.provider.: unknown provider .comand. (did you mean .command.?)" bad1.err &&
	sed "s|\"start\": \[[^]]*\]|\"start\": \"gcloud compute instances start box\"|" hosts.json >bad2.json &&
	test_expect_code 2 "$GPUORCH" hosts up --hosts bad2.json 2>bad2.err &&
	grep "hosts\[0\].instance.start.: expected a non-empty array of strings (an argument vector" bad2.err &&
	sed "s/\"poll_s\"/\"pol_s\"/" hosts.json >bad3.json &&
	test_expect_code 2 "$GPUORCH" hosts up --hosts bad3.json 2>bad3.err &&
	grep "unknown key .pol_s. (did you mean .poll_s.?)" bad3.err &&
	test ! -f "$FAKECLOUD_DIR/calls"
'

test_expect_success 'hosts status: stopped' '
	"$GPUORCH" hosts status --hosts hosts.json >st.out &&
	grep "^box  command  stopped$" st.out
'

test_expect_success 'hosts up: starts it, polls until RUNNING, waits for SSH; status shows the accrued cost' '
	"$GPUORCH" hosts up --hosts hosts.json >up.out 2>up.err &&
	grep "box: starting the instance (command)" up.out &&
	grep "box: up at 127.0.0.1:$(sshd_var box PORT)" up.out &&
	test "$(cat "$FAKECLOUD_DIR/state")" = RUNNING &&
	test "$(grep -c "fakecloud.sh start" "$FAKECLOUD_DIR/calls")" = 1 &&
	grep -c "fakecloud.sh status" "$FAKECLOUD_DIR/calls" >npolls &&
	test "$(cat npolls)" -ge 3 &&
	cloud_reachable box &&
	test -f "$GPUORCH_STATE_DIR/instances/box.json" &&
	"$GPUORCH" hosts status --hosts hosts.json >st2.out &&
	grep "^box  command  running  started by gpuorch at .* accrued [0-9.]* ([0-9.]* h x 3.6/h)" st2.out
'

test_expect_success 'hosts down: stops it and waits until stopped; the cost of the time it ran' '
	"$GPUORCH" hosts down --hosts hosts.json >down.out 2>down.err &&
	grep "box: stopping the instance" down.out &&
	grep "box: stopped; billed [0-9]* s, cost [0-9.]*" down.out &&
	test "$(cat "$FAKECLOUD_DIR/state")" = TERMINATED &&
	! cloud_reachable box &&
	test ! -f "$GPUORCH_STATE_DIR/instances/box.json"
'

test_expect_success 'hosts up|status|down --json: one document each, the text on stderr, the same values' '
	"$GPUORCH" hosts status --hosts hosts.json --json >sj0.out 2>sj0.err &&
	"$SRCDIR/scripts/check-json.sh" cli-hosts.schema.json sj0.out &&
	test "$(jq -r .hosts[0].state sj0.out)" = stopped &&
	grep "^box  command  stopped$" sj0.err &&
	"$GPUORCH" hosts up --hosts hosts.json --json >uj.out 2>uj.err &&
	"$SRCDIR/scripts/check-json.sh" cli-hosts.schema.json uj.out &&
	cat uj.out &&
	test "$(jq -r .verb uj.out)" = up && test "$(jq -r .exit_code uj.out)" = 0 &&
	test "$(jq -r .hosts[0].status uj.out)" = ok &&
	test "$(jq -r .hosts[0].port uj.out)" = "$(sshd_var box PORT)" &&
	grep "^box: up at $(jq -r .hosts[0].address uj.out):$(jq -r .hosts[0].port uj.out)" uj.err &&
	"$GPUORCH" hosts status --hosts hosts.json --json >sj.out 2>sj.err &&
	"$SRCDIR/scripts/check-json.sh" cli-hosts.schema.json sj.out &&
	test "$(jq -r .hosts[0].state sj.out)" = running &&
	test "$(jq -r .hosts[0].started_by_gpuorch.price_per_hour sj.out)" = 3.6 &&
	grep "^box  command  running  started by gpuorch at $(jq -r .hosts[0].started_by_gpuorch.at sj.out)  accrued" sj.err &&
	"$GPUORCH" hosts down --hosts hosts.json --json >dj.out 2>dj.err &&
	"$SRCDIR/scripts/check-json.sh" cli-hosts.schema.json dj.out &&
	test "$(jq -r .hosts[0].ended dj.out)" = stopped &&
	grep "^box: stopped; billed $(jq -r ".hosts[0].billed_s | round" dj.out) s, cost" dj.err
'

test_expect_success 'hosts up --json: a failed start is in the document; a bad inventory prints nothing' '
	: >"$FAKECLOUD_DIR/fail_start" &&
	test_when_finished "rm -f \"$FAKECLOUD_DIR/fail_start\"" &&
	test_expect_code 3 "$GPUORCH" hosts up --hosts hosts.json --json >fj.out 2>fj.err &&
	"$SRCDIR/scripts/check-json.sh" cli-hosts.schema.json fj.out &&
	test "$(jq -r .exit_code fj.out)" = 3 && test "$(jq -r .hosts[0].status fj.out)" = failed &&
	jq -r .hosts[0].error fj.out | grep "Quota .NVIDIA_L4_GPUS. exceeded" &&
	grep "^error: $(jq -r .hosts[0].error fj.out | head -n 1 | cut -c1-40)" fj.err &&
	sed "s/\"poll_s\"/\"pol_s\"/" hosts.json >badj.json &&
	test_expect_code 2 "$GPUORCH" hosts status --hosts badj.json --json >bj.out 2>bj.err &&
	test ! -s bj.out && grep "unknown key .pol_s." bj.err
'

test_expect_success 'a start that fails: a clear error quoting the cloud, exit 3' '
	: >"$FAKECLOUD_DIR/fail_start" &&
	test_when_finished "rm -f \"$FAKECLOUD_DIR/fail_start\"" &&
	test_expect_code 3 "$GPUORCH" hosts up --hosts hosts.json >fs.out 2>fs.err &&
	grep "error: box: .*fakecloud.sh start. (start) failed with exit 1 after 1 try: ERROR: (gcloud.compute.instances.start) Quota .NVIDIA_L4_GPUS. exceeded" fs.err
'

test_expect_success 'retries: a failing command is tried 1 + retries times' '
	: >"$FAKECLOUD_DIR/fail_start" &&
	test_when_finished "rm -f \"$FAKECLOUD_DIR/fail_start\"" &&
	sed "s/\"retries\": 0/\"retries\": 2/" hosts.json >retry.json &&
	: >"$FAKECLOUD_DIR/calls" &&
	test_expect_code 3 "$GPUORCH" hosts up --hosts retry.json 2>retry.err &&
	grep "failed with exit 1 after 3 tries" retry.err &&
	test "$(grep -c "fakecloud.sh start" "$FAKECLOUD_DIR/calls")" = 3
'

test_expect_success 'a CLI that hangs is killed at timeout_s, with its children' '
	: >"$FAKECLOUD_DIR/hang_status" &&
	test_when_finished "rm -f \"$FAKECLOUD_DIR/hang_status\"" &&
	sed "s/\"timeout_s\": 20/\"timeout_s\": 2/" hosts.json >hang.json &&
	t0=$(test_now_ms) &&
	test_expect_code 3 "$GPUORCH" hosts up --hosts hang.json 2>hang.err &&
	echo "took $(( $(test_now_ms) - t0 )) ms (not judged: the message says killed at 2 s)" &&
	grep "did not finish within 2 s and was killed; raise the instance.s \"timeout_s\"" hang.err &&
	wait_for 30 "! pgrep -f \"$FAKECLOUD_DIR/hang-sleep\" >/dev/null"
'

test_expect_success 'a status the provider cannot read is an error naming the text' '
	: >"$FAKECLOUD_DIR/garbage_status" &&
	test_when_finished "rm -f \"$FAKECLOUD_DIR/garbage_status\"" &&
	test_expect_code 3 "$GPUORCH" hosts up --hosts hosts.json 2>garb.err &&
	grep "printed .Listed 0 items\... not a state gpuorch knows; make it print one of: RUNNING" garb.err
'

test_expect_success 'expired credentials are caught by the check before anything starts (invalid_rapt named)' '
	: >"$FAKECLOUD_DIR/expired" &&
	test_when_finished "rm -f \"$FAKECLOUD_DIR/expired\"" &&
	: >"$FAKECLOUD_DIR/calls" &&
	test_expect_code 3 "$GPUORCH" hosts up --hosts hosts.json 2>exp.err &&
	grep "Google Workspace session control" exp.err &&
	grep "gcloud auth login" exp.err &&
	grep "service account" exp.err &&
	! grep -v "fakecloud.sh check" "$FAKECLOUD_DIR/calls" &&
	test "$(cat "$FAKECLOUD_DIR/state")" = TERMINATED
'

test_expect_success 'running but SSH never answers: a bounded wait and a clear error' '
	mv "$FAKECLOUD_DIR/sshd_config" "$FAKECLOUD_DIR/sshd_config.off" &&
	test_when_finished "mv \"$FAKECLOUD_DIR/sshd_config.off\" \"$FAKECLOUD_DIR/sshd_config\"" &&
	sed "s/\"ssh_timeout_s\": 60/\"ssh_timeout_s\": 3/" hosts.json >nossh.json &&
	: "bounded: it gives up after its 3 s and says so (no wall-clock check: CI machines are loaded)" &&
	test_expect_code 3 "$GPUORCH" hosts up --hosts nossh.json 2>nossh.err &&
	grep "box: the instance is running but SSH did not answer within 3 s (\"ssh_timeout_s\"); last error:" nossh.err &&
	"$GPUORCH" hosts down --hosts hosts.json >/dev/null &&
	test "$(cat "$FAKECLOUD_DIR/state")" = TERMINATED
'

test_expect_success 'a stop that fails is reported: the instance may still be billing' '
	"$GPUORCH" hosts up --hosts hosts.json >/dev/null &&
	: >"$FAKECLOUD_DIR/fail_stop" &&
	test_expect_code 3 "$GPUORCH" hosts down --hosts hosts.json 2>fstop.err &&
	grep "Internal error, try again later; the instance may still be billing" fstop.err &&
	rm -f "$FAKECLOUD_DIR/fail_stop" &&
	"$GPUORCH" hosts down --hosts hosts.json >/dev/null &&
	test "$(cat "$FAKECLOUD_DIR/state")" = TERMINATED
'

test_expect_success 'preset gcloud: the gcloud argument vectors (a stand-in gcloud on PATH)' '
	cloud_bin &&
	cat >gc.json <<-EOT &&
	{"hosts": [{"name": "box", "address": "127.0.0.1", "port": $(sshd_var box PORT),
	  "identity": "$(sshd_var box IDENTITY)", "known_hosts": "$(sshd_var box KNOWN_HOSTS)",
	  "workdir": "$(sshd_var box WORKDIR)", "connect_timeout_s": 15,
	  "instance": {"provider": "gcloud", "instance": "l4-box", "zone": "us-central1-a",
	               "project": "proj-1", "poll_s": 0.2, "retries": 0, "price_per_hour": 0.85}}]}
	EOT
	: >"$FAKECLOUD_DIR/calls" &&
	PATH="$TRASH/bin:$PATH" "$GPUORCH" hosts up --hosts gc.json >gc.out &&
	grep "^gcloud auth print-access-token --quiet$" "$FAKECLOUD_DIR/calls" &&
	grep "^gcloud compute instances describe l4-box --zone=us-central1-a --project=proj-1 --format=value(status) --quiet$" "$FAKECLOUD_DIR/calls" &&
	grep "^gcloud compute instances start l4-box --zone=us-central1-a --project=proj-1 --quiet$" "$FAKECLOUD_DIR/calls" &&
	grep "^gcloud compute instances describe l4-box --zone=us-central1-a --project=proj-1 --format=value(networkInterfaces\[0\].accessConfigs\[0\].natIP) --quiet$" "$FAKECLOUD_DIR/calls" &&
	cloud_reachable box &&
	PATH="$TRASH/bin:$PATH" "$GPUORCH" hosts down --hosts gc.json >gcd.out &&
	grep "^gcloud compute instances stop l4-box --zone=us-central1-a --project=proj-1 --quiet$" "$FAKECLOUD_DIR/calls" &&
	! cloud_reachable box
'

test_expect_success 'preset aws-cli: the aws argument vectors, lowercase EC2 states' '
	sed -e "s/\"provider\": \"gcloud\", \"instance\": \"l4-box\", \"zone\": \"us-central1-a\",/\"provider\": \"aws-cli\", \"instance_id\": \"i-0abc\", \"region\": \"us-east-1\",/" \
		-e "s/\"project\": \"proj-1\"/\"profile\": \"lab\"/" gc.json >aws.json &&
	: >"$FAKECLOUD_DIR/calls" &&
	PATH="$TRASH/bin:$PATH" "$GPUORCH" hosts up --hosts aws.json >aws.out &&
	grep "^aws sts get-caller-identity --region=us-east-1 --profile=lab --output=text$" "$FAKECLOUD_DIR/calls" &&
	grep "^aws ec2 start-instances --instance-ids i-0abc --region=us-east-1 --profile=lab --output=text$" "$FAKECLOUD_DIR/calls" &&
	grep "^aws ec2 describe-instances --instance-ids i-0abc --query Reservations\[0\].Instances\[0\].State.Name --region=us-east-1 --profile=lab --output=text$" "$FAKECLOUD_DIR/calls" &&
	PATH="$TRASH/bin:$PATH" "$GPUORCH" hosts down --hosts aws.json >/dev/null &&
	grep "^aws ec2 stop-instances --instance-ids i-0abc" "$FAKECLOUD_DIR/calls" &&
	! cloud_reachable box
'

test_done
