#!/bin/sh
# asan: yes
test_description='gpuorch run on a stand-in GPU host: real ncu / compute-sanitizer captures become step results and gates'
# The host's nvidia-smi, ncu and compute-sanitizer are tests/lib/fakegpu.sh's
# stand-ins, which replay H100 captures (3 profiled launches; memcheck with 3
# errors and exit 99; a clean racecheck). Nothing here needs a GPU, so the
# code that turns a finished profile or sanitize step into PASS/FAIL runs in
# CI. Checks are && chains without `return` (see tests/lib/testlib.sh).
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"
. "$SRCDIR/tests/lib/fakegpu.sh"

run_requires_sshd_nvcc 'GPU tool tests'

# near A B: A and B agree to 1e-6 (relative)
near() {
	awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-6 * (b < 0 ? -b : b)) }'
}

test_expect_success 'setup: a host whose nvidia-smi, ncu and compute-sanitizer are stand-ins' '
	fakegpu_install "$TRASH/fg" &&
	sshd_start_with_path g "$TRASH/fg/smi" &&
	sshd_write_hosts_json hosts.json g &&
	sed "/\"name\": \"g\"/s|\"name\": \"g\",|\"name\": \"g\", \"cuda_home\": \"$TRASH/fg/cuda\",|" hosts.json >hosts2.json &&
	mv hosts2.json hosts.json && grep "fg/cuda" hosts.json &&
	project_init &&
	cp "$SRCDIR/tests/fixtures/specs/gpu-tools.json" proj/experiments/tools.json &&
	(cd proj && git add -A && git commit -qm "tools spec")
'

test_expect_success 'the run probes an H100 and builds for sm_90a; the sanitizer errors make it exit 1' '
	(cd proj && test_expect_code 1 "$GPUORCH" run experiments/tools.json --hosts ../hosts.json) >run.out 2>&1 &&
	run=$(last_run_dir) && test -n "$run" &&
	test "$(jq_ $run/run.json hosts.0.info.arch)" = sm_90a &&
	jq_ $run/run.json hosts.0.info.gpu_name | grep "H100" &&
	test "$(jq_ $run/run.json hosts.0.builds.0.status)" = PASS &&
	test "$(jq_ $run/run.json outcome)" = failed &&
	test "$(jq_ $run/run.json exit_code)" = 1 &&
	test "$(jq_ $run/run.json hosts.0.steps --len)" = 3
'

test_expect_success 'profile: ncu ran, its base-unit export was parsed; the mean is over all 3 launches' '
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.steps.0.id)" = profile.scale.small &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.steps.0.result.profile.kernels --len)" = 3 &&
	jq_ $run/run.json hosts.0.steps.0.result.profile.metrics >metrics.json &&
	grep "\"gpu__time_duration.sum\":{[^}]*\"unit\":\"ns\"" metrics.json &&
	grep "\"gpu__time_duration.sum\":{[^}]*\"n\":3" metrics.json &&
	test -f "$run/$(jq_ $run/run.json hosts.0.steps.0.profile_csv)" &&
	test -f "$run/$(jq_ $run/run.json hosts.0.steps.0.tool_log)" &&
	grep -- "^ncu --import .*profile.ncu-rep --csv --page raw --print-units base" "$TRASH/fg/calls.log" &&
	grep -- "^ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum,sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active --kernel-name regex:wmma --launch-skip 0 --launch-count 3 " "$TRASH/fg/calls.log"
'

test_expect_success 'a gate on the profile reads (32672 + 32480 + 32064) / 3 ns' '
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.gates.0.name)" = "kernel time in ns" &&
	m=$(jq_ $run/run.json hosts.0.gates.0.measured) &&
	{ near "$m" 32405.333333333333 || { echo "measured $m, want 32405.33 (mean of 3 launches, in ns)"; false; }; } &&
	test "$(jq_ $run/run.json hosts.0.gates.0.verdict)" = PASS
'

test_expect_success 'memcheck: the captured report with 3 errors (exit 99) is a FAIL, saying what' '
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.steps.1.id)" = sanitize.scale.small.memcheck &&
	test "$(jq_ $run/run.json hosts.0.steps.1.status)" = FAIL &&
	test "$(jq_ $run/run.json hosts.0.steps.1.exit_code)" = 99 &&
	test "$(jq_ $run/run.json hosts.0.steps.1.result.sanitizer.errors)" = 3 &&
	jq_ $run/run.json hosts.0.steps.1.reason >reason &&
	grep "memcheck: 3 errors; first: Invalid __global__ write of size 4 bytes" reason &&
	grep -- "^compute-sanitizer --tool memcheck --print-limit [0-9]* --error-exitcode 99 --log-file " "$TRASH/fg/calls.log" &&
	test "$(jq_ $run/run.json hosts.0.gates.1.verdict)" = FAIL &&
	test "$(jq_ $run/run.json hosts.0.gates.1.measured)" = 3
'

test_expect_success 'racecheck: the clean captured report (exit 0) is a PASS with 0 errors' '
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.steps.2.id)" = sanitize.scale.small.racecheck &&
	test "$(jq_ $run/run.json hosts.0.steps.2.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.steps.2.result.sanitizer.errors)" = 0 &&
	test "$(jq_ $run/run.json hosts.0.gates.2.verdict)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.gates.2.measured)" = 0
'

test_expect_success 'the report shows the profile and the sanitizer failure' '
	run=$(last_run_dir) &&
	grep "^## Profiles" $run/report.md &&
	grep "^## Sanitizer" $run/report.md &&
	grep "memcheck" $run/report.md | grep "3 error"
'

test_done
