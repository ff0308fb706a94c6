# shellcheck shell=sh
# agent-tests.sh -- gpuorch-agent's own tests (t1008), sourced by
# t1005-runner.sh in its context (plan, pbuild, pstep, events, runner,
# $RUNNER, $SRC, $SLEEPER, survivors, $TRASH). Where runner.sh is the
# reference (escaping, text_cap, reopen's rewrite), the same input goes
# through both and the outputs are compared.

# both_run NAME: run the plan lines on stdin (the header added; @R@ stands
# for the run directory, @T@ for $TRASH) under runner.sh in
# $TRASH/runs/NAME-sh and under the agent in $TRASH/runs/NAME-agent; each
# journal reduced by norm to NAME-sh.j and NAME-agent.j
both_run() {
	cat >"$TRASH/$1.lines" || return 1
	for _w in sh agent; do
		_r=$TRASH/runs/$1-$_w
		mkdir -p "$_r" &&
		printf "plan_version 1\nsrc_dir '%s'\nmax_builds 2\nfail_fast 0\n" "$SRC" >"$_r/plan.sh" &&
		sed -e "s|@R@|$_r|g" -e "s|@T@|$TRASH|g" "$TRASH/$1.lines" >>"$_r/plan.sh" || return 1
		if [ $_w = sh ]; then
			sh "$RUNNER" run "$_r" || return 1
		else
			runner run "$_r" || return 1
		fi
		# each names itself in runner_started (docs/runner.md); norm drops it
		if [ $_w = sh ]; then _n=runner.sh; else _n=gpuorch-agent; fi
		grep "\"ev\":\"runner_started\".*\"runner\":\"$_n\"" "$_r/journal" >/dev/null || return 1
		norm "$_r/journal" "$_r" >"$1-$_w.j" || return 1
	done
}
# norm JOURNAL RUNDIR: the journal without what differs between two runs
# (clocks, pids, free disk, the run directory, which runner it was)
norm() {
	sed -e 's/[0-9][0-9]*\.[0-9]\{9\}/T/g' -e 's/"pid":[0-9]*/"pid":P/' \
		-e 's/"runner":"[a-z.-]*"/"runner":R/' \
		-e 's/"disk_free_kib":[0-9]*/"disk_free_kib":D/' -e 's/"t_lock":[0-9]*/"t_lock":L/' \
		-e "s|$2|RD|g" "$1"
}

# every byte below 0x20, NUL at both ends, '"', '\', DEL and a UTF-8 letter
esc_bytes() {
	head -c 1 /dev/zero &&
	printf 'a\001\002\003\004\005\006\007\010\011\012\013\014\015\016\017' &&
	printf '\020\021\022\023\024\025\026\027\030\031\032\033\034\035\036\037' &&
	printf '\042\134\177\303\251z' &&
	head -c 1 /dev/zero
}
# esc_want: those bytes as the journal's text
esc_want() {
	printf '%s' 'a\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e\u000f'
	printf '%s' '\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f'
	printf '%s' '\"\\'
	printf '\177\303\251z'
}

test_expect_success 'agent: every control byte, NUL, quote, backslash and DEL escaped as runner.sh escapes them' '
	esc_bytes >"$TRASH/bytes" &&
	test $(wc -c <"$TRASH/bytes") = 40 &&
	echo "step e @R@/e 30 \"\" 0 \"\" \"cat @T@/bytes; cat @T@/bytes >&2\"" | tr "\"" "\047" | both_run esc &&
	test_cmp esc-sh.j esc-agent.j &&
	want=$(esc_want) &&
	grep -F "\"stdout_text\":\"$want\",\"stdout_truncated\":false" "$TRASH/runs/esc-agent/journal" &&
	grep -F "\"stderr_text\":\"$want\",\"stderr_truncated\":false" "$TRASH/runs/esc-agent/journal"
'

# cap_lines: steps whose output is text_cap (8) bytes, one over, NULs, none
cap_lines() {
	cat <<-'EOP'
	text_cap 8
	step 'at' '@R@/at' 30 '' 0 '' 'printf 12345678'
	step 'over' '@R@/over' 30 '' 0 '' 'printf 123456789'
	step 'nul' '@R@/nul' 30 '' 0 '' 'printf ab; head -c 2 /dev/zero; printf cdefghij'
	step 'empty' '@R@/empty' 30 '' 0 '' 'true'
	EOP
}

test_expect_success 'agent: text_cap cuts at the cap exactly (a text of cap bytes is whole, one over is truncated; NULs dropped first, as runner.sh)' '
	cap_lines | both_run cap &&
	test_cmp cap-sh.j cap-agent.j &&
	J=$TRASH/runs/cap-agent/journal &&
	grep -F "\"id\":\"at\"" "$J" | grep -F "\"stdout_text\":\"12345678\",\"stdout_truncated\":false" &&
	grep -F "\"id\":\"over\"" "$J" | grep -F "\"stdout_text\":\"12345678\",\"stdout_truncated\":true" &&
	grep -F "\"id\":\"nul\"" "$J" | grep -F "\"stdout_text\":\"abcdefg\",\"stdout_truncated\":false" &&
	grep -F "\"id\":\"empty\"" "$J" | grep -F "\"stdout_text\":\"\",\"stdout_truncated\":false"
'

# words_lines: quoted words as strbuf_add_shell_quoted writes them
words_lines() {
	cat <<-'EOP'
	# a comment line
	step 'q' '@R@/q' 30 '' 0 '' 'printf "%s|" "it'\''s" "a  b"
	echo two-lines'   # a comment after
	step 'we'\''ird' '@R@/b' 30 '' 0 '' 'true'
	EOP
}

test_expect_success 'agent: the plan is data: words quoted with '"'"'\\'"'"''"'"', lines inside quotes, comments (the same journal as runner.sh)' '
	words_lines | both_run words &&
	test_cmp words-sh.j words-agent.j &&
	R=$TRASH/runs/words-agent &&
	events "$R" &&
	test_grep "^step_end q exited 0" "$R/events" &&
	test_grep "\"stdout_text\":\"it'"'"'s|a  b|two-lines\\\\n\"" "$R/journal" &&
	test_grep "\"id\":\"we'"'"'ird\"" "$R/journal"
'

# bad_plan NAME LINE MESSAGE: a plan with LINE after a good header is
# refused: exit 2, runner_ended "error" with MESSAGE, nothing run
bad_plan() {
	_r=$TRASH/runs/bad-$1 &&
	plan "$_r" &&
	pstep "$_r" s1 30 "" 0 "" "echo ran >>$TRASH/bad-ran" &&
	printf '%s\n' "$2" >>"$_r/plan.sh" &&
	test_expect_code 2 runner run "$_r" 2>err &&
	test_grep "^runner: " err &&
	events "$_r" &&
	test_grep "ended error" "$_r/events" &&
	grep -F "\"ev\":\"runner_ended\",\"status\":\"error\",\"message\":\"$3" "$_r/journal" &&
	test ! -e "$TRASH/bad-ran"
}

test_expect_success 'agent: a plan that is not one is refused (exit 2, runner_ended error): unterminated quote, bad word, wrong arguments, relative path, not a number, unknown line' '
	bad_plan quote "step '"'"'x'"'"' '"'"'/a 30" "the plan is not valid: line 6: an unterminated quote" &&
	bad_plan word "step x /a 30 '"''"' 0 '"''"' \$(touch $TRASH/bad-ran)" "the plan is not valid: line 6: the character" &&
	bad_plan semi "plan_version 1; touch $TRASH/bad-ran" "the plan is not valid: line 6: the character" &&
	bad_plan args "build b /a /a/p 30" "build needs 5 or 6 arguments, got 4" &&
	bad_plan rel "build b rel /a/p 30 true" "build '"'"'b'"'"' dir: '"'"'rel'"'"' is not an absolute path" &&
	bad_plan num "step x /a 3s '"''"' 0 '"''"' true" "step '"'"'x'"'"' timeout: '"'"'3s'"'"' is not a whole number" &&
	bad_plan unknown "rm -rf $TRASH/src" "'"'"'rm'"'"' is not a plan line" &&
	test -d "$SRC" &&
	bad_plan version "plan_version 2" "plan version '"'"'2'"'"' is not 1" &&
	bad_plan maxb "max_builds 0" "max_builds must be at least 1"
'

test_expect_success 'agent: MAYFAIL: a sweep variant that fails does not stop the phase under fail_fast; its step is skipped' '
	R=$TRASH/runs/mayfail &&
	plan "$R" 1 1 &&
	printf "build v1 %s/builds/v1 %s/builds/v1/prog 60 %s 1\n" "$TRASH" "$TRASH" "'"'exit 1'"'" >>"$P" &&
	pbuild v2 60 true &&
	pstep "$R" s1 30 "" 0 v1 "echo must-not-run >>$TRASH/mayfail-ran" &&
	pstep "$R" s2 30 "" 0 v2 "true" &&
	runner run "$R" &&
	events "$R" &&
	test_grep "^build_end v1 exited 1" "$R/events" &&
	test_grep "^build_end v2 exited 0" "$R/events" &&
	test_grep "^step_skipped s1" "$R/events" &&
	test_grep "^step_end s2 exited 0" "$R/events" &&
	test_grep "\"name\":\"build\",\"status\":\"pass\"" "$R/journal" &&
	test ! -e "$TRASH/mayfail-ran"
'

test_expect_success 'agent: a GPU lock held elsewhere past the lock wait: lock-timeout (rc 75), the step never ran' '
	R=$TRASH/runs/locktimeout &&
	plan "$R" &&
	pstep "$R" g 30 "$TRASH/gpuheld.lock" 1 "" "echo must-not-run >>$TRASH/lock-ran" &&
	{ flock "$TRASH/gpuheld.lock" sh -c "while [ ! -e $TRASH/lock-go ]; do sleep 0.05; done" & } &&
	holder=$! &&
	wait_for 120 "! flock -n $TRASH/gpuheld.lock true" &&
	runner run "$R" &&
	touch "$TRASH/lock-go" && wait $holder &&
	events "$R" &&
	test_grep "^step_end g lock-timeout 75" "$R/events" &&
	test ! -e "$TRASH/lock-ran" && test ! -s "$R/g/locked"
'

test_expect_success 'agent: SIGTERM to a foreground run mid-build: the builds killed and journaled, exit 3, nothing left' '
	R=$TRASH/runs/term &&
	plan "$R" 2 &&
	pbuild tb1 60 "$SLEEPER 40" &&
	pbuild tb2 60 "$SLEEPER 41" &&
	pstep "$R" s1 30 "" 0 tb1 "true" &&
	{ "$GPUORCH_RUNNER_BIN" run "$R" >term.out 2>&1 & } &&
	rpid=$! &&
	wait_for 120 "test \$(pgrep -f $MARK | wc -l) -ge 2" &&
	kill -TERM $rpid &&
	{ wait $rpid; echo "exit $?" >term.rc; } &&
	echo "exit 3" >expect && test_cmp expect term.rc &&
	! survivors &&
	events "$R" &&
	test_grep "^build_end tb1 killed" "$R/events" &&
	test_grep "^build_end tb2 killed" "$R/events" &&
	test_grep "\"name\":\"build\",\"status\":\"killed\"" "$R/journal" &&
	test_grep "\"status\":\"killed\",\"message\":\"the runner got SIGTERM\"" "$R/journal" &&
	test -e "$TRASH/builds/tb1/.reopen" && ! grep -q step_ "$R/journal"
'

test_expect_success 'agent: kill after the runner died (SIGKILL): its step is killed and journaled, then the run is stopped for good' '
	R=$TRASH/runs/deadkill &&
	plan "$R" &&
	pstep "$R" long 60 "" 0 "" "$SLEEPER 42" &&
	runner start "$R" &&
	wait_for 120 "test -s \"$R/long/pgid\" && pgrep -f \"$SLEEPER 42\" >/dev/null" &&
	kill -KILL "$(runner_pid "$R")" &&
	wait_for 120 "flock -n \"$R/runner.lock\" true" &&
	runner kill "$R" >out &&
	echo killed >expect && test_cmp expect out &&
	! survivors &&
	events "$R" &&
	test_grep "^step_end long killed" "$R/events" &&
	test_grep "stopped by runner.sh kill after the runner had gone" "$R/journal" &&
	test -e "$R/runner.stopped" && test -e "$R/long/.reopen" &&
	runner start "$R" >out && echo finished >expect && test_cmp expect out
'

test_expect_success 'agent: reopen: the killed step runs again, its old events and the run'"'"'s end are gone; reopen while running says 0' '
	R=$TRASH/runs/deadkill &&
	runner reopen "$R" >out &&
	echo "reopened 1" >expect && test_cmp expect out &&
	! grep -q "\"id\":\"long\"" "$R/journal" &&
	! grep -q runner_ended "$R/journal" &&
	test ! -e "$R/runner.stopped" && test ! -e "$R/long" &&
	sed -i "s|$SLEEPER 42|echo again|" "$R/plan.sh" &&
	runner run "$R" &&
	events "$R" &&
	test_grep "^step_end long exited 0" "$R/events" &&
	test_grep "ended done" "$R/events" &&
	R=$TRASH/runs/reopen-live &&
	plan "$R" &&
	pstep "$R" s 30 "" 0 "" "$(until_gate go-reopen)" &&
	runner start "$R" &&
	wait_for 120 "grep -q step_started \"$R/journal\"" &&
	runner reopen "$R" >out &&
	echo "reopened 0" >expect && test_cmp expect out &&
	touch "$TRASH/go-reopen" &&
	done_within 30 "$R"
'

# reopen_dir DIR: a run directory as a stopped run leaves it: a build and
# two steps marked .reopen or not, and a journal of their events
reopen_dir() {
	mkdir -p "$1/b1" "$1/b2" "$1/s1" "$1/s2" "$1/.builds" &&
	printf "plan_version 1\nsrc_dir '%s'\nbuild 'b1' '%s' '%s' 60 'true'\nbuild 'b2' '%s' '%s' 60 'true'\nstep 's1' '%s' 30 '' 0 '' 'true'\nstep 's\"2' '%s' 30 '' 0 '' 'true'\n" \
		"$SRC" "$1/b1" "$1/b1/p" "$1/b2" "$1/b2/p" "$1/s1" "$1/s2" >"$1/plan.sh" &&
	echo "$1" >"$1/b1/owner" && echo "$1" >"$1/b2/owner" &&
	: >"$1/b2/.reopen" && : >"$1/s2/.reopen" && echo fail >"$1/.builds/2" && echo pass >"$1/.builds/1" &&
	: >"$1/runner.stopped" &&
	cat >"$1/journal" <<-EOJ
	{"t":1.5,"ev":"runner_started","pid":1}
	{"t":1.5,"ev":"phase_started","name":"build"}
	{"t":1.6,"ev":"build_started","id":"b1","dir":"x","attached":false}
	{"t":1.6,"ev":"build_started","id":"b2","dir":"x","attached":false}
	{"t":1.7,"ev":"build_end","id":"b1","status":"exited"}
	{"t":1.8,"ev":"build_end","id":"b2","status":"killed"}
	{"t":1.8,"ev":"phase_ended","name":"build","status":"killed"}
	{"t":1.9,"ev":"step_end","id":"s\"2","status":"killed"}
	{"t":1.9,"ev":"step_end","id":"s1","status":"exited"}
	torn {"t":1.9,"ev":"runner_ended"
	{"t":2.0,"ev":"runner_ended","status":"killed"}
	EOJ
	printf '{"t":2.1,"ev":"phase_ended","name":"run","status":"done"}' >>"$1/journal"
}

test_expect_success 'agent: reopen rewrites the journal as runner.sh does (same lines kept, atomically; marked items forgotten)' '
	reopen_dir "$TRASH/ro-sh" && reopen_dir "$TRASH/ro-agent" &&
	sh "$RUNNER" reopen "$TRASH/ro-sh" >sh.out &&
	runner reopen "$TRASH/ro-agent" >agent.out &&
	test_cmp sh.out agent.out &&
	echo "reopened 2" >expect && test_cmp expect agent.out &&
	cat "$TRASH/ro-agent/journal" &&
	test_cmp "$TRASH/ro-sh/journal" "$TRASH/ro-agent/journal" &&
	test ! -e "$TRASH/ro-agent/b2" && test ! -e "$TRASH/ro-agent/s2" && test -d "$TRASH/ro-agent/b1" &&
	test ! -e "$TRASH/ro-agent/.builds/2" && test -e "$TRASH/ro-agent/.builds/1" &&
	test ! -e "$TRASH/ro-agent/runner.stopped" && test ! -e "$TRASH/ro-agent/journal.tmp"
'

test_expect_success 'agent: follow prints the journal from an offset (a finished run: at once); bad offsets and usage refused with exit 2' '
	R=$TRASH/runs/basic &&
	runner follow "$R" 0 >all && test_cmp "$R/journal" all &&
	runner follow "$R" 100 >rest && tail -c +101 "$R/journal" >expect && test_cmp expect rest &&
	runner follow "$R" 999999 >none && test ! -s none &&
	test_expect_code 2 runner follow "$R" 1x &&
	test_expect_code 2 runner frob "$R" &&
	test_expect_code 2 runner run &&
	test_expect_code 2 runner run "$TRASH/runs/no-such-run"
'

test_expect_success 'agent: a build another run is building is attached to (claim lock), not built twice; both runs pass' '
	Ra=$TRASH/runs/attach-a && Rb=$TRASH/runs/attach-b &&
	for r in "$Ra" "$Rb"; do
		plan "$r" &&
		pbuild shared 60 "echo built >>$TRASH/attach.count; $(until_gate go-attach)" &&
		pstep "$r" s1 30 "" 0 shared "$TRASH/builds/shared/prog" || return 1
	done &&
	runner start "$Ra" &&
	wait_for 120 "test -s $TRASH/attach.count" &&
	runner start "$Rb" &&
	wait_for 120 "grep -q build_started \"$Rb/journal\"" &&
	touch "$TRASH/go-attach" &&
	done_within 30 "$Ra" && done_within 30 "$Rb" &&
	events "$Ra" && events "$Rb" &&
	test_grep "\"ev\":\"build_started\",\"id\":\"shared\".*\"attached\":true" "$Rb/journal" &&
	test_grep "^build_end shared exited 0" "$Ra/events" &&
	test_grep "^build_end shared exited 0" "$Rb/events" &&
	test_grep "^step_end s1 exited 0" "$Rb/events" &&
	echo built >expect && test_cmp expect "$TRASH/attach.count"
'

test_expect_success 'agent: a journal torn by a runner killed mid-write gets its newline before the next runner appends' '
	R=$TRASH/runs/torn &&
	plan "$R" &&
	pstep "$R" s1 30 "" 0 "" "true" &&
	printf "{\"t\":1.0,\"ev\":\"step_st" >"$R/journal" &&
	runner run "$R" &&
	events "$R" &&
	test_grep "bad 1 dup 0 ended done" "$R/events" &&
	test_grep "\"restart\":true" "$R/journal" &&
	test "$(head -n 1 "$R/journal")" = "{\"t\":1.0,\"ev\":\"step_st"
'

test_expect_success 'agent: a process that left the item'"'"'s session (setsid) is found by its GPUORCH_STEP marker and killed' '
	R=$TRASH/runs/daemon &&
	plan "$R" &&
	pstep "$R" d 30 "" 0 "" "setsid sh -c \"$SLEEPER 43 </dev/null >/dev/null 2>&1 &\"; $SLEEPER 0.2" &&
	pstep "$R" dl 30 "$TRASH/gpud.lock" 10 "" "setsid sh -c \"$SLEEPER 44 </dev/null >/dev/null 2>&1 &\"; $SLEEPER 0.2" &&
	runner run "$R" &&
	events "$R" &&
	test_grep "^step_end d exited 0" "$R/events" &&
	test_grep "^step_end dl exited 0" "$R/events" &&
	! survivors
'

# agent_last_tests: after t1005's tests over sshd (GPUORCH_RUNNER_LAST_TESTS)
agent_last_tests() {
	test_expect_success 'agent: no detached runner of this file reported a sanitizer error or a leak (runner.log)' '
		: >reports &&
		for f in "$TRASH"/runs/*/runner.log; do
			[ -f "$f" ] || continue
			grep -l -e "Sanitizer" -e "runtime error" "$f" >>reports
		done
		cat reports &&
		test ! -s reports
	'
}
