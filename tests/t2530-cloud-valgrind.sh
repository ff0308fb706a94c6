#!/bin/sh
# cost: 27
test_description='the cloud paths under valgrind: a run that starts, guards and stops an instance, hosts up|down|status, the aws provider; nothing leaks'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"
. "$SRCDIR/tests/lib/cloudlib.sh"

if [ "${GPUORCH_NO_VALGRIND:-0}" = 1 ] || ! command -v valgrind >/dev/null 2>&1; then
	test_skip 'cloud valgrind runs' 'valgrind is not installed (or GPUORCH_NO_VALGRIND=1)'
	test_done
fi
run_requires_sshd_nvcc 'cloud valgrind runs'
GPUORCH_STATE_DIR=$TRASH/state
export GPUORCH_STATE_DIR
VG="valgrind -q --suppressions=$SRCDIR/tests/lib/libssh2-handshake.supp --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect --error-exitcode=99 $SRCDIR/build/gpuorch"

test_expect_success 'setup' '
	cloud_init v && project_init &&
	cloud_hosts hosts.json v ", \"idle_stop_min\": 1, \"guard_action\": \"echo fired >>$TRASH/fired\""
'

test_expect_success 'a run with an instance under valgrind (start, guard, heartbeat thread, stop)' '
	(cd proj && $VG run experiments/basic.json --hosts ../hosts.json --plain) >run.out 2>&1 ||
		{ tail -40 run.out; return 1; } &&
	test "$(jq_ $(last_run_dir)/run.json outcome)" = passed &&
	test "$(cat "$FAKECLOUD_DIR/state")" = TERMINATED
'

test_expect_success 'hosts up, status, down and a bad instance under valgrind' '
	$VG hosts up --hosts hosts.json >up.out 2>&1 || { cat up.out; return 1; } &&
	$VG hosts status --hosts hosts.json >st.out 2>&1 || { cat st.out; return 1; } &&
	$VG hosts down --hosts hosts.json >down.out 2>&1 || { cat down.out; return 1; } &&
	sed "s/\"poll_s\"/\"pol_s\"/" hosts.json >bad.json &&
	{ $VG hosts up --hosts bad.json >bad.out 2>&1; test $? = 2; } || { cat bad.out; return 1; }
'

test_expect_success 'the aws provider under valgrind (libcurl, libxml2, a refused signature)' '
	mkdir ec2 && { "$SRCDIR/build/tests/ec2fake" ec2 AKIDV SECRETV - 120 i-0v=stopped & } &&
	test_at_exit "kill $!" && wait_for 10 "test -s ec2/port" &&
	printf "{\"hosts\": [{\"name\": \"a\", \"address\": \"127.0.0.1\", \"identity\": \"agent\", \"instance\": {\"provider\": \"aws\", \"instance_id\": \"i-0v\", \"region\": \"us-east-1\", \"endpoint\": \"http://127.0.0.1:%s/\", \"retries\": 0}}]}\n" "$(cat ec2/port)" >aws.json &&
	AWS_ACCESS_KEY_ID=AKIDV AWS_SECRET_ACCESS_KEY=SECRETV $VG hosts status --hosts aws.json >a1.out 2>&1 ||
		{ cat a1.out; return 1; } &&
	grep "^a  aws  stopped" a1.out &&
	{ AWS_ACCESS_KEY_ID=AKIDV AWS_SECRET_ACCESS_KEY=wrong $VG hosts status --hosts aws.json >a2.out 2>&1; test $? = 1; } ||
		{ cat a2.out; return 1; }
'

test_done
