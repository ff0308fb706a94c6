#!/bin/sh
# cost: 30
# asan: yes
# waits: yes
test_description='gpuorch run --resume after the controller was killed with SIGKILL mid-run sends only what the host lacks: nothing when it holds the content, the one file it lost when it lost one (issue 35: the resume re-sent files the host had, unasked)'
# The controller's ledger of a host (remote/shipledger.h) learns that the
# host holds the content at the run's first journal event, and keeps what
# it sent unconfirmed: a resumed controller asks the host before it sends.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'resume ship tests'

# start_bg NAME [ARGS...]: gpuorch run of the slow spec in the background; its pid in NAME.pid
start_bg() {
	_n=$1
	shift
	{ (cd proj && exec "$GPUORCH" run experiments/slow.json --hosts ../hosts.json --plain "$@" \
		>../$_n.out 2>&1) & }
	echo $! >$_n.pid
}

# kill_mid_run NAME: once NAME's run started its step on the host, the
# controller killed with SIGKILL; the run's id into NAME.id
kill_mid_run() {
	wait_for 60 "grep -q \"^run \" $1.out" &&
	sed -n "s/^run \([0-9a-f-]*\): .*/\1/p" $1.out | head -n 1 >$1.id &&
	wait_for 120 "grep -q step_started $(sshd_var a WORKDIR)/runs/$(cat $1.id)/journal 2>/dev/null" &&
	kill -9 "$(cat $1.pid)" &&
	wait_for 10 "! kill -0 $(cat $1.pid) 2>/dev/null"
}

test_expect_success 'setup' '
	sshd_start a && sshd_write_hosts_json hosts.json a && project_init &&
	mkdir -p proj/data &&
	head -c 150000 /dev/urandom >proj/data/a.bin &&
	head -c 120000 /dev/urandom >proj/data/b.bin &&
	cat >proj/experiments/slow.json <<JSON &&
{"schema": 1, "name": "slow", "phase": "resume ship test",
 "sources": ["cpu/cputimer.c", "data"], "targets": {"H100": "sm_90a"},
 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
 "problems": [{"name": "slow", "params": {"work": 1000, "sleep": 3}}],
 "steps": [{"kind": "benchmark", "program": "cputimer", "timeout_s": 60}]}
JSON
	(cd proj && git add -A && git commit -qm spec)
'

test_expect_success 'killed mid-run after its files arrived: --resume sends none of them' '
	start_bg k1 && kill_mid_run k1 &&
	id=$(cat k1.id) &&
	(cd proj && "$GPUORCH" run experiments/slow.json --hosts ../hosts.json --plain --resume $id) >r1.out 2>&1;
	echo "exit $?" >>r1.out; cat r1.out &&
	test_grep "^exit 0" r1.out &&
	run=$(last_run_dir) && test "$(basename $run)" = $id &&
	test "$(jq_ $run/run.json hosts.0.ship.files)" = 3 &&
	test "$(jq_ $run/run.json hosts.0.ship.files_sent)" = 0 &&
	test "$(jq_ $run/run.json hosts.0.ship.bytes_sent)" = 0 &&
	test "$(jq_ $run/run.json hosts.0.ship.reused)" = true &&
	test_grep "already on the host: 0 bytes sent" r1.out
'

test_expect_success 'killed mid-run, the host then lost one file: --resume sends that one alone' '
	echo "/* another content */" >>proj/cpu/cputimer.c && (cd proj && git commit -qam edit) &&
	start_bg k2 && kill_mid_run k2 &&
	id=$(cat k2.id) && W=$(sshd_var a WORKDIR) &&
	wait_for 120 "test -f $W/runs/$id/runner.done" &&
	b=$(sha256sum proj/data/b.bin | cut -d" " -f1) && test -f "$W/blobs/$b" &&
	rm -f "$W/blobs/$b" && rm -rf "$W"/content/* &&
	(cd proj && "$GPUORCH" run experiments/slow.json --hosts ../hosts.json --plain --resume $id) >r2.out 2>&1;
	echo "exit $?" >>r2.out; cat r2.out &&
	test_grep "^exit 0" r2.out &&
	run=$(last_run_dir) && test "$(basename $run)" = $id &&
	test "$(jq_ $run/run.json hosts.0.ship.files_sent)" = 1 &&
	sent=$(jq_ $run/run.json hosts.0.ship.bytes_sent) &&
	: "the one file (120,000 bytes) in a tar: its header, its bytes, the end" &&
	test "$sent" -ge 120000 && test "$sent" -lt 150000 &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	cmp proj/data/b.bin "$W/blobs/$b"
'

test_done
