#!/bin/bash
# capture-ncu-units.sh -- on the GPU machine: capture an Nsight Compute
# report of 3 launches of attn_wmma and export it twice, with and without
# --print-units base, as parser fixtures (issue 13: the mean over 3+
# launches, and why gpuorch's export asks for base units).
#   tests/gpu/capture-ncu-units.sh OUTDIR
set -u
cd "$(dirname "$0")/../.." || exit 1
o=$1; mkdir -p "$o"; b=$o/bin; mkdir -p "$b"
nvcc -gencode=arch=compute_90a,code=sm_90a -lineinfo -O3 -o $b/attn_wmma \
	kernels/attention/attn_wmma.cu kernels/attention/attn_common.cu kernels/harness/harness.cu
M=sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,gpu__time_duration.sum,dram__bytes_read.sum,sm__cycles_elapsed.avg.per_second
A="--mode=profile --launches=3 --B=1 --H=8 --S=512 --D=64 --causal=0"
ncu --metrics $M --kernel-name regex:wmma --launch-skip 0 --launch-count 3 --clock-control base \
	--cache-control all --log-file $o/ncu3.log -f -o $o/prof3 $b/attn_wmma $A >$o/prog-stdout.txt 2>&1
echo "ncu profile exit $?" | tee -a $o/summary3.txt
ncu --import $o/prof3.ncu-rep --csv --page raw --print-units base >$o/ncu-3launch-base.csv 2>>$o/ncu3.log
echo "ncu import base exit $?" | tee -a $o/summary3.txt
ncu --import $o/prof3.ncu-rep --csv --page raw >$o/ncu-3launch-nobase.csv 2>>$o/ncu3.log
echo "ncu import nobase exit $?" | tee -a $o/summary3.txt
ncu --version >>$o/summary3.txt 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>$o/summary3.txt 2>&1
rm -rf "$b"
