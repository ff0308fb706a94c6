#!/bin/sh
# bench-upload.sh -- gpuorch's upload of a large source against scp, on one
# loopback OpenSSH server (issue 8: "upload of a 60 MiB source at least as
# fast as scp in the same run").
#
#   scripts/bench-upload.sh [--gpuorch PATH] [--mib N] [--reps R]
#
# A project with one incompressible file of N MiB (default 60) and a trivial
# CPU program; each rep: the host's work directory emptied, `gpuorch run`
# (fresh: the file ships), its ship phase's duration and bytes read from the
# record; then `scp` of the same file to the same server, timed. Prints each
# rep and the medians (MB/s = 10^6 bytes per second). Needs sshd, scp, nvcc.
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
GPUORCH=$SRCDIR/build/gpuorch
MIB=60
REPS=3
while [ $# -gt 0 ]; do
	case $1 in
	--gpuorch) GPUORCH=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
	--mib) MIB=$2; shift 2 ;;
	--reps) REPS=$2; shift 2 ;;
	-h|--help) sed -n '2,13p' "$0"; exit 0 ;;
	*) echo "bench-upload.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
[ -x "$GPUORCH" ] || { echo "bench-upload.sh: no gpuorch at '$GPUORCH' (run make)" >&2; exit 2; }
command -v scp >/dev/null || { echo "bench-upload.sh: needs scp" >&2; exit 2; }

TRASH=$(mktemp -d "${TMPDIR:-/tmp}/gpuorch-bench.XXXXXX")
BENCH_AT_EXIT=
test_at_exit() {   # what tests/lib/sshd.sh needs of testlib.sh
	BENCH_AT_EXIT="$BENCH_AT_EXIT
$1"
}
trap 'eval "$BENCH_AT_EXIT"; rm -rf "$TRASH"' EXIT
trap 'exit 130' INT TERM
. "$SRCDIR/tests/lib/sshd.sh"
why=$(sshd_available) || { echo "bench-upload.sh: $why" >&2; exit 2; }
sshd_start up || exit 1
[ -x "$SRCDIR/build/tests/jsonq" ] ||
	make -s -C "$SRCDIR" -f Makefile -f tests/tools/tools.mk build/tests/jsonq >/dev/null
Q=$SRCDIR/build/tests/jsonq

P=$TRASH/proj
mkdir -p "$P/cpu" "$P/data" "$P/experiments"
cp "$SRCDIR/tests/fixtures/project/cpu/cputimer.c" "$P/cpu/"
head -c $((MIB * 1048576)) /dev/urandom >"$P/data/big.bin"
cat >"$P/experiments/upload.json" <<'JSON'
{"schema": 1, "name": "upload", "phase": "upload benchmark",
 "sources": ["cpu/cputimer.c", "data/big.bin"], "targets": {"H100": "sm_90a"},
 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
 "problems": [{"name": "p", "params": {"work": 1000}}],
 "steps": [{"kind": "benchmark", "program": "cputimer", "timeout_s": 60}]}
JSON
(cd "$P" && git init -q && git config user.email b@example.com && git config user.name bench &&
	git add -A && git commit -qm bench) || exit 1
sshd_write_hosts_json "$TRASH/hosts.json" up
GPUORCH_REPORTS=$TRASH/reports
GPUORCH_CACHE_DIR=$TRASH/ctl-cache
export GPUORCH_REPORTS GPUORCH_CACHE_DIR
W=$(sshd_var up WORKDIR)

mbps() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f", b / s / 1e6 }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "gpuorch: $GPUORCH; machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); file $MIB MiB"
g='' s=''
r=1
while [ $r -le "$REPS" ]; do
	rm -rf "$W" && mkdir -p "$W"
	(cd "$P" && "$GPUORCH" run experiments/upload.json --hosts "$TRASH/hosts.json" --plain) \
		>"$TRASH/run.out" 2>&1 || { echo "bench-upload.sh: the run failed:" >&2; cat "$TRASH/run.out" >&2; exit 1; }
	run=$(ls -dt "$GPUORCH_REPORTS"/*/*/ | head -n 1)
	bytes=$("$Q" "$run/run.json" hosts.0.ship.bytes_sent)
	up=$("$Q" "$run/run.json" hosts.0.ship.upload_s | awk '{ printf "%.3f", $1 }')
	i=0 secs=
	while secs=$("$Q" "$run/run.json" hosts.0.phases.$i.duration_s 2>/dev/null); do
		[ "$("$Q" "$run/run.json" hosts.0.phases.$i.name)" = ship ] && { secs=$(echo "$secs" | awk '{ printf "%.3f", $1 }'); break; }
		i=$((i + 1))
	done
	rm -f "$TRASH/scp.dst"
	t0=$(date +%s%N)
	scp -q -o BatchMode=yes -o StrictHostKeyChecking=yes \
		-o UserKnownHostsFile="$(sshd_var up KNOWN_HOSTS)" -o IdentitiesOnly=yes \
		-i "$(sshd_var up IDENTITY)" -P "$(sshd_var up PORT)" \
		"$P/data/big.bin" "$(id -un)@127.0.0.1:$W/scp.bin" || exit 1
	t1=$(date +%s%N)
	st=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
	sz=$(wc -c <"$P/data/big.bin")
	echo "rep $r: gpuorch upload $bytes bytes in $up s ($(mbps "$bytes" "$up") MB/s; the start command that carried it on its stdin, until its runner began: transfer, unpack into the blob store, assembly of src/), whole ship phase $secs s (+ the first start, which found the file absent); scp $sz bytes in $st s ($(mbps "$sz" "$st") MB/s)"
	g="$g $(mbps "$bytes" "$up")"
	s="$s $(mbps "$sz" "$st")"
	r=$((r + 1))
done
echo "median upload: gpuorch $(echo $g | tr ' ' '\n' | median) MB/s, scp $(echo $s | tr ' ' '\n' | median) MB/s"
