#!/bin/sh
# bench-ship.sh -- gpuorch's ship of a tree of many files against `scp -r`
# of the same tree, on 1 and on N loopback OpenSSH servers (issue 35 item 1:
# "50 random 1 MB files, hosts' blobs removed first").
#
#   scripts/bench-ship.sh [--gpuorch PATH] [--files N] [--kib K] [--hosts "1 4"] [--reps R]
#
# A project of N (50) files of K (1000) KiB of random bytes and a trivial
# CPU program. A first run (not counted) builds the host agent and execd;
# then each rep, for each host count: every host's blobs, contents and runs
# removed (the agent and execd stay, as on a host in use), `gpuorch run`
# timed; then `scp -r` of the same tree to each host (all at once, as
# gpuorch ships to all at once), timed.
# CPU: cgroup v1 cpuacct groups, one for the controller side (gpuorch, or
# scp and its ssh) and one for the hosts (every sshd and all it starts,
# setsid'd children included: a cgroup keeps what leaves the process
# tree). Needs root and cgroup v1's /sys/fs/cgroup/cpuacct (cpuacct.usage)
# or cgroup v2 (cpu.stat's usage_usec); without either, CPU is left out
# ("-"). scp runs the ssh found first on PATH (scp -S), not /usr/bin/ssh. gpuorch's run also builds and runs the trivial
# program: its CPU for that is measured by a run whose content is already
# on the hosts ("base") and shown beside; ship = fresh - base.
# Prints each rep, then the medians and the ratios gpuorch / scp.
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
GPUORCH=$SRCDIR/build/gpuorch
NFILES=50 KIB=1000 HOSTS="1 4" REPS=3
while [ $# -gt 0 ]; do
	case $1 in
	--gpuorch) GPUORCH=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
	--files) NFILES=$2; shift 2 ;;
	--kib) KIB=$2; shift 2 ;;
	--hosts) HOSTS=$2; shift 2 ;;
	--reps) REPS=$2; shift 2 ;;
	-h|--help) sed -n '2,22p' "$0"; exit 0 ;;
	*) echo "bench-ship.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
[ -x "$GPUORCH" ] || { echo "bench-ship.sh: no gpuorch at '$GPUORCH' (run make)" >&2; exit 2; }
command -v scp >/dev/null || { echo "bench-ship.sh: needs scp" >&2; exit 2; }

TRASH=$(mktemp -d "${TMPDIR:-/tmp}/gpuorch-bench.XXXXXX")
# cgroup v2 (one hierarchy, cpu.stat in every group) or v1's cpuacct
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	CGROOT=/sys/fs/cgroup CGV=2
else
	CGROOT=/sys/fs/cgroup/cpuacct CGV=1
fi
CG=$CGROOT/gpuorch-bench.$$
BENCH_AT_EXIT=
test_at_exit() {   # what tests/lib/sshd.sh needs of testlib.sh
	BENCH_AT_EXIT="$BENCH_AT_EXIT
$1"
}
cg_drop() {
	for g in ctl hosts; do
		[ -d "$CG/$g" ] || continue
		while read -r p; do echo "$p" >"$CGROOT/cgroup.procs"; done <"$CG/$g/cgroup.procs" 2>/dev/null
		rmdir "$CG/$g"
	done
	rmdir "$CG" 2>/dev/null
}
trap 'eval "$BENCH_AT_EXIT"; cg_drop; rm -rf "$TRASH"' EXIT
trap 'exit 130' INT TERM
. "$SRCDIR/tests/lib/sshd.sh"
why=$(sshd_available) || { echo "bench-ship.sh: $why" >&2; exit 2; }
max=0
for n in $HOSTS; do [ "$n" -le "$max" ] || max=$n; done
names=
i=1
while [ $i -le $max ]; do sshd_start "h$i" || exit 1; names="$names h$i"; i=$((i + 1)); done
CPU=1
if mkdir -p "$CG/ctl" "$CG/hosts" 2>/dev/null &&
	{ [ -f "$CG/ctl/cpu.stat" ] || [ -f "$CG/ctl/cpuacct.usage" ]; }; then
	for hn in $names; do echo "$(sshd_var "$hn" PID)" >"$CG/hosts/cgroup.procs" || CPU=0; done
else
	CPU=0
fi
# cpu_ns GROUP: CPU-ns used in it so far (0 without cgroups)
cpu_ns() {
	if [ $CPU = 0 ]; then echo 0
	elif [ $CGV = 2 ]; then awk '$1 == "usage_usec" { printf "%.0f\n", $2 * 1000 }' "$CG/$1/cpu.stat"
	else cat "$CG/$1/cpuacct.usage"; fi
}
# in_ctl CMD...: CMD in the controller's group
in_ctl() {
	if [ $CPU = 1 ]; then sh -c 'echo $$ >"$0" && exec "$@"' "$CG/ctl/cgroup.procs" "$@"; else "$@"; fi
}
[ -x "$SRCDIR/build/tests/jsonq" ] ||
	make -s -C "$SRCDIR" -f Makefile -f tests/tools/tools.mk build/tests/jsonq >/dev/null
Q=$SRCDIR/build/tests/jsonq

P=$TRASH/proj
mkdir -p "$P/cpu" "$P/data" "$P/experiments"
cp "$SRCDIR/tests/fixtures/project/cpu/cputimer.c" "$P/cpu/"
i=1
while [ $i -le "$NFILES" ]; do head -c $((KIB * 1024)) /dev/urandom >"$P/data/f$i.bin"; i=$((i + 1)); done
cat >"$P/experiments/ship.json" <<'JSON'
{"schema": 1, "name": "ship", "phase": "ship benchmark",
 "sources": ["cpu/cputimer.c", "data"], "targets": {"H100": "sm_90a"},
 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
 "problems": [{"name": "p", "params": {"work": 1000}}],
 "steps": [{"kind": "benchmark", "program": "cputimer", "timeout_s": 60}]}
JSON
(cd "$P" && git init -q && git config user.email b@example.com && git config user.name bench &&
	git add -A && git commit -qm bench) || exit 1
GPUORCH_REPORTS=$TRASH/reports
GPUORCH_CACHE_DIR=$TRASH/ctl-cache
export GPUORCH_REPORTS GPUORCH_CACHE_DIR
BYTES=$(cat "$P"/data/* | wc -c)

now() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
hosts_of() { echo "$names" | tr ' ' '\n' | grep . | head -n "$1" | tr '\n' ' '; }
# wipe N: the first N hosts' blobs, contents and runs removed
wipe() { for hn in $(hosts_of "$1"); do w=$(sshd_var "$hn" WORKDIR); rm -rf "$w"/blobs "$w"/content "$w"/runs "$w"/scp; done; }
# grun N OUT: one gpuorch run on the first N hosts; "wall ctlCPU hostCPU ship_s" into OUT
grun() {
	# shellcheck disable=SC2046
	sshd_write_hosts_json "$TRASH/hosts$1.json" $(hosts_of "$1")
	c0=$(cpu_ns ctl) h0=$(cpu_ns hosts) t0=$(now)
	(cd "$P" && in_ctl "$GPUORCH" run experiments/ship.json --hosts "$TRASH/hosts$1.json" --plain) \
		>"$TRASH/run.out" 2>&1 || { echo "bench-ship.sh: the run failed:" >&2; cat "$TRASH/run.out" >&2; exit 1; }
	t1=$(now)
	sleep 1   # what the hosts finish in the background (the agent's follow) is theirs
	c1=$(cpu_ns ctl) h1=$(cpu_ns hosts)
	run=$(ls -dt "$GPUORCH_REPORTS"/*/*/ | head -n 1)
	ship=0 k=0
	while [ $k -lt "$1" ]; do
		i=0
		while s=$("$Q" "$run/run.json" hosts.$k.phases.$i.duration_s 2>/dev/null); do
			[ "$("$Q" "$run/run.json" hosts.$k.phases.$i.name)" = ship ] && { ship=$(awk -v a="$ship" -v b="$s" 'BEGIN { printf "%.3f", (b > a ? b : a) }'); break; }
			i=$((i + 1))
		done
		k=$((k + 1))
	done
	echo "$(secs "$t0" "$t1") $(secs "$c0" "$c1") $(secs "$h0" "$h1") $ship" >"$2"
	cp "$TRASH/run.out" "$2.out"
}
# scpr N OUT: scp -r of the tree to the first N hosts at once; "wall ctlCPU hostCPU" into OUT
scpr() {
	c0=$(cpu_ns ctl) h0=$(cpu_ns hosts) t0=$(now)
	pids=
	for hn in $(hosts_of "$1"); do
		in_ctl scp -S "$(command -v ssh)" -q -r -o BatchMode=yes -o StrictHostKeyChecking=yes \
			-o UserKnownHostsFile="$(sshd_var "$hn" KNOWN_HOSTS)" -o IdentitiesOnly=yes \
			-i "$(sshd_var "$hn" IDENTITY)" -P "$(sshd_var "$hn" PORT)" \
			"$P/data" "$(id -un)@127.0.0.1:$(sshd_var "$hn" WORKDIR)/scp" &
		pids="$pids $!"
	done
	fail=0
	for p in $pids; do wait "$p" || fail=1; done
	t1=$(now)
	sleep 1
	c1=$(cpu_ns ctl) h1=$(cpu_ns hosts)
	[ $fail = 0 ] || { echo "bench-ship.sh: scp failed" >&2; exit 1; }
	echo "$(secs "$t0" "$t1") $(secs "$c0" "$c1") $(secs "$h0" "$h1")" >"$2"
}
echo "gpuorch: $GPUORCH (sha256 $(sha256sum "$GPUORCH" | cut -c1-12)); machine: $(nproc) CPUs; $NFILES files of $KIB KiB ($BYTES bytes); CPU: $([ $CPU = 1 ] && echo "cgroup v$CGV" || echo 'unmeasured (no cgroup)')"
grun "$max" "$TRASH/warm"   # the agent and execd built on every host
sleep 3
for n in $HOSTS; do
	: >"$TRASH/res$n"
	r=1
	while [ $r -le "$REPS" ]; do
		wipe "$n"; grun "$n" "$TRASH/g"
		grun "$n" "$TRASH/b"   # base: the content is there
		wipe "$n"; scpr "$n" "$TRASH/s"
		read -r gw gc gh gs <"$TRASH/g"; read -r bw bc bh _ <"$TRASH/b"; read -r sw sc sh <"$TRASH/s"
		dc=$(awk -v a="$gc" -v b="$bc" 'BEGIN { printf "%.3f", a - b }')
		dh=$(awk -v a="$gh" -v b="$bh" 'BEGIN { printf "%.3f", a - b }')
		dw=$(awk -v a="$gw" -v b="$bw" 'BEGIN { printf "%.3f", a - b }')
		echo "$n host(s) rep $r (load $(cut -d' ' -f1 /proc/loadavg)): gpuorch run ${gw}s (ship phase ${gs}s) ctl ${gc} host ${gh} CPU-s; base run ${bw}s ctl ${bc} host ${bh}; ship = fresh - base: ${dw}s ctl ${dc} host ${dh} CPU-s; scp -r ${sw}s ctl ${sc} host ${sh} CPU-s; blobs written by the execd (put) on $(grep -c "written by the host's execd" "$TRASH/g.out") of $n host(s)"
		echo "$gs $dw $dc $dh $sw $sc $sh" >>"$TRASH/res$n"
		r=$((r + 1))
	done
	m() { awk -v c="$1" '{ print $c }' "$TRASH/res$n" | median; }
	echo "$n host(s) medians: gpuorch ship phase $(m 1)s, ship (fresh - base) $(m 2)s ctl $(m 3) host $(m 4) CPU-s; scp -r $(m 5)s ctl $(m 6) host $(m 7) CPU-s"
	awk -v g="$(m 1)" -v d="$(m 2)" -v s="$(m 5)" -v gc="$(m 3)" -v sc="$(m 6)" -v gh="$(m 4)" -v sh="$(m 7)" -v b="$BYTES" -v n="$n" 'function q(a, c) { return c > 0 ? sprintf("%.2f", a / c) : "-" } BEGIN {
		printf "%d host(s) ratios gpuorch/scp: wall (ship phase) %s, wall (fresh - base) %s, ctl CPU %s, host CPU %s; throughput gpuorch %.1f MB/s (ship phase), scp %.1f MB/s\n",
			n, q(g, s), q(d, s), q(gc, sc), q(gh, sh), (g > 0 ? n * b / g / 1e6 : 0), (s > 0 ? n * b / s / 1e6 : 0) }'
done
