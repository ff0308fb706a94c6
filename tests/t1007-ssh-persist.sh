#!/bin/sh
# cost: 60
# asan: yes
test_description='the session keeper (persist_s): a re-run opens no SSH connection, none without persist_s, the keeper leaves when unused or when its session breaks and removes its socket, a host down is reported without hanging, a stale socket breaks nothing, private directory and socket, a keeper made for one identity is never used for another'
# "Accepted publickey" lines in sshd's log count the SSH connections that
# authenticated (one per connection: gpuorch offers one key).
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

if ! why=$(sshd_available); then
	test_skip 'session keeper tests' "$why"
	test_done
fi
if ! test_have_cmd cc; then
	test_skip 'session keeper tests' 'no C compiler (cc) to build the execd with'
	test_done
fi

# the keepers' private directory: $XDG_RUNTIME_DIR/gpuorch-mux
XDG_RUNTIME_DIR=$TRASH/rt
export XDG_RUNTIME_DIR
MUX=$XDG_RUNTIME_DIR/gpuorch-mux
mkdir -m 700 "$XDG_RUNTIME_DIR"
KEEPER="__ssh-keeper $MUX/"
test_at_exit "pkill -CONT -f '$KEEPER'; pkill -KILL -f '$KEEPER'; pkill -f '$TRASH/.*gpuorch-execd'"

accepted() {
	grep -c "Accepted publickey" "$(sshd_var "$1" LOG)"
}
keepers() {
	pgrep -f "$KEEPER" | wc -l | tr -d ' '
}
sockets() {
	ls "$MUX"/*.sock 2>/dev/null | wc -l | tr -d ' '
}
# run NAME HOSTS: gpuorch run of cpu1 into NAME (at most 300 s: a fresh run
# under ASan on a loaded 2-CPU machine has taken over 60)
run() {
	(cd proj && timeout 300 "$GPUORCH" run experiments/cpu1.json --hosts "../$2" --plain --reconnect-timeout 3) >"$1" 2>&1
}

test_expect_success 'setup: a project with one CPU program, hosts with and without persist_s' '
	project_init &&
	cat >proj/experiments/cpu1.json <<-JSON &&
	{"schema": 1, "name": "cpu1", "phase": "keeper test",
	 "sources": ["cpu/cputimer.c"], "targets": {"H100": "sm_90a"},
	 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
	 "problems": [{"name": "p", "params": {"work": 1000, "reps": 3}}],
	 "steps": [{"kind": "benchmark", "program": "cputimer", "timeout_s": 60}]}
	JSON
	sshd_start a &&
	sshd_write_hosts_json plain.json a &&
	sed "s|\"connect_timeout_s\": 20|\"connect_timeout_s\": 20, \"persist_s\": 600|" plain.json >hosts.json &&
	grep -q "\"persist_s\": 600" hosts.json
'

test_expect_success 'hosts.json: a bad persist_s names the host and the fix' '
	sed "s|\"persist_s\": 600|\"persist_s\": -1|" hosts.json >bad1.json &&
	test_must_fail "$GPUORCH" hosts list --hosts bad1.json 2>err &&
	test_grep "persist_s" err &&
	sed "s|\"persist_s\": 600|\"persist_s\": 600, \"execd_idle_s\": 0|" hosts.json >bad2.json &&
	test_must_fail "$GPUORCH" hosts list --hosts bad2.json 2>err &&
	cat err &&
	test_grep "host .a.: a kept session .*set \"execd_idle_s\" above 0 or \"persist_s\" to 0" err
'

test_expect_success 'without persist_s: no keeper, no socket, one connection per run' '
	run r0 plain.json &&
	W=$(sshd_var a WORKDIR) &&
	wait_for 60 "ls \"$W\"/execd/*.sock >/dev/null 2>&1" &&
	n=$(accepted a) &&
	run r1 plain.json &&
	test_grep "through the host.s execd" r1 &&
	test "$(accepted a)" = $((n + 1)) &&
	test "$(keepers)" = 0 &&
	test "$(sockets)" = 0
'

test_expect_success 'with persist_s: the first run starts a keeper, a re-run opens no SSH connection' '
	run r2 hosts.json &&
	cat r2 &&
	test_grep "PASS" r2 &&
	! grep "kept session" r2 &&
	test "$(keepers)" = 1 &&
	test "$(sockets)" = 1 &&
	n=$(accepted a) &&
	run r3 hosts.json &&
	cat r3 &&
	test_grep "(kept session: no new SSH connection)" r3 &&
	test_grep "host key SHA256:.* (kept session)" "$(last_run_dir)/run.json" &&
	test_grep "through the host.s execd" r3 &&
	d=$(last_run_dir) &&
	test "$(jq_ "$d/run.json" outcome)" = passed &&
	test "$(jq_ "$d/run.json" hosts.0.steps.0.status)" = PASS &&
	test "$(accepted a)" = "$n" &&
	run r4 hosts.json &&
	test "$(accepted a)" = "$n" &&
	test "$(keepers)" = 1
'

test_expect_success 'an edited source rides through the keeper too' '
	echo "/* edited */" >>proj/cpu/cputimer.c &&
	n=$(accepted a) &&
	run r5 hosts.json &&
	cat r5 &&
	d=$(last_run_dir) &&
	test "$(jq_ "$d/run.json" outcome)" = passed &&
	test "$(jq_ "$d/run.json" hosts.0.ship.files_sent)" = 1 &&
	test "$(accepted a)" = "$n"
'

test_expect_success 'the keepers directory is 0700, the socket 0600, both ours' '
	test "$(stat -c %a "$MUX")" = 700 &&
	test "$(stat -c %u "$MUX")" = "$(id -u)" &&
	S=$(ls "$MUX"/*.sock) &&
	test -S "$S" &&
	test "$(stat -c %a "$S")" = 600 &&
	test "$(stat -c %u "$S")" = "$(id -u)"
'

test_expect_success 'a directory that others can enter is refused: the run connects the ordinary way' '
	chmod 755 "$MUX" &&
	n=$(accepted a) &&
	run r6 hosts.json &&
	chmod 700 "$MUX" &&
	cat r6 &&
	test_grep "PASS" r6 &&
	test_grep "not a private directory" r6 &&
	test "$(accepted a)" = $((n + 1))
'

test_expect_success 'a keeper made for identity A is not used with identity B; B'"'"'s leaves after persist_s unused and removes its socket' '
	D=$(sshd_var a DIR) &&
	ssh-keygen -q -t ed25519 -N "" -C keyB -f "$TRASH/id_b" &&
	cat "$TRASH/id_b.pub" >>"$D/authorized_keys" &&
	sed -e "s|$(sshd_var a IDENTITY)|$TRASH/id_b|" -e "s|\"persist_s\": 600|\"persist_s\": 15|" \
		hosts.json >hb.json &&
	grep -q id_b hb.json &&
	fpb=$(ssh-keygen -lf "$TRASH/id_b.pub" | cut -d" " -f2) &&
	n=$(accepted a) &&
	run r7 hb.json &&
	cat r7 &&
	! grep "kept session" r7 &&
	test_grep "PASS" r7 &&
	test "$(accepted a)" -gt "$n" &&
	tail -n 20 "$(sshd_var a LOG)" | grep "Accepted publickey" | grep -q "$fpb" &&
	test "$(sockets)" = 2 &&
	test "$(keepers)" = 2 &&
	wait_for 60 "test \"\$(sockets)\" = 1" &&
	wait_for 30 "test \"\$(keepers)\" = 1" &&
	cat "$MUX"/*.log >klog &&
	test_grep "unused for 15 s: leaving" klog
'

test_expect_success 'a keeper killed (its socket left behind): the next run connects and starts a new one' '
	pkill -KILL -f "$KEEPER" &&
	wait_for 30 "test \"\$(keepers)\" = 0" &&
	test "$(sockets)" = 1 &&
	n=$(accepted a) &&
	run r8 hosts.json &&
	cat r8 &&
	! grep "kept session" r8 &&
	test_grep "PASS" r8 &&
	test "$(keepers)" = 1 &&
	run r9 hosts.json &&
	test_grep "kept session" r9 &&
	test_grep "PASS" r9 &&
	test "$(accepted a)" = $((n + 2))
'

test_expect_success 'sshd killed: the keeper leaves and removes its socket; a run reports the host down without hanging; after a restart runs pass again' '
	sshd_kill a &&
	wait_for 20 "test \"\$(keepers)\" = 0" &&
	test "$(sockets)" = 0 &&
	cat "$MUX"/*.log >klog &&
	test_grep "session was lost" klog &&
	test_must_fail run r10 hosts.json &&
	cat r10 &&
	test_grep "connection refused" r10 &&
	sshd_restart a &&
	run r11 hosts.json &&
	test_grep "PASS" r11 &&
	run r12 hosts.json &&
	test_grep "kept session" r12 &&
	test_grep "PASS" r12
'

test_expect_success 'sshd killed while the keeper lives and a run goes on: no hang, the host fails clearly' '
	test "$(keepers)" = 1 &&
	sshd_kill a &&
	test_must_fail run r13 hosts.json &&
	cat r13 &&
	! grep "timed out after 60" r13 &&
	test_grep "refused\|lost" r13 &&
	wait_for 20 "test \"\$(keepers)\" = 0" &&
	test "$(sockets)" = 0 &&
	sshd_restart a
'

test_expect_success 'a keeper that does not answer (stopped): the run connects the ordinary way without waiting long' '
	run r14 hosts.json &&
	test "$(keepers)" = 1 &&
	pkill -STOP -f "$KEEPER" &&
	t0=$(test_now_ms) &&
	run r15 hosts.json &&
	t1=$(test_now_ms) &&
	pkill -CONT -f "$KEEPER" &&
	cat r15 &&
	! grep "kept session" r15 &&
	test_grep "PASS" r15 &&
	echo "run beside a stopped keeper: $((t1 - t0)) ms (not judged: it passed without the kept session)" &&
	run r16 hosts.json &&
	test_grep "kept session" r16
'

test_expect_success 'gpuorch hosts disconnect stops the keeper and removes its socket' '
	test "$(keepers)" = 1 &&
	"$GPUORCH" hosts disconnect --hosts hosts.json >out &&
	cat out &&
	test_grep "^a  session keeper stopped" out &&
	wait_for 30 "test \"\$(keepers)\" = 0" &&
	test "$(sockets)" = 0 &&
	"$GPUORCH" hosts disconnect --hosts hosts.json >out &&
	test_grep "no session keeper is running" out &&
	: "disconnect stopped the execd too: a run starts it again for the tests below" &&
	run r13b hosts.json &&
	{ wait_for 60 "ls \"$(sshd_var a WORKDIR)\"/execd/*.sock >/dev/null 2>&1" || { cat r13b; false; }; }
'

test_expect_success 'through a keeper, an exec channel and SFTP open the connection'"'"'s own session when they need it' '
	W=$(sshd_var a WORKDIR) &&
	XS=$(ls "$W"/execd/*.sock) &&
	sshd_sshtool a --user "$(id -un)" --persist 600 --execd "$XS" exec "echo first" >out 2>err &&
	test "$(keepers)" = 1 &&
	n=$(accepted a) &&
	sshd_sshtool a --user "$(id -un)" --persist 600 --execd "$XS" exec "echo kept" >out 2>err &&
	test_grep "^kept$" out &&
	test_grep "via keeper" err &&
	head -c 3000000 /dev/urandom | od -An -tx1 >input &&
	test_expect_code 3 sshd_sshtool a --user "$(id -un)" --persist 600 --execd "$XS" \
		exec "cat; head -c 2000000 /dev/zero | tr \"\\0\" x >&2; exit 3" <input >out 2>err &&
	test_cmp input out &&
	test "$(head -c 2000000 err | tr -d x | wc -c)" -eq 0 &&
	test_grep "via keeper" err &&
	test "$(accepted a)" = "$n" &&
	echo payload >up.txt &&
	sshd_sshtool a --user "$(id -un)" --persist 600 upload up.txt "$W/up.txt" >out 2>err &&
	cat out err &&
	cmp up.txt "$W/up.txt" &&
	test "$(accepted a)" = $((n + 1)) &&
	sshd_sshtool a --user "$(id -un)" --persist 600 exec "echo plain" >out 2>err &&
	test_grep "^plain$" out &&
	test "$(accepted a)" = $((n + 2)) &&
	"$GPUORCH" hosts disconnect --hosts hosts.json >out &&
	wait_for 30 "test \"\$(keepers)\" = 0"
'

test_expect_success 'a keeper killed in the middle of a command: the command fails at once, naming the host and the keeper; the next one connects' '
	W=$(sshd_var a WORKDIR) &&
	: "the disconnect above stopped the execd too: a run starts it again" &&
	run r14k hosts.json &&
	wait_for 60 "ls \"$W\"/execd/*.sock >/dev/null 2>&1" &&
	XS=$(ls "$W"/execd/*.sock) &&
	sshd_sshtool a --user "$(id -un)" --persist 600 --execd "$XS" exec true 2>err &&
	test "$(keepers)" = 1 &&
	t0=$(test_now_ms) &&
	{ sshd_sshtool a --user "$(id -un)" --persist 600 --execd "$XS" --timeout-ms 30000 \
		exec "touch $TRASH/started; sleep 20; echo never" >out 2>err & } &&
	wait_for 10 "test -e \"$TRASH/started\"" &&
	pkill -KILL -f "$KEEPER" &&
	wait &&
	t1=$(test_now_ms) &&
	cat out err &&
	! grep never out &&
	test_grep "a (127.0.0.1:[0-9]*): the host.s execd dropped the command before it ended (through the session keeper)" err &&
	echo "the kill to the error: $((t1 - t0)) ms (not judged: no \"never\", the drop named)" &&
	sshd_sshtool a --user "$(id -un)" --persist 600 --execd "$XS" exec "echo again" >out 2>err &&
	test_grep "^again$" out &&
	! grep "via keeper" err &&
	"$GPUORCH" hosts disconnect --hosts hosts.json >out &&
	wait_for 30 "test \"\$(keepers)\" = 0"
'

if [ "${GPUORCH_NO_VALGRIND:-0}" = 1 ] || ! command -v valgrind >/dev/null 2>&1; then
	test_skip 'the keeper under valgrind' 'valgrind is not installed (or GPUORCH_NO_VALGRIND=1)'
else
	test_expect_success 'the keeper under valgrind (the plain build): relays a run, leaves when asked, leaks nothing' '
		run r17 hosts.json &&
		test "$(keepers)" = 1 &&
		S=$(ls "$MUX"/*.sock) &&
		"$GPUORCH" hosts disconnect --hosts hosts.json >out &&
		wait_for 30 "test \"\$(keepers)\" = 0" &&
		valgrind -q --leak-check=full --show-leak-kinds=definite,indirect \
			--errors-for-leak-kinds=definite,indirect --log-file="$TRASH/vgk.%p" \
			"$SRCDIR/build/gpuorch" __ssh-keeper "$S" a 127.0.0.1 "$(sshd_var a PORT)" "$(id -un)" \
			"$(sshd_var a IDENTITY)" "$(sshd_var a KNOWN_HOSTS)" 20000 15 600 &&
		test -S "$S" &&
		run r18 hosts.json &&
		cat r18 &&
		test_grep "kept session" r18 &&
		test_grep "PASS" r18 &&
		"$GPUORCH" hosts disconnect --hosts hosts.json >out &&
		test_grep "session keeper stopped" out &&
		wait_for 20 "test \"\$(keepers)\" = 0" &&
		ls "$TRASH"/vgk.* &&
		cat "$TRASH"/vgk.* &&
		! test -s "$(ls "$TRASH"/vgk.* | tail -n 1)" &&
		test "$(cat "$TRASH"/vgk.* | wc -c)" = 0
	'
fi

test_expect_success 'the keepers logged no sanitizer report (under ASan their stderr is the log)' '
	cat "$MUX"/*.log >klog &&
	! grep -n "Sanitizer\|runtime error" klog
'

test_done
