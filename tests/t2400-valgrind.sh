#!/bin/sh
# cost: 32
test_description='gpuorch itself under valgrind: a whole run, hosts check, runs and report leak nothing'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

if [ "${GPUORCH_NO_VALGRIND:-0}" = 1 ] || ! command -v valgrind >/dev/null 2>&1; then
	test_skip 'valgrind runs' 'valgrind is not installed (or GPUORCH_NO_VALGRIND=1)'
	test_done
fi
run_requires_sshd_nvcc 'valgrind runs'

# The plain build (valgrind and ASan do not mix).
VG="valgrind -q --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect --error-exitcode=99 $SRCDIR/build/gpuorch"

test_expect_success 'setup' '
	sshd_start v && sshd_write_hosts_json hosts.json v && project_init
'

test_expect_success 'hosts check under valgrind' '
	$VG hosts check --hosts hosts.json >check.out 2>&1 || { cat check.out; return 1; }
'

test_expect_success 'a whole run under valgrind (threads, libssh2, SFTP, builds, steps)' '
	(cd proj && $VG run experiments/basic.json --hosts ../hosts.json --plain) >run.out 2>&1 ||
		{ tail -40 run.out; return 1; } &&
	test "$(jq_ $(last_run_dir)/run.json outcome)" = passed
'

test_expect_success 'a re-run, runs and report under valgrind' '
	(cd proj && $VG run experiments/basic.json --hosts ../hosts.json --plain) >run2.out 2>&1 ||
		{ tail -40 run2.out; return 1; } &&
	$VG runs >runs.out 2>&1 &&
	$VG report $(basename $(last_run_dir)) >rep.out 2>&1
'

test_expect_success 'a re-run with --notify under valgrind (libcurl POST to a loopback sink)' '
	rm -f port.txt req.txt &&
	{ "$SRCDIR/build/tests/httpsink" port.txt req.txt 200 & } &&
	wait_for 10 "test -s port.txt" &&
	(cd proj && $VG run experiments/basic.json --hosts ../hosts.json --plain \
		--notify "http://127.0.0.1:$(cat ../port.txt)/hook") >run3.out 2>&1 ||
		{ tail -40 run3.out; return 1; } &&
	grep "(HTTP 200)" run3.out && grep "^POST /hook" req.txt
'

test_expect_success 'a spec error under valgrind exits 2 without leaking' '
	echo "{\"schema\": 1, \"name\": \"x\"" >proj/bad.json &&
	(cd proj && test_expect_code 2 $VG run bad.json --hosts ../hosts.json) >bad.out 2>&1 &&
	grep "bad.json" bad.out
'

test_done
