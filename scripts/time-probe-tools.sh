#!/bin/sh
# time-probe-tools.sh -- what each tool a fresh host's probe asks costs on
# this machine (docs/host-runner-measurements.md, "The probe answers the plan first"): the
# same calls as orchestrator/remote/probe.c makes, each timed alone, median
# of --reps, with the PATH a non-login SSH session has (/usr/bin:/bin; the
# CUDA tools from /usr/local/cuda/bin as the probe finds them there).
#
#   scripts/time-probe-tools.sh [--reps R] [--python PATH]
#
# Prints one line per call: median wall ms, and the runs'.
REPS=5
PY=
while [ $# -gt 0 ]; do
	case $1 in
	--reps) REPS=$2; shift 2 ;;
	--python) PY=$2; shift 2 ;;
	-h|--help) sed -n '2,10p' "$0"; exit 0 ;;
	*) echo "time-probe-tools.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
case $REPS in '' | *[!0-9]* | 0) echo "time-probe-tools.sh: --reps must be a positive whole number" >&2; exit 2 ;; esac
PATH=/usr/bin:/bin
export PATH
tool() {
	_t=$(command -v "$1" 2>/dev/null) && { echo "$_t"; return; }
	[ -x "/usr/local/cuda/bin/$1" ] && echo "/usr/local/cuda/bin/$1"
}
[ -n "$PY" ] || PY=$(command -v python3 2>/dev/null)
now_ms() { date +%s%N | awk '{ printf "%.1f", $1 / 1e6 }'; }
# timed LABEL CMD...: runs CMD REPS times (output dropped)
timed() {
	_label=$1
	shift
	_all=
	_i=0
	while [ $_i -lt "$REPS" ]; do
		_s=$(now_ms)
		"$@" >/dev/null 2>&1
		_e=$(now_ms)
		_all="$_all $(awk -v s="$_s" -v e="$_e" 'BEGIN { printf "%.1f", e - s }')"
		_i=$((_i + 1))
	done
	echo "$_all" | tr ' ' '\n' | sed '/^$/d' | sort -n |
		awk -v l="$_label" -v all="$_all" '{ v[NR] = $1 } END {
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%-28s median %7.1f ms  (%s )\n", l, m, all }'
}
smi=$(tool nvidia-smi); nvcc=$(tool nvcc); ncu=$(tool ncu); san=$(tool compute-sanitizer)
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); PATH=$PATH"
timed "sh -c true" sh -c true
[ -z "$smi" ] || timed "nvidia-smi --query-gpu" "$smi" \
	--query-gpu=name,uuid,compute_cap,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total \
	--format=csv,noheader,nounits -i 0
[ -z "$smi" ] || timed "cat /proc/driver/nvidia/gpus" sh -c 'cat /proc/driver/nvidia/gpus/*/information /proc/driver/nvidia/version'
[ -z "$nvcc" ] || timed "nvcc --version" "$nvcc" --version
[ -z "$nvcc" ] || timed "cat cuda version.json" cat "${nvcc%/bin/nvcc}/version.json"
[ -z "$ncu" ] || timed "ncu --version" "$ncu" --version
[ -z "$san" ] || timed "compute-sanitizer --version" "$san" --version
[ -z "$PY" ] || timed "python3 --version" "$PY" --version
[ -z "$PY" ] || timed "python3 -c 'import torch'" "$PY" -c 'import torch; print(torch.__version__)'
