#!/bin/sh
test_description='the CUPTI injection library and its demo compile (compile-only: no GPU here)'
# kernels/ktrace/gpuorch_ktrace.c is loaded by the CUDA driver through
# CUDA_INJECTION64_PATH; the driver looks up InitializeInjection, so the
# library must export it. Its output format is checked by
# tests/unit/test_ktrace.c on a trace captured on an H100.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/runlib.sh"

if ! NVCC=$(nvcc_path); then
	test_skip 'ktrace compile' 'no nvcc on this machine (install the CUDA toolkit)'
	test_done
fi
CUDA=$(dirname "$(dirname "$NVCC")")
INC=$(dirname "$(find -L "$CUDA/" -name cupti.h 2>/dev/null | head -n 1)")
LIB=$(dirname "$(find -L "$CUDA/" -name 'libcupti.so' 2>/dev/null | head -n 1)")
if [ ! -f "$INC/cupti.h" ] || [ ! -e "$LIB/libcupti.so" ]; then
	test_skip 'ktrace compile' "no CUPTI under $CUDA (cupti.h, libcupti.so)"
	test_done
fi

test_expect_success 'the injection library builds warning-free and exports InitializeInjection' '
	cc -O2 -Wall -Wextra -Werror -shared -fPIC -I"$INC" "$SRCDIR/kernels/ktrace/gpuorch_ktrace.c" \
		-o libgpuorch_ktrace.so -L"$LIB" -lcupti -Wl,-rpath,"$LIB" &&
	nm -D --defined-only libgpuorch_ktrace.so >syms &&
	grep " T InitializeInjection$" syms &&
	ldd libgpuorch_ktrace.so | grep libcupti
'

test_expect_success 'the demo program builds for sm_90a' '
	"$NVCC" -O2 -arch=sm_90a -o ktrace_demo "$SRCDIR/kernels/ktrace/ktrace_demo.cu" &&
	test -x ktrace_demo
'

test_done
