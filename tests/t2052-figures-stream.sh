#!/bin/sh
# cost: 20
test_description='figures are read from the whole stdout as it streams in, not from the kept head and tail (issue 30 item 1)'
# A CPU-only program off the harness prints ~20 MiB with its real
# "GFLOPS: 999" in the middle, which the kept head and tail (8 MiB each)
# drop. The figure must be 999 (the whole stream is read); with the scan
# limited to 16 MiB (GPUORCH_OUTPUT_SCAN_MIB) a figure from before the gap is
# marked truncated, and a figure that could only be in the gap fails the
# benchmark step with a message that says so. Checks are && chains.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'figure stream tests'

test_expect_success 'setup: a program printing 20 MiB with its figure in the middle' '
	sshd_start a &&
	sshd_write_hosts_json hosts.json a &&
	project_init &&
	cat >proj/chatty.py <<-\PY &&
	import sys
	early = sys.argv[1] == "1"
	line = "x" * 1023 + "\n"
	if early:
	    sys.stdout.write("GFLOPS: 1\n")
	for i in range(10 * 1024):
	    sys.stdout.write(line)
	sys.stdout.write("GFLOPS: 999\n")
	for i in range(10 * 1024):
	    sys.stdout.write(line)
	sys.stdout.write("done\n")
	PY
	cat >proj/experiments/chatty.json <<-\JSON &&
	{
	  "schema": 1, "name": "chatty-figures", "phase": "Test phase: figures from a long output",
	  "sources": ["chatty.py"],
	  "programs": {"chatty": {"run": ["python3", "chatty.py", "{early}"],
	               "figures": {"gflops": {"regex": "^GFLOPS: ([0-9.]+)$", "unit": "GFLOP/s", "better": "higher"}},
	               "needs_gpu": false}},
	  "problems": [{"name": "early", "params": {"early": 1}}, {"name": "middle", "params": {"early": 0}}],
	  "steps": [{"kind": "benchmark", "program": "chatty", "timeout_s": 120}]
	}
	JSON
	(cd proj && git add -A && git commit -qm chatty)
'

test_expect_success 'the whole stream is read: the figure is the one in the dropped middle' '
	(cd proj && "$GPUORCH" run experiments/chatty.json --hosts ../hosts.json) >run.out 2>&1 ||
	{ cat run.out; false; } &&
	run=$(last_run_dir) &&
	for p in early middle; do
		test "$(run_step $run benchmark.chatty.$p status)" = PASS &&
		test "$(run_step $run benchmark.chatty.$p result.figures.gflops.value)" = 999 &&
		test "$(run_step $run benchmark.chatty.$p result.gflops)" = 999 &&
		test -z "$(run_step $run benchmark.chatty.$p result.figures.gflops.truncated)" &&
		test -z "$(run_step $run benchmark.chatty.$p result.output_cut)" || return 1
	done &&
	log=$run/$(run_step $run benchmark.chatty.early stdout_log) &&
	grep "^\[gpuorch: [0-9]* bytes of [0-9]* dropped here" $log &&
	! grep "GFLOPS: 999" $log &&
	test "$(head -n 1 $log)" = "GFLOPS: 1" &&
	test "$(tail -n 1 $log)" = done &&
	test $(wc -c <$log) -lt $((16 * 1024 * 1024 + 300))
'

test_expect_success 'a scan limited to 16 MiB: the early figure is marked truncated, the missing one fails and says why' '
	(cd proj && GPUORCH_OUTPUT_SCAN_MIB=16 "$GPUORCH" run experiments/chatty.json --hosts ../hosts.json) >run2.out 2>&1
	test $? = 1 &&
	run=$(last_run_dir) &&
	test "$(run_step $run benchmark.chatty.early status)" = PASS &&
	test "$(run_step $run benchmark.chatty.early result.figures.gflops.value)" = 1 &&
	test "$(run_step $run benchmark.chatty.early result.figures.gflops.truncated)" = true &&
	dropped=$(run_step $run benchmark.chatty.early result.output_cut.dropped_bytes) &&
	size=$((10 + 20 * 1024 * 1024 + 12 + 5)) &&
	test "$dropped" = $((size - 16 * 1024 * 1024)) &&
	test "$(run_step $run benchmark.chatty.middle status)" = FAIL &&
	run_step $run benchmark.chatty.middle reason >why &&
	cat why &&
	grep "no line of the output that was read matches /^GFLOPS: (\[0-9.\]+)\$/; it could only be in the part that was not read ($((size - 10 - 16 * 1024 * 1024)) bytes" why &&
	cp $run/report.md report.md &&
	grep "benchmark.chatty.early | gflops | 1 | .*⚠ truncated output" report.md &&
	grep "⚠ (output cut) .* $((size - 16 * 1024 * 1024)) bytes of stdout were not read" report.md
'

test_done
