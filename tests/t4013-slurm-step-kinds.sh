#!/bin/sh
# cost: 60
# asan: yes
# waits: yes
test_description='a Slurm run records every kind of step as an SSH host does: ncu profiles, sanitizer reports, figures of a program of its own, CUPTI kernel traces, ptxas resources'
# The same experiments as t2220 (stand-in ncu and compute-sanitizer that
# replay H100 captures) and t2060 (a project built by its own Makefile, its
# figures read from its output), run as Slurm jobs through a real
# slurmrestd: each step's record must say what the SSH host's says. The
# login node has a (stand-in) GPU of its own, as on the device's H100: the
# record's arch is still the compute nodes' (the entry's sm_90a), not the
# login node's probe (sm_90), or the ptxas gate finds no build.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/slurm.sh"
. "$SRCDIR/tests/lib/runlib.sh"
. "$SRCDIR/tests/lib/fakegpu.sh"

run_requires_sshd_nvcc 'Slurm step-kind tests'
if ! _why=$(slurm_available); then
	test_skip 'Slurm step-kind tests' "$_why"
	test_done
fi


test_expect_success 'setup: a single-node Slurm whose tools are the stand-ins, two projects' '
	slurm_start 4 &&
	fakegpu_install "$TRASH/fg" &&
	slurm_login_start login "$TRASH/fg/smi" &&
	slurm_cluster_json hosts.json login &&
	sed "s|\"name\": \"hpc\",|\"name\": \"hpc\", \"arch\": \"sm_90a\", \"cuda_home\": \"$TRASH/fg/cuda\",|" \
		hosts.json >hosts2.json && mv hosts2.json hosts.json && grep "fg/cuda" hosts.json &&
	tok=$(slurm_token 3600) && test -n "$tok" &&
	project_init &&
	cp "$SRCDIR/tests/fixtures/specs/gpu-tools.json" proj/experiments/tools.json &&
	(cd proj && git add -A && git commit -qm "tools spec") &&
	rm -rf byo && cp -R "$SRCDIR/tests/fixtures/byo-project" byo && mkdir byo/experiments &&
	cat >byo/experiments/byo.json <<-\JSON &&
	{
	  "schema": 1, "name": "byo-slurm", "phase": "Test phase: a program of its own as Slurm jobs",
	  "sources": ["."],
	  "targets": {"H100": "sm_90a"},
	  "programs": {
	    "saxpy_make": {
	      "build": {"command": ["make", "ARCH={arch_num}"], "outputs": ["saxpy_bench"], "ptxas": true},
	      "run": ["./saxpy_bench", "--n={n}"],
	      "check": ["./saxpy_bench", "--check", "--n={n}"],
	      "figures": {"gflops": {"regex": "^GFLOPS: ([0-9.]+)$", "unit": "GFLOP/s", "better": "higher"},
	                  "nothere": {"regex": "^NOT PRINTED: ([0-9.]+)$"}},
	      "needs_gpu": false
	    }
	  },
	  "problems": [{"name": "n4k", "params": {"n": 4096}}],
	  "steps": [
	    {"kind": "correctness", "program": "saxpy_make"},
	    {"kind": "benchmark", "program": "saxpy_make", "problems": ["n4k"]}
	  ]
	}
	JSON
	(cd byo && git init -q && git config user.email t@example.com && git config user.name t &&
	 git add -A && git commit -qm "sample project")
'

test_expect_success 'profile and sanitize as Slurm jobs: the sanitizer errors make the run exit 1' '
	(cd proj && SLURM_JWT=$tok test_expect_code 1 "$GPUORCH" run experiments/tools.json --hosts ../hosts.json --host hpc) \
		>run.out 2>&1 || { cat run.out; false; } &&
	cat run.out &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.steps --len)" = 3 &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.state)" = COMPLETED
'

test_expect_success 'the build: its ptxas report is in the record, and a gate reads it' '
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.info.arch)" = sm_90a &&
	test "$(jq_ $run/run.json hosts.0.builds.0.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.builds.0.resources --len)" -ge 1 &&
	test "$(jq_ $run/run.json hosts.0.builds.0.resources.0.spill_store_bytes)" = 0 &&
	jq_ $run/run.json hosts.0.builds.0.log >blog && grep "build" blog &&
	head -n 1 "$run/$(cat blog)" | grep "^\$ .*nvcc" &&
	test "$(jq_ $run/run.json hosts.0.gates.3.verdict)" = PASS
'

test_expect_success 'profile: ncu CSV pulled back from the shared directory and parsed, as on an SSH host' '
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.steps.0.id)" = profile.scale.small &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.steps.0.result.profile.kernels --len)" = 3 &&
	test "$(jq_ $run/run.json hosts.0.steps.0.tool_settings.name)" = ncu &&
	test -f "$run/$(jq_ $run/run.json hosts.0.steps.0.profile_csv)" &&
	test "$(jq_ $run/run.json hosts.0.gates.0.verdict)" = PASS
'

test_expect_success 'memcheck: 3 errors are a FAIL that says what, and its gate measures 3' '
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.steps.1.id)" = sanitize.scale.small.memcheck &&
	test "$(jq_ $run/run.json hosts.0.steps.1.status)" = FAIL &&
	test "$(jq_ $run/run.json hosts.0.steps.1.result.sanitizer.errors)" = 3 &&
	jq_ $run/run.json hosts.0.steps.1.reason >reason &&
	grep "memcheck: 3 errors; first: Invalid __global__ write of size 4 bytes" reason &&
	test "$(jq_ $run/run.json hosts.0.gates.1.verdict)" = FAIL &&
	test "$(jq_ $run/run.json hosts.0.gates.1.measured)" = 3 &&
	test "$(jq_ $run/run.json hosts.0.steps.2.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.steps.2.result.sanitizer.errors)" = 0
'

test_expect_success 'a program of its own: figures read from its output; one it never prints fails the benchmark' '
	(cd byo && SLURM_JWT=$tok test_expect_code 1 "$GPUORCH" run experiments/byo.json --hosts ../hosts.json --host hpc) \
		>byo.out 2>&1 || { cat byo.out; false; } &&
	cat byo.out &&
	run=$(last_run_dir) &&
	test "$(run_step $run correctness.saxpy_make.n4k status)" = PASS &&
	test "$(run_step $run benchmark.saxpy_make.n4k status)" = FAIL &&
	run_step $run benchmark.saxpy_make.n4k reason | grep "figures not found in the output: .nothere." &&
	test "$(run_step $run benchmark.saxpy_make.n4k result.figures.gflops.unit)" = GFLOP/s &&
	gf=$(run_step $run benchmark.saxpy_make.n4k result.figures.gflops.value) &&
	awk -v g="$gf" "BEGIN { exit !(g > 0) }" &&
	test "$(jq_ $run/run.json hosts.0.builds.0.resources --len)" -ge 1
'

# the CUPTI injection library is built in a build job from the source
# embedded in gpuorch (t2090 has the stand-in program and its trace)
CUDA=$(dirname "$(dirname "$(nvcc_path)")")
if [ -n "$(find -L "$CUDA/" -name cupti.h 2>/dev/null | head -n 1)" ]; then
test_expect_success 'kernel_timing as Slurm jobs: the traces pulled back from the shared directory become figures' '
	mkdir -p proj/kt &&
	cp "$SRCDIR/tests/fixtures/ktrace/h100-demo.jsonl" proj/kt/trace.jsonl &&
	cat >proj/kt/demo.sh <<-\EOF &&
	[ -f "$CUDA_INJECTION64_PATH" ] || { echo "no injection library: $CUDA_INJECTION64_PATH" >&2; exit 5; }
	cp kt/trace.jsonl "$GPUORCH_KTRACE_OUT"
	EOF
	cat >proj/experiments/kt.json <<-\JSON &&
	{"schema": 1, "name": "kt-slurm", "phase": "kernel timing as Slurm jobs",
	 "sources": ["kt"], "targets": {"H100": "sm_90a"},
	 "programs": {"demo": {"run": ["sh", "kt/demo.sh"]}},
	 "problems": [{"name": "one", "params": {}}],
	 "steps": [{"kind": "kernel_timing", "program": "demo", "repeat": 2, "timeout_s": 120}],
	 "gates": [{"name": "saxpy under 100 us", "program": "demo", "metric": "kernel:saxpy.median_us", "op": "<", "value": 100}]}
	JSON
	(cd proj && git add -A && git commit -qm kt) &&
	(cd proj && SLURM_JWT=$tok "$GPUORCH" run experiments/kt.json --hosts ../hosts.json --host hpc) \
		>kt.out 2>&1 || { cat kt.out; false; } &&
	cat kt.out &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.steps.0.result.kernel_timing.runs)" = 2 &&
	test "$(jq_ $run/run.json hosts.0.steps.0.result.kernel_timing.launches)" = 202 &&
	test "$(jq_ "$run/run.json" "hosts.0.steps.0.result.kernel:saxpy.launches")" = 51 &&
	test -f "$run/$(jq_ $run/run.json hosts.0.steps.0.ktrace_2)" &&
	test "$(jq_ $run/run.json hosts.0.gates.0.verdict)" = PASS
'
else
	test_skip 'kernel_timing as Slurm jobs' "no CUPTI under $CUDA (cupti.h)"
fi

test_expect_success 'cleanup: stop Slurm' '
	slurm_stop
'

test_done
