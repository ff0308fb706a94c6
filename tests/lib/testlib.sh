# testlib.sh -- the shell test library (after git's t/test-lib.sh).
#
# A test file is tests/tNNNN-area-detail.sh:
#
#   #!/bin/sh
#   test_description='what this file tests'
#   . "$(dirname "$0")/lib/testlib.sh"
#   test_expect_success 'exec prints stdout' '
#       "$GPUORCH" --version >out &&
#       grep gpuorch out
#   '
#   test_done
#
# Each file runs in its own scratch directory ($TRASH, made with mktemp -d,
# removed at exit; kept when GPUORCH_KEEP_TRASH=1). The test bodies are
# eval'ed in the file's shell, in $TRASH, so variables carry from one test to
# the next; write them as && chains. A body's output goes to a log that is
# shown only when it fails (or always with TEST_VERBOSE=1).
#
# Output, one line per test, read by tests/run-tests.sh:
#   PASS <file>: <name> (0.12s)
#   FAIL <file>: <name> (0.12s)        followed by the body's log, indented
#   SKIP <file>: <name>: <reason>
# and a last line "# <file>: N passed, N failed, N skipped". The file exits 1
# when a test failed.
#
# Variables: SRCDIR (repo root), GPUORCH (the binary under test, default
# build/gpuorch), SSHTOOL (build/tests/sshtool), TRASH, TEST_NAME (file base
# name), TEST_TAG (a suffix such as "[asan]" set by the runner).
#
# Background jobs: wait for them by pid (`wait $pid`); sshd.sh's servers
# are not children of the test shell, so a bare `wait` does not hang on them.
#
# Helpers: test_cmp, test_must_fail, test_might_fail, wait_for,
# test_when_finished, test_at_exit, test_is_root, test_have_cmd,
# test_elapsed_ms, test_now_ms.

TEST_NAME=$(basename "$0")
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
: "${GPUORCH:=$SRCDIR/build/gpuorch}"
: "${SSHTOOL:=$SRCDIR/build/tests/sshtool}"
: "${TEST_TAG:=}"
export SRCDIR GPUORCH SSHTOOL

test_count=0
test_passed=0
test_failed=0
test_skipped=0
test_cleanup_hooks=
test_when_finished_cmds=

TRASH=$(mktemp -d "${TMPDIR:-/tmp}/gpuorch-test.XXXXXX") || {
	echo "FAIL $TEST_NAME$TEST_TAG: cannot create a scratch directory"
	exit 1
}
export TRASH
# Resolve symlinks so paths printed by remote commands compare equal.
TRASH=$(cd "$TRASH" && pwd -P)

test_now_ms() {
	_t=$(date +%s%N)
	echo $((_t / 1000000))
}

# test_elapsed_ms START_MS: milliseconds since START_MS.
test_elapsed_ms() {
	echo $(( $(test_now_ms) - $1 ))
}

# test_at_exit 'command': run at exit (before the scratch dir is removed),
# last registered first. Used by sshd.sh to stop its servers.
test_at_exit() {
	test_cleanup_hooks="$1
$test_cleanup_hooks"
}

test_run_exit_hooks_() {
	_hooks=$test_cleanup_hooks
	test_cleanup_hooks=
	if [ -n "$_hooks" ]; then
		eval "$_hooks" >/dev/null 2>&1
	fi
	cd /
	if [ "${GPUORCH_KEEP_TRASH:-0}" = 1 ]; then
		echo "# kept scratch directory $TRASH"
	else
		rm -rf "$TRASH"
	fi
}
trap 'test_run_exit_hooks_' EXIT
trap 'exit 130' INT TERM HUP

# test_when_finished 'command': run after the current test, pass or fail.
test_when_finished() {
	test_when_finished_cmds="$1
$test_when_finished_cmds"
}

test_fmt_secs_() {
	# $1: milliseconds -> "1.23s"
	printf '%d.%02ds' $(($1 / 1000)) $((($1 % 1000) / 10))
}

# test_run_ NAME BODY EXPECT(success|failure)
test_run_() {
	test_count=$((test_count + 1))
	_log="$TRASH/.test-$test_count.log"
	_start=$(test_now_ms)
	cd "$TRASH" || exit 1
	test_when_finished_cmds=
	eval "$2" >"$_log" 2>&1 </dev/null
	_rc=$?
	if [ -n "$test_when_finished_cmds" ]; then
		eval "$test_when_finished_cmds" >>"$_log" 2>&1 </dev/null
		test_when_finished_cmds=
	fi
	cd "$TRASH" || exit 1
	_ms=$(test_elapsed_ms "$_start")
	if [ "${TEST_VERBOSE:-0}" = 1 ]; then
		echo "# output of: $1"
		sed -e 's/^/    | /' "$_log"
	fi
	_secs=$(test_fmt_secs_ "$_ms")
	if [ "$3" = success ]; then
		if [ $_rc -eq 0 ]; then
			test_passed=$((test_passed + 1))
			echo "PASS $TEST_NAME$TEST_TAG: $1 ($_secs)"
		else
			test_failed=$((test_failed + 1))
			echo "FAIL $TEST_NAME$TEST_TAG: $1 ($_secs)"
			echo "    body exited $_rc; its output:"
			sed -e 's/^/    | /' "$_log" | tail -n 60
		fi
	else
		if [ $_rc -eq 0 ]; then
			test_passed=$((test_passed + 1))
			echo "PASS $TEST_NAME$TEST_TAG: $1 ($_secs) (known breakage now fixed: use test_expect_success)"
		else
			test_skipped=$((test_skipped + 1))
			echo "SKIP $TEST_NAME$TEST_TAG: $1: known breakage (test_expect_failure)"
		fi
	fi
	rm -f "$_log"
}

# test_expect_success 'name' 'body'
test_expect_success() {
	if [ $# -ne 2 ]; then
		echo "FAIL $TEST_NAME$TEST_TAG: bug in the test script: test_expect_success needs 2 arguments, got $#"
		test_failed=$((test_failed + 1))
		return
	fi
	test_run_ "$1" "$2" success
}

# test_expect_failure 'name' 'body': a known breakage (git's meaning): the
# body is expected to fail today; it is listed as skipped. To assert that a
# command fails, use test_must_fail inside test_expect_success.
test_expect_failure() {
	test_run_ "$1" "$2" failure
}

# test_skip 'name' 'reason'
test_skip() {
	test_count=$((test_count + 1))
	test_skipped=$((test_skipped + 1))
	echo "SKIP $TEST_NAME$TEST_TAG: $1: $2"
}

# test_done: print the file summary and exit.
test_done() {
	echo "# $TEST_NAME$TEST_TAG: $test_passed passed, $test_failed failed, $test_skipped skipped"
	if [ $test_failed -ne 0 ]; then
		exit 1
	fi
	exit 0
}

# test_cmp EXPECTED ACTUAL: files are equal (diff shown otherwise).
test_cmp() {
	diff -u "$1" "$2"
}

# test_must_fail CMD...: CMD exits non-zero, but not by a signal or a
# sanitizer crash (so a crash is never mistaken for a clean refusal).
test_must_fail() {
	"$@"
	_mf=$?
	if [ $_mf -eq 0 ]; then
		echo "test_must_fail: command succeeded: $*" >&2
		return 1
	elif [ $_mf -gt 128 ]; then
		echo "test_must_fail: command died by signal $((_mf - 128)): $*" >&2
		return 1
	elif [ $_mf -eq 127 ]; then
		echo "test_must_fail: command not found: $*" >&2
		return 1
	fi
	return 0
}

# test_expect_code N CMD...: CMD exits with exactly N.
test_expect_code() {
	_want=$1
	shift
	"$@"
	_got=$?
	if [ "$_got" -ne "$_want" ]; then
		echo "test_expect_code: expected exit $_want, got $_got: $*" >&2
		return 1
	fi
	return 0
}

# test_might_fail CMD...: CMD may fail, but must not crash.
test_might_fail() {
	"$@"
	_mf=$?
	if [ $_mf -gt 128 ]; then
		echo "test_might_fail: command died by signal $((_mf - 128)): $*" >&2
		return 1
	fi
	return 0
}

# wait_for SECONDS 'condition': poll every 0.1 s until the condition (eval'ed)
# holds; returns 1 after SECONDS.
wait_for() {
	_deadline=$(( $(test_now_ms) + $1 * 1000 ))
	while :; do
		if eval "$2"; then
			return 0
		fi
		if [ "$(test_now_ms)" -ge "$_deadline" ]; then
			echo "wait_for: timed out after $1 s waiting for: $2" >&2
			return 1
		fi
		sleep 0.1
	done
}

test_is_root() {
	[ "$(id -u)" = 0 ]
}

test_have_cmd() {
	command -v "$1" >/dev/null 2>&1
}

# test_grep PATTERN FILE: like grep, but shows the file when it does not match.
test_grep() {
	if grep -e "$1" "$2"; then
		return 0
	fi
	echo "test_grep: '$1' not found in $2:" >&2
	sed -e 's/^/    /' "$2" >&2
	return 1
}

cd "$TRASH" || exit 1
