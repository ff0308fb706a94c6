#!/bin/sh
# cost: 25
# asan: yes
test_description='remote.c detached steps: results, timeouts with no survivors, lost links, kill, locks, quoting'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"

if ! why=$(sshd_available); then
	test_skip 'remote step tests' "$why"
	test_done
fi
for t in setsid timeout flock pgrep; do
	if ! test_have_cmd $t; then
		test_skip 'remote step tests' "'$t' is not installed"
		test_done
	fi
done

MARK=gpuorch-t1003-$$-mark  # "-mark" ends it: no prefix of another run's marker
# a copy of sleep whose name carries the marker, so pgrep -f finds every
# process a step started and nothing else
SLEEPER="$TRASH/sleep-$MARK"
cp "$(command -v sleep)" "$SLEEPER"
test_at_exit "pkill -KILL -f '$MARK'"

survivors() {
	pgrep -f "$MARK" >/dev/null
}

test_expect_success 'start sshd' '
	sshd_start a &&
	W=$SSHD_a_WORKDIR
'

test_expect_success 'a step records its exit code, stdout and stderr' '
	sshd_sshtool a step-start "$W/s1" "echo to-out; echo to-err >&2; exit 3" 30 &&
	sshd_sshtool a step-poll "$W/s1" 10000 >st &&
	echo "exit 3" >expect &&
	test_cmp expect st &&
	echo 3 >expect && test_cmp expect "$W/s1/rc" &&
	sshd_sshtool a step-output "$W/s1" 1000 >out 2>err &&
	echo to-out >expect && test_cmp expect out &&
	echo to-err >expect && test_cmp expect err
'

test_expect_success 'a step killed by a signal is reported as such' '
	sshd_sshtool a step-start "$W/s2" "kill -SEGV \$\$" 30 &&
	sshd_sshtool a step-poll "$W/s2" 10000 >st &&
	echo "signal 11 (SEGV)" >expect &&
	test_cmp expect st
'

test_expect_success 'a poll of a running step answers "running" within its wait' '
	sshd_sshtool a step-start "$W/s3" "$(until_gate go3)" 30 &&
	start=$(test_now_ms) &&
	sshd_sshtool a step-poll "$W/s3" 600 >st &&
	elapsed=$(test_elapsed_ms $start) &&
	echo running >expect && test_cmp expect st &&
	# the step never ends by itself: "running" says the poll came back
	# because its wait did, before the step ended (not judged by time)
	echo "poll took $elapsed ms" &&
	touch "$TRASH/go3" &&
	sshd_sshtool a step-poll "$W/s3" 10000 >st &&
	echo "exit 0" >expect && test_cmp expect st
'

test_expect_success 'a hanging step is killed at its timeout with no surviving process' '
	# the step itself waits until its six marked processes run (the sh -c
	# names the sleeper too), stamps hang-up, and goes on with a seventh: a
	# wait from the test side could outlast the 3-s timeout on a loaded
	# machine. How long it ran is read on the host (t_run, t_end), not
	# through two SSH connections
	cat >"$TRASH/hang.sh" <<-EOS &&
	"$SLEEPER" 300 &
	( "$SLEEPER" 301 & "$SLEEPER" 302 ) &
	( trap "" TERM; exec "$SLEEPER" 303 ) &
	sh -c "\"$SLEEPER\" 304 & wait" &
	n=0
	while [ \$(pgrep -f "$MARK" | wc -l) -lt 6 ] && [ \$n -lt 1000 ]; do sleep 0.01; n=\$((n + 1)); done
	touch "$TRASH/hang-up"
	"$SLEEPER" 305
	EOS
	sshd_sshtool a step-start "$W/hang" "sh \"$TRASH/hang.sh\"" 3 &&
	sshd_sshtool a step-poll "$W/hang" 30000 >st &&
	echo timeout >expect && test_cmp expect st &&
	test -e "$TRASH/hang-up" &&
	read run <"$W/hang/t_run" && read end <"$W/hang/t_end" &&
	echo "ran $run .. $end" &&
	# killed at its 3 s, not at the 5 s of timeout -k after it
	awk -v a="$run" -v b="$end" "BEGIN { exit !(b - a >= 3 && b - a < 7) }" &&
	echo timeout >expect && test_cmp expect "$W/hang/rc" &&
	pgrep -af "$MARK" || true &&
	! survivors
'

test_expect_success 'a step survives its SSH connection closing' '
	sshd_sshtool a step-start "$W/s4" "$(until_gate go4); echo finished" 30 &&
	sshd_sshtool a step-poll "$W/s4" 0 >st &&
	echo running >expect && test_cmp expect st &&
	touch "$TRASH/go4" &&
	wait_for 10 "test -f \"$W/s4/rc\"" &&
	sshd_sshtool a step-poll "$W/s4" 0 >st &&
	echo "exit 0" >expect && test_cmp expect st &&
	echo finished >expect && test_cmp expect "$W/s4/stdout"
'

test_expect_success 'a step survives sshd dying; the poll after a restart has its result' '
	sshd_sshtool a step-start "$W/s5" "$(until_gate go5); echo after-restart" 60 &&
	{ { sshd_sshtool a step-poll "$W/s5" 20000 >poll.out 2>poll.err; echo $? >poll.rc; } & } &&
	poller=$! &&
	wait_for 20 "pgrep -f \"tail .*/s5/[.]run/journal\"" &&
	sshd_kill a &&
	wait $poller &&
	cat poll.err &&
	echo 16 >expect && test_cmp expect poll.rc &&
	test_grep "a (127.0.0.1:$SSHD_a_PORT): .*connection lost" poll.err &&
	test_expect_code 16 sshd_sshtool a step-poll "$W/s5" 0 2>err &&
	test_grep "connection refused" err &&
	touch "$TRASH/go5" &&
	wait_for 10 "test -f \"$W/s5/rc\"" &&
	sshd_restart a &&
	sshd_sshtool a step-poll "$W/s5" 10000 >st &&
	echo "exit 0" >expect && test_cmp expect st &&
	sshd_sshtool a step-output "$W/s5" 100 >out &&
	echo after-restart >expect && test_cmp expect out
'

test_expect_success 'step-kill ends every process of the step' '
	sshd_sshtool a step-start "$W/s6" "\"$SLEEPER\" 310 & (trap \"\" TERM; exec \"$SLEEPER\" 311) & \"$SLEEPER\" 312" 60 &&
	wait_for 30 "test \$(pgrep -f $MARK | wc -l) -ge 3" &&
	sshd_sshtool a step-kill "$W/s6" &&
	! survivors &&
	sshd_sshtool a step-poll "$W/s6" 5000 >st &&
	cat st &&
	grep -E "^signal (9|15) " st
'

test_expect_success 'a step whose wrapper was killed (a reboot) is "vanished"' '
	sshd_sshtool a step-start "$W/s7" "\"$SLEEPER\" 320" 60 &&
	sid=$(cat "$W/s7/pgid") &&
	kill_session "$sid" &&
	wait_for 30 "! survivors" &&
	sshd_sshtool a step-poll "$W/s7" 1000 >st &&
	echo vanished >expect && test_cmp expect st
'

test_expect_success 'polling a directory with no step is "not found"' '
	test_expect_code 22 sshd_sshtool a step-poll "$W/never" 0 2>err &&
	test_grep "no step in .$W/never." err
'

test_expect_success 'a held GPU lock ends in "lock timeout"; a command exiting 75 is an exit' '
	flock "$TRASH/gpu.lock" sh -c "touch \"$TRASH/held8\"; $(until_gate go8)" &
	holder=$! &&
	wait_for 10 "test -e \"$TRASH/held8\"" &&
	sshd_sshtool a step-start "$W/s8" "echo should-not-run" 30 "$W" "$TRASH/gpu.lock" 1 &&
	sshd_sshtool a step-poll "$W/s8" 10000 >st &&
	echo "lock timeout" >expect && test_cmp expect st &&
	test ! -s "$W/s8/stdout" &&
	touch "$TRASH/go8" && wait $holder &&
	sshd_sshtool a step-start "$W/s9" "echo locked-run; exit 75" 30 "$W" "$TRASH/gpu.lock" 5 &&
	sshd_sshtool a step-poll "$W/s9" 10000 >st &&
	echo "exit 75" >expect && test_cmp expect st &&
	echo locked-run >expect && test_cmp expect "$W/s9/stdout"
'

test_expect_success 'what a locked step leaves behind is killed before the next step gets the lock' '
	# s30 leaves a loop behind that stamps the time into alive, as fast as it
	# can, and exits; s31 waits for the same lock, then waits 0.3 s and reads
	# the last stamp. It must be older than s31 got the lock (t_run), and s30
	# must be recorded as ended (t_end) before that too.
	printf "%s\n" "while :; do date +%s.%N >\"\$1/alive.tmp\" && mv -f \"\$1/alive.tmp\" \"\$1/alive\"; done" \
		>"$TRASH/leave-$MARK.sh" &&
	sshd_sshtool a step-start "$W/s30" "sh \"$TRASH/leave-$MARK.sh\" \"$W\" >/dev/null 2>&1 & sleep 0.2; echo started" 30 \
		"$W" "$TRASH/gpu.lock" 10 &&
	sshd_sshtool a step-start "$W/s31" "sleep 0.3; cat \"$W/alive\"" 30 \
		"$W" "$TRASH/gpu.lock" 10 &&
	sshd_sshtool a step-poll "$W/s30" 10000 >st30 &&
	sshd_sshtool a step-poll "$W/s31" 10000 >st31 &&
	echo "exit 0" >expect && test_cmp expect st30 && test_cmp expect st31 &&
	! pgrep -f "leave-$MARK" &&
	read run30 <"$W/s30/t_run" && read end30 <"$W/s30/t_end" && read run31 <"$W/s31/t_run" &&
	read alive <"$W/s31/stdout" &&
	echo "s30 ran $run30 .. $end30; its leftover last alive $alive; s31 got the lock $run31" &&
	awk -v a="$run30" -v e="$end30" -v l="$alive" -v b="$run31" \
		"BEGIN { exit !(a <= l && l <= e && e <= b) }"
'

test_expect_success 'step paths and commands with spaces, quotes, $() and ; are literal' '
	odd="$W/st ep '\''q'\'' \"d\" \$(touch gpuorch-pwned-$$); touch gpuorch-pwned2-$$ \`touch gpuorch-pwned3-$$\`" &&
	mkdir -p "$odd.cwd" &&
	sshd_sshtool a step-start "$odd" "pwd; printf \"%s\\n\" \"a  b\" '\''c;d'\''" 30 "$odd.cwd" &&
	sshd_sshtool a step-poll "$odd" 10000 >st &&
	echo "exit 0" >expect && test_cmp expect st &&
	printf "%s\n" "$odd.cwd" "a  b" "c;d" >expect &&
	test_cmp expect "$odd/stdout" &&
	test $(ls "$W" | grep -c pwned) -eq 2 &&
	test ! -e "$HOME/gpuorch-pwned-$$" && test ! -e "$HOME/gpuorch-pwned2-$$" &&
	test ! -e "$HOME/gpuorch-pwned3-$$" && test ! -e "$odd.cwd/gpuorch-pwned-$$"
'

test_expect_success 'step output is capped' '
	sshd_sshtool a step-start "$W/s10" "head -c 100000 /dev/zero | tr \"\\0\" y" 30 &&
	sshd_sshtool a step-poll "$W/s10" 10000 >st &&
	sshd_sshtool a step-output "$W/s10" 1000 >out &&
	test_grep "stdout truncated" out &&
	test $(head -n 1 out | wc -c) -le 1001
'

test_expect_success 'no step process is left at the end' '
	! survivors
'

test_done
