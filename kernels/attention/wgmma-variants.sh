#!/bin/bash
# wgmma-variants.sh -- attn_wgmma's compile-time variants on one H100 in one call: build each, check it
# at every shape (the harness adds the edge shapes: S=77 both masks, S=300 ragged, S=1), time the
# S512 D64 problems REPS times interleaved (and D128 S4k once), sanitizers and an ncu look at S512 D64.
#   kernels/attention/wgmma-variants.sh OUTDIR "name:defines" ...
#   e.g. wgmma-variants.sh $OUT "cwg2:-DFA_CWG=2" "cwg3:-DFA_CWG=3" "old::old.cu" (name:defines[:source])
# OUTDIR/results.tsv (tag, JSON line), OUTDIR/log.txt (stderr), OUTDIR/ptxas.txt; a table last.
# Env: REPS (2), MAXT (2 s per timing), BENS (the timed shapes, ';'-separated), D128 (1: time D=128 too), NCU (1: profile the first two variants), NCUS (the profiled shape), SAN (1: sanitizers on the
# first variant), SANS (the sanitizers' shapes, ';'-separated), SMOKE (1: a 30-s check of each variant
# first; one that fails or hangs is dropped), CHKX (more check shapes for every variant, ';'-separated),
# CHKV (the variants to check, space-separated; default every one not named head*).
set -u
cd "$(dirname "$0")/../.." || exit 1
O=$1; shift
mkdir -p "$O"
export PATH=/usr/local/cuda/bin:$PATH
G="-gencode=arch=compute_90a,code=sm_90a"
B=build/variants; mkdir -p $B
R="$O/results.tsv"; L="$O/log.txt"; : > "$R"; : > "$L"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$O/env.txt" 2>&1
names=()
for v in "$@"; do
	n=${v%%:*} d=${v#*:} src=kernels/attention/attn_wgmma.cu
	case $d in *:*) src=${d#*:} d=${d%%:*} ;; esac   # name:defines:source (another version of the kernel)
	names+=("$n")
	( nvcc -O3 -lineinfo $G -Xptxas=-v $d -o $B/$n $src kernels/attention/attn_common.cu \
		kernels/harness/harness.cu > $B/$n.log 2>&1 || echo "BUILD FAILED $n" >> $B/$n.log ) &
done
wait
for n in "${names[@]}"; do echo "== $n"; grep -E "FAILED|error|warn|registers|spill" $B/$n.log; done > "$O/ptxas.txt"
cat "$O/ptxas.txt"
# smoke: one short check a variant (30 s at most), before the full checks' 120 s timeouts: a variant that
# hangs or fails here is dropped from the rest of the run (SMOKE=0: no smoke)
if [ "${SMOKE:-1}" = 1 ]; then
	kept=()
	for n in "${names[@]}"; do
		for s in "--B=1 --H=2 --S=77 --D=64 --causal=1" "--B=16 --H=16 --S=512 --D=64 --causal=0"; do
			timeout 30 $B/$n --mode=check $s --tol-max-abs=2e-2 --tol-rel-l2=1e-2 --trials=1 > /dev/null 2>> "$O/smoke.txt"
			rc=$?
			[ $rc = 0 ] || break
		done
		if [ $rc = 0 ]; then kept+=("$n"); else echo "SMOKE FAILED $n (rc=$rc: $s)" | tee -a "$O/ptxas.txt"; fi
	done
	names=("${kept[@]}")
	[ ${#names[@]} -gt 0 ] || exit 1
fi
run() { # tag prog args...
	local tag=$1; shift
	echo "== $tag: $*" >> "$L"
	local line
	line=$(timeout 120 "$@" 2>>"$L" | tail -n 1)
	[ -n "$line" ] || line='{"status":"no output"}'
	printf '%s\t%s\n' "$tag" "$line" >> "$R"
}
AT="--tol-max-abs=2e-2 --tol-rel-l2=1e-2"
CHK=("--B=16 --H=16 --S=512 --D=64 --causal=0" "--B=16 --H=16 --S=512 --D=64 --causal=1" "--B=1 --H=8 --S=512 --D=64 --causal=0"
	"--B=2 --H=9 --S=1000 --D=64 --causal=1" "--B=2 --H=9 --S=1000 --D=64 --causal=0" "--B=1 --H=2 --S=77 --D=64 --causal=1"
	"--B=2 --H=12 --S=1000 --D=64 --causal=1" "--B=2 --H=12 --S=1000 --D=64 --causal=0"
	"--B=2 --H=3 --S=1000 --D=128 --causal=0" "--B=2 --H=3 --S=1000 --D=128 --causal=1")
[ -n "${CHKX:-}" ] && { IFS=';' read -r -a chkx <<< "$CHKX"; CHK+=("${chkx[@]}"); }
for n in "${names[@]}"; do
	case $n in head*) continue ;; esac   # the committed kernel: checked when it landed
	[ -n "${CHKV:-}" ] && case " $CHKV " in *" $n "*) ;; *) continue ;; esac   # CHKV: only these variants
	for s in "${CHK[@]}"; do run "check/$n/$(echo $s | tr -d ' -' | sed 's/[A-Za-z]*=//g')" $B/$n --mode=check $s $AT; done
done
run "check/${names[0]}/41640961281" $B/${names[0]} --mode=check --B=4 --H=16 --S=4096 --D=128 --causal=1 $AT
BT="--max-time-s=${MAXT:-2}"
BEN=("--B=16 --H=16 --S=512 --D=64 --causal=0" "--B=16 --H=16 --S=512 --D=64 --causal=1" "--B=1 --H=8 --S=512 --D=64 --causal=0"
	"--B=4 --H=16 --S=4096 --D=64 --causal=0")
[ -n "${BENS:-}" ] && IFS=';' read -r -a BEN <<< "$BENS"   # the timed shapes, ';'-separated
D128=${D128:-1}   # 0: no D=128 timings
for r in $(seq ${REPS:-2}); do
	for n in "${names[@]}"; do
		for s in "${BEN[@]}"; do run "bench$r/$n/$(echo $s | tr -d ' -' | sed 's/[A-Za-z]*=//g')" $B/$n --mode=bench $s $BT; done
	done
done
[ "$D128" = 1 ] && for n in "${names[@]:0:2}"; do
	for s in "--B=4 --H=16 --S=4096 --D=128 --causal=0" "--B=4 --H=16 --S=4096 --D=128 --causal=1"; do
		run "bench1/$n/$(echo $s | tr -d ' -' | sed 's/[A-Za-z]*=//g')" $B/$n --mode=bench $s $BT
	done
done
if [ "${SAN:-1}" = 1 ]; then
	n=${names[0]}
	IFS=';' read -r -a sans <<< "${SANS:---B=2 --H=12 --S=1000 --D=64 --causal=1;--B=2 --H=9 --S=1000 --D=64 --causal=1;--B=1 --H=3 --S=512 --D=64 --causal=0}"
	for t in memcheck synccheck racecheck; do
		for s in "${sans[@]}"; do
			echo "== san $t $n $s" >> "$O/san.txt"
			timeout 300 compute-sanitizer --tool $t $B/$n --mode=check $s $AT --trials=1 >> "$O/san.txt" 2>&1
			echo "rc=$?" >> "$O/san.txt"
		done
	done
	grep -E "^== san|ERROR SUMMARY|RACECHECK SUMMARY|rc=" "$O/san.txt"
fi
if [ "${NCU:-1}" = 1 ]; then
	for n in "${names[@]:0:2}"; do
		timeout 200 ncu --kernel-name regex:attn_wgmma --launch-count 1 --metrics \
sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum,dram__bytes.sum,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__inst_executed.sum \
			$B/$n --mode=profile ${NCUS:---B=16 --H=16 --S=512 --D=64 --causal=0} > "$O/ncu-$n.txt" 2>&1
		echo "== ncu $n"; grep -E "^\s+(sm__|lts__|dram__|gpu__|smsp__)" "$O/ncu-$n.txt"
	done
fi
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$O/env.txt" 2>&1
python3 - "$R" <<'PY' | tee "$O/summary.txt"
import json, sys
for line in open(sys.argv[1]):
    tag, js = line.rstrip("\n").split("\t", 1)
    try:
        j = json.loads(js)
    except Exception:
        print(tag, "BAD", js[:100]); continue
    st = j.get("status")
    if tag.startswith("check"):
        c = j.get("correctness") or {}
        tr = c.get("trials") or []
        print("%-40s %-6s trials=%d failed=%d rel_l2=%s max_abs=%s unwritten=%s" % (tag, st, len(tr), sum(1 for x in tr if not x.get("pass")),
              c.get("rel_l2"), c.get("max_abs"), sum(x.get("unwritten", 0) for x in tr)))
    else:
        t = j.get("timing") or {}
        m = j.get("model") or {}
        print("%-40s %-6s med=%s us p10=%s p90=%s tflops=%s n=%s" % (tag, st, t.get("median_us"), t.get("p10_us"), t.get("p90_us"), m.get("tflops"), t.get("n")))
PY
