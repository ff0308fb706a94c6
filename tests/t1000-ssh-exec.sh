#!/bin/sh
# asan: yes
test_description='ssh.c against a real sshd: exec, exit codes, signals, auth and connect errors'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"

if ! why=$(sshd_available); then
	test_skip 'ssh exec tests' "$why"
	test_done
fi

test_expect_success 'start sshd' '
	sshd_start a
'

test_expect_success 'exec returns stdout, stderr and the exit code' '
	test_expect_code 3 sshd_sshtool a exec "echo to-out; echo to-err >&2; exit 3" >out 2>err &&
	echo to-out >expect &&
	test_cmp expect out &&
	test_grep "^to-err$" err
'

# After authentication sshd still has Nagle on and answers in pieces; a
# client that waits for the last piece without acknowledging the first waits
# for its own delayed-ACK timer (~40 ms on Linux; ssh-conn.c ssh_ack_now).
# The command itself takes a few ms here, for an account whose login shell
# reads no rc file (a HOME of its own: the user's own ~/.bashrc may take
# longer than the timer).
test_expect_success 'the first command after authentication does not wait on a delayed ACK' '
	mkdir -p home-q &&
	SSHD_q_EXTRA_ENV="HOME=$TRASH/home-q" && export SSHD_q_EXTRA_ENV &&
	sshd_start q &&
	: >times &&
	for n in 1 2 3 4 5; do
		sshd_sshtool q --timing exec true 2>err &&
		# the cause of the stall, not a time: Nagle off on the socket
		test_grep "^sshtool: run took [0-9]* ms, TCP_NODELAY on$" err &&
		sed -n "s/^sshtool: run took \([0-9]*\) ms.*$/\1/p" err >>times || return 1
	done &&
	test "$(wc -l <times)" -eq 5 &&
	echo "authentication to the end of true (not judged): $(tr "\n" " " <times)ms" &&
	sshd_stop q
'

# A command whose reader stops it (the runner's journal ended, and the
# follow's `tail -f` has still to exit; or a command past its timeout) is let
# go at once: our CLOSE is sent, and sshd's, which comes only once the
# command has exited, is not waited for (ssh-exec.c channel_discard; it
# waited up to 200 ms). Five on one connection, each leaving a 30-s sleeper:
# each next command opens its channel beside them, and none of the five
# CLOSEs has come when the next starts (what happened, not how fast: the
# count of closes pending after each run is 1, 2, 3, 4, 5).
test_expect_success 'a command its reader stops is let go at once, without waiting for its exit' '
	SLEEPER="$TRASH/sleep-gpuorch-t1000-$$" &&
	cp "$(command -v sleep)" "$SLEEPER" &&
	test_when_finished "pkill -f \"$SLEEPER\" || :" &&
	sshd_sshtool a --repeat 5 exec-until stop "echo stop; \"$SLEEPER\" 30" >out 2>err &&
	test "$(grep -c "^stop$" out)" -eq 5 &&
	sed -n "s/^sshtool: let go [0-9]* ms after the mark, \([0-9]*\) close(s) pending$/\1/p" err >pending &&
	printf "%s\n" 1 2 3 4 5 >expect &&
	test_cmp expect pending &&
	pgrep -f "$SLEEPER" >/dev/null &&
	sshd_sshtool a exec "echo after" >out &&
	echo after >expect &&
	test_cmp expect out
'

test_expect_success 'exec sends stdin and drains large stdout and stderr together' '
	head -c 3000000 /dev/urandom | od -An -tx1 >input &&
	sshd_sshtool a exec "cat; cat >&2 </dev/null; head -c 2000000 /dev/zero | tr \"\\0\" x >&2" \
		<input >out 2>err &&
	test_cmp input out &&
	test "$(wc -c <err)" -eq 2000000
'

test_expect_success 'exit by a signal is decoded' '
	test_expect_code 99 sshd_sshtool a exec "kill -KILL \$\$" 2>err &&
	test_grep "sshtool: signal KILL" err &&
	test_expect_code 99 sshd_sshtool a exec "kill -TERM \$\$" 2>err &&
	test_grep "sshtool: signal TERM" err
'

test_expect_success 'the SSH session PATH has no CUDA (like a GPU host)' '
	sshd_sshtool a exec "echo \$PATH" >path &&
	! grep cuda path &&
	test_must_fail sshd_sshtool a exec "command -v nvcc"
'

test_expect_success 'a wrong key is an authentication error naming host, user and key' '
	ssh-keygen -q -t ed25519 -N "" -f other_key &&
	test_expect_code 18 "$SSHTOOL" --label a --port $SSHD_a_PORT --key "$TRASH/other_key" \
		--known-hosts "$SSHD_a_KNOWN_HOSTS" exec "touch $TRASH/ran" 2>err &&
	test_grep "a (127.0.0.1:$SSHD_a_PORT): authentication as .$(id -un). with key .$TRASH/other_key. was refused" err &&
	test ! -e ran
'

test_expect_success 'a missing key file is an authentication error naming the file' '
	test_expect_code 18 "$SSHTOOL" --label a --port $SSHD_a_PORT --key "$TRASH/nope" \
		--known-hosts "$SSHD_a_KNOWN_HOSTS" check 2>err &&
	test_grep "a (127.0.0.1:$SSHD_a_PORT): cannot read identity file .$TRASH/nope." err
'

test_expect_success 'an RSA key gets the libssh2 1.10 / OpenSSH 8.8 explanation' '
	ssh-keygen -q -t rsa -b 2048 -N "" -f rsa_key &&
	cat rsa_key.pub >>"$SSHD_a_DIR/authorized_keys" &&
	if "$SSHTOOL" --label a --port $SSHD_a_PORT --key "$TRASH/rsa_key" \
		--known-hosts "$SSHD_a_KNOWN_HOSTS" check 2>err
	then
		echo "this libssh2 can sign with rsa-sha2: nothing to explain"
	else
		cat err &&
		test_grep "libssh2 1.10 (Debian 12) cannot log in with an RSA key to OpenSSH 8.8 or later (it only signs with ssh-rsa/SHA-1, which the server refuses); use an ed25519 key" err
	fi
'

test_expect_success 'ssh-agent authentication' '
	unset SSH_AUTH_SOCK &&
	test_expect_code 18 "$SSHTOOL" --label a --port $SSHD_a_PORT \
		--known-hosts "$SSHD_a_KNOWN_HOSTS" check 2>err &&
	test_grep "cannot reach ssh-agent" err &&
	eval "$(ssh-agent -s)" >/dev/null &&
	test_when_finished "kill $SSH_AGENT_PID" &&
	ssh-add -q "$SSHD_a_IDENTITY" 2>/dev/null &&
	"$SSHTOOL" --label a --port $SSHD_a_PORT --known-hosts "$SSHD_a_KNOWN_HOSTS" \
		exec "echo via-agent" >out &&
	test_grep via-agent out
'

test_expect_success 'a closed port fails fast with "connection refused"' '
	sshd_start closed && port=$SSHD_closed_PORT && sshd_stop closed &&
	start=$(test_now_ms) &&
	test_expect_code 16 "$SSHTOOL" --label h --port $port --connect-timeout-ms 5000 \
		--key "$SSHD_a_IDENTITY" --known-hosts "$SSHD_a_KNOWN_HOSTS" check 2>err &&
	elapsed=$(test_elapsed_ms $start) &&
	echo "elapsed ${elapsed} ms (not judged: the message says refused, not timed out)" &&
	test_grep "h (127.0.0.1:$port): connection refused" err
'

if test_have_cmd python3; then
	test_expect_success 'a server that never speaks times out within the connect timeout' '
		python3 -c "
import socket, time, sys
s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(5)
print(s.getsockname()[1], flush=True)
conns = []
t = time.time()
while time.time() - t < 20:
    s.settimeout(1)
    try: conns.append(s.accept())
    except OSError: pass
" >silent.port &
		pid=$! &&
		test_when_finished "kill $pid" &&
		wait_for 30 "test -s silent.port" &&
		port=$(cat silent.port) &&
		start=$(test_now_ms) &&
		test_expect_code 20 "$SSHTOOL" --label mute --port $port --connect-timeout-ms 1500 \
			--key "$SSHD_a_IDENTITY" --known-hosts "$SSHD_a_KNOWN_HOSTS" check 2>err &&
		elapsed=$(test_elapsed_ms $start) &&
		echo "elapsed ${elapsed} ms" &&
		: "at least the timeout (a lower bound holds under any load); the message says which timeout ended it" &&
		test $elapsed -ge 1400 &&
		test_grep "mute (127.0.0.1:$port): SSH handshake: timed out after 1.5 s" err
	'
else
	test_skip 'a server that never speaks times out' 'python3 is not installed'
fi

test_expect_success 'an exec past its timeout returns a timeout error' '
	start=$(test_now_ms) &&
	test_expect_code 20 sshd_sshtool a --timeout-ms 1000 exec "sleep 30" 2>err &&
	elapsed=$(test_elapsed_ms $start) &&
	echo "elapsed ${elapsed} ms" &&
	# not judged: a sleep 30 that ran out would exit 0, without the message
	test_grep "a (127.0.0.1:$SSHD_a_PORT): remote command: timed out after 1.0 s" err
'

test_expect_success 'closing a plain exec channel does not kill the remote command' '
	test_expect_code 20 "$SSHTOOL" --label a --port $SSHD_a_PORT --key "$SSHD_a_IDENTITY" \
		--known-hosts "$SSHD_a_KNOWN_HOSTS" --timeout-ms 800 \
		exec "$(until_gate go-sr); touch \"$TRASH/still-ran\"" 2>err &&
	test_grep "remote command: timed out after 0.8 s" err &&
	test ! -e still-ran &&
	touch "$TRASH/go-sr" &&
	wait_for 30 "test -e still-ran"
'

# b is first tried on the port of a; its sshd, slowed down by a second, is
# still starting when that port answers (with the banner of a): only the host
# key tells the two apart.
test_expect_success 'sshd_start skips a port held by another sshd (files run in parallel)' '
	printf "#!/bin/sh\nsleep 1\nexec %s \"\$@\"\n" "$SSHD_BIN" >slow-sshd &&
	chmod +x slow-sshd &&
	SSHD_TRY_PORTS="$SSHD_a_PORT" SSHD_BIN="$TRASH/slow-sshd" sshd_start b &&
	echo "a on $SSHD_a_PORT, b on $SSHD_b_PORT" &&
	test "$SSHD_b_PORT" != "$SSHD_a_PORT" &&
	sshd_ssh b "echo b-answers" >b.out &&
	echo b-answers >expect && test_cmp expect b.out &&
	sshd_stop b
'

test_done
