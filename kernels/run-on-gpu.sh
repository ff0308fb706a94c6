#!/bin/bash
# run-on-gpu.sh -- one full pass on a GPU machine: build, peaks, checks at every shape, benchmarks, summary.
#
# usage: kernels/run-on-gpu.sh [OUTDIR]      (OUTDIR default: $OUT or ./gpu-out)
# Writes OUTDIR/results.tsv (tag<TAB>result JSON), OUTDIR/log.txt (stderr of
# every program) and OUTDIR/build.txt; prints a summary table last.
# MAXT (default 3) caps each benchmark's timing loop in seconds.
set -u
cd "$(dirname "$0")/.." || exit 1
O=${1:-${OUT:-gpu-out}}
mkdir -p "$O"
MAXT=${MAXT:-3}
R="$O/results.tsv"; L="$O/log.txt"
: > "$R"; : > "$L"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv; nvcc --version | tail -1; python3 -c 'import torch; print("torch", torch.__version__)'; } 2>&1 | tee "$O/env.txt"

B=build/gpu
JOBS=16 kernels/build-all.sh "$B" > "$O/build.txt" 2>&1 || { cat "$O/build.txt"; echo "BUILD FAILED"; }
tail -3 "$O/build.txt"
G="-gencode=arch=compute_90a,code=sm_90a"
nvcc -O3 $G -o $B/peaks kernels/peaks/peaks.cu kernels/harness/harness.cu -lcublas 2>>"$O/build.txt"
nvcc -O3 $G -DWGMMA_SWAP_LBO_SBO=1 -o $B/wgmma_swapped kernels/wgmma/wgmma_tile.cu kernels/harness/harness.cu 2>>"$O/build.txt"
cat $B/*/*.sm_90a.log | grep -E "Compiling entry|registers|spill" > "$O/ptxas-sm90a.txt"

run() { # tag prog args...
	local tag=$1; shift
	echo "== $tag: $*" >> "$L"
	local line
	line=$(timeout 300 "$@" 2>>"$L" | tail -n 1)
	echo "rc=$? $tag" >> "$L"
	[ -n "$line" ] || line='{"status":"no output"}'
	printf '%s\t%s\n' "$tag" "$line" >> "$R"
	printf '%s\t%s\n' "$tag" "$(printf '%s' "$line" | cut -c1-160)"
}

run peaks $B/peaks --mode=bench --max-time-s=4
PK=$(tail -n 1 "$R" | cut -f2 | python3 -c 'import json,sys; p=json.load(sys.stdin).get("peaks") or {}; print("--peak-tflops=%s --peak-gbps=%s" % (p.get("tflops_f16",0), p.get("gbps_copy",0)))')
echo "peaks: $PK"

AT="--tol-max-abs=2e-2 --tol-rel-l2=1e-2"
SHAPES=("--B=16 --H=16 --S=512 --D=64 --causal=0" "--B=1 --H=8 --S=512 --D=64 --causal=0" "--B=4 --H=16 --S=4096 --D=128 --causal=0")
NAMES=(B16-S512-D64 B1-S512-D64 B4-S4096-D128)
for p in attn_reference attn_wmma attn_cublas; do
	for i in 0 1 2; do
		run "check/$p/${NAMES[$i]}" $B/attention-forward/$p.sm_90a --mode=check ${SHAPES[$i]} $AT
	done
done
for i in 0 1 2; do run "check/sdpa/${NAMES[$i]}" python3 kernels/baselines/sdpa.py --mode=check ${SHAPES[$i]} $AT; done
run check/attn_wmma/B4-S4096-D128-causal $B/attention-forward/attn_wmma.sm_90a --mode=check --B=4 --H=16 --S=4096 --D=128 --causal=1 $AT
run check/wgmma_tile/M64-N64-K16 $B/wgmma-tile/wgmma_tile.sm_90a --mode=check --M=64 --N=64 --K=16 --tol-rel-l2=1e-3
run check/wgmma_tile/M4096 $B/wgmma-tile/wgmma_tile.sm_90a --mode=check --M=4096 --N=4096 --K=4096 --tol-rel-l2=1e-3
run check/wgmma_swapped/M256 $B/wgmma_swapped --mode=check --M=256 --N=256 --K=256 --tol-rel-l2=1e-3 --trials=1
BS="--M=8192 --N=8192 --K=8192 --block=128 --topk=16"
run check/bsr_gemm/8192-top16 $B/bsr-gemm/bsr_gemm.sm_90a --mode=check $BS --tol-rel-l2=2e-3
run check/gemm_cublas/8192 $B/bsr-gemm/gemm_cublas.sm_90a --mode=check $BS --tol-rel-l2=2e-3
run check/matmul/8192 python3 kernels/baselines/matmul.py --mode=check $BS --tol-rel-l2=2e-3

BT="--max-time-s=$MAXT $PK"
for p in attn_reference attn_wmma attn_cublas; do
	for i in 0 1 2; do
		run "bench/$p/${NAMES[$i]}" $B/attention-forward/$p.sm_90a --mode=bench ${SHAPES[$i]} $BT
	done
done
for i in 0 1 2; do run "bench/sdpa/${NAMES[$i]}" python3 kernels/baselines/sdpa.py --mode=bench ${SHAPES[$i]} $BT; done
for be in flash cudnn; do run "bench/sdpa-$be/B4-S4096-D128" python3 kernels/baselines/sdpa.py --mode=bench ${SHAPES[2]} --backend=$be $BT; done
run bench/attn_wmma/B16-S512-D64-repeat $B/attention-forward/attn_wmma.sm_90a --mode=bench ${SHAPES[0]} $BT
run bench/wgmma_tile/M64-N64-K16 $B/wgmma-tile/wgmma_tile.sm_90a --mode=bench --M=64 --N=64 --K=16 $BT
run bench/wgmma_tile/M4096 $B/wgmma-tile/wgmma_tile.sm_90a --mode=bench --M=4096 --N=4096 --K=4096 $BT
run bench/gemm_cublas/M4096 $B/wgmma-tile/gemm_cublas.sm_90a --mode=bench --M=4096 --N=4096 --K=4096 $BT
run bench/bsr_gemm/8192-top16 $B/bsr-gemm/bsr_gemm.sm_90a --mode=bench $BS $BT
run bench/gemm_cublas/8192 $B/bsr-gemm/gemm_cublas.sm_90a --mode=bench $BS $BT
run bench/matmul/8192 python3 kernels/baselines/matmul.py --mode=bench $BS $BT
run bench/gemm_cublas/8192-repeat $B/bsr-gemm/gemm_cublas.sm_90a --mode=bench $BS $BT

echo "== tests/gpu" | tee -a "$L"
for t in tests/gpu/t-*.sh; do sh "$t" 2>&1 | tee -a "$O/tests-gpu.txt"; done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$O/env.txt" 2>&1

python3 - "$R" <<'PY' | tee "$O/summary.txt"
import json, sys
rows = []
for ln in open(sys.argv[1]):
    tag, js = ln.rstrip("\n").split("\t", 1)
    try:
        d = json.loads(js)
    except Exception:
        d = {"status": "unparsable"}
    t, m, c = d.get("timing") or {}, d.get("model") or {}, d.get("correctness") or {}
    rows.append((tag, d.get("status"), c.get("rel_l2"), c.get("max_abs"), t.get("median_us"), t.get("cv_pct"),
                 t.get("n"), t.get("stop_rule"), m.get("tflops"), m.get("pct_of_floor"), m.get("impossible"),
                 (d.get("reason") or "")[:70]))
f = lambda v, s="%.4g": "-" if v is None else (s % v if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v))
print("%-42s %-7s %-9s %-9s %-10s %-6s %-6s %-9s %-8s %-6s %-5s %s" % ("tag", "status", "rel_l2", "max_abs", "median_us", "cv%", "n", "stop", "TFLOPS", "%flr", "imp", "reason"))
for r in rows:
    print("%-42s %-7s %-9s %-9s %-10s %-6s %-6s %-9s %-8s %-6s %-5s %s" % (r[0], r[1], f(r[2], "%.2e"), f(r[3], "%.2e"), f(r[4], "%.2f"), f(r[5], "%.2f"), f(r[6], "%d"), f(r[7]), f(r[8], "%.1f"), f(r[9], "%.0f"), f(r[10]), r[11]))
med = {r[0]: r[4] for r in rows}
def cmp(a, b, lim):
    if med.get(a) and med.get(b):
        d = 100 * abs(med[a] - med[b]) / med[b]
        print("compare %s vs %s: %.2f%% (%s %.0f%%)" % (a, b, d, "within" if d <= lim else "OVER", lim))
cmp("bench/attn_wmma/B16-S512-D64-repeat", "bench/attn_wmma/B16-S512-D64", 2)
cmp("bench/gemm_cublas/8192-repeat", "bench/gemm_cublas/8192", 2)
cmp("bench/gemm_cublas/8192", "bench/matmul/8192", 3)
PY
