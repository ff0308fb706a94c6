#!/bin/sh
# bench-ssh.sh -- ssh.c's latency on loopback, the numbers the tests no
# longer judge (tests assert what happened: TCP_NODELAY on, closes pending):
# authentication to the end of a first `true` (a delayed-ACK stall shows as
# ~40 ms), and a command its reader stops let go (the mark to the return).
#
#   scripts/bench-ssh.sh [--reps N]     (default 9; prints every sample and the median)
#
# Needs the test tools built (make -C . -f tests/tools/tools.mk or
# tests/run-tests.sh once) and sshd.
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
REPS=9
while [ $# -gt 0 ]; do
	case $1 in
	--reps) REPS=$2; shift 2 ;;
	*) echo "usage: scripts/bench-ssh.sh [--reps N]" >&2; exit 2 ;;
	esac
done
case $REPS in '' | *[!0-9]* | 0) echo "bench-ssh.sh: --reps takes a whole number, at least 1, not '$REPS'" >&2; exit 2 ;; esac
SSHTOOL=$SRCDIR/build/tests/sshtool
[ -x "$SSHTOOL" ] || { echo "bench-ssh.sh: $SSHTOOL is not built; run tests/run-tests.sh t1000 once" >&2; exit 2; }

TRASH=$(mktemp -d "${TMPDIR:-/tmp}/gpuorch-bench.XXXXXX")
BENCH_AT_EXIT=
# what tests/lib/sshd.sh needs of tests/lib/testlib.sh
test_at_exit() {
	BENCH_AT_EXIT="$BENCH_AT_EXIT
$1"
}
trap 'eval "$BENCH_AT_EXIT"; rm -rf "$TRASH"' EXIT
trap 'exit 130' INT TERM
. "$SRCDIR/tests/lib/sshd.sh"
why=$(sshd_available) || { echo "bench-ssh.sh: $why" >&2; exit 2; }
mkdir -p "$TRASH/home"
SSHD_b_EXTRA_ENV="HOME=$TRASH/home" && export SSHD_b_EXTRA_ENV
sshd_start b || exit 1

median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
i=0
: >"$TRASH/first"
while [ $i -lt "$REPS" ]; do
	sshd_sshtool b --timing exec true 2>&1 >/dev/null | sed -n 's/^sshtool: run took \([0-9]*\) ms.*/\1/p' >>"$TRASH/first"
	i=$((i + 1))
done
echo "first command after authentication: $(tr '\n' ' ' <"$TRASH/first")ms; median $(median <"$TRASH/first") ms"
sshd_sshtool b --repeat "$REPS" exec-until stop "echo stop; sleep 2" 2>&1 >/dev/null |
	sed -n 's/^sshtool: let go \([0-9]*\) ms after the mark.*/\1/p' >"$TRASH/letgo"
echo "a command let go at its reader's mark: $(tr '\n' ' ' <"$TRASH/letgo")ms; median $(median <"$TRASH/letgo") ms"
