#!/bin/sh
# cost: 75
# asan: yes
test_description='gpuorch init: a starting spec from what a repository holds, never over an existing one'
# cmd-init.c guesses the build system (CMake, then make, else nvcc per .cu
# with a main), the executables and the kernels, from the files git tracks;
# a CMake build's executables in any folder (init-cmake.c): cmake's file API,
# else a scan of every CMakeLists.txt when cmake is missing, fails or hangs.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"
# cmake configures a CUDA project in ~5-10 s alone and minutes on a loaded
# machine: no test here waits on its default bound (120 s) but the one that
# tests the bound itself (GPUORCH_INIT_CMAKE_TIMEOUT_S=1 below)
GPUORCH_INIT_CMAKE_TIMEOUT_S=1800
export GPUORCH_INIT_CMAKE_TIMEOUT_S

run_requires_sshd_nvcc 'gpuorch init tests'

# repo DIR [FIXTURE]: the sample project (or tests/fixtures/FIXTURE) as a
# git repository in DIR
repo() {
	rm -rf $1 && cp -R "$SRCDIR/tests/fixtures/${2:-byo-project}" $1 &&
	(cd $1 && git init -q && git config user.email t@example.com && git config user.name t &&
	 git add -A && git commit -qm sample)
}

test_expect_success 'a CMake project: its executable, the kernels, what to check; the spec is valid' '
	repo cm &&
	(cd cm && "$GPUORCH" init) >init.out &&
	cat init.out &&
	grep "^wrote experiments/cm.json" init.out &&
	grep "build system   cmake" init.out &&
	grep "program        saxpy_bench: builds build/saxpy_bench" init.out &&
	grep "kernels        1 found in .cu/.cuh files: saxpy" init.out &&
	grep "check before" init.out &&
	jq_ cm/experiments/cm.json programs.saxpy_bench.build.command.0 | grep "CMAKE_CUDA_ARCHITECTURES={arch_num}" &&
	test "$(jq_ cm/experiments/cm.json programs.saxpy_bench.run.0)" = build/saxpy_bench &&
	test "$(jq_ cm/experiments/cm.json steps --len)" = 3 &&
	test "$(jq_ cm/experiments/cm.json steps.2.kind)" = kernel_timing &&
	(cd cm && "$GPUORCH" spec check experiments/cm.json)
'

test_expect_success 'it never overwrites a spec: exit 2, the file as it was' '
	cp cm/experiments/cm.json before.json &&
	echo "{\"edited\": true}" >cm/experiments/cm.json &&
	test_expect_code 2 sh -c "cd cm && \"$GPUORCH\" init" 2>again.err &&
	cat again.err &&
	grep "exists already" again.err &&
	test "$(cat cm/experiments/cm.json)" = "{\"edited\": true}" &&
	(cd cm && "$GPUORCH" init --name other) >other.out &&
	test -f cm/experiments/other.json
'

test_expect_success 'a Makefile project: make and its first target' '
	repo mk &&
	(cd mk && git rm -q CMakeLists.txt && git commit -qm "no cmake" && "$GPUORCH" init) >mk.out &&
	cat mk.out &&
	grep "build system   make" mk.out &&
	test "$(jq_ mk/experiments/mk.json programs.saxpy_bench.build.command.0)" = make &&
	test "$(jq_ mk/experiments/mk.json programs.saxpy_bench.run.0)" = ./saxpy_bench
'

test_expect_success 'no build system: nvcc on each .cu file with a main' '
	repo nv &&
	(cd nv && git rm -q CMakeLists.txt Makefile && git commit -qm "bare" && "$GPUORCH" init) >nv.out &&
	cat nv.out &&
	grep "build system   nvcc" nv.out &&
	test "$(jq_ nv/experiments/nv.json programs.main.build.command.0)" = nvcc &&
	jq_ nv/experiments/nv.json programs.main.build.command | grep -e "-arch={arch}" &&
	jq_ nv/experiments/nv.json programs.main.build.command | grep src/main.cu
'

# a host that --dry-run names and never reaches; a PATH with git and no cmake
printf '%s\n' '{"hosts": [{"name": "dry", "address": "127.0.0.1", "port": 22, "user": "u",' \
	'  "identity": "agent", "workdir": "/tmp/gpuorch-dry", "gpu": "H100"}]}' >dry-hosts.json
mkdir -p gitonly itmp && ln -s "$(command -v git)" gitonly/git

# nested_ok DIR OUT: init's output OUT names both targets of init-nested where
# cmake builds them, and the spec passes spec check and run --dry-run
nested_ok() {
	grep "build system   cmake$" $2 &&
	grep "program        gemm_bench: builds build/src/gemm_bench, runs build/src/gemm_bench$" $2 &&
	grep "program        scan_bench: builds build/src/scan_bench, runs build/src/scan_bench$" $2 &&
	! grep -e old_bench -e host_tool $2 &&
	test "$(jq_ $1/experiments/$1.json programs --len)" = 2 &&
	test "$(jq_ $1/experiments/$1.json programs.gemm_bench.build.outputs.0)" = build/src/gemm_bench &&
	test "$(jq_ $1/experiments/$1.json programs.scan_bench.run.0)" = build/src/scan_bench &&
	jq_ $1/experiments/$1.json programs.scan_bench.build.command.0 | grep "CMAKE_CUDA_ARCHITECTURES={arch_num}" &&
	(cd $1 && "$GPUORCH" spec check experiments/$1.json) &&
	(cd $1 && "$GPUORCH" run experiments/$1.json --hosts ../dry-hosts.json --dry-run) >$1.dry &&
	grep "build gemm_bench for sm_90a" $1.dry &&
	# both programs are one cmake build (identical builds are one build),
	# which checks both outputs
	grep "cmake. .--build. .build. .-j. .*for o in .build/src/gemm_bench. .build/src/scan_bench.;" $1.dry &&
	grep "build scan_bench for sm_90a (key [0-9a-f]*); the same build as gemm_bench, made once" $1.dry &&
	grep "step benchmark.gemm_bench.default" $1.dry
}

if test_have_cmd cmake; then
test_expect_success 'CMake targets one folder down: cmake'"'"'s file API finds both, the spec passes --dry-run' '
	repo nest init-nested &&
	(cd nest && TMPDIR=$TRASH/itmp "$GPUORCH" init) >nest.out &&
	cat nest.out &&
	grep "targets from   cmake.s file API (configured in a temporary directory, nothing built)$" nest.out &&
	grep "kernels        2 found in .cu/.cuh files: gemm_naive, block_scan$" nest.out &&
	nested_ok nest nest.out &&
	test -z "$(ls -A itmp)"
'

test_expect_success 'cmake does not configure (no CUDA compiler): every CMakeLists.txt is scanned, and init says why' '
	repo nofail init-nested &&
	(cd nofail && CUDACXX=$TRASH/no-such-nvcc TMPDIR=$TRASH/itmp "$GPUORCH" init) >nofail.out &&
	cat nofail.out &&
	grep "targets from   add_executable() in src/CMakeLists.txt, each built where cmake puts it by default (not asked of cmake: cmake -S . failed to configure (exit 1): CMake Error at .*CUDACXX" nofail.out &&
	nested_ok nofail nofail.out &&
	test -z "$(ls -A itmp)"
'

test_expect_success 'cmake'"'"'s file API knows what a scan cannot: a ${VAR} name, an output folder, one built outside the tree' '
	repo api init-nested &&
	mkdir api/tools && cp api/src/scan.cu api/tools/tool.cu &&
	printf "%s\n" "add_executable(\${PROJECT_NAME}_tool tool.cu)" \
		"set_target_properties(\${PROJECT_NAME}_tool PROPERTIES RUNTIME_OUTPUT_DIRECTORY \${CMAKE_BINARY_DIR}/bin)" \
		"add_executable(elsewhere tool.cu)" \
		"set_target_properties(elsewhere PROPERTIES RUNTIME_OUTPUT_DIRECTORY $TRASH/outside)" >api/tools/CMakeLists.txt &&
	echo "add_subdirectory(tools)" >>api/CMakeLists.txt &&
	(cd api && git add -A && git commit -qm tools && "$GPUORCH" init) >api.out &&
	cat api.out &&
	grep "program        nested_tool: builds build/bin/nested_tool, runs build/bin/nested_tool$" api.out &&
	grep "not taken: elsewhere (built at $TRASH/outside/elsewhere, outside the tree)" api.out &&
	grep "program        gemm_bench: builds build/src/gemm_bench" api.out &&
	! grep "program        elsewhere" api.out &&
	(cd api && "$GPUORCH" spec check experiments/api.json)
'

test_expect_success 'a CMake build whose executables an option turns off: the .cu files with a main, by nvcc' '
	repo opt init-nested &&
	printf "%s\n" "cmake_minimum_required(VERSION 3.18)" "project(nested LANGUAGES CXX CUDA)" \
		"option(BUILD_BENCH \"the benchmarks\" OFF)" "if(BUILD_BENCH)" "  add_subdirectory(src)" \
		"endif()" >opt/CMakeLists.txt &&
	(cd opt && git commit -qam option && "$GPUORCH" init) >opt.out &&
	cat opt.out &&
	grep "build system   nvcc (no executable found in the CMake build: nvcc on each .cu with a main)$" opt.out &&
	grep "cmake build    cmake.s file API lists no executable target" opt.out &&
	grep "program        gemm: builds gemm, runs ./gemm$" opt.out &&
	grep "program        scan: builds scan, runs ./scan$" opt.out &&
	jq_ opt/experiments/opt.json programs.scan.build.command | grep src/scan.cu &&
	(cd opt && "$GPUORCH" spec check experiments/opt.json)
'
else
	test_skip 'cmake'"'"'s file API tests' 'cmake is not installed (scripts/deps.sh --tests installs it)'
fi

test_expect_success 'no cmake on PATH: the targets one folder down are scanned, the spec passes --dry-run' '
	repo nocm init-nested &&
	(cd nocm && PATH=$TRASH/gitonly "$GPUORCH" init) >nocm.out &&
	cat nocm.out &&
	grep "targets from   add_executable() in src/CMakeLists.txt, each built where cmake puts it by default (not asked of cmake: cmake is not installed (no cmake on PATH))$" nocm.out &&
	nested_ok nocm nocm.out
'

test_expect_success 'a cmake that hangs is stopped at GPUORCH_INIT_CMAKE_TIMEOUT_S; the scan is used' '
	mkdir -p slow && printf "#!/bin/sh\nsleep 120\n" >slow/cmake && chmod +x slow/cmake &&
	repo hang init-nested &&
	start=$(test_now_ms) &&
	(cd hang && PATH=$TRASH/slow:$PATH GPUORCH_INIT_CMAKE_TIMEOUT_S=1 TMPDIR=$TRASH/itmp "$GPUORCH" init) >hang.out &&
	test $(( $(test_now_ms) - start )) -lt 30000 &&
	cat hang.out &&
	grep "(not asked of cmake: cmake -S . did not configure within 1 s (GPUORCH_INIT_CMAKE_TIMEOUT_S) and was stopped)$" hang.out &&
	nested_ok hang hang.out &&
	test -z "$(ls -A itmp)"
'

test_expect_success 'no add_executable a scan can read: the .cu files with a main, by nvcc' '
	repo vars init-nested &&
	printf "%s\n" "add_executable(\${PROJECT_NAME}_gemm gemm.cu)" >vars/src/CMakeLists.txt &&
	(cd vars && git commit -qam vars && PATH=$TRASH/gitonly "$GPUORCH" init) >vars.out &&
	cat vars.out &&
	grep "build system   nvcc (no executable found in the CMake build: nvcc on each .cu with a main)$" vars.out &&
	grep "cmake build    no add_executable(NAME ...) in any CMakeLists.txt (not asked of cmake: cmake is not installed" vars.out &&
	grep "program        gemm: builds gemm, runs ./gemm$" vars.out &&
	grep "program        scan: builds scan, runs ./scan$" vars.out &&
	(cd vars && "$GPUORCH" spec check experiments/vars.json)
'

test_expect_success 'not a git repository: exit 2 with what to do' '
	mkdir -p plain && cp "$SRCDIR/tests/fixtures/byo-project/Makefile" plain/ &&
	test_expect_code 2 sh -c "cd plain && \"$GPUORCH\" init" 2>plain.err &&
	cat plain.err &&
	grep "git repository" plain.err &&
	test ! -e plain/experiments
'

test_expect_success 'the spec init wrote runs: the project builds on a host' '
	sshd_start a &&
	sshd_write_hosts_json hosts.json a &&
	(cd mk && git add experiments && git commit -qm spec &&
	 "$GPUORCH" run experiments/mk.json --hosts ../hosts.json) >run.out 2>&1 ||
	{ cat run.out; false; } &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.builds.0.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.builds.0.resources.0.kernel)" = _Z5saxpyifPKfPf
'

test_expect_success 'kernels are found past __launch_bounds__, templates and line breaks' '
	mkdir kn && (cd kn && git init -q && git config user.email t@example.com && git config user.name t &&
	printf "%s\n" "#include <cstdio>" \
		"__global__ void __launch_bounds__(256, 2) bounded(float *x) {}" \
		"template <int BM, int BN>" \
		"__global__ void __launch_bounds__((BM * BN) / 4)" \
		"    next_line(int n, float *x) {}" \
		"__global__ void" \
		"plain_break(float *x) {}" \
		"extern \"C\" __global__ void __attribute__((noinline)) c_kernel(float *x) {}" \
		"__global__ void templ_ret(cuda::std::array<int, 2> a) {}" \
		"int main() { return 0; }" >k.cu &&
	git add -A && git commit -qm k && "$GPUORCH" init) >kn.out &&
	cat kn.out &&
	grep "kernels        5 found in .cu/.cuh files: bounded, next_line, plain_break, c_kernel, templ_ret$" kn.out
'

test_done
