#!/bin/sh
test_description='a program that prints more than the kept output: head and tail are kept, the result is its true last line'
# remote_step_output (remote/remote.c) keeps the first and the last 8 MiB of
# a step's stdout over 16 MiB, with one line saying how much was dropped, so
# the result on the program's last line is read. Checks are && chains.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'chatty output tests'

test_expect_success 'setup: a script that prints 20 MiB and then its result' '
	sshd_start a &&
	sshd_write_hosts_json hosts.json a &&
	project_init &&
	cat >proj/chatty.py <<-\PY &&
	import sys
	line = "x" * 1023 + "\n"
	sys.stdout.write("FIRST LINE\n")
	for i in range(20 * 1024):
	    sys.stdout.write(line)
	sys.stdout.write("LAST NOISE\n")
	sys.stdout.write("{\"schema\": 1, \"program\": \"chatty\", \"mode\": \"check\", \"status\": \"pass\", \"reason\": null, \"answer\": 42}\n")
	PY
	cat >proj/experiments/chatty.json <<-\JSON &&
	{
	  "schema": 1, "name": "chatty", "phase": "Test phase: chatty output",
	  "sources": ["chatty.py"],
	  "programs": {"chatty": {"script": "chatty.py", "needs_gpu": false}},
	  "problems": [{"name": "p"}],
	  "steps": [{"kind": "correctness", "program": "chatty", "timeout_s": 120}]
	}
	JSON
	(cd proj && git add -A && git commit -qm chatty)
'

test_expect_success 'the result on the true last line is read; head and tail are kept; the drop is said' '
	(cd proj && "$GPUORCH" run experiments/chatty.json --hosts ../hosts.json) >run.out 2>&1 ||
	{ cat run.out; false; } &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.steps.0.result.answer)" = 42 &&
	log=$run/$(jq_ $run/run.json hosts.0.steps.0.stdout_log) &&
	test "$(head -n 1 $log)" = "FIRST LINE" &&
	tail -n 2 $log | head -n 1 | grep -x "LAST NOISE" &&
	grep "^\[gpuorch: [0-9]* bytes of [0-9]* dropped here" $log >mark &&
	size=$(sed "s/.* bytes of \([0-9]*\) dropped.*/\1/" mark) &&
	dropped=$(sed "s/^\[gpuorch: \([0-9]*\) bytes.*/\1/" mark) &&
	kept=$(sed "s/.*the first and the last \([0-9]*\) are kept.*/\1/" mark) &&
	echo "size $size dropped $dropped kept $kept" &&
	test "$size" = $((11 + 20 * 1024 * 1024 + 11 + $(tail -n 1 $log | wc -c))) &&
	test "$dropped" = $((size - 2 * kept)) &&
	test "$kept" = $((8 * 1024 * 1024)) &&
	test $(wc -c <$log) -lt $((16 * 1024 * 1024 + 300))
'

test_done
