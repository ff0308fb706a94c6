#!/bin/sh
# bench-journal.sh -- the run journal (docs/run-record.md "The journal") and
# `spec check` over many steps (issue 31 item 6): both must grow linearly.
#
#   scripts/bench-journal.sh [--steps N] [--marks "1000 5000 20000"] [--run-marks M]
#                            [--gpuorch PATH] [--runner agent|sh]
#
# The experiment is the test fixture's CPU program (cpu/cputimer.c, a busy
# loop of 1,000 iterations, one benchmark step per problem) with N problems
# (default 20,000): N steps. Prints
#   1. `gpuorch spec check` and `gpuorch run --dry-run` of it at each mark
#      (a spec of that many problems): wall time;
#   2. one `gpuorch run` of all N steps against a real OpenSSH sshd on
#      127.0.0.1 (tests/lib/sshd.sh), its journal.jsonl watched while it
#      runs: at each mark of steps in the journal, the journal's size, its
#      bytes per step, the wall time since the start, and the CPU seconds
#      so far of the controller and of the host runner (each with the
#      children it waited for: the load of a shared machine stretches wall
#      time, not these); then the run's wall time and run.json's size (a
#      finished run keeps no journal).
# --run-marks: other marks for the run (default --marks); --steps 0: no run.
# --runner: the host runner of the run measured: the host agent (default:
# a one-step run first, after which the host builds it) or runner.sh (sh).
# Linear: bytes per step stay flat from mark to mark, CPU and time per step too.
# Needs nvcc (the program is built like any other), sshd, awk.
set -eu

SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
GPUORCH=$SRCDIR/build/gpuorch
STEPS=20000
MARKS="1000 5000 20000"
RUNMARKS=
RUNNER=agent
while [ $# -gt 0 ]; do
	case $1 in
	--runner) RUNNER=$2; shift 2 ;;
	--steps) STEPS=$2; shift 2 ;;
	--marks) MARKS=$2; shift 2 ;;
	--run-marks) RUNMARKS=$2; shift 2 ;;
	--gpuorch) GPUORCH=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
	-h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
	*) echo "bench-journal.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
case $STEPS in '' | *[!0-9]*) echo "bench-journal.sh: --steps takes a whole number, not '$STEPS'" >&2; exit 2 ;; esac
[ -x "$GPUORCH" ] || { echo "bench-journal.sh: no gpuorch at '$GPUORCH' (run make)" >&2; exit 2; }

TRASH=$(mktemp -d "${TMPDIR:-/tmp}/gpuorch-bench-journal.XXXXXX")
BENCH_AT_EXIT=
test_at_exit() {   # what tests/lib/sshd.sh needs of tests/lib/testlib.sh
	BENCH_AT_EXIT="$BENCH_AT_EXIT
$1"
}
cleanup() {
	[ -z "${RUNPID:-}" ] || kill "$RUNPID" 2>/dev/null || :
	eval "$BENCH_AT_EXIT"
	rm -rf "$TRASH"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
. "$SRCDIR/tests/lib/sshd.sh"
why=$(sshd_available) || { echo "bench-journal.sh: $why" >&2; exit 2; }

now() { date +%s.%N; }
# cpu PID: its CPU seconds and those of its children it waited for
# (/proc/PID/stat utime stime cutime cstime), "0" when it is gone
cpu() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13 + $14 + $15) / hz }' \
		"/proc/$1/stat" 2>/dev/null || echo 0
}
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

# spec N FILE: the experiment with N problems (N steps)
spec() {
	awk -v n="$1" 'BEGIN {
		printf "{\"schema\": 1, \"name\": \"journal-bench\", \"phase\": \"bench-journal.sh\",\n"
		printf " \"sources\": [\"cpu/cputimer.c\"], \"targets\": {\"H100\": \"sm_90a\"},\n"
		printf " \"programs\": {\"cputimer\": {\"sources\": [\"cpu/cputimer.c\"], \"needs_gpu\": false}},\n"
		printf " \"problems\": ["
		for (i = 0; i < n; i++)
			printf "%s{\"name\": \"p%05d\", \"params\": {\"work\": 1000, \"reps\": 1}}", i ? ",\n  " : "", i
		printf "],\n \"steps\": [{\"kind\": \"benchmark\", \"program\": \"cputimer\", \"timeout_s\": 60}]}\n"
	}' >"$2"
}

rm -rf "$TRASH/proj"
cp -R "$SRCDIR/tests/fixtures/project" "$TRASH/proj"
(cd "$TRASH/proj" && git init -q && git config user.email b@example.com && git config user.name bench &&
	git add -A && git commit -qm fixture)
GPUORCH_REPORTS=$TRASH/reports GPUORCH_CACHE_DIR=$TRASH/cache
export GPUORCH_REPORTS GPUORCH_CACHE_DIR

sshd_start a
sshd_write_hosts_json "$TRASH/hosts.json" a
echo "spec check and dry run, one benchmark step per problem (wall s):"
for m in $MARKS; do
	spec "$m" "$TRASH/proj/experiments/s$m.json"
	t=$(now)
	(cd "$TRASH/proj" && "$GPUORCH" spec check "experiments/s$m.json" >/dev/null)
	tc=$(since "$t")
	t=$(now)
	(cd "$TRASH/proj" && "$GPUORCH" run "experiments/s$m.json" --dry-run --hosts ../hosts.json \
		>"$TRASH/dry.out" 2>&1) || { cat "$TRASH/dry.out" >&2; exit 1; }
	printf '  %6d steps: spec check %6.2f s, run --dry-run %6.2f s\n' "$m" "$tc" "$(since "$t")"
done
rm -f "$TRASH"/proj/experiments/s*.json
[ "$STEPS" -gt 0 ] || exit 0
spec "$STEPS" "$TRASH/proj/experiments/run.json"
spec 1 "$TRASH/proj/experiments/warm.json"
(cd "$TRASH/proj" && git add -A && git commit -qm spec)

# a first run on a host ships the host agent, which the host builds after
# it (docs/runner.md): the run measured runs under the agent, as every run
# after a host's first does; --runner sh: under runner.sh (no warm-up run)
if [ "$RUNNER" = agent ]; then
	(cd "$TRASH/proj" && "$GPUORCH" run experiments/warm.json --hosts ../hosts.json --plain \
		>"$TRASH/warm.out" 2>&1) || { cat "$TRASH/warm.out" >&2; exit 1; }
	W=$(sshd_var a WORKDIR)
	i=0
	until find "$W/agent" -name 'gpuorch-agent-*' ! -name '*.*' -perm -100 2>/dev/null | grep -q .; do
		i=$((i + 1))
		[ $i -lt 600 ] || { echo "bench-journal.sh: the host agent was not built in 120 s" >&2; exit 1; }
		sleep 0.2
	done
else
	W=$(sshd_var a WORKDIR)   # the host's first run: runner.sh (the agent is built after it)
fi

echo "run of $STEPS steps on 127.0.0.1 under the host's $RUNNER (journal watched every 0.2 s):"
t0=$(now)
(cd "$TRASH/proj" && exec "$GPUORCH" run experiments/run.json --hosts ../hosts.json --plain \
	>"$TRASH/run.out" 2>&1) &
RUNPID=$!
left=${RUNMARKS:-$MARKS}
maxb=0 maxs=0 maxt=0
while kill -0 "$RUNPID" 2>/dev/null; do
	j=$(ls "$TRASH"/reports/*/*/journal.jsonl 2>/dev/null | head -n 1)
	if [ -n "$j" ]; then
		b=$(stat -c %s "$j" 2>/dev/null || echo 0)
		s=$(grep -c '"steps":\[\[' "$j" 2>/dev/null || :)
		s=${s:-0}
		el=$(since "$t0")
		if [ "$b" -gt "$maxb" ]; then maxb=$b maxs=$s maxt=$el; fi
		for m in $left; do
			if [ "$s" -ge "$m" ]; then
				rp=$(cat "$(dirname "$(ls -d "$W"/runs/*/journal | tail -n 1)")/runner.pid" 2>/dev/null)
				printf '  %6d steps in the journal: %10d bytes, %5d bytes/step, %8.1f s since the start, CPU s: controller %s, host runner %s\n' \
					"$s" "$b" $((b / s)) "$el" "$(cpu "$RUNPID")" "$(cpu "${rp:-0}")"
				left=$(echo "$left" | tr ' ' '\n' | awk -v m="$m" '$1 != m' | tr '\n' ' ')
			fi
		done
	fi
	sleep 0.2
done
wait "$RUNPID" && rc=0 || rc=$?
RUNPID=
run=$(ls -d "$TRASH"/reports/*/*/ | tail -n 1)
if [ "$maxs" -gt 0 ]; then
	printf '  largest journal seen: %d bytes at %d steps (%d bytes/step), %.1f s\n' \
		"$maxb" "$maxs" $((maxb / maxs)) "$maxt"
fi
printf '  run: exit %d, %.1f s wall, run.json %d bytes, journal left: %s\n' "$rc" "$(since "$t0")" \
	"$(stat -c %s "$run/run.json")" "$(ls "$run/journal.jsonl" 2>/dev/null || echo none)"
tail -n 2 "$TRASH/run.out"
exit "$rc"
