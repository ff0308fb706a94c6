#!/bin/sh
test_description='the test harness cannot lose a test: return, exit, a signal, set -e and early ends are FAILs; run-shell-file.sh fails a file without its summary'
. "$(dirname "$0")/lib/testlib.sh"

# The testlib.sh under test (GPUORCH_TESTLIB=FILE checks another one, e.g.
# an old version from git) and the per-file runner of tests/run-tests.sh.
LIB=${GPUORCH_TESTLIB:-$SRCDIR/tests/lib/testlib.sh}
RUNFILE=$SRCDIR/tests/lib/run-shell-file.sh

# sub NAME: a test file NAME.sh in $TRASH, its tests read from stdin.
sub() {
	{
		echo '#!/bin/sh'
		echo ". '$LIB'"
		cat
	} >"$TRASH/$1.sh"
}

# run_sub NAME: run it as run-tests.sh's files run; its output in NAME.out
# (the result lines, unindented), its exit status in NAME.rc.
run_sub() {
	TEST_TAG='' TEST_VERBOSE=0 GPUORCH_KEEP_TRASH=0 sh "$TRASH/$1.sh" >"$1.out" 2>&1 </dev/null
	echo $? >"$1.rc"
	grep -E '^(PASS|FAIL|SKIP|#) ' "$1.out" | sed -E 's/ \([0-9]+\.[0-9]+s\)//' >"$1.lines"
	echo "--- $1.sh exited $(cat "$1.rc"); its output:" && cat "$1.out"
}

sub issue <<'EOF'
test_expect_success 'a passing test' 'true'
test_expect_success 'a failing test inside a loop' 'for i in 1 2; do false || return 1; done'
test_expect_success 'another passing test' 'true'
test_done
EOF

test_expect_success 'the issue: a `|| return 1` in a loop is a FAIL, the file fails' '
	run_sub issue &&
	cat >expect <<-\EOF &&
	PASS issue.sh: a passing test
	FAIL issue.sh: a failing test inside a loop
	PASS issue.sh: another passing test
	# issue.sh: 2 passed, 1 failed, 0 skipped
	EOF
	test_cmp expect issue.lines &&
	test "$(cat issue.rc)" = 1
'

sub ret <<'EOF'
test_expect_success 'return 0 ends the body early as a pass' 'v=carried; return 0; false'
test_expect_success 'return 3 is a fail' 'return 3'
test_expect_success 'variables carry from one test to the next' 'test "$v" = carried'
test_done
EOF

test_expect_success 'return N ends the body with N; variables still carry over' '
	run_sub ret &&
	cat >expect <<-\EOF &&
	PASS ret.sh: return 0 ends the body early as a pass
	FAIL ret.sh: return 3 is a fail
	PASS ret.sh: variables carry from one test to the next
	# ret.sh: 2 passed, 1 failed, 0 skipped
	EOF
	test_cmp expect ret.lines &&
	grep "body exited 3" ret.out &&
	test "$(cat ret.rc)" = 1
'

for code in 0 3; do
	sub exit$code <<EOF
test_expect_success 'before' 'true'
test_expect_success 'exits' 'echo output-of-the-body; exit $code'
test_expect_success 'after' 'true'
test_done
EOF
done

test_expect_success 'exit in a body is a FAIL with the reason and the output; no summary' '
	for code in 0 3; do
		run_sub exit$code &&
		cat >expect <<-EOF &&
		PASS exit$code.sh: before
		FAIL exit$code.sh: exits
		FAIL exit$code.sh: the file ended (exit $code) before test_done, after 2 test(s); no summary
		EOF
		test_cmp expect exit$code.lines &&
		grep "the body called exit $code; the tests after it did not run" exit$code.out &&
		grep "    | output-of-the-body" exit$code.out &&
		test "$(cat exit$code.rc)" = 1 || return 1
	done
'

for sig in TERM INT HUP; do
	sub sig$sig <<EOF
test_expect_success 'killed' 'kill -$sig \$\$; sleep 5'
test_done
EOF
done

test_expect_success 'a signal killing the test shell during a body is a FAIL naming it' '
	for sig in TERM INT HUP; do
		run_sub sig$sig &&
		cat >expect <<-EOF &&
		FAIL sig$sig.sh: killed
		FAIL sig$sig.sh: the file ended (killed by SIG$sig) before test_done, after 1 test(s); no summary
		EOF
		test_cmp expect sig$sig.lines &&
		grep "the test shell was killed by SIG$sig during the body" sig$sig.out &&
		test "$(cat sig$sig.rc)" = 1 || return 1
	done
'

sub sete <<'EOF'
test_expect_success 'set -e on, the body passes' 'set -e; true'
test_expect_success 'set -e did not outlive that body' 'false; true'
test_expect_success 'set -e trips' 'set -e; false; echo not-reached'
test_expect_success 'after' 'true'
test_done
EOF

test_expect_success 'set -e tripping in a body is a FAIL; a body'"'"'s set -e ends with it' '
	run_sub sete &&
	cat >expect <<-\EOF &&
	PASS sete.sh: set -e on, the body passes
	PASS sete.sh: set -e did not outlive that body
	FAIL sete.sh: set -e trips
	FAIL sete.sh: the file ended (exit 1) before test_done, after 3 test(s); no summary
	EOF
	test_cmp expect sete.lines &&
	grep "set -e was on" sete.out &&
	! grep not-reached sete.out &&
	test "$(cat sete.rc)" = 1
'

sub nested <<'EOF'
test_expect_success 'declares a test in its body' 'test_expect_success inner true'
test_done
EOF
sub bodydone <<'EOF'
test_expect_success 'calls test_done' 'test_done'
test_done
EOF

test_expect_success 'test_done or a test declared inside a body is a FAIL' '
	run_sub nested && run_sub bodydone &&
	grep "^FAIL nested.sh: declares a test in its body" nested.lines &&
	grep "inner.* is declared inside the body of" nested.out &&
	grep "^FAIL bodydone.sh: calls test_done" bodydone.lines &&
	grep "the body called test_done" bodydone.out &&
	! grep "^#" nested.lines && ! grep "^#" bodydone.lines &&
	test "$(cat nested.rc)" = 1 && test "$(cat bodydone.rc)" = 1
'

# test_begin_ is the harness's own "a test is declared" step: called alone,
# it leaves a declared test with no result, as a harness bug would.
sub lost <<'EOF'
test_expect_success 'one' 'true'
test_begin_ 'a test whose result is lost'
test_done
EOF

test_expect_success 'test_done fails the file when a declared test has no result' '
	run_sub lost &&
	cat >expect <<-\EOF &&
	PASS lost.sh: one
	FAIL lost.sh: 2 test(s) declared, 1 result(s): a test was lost
	# lost.sh: 1 passed, 1 failed, 0 skipped
	EOF
	test_cmp expect lost.lines &&
	test "$(cat lost.rc)" = 1
'

sub early <<'EOF'
test_expect_success 'one' 'true'
exit 0
test_expect_success 'two' 'true'
test_done
EOF

test_expect_success 'a file that ends before test_done prints a FAIL and exits 1' '
	run_sub early &&
	cat >expect <<-\EOF &&
	PASS early.sh: one
	FAIL early.sh: the file ended (exit 0) before test_done, after 1 test(s); no summary
	EOF
	test_cmp expect early.lines &&
	test "$(cat early.rc)" = 1
'

sub good <<'EOF'
test_expect_success 'one' 'true'
test_skip 'two' 'not here'
test_expect_failure 'three' 'false'
test_done
EOF
sub execs <<'EOF'
test_expect_success 'one' 'true'
test_expect_success 'replaces the test shell' 'exec true'
test_done
EOF
sub sigkill <<'EOF'
test_expect_success 'one' 'true'
test_expect_success 'SIGKILL, which no trap sees' 'kill -KILL $$'
test_done
EOF
# not a testlib.sh file: its summary is made up
cat >liar.sh <<'EOF'
echo "PASS liar.sh: one (0.00s)"
echo "# liar.sh: 2 passed, 0 failed, 0 skipped"
exit 0
EOF
sub slow <<'EOF'
test_expect_success 'sleeps past the timeout' 'sleep 3'
test_done
EOF
# subt NAME SECONDS: like sub, with a "# timeout: SECONDS" line
subt() {
	{
		echo '#!/bin/sh'
		echo "# timeout: $2"
		echo ". '$LIB'"
		cat
	} >"$TRASH/$1.sh"
}
# declares more time than the run gives: it gets it
subt declared 6 <<'EOF'
test_expect_success 'sleeps past the default, within its own' 'sleep 2'
test_done
EOF
# declares less than the run gives: the run's limit stands
subt less 1 <<'EOF'
test_expect_success 'sleeps 2 s' 'sleep 2'
test_done
EOF
# declares more, and still runs past it
subt overdeclared 2 <<'EOF'
test_expect_success 'sleeps past its own timeout' 'sleep 5'
test_done
EOF

# runfile NAME [TIMEOUT]: tests/lib/run-shell-file.sh on it, as run-tests.sh does
runfile() {
	GPUORCH_TEST_TIMEOUT=${2:-60} TEST_VERBOSE=0 "$RUNFILE" "$TRASH/$1.sh" "" /nonexistent /nonexistent >"$1.run" 2>&1
	echo $? >"$1.runrc"
	echo "--- run-shell-file.sh $1.sh exited $(cat "$1.runrc"):" && cat "$1.run"
}

test_expect_success 'run-shell-file.sh passes a file that ended well, adding nothing' '
	runfile good &&
	test "$(cat good.runrc)" = 0 &&
	grep "^PASS good.sh: one" good.run &&
	test $(grep -c "^SKIP good.sh: " good.run) = 2 &&
	grep "^# good.sh: 1 passed, 0 failed, 2 skipped$" good.run &&
	! grep "^FAIL" good.run
'

test_expect_success 'run-shell-file.sh fails a file without its summary line (exec, SIGKILL)' '
	for f in execs sigkill; do
		runfile $f &&
		test "$(cat $f.runrc)" = 1 &&
		grep "^FAIL $f.sh (.*): exited .* with no summary line" $f.run || return 1
	done &&
	grep "exited 0 with no summary line" execs.run &&
	grep "exited 137 with no summary line" sigkill.run
'

test_expect_success 'run-shell-file.sh fails a summary that does not match the result lines' '
	runfile liar &&
	test "$(cat liar.runrc)" = 1 &&
	grep "^FAIL liar.sh (.*): its summary says 2 0 0 (passed failed skipped) but it printed 1 PASS, 0 FAIL, 0 SKIP lines" liar.run
'

test_expect_success 'run-shell-file.sh fails a file killed by its timeout' '
	runfile slow 1 &&
	test "$(cat slow.runrc)" = 1 &&
	grep "^FAIL slow.sh (.*): killed after 1s (GPUORCH_TEST_TIMEOUT)" slow.run
'

test_expect_success 'a file that declares "# timeout: N" above the run'"'"'s limit gets N; below it, the limit stands' '
	runfile declared 1 &&
	test "$(cat declared.runrc)" = 0 &&
	grep "^PASS declared.sh: sleeps past the default" declared.run &&
	runfile less 4 &&
	test "$(cat less.runrc)" = 0 &&
	runfile overdeclared 1 &&
	test "$(cat overdeclared.runrc)" = 1 &&
	grep "^FAIL overdeclared.sh (.*): killed after 2s (its # timeout: line)" overdeclared.run
'

test_expect_success 'kill_session leaves no live process of a session that forks as it is killed, and passes over its zombies' '
	cp "$(command -v sleep)" "$TRASH/sleep-ks-$$-mark" &&
	test_at_exit "pkill -KILL -f sleep-ks-$$-mark" &&
	# the leader starts 300 sleepers as fast as it can: the kill lands mid-fork
	setsid sh -c "echo \$\$ >\"$TRASH/ks.sid\"; i=0; while [ \$i -lt 300 ]; do \"$TRASH/sleep-ks-$$-mark\" 30 & i=\$((i + 1)); done; wait" \
		</dev/null >/dev/null 2>&1 &
	leader=$! &&
	wait_for 10 "test -s \"$TRASH/ks.sid\"" &&
	sid=$(cat "$TRASH/ks.sid") &&
	wait_for 10 "pgrep -s $sid -f sleep-ks-$$-mark >/dev/null" &&
	kill_session "$sid" &&
	live=$(ps -eo sid=,stat= | awk -v s="$sid" "\$1 == s && \$2 !~ /^Z/" | wc -l) &&
	test "$live" = 0 &&
	# the leader is this shell'"'"'s child: a zombie until it is waited for
	kill_session "$sid" &&
	{ wait $leader; true; } &&
	test_must_fail pgrep -f sleep-ks-$$-mark
'

test_done
