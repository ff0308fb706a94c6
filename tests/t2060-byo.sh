#!/bin/sh
# cost: 30
# asan: yes
test_description='bring your own code: a project built by its own Makefile or CMake, run by its own command line, figures read from its output'
# tests/fixtures/byo-project is a small CUDA project that knows nothing of
# gpuorch: a Makefile and a CMakeLists.txt build saxpy_bench with nvcc
# (compile-only here: the kernel is built, the host loop runs), which prints
# "GFLOPS: X", "max_error: E" and a JSON line. Checks are && chains.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'bring-your-own-code tests'

# spec NAME EXTRA-PROGRAMS EXTRA-TOP: the byo spec, with programs and top-level keys added
spec() {
	cat >proj/experiments/$1.json <<-JSON
	{
	  "schema": 1, "name": "byo-$1", "phase": "Test phase: bring your own code",
	  "sources": ["."],
	  "targets": {"H100": "sm_90a"},
	  "programs": {
	    "saxpy_make": {
	      "build": {"command": ["make", "ARCH={arch_num}"], "outputs": ["saxpy_bench"], "ptxas": true},
	      "run": ["./saxpy_bench", "--n={n}"],
	      "check": ["./saxpy_bench", "--check", "--n={n}"],
	      "figures": {"gflops": {"regex": "^GFLOPS: ([0-9.]+)$", "unit": "GFLOP/s", "better": "higher"},
	                  "max_error": {"regex": "max_error: ([-0-9.e+]+)", "better": "lower"},
	                  "host_us": {"json": "timing.median_us", "unit": "us", "better": "lower"}},
	      "needs_gpu": false
	    }$2
	  },
	  "problems": [{"name": "n4k", "params": {"n": 4096}}, {"name": "wrong", "params": {"n": 7}}],
	  "steps": [
	    {"kind": "correctness", "program": "saxpy_make"},
	    {"kind": "benchmark", "program": "saxpy_make", "problems": ["n4k"]}$3
	  ],
	  "gates": [{"program": "saxpy_make", "problem": "n4k", "metric": "max_error", "op": "<", "value": 1e-3},
	            {"program": "saxpy_make", "problem": "n4k", "metric": "gflops", "op": ">", "value": 0}],
	  "expected": [{"program": "saxpy_make", "problem": "n4k", "metric": "gflops", "op": ">", "value": 0}]
	}
	JSON
}

CMAKE_PROG=',
	    "saxpy_cmake": {
	      "build": {"command": [["cmake", "-S", ".", "-B", "build", "-DCMAKE_CUDA_ARCHITECTURES={arch_num}"],
	                            ["cmake", "--build", "build"]],
	                "outputs": ["build/saxpy_bench"]},
	      "run": ["build/saxpy_bench", "--n={n}"],
	      "figures": {"gflops": {"regex": "GFLOPS: ([0-9.]+)"}},
	      "needs_gpu": false
	    }'


test_expect_success 'setup: the sample project as a git repository, with an ignored secret and build output' '
	sshd_start a &&
	sshd_write_hosts_json hosts.json a &&
	rm -rf proj && cp -R "$SRCDIR/tests/fixtures/byo-project" proj &&
	mkdir proj/experiments &&
	echo "TOKEN=secret" >proj/.env &&
	spec make "" "" &&
	spec both "$CMAKE_PROG" ",
	    {\"kind\": \"benchmark\", \"program\": \"saxpy_cmake\", \"problems\": [\"n4k\"]}" &&
	(cd proj && git init -q && git config user.email t@example.com && git config user.name t &&
	 git add -A && git commit -qm "sample project") &&
	(cd proj && PATH=$(dirname $(nvcc_path)):$PATH make ARCH=90a >/dev/null 2>&1) &&
	test -x proj/saxpy_bench
'

test_expect_success 'gpuorch spec: what ships is the tracked tree, not the local build or .env' '
	(cd proj && "$GPUORCH" run experiments/make.json --hosts ../hosts.json --dry-run) >plan.out &&
	cat plan.out &&
	grep "  src/main.cu$" plan.out &&
	grep "  Makefile$" plan.out &&
	! grep -e "\.env" -e "saxpy_bench$" plan.out &&
	grep "'"'make' 'ARCH=90a'"'" plan.out
'

test_expect_success 'the Makefile builds it on the host; ptxas resources, figures, check and gates are recorded' '
	test_expect_code 1 sh -c "cd proj && \"$GPUORCH\" run experiments/make.json --hosts ../hosts.json" >run1.out 2>&1;
	cat run1.out &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.builds.0.status)" = PASS &&
	jq_ $run/run.json hosts.0.builds.0.command | grep "'"'make' 'ARCH=90a'"'" &&
	test "$(jq_ $run/run.json hosts.0.builds.0.resources.0.kernel)" = _Z5saxpyifPKfPf &&
	test "$(jq_ $run/run.json hosts.0.builds.0.resources.0.registers)" -gt 0 &&
	test "$(run_step $run correctness.saxpy_make.n4k status)" = PASS &&
	test "$(run_step $run correctness.saxpy_make.n4k result.mode)" = check &&
	test "$(run_step $run benchmark.saxpy_make.n4k status)" = PASS &&
	test "$(run_step $run benchmark.saxpy_make.n4k result.mode)" = run &&
	gf=$(run_step $run benchmark.saxpy_make.n4k result.gflops) &&
	echo "gflops $gf" &&
	awk "BEGIN { exit !($gf > 0) }" &&
	test "$(run_step $run benchmark.saxpy_make.n4k result.figures.gflops.unit)" = GFLOP/s &&
	test "$(run_step $run benchmark.saxpy_make.n4k result.figures.gflops.value)" = "$gf" &&
	test "$(run_step $run benchmark.saxpy_make.n4k result.max_error)" = 0 &&
	test "$(run_step $run benchmark.saxpy_make.n4k result.figures.host_us.source)" = json &&
	log=$run/$(run_step $run benchmark.saxpy_make.n4k stdout_log) &&
	grep "^GFLOPS: " $log | awk -v g=$gf "{ exit !(\$2 == g + 0) }" &&
	us=$(run_step $run benchmark.saxpy_make.n4k result.host_us) &&
	sed -n "s/.*\"median_us\": \([0-9.]*\).*/\1/p" $log | awk -v u=$us "{ exit !(\$1 == u + 0) }"
'

test_expect_success 'the report lists the figures read from the output' '
	run=$(last_run_dir) &&
	grep "^## Figures from the programs. output" $run/report.md &&
	grep "^| a | benchmark.saxpy_make.n4k | gflops | [0-9.]* | GFLOP/s | higher | GFLOPS: [0-9.]* |$" $run/report.md &&
	grep "^| a | benchmark.saxpy_make.n4k | host_us | [0-9.e+-]* | us | lower | json |$" $run/report.md &&
	grep "^| .saxpy_make. gflops > 0 | a | n4k | [0-9.]* | ✅ met |$" $run/report.md &&
	sed -n "/^## At a glance/,/^## /p" $run/report.md >glance.md &&
	cat glance.md &&
	(cd proj && "$GPUORCH" runs --limit 1) >runs.out &&
	cat runs.out &&
	grep "^    a: saxpy_make n4k gflops [0-9.]* GFLOP/s, " runs.out &&
	grep "^- \*\*a\*\* .saxpy_make. n4k: gflops \*\*[0-9.]* GFLOP/s\*\*, max_error \*\*[-0-9.e+]*\*\*, host_us \*\*[0-9.e+-]* us\*\* — " glance.md &&
	grep "^| a | .saxpy_make. | n4k | — | gflops \*\*[0-9.]* GFLOP/s\*\* (+2 more) | — | — | ✅ |$" glance.md
'

test_expect_success 'a check command that exits non-zero fails the step; its output is kept' '
	run=$(last_run_dir) &&
	test "$(run_step $run correctness.saxpy_make.wrong status)" = FAIL &&
	test "$(run_step $run correctness.saxpy_make.wrong exit_code)" = 1 &&
	test "$(run_step $run correctness.saxpy_make.wrong result.correctness.pass)" = false &&
	test "$(run_step $run correctness.saxpy_make.n4k result.correctness.pass)" = true &&
	grep "\`saxpy_make\` n4k: .*correct ✅" $run/report.md &&
	grep "wrong results\*\* on a: \`saxpy_make\` wrong" $run/report.md &&
	! grep "wrong results\*\* on a: \`saxpy_make\` n4k" $run/report.md &&
	grep "check: WRONG" $run/$(run_step $run correctness.saxpy_make.wrong stdout_log)
'

test_expect_success 'gates judge figures read from the output' '
	run=$(last_run_dir) &&
	jq_ $run/run.json hosts.0.gates >gates.json && cat gates.json &&
	test "$(jq_ $run/run.json hosts.0.gates.0.metric)" = max_error &&
	test "$(jq_ $run/run.json hosts.0.gates.0.verdict)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.gates.1.metric)" = gflops &&
	test "$(jq_ $run/run.json hosts.0.gates.1.verdict)" = PASS
'

test_expect_success 'a re-run reuses the project build' '
	test_expect_code 1 sh -c "cd proj && \"$GPUORCH\" run experiments/make.json --hosts ../hosts.json" >run2.out 2>&1;
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.builds.0.reused)" = true &&
	test "$(run_step $run benchmark.saxpy_make.n4k status)" = PASS
'

test_expect_success 'CMake builds it too, in its own build directory' '
	test_expect_code 1 sh -c "cd proj && \"$GPUORCH\" run experiments/both.json --hosts ../hosts.json" >run3.out 2>&1;
	cat run3.out &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.builds --len)" = 2 &&
	test "$(jq_ $run/run.json hosts.0.builds.1.status)" = PASS &&
	jq_ $run/run.json hosts.0.builds.1.command | grep -- "-DCMAKE_CUDA_ARCHITECTURES=90a" &&
	test "$(run_step $run benchmark.saxpy_cmake.n4k status)" = PASS &&
	awk "BEGIN { exit !($(run_step $run benchmark.saxpy_cmake.n4k result.gflops) > 0) }"
'

test_expect_success 'a figure the output does not print fails the benchmark, naming it' '
	sed "s/\\^GFLOPS: /^GFLOP\\/s: /" proj/experiments/make.json >proj/experiments/nofig.json &&
	grep "GFLOP/s: " proj/experiments/nofig.json &&
	test_expect_code 1 sh -c "cd proj && \"$GPUORCH\" run experiments/nofig.json --hosts ../hosts.json" >run4.out 2>&1;
	run=$(last_run_dir) &&
	test "$(run_step $run benchmark.saxpy_make.n4k status)" = FAIL &&
	run_step $run benchmark.saxpy_make.n4k reason | grep "figures not found in the output: .gflops.: no line of the output matches" &&
	test "$(jq_ $run/run.json hosts.0.gates.1.verdict)" = FAIL
'

test_expect_success 'spec errors: an unknown placeholder, a regex without a group, build without run' '
	sed "s/--n={n}/--n={size}/" proj/experiments/make.json >proj/experiments/bad1.json &&
	test_expect_code 2 "$GPUORCH" spec check proj/experiments/bad1.json --root proj 2>bad1.err &&
	cat bad1.err &&
	grep "programs.saxpy_make.run\[1\].*{size}. is not {arch}, {arch_num} or a parameter of problem" bad1.err &&
	sed "s/(\[0-9.\]+)\\$/[0-9.]+$/" proj/experiments/make.json >proj/experiments/bad2.json &&
	test_expect_code 2 sh -c "cd proj && \"$GPUORCH\" run experiments/bad2.json --hosts ../hosts.json --dry-run" 2>bad2.err &&
	cat bad2.err &&
	grep "figures.gflops.*has no group" bad2.err &&
	sed "s/\"run\": \[\"build\/saxpy_bench\", \"--n={n}\"\],//" proj/experiments/both.json >proj/experiments/bad3.json &&
	! grep "build/saxpy_bench.*--n" proj/experiments/bad3.json &&
	test_expect_code 2 "$GPUORCH" spec check proj/experiments/bad3.json --root proj 2>bad3.err &&
	cat bad3.err &&
	grep "programs.saxpy_cmake.: has .build. but no .run." bad3.err
'
test_expect_success 'spec check accepts the valid specs and says what the sources select' '
	(cd proj && "$GPUORCH" spec check experiments/both.json) >ok.out &&
	cat ok.out &&
	grep "experiments/both.json: valid: 2 programs, 2 problems, 3 steps; .sources. select 7 files" ok.out
'

test_expect_success 'a build tool missing from the host'"'"'s PATH: the build says which command and why' '
	sed "s/\"command\": \[\"make\", /\"command\": [\"gpuorch-no-such-tool\", /" proj/experiments/make.json \
		>proj/experiments/notool.json &&
	grep gpuorch-no-such-tool proj/experiments/notool.json &&
	test_expect_code 1 sh -c "cd proj && \"$GPUORCH\" run experiments/notool.json --hosts ../hosts.json" >run5.out 2>&1;
	cat run5.out &&
	grep "build saxpy_make sm_90a: FAIL: .*gpuorch-no-such-tool: not found: exit code 127 (a command was not found: SSH commands run with the host.s non-login PATH" run5.out
'

test_done
