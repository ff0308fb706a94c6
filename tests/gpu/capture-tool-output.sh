#!/bin/bash
# capture-tool-output.sh -- on the GPU machine: capture real Nsight Compute CSV
# and compute-sanitizer output (clean and planted-bug kernels) as parser test
# fixtures, into OUTDIR. Also the planted-bug checks of issue 4: memcheck must
# report the out-of-bounds write, racecheck the shared-memory race, and both
# must report zero errors for the clean builds.
#   tests/gpu/capture-tool-output.sh OUTDIR
set -u
cd "$(dirname "$0")/../.." || exit 1
o=$1; mkdir -p "$o"; b=$o/bin; mkdir -p "$b"
G="-gencode=arch=compute_90a,code=sm_90a -lineinfo"
for p in 0 1; do
	nvcc $G -DPLANT=$p -o $b/oob$p tests/gpu/sanitizer/oob.cu
	nvcc $G -DPLANT=$p -o $b/race$p tests/gpu/sanitizer/race.cu
done
nvcc $G -O3 -o $b/attn_wmma kernels/attention/attn_wmma.cu kernels/attention/attn_common.cu kernels/harness/harness.cu
cs="compute-sanitizer --print-limit 10 --error-exitcode 99"
for p in 0 1; do
	$cs --tool memcheck $b/oob$p >$o/memcheck-oob$p.txt 2>&1; echo "memcheck oob$p exit $?" | tee -a $o/summary.txt
	$cs --tool racecheck --racecheck-report all $b/race$p >$o/racecheck-race$p.txt 2>&1; echo "racecheck race$p exit $?" | tee -a $o/summary.txt
done
$cs --tool synccheck $b/race0 >$o/synccheck-clean.txt 2>&1; echo "synccheck exit $?" | tee -a $o/summary.txt
$cs --tool initcheck $b/oob0 >$o/initcheck-clean.txt 2>&1; echo "initcheck exit $?" | tee -a $o/summary.txt
A="--mode=check --B=1 --H=8 --S=512 --D=64 --causal=0"
M=sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers
ncu --version >$o/ncu-version.txt 2>&1
ncu --csv --page raw --print-units base --metrics $M --kernel-name regex:wmma --launch-count 2 \
	--log-file $o/ncu-raw.csv $b/attn_wmma $A >$o/ncu-prog-stdout.txt 2>$o/ncu-stderr.txt
echo "ncu raw exit $?" | tee -a $o/summary.txt
ncu --metrics $M --kernel-name regex:wmma --launch-count 1 -f -o $o/attn_wmma $b/attn_wmma $A >/dev/null 2>>$o/ncu-stderr.txt
echo "ncu rep exit $?" | tee -a $o/summary.txt
ncu --import $o/attn_wmma.ncu-rep --csv --page raw --print-units base >$o/ncu-import.csv 2>&1
echo "ncu import exit $?" | tee -a $o/summary.txt
ncu --csv --page raw --metrics no__such_metric.sum --kernel-name regex:wmma --launch-count 1 \
	--log-file $o/ncu-badmetric.csv $b/attn_wmma $A >/dev/null 2>$o/ncu-badmetric-stderr.txt
echo "ncu bad metric exit $?" | tee -a $o/summary.txt
grep -c "Invalid __global__ write" $o/memcheck-oob1.txt | sed 's/^/oob errors reported: /' | tee -a $o/summary.txt
grep -ci "hazard" $o/racecheck-race1.txt | sed 's/^/race hazard lines: /' | tee -a $o/summary.txt
grep "ERROR SUMMARY\|RACECHECK SUMMARY" $o/*.txt | tee -a $o/summary.txt
rm -rf "$b"
