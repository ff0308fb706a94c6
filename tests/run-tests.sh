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
#      GPUORCH_NO_VALGRIND is not 1)
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
trap 'rm -rf "$RESULTS" "$OUTDIR"' EXIT
trap 'exit 130' INT TERM HUP
FILE_TIMEOUT=${GPUORCH_TEST_TIMEOUT:-900}
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
export ASAN_OPTIONS UBSAN_OPTIONS

now_ms() {
	_t=$(date +%s%N)
	echo $((_t / 1000000))
}

secs() {
	printf '%d.%02ds' $(($1 / 1000)) $((($1 % 1000) / 10))
}

# record STATUS NAME [DETAIL]: one result line, printed and kept for the summary.
record() {
	echo "$1 $2${3:+ $3}"
	echo "$1 $2${3:+ $3}" >>"$RESULTS"
}

selected() {
	[ -z "$PATTERNS" ] && return 0
	for _p in $PATTERNS; do
		case "$1" in
		*"$_p"*) return 0 ;;
		esac
	done
	return 1
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

# run_unit LABEL BINARY [WRAPPER...]: one unit test binary is one test.
run_unit() {
	_label=$1
	_bin=$2
	shift 2
	_start=$(now_ms)
	timeout -k 10 "$FILE_TIMEOUT" "$@" "$_bin" >"$OUTDIR/unit.log" 2>&1 </dev/null
	_rc=$?
	_t=$(secs $(( $(now_ms) - _start )))
	_ok=$(grep -c '^ok ' "$OUTDIR/unit.log")
	_nok=$(grep -c '^not ok ' "$OUTDIR/unit.log")
	if [ $_rc -eq 0 ] && [ "$_nok" -eq 0 ] && [ "$_ok" -gt 0 ]; then
		record PASS "$_label" "($_ok checks, $_t)"
	else
		if [ "$_ok" -eq 0 ] && [ $_rc -eq 0 ]; then
			_why="no 'ok N' line: the test checked nothing"
		else
			_why="exit $_rc, $_nok of $((_ok + _nok)) checks failed"
		fi
		record FAIL "$_label" "($_t): $_why"
		{ grep '^not ok ' "$OUTDIR/unit.log"; tail -n 40 "$OUTDIR/unit.log"; } |
			sed -e 's/^/    | /'
	fi
}

# run_shell FILE TAG GPUORCH SSHTOOL: a shell test file; its PASS/FAIL/SKIP
# lines are its tests.
run_shell() {
	_f=$1
	_base=$(basename "$_f")
	_start=$(now_ms)
	if [ -x "$_f" ]; then
		_cmd=$_f
	else
		_cmd="sh $_f"
	fi
	TEST_TAG=$2 GPUORCH=$3 SSHTOOL=$4 timeout -k 10 "$FILE_TIMEOUT" $_cmd \
		>"$OUTDIR/shell.log" 2>&1 </dev/null
	_rc=$?
	_t=$(secs $(( $(now_ms) - _start )))
	# show everything, keep the result lines
	cat "$OUTDIR/shell.log"
	grep -E '^(PASS|FAIL|SKIP) ' "$OUTDIR/shell.log" >>"$RESULTS"
	_n=$(grep -cE '^(PASS|FAIL|SKIP) ' "$OUTDIR/shell.log")
	_nf=$(grep -c '^FAIL ' "$OUTDIR/shell.log")
	if [ $_rc -ne 0 ] && [ "$_nf" -eq 0 ]; then
		if [ $_rc -eq 124 ] || [ $_rc -eq 137 ]; then
			record FAIL "$_base$2" "($_t): killed after ${FILE_TIMEOUT}s (GPUORCH_TEST_TIMEOUT)"
		else
			record FAIL "$_base$2" "($_t): exited $_rc without a FAIL line (crashed or bad script)"
		fi
	elif [ $_rc -eq 0 ] && [ "$_n" -eq 0 ]; then
		record FAIL "$_base$2" "($_t): ran no test"
	fi
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

# ---- shell tests ----------------------------------------------------------

for f in tests/t[0-9]*.sh; do
	[ -f "$f" ] || continue
	selected "$(basename "$f")" || continue
	run_shell "$f" "" "$ROOT/build/gpuorch" "$ROOT/build/tests/sshtool"
done
if [ $ASAN = 1 ]; then
	for f in tests/t[0-9]*.sh; do
		[ -f "$f" ] || continue
		grep -q '^# asan: yes$' "$f" || continue
		selected "$(basename "$f")" || continue
		run_shell "$f" " [asan]" \
			"$ROOT/build/asan/gpuorch" "$ROOT/build/asan/tests/sshtool"
	done
fi

# ---- valgrind -------------------------------------------------------------

if [ "${GPUORCH_NO_VALGRIND:-0}" = 1 ]; then
	record SKIP "valgrind" "(GPUORCH_NO_VALGRIND=1)"
elif ! command -v valgrind >/dev/null 2>&1; then
	record SKIP "valgrind" "(valgrind is not installed)"
else
	for b in build/tests/test_*; do
		[ -x "$b" ] || continue
		n="unit/$(basename "$b") [valgrind]"
		selected "$n" && run_unit "$n" "$b" valgrind -q --leak-check=full \
			--errors-for-leak-kinds=definite,possible --error-exitcode=1
	done
fi

summary
