#!/bin/sh
# cost: 18
# asan: yes
test_description='gpuorch run --notify: a JSON summary POSTed to a webhook on loopback (libcurl)'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

HTTPSINK=${HTTPSINK:-$SRCDIR/build/tests/httpsink}

run_requires_sshd_nvcc 'notify tests'

# sink_start STATUS: a one-request HTTP server answering STATUS; sets $port.
sink_start() {
	# the rm must finish first: "a && b &" would put both in the background
	rm -f port.txt req.txt || return 1
	# the sink gives up after 300 s (its alarm): a whole run under ASan on a
	# loaded 2-core machine took over 60 s, the sink's default, and the sink
	# exited 142 before the POST came
	"$HTTPSINK" port.txt req.txt "$1" 300 &
	sink_pid=$!
	wait_for 10 'test -s port.txt' && port=$(cat port.txt)
}

# body_of REQUEST: the JSON body of a captured request (after the blank line)
body_of() {
	sed '1,/^\r$/d' "$1"
}

test_expect_success 'setup: one host and a project' '
	sshd_start a && sshd_write_hosts_json hosts.json a && project_init
'

test_expect_success 'a --notify URL that is not http(s) exits 2 before anything runs' '
	(cd proj && test_expect_code 2 "$GPUORCH" run experiments/basic.json --hosts ../hosts.json \
		--notify "ftp://example.invalid/x") 2>bad.err &&
	grep "must start with http:// or https://" bad.err &&
	(cd proj && test_expect_code 2 "$GPUORCH" run experiments/basic.json --hosts ../hosts.json \
		--notify "http://a b/") 2>bad2.err &&
	grep "space or a control character" bad2.err &&
	test -z "$(last_run_dir)"
'

test_expect_success 'a passed run is POSTed as JSON; the secret path is never printed or recorded' '
	sink_start 200 &&
	(cd proj && "$GPUORCH" run experiments/basic.json --hosts ../hosts.json \
		--notify "http://127.0.0.1:$port/hook/SECRET-TOKEN") >ok.out 2>ok.err &&
	wait $sink_pid &&
	run=$(last_run_dir) &&
	head -n 1 req.txt | grep "^POST /hook/SECRET-TOKEN HTTP/1.1" &&
	grep -i "^Content-Type: application/json" req.txt &&
	grep -i "^User-Agent: gpuorch/" req.txt &&
	body_of req.txt >body.json &&
	test "$(jq_ body.json schema)" = gpuorch.notify/1 &&
	test "$(jq_ body.json run_id)" = "$(basename "$run")" &&
	test "$(jq_ body.json outcome)" = passed &&
	test "$(jq_ body.json exit_code)" = 0 &&
	test "$(jq_ body.json hosts.0.name)" = a &&
	test "$(jq_ body.json report)" = "$run/report.md" &&
	jq_ body.json text | grep "run $(basename "$run") passed on 1 host" &&
	grep "notify: posted the summary to http://127.0.0.1:$port (HTTP 200)" ok.err &&
	test "$(jq_ $run/run.json notify.ok)" = true &&
	test "$(jq_ $run/run.json notify.http_status)" = 200 &&
	test "$(jq_ $run/run.json notify.url)" = "http://127.0.0.1:$port" &&
	! grep -r SECRET-TOKEN ok.out ok.err "$run"
'

test_expect_success 'a webhook answering 500 (GPUORCH_NOTIFY_URL) is a warning; the outcome stands' '
	sink_start 500 &&
	(cd proj && GPUORCH_NOTIFY_URL="http://127.0.0.1:$port/hook/SECRET-TOKEN" \
		"$GPUORCH" run experiments/basic.json --hosts ../hosts.json) >e500.out 2>e500.err &&
	wait $sink_pid &&
	run=$(last_run_dir) &&
	grep "warning: notify: http://127.0.0.1:$port answered HTTP 500: the sink was told to fail" e500.err &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	test "$(jq_ $run/run.json notify.ok)" = false &&
	test "$(jq_ $run/run.json notify.http_status)" = 500 &&
	jq_ $run/run.json notify.error | grep "HTTP 500" &&
	test -f $run/report.md &&
	! grep -r SECRET-TOKEN e500.out e500.err "$run"
'

test_expect_success 'nobody listening: a warning within the timeout, the record says so' '
	# the sink of the last test has exited: its port is closed now
	start=$(test_now_ms) &&
	(cd proj && "$GPUORCH" run experiments/basic.json --hosts ../hosts.json \
		--notify "http://127.0.0.1:$port/hook") >closed.out 2>closed.err &&
	echo "took $(test_elapsed_ms $start) ms (not judged)" &&
	run=$(last_run_dir) &&
	grep "warning: notify: POST to http://127.0.0.1:$port failed" closed.err &&
	test "$(jq_ $run/run.json notify.ok)" = false &&
	test "$(jq_ $run/run.json notify.http_status)" = 0
'

test_expect_success 'the --opt=URL form and an abbreviated option are redacted too' '
	(cd proj && "$GPUORCH" run experiments/basic.json --hosts ../hosts.json \
		--notif=http://127.0.0.1:1/hook/SECRET-TOKEN) >abbr.out 2>abbr.err &&
	run=$(last_run_dir) &&
	jq_ $run/run.json command_line | grep -F "'\''--notif=http://127.0.0.1:1/(redacted)'\''" &&
	grep "warning: notify: POST to http://127.0.0.1:1 failed" abbr.err &&
	! grep -r SECRET-TOKEN abbr.out abbr.err "$run"
'

test_expect_success 'a failing run is POSTed with its failed gates and exit code 1' '
	sink_start 204 &&
	(cd proj && test_expect_code 1 "$GPUORCH" run experiments/gates.json --hosts ../hosts.json \
		--notify "http://127.0.0.1:$port/") >fail.out 2>fail.err &&
	wait $sink_pid &&
	body_of req.txt >fbody.json &&
	test "$(jq_ fbody.json outcome)" = failed &&
	test "$(jq_ fbody.json exit_code)" = 1 &&
	test "$(jq_ fbody.json gates_failed)" -ge 1 &&
	jq_ fbody.json hosts.0.gates_failed.0 &&
	jq_ fbody.json text | grep "FAILED" &&
	jq_ fbody.json text | grep "gates passed (failed: a: " &&
	grep "(HTTP 204)" fail.err
'

test_expect_success 'libcurl is not a library gpuorch needs at start: it is loaded for a request' '
	ldd "$GPUORCH" >ldd.txt &&
	grep -q "libssh2" ldd.txt &&
	! grep "libcurl" ldd.txt
'

test_expect_success 'libcurl missing: the notification is a warning naming the package, the outcome stands' '
	(cd proj && GPUORCH_LIBCURL=/nonexistent/libcurl.so.4 "$GPUORCH" run experiments/basic.json \
		--hosts ../hosts.json --notify "http://127.0.0.1:1/hook") >nocurl.out 2>nocurl.err &&
	run=$(last_run_dir) &&
	grep "warning: notify: .*cannot load /nonexistent/libcurl.so.4" nocurl.err &&
	grep "install libcurl4 (apt-get install libcurl4)" nocurl.err &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	test "$(jq_ $run/run.json notify.ok)" = false &&
	test "$(jq_ $run/run.json notify.http_status)" = 0
'

test_expect_success '--dry-run sends no notification' '
	sink_start 200 &&
	(cd proj && "$GPUORCH" run experiments/basic.json --hosts ../hosts.json --dry-run \
		--notify "http://127.0.0.1:$port/") >dry.out 2>dry.err &&
	! grep notify dry.err &&
	kill $sink_pid && ! wait $sink_pid &&
	test ! -e req.txt
'

test_done
