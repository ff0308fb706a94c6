#!/bin/sh
# t-planted-bug.sh -- the harness must catch a planted indexing bug (GPU machine only).
#
# Builds attn_wmma twice for ARCH (default sm_90a): as shipped and with
# -DATTN_PLANT_BUG=1 (K rows read one key late), runs --mode=check on a small
# shape, and expects "pass" from the first and "fail" from the second.
# Without a CUDA device it prints SKIP with the reason and exits 0.
set -eu
cd "$(dirname "$0")/../.."
ARCH=${ARCH:-sm_90a}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
T=${TMPDIR:-/tmp}/gpuorch-planted.$$
mkdir -p "$T"
trap 'rm -rf "$T"' EXIT INT TERM
n=$(echo "$ARCH" | sed 's/sm_//')
SRC="kernels/attention/attn_wmma.cu kernels/attention/attn_common.cu kernels/harness/harness.cu"
"$NVCC" -O3 -gencode=arch=compute_$n,code=sm_$n -o "$T/good" $SRC
"$NVCC" -O3 -gencode=arch=compute_$n,code=sm_$n -DATTN_PLANT_BUG=1 -o "$T/bad" $SRC
ARGS="--mode=check --B=1 --H=8 --S=512 --D=64 --causal=0 --tol-max-abs=2e-2 --tol-rel-l2=1e-2"
good=$("$T/good" $ARGS 2>"$T/good.err" | tail -n 1)
bad=$("$T/bad" $ARGS 2>"$T/bad.err" | tail -n 1)
st() { printf '%s' "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])'; }
sg=$(st "$good"); sb=$(st "$bad")
if [ "$sg" = skipped ]; then
	echo "SKIP t-planted-bug: $(printf '%s' "$good" | python3 -c 'import json,sys; print(json.load(sys.stdin)["reason"])')"
	exit 0
fi
reason=$(printf '%s' "$bad" | python3 -c 'import json,sys; print(json.load(sys.stdin)["reason"])')
if [ "$sg" = pass ] && [ "$sb" = fail ]; then
	echo "PASS t-planted-bug: shipped kernel passes, planted bug caught: $reason"
	exit 0
fi
echo "FAIL t-planted-bug: shipped=$sg planted=$sb ($reason)"
cat "$T/good.err" "$T/bad.err"
exit 1
