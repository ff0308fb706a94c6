#!/bin/sh
# run-tests.sh -- build gpuorch and run every test: unit, ASan/UBSan, shell, valgrind.
#
#   tests/run-tests.sh [PATTERN...]
#
# Builds with `make`, `make unit`, the test tools (tests/tools/tools.mk) and,
# unless GPUORCH_NO_ASAN=1, `make asan`. Then runs
#   1. every build/tests/test_* unit binary (no arguments; "ok N"/"not ok N")
#   2. the same under build/asan/tests/
#   3. every tests/t[0-9]*.sh with GPUORCH=build/gpuorch
#   4. again, with GPUORCH=build/asan/gpuorch, each t*.sh that declares
#      "# asan: yes" on a line of its own
#   5. the unit binaries under valgrind (when valgrind is installed and
#      GPUORCH_NO_VALGRIND is not 1), as one job (tests/lib/valgrind-units.sh)
#   3, 4 and 5 run together, GPUORCH_TEST_JOBS jobs at a time (default: twice
#   the number of cores: most files wait on sshd, slurmctld or a timer), the
#   costliest first: a file may declare "# cost: SECONDS" (about what it
#   takes; 10 when it does not say), so the long ones do not start last and
#   finish alone. A file that declares "# waits: yes" spends nearly all its
#   time waiting (a token's lifetime, a guard's window, Slurm's timers: a
#   few CPU-seconds in a minute or more); those run in a pool of their own,
#   GPUORCH_TEST_WAIT_JOBS at a time (default 4; 0: in the main pool),
#   beside the main one, so they never hold a slot that computing files
#   could use. Each shell file runs through tests/lib/run-shell-file.sh
#   (a timeout of GPUORCH_TEST_TIMEOUT s, default 900, and a FAIL for a file
#   that ends without its summary line); each job's output is printed whole,
#   in the order above, whatever order they finish in.
# With PATTERNs, only tests whose name contains one of them run (the build
# always runs). Prints PASS/FAIL/SKIP per test with its time, lists the
# failures and skips at the end, and ends with exactly "N passed, N failed".
# Exits 1 when anything failed. Installs nothing.
set -u

cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
PATTERNS="$*"
RESULTS=$(mktemp "${TMPDIR:-/tmp}/gpuorch-results.XXXXXX") || exit 1
OUTDIR=$(mktemp -d "${TMPDIR:-/tmp}/gpuorch-runner.XXXXXX") || exit 1
XARGS_PIDS=
trap '[ -z "$XARGS_PIDS" ] || kill $XARGS_PIDS 2>/dev/null; rm -rf "$RESULTS" "$OUTDIR"' EXIT
trap 'exit 130' INT TERM HUP
FILE_TIMEOUT=${GPUORCH_TEST_TIMEOUT:-900}
export GPUORCH_TEST_TIMEOUT=$FILE_TIMEOUT
TEST_JOBS=${GPUORCH_TEST_JOBS:-$((2 * $(nproc 2>/dev/null || echo 1)))}
case $TEST_JOBS in
''|*[!0-9]*|0)
	echo "run-tests.sh: GPUORCH_TEST_JOBS must be a number of parallel jobs (1 or more), got '$TEST_JOBS'" >&2
	exit 2
	;;
esac
WAIT_JOBS=${GPUORCH_TEST_WAIT_JOBS:-4}
case $WAIT_JOBS in
''|*[!0-9]*)
	echo "run-tests.sh: GPUORCH_TEST_WAIT_JOBS must be a number of parallel jobs (0: none of their own), got '$WAIT_JOBS'" >&2
	exit 2
	;;
esac
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
export ASAN_OPTIONS UBSAN_OPTIONS

. tests/lib/unit.sh

# record STATUS NAME [DETAIL]: one result line, printed and kept for the summary.
record() {
	echo "$1 $2${3:+ $3}"
	echo "$1 $2${3:+ $3}" >>"$RESULTS"
}

summary() {
	_pass=$(grep -c '^PASS ' "$RESULTS")
	_fail=$(grep -c '^FAIL ' "$RESULTS")
	_skip=$(grep -c '^SKIP ' "$RESULTS")
	echo
	if [ "$_skip" -gt 0 ]; then
		echo "skipped:"
		grep '^SKIP ' "$RESULTS" | sed -e 's/^SKIP /  /'
	fi
	if [ "$_fail" -gt 0 ]; then
		echo "failed:"
		grep '^FAIL ' "$RESULTS" | sed -e 's/^FAIL /  /'
	fi
	echo "$_skip skipped"
	echo "$_pass passed, $_fail failed"
	[ "$_fail" -eq 0 ]
}

# build NAME CMD...: a build step; on failure the log is shown.
build() {
	_name=$1
	shift
	_start=$(now_ms)
	if "$@" >"$OUTDIR/build.log" 2>&1; then
		record PASS "build/$_name" "($(secs $(( $(now_ms) - _start ))))"
		return 0
	fi
	record FAIL "build/$_name" "($(secs $(( $(now_ms) - _start ))))"
	tail -n 40 "$OUTDIR/build.log" | sed -e 's/^/    | /'
	return 1
}

# shq STRING: STRING quoted for sh (single quotes).
shq() {
	printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}

# queue_job NAME COST POOL CMD...: add a job to those run_queued starts, in
# POOL ("main", or "wait": see "# waits:" above; job N is the script
# $OUTDIR/jobs/N; its output goes to N.out, its status to N.rc).
NJOBS=0
mkdir "$OUTDIR/jobs" || exit 1
queue_job() {
	NJOBS=$((NJOBS + 1))
	echo "$1" >"$OUTDIR/jobs/$NJOBS.name"
	_pool=$3
	[ "$WAIT_JOBS" -gt 0 ] || _pool=main
	echo "$2 $NJOBS $_pool" >>"$OUTDIR/jobs/costs"
	echo "$_pool" >"$OUTDIR/jobs/$NJOBS.pool"
	shift 3
	{
		for _a in "$@"; do
			printf '%s ' "$(shq "$_a")"
		done
		printf '>%s 2>&1\n' "$(shq "$OUTDIR/jobs/$NJOBS.out")"
		# the rc file appears only once the output is complete
		printf 'echo $? >%s && mv %s %s\n' "$(shq "$OUTDIR/jobs/$NJOBS.tmp")" \
			"$(shq "$OUTDIR/jobs/$NJOBS.tmp")" "$(shq "$OUTDIR/jobs/$NJOBS.rc")"
	} >"$OUTDIR/jobs/$NJOBS"
}

# queue_shell FILE TAG GPUORCH SSHTOOL: a shell test file as a job, with the
# cost it declares ("# cost: SECONDS", 10 when it does not), in the wait
# pool when it declares "# waits: yes".
queue_shell() {
	_cost=$(sed -n 's/^# cost: \([0-9][0-9]*\)$/\1/p' "$1" | head -n 1)
	_pool=main
	! grep -q '^# waits: yes$' "$1" || _pool='wait'
	queue_job "$(basename "$1")$2" "${_cost:-10}" "$_pool" tests/lib/run-shell-file.sh "$1" "$2" "$3" "$4"
}

# run_queued: run the queued jobs, each pool by its own xargs -P ($TEST_JOBS
# at a time in the main pool, $WAIT_JOBS in the wait pool), the costliest
# first, and print each job's output whole, in the order they were queued, as
# soon as it and those before it are done. Every PASS/FAIL/SKIP line goes to
# the results; run-shell-file.sh adds a FAIL for a file that ended badly.
run_queued() {
	[ "$NJOBS" -gt 0 ] || return 0
	for _pool in main wait; do
		sort -k1,1nr -k2,2n "$OUTDIR/jobs/costs" |
			awk -v p="$_pool" -v d="$OUTDIR/jobs/" '$3 == p { print d $2 }' >"$OUTDIR/jobs/list.$_pool"
		[ -s "$OUTDIR/jobs/list.$_pool" ] || continue
		_p=$TEST_JOBS
		[ "$_pool" = main ] || _p=$WAIT_JOBS
		xargs -P "$_p" -n 1 sh <"$OUTDIR/jobs/list.$_pool" >"$OUTDIR/xargs.$_pool.log" 2>&1 &
		eval "XARGS_$_pool=\$!"
		XARGS_PIDS="$XARGS_PIDS $!"
	done
	_n=1
	while [ $_n -le "$NJOBS" ]; do
		_j="$OUTDIR/jobs/$_n"
		_pool=$(cat "$_j.pool")
		eval "_xp=\$XARGS_$_pool"
		# bounded: each file has its own timeout, and each xargs ends
		# when every job of its pool did
		while [ ! -f "$_j.rc" ]; do
			# shellcheck disable=SC2154 # _xp: set by the eval above
			if ! kill -0 "$_xp" 2>/dev/null; then
				[ -f "$_j.rc" ] && break
				record FAIL "$(cat "$_j.name")" \
					"(job $_n): the runner lost it (xargs: $(cat "$OUTDIR/xargs.$_pool.log"))"
				break
			fi
			sleep 0.2
		done
		if [ -f "$_j.rc" ]; then
			cat "$_j.out"
			grep -E '^(PASS|FAIL|SKIP) ' "$_j.out" >>"$RESULTS"
			# a job that failed must say so: one that exits non-zero
			# without a FAIL line (killed, crashed) is one
			if [ "$(cat "$_j.rc")" != 0 ] && ! grep -q '^FAIL ' "$_j.out"; then
				record FAIL "$(cat "$_j.name")" \
					"(job $_n): exit $(cat "$_j.rc") without a FAIL line"
			fi
		fi
		_n=$((_n + 1))
	done
	wait $XARGS_PIDS
	XARGS_PIDS=
}

# ---- build ----------------------------------------------------------------

JOBS=$(nproc 2>/dev/null || echo 2)
MK="make -j$JOBS -f Makefile -f tests/tools/tools.mk"
if ! build make make -j"$JOBS" ||
	! build "make unit" make -j"$JOBS" unit ||
	! build tools $MK tools; then
	summary
	exit 1
fi
ASAN=1
if [ "${GPUORCH_NO_ASAN:-0}" = 1 ]; then
	ASAN=0
	record SKIP "asan" "(GPUORCH_NO_ASAN=1)"
elif ! build "make asan" make -j"$JOBS" asan || ! build "asan tools" $MK asan-tools; then
	ASAN=0
fi

# ---- unit tests -----------------------------------------------------------

for b in build/tests/test_*; do
	[ -x "$b" ] || continue
	n=unit/$(basename "$b")
	selected "$n" && run_unit "$n" "$b"
done
if [ $ASAN = 1 ]; then
	for b in build/asan/tests/test_*; do
		[ -x "$b" ] || continue
		n="unit/$(basename "$b") [asan]"
		selected "$n" && run_unit "$n" "$b"
	done
fi

# ---- shell tests and valgrind ---------------------------------------------

for f in tests/t[0-9]*.sh; do
	[ -f "$f" ] || continue
	selected "$(basename "$f")" || continue
	queue_shell "$f" "" "$ROOT/build/gpuorch" "$ROOT/build/tests/sshtool"
done
if [ $ASAN = 1 ]; then
	for f in tests/t[0-9]*.sh; do
		[ -f "$f" ] || continue
		grep -q '^# asan: yes$' "$f" || continue
		selected "$(basename "$f")" || continue
		queue_shell "$f" " [asan]" \
			"$ROOT/build/asan/gpuorch" "$ROOT/build/asan/tests/sshtool"
	done
fi
if [ "${GPUORCH_NO_VALGRIND:-0}" = 1 ]; then
	record SKIP "valgrind" "(GPUORCH_NO_VALGRIND=1)"
elif ! command -v valgrind >/dev/null 2>&1; then
	record SKIP "valgrind" "(valgrind is not installed)"
else
	queue_job "valgrind units" 40 main tests/lib/valgrind-units.sh "$PATTERNS"
fi
run_queued

summary
