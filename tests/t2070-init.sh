#!/bin/sh
# asan: yes
test_description='gpuorch init: a starting spec from what a repository holds, never over an existing one'
# cmd-init.c guesses the build system (CMake, then make, else nvcc per .cu
# with a main), the executables and the kernels, from the files git tracks.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'gpuorch init tests'

# repo DIR: the sample project as a git repository in DIR
repo() {
	rm -rf $1 && cp -R "$SRCDIR/tests/fixtures/byo-project" $1 &&
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
