#!/bin/bash
# wgmma-sass.sh -- the SASS of attn_wgmma's variants (built by wgmma-variants.sh into build/variants/) and
# ncu's per-instruction warp-state samples of the first, on the device machine (cuobjdump and ncu live there).
#   PROF="NAME..." kernels/attention/wgmma-sass.sh OUTDIR NAME...
# OUTDIR/sass-NAME.txt: cuobjdump -sass of each variant (all its kernels);
# OUTDIR/pc-NAME.tsv for each NAME in PROF: per SASS instruction (pc, text) the warp-state sample counts of
# one launch (ncu SourceCounters, warp sampling interval 2^5 cycles), read with ncu's Python report
# interface (extras/python/ncu_report.py). SHAPE: the harness's problem flags for that launch (default
# "--B=16 --H=16 --S=512 --D=64 --causal=0"; D=128's pipelined loop: "--B=4 --H=16 --S=4096 --D=128 --causal=0").
set -u
cd "$(dirname "$0")/../.." || exit 1
O=$1; shift
export PATH=/usr/local/cuda/bin:$PATH
B=build/variants
for n in "$@"; do
	cuobjdump -sass $B/$n > "$O/sass-$n.txt" 2>&1
	echo "sass $n: $(grep -c HGMMA "$O/sass-$n.txt") HGMMA, $(grep -c MUFU "$O/sass-$n.txt") MUFU, $(wc -l < "$O/sass-$n.txt") lines"
	# where each wgmma wait of the D=128 kernel sits: after how many exponentials and HGMMAs (FA_SMXORD)
	python3 - "$O/sass-$n.txt" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
fn = [i for i, l in enumerate(lines) if "Function" in l and "ILi128E" in l]
if fn:
    end = next((i for i in range(fn[0] + 1, len(lines)) if "Function" in lines[i]), len(lines))
    ex = hg = 0
    out = []
    for l in lines[fn[0]:end]:
        if "MUFU.EX2" in l: ex += 1
        if "HGMMA" in l: hg += 1
        if "WARPGROUP.DEPBAR" in l:
            out.append("%s@%d/%d" % (re.sub(r".*DEPBAR.LE gsb0, (0x[0-9a-f]+).*", r"\1", l), ex, hg))
    print("  D=128 waits (wait@exp2s/HGMMAs before it):", " ".join(out))
PY
done
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1)
for P in ${PROF:-}; do
timeout 300 "$NCU" --section SourceCounters --section WarpStateStats --section SchedulerStats --warp-sampling-interval 0 \
	--kernel-name regex:attn_wgmma --launch-skip 1 --launch-count 1 -f -o "$O/prof-$P" \
	$B/$P --mode=profile ${SHAPE:---B=16 --H=16 --S=512 --D=64 --causal=0} > "$O/ncu-src-$P.txt" 2>&1
echo "ncu rc=$?"; tail -3 "$O/ncu-src-$P.txt"
PYP=$(ls -d /opt/nvidia/nsight-compute/*/extras/python 2>/dev/null | head -1)
python3 - "$O/prof-$P.ncu-rep" "$PYP" > "$O/pc-$P.tsv" 2> "$O/pc-$P.err" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
import ncu_report
ctx = ncu_report.load_report(sys.argv[1])
act = ctx.range_by_idx(0).action_by_idx(0)
print("# kernel", act.name(), file=sys.stderr)
cols, data = [], {}
for n in sorted(act.metric_names()):
    m = act.metric_by_name(n)
    try:
        if not m.has_correlation_ids():
            continue
        ids = m.correlation_ids()
        k = m.num_instances()
    except Exception:
        continue
    if k == 0:
        continue
    cols.append(n)
    for i in range(k):
        pc = ids.as_uint64(i)
        data.setdefault(pc, {})[n] = m.as_double(i)
short = [c.replace("smsp__pcsamp_warps_issue_stalled_", "st_").replace("smsp__pcsamp_", "") for c in cols]
print("pc\tsass\t" + "\t".join(short))
for pc in sorted(data):
    try:
        s = act.sass_by_pc(pc)
    except Exception:
        s = "?"
    print("%x\t%s\t%s" % (pc, s, "\t".join("%g" % data[pc].get(c, 0) for c in cols)))
PY
echo "pc table rc=$? rows=$(wc -l < "$O/pc-$P.tsv")"; tail -3 "$O/pc-$P.err"
done
