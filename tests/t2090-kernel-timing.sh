#!/bin/sh
# cost: 28
# asan: yes
test_description='kernel_timing: gpuorch times every kernel of an unchanged program with its CUPTI injection library'
# The host is a stand-in GPU host (tests/lib/fakegpu.sh's nvidia-smi). The
# library is really compiled there from the source embedded in gpuorch,
# against this machine's CUDA toolkit (its CUPTI); the "program" cannot run
# kernels here, so it checks that it was started with the library in
# CUDA_INJECTION64_PATH and writes, where GPUORCH_KTRACE_OUT says, the trace
# the library wrote on an H100 (tests/fixtures/ktrace/h100-demo.jsonl:
# 51 saxpy and 50 scale_sq launches). Everything after the program runs for
# real: fetching, summarizing, figures, gates, the report, compare.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"
. "$SRCDIR/tests/lib/fakegpu.sh"

run_requires_sshd_nvcc 'kernel_timing tests'
CUDA=$(dirname "$(dirname "$(nvcc_path)")")
if [ -z "$(find -L "$CUDA/" -name cupti.h 2>/dev/null | head -n 1)" ]; then
	test_skip 'kernel_timing tests' "no CUPTI under $CUDA (cupti.h)"
	test_done
fi

# spec NAME GATE-VALUE [REPEAT]
spec() {
	cat >proj/experiments/$1.json <<JSON
{"schema": 1, "name": "$1", "phase": "kernel timing test",
 "sources": ["kt"], "targets": {"H100": "sm_90a"},
 "programs": {"demo": {"run": ["sh", "kt/demo.sh", "{n}"]}},
 "problems": [{"name": "n16", "params": {"n": 16}}],
 "steps": [{"kind": "kernel_timing", "program": "demo", "repeat": ${3:-3}, "timeout_s": 120}],
 "gates": [{"name": "saxpy fast", "program": "demo", "metric": "kernel:saxpy.median_us", "op": "<=", "value": $2}],
 "expected": [{"program": "demo", "metric": "kernel:scale_sq.median_us", "op": "<", "value": 100, "note": "scale_sq under 100 us"}]}
JSON
}

test_expect_success 'setup: a stand-in GPU host and a program that is not on the harness' '
	fakegpu_install "$TRASH/fg" &&
	sshd_start_with_path g "$TRASH/fg/smi" &&
	sshd_write_hosts_json hosts.json g &&
	project_init &&
	mkdir -p proj/kt &&
	cp "$SRCDIR/tests/fixtures/ktrace/h100-demo.jsonl" proj/kt/trace.jsonl &&
	cat >proj/kt/demo.sh <<-\EOF &&
	# a stand-in for a CUDA program started under the CUPTI injection library
	[ -f "$CUDA_INJECTION64_PATH" ] || { echo "no injection library: $CUDA_INJECTION64_PATH" >&2; exit 5; }
	case $GPUORCH_KTRACE_OUT in /*) ;; *) echo "GPUORCH_KTRACE_OUT not absolute" >&2; exit 6 ;; esac
	echo "run with n=$1" >>"$(dirname "$GPUORCH_KTRACE_OUT")/runs.log"
	cp kt/trace.jsonl "$GPUORCH_KTRACE_OUT"
	echo "demo done"
	EOF
	spec kt 1000 &&
	(cd proj && git add -A && git commit -qm kt)
'

test_expect_success 'the library is built on the host; the program runs 3 times under it; every kernel becomes figures' '
	(cd proj && "$GPUORCH" run experiments/kt.json --hosts ../hosts.json --plain) >run.out 2>&1 ||
		{ cat run.out; false; } &&
	cat run.out &&
	run=$(last_run_dir) &&
	grep "build gpuorch_ktrace sm_90a: PASS" run.out &&
	grep "kernel_timing.demo.n16: PASS" run.out &&
	test "$(jq_ $run/run.json hosts.0.steps.0.kind)" = kernel_timing &&
	test "$(jq_ $run/run.json hosts.0.steps.0.result.kernel_timing.runs)" = 3 &&
	test "$(jq_ $run/run.json hosts.0.steps.0.result.kernel_timing.launches)" = 303 &&
	test "$(jq_ $run/run.json hosts.0.steps.0.result.kernel_timing.kernels.0.key)" = saxpy &&
	test "$(jq_ $run/run.json hosts.0.steps.0.result.kernel_timing.kernels.1.key)" = scale_sq &&
	test "$(jq_ "$run/run.json" "hosts.0.steps.0.result.kernel:saxpy.launches")" = 51 &&
	test "$(jq_ "$run/run.json" "hosts.0.steps.0.result.kernel:scale_sq.launches")" = 50 &&
	jq_ "$run/run.json" "hosts.0.steps.0.result.kernel:saxpy.median_us" >med &&
	awk "{ exit !(\$1 > 76.50 && \$1 < 76.52) }" med &&
	test -f "$run/$(jq_ $run/run.json hosts.0.steps.0.ktrace_3)" &&
	test "$(cat $SSHD_g_WORKDIR/runs/$(basename $run)/*/runs.log | wc -l)" = 3 &&
	grep "run with n=16" $SSHD_g_WORKDIR/runs/$(basename $run)/*/runs.log
'

test_expect_success 'the report has the kernel table; an expectation on kernel:scale_sq.median_us is judged' '
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.gates.0.verdict)" = PASS &&
	grep "^| .demo. kernel:scale_sq.median_us < 100 us (scale_sq under 100 us) | g | n16 | 61.01 us | ✅ met" $run/report.md &&
	grep "^## Kernels timed by gpuorch" $run/report.md &&
	grep "^3 runs, 303 launches in all" $run/report.md &&
	grep "^| .saxpy. | .saxpy. | 65536,1,1 × 256,1,1 | 51 | 76.51 | 75.36 | 77.60 | 3893 | 56.1% |$" $run/report.md &&
	grep "^| .scale_sq. | .scale_sq. | 65536,1,1 × 256,1,1 | 50 | 61.01 | " $run/report.md
'

test_expect_success 'a gate at exactly the measured median passes (<=); a hair under it fails the run (exit 1)' '
	run=$(last_run_dir) &&
	med=$(jq_ "$run/run.json" "hosts.0.steps.0.result.kernel:saxpy.median_us") &&
	spec kt2 $med && (cd proj && git add -A && git commit -qm kt2) &&
	(cd proj && "$GPUORCH" run experiments/kt2.json --hosts ../hosts.json --plain) >run2.out 2>&1 &&
	test "$(jq_ $(last_run_dir)/run.json hosts.0.gates.0.verdict)" = PASS &&
	under=$(awk "BEGIN { printf \"%.6f\", $med - 0.000001 }") &&
	spec kt3 $under && (cd proj && git add -A && git commit -qm kt3) &&
	(cd proj && test_expect_code 1 "$GPUORCH" run experiments/kt3.json --hosts ../hosts.json --plain) >run3.out 2>&1 &&
	test "$(jq_ $(last_run_dir)/run.json hosts.0.gates.0.verdict)" = FAIL &&
	grep "saxpy fast" run3.out
'

test_expect_success 'a program that fails: the step FAILs, the traces are still read' '
	sed -i "s/^echo \"demo done\"/echo demo failed; exit 3/" proj/kt/demo.sh &&
	(cd proj && git add -A && git commit -qm failing) &&
	(cd proj && test_expect_code 1 "$GPUORCH" run experiments/kt.json --hosts ../hosts.json --plain) >run4.out 2>&1 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = FAIL &&
	jq_ $run/run.json hosts.0.steps.0.reason | grep "exit code 3" &&
	test "$(jq_ $run/run.json hosts.0.steps.0.result.kernel_timing.runs)" = 3
'

test_expect_success 'spec errors: repeat out of range, a script program' '
	sed "s/\"repeat\": 3/\"repeat\": 0/" proj/experiments/kt.json >proj/experiments/bad.json &&
	test_expect_code 2 "$GPUORCH" spec check proj/experiments/bad.json --root proj 2>bad.err &&
	cat bad.err && grep "steps\[0\].repeat" bad.err
'

test_expect_success 'a trace over 1 MiB is summarized but not kept beside the run (it stays on the host)' '
	fix="$SRCDIR/tests/fixtures/ktrace/h100-demo.jsonl" &&
	{ head -n 1 "$fix" && for i in $(seq 60); do sed -n "2,102p" "$fix"; done && tail -n 1 "$fix"; } >proj/kt/big.jsonl &&
	test $(wc -c <proj/kt/big.jsonl) -gt 1048576 &&
	sed -i "s|cp kt/trace.jsonl|cp kt/big.jsonl|; s/^echo demo failed; exit 3/echo \"demo done\"/" proj/kt/demo.sh &&
	(cd proj && git add -A && git commit -qm big) &&
	(cd proj && "$GPUORCH" run experiments/kt.json --hosts ../hosts.json --plain) >run5.out 2>&1 ||
		{ cat run5.out; false; } &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.steps.0.result.kernel_timing.launches)" = 18180 &&
	jq_ $run/run.json hosts.0.steps.0.ktrace_1 | grep "^host:.*ktrace.1.jsonl ([0-9]* bytes, over the 1048576 kept in the run)$" &&
	! ls $run/logs/*/*.ktrace.*.jsonl 2>/dev/null
'

# specw NAME WORK GATE: kernel_timing with "work" WORK and one gate GATE (a JSON object)
specw() {
	cat >proj/experiments/$1.json <<JSON
{"schema": 1, "name": "$1", "phase": "kernel timing with declared work",
 "sources": ["kt"], "targets": {"H100": "sm_90a"},
 "programs": {"demo": {"run": ["sh", "kt/demo.sh", "{n}"]}},
 "problems": [{"name": "n16", "params": {"n": 16}}],
 "steps": [{"kind": "kernel_timing", "program": "demo", "repeat": 2, "timeout_s": 120, "work": $2}],
 "gates": [$3]}
JSON
}

# saxpy on the H100 trace: 65536 x 256 = 16,777,216 floats, x read, y read
# and written: 201,326,592 bytes a launch; the stand-in H100 80GB HBM3's
# DRAM peak is 5120 bits x 2 x 2619 MHz = 3352.32 GB/s, so its bound is
# 60.06 us and the fastest launch (75.36 us) is possible
test_expect_success 'declared work: each kernel'"'"'s rate and % of DRAM at its median launch, in the record, a gate and the report' '
	sed -i "s|cp kt/[a-z]*.jsonl|cp kt/trace.jsonl|; s/^echo demo failed; exit 3/echo \"demo done\"/" proj/kt/demo.sh &&
	specw ktw "{\"saxpy\": {\"bytes\": 201326592, \"flops\": 33554432}}" \
		"{\"name\": \"saxpy bandwidth\", \"program\": \"demo\", \"metric\": \"kernel:saxpy.gbps\", \"op\": \">=\", \"value\": 2600}" &&
	(cd proj && git add -A && git commit -qm ktw) &&
	(cd proj && "$GPUORCH" run experiments/ktw.json --hosts ../hosts.json --plain) >w.out 2>&1 ||
		{ cat w.out; false; } &&
	run=$(last_run_dir) &&
	k="hosts.0.steps.0.result.kernel:saxpy" &&
	test "$(jq_ $run/run.json $k.bytes)" = 201326592 &&
	test "$(jq_ $run/run.json $k.impossible)" = false &&
	awk "{ exit !(\$1 > 2631.0 && \$1 < 2631.5) }" <<-EOF &&
	$(jq_ $run/run.json $k.gbps)
	EOF
	awk "{ exit !(\$1 > 78.4 && \$1 < 78.6) }" <<-EOF &&
	$(jq_ $run/run.json $k.pct_of_dram)
	EOF
	awk "{ exit !(\$1 > 60.05 && \$1 < 60.07) }" <<-EOF &&
	$(jq_ $run/run.json $k.bound_us)
	EOF
	! jq_ $run/run.json "hosts.0.steps.0.result.kernel:scale_sq.impossible" 2>/dev/null &&
	test "$(jq_ $run/run.json hosts.0.gates.0.verdict)" = PASS &&
	grep "^| .saxpy. | .saxpy. | 65536,1,1 × 256,1,1 | 51 | 76.51 | 75.36 | 77.60 | 3893 | 56.1% | 0.439 TFLOPS, 2631 GB/s (78.5% of DRAM) |$" $run/report.md &&
	grep "^| ✅ pass | saxpy bandwidth | g | .demo. · n16 | .kernel:saxpy.gbps. | 2631 GB/s | >= 2600 |" $run/report.md &&
	grep "^| .scale_sq. | .scale_sq. | .* | 43.9% | — |$" $run/report.md
'

test_expect_success 'declared work the trace beats: the step FAILs IMPOSSIBLE, its gate judges no measurement, exit 1' '
	specw ktx "{\"saxpy\": {\"bytes\": 805306368}}" \
		"{\"name\": \"saxpy fast\", \"program\": \"demo\", \"metric\": \"kernel:saxpy.median_us\", \"op\": \"<=\", \"value\": 1000}" &&
	(cd proj && git add -A && git commit -qm ktx) &&
	(cd proj && test_expect_code 1 "$GPUORCH" run experiments/ktx.json --hosts ../hosts.json --plain) >x.out 2>&1 ||
		{ cat x.out; false; } &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = FAIL &&
	jq_ $run/run.json hosts.0.steps.0.reason >why &&
	grep "^IMPOSSIBLE: kernel saxpy.s fastest launch 75.36 us beats the physical bound 240.2 us of its declared work (805306368 bytes at the DRAM peak 3352 GB/s; " why &&
	test "$(jq_ $run/run.json "hosts.0.steps.0.result.kernel:saxpy.impossible")" = true &&
	test "$(jq_ $run/run.json hosts.0.gates.0.verdict)" = FAIL &&
	jq_ $run/run.json hosts.0.gates.0.reason | grep "impossible" &&
	grep "IMPOSSIBLE\*\*: fastest 75.36 us < bound 240.2 us |$" $run/report.md
'

test_expect_success 'declared work for a kernel the trace has not (a typo): the step FAILs naming the keys it has' '
	specw kty "{\"saxpi\": {\"bytes\": 1}}" \
		"{\"name\": \"saxpy fast\", \"program\": \"demo\", \"metric\": \"kernel:saxpy.median_us\", \"op\": \"<=\", \"value\": 1000}" &&
	(cd proj && git add -A && git commit -qm kty) &&
	(cd proj && test_expect_code 1 "$GPUORCH" run experiments/kty.json --hosts ../hosts.json --plain) >y.out 2>&1 ||
		{ cat y.out; false; } &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = FAIL &&
	test "$(jq_ $run/run.json hosts.0.steps.0.reason)" = "the step'"'"'s work names a kernel '"'"'saxpi'"'"', which the trace has not (its kernels: saxpy, scale_sq): fix the key in \"work\" (docs/byo.md)"
'

test_expect_success 'spec check: a rate gate without declared work, work that is not a positive number, work on another kind of step' '
	specw kz1 "{\"saxpy\": {\"bytes\": 1}}" \
		"{\"name\": \"g\", \"program\": \"demo\", \"metric\": \"kernel:saxpy.tflops\", \"op\": \">=\", \"value\": 1}" &&
	test_expect_code 2 "$GPUORCH" spec check proj/experiments/kz1.json --root proj 2>z1.err &&
	grep "gates\[0\].metric.*.kernel:saxpy.tflops. is the rate of kernel .saxpy. from its declared work, and no kernel_timing step of .demo. declares its flops" z1.err &&
	specw kz2 "{\"saxpy\": {\"bytes\": 0}}" \
		"{\"name\": \"g\", \"program\": \"demo\", \"metric\": \"kernel:saxpy.gbps\", \"op\": \">=\", \"value\": 1}" &&
	test_expect_code 2 "$GPUORCH" spec check proj/experiments/kz2.json --root proj 2>z2.err &&
	grep "steps\[0\].work.saxpy.bytes.*expected a positive number, found 0" z2.err &&
	specw kz3 "{\"saxpy\": {}}" \
		"{\"name\": \"g\", \"program\": \"demo\", \"metric\": \"kernel:saxpy.median_us\", \"op\": \"<=\", \"value\": 1}" &&
	test_expect_code 2 "$GPUORCH" spec check proj/experiments/kz3.json --root proj 2>z3.err &&
	grep "flops.*bytes.*or both" z3.err &&
	specw kz4 "{\"saxpy\": {\"bytes\": 8}}" \
		"{\"name\": \"g\", \"program\": \"demo\", \"metric\": \"kernel:saxpy.gbps\", \"op\": \">=\", \"value\": 1}" &&
	"$GPUORCH" spec check proj/experiments/kz4.json --root proj &&
	sed "s/\"kind\": \"kernel_timing\", \"program\": \"demo\", \"repeat\": 2,/\"kind\": \"correctness\", \"program\": \"demo\",/" \
		proj/experiments/kz4.json >proj/experiments/kz5.json &&
	grep "correctness.*work" proj/experiments/kz5.json &&
	test_expect_code 2 "$GPUORCH" spec check proj/experiments/kz5.json --root proj 2>z5.err &&
	grep "steps\[0\].*work" z5.err
'

# slow_trace FACTOR: the H100 trace with every saxpy launch FACTOR times as long
slow_trace() {
	awk -v f="$1" '/saxpy/ {
		match($0, /"start_ns": [0-9]+/); s = substr($0, RSTART + 12, RLENGTH - 12) + 0;
		match($0, /"end_ns": [0-9]+/); e = substr($0, RSTART + 10, RLENGTH - 10) + 0;
		sub(/"end_ns": [0-9]+/, "\"end_ns\": " sprintf("%.0f", s + f * (e - s)))
	} { print }' "$SRCDIR/tests/fixtures/ktrace/h100-demo.jsonl"
}

test_expect_success 'kernel figures in compare, history and find: saxpy twice as slow is a regression, scale_sq untouched is the same' '
	sed -i "s|cp kt/[a-z]*.jsonl|cp kt/trace.jsonl|" proj/kt/demo.sh &&
	spec ktc 1000 && (cd proj && git add -A && git commit -qm "ktc: as measured") &&
	(cd proj && "$GPUORCH" run experiments/ktc.json --hosts ../hosts.json --plain) >ka.out 2>&1 ||
		{ cat ka.out; false; } &&
	A=$(basename $(last_run_dir)) && ca=$(cd proj && git rev-parse HEAD) &&
	slow_trace 2 >proj/kt/slow.jsonl &&
	test "$(grep -c "saxpy" proj/kt/slow.jsonl)" = 51 &&
	sed -i "s|cp kt/trace.jsonl|cp kt/slow.jsonl|" proj/kt/demo.sh &&
	(cd proj && git add -A && git commit -qm "ktc: saxpy slower") &&
	(cd proj && "$GPUORCH" run experiments/ktc.json --hosts ../hosts.json --plain) >kb.out 2>&1 ||
		{ cat kb.out; false; } &&
	B=$(basename $(last_run_dir)) && cb=$(cd proj && git rev-parse HEAD) && test "$A" != "$B" &&
	test_expect_code 1 "$GPUORCH" compare $A $B >kc.md &&
	cat kc.md &&
	grep "^| demo n16 · kernel:saxpy.median_us | g (.*) | 76.51 us | 153.0 us | x2.000 | - | \*\*worse\*\*.*REGRESSION |$" kc.md &&
	grep "^| demo n16 · kernel:scale_sq.median_us | g (.*) | 61.01 us | 61.01 us | x1.000 | - | \*\*same\*\*" kc.md &&
	! grep "scale_sq.*REGRESSION" kc.md &&
	test_expect_code 1 "$GPUORCH" compare $A $B --json >kc.json &&
	test "$(jq_ kc.json rows.0.figure)" = kernel:saxpy.median_us &&
	test "$(jq_ kc.json rows.0.unit)" = us && test "$(jq_ kc.json rows.0.better)" = lower &&
	test "$(jq_ kc.json rows.0.verdict)" = worse && test "$(jq_ kc.json regressions)" = 1 &&
	test "$(jq_ kc.json rows.1.verdict)" = same &&
	(cd proj && test_expect_code 1 "$GPUORCH" history ktc --figure kernel:saxpy.median_us) >kh.md &&
	grep "figure kernel:saxpy.median_us (us, lower is better)" kh.md &&
	grep "^| 2 | .* | 153.0 us | - | \*\*regression\*\* x2.000 |$" kh.md &&
	(cd proj && "$GPUORCH" history ktc --figure kernel:scale_sq.median_us --json) >ks.json &&
	test "$(jq_ ks.json points --len)" = 2 && test "$(jq_ ks.json points.1.step)" = null &&
	(cd proj && "$GPUORCH" find $ca..$cb ktc --figure kernel:saxpy.median_us --hosts ../hosts.json --plain) >kf.out 2>&1 ||
		{ cat kf.out; false; } &&
	cat kf.out && grep "^first worse commit: $cb" kf.out &&
	grep "^find: 1 commit after .*; following kernel:saxpy.median_us of the first program that has it on .g." kf.out &&
	grep "^| commit | subject | run | kernel:saxpy.median_us | vs GOOD | p | state |$" kf.out &&
	grep "^evidence: demo n16 kernel:saxpy.median_us 76.51 us at [0-9a-f]\{12\} -> 153.0 us at [0-9a-f]\{12\} (x2.000 vs GOOD)$" kf.out
'

test_done
