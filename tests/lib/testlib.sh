# shellcheck shell=sh
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
# and a last line "# <file>: N passed, N failed, N skipped" (the summary,
# printed only by test_done). The file exits 1 when a test failed.
#
# No test can be lost: every test_expect_* call prints exactly one result
# line, whatever its body does. The body is eval'ed inside a function of its
# own, so `return N` (the `|| return 1` idiom in a loop) ends the body with N.
# A body that leaves the file's shell (exit, a signal, `set -e` tripping,
# test_done) is caught by the EXIT trap: it prints the FAIL line with the
# reason and the body's output, then the file exits 1 WITHOUT a summary line
# (the tests after it never ran; tests/run-tests.sh fails a file without a
# summary). A body's `set -e`/`set -u`/`set -x` ends with the body. test_done
# fails the file when the number of results differs from the number of tests
# declared (test_expect_* and test_skip calls made), and a file that ends
# before test_done prints a FAIL line saying so.
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
# every gpuorch a test runs checks its journal's deltas against a walk of the
# arrays they skip (store/hostdelta.h): an append it was not told of ends it
GPUORCH_CHECK_DELTA=1
export GPUORCH_CHECK_DELTA

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
		echo "# kept scratch directory $TRASH" >&7
	else
		rm -rf "$TRASH"
	fi
}

# The EXIT trap: a body that left the shell gets its FAIL line here, and a
# file that ends before test_done says so (and prints no summary).
test_exit_trap_() {
	test_exit_rc_=$?
	test_exit_flags_=$-
	set +e +u +x
	if [ -n "$test_in_body_" ]; then
		test_in_body_=
		if [ -n "$test_signal_" ]; then
			_why="the test shell was killed by SIG$test_signal_ during the body"
		elif [ -n "$test_done_in_body_" ]; then
			_why="the body called test_done"
		else
			case $test_exit_flags_ in
			*e*) _why="the body left the shell with status $test_exit_rc_ (set -e was on: a failing command or exit)" ;;
			*) _why="the body called exit $test_exit_rc_" ;;
			esac
		fi
		test_finish_ 1 "$_why; the tests after it did not run"
	fi
	if [ -z "$test_done_reached_" ]; then
		if [ -n "$test_signal_" ]; then
			_why="killed by SIG$test_signal_"
		else
			_why="exit $test_exit_rc_"
		fi
		echo "FAIL $TEST_NAME$TEST_TAG: the file ended ($_why) before test_done, after $test_count test(s); no summary" >&7
		test_exit_rc_=1
	fi
	test_run_exit_hooks_
	exit "$test_exit_rc_"
}
# The result lines go to fd 7, a copy of the file's stdout: the EXIT trap may
# run while a body's redirection to its log is still in place (bash).
exec 7>&1
test_done_reached_=
test_in_body_=
test_signal_=
test_done_in_body_=
trap 'test_exit_trap_' EXIT
trap 'test_signal_=INT; exit 130' INT
trap 'test_signal_=TERM; exit 143' TERM
trap 'test_signal_=HUP; exit 129' HUP

# test_when_finished 'command': run after the current test, pass or fail.
test_when_finished() {
	test_when_finished_cmds="$1
$test_when_finished_cmds"
}

test_fmt_secs_() {
	# $1: milliseconds -> "1.23s"
	printf '%d.%02ds' $(($1 / 1000)) $((($1 % 1000) / 10))
}

# test_eval_body_ BODY: a function of its own, so that a `return` in the
# body returns from here (and not from test_run_, which would lose the test).
test_eval_body_() {
	eval "$1"
}

# test_begin_ NAME: count a declared test; refuse a test inside a body.
test_begin_() {
	test_count=$((test_count + 1))
	if [ -n "$test_in_body_" ]; then
		echo "bug in the test script: '$1' is declared inside the body of '$test_cur_name_'"
		exit 1
	fi
}

# test_run_ NAME BODY EXPECT(success|failure)
test_run_() {
	test_begin_ "$1"
	test_cur_name_=$1
	test_cur_expect_=$3
	test_log_="$TRASH/.test-$test_count.log"
	test_start_=$(test_now_ms)
	cd "$TRASH" || exit 1
	test_when_finished_cmds=
	test_body_flags_=$-
	test_in_body_=1
	test_eval_body_ "$2" >"$test_log_" 2>&1 </dev/null
	test_rc_=$?
	test_in_body_=
	# a body's set -e/-u/-x ends with it (the harness runs without them)
	case $test_body_flags_ in *e*) ;; *) set +e ;; esac
	case $test_body_flags_ in *u*) ;; *) set +u ;; esac
	case $test_body_flags_ in *x*) ;; *) set +x ;; esac
	test_finish_ "$test_rc_" ""
}

# test_finish_ RC WHY: print the result of the current test (fd 7); WHY,
# when not empty, means the body escaped the harness: always a FAIL.
test_finish_() {
	if [ -n "$test_when_finished_cmds" ]; then
		eval "$test_when_finished_cmds" >>"$test_log_" 2>&1 </dev/null
		test_when_finished_cmds=
	fi
	cd "$TRASH" || exit 1
	_ms=$(test_elapsed_ms "$test_start_")
	if [ "${TEST_VERBOSE:-0}" = 1 ]; then
		echo "# output of: $test_cur_name_" >&7
		sed -e 's/^/    | /' "$test_log_" >&7
	fi
	_secs=$(test_fmt_secs_ "$_ms")
	if [ -n "$2" ]; then
		test_failed=$((test_failed + 1))
		echo "FAIL $TEST_NAME$TEST_TAG: $test_cur_name_ ($_secs)" >&7
		echo "    $2; its output:" >&7
		sed -e 's/^/    | /' "$test_log_" | tail -n 60 >&7
	elif [ "$test_cur_expect_" = success ]; then
		if [ "$1" -eq 0 ]; then
			test_passed=$((test_passed + 1))
			echo "PASS $TEST_NAME$TEST_TAG: $test_cur_name_ ($_secs)" >&7
		else
			test_failed=$((test_failed + 1))
			echo "FAIL $TEST_NAME$TEST_TAG: $test_cur_name_ ($_secs)" >&7
			echo "    body exited $1; its output:" >&7
			sed -e 's/^/    | /' "$test_log_" | tail -n 60 >&7
		fi
	else
		if [ "$1" -eq 0 ]; then
			test_passed=$((test_passed + 1))
			echo "PASS $TEST_NAME$TEST_TAG: $test_cur_name_ ($_secs) (known breakage now fixed: use test_expect_success)" >&7
		else
			test_skipped=$((test_skipped + 1))
			echo "SKIP $TEST_NAME$TEST_TAG: $test_cur_name_: known breakage (test_expect_failure)" >&7
		fi
	fi
	rm -f "$test_log_"
}

# test_expect_success 'name' 'body'
test_expect_success() {
	if [ $# -ne 2 ]; then
		test_begin_ "${1:-?}"
		echo "FAIL $TEST_NAME$TEST_TAG: bug in the test script: test_expect_success needs 2 arguments, got $#" >&7
		test_failed=$((test_failed + 1))
		return
	fi
	test_run_ "$1" "$2" success
}

# test_expect_failure 'name' 'body': a known breakage (git's meaning): the
# body is expected to fail today; it is listed as skipped. To assert that a
# command fails, use test_must_fail inside test_expect_success.
test_expect_failure() {
	if [ $# -ne 2 ]; then
		test_begin_ "${1:-?}"
		echo "FAIL $TEST_NAME$TEST_TAG: bug in the test script: test_expect_failure needs 2 arguments, got $#" >&7
		test_failed=$((test_failed + 1))
		return
	fi
	test_run_ "$1" "$2" failure
}

# test_skip 'name' 'reason'
test_skip() {
	test_begin_ "$1"
	test_skipped=$((test_skipped + 1))
	echo "SKIP $TEST_NAME$TEST_TAG: $1: $2" >&7
}

# test_done: check that every declared test has its result, print the file
# summary and exit.
test_done() {
	if [ -n "$test_in_body_" ]; then
		test_done_in_body_=1
		exit 1
	fi
	test_check_records_
	_results=$((test_passed + test_failed + test_skipped))
	if [ "$_results" -ne "$test_count" ]; then
		echo "FAIL $TEST_NAME$TEST_TAG: $test_count test(s) declared, $_results result(s): a test was lost" >&7
		test_failed=$((test_failed + 1))
	fi
	test_done_reached_=1
	echo "# $TEST_NAME$TEST_TAG: $test_passed passed, $test_failed failed, $test_skipped skipped" >&7
	if [ $test_failed -ne 0 ]; then
		exit 1
	fi
	exit 0
}

# test_check_records_: one more test at the end of every file whose tests
# left run records in $TRASH (a run.json or summary.json anywhere below):
# each matches its JSON Schema (docs/schema/, scripts/check-records.sh).
# A file that plants broken records on purpose sets
# GPUORCH_RECORDS_UNCHECKED to why; without python3-jsonschema it is
# skipped, with the reason.
test_check_records_() {
	[ -z "${GPUORCH_RECORDS_UNCHECKED:-}" ] || return 0
	[ -n "$(find "$TRASH" \( -name run.json -o -name summary.json \) -type f 2>/dev/null | head -n 1)" ] || return 0
	if ! /usr/bin/python3 -c "import jsonschema" 2>/dev/null && ! python3 -c "import jsonschema" 2>/dev/null; then
		test_skip 'the run records this file wrote match docs/schema' 'no python3 with jsonschema (scripts/deps.sh --tests installs python3-jsonschema)'
		return 0
	fi
	test_expect_success 'the run records this file wrote match docs/schema (scripts/check-records.sh)' '
		"$SRCDIR/scripts/check-records.sh" "$TRASH" >records.out 2>&1 || { cat records.out; false; }
	'
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

# until_gate NAME: prints a shell command that runs until the test creates
# $TRASH/NAME (sleeping with $SLEEPER when the file has one: a copy of sleep
# that pgrep finds). A step that must still be running when the test looks
# waits on the test, not on a duration that a loaded machine (CI runs four
# test files at a time on two cores, ASan builds too) can use up first.
until_gate() {
	printf 'while [ ! -e "%s" ]; do "%s" 0.05; done' "$TRASH/$1" "${SLEEPER:-sleep}"
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

# kill_session SID: SIGKILL every live process of session SID, as a reboot
# would, and again until none is left (at most 100 rounds; 1 when some
# remain). One pass is not enough: ps reads /proc, then kill kills, and a
# process that forks between the two leaves a child it never saw, which
# lives on. Zombies are not counted: they are dead, only not yet reaped by a
# parent outside the session (pkill would match them forever).
kill_session() {
	_ks=0
	while :; do
		_kp=$(ps -eo pid=,sid=,stat= | awk -v s="$1" '$2 == s && $3 !~ /^Z/ {print $1}')
		[ -n "$_kp" ] || return 0
		if [ $_ks -ge 100 ]; then
			echo "kill_session: session $1 still has processes after 100 rounds: $_kp" >&2
			return 1
		fi
		kill -KILL $_kp 2>/dev/null
		_ks=$((_ks + 1))
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
