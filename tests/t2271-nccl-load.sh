#!/bin/sh
# cost: 15
test_description='kernels/nccl loads libnccl.so.2 at run time: LD_LIBRARY_PATH first, then the path the spec names (--nccl_lib), then GPUORCH_NCCL_LIB (a directory or the file), then a python nvidia-nccl wheel, then the loader; a library lacking a call is passed over, saying so; none found says where it looked'
# tests/harness/test_nccl_load.cu calls nccl_load() and prints what it
# found; the libraries are stand-ins built here with cc, exporting the seven
# NCCL calls nccl_api.h declares (ncclGetVersion answers 22105 or 22106, so
# the test tells them apart). No GPU is needed.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/runlib.sh"

if ! NVCC=$(nvcc_path) || ! test_have_cmd cc; then
	test_skip 'nccl load' 'no nvcc or no C compiler (cc) on this machine'
	test_done
fi

# fake DIR VERSION [LEAVE_OUT]: DIR/libnccl.so.2 answering VERSION, without the call LEAVE_OUT
fake() {
	mkdir -p "$1" &&
	cat >"$1/fake.c" <<-EOF &&
	int ncclGetVersion(int *v) { *v = $2; return 0; }
	int ncclCommInitAll(void *c, int n, const int *d) { (void)c; (void)n; (void)d; return 0; }
	int ncclCommDestroy(void *c) { (void)c; return 0; }
	int ncclGroupStart(void) { return 0; }
	int ncclGroupEnd(void) { return 0; }
	int ncclAllReduce(const void *a, void *b, unsigned long n, int t, int o, void *c, void *s) { (void)a; (void)b; (void)n; (void)t; (void)o; (void)c; (void)s; return 0; }
	const char *ncclGetErrorString(int r) { (void)r; return "stand-in"; }
	EOF
	if [ -n "${3:-}" ]; then
		grep -v "$3" "$1/fake.c" >"$1/f.c" && mv "$1/f.c" "$1/fake.c"
	fi &&
	cc -shared -fPIC -o "$1/libnccl.so.2" "$1/fake.c"
}
load() {   # load [VAR=VALUE...]: the driver's answer, under a bare environment plus VARs
	env -i HOME="$TRASH/home" PATH=/usr/bin:/bin "$@" ./load >out && cat out
}
named() {   # named PATH [VAR=VALUE...]: the same, the spec naming PATH (--nccl_lib)
	_n=$1
	shift
	env -i HOME="$TRASH/home" PATH=/usr/bin:/bin "$@" ./load "$_n" >out && cat out
}

test_expect_success 'setup: the driver, stand-in libraries, a venv with the wheel' '
	"$NVCC" -O1 -o load "$SRCDIR/tests/harness/test_nccl_load.cu" "$SRCDIR/kernels/nccl/nccl_api.cu" -ldl >build.out 2>&1 ||
		{ cat build.out; false; } &&
	fake ldp 22105 && fake envlib 22106 && fake bad 22107 ncclAllReduce &&
	fake venv/lib/python3.11/site-packages/nvidia/nccl/lib 22108 &&
	mkdir -p venv/bin home
'

test_expect_success 'LD_LIBRARY_PATH comes first, then GPUORCH_NCCL_LIB (a directory or the file)' '
	load LD_LIBRARY_PATH="/nonexistent:$TRASH/ldp" GPUORCH_NCCL_LIB="$TRASH/envlib" &&
	grep "^path=$TRASH/ldp/libnccl.so.2\$" out && grep "^version=22105\$" out &&
	load GPUORCH_NCCL_LIB="$TRASH/envlib" && grep "^version=22106\$" out &&
	load GPUORCH_NCCL_LIB="$TRASH/envlib/libnccl.so.2" && grep "^path=$TRASH/envlib/libnccl.so.2\$" out
'

test_expect_success 'the path the spec names comes after LD_LIBRARY_PATH and before GPUORCH_NCCL_LIB' '
	named "$TRASH/envlib" GPUORCH_NCCL_LIB="$TRASH/ldp" && grep "^version=22106\$" out &&
	named "$TRASH/envlib" LD_LIBRARY_PATH="$TRASH/ldp" && grep "^version=22105\$" out &&
	named "$TRASH/nowhere" GPUORCH_NCCL_LIB="$TRASH/ldp" && grep "^version=22105\$" out &&
	grep "^why=; $TRASH/nowhere: no such file\$" out
'

test_expect_success 'a library lacking a call is passed over, and the reason kept' '
	load GPUORCH_NCCL_LIB="$TRASH/bad" PATH="$TRASH/venv/bin:/usr/bin:/bin" &&
	grep "^version=22108\$" out &&
	grep "^why=; $TRASH/bad/libnccl.so.2 lacks ncclAllReduce\$" out
'

test_expect_success 'the nvidia-nccl wheel of a python on PATH, or of VIRTUAL_ENV' '
	load PATH="$TRASH/venv/bin:/usr/bin:/bin" &&
	grep "^path=$TRASH/venv/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2\$" out &&
	load VIRTUAL_ENV="$TRASH/venv" && grep "^version=22108\$" out
'

test_expect_success 'none of those: the loader'"'"'s own search, else an error naming where it looked' '
	load GPUORCH_NCCL_LIB="$TRASH/nowhere" &&
	if grep "^rc=0\$" out; then
		: "this machine has an NCCL the loader finds (ldconfig)" &&
		grep "^path=libnccl.so.2\$" out
	else
		grep "^why=no NCCL: libnccl.so.2 is not in LD_LIBRARY_PATH, --nccl_lib (not given), GPUORCH_NCCL_LIB ($TRASH/nowhere), a python site-packages/nvidia/nccl/lib/libnccl.so.2 (pip install nvidia-nccl-cu12, or torch) nor the loader.s path" out
	fi
'

test_done
