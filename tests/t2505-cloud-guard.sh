#!/bin/sh
# cost: 55
# asan: yes
# waits: yes
test_description='the instance guard (a dead-man switch on the instance) and the controller heartbeat, on a loopback sshd; the guard action is a marker, never a power-off'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/cloudlib.sh"

GUARDTOOL=${GUARDTOOL:-$SRCDIR/build/tests/guardtool}
case "$GPUORCH" in */asan/*) GUARDTOOL=$SRCDIR/build/asan/tests/guardtool ;; esac

if ! _why=$(sshd_available); then
	test_skip 'guard tests' "$_why"
	test_done
fi

# hosts FILE 'INSTANCE-MEMBERS': host g (running sshd) with an instance whose
# guard action appends to $TRASH/fired
hosts() {
	cloud_hosts "$1" g ", \"guard_action\": \"echo fired >>$TRASH/fired\"$2"
}

fired_reason() {
	cut -d" " -f1 "$(sshd_var g WORKDIR)/guard/fired"
}
# fired_time: when the guard fired, in seconds (its own date +%s)
fired_time() {
	cut -d" " -f2 "$(sshd_var g WORKDIR)/guard/fired"
}

# idle_stop_min 0.2 (12 s) where nothing but the guard's own 1-s polls
# matter; 0.5 (30 s, beats every 7.5 s) where the heartbeat must keep it
# quiet: the beats are SSH commands, and on a loaded machine (CI runs many
# test files at a time on two cores, under ASan too) beats took over 4.5 s,
# and a 12 s window fired while the controller was feeding it. The disarm
# test has a window of a minute: install and disarm are two SSH logins,
# which must not outlast it.
test_expect_success 'setup' '
	sshd_start g && test_at_exit "cloud_cleanup_ g" &&
	hosts idle.json ", \"idle_stop_min\": 0.2" &&
	hosts beat.json ", \"idle_stop_min\": 0.5" &&
	hosts long.json ", \"idle_stop_min\": 1" &&
	hosts life.json ", \"idle_stop_min\": 10, \"max_lifetime_min\": 0.05"
'

test_expect_success 'fed by the heartbeat thread it never fires; when the beats stop it fires after idle_stop_min' '
	rm -f fired &&
	"$GUARDTOOL" beat.json g install &&
	test -n "$(cloud_guard_pid g)" &&
	"$GUARDTOOL" beat.json g beat 40 >beat.out &&
	test ! -s beat.out &&
	test ! -f fired &&
	wait_for 60 "test -s fired" &&
	: "30 s after the last beat, on the instance clock (the beat stamps the heartbeat file, the guard stamps fired)" &&
	hb=$(stat -c %Y "$(sshd_var g WORKDIR)/guard/heartbeat") && t_fire=$(fired_time) &&
	echo "last beat $hb, fired $t_fire" &&
	test $((t_fire - hb)) -ge 30 &&
	test "$(cat fired)" = fired &&
	test "$(fired_reason)" = idle &&
	test -z "$(cloud_guard_pid g)"
'

test_expect_success 'a running step counts as activity: no fire until it ends' '
	rm -f fired &&
	W=$(sshd_var g WORKDIR) && mkdir -p "$W/runs/r1/s1" &&
	{ { sleep 20; date +%s >step.end; } & } && spid=$! && echo $spid >"$W/runs/r1/s1/pgid" &&
	"$GUARDTOOL" idle.json g install &&
	: "past the 12 s idle window: only the step kept it from firing" &&
	sleep 15 &&
	test ! -f fired &&
	wait $spid &&
	wait_for 30 "test -s fired" &&
	test "$(fired_reason)" = idle &&
	: "12 s after the last poll that saw the step (polls 1 s apart, times in whole seconds)" &&
	t_end=$(cat step.end) && t_fire=$(fired_time) && echo "step ended $t_end, fired $t_fire" &&
	test $((t_fire - t_end)) -ge 10 &&
	rm -rf "$W/runs/r1"
'

test_expect_success 'a running step counts under a work directory whose path has a blank too' '
	: "guard.sh itself, on this machine: the work directory is the test'"'"'s" &&
	G="$TRASH/my work/guard" && mkdir -p "$G" "$TRASH/my work/runs/r3/s1" &&
	echo 2 >"$G/idle_s" && echo 0 >"$G/deadline" && echo 1 >"$G/poll_s" &&
	echo "echo fired" >"$G/action" && touch "$G/heartbeat" &&
	test_when_finished "rm -f \"$G/heartbeat\"" &&
	{ { sleep 6; date +%s >step3.end; } & } && spid=$! && echo $spid >"$TRASH/my work/runs/r3/s1/pgid" &&
	{ setsid sh -c "$(cat "$SRCDIR/orchestrator/cloud/guard.sh")" gpuorch-guard "$G" \
		</dev/null >/dev/null 2>&1 & } &&
	wait $spid &&
	: "the 2 s idle window passed long before the step ended: only the step kept it from firing" &&
	test ! -f "$G/fired" &&
	wait_for 15 "test -s \"$G/action.log\"" &&
	test "$(cat "$G/action.log")" = fired &&
	t_end=$(cat step3.end) && t_fire=$(cut -d" " -f2 "$G/fired") && echo "step ended $t_end, fired $t_fire" &&
	test "$(cut -d" " -f1 "$G/fired")" = idle &&
	test $((t_fire - t_end)) -ge 1
'

test_expect_success 'max_lifetime_min fires even while a step runs (a hung loop looks busy)' '
	rm -f fired &&
	W=$(sshd_var g WORKDIR) && mkdir -p "$W/runs/r2/s1" &&
	{ sleep 60 & } && spid=$! && echo $spid >"$W/runs/r2/s1/pgid" &&
	test_when_finished "kill $spid; rm -rf \"$W/runs/r2\"" &&
	"$GUARDTOOL" life.json g install &&
	wait_for 9 "test -s fired" &&
	test "$(fired_reason)" = max_lifetime &&
	kill -0 $spid
'

test_expect_success 'a disarmed guard exits and never fires' '
	rm -f fired &&
	"$GUARDTOOL" long.json g install &&
	pid=$(cloud_guard_pid g) && test -n "$pid" &&
	"$GUARDTOOL" long.json g disarm &&
	# gone or a zombie (the guard is not this shell'"'"'s child: whoever
	# reaps it may be slow, and kill -0 reaches a zombie): a process that
	# has exited fires nothing
	wait_for 30 "case \$(ps -o stat= -p $pid 2>/dev/null) in \"\" | Z*) true ;; *) false ;; esac" &&
	test -z "$(cloud_guard_pid g)" &&
	test ! -f fired &&
	test ! -f "$(sshd_var g WORKDIR)/guard/fired"
'

test_done
