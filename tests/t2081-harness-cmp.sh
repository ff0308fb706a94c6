#!/bin/sh
# cost: 10
test_description='the harness compares outputs with the reference: NaN, Inf and unwritten outputs are counted and fail (compiled by nvcc, run on the CPU)'
# tests/harness/test_cmp.cu includes kernels/harness/harness.cu and runs its
# comparison (cmp_elem, cmp_errors, cmp_bad_words) on the host: no GPU needed.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/runlib.sh"

if ! NVCC=$(nvcc_path); then
	test_skip 'harness compare' 'no nvcc on this machine (install the CUDA toolkit)'
	test_done
fi

test_expect_success 'the comparison, built by nvcc, passes its checks on the CPU' '
	"$NVCC" -O1 -arch=sm_90a -o test_cmp "$SRCDIR/tests/harness/test_cmp.cu" -ldl >build.out 2>&1 ||
	{ cat build.out; false; } &&
	./test_cmp >out &&
	cat out &&
	! grep "^FAIL" out &&
	grep "^ok   an all-NaN output has infinite errors, never 0$" out
'

test_done
