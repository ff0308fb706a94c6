#!/bin/sh
# cost: 20
# asan: yes
test_description='the host runner (orchestrator/remote/runner.sh): run locally with no SSH, then over a real sshd: bounded builds, fail-fast kills, timeouts, the GPU lock, restarts, kills, journal offsets'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"

for t in setsid timeout flock pgrep tail; do
	if ! test_have_cmd $t; then
		test_skip 'runner tests' "'$t' is not installed"
		test_done
	fi
done

RUNNER="$SRCDIR/orchestrator/remote/runner.sh"
# the shell that runs the runner: sh (dash on Debian) unless told otherwise
RSH=${GPUORCH_RUNNER_SHELL:-sh}
JT="$(dirname "$SSHTOOL")/journaltool"
MARK=gpuorch-t1005-$$-mark  # "-mark" ends it: no prefix of another run's marker
# a copy of sleep whose name carries the marker: pgrep -f finds every
# process a build or step started, and nothing else
SLEEPER="$TRASH/sleep-$MARK"
cp "$(command -v sleep)" "$SLEEPER"
test_at_exit "pkill -KILL -f '$MARK'"
mkdir -p "$TRASH/src" "$TRASH/builds"
SRC="$TRASH/src"

survivors() {
	pgrep -f "$MARK" >/dev/null
}

# plan RUNDIR [MAXB [FAILFAST]]: starts RUNDIR/plan.sh; add items with
# pbuild / pstep (values must not hold a single quote).
plan() {
	mkdir -p "$1" &&
	P="$1/plan.sh" &&
	printf "plan_version 1\nsrc_dir '%s'\nmax_builds %s\nfail_fast %s\n" \
		"$SRC" "${2:-2}" "${3:-0}" >"$P"
}
# pbuild ID TIMEOUT COMMAND (the build makes builds/ID/prog)
pbuild() {
	printf "build '%s' '%s' '%s' %s '%s'\n" "$1" "$TRASH/builds/$1" "$TRASH/builds/$1/prog" \
		"$2" "$3; echo \"echo ok\" > $TRASH/builds/$1/prog && chmod +x $TRASH/builds/$1/prog" >>"$P"
}
# pstep RUNDIR ID TIMEOUT LOCK LOCKWAIT BUILD COMMAND
pstep() {
	printf "step '%s' '%s' %s '%s' %s '%s' '%s'\n" "$2" "$1/$2" "$3" "$4" "$5" "$6" "$7" >>"$P"
}
# events RUNDIR: the journal as "EV ID STATUS RC" lines (hostjournal.c reads it)
events() {
	"$JT" --file "$1/journal" 0 >"$1/events" && cat "$1/events"
}
# runner ARGS: the runner under test: runner.sh (run by $RSH), or the
# program GPUORCH_RUNNER_BIN names (t1008: build/gpuorch-agent, the same
# contract in C); ssh_runner ARGS: the same on the test sshd "a"
runner() {
	if [ -n "${GPUORCH_RUNNER_BIN:-}" ]; then
		"$GPUORCH_RUNNER_BIN" "$@"
	else
		$RSH "$RUNNER" "$@"
	fi
}
ssh_runner() {
	if [ -n "${GPUORCH_RUNNER_BIN:-}" ]; then
		sshd_ssh a "$GPUORCH_RUNNER_BIN" "$@"
	else
		sshd_ssh a sh "$RUNNER" "$@"
	fi
}
# runner_sh_only NAME: 0 when the test NAME, which drives runner.sh's own
# parts, cannot apply to the runner under test (then it is skipped)
runner_sh_only() {
	[ -n "${GPUORCH_RUNNER_BIN:-}" ] || return 1
	test_skip "$1" "$2 (runner.sh only; the runner under test is $GPUORCH_RUNNER_BIN)"
}
runner_pid() {
	cat "$1/runner.pid"
}
# done_within SECONDS RUNDIR: the runner of RUNDIR finished (its journal ends)
done_within() {
	wait_for "$1" "grep -q '\"ev\":\"runner_ended\"' '$2/journal' 2>/dev/null && flock -n '$2/runner.lock' true"
}
# part_has_b: the journal streamed so far shows step b started
part_has_b() {
	grep '"ev":"step_started","id":"b"' part >/dev/null 2>&1
}

test_expect_success 'a plan runs in the foreground, without SSH, and journals every event' '
	R=$TRASH/runs/basic &&
	plan "$R" &&
	pbuild k1 60 "echo ptxas info : Used 10 registers >&2" &&
	pstep "$R" s1 30 "" 0 k1 "echo x >>$TRASH/basic-count; $TRASH/builds/k1/prog; echo \"tab	q\\\"\" >&2" &&
	pstep "$R" s2 30 "" 0 "" "exit 3" &&
	runner run "$R" &&
	events "$R" &&
	test_grep "^build_end k1 exited 0" "$R/events" &&
	test_grep "^step_end s1 exited 0" "$R/events" &&
	test_grep "^step_end s2 exited 3" "$R/events" &&
	tail -n 1 "$R/events" >last &&
	echo "offset $(wc -c <"$R/journal" | tr -d " ") bad 0 dup 0 ended done" >expect &&
	test_cmp expect last &&
	grep "\"ev\":\"step_end\",\"id\":\"s1\"" "$R/journal" >s1 &&
	test_grep "\"stdout_text\":\"ok\\\\n\"" s1 &&
	test_grep "\"stderr_text\":\"tab\\\\tq\\\\\"\\\\n\"" s1 &&
	test_grep "\"stderr_text\":\"ptxas info : Used 10 registers\\\\n\"" "$R/journal" &&
	test -f "$R/runner.done"
'

test_expect_success 'a finished plan is not run again: start says finished' '
	runner start "$R" >out &&
	echo finished >expect && test_cmp expect out &&
	runner run "$R" >out &&
	test_cmp expect out &&
	echo x >expect && test_cmp expect "$TRASH/basic-count"
'

test_expect_success 'a build done by an earlier run is reused, with its log in the event' '
	R2=$TRASH/runs/reuse &&
	plan "$R2" &&
	pbuild k1 60 "echo must-not-run >>$TRASH/reuse-ran" &&
	pstep "$R2" s1 30 "" 0 k1 "$TRASH/builds/k1/prog" &&
	runner run "$R2" &&
	events "$R2" &&
	test_grep "^build_reused k1" "$R2/events" &&
	test_grep "^step_end s1 exited 0" "$R2/events" &&
	test_grep "\"ev\":\"build_reused\".*\"stderr_text\":\"ptxas info" "$R2/journal" &&
	test ! -e "$TRASH/reuse-ran"
'

test_expect_success 'builds run at most max_builds at once (timestamps)' '
	R=$TRASH/runs/bound &&
	plan "$R" 2 &&
	# build i waits (10 s at most) until 2 x ceil(i/2) builds have started
	# before it sleeps: with two allowed at once, 1 and 2 meet, then 3 and 4,
	# 5 and 6, whatever the load; with one at a time none would meet
	for i in 1 2 3 4 5 6; do
		pbuild bound$i 60 "echo start \$(date +%s%N) >>$TRASH/bound.log; w=0; while [ \$(grep -c ^start $TRASH/bound.log) -lt $((2 * ((i + 1) / 2))) ] && [ \$w -lt 200 ]; do $SLEEPER 0.05; w=\$((w + 1)); done; $SLEEPER 0.4; echo end \$(date +%s%N) >>$TRASH/bound.log" || return 1
	done &&
	start=$(test_now_ms) &&
	runner run "$R" &&
	echo "took $(test_elapsed_ms $start) ms" &&
	events "$R" &&
	test $(grep -c "^build_end bound. exited 0" "$R/events") = 6 &&
	sort -k2,2n "$TRASH/bound.log" | awk "
		\$1 == \"start\" { n++; if (n > max) max = n }
		\$1 == \"end\" { n-- }
		END { print \"most at once:\", max; exit !(max == 2) }"
'

# How soon a build's end is seen (when its wrapper ends, not at the next
# look) is a latency, not an order: scripts/bench-agent.sh measures it for
# both runners (medians of builds beside steps), outside pass/fail.

test_expect_success 'a failing build kills its running siblings and starts no more (fail_fast)' '
	R=$TRASH/runs/failfast &&
	plan "$R" 3 1 &&
	pbuild ff1 60 "$SLEEPER 30" &&
	pbuild ff2 60 "$SLEEPER 31 & $SLEEPER 32; wait" &&
	pbuild ff3 60 "$SLEEPER 0.3; echo nvcc: error: bad >&2; exit 1" &&
	pbuild ff4 60 "echo must-not-run >>$TRASH/ff4-ran" &&
	pstep "$R" s1 30 "" 0 ff1 "echo must-not-run >>$TRASH/ff-step-ran" &&
	start=$(test_now_ms) &&
	runner run "$R" &&
	elapsed=$(test_elapsed_ms $start) &&
	echo "took $elapsed ms" &&
	events "$R" &&
	test_grep "^build_end ff3 exited 1" "$R/events" &&
	test_grep "^build_end ff1 killed" "$R/events" &&
	test_grep "^build_end ff2 killed" "$R/events" &&
	test_grep "^build_skipped ff4" "$R/events" &&
	test_grep "^step_skipped s1" "$R/events" &&
	test_grep "nvcc: error: bad" "$R/journal" &&
	! survivors &&
	test ! -e "$TRASH/ff4-ran" && test ! -e "$TRASH/ff-step-ran"
'

test_expect_success 'a step over its timeout is killed with its process group' '
	R=$TRASH/runs/timeout &&
	plan "$R" &&
	pstep "$R" slow 1 "" 0 "" "$SLEEPER 30 & $SLEEPER 31" &&
	pstep "$R" after 30 "" 0 "" "echo after" &&
	start=$(test_now_ms) &&
	runner run "$R" &&
	elapsed=$(test_elapsed_ms $start) &&
	echo "took $elapsed ms" &&
	events "$R" &&
	test_grep "^step_end slow timeout 124" "$R/events" &&
	test_grep "^step_end after exited 0" "$R/events" &&
	! survivors
'

test_expect_success 'what a step leaves behind, forking as the step ends, is killed to the last child (with and without the lock)' '
	# the forker starts sleepers as fast as it can for seconds: the sweep
	# at the step'"'"'s end lands mid-fork, and a child it did not list lives on
	# unless the sweep lists again
	printf "%s\n" "i=0; while [ \$i -lt 3000 ]; do \"$SLEEPER\" 30 & i=\$((i + 1)); done" \
		>"$TRASH/forker-$MARK.sh" &&
	R=$TRASH/runs/forker &&
	plan "$R" &&
	pstep "$R" plain 30 "" 0 "" "sh $TRASH/forker-$MARK.sh >/dev/null 2>&1 & $SLEEPER 0.3" &&
	pstep "$R" locked 30 "$TRASH/gpuf.lock" 10 "" "sh $TRASH/forker-$MARK.sh >/dev/null 2>&1 & $SLEEPER 0.3" &&
	runner run "$R" &&
	events "$R" &&
	test_grep "^step_end plain exited 0" "$R/events" &&
	test_grep "^step_end locked exited 0" "$R/events" &&
	wait_for 120 "! survivors"
'

test_expect_success 'the GPU lock serialises two runners'"'"' GPU steps' '
	for n in ga gb; do
		plan "$TRASH/runs/$n" &&
		pstep "$TRASH/runs/$n" gpu 30 "$TRASH/gpu0.lock" 30 "" "echo start \$(date +%s%N) >>$TRASH/gpu.log; $SLEEPER 0.7; echo end \$(date +%s%N) >>$TRASH/gpu.log" || return 1
	done &&
	runner start "$TRASH/runs/ga" &&
	runner start "$TRASH/runs/gb" &&
	done_within 20 "$TRASH/runs/ga" &&
	done_within 20 "$TRASH/runs/gb" &&
	events "$TRASH/runs/ga" && events "$TRASH/runs/gb" &&
	test_grep "^step_end gpu exited 0" "$TRASH/runs/ga/events" &&
	test_grep "^step_end gpu exited 0" "$TRASH/runs/gb/events" &&
	cat "$TRASH/gpu.log" &&
	sort -k2,2n "$TRASH/gpu.log" | awk "
		\$1 == \"start\" { n++; if (n > max) max = n }
		\$1 == \"end\" { n-- }
		END { print \"most at once:\", max; exit !(max == 1) }"
'

# wrap DIR: the runner's wrapper (its item's session leader) on DIR, whose
# command appends a line to DIR.count; the wrapper's exit status
# shellcheck disable=SC1090 # $RUNNER: orchestrator/remote/runner.sh, sourced as a library
wrap() {
	mkdir -p "$1" && printf "%s\n" "echo ran >>\"$1.count\"" >"$1/cmd" &&
	(GPUORCH_RUNNER_LIB=1 && . "$RUNNER" && $RSH -c "$WRAPPER" gpuorch-item "$1" 30 "" 0 "$SRC" "")
}

runner_sh_only 'the wrapper claims its item once: a claimed item (.launch, a file or an older runner'"'"'s directory) is not run again' \
	'it sources runner.sh and runs its WRAPPER' ||
test_expect_success 'the wrapper claims its item once: a claimed item (.launch, a file or an older runner'"'"'s directory) is not run again' '
	W=$TRASH/claims &&
	wrap "$W/free" && test "$(cat "$W/free.count")" = ran && test -f "$W/free/.launch" &&
	test -s "$W/free/pgid" && test "$(cat "$W/free/rc")" = 0 &&
	mkdir -p "$W/file" && : >"$W/file/.launch" &&
	test_expect_code 3 wrap "$W/file" && test ! -e "$W/file.count" &&
	test ! -e "$W/file/pgid" && test ! -e "$W/file/rc" &&
	mkdir -p "$W/dir/.launch" &&
	test_expect_code 3 wrap "$W/dir" && test ! -e "$W/dir.count" && test ! -e "$W/dir/rc" &&
	i=0 &&
	while [ $i -lt 5 ]; do
		{ wrap "$W/race$i" & wrap "$W/race$i" & wait; } &&
		test "$(wc -l <"$W/race$i.count")" -eq 1 && i=$((i + 1)) || return 1
	done
'

test_expect_success 'a second start attaches; a runner SIGKILLed mid-step is restarted and runs nothing twice' '
	R=$TRASH/runs/restart &&
	plan "$R" &&
	pstep "$R" first 30 "" 0 "" "echo first >>$TRASH/restart.count; $(until_gate go-restart)" &&
	pstep "$R" second 30 "" 0 "" "echo second >>$TRASH/restart.count" &&
	runner start "$R" >out1 &&
	test_grep "^started " out1 &&
	runner start "$R" >out2 &&
	echo "running $(runner_pid "$R")" >expect && test_cmp expect out2 &&
	wait_for 120 "grep -q step_started \"$R/journal\"" &&
	kill -KILL "$(runner_pid "$R")" &&
	wait_for 120 "flock -n \"$R/runner.lock\" true" &&
	events "$R" &&
	test_grep "^step_started first" "$R/events" &&
	grep -v "^offset " "$R/events" | tail -n 1 >last-event &&
	test_grep "^step_started first" last-event &&
	touch "$TRASH/go-restart" &&
	runner start "$R" >out3 &&
	test_grep "^started " out3 &&
	done_within 20 "$R" &&
	events "$R" &&
	test_grep "^step_end first exited 0" "$R/events" &&
	test_grep "^step_end second exited 0" "$R/events" &&
	test_grep "\"restart\":true" "$R/journal" &&
	printf "first\nsecond\n" >expect && test_cmp expect "$TRASH/restart.count" &&
	! survivors
'

runner_sh_only 'start with a setsid that has no -f (util-linux before 2.31): started the old way' \
	'it checks runner.sh'"'"'s fallback from setsid -f, a program the agent does not use' ||
test_expect_success 'start with a setsid that has no -f (util-linux before 2.31): started the old way' '
	mkdir -p "$TRASH/oldsetsid" &&
	printf "#!/bin/sh\ncase \$1 in -f) echo \"setsid: invalid option -- f\" >&2; exit 1 ;; esac\nexec %s \"\$@\"\n" \
		"$(command -v setsid)" >"$TRASH/oldsetsid/setsid" &&
	chmod +x "$TRASH/oldsetsid/setsid" &&
	R=$TRASH/runs/oldsetsid &&
	plan "$R" &&
	pstep "$R" s1 30 "" 0 "" "echo old-setsid" &&
	PATH="$TRASH/oldsetsid:$PATH" runner start "$R" >out &&
	test_grep "^started [0-9]" out &&
	done_within 20 "$R" &&
	events "$R" &&
	test_grep "^step_end s1 exited 0" "$R/events" &&
	test_grep "invalid option" "$R/runner.log" &&
	! survivors
'

test_expect_success 'a runner killed with runner.sh kill leaves a journal that says so, and no process' '
	R=$TRASH/runs/killed &&
	plan "$R" &&
	pstep "$R" long 60 "" 0 "" "$SLEEPER 40 & $SLEEPER 41" &&
	pstep "$R" never 60 "" 0 "" "echo must-not-run >>$TRASH/killed-ran" &&
	runner start "$R" &&
	wait_for 120 "test \$(pgrep -f $MARK | wc -l) -ge 2" &&
	runner kill "$R" >out &&
	echo killed >expect && test_cmp expect out &&
	! survivors &&
	events "$R" &&
	tail -n 4 "$R/events" >last &&
	test_grep "^step_end long killed" last &&
	test_grep "^runner_ended - killed" last &&
	test ! -e "$TRASH/killed-ran"
'

test_expect_success 'the runner and its step gone (a reboot): the step is reported lost, not passed' '
	R=$TRASH/runs/reboot &&
	plan "$R" &&
	pstep "$R" victim 60 "" 0 "" "$SLEEPER 40" &&
	pstep "$R" next 60 "" 0 "" "echo next" &&
	runner start "$R" &&
	wait_for 120 "test -s \"$R/victim/pgid\" && pgrep -f \"$SLEEPER 40\" >/dev/null" &&
	kill -KILL "$(runner_pid "$R")" "$(cat "$R/victim/pgid")" $(pgrep -f "$MARK") &&
	wait_for 120 "! survivors" &&
	runner start "$R" &&
	done_within 30 "$R" &&
	events "$R" &&
	test_grep "^step_end victim lost -" "$R/events" &&
	test_grep "^step_end next exited 0" "$R/events"
'

# the journal's events that a deferred probe is ordered by
EV_BUILT='"ev":"phase_ended","name":"build"'
EV_LATER='"ev":"probe_later"'
EV_STEP='"ev":"step_started"'

test_expect_success 'probe_later: after the builds the runner waits for the probe part holding FILE.lock, journals FILE.later before the first step, removes both' '
	R=$TRASH/runs/later && L=$TRASH/cache/probe-0.4242 && mkdir -p "$TRASH/cache" &&
	plan "$R" &&
	echo "probe_later '"'"'$L'"'"'" >>"$P" &&
	pbuild k1 60 true &&
	pstep "$R" s1 30 "" 0 k1 "true" &&
	{ flock "$L.lock" sh -c "while [ ! -e $TRASH/later-go ]; do sleep 0.05; done; printf \"ncu_version=Version 2025.3.1.0\\ntorch=2.11.0\\n\" >$L.l && mv $L.l $L.later" & } &&
	wait_for 120 "! flock -n $L.lock true" &&
	{ runner run "$R" >later-run.out 2>&1 & } &&
	wait_for 120 "grep -qF \"\$EV_BUILT\" $R/journal 2>/dev/null" &&
	sleep 0.3 &&
	! grep -F -e "$EV_STEP" -e "$EV_LATER" "$R/journal" &&
	touch "$TRASH/later-go" &&
	done_within 30 "$R" &&
	grep -oF -e "$EV_BUILT" -e "$EV_LATER" -e "$EV_STEP" "$R/journal" >order &&
	printf "%s\n" "$EV_BUILT" "$EV_LATER" "$EV_STEP" >order.want &&
	test_cmp order.want order &&
	test_grep "\"probe_text\":\"ncu_version=Version 2025.3.1.0\\\\ntorch=2.11.0\\\\n\",\"probe_truncated\":false" "$R/journal" &&
	! test -e "$L.later" && ! test -e "$L.lock"
'

test_expect_success 'probe_later: a FILE.later already there is journaled at once; a plan with none sends nothing' '
	R=$TRASH/runs/later2 && L=$TRASH/cache/probe-0.4343 &&
	printf "torch=2.11.0\n" >"$L.later" &&
	plan "$R" &&
	echo "probe_later '"'"'$L'"'"'" >>"$P" &&
	pstep "$R" s1 30 "" 0 "" "true" &&
	runner run "$R" &&
	test "$(grep -cF "$EV_LATER" "$R/journal")" = 1 &&
	! test -e "$L.later" &&
	R=$TRASH/runs/later3 &&
	plan "$R" &&
	pstep "$R" s1 30 "" 0 "" "true" &&
	runner run "$R" &&
	! grep -F "$EV_LATER" "$R/journal"
'

# a file that runs these tests against another runner (t1008) adds its own
# tests here, before the ones over sshd
if [ -n "${GPUORCH_RUNNER_MORE_TESTS:-}" ]; then
	# shellcheck disable=SC1090 # the including file names it
	. "$GPUORCH_RUNNER_MORE_TESTS"
fi

# runner_done: test_done, after the last tests such a file adds (the
# function that GPUORCH_RUNNER_LAST_TESTS names, defined by its tests)
runner_done() {
	[ -z "${GPUORCH_RUNNER_LAST_TESTS:-}" ] || "$GPUORCH_RUNNER_LAST_TESTS"
	test_done
}

if ! why=$(sshd_available); then
	test_skip 'the runner over sshd' "$why"
	runner_done
fi

test_expect_success 'start sshd' '
	sshd_start a
'

test_expect_success 'over ssh: start returns at once, the runner outlives the session, follow streams the journal' '
	R=$TRASH/runs/ssh1 &&
	plan "$R" &&
	pbuild sk1 60 "true" &&
	pstep "$R" s1 30 "" 0 sk1 "$(until_gate go-ssh1); echo done" &&
	# the step runs until the gate: a start that waited for it would
	# return only when this opens it, 300 s on (a bound on a hang, not a
	# budget: the order is what is checked, the gate still shut after start)
	{ ( sleep 300; touch "$TRASH/go-ssh1" ) & } && opener=$! &&
	test_when_finished "kill $opener 2>/dev/null || :" &&
	start=$(test_now_ms) &&
	ssh_runner start "$R" >out &&
	elapsed=$(test_elapsed_ms $start) &&
	echo "start took $elapsed ms" &&
	test_grep "^started " out &&
	kill -0 "$(runner_pid "$R")" &&
	test ! -e "$TRASH/go-ssh1" &&
	touch "$TRASH/go-ssh1" &&
	ssh_runner follow "$R" 0 >followed &&
	test_cmp "$R/journal" followed &&
	"$JT" 0 <followed >ev &&
	test_grep "^step_end s1 exited 0" ev &&
	test_grep "ended done" ev
'

test_expect_success 'over ssh: the link drops mid-step (client and sshd killed); follow resumes at the offset' '
	R=$TRASH/runs/ssh2 &&
	plan "$R" &&
	pstep "$R" a 30 "" 0 "" "echo a" &&
	pstep "$R" b 30 "" 0 "" "$(until_gate go-ssh2); echo b" &&
	pstep "$R" c 30 "" 0 "" "echo c" &&
	ssh_runner start "$R" &&
	{ ssh_runner follow "$R" 0 >part & } &&
	fpid=$! &&
	wait_for 120 part_has_b &&
	sshd_kill a &&
	{ kill -KILL $fpid 2>/dev/null; wait $fpid; true; } &&
	touch "$TRASH/go-ssh2" &&
	"$JT" 0 <part >ev1 &&
	cat ev1 &&
	test_grep "^step_end a exited 0" ev1 &&
	! grep "^step_end b" ev1 &&
	off=$(sed -n "s/^offset \([0-9]*\) .*/\1/p" ev1) &&
	sshd_restart a &&
	ssh_runner follow "$R" "$off" >rest &&
	"$JT" "$off" <rest >ev2 &&
	cat ev2 &&
	test_grep "^step_end b exited 0" ev2 &&
	test_grep "^step_end c exited 0" ev2 &&
	! grep "^step_end a" ev2 &&
	test_grep "ended done" ev2 &&
	head -c "$off" "$R/journal" >j1 &&
	cat j1 rest >joined &&
	test_cmp "$R/journal" joined
'

runner_done
