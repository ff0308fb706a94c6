#!/bin/sh
# run-shell-file.sh -- run one shell test file and judge how it ended.
#
#   tests/lib/run-shell-file.sh FILE TAG GPUORCH SSHTOOL
#
# Runs FILE (a tests/tNNNN-*.sh using testlib.sh) with TEST_TAG=TAG,
# GPUORCH and SSHTOOL set, under `timeout -k 10 $GPUORCH_TEST_TIMEOUT`
# (default 900 s; a file that declares more with a line "# timeout: SECONDS"
# gets that: the kernel-compile shards, whose nvcc work alone takes longer on
# a loaded machine), stdin from /dev/null. Prints the file's whole output,
# then one more FAIL line of its own when the file did not end well:
#   - it was killed by the timeout;
#   - its summary line "# <file><TAG>: N passed, N failed, N skipped" is
#     missing (it ended before test_done: exit, a signal, a crash, exec);
#   - the summary's counts differ from its PASS/FAIL/SKIP lines;
#   - it exited non-zero without a FAIL line, or 0 with one;
#   - it ran no test.
# Exits 1 when the file failed in any way, 0 otherwise. tests/run-tests.sh
# runs it once per file (several at a time) and counts the PASS/FAIL/SKIP
# lines; t0000-testlib.sh runs it on files that misbehave.
set -u

if [ $# -ne 4 ]; then
	echo "usage: $0 FILE TAG GPUORCH SSHTOOL" >&2
	exit 2
fi
f=$1
tag=$2
base=$(basename "$f")
timeout_s=${GPUORCH_TEST_TIMEOUT:-900}
timeout_from=GPUORCH_TEST_TIMEOUT
declared=$(sed -n 's/^# timeout: \([0-9][0-9]*\)$/\1/p' "$f" | head -n 1)
if [ -n "$declared" ] && [ "$declared" -gt "$timeout_s" ]; then
	timeout_s=$declared
	timeout_from="its # timeout: line"
fi
log=$(mktemp "${TMPDIR:-/tmp}/gpuorch-shellfile.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT
trap 'exit 130' INT TERM HUP

now_ms() {
	_t=$(date +%s%N)
	echo $((_t / 1000000))
}

start=$(now_ms)
if [ -x "$f" ]; then
	cmd=$f
else
	cmd="sh $f"
fi
TEST_TAG=$tag GPUORCH=$3 SSHTOOL=$4 timeout -k 10 "$timeout_s" $cmd >"$log" 2>&1 </dev/null
rc=$?
ms=$(( $(now_ms) - start ))
t=$(printf '%d.%02ds' $((ms / 1000)) $(((ms % 1000) / 10)))

cat "$log"
npass=$(grep -c '^PASS ' "$log")
nfail=$(grep -c '^FAIL ' "$log")
nskip=$(grep -c '^SKIP ' "$log")
# the summary, exactly as test_done prints it (the tag may hold brackets)
summary=$(grep -F "# $base$tag: " "$log" | grep -E ': [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' | tail -n 1)

why=
# 124: timeout's TERM ended it; 137 past the limit: its KILL did (137
# sooner is a SIGKILL from elsewhere: judged by the summary below)
if [ $rc -eq 124 ] || { [ $rc -eq 137 ] && [ $ms -ge $((timeout_s * 1000)) ]; }; then
	why="killed after ${timeout_s}s ($timeout_from)"
elif [ -z "$summary" ]; then
	why="exited $rc with no summary line: it ended before test_done (exit, signal, crash or exec), so tests may be missing"
else
	counts=$(echo "$summary" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/')
	if [ "$counts" != "$npass $nfail $nskip" ]; then
		why="its summary says $counts (passed failed skipped) but it printed $npass PASS, $nfail FAIL, $nskip SKIP lines"
	elif [ $rc -ne 0 ] && [ "$nfail" -eq 0 ]; then
		why="exited $rc without a FAIL line (crashed or bad script)"
	elif [ $rc -eq 0 ] && [ "$nfail" -ne 0 ]; then
		why="exited 0 with $nfail FAIL line(s)"
	elif [ $((npass + nfail + nskip)) -eq 0 ]; then
		why="ran no test"
	fi
fi
if [ -n "$why" ]; then
	echo "FAIL $base$tag ($t): $why"
	exit 1
fi
[ "$nfail" -eq 0 ]
