#!/bin/sh
# valgrind-units.sh -- the unit test binaries under valgrind (memcheck, full
# leak check; a definite or possible leak or any error fails the binary), one
# PASS/FAIL line each, as tests/run-tests.sh prints them. run-tests.sh queues
# it as one job beside the shell test files.
#
#   tests/lib/valgrind-units.sh [PATTERNS]
set -u
cd "$(dirname "$0")/../.." || exit 1
PATTERNS=${1:-}
FILE_TIMEOUT=${GPUORCH_TEST_TIMEOUT:-900}
OUTDIR=$(mktemp -d "${TMPDIR:-/tmp}/gpuorch-valgrind.XXXXXX") || exit 1
trap 'rm -rf "$OUTDIR"' EXIT
trap 'exit 130' INT TERM HUP
. tests/lib/unit.sh

FAILED=0
record() {
	echo "$1 $2${3:+ $3}"
	[ "$1" != FAIL ] || FAILED=1
}

for b in build/tests/test_*; do
	[ -x "$b" ] || continue
	n="unit/$(basename "$b") [valgrind]"
	selected "$n" && run_unit "$n" "$b" valgrind -q --leak-check=full \
		--errors-for-leak-kinds=definite,possible --error-exitcode=1
done
exit $FAILED
