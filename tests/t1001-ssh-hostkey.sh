#!/bin/sh
# asan: yes
test_description='ssh.c host key checking: changed keys refused, unknown keys refused or recorded'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"

if ! why=$(sshd_available); then
	test_skip 'ssh host key tests' "$why"
	test_done
fi

# st KNOWN_HOSTS ARGS...: sshtool against server a with another known_hosts
st() {
	_kh=$1
	shift
	# shellcheck disable=SC2154 # set by sshd_start (tests/lib/sshd.sh), through eval
	"$SSHTOOL" --label a --port "$SSHD_a_PORT" --key "$SSHD_a_IDENTITY" --known-hosts "$_kh" "$@"
}

test_expect_success 'start sshd; the recorded key matches' '
	sshd_start a &&
	sshd_sshtool a check >out &&
	fp=$(ssh-keygen -lf "$SSHD_a_DIR/host_ed25519.pub" -E sha256 | cut -d" " -f2) &&
	echo "fingerprint $fp" >expect &&
	test_cmp expect out
'

test_expect_success 'a changed host key is refused with its fingerprint, and nothing runs' '
	ssh-keygen -q -t ed25519 -N "" -f impostor &&
	{
		echo "# a comment line" &&
		echo "other.example ssh-ed25519 $(cut -d" " -f2 impostor.pub)" &&
		echo "[127.0.0.1]:$SSHD_a_PORT $(cut -d" " -f1,2 impostor.pub)"
	} >changed_kh &&
	cp changed_kh changed_kh.orig &&
	test_expect_code 17 st "$TRASH/changed_kh" exec "touch \"$TRASH/marker\"" >out 2>err &&
	cat err &&
	fp=$(ssh-keygen -lf "$SSHD_a_DIR/host_ed25519.pub" -E sha256 | cut -d" " -f2) &&
	test_grep "a (127.0.0.1:$SSHD_a_PORT): host key for .\[127.0.0.1\]:$SSHD_a_PORT. has CHANGED" err &&
	test_grep "fingerprint $fp" err &&
	test_grep "expected the key at $TRASH/changed_kh:3; if the change is expected, remove that line" err &&
	test ! -e marker &&
	test_cmp changed_kh.orig changed_kh &&
	test ! -s out
'

test_expect_success 'a changed key is refused even with --accept-new' '
	test_expect_code 17 st "$TRASH/changed_kh" --accept-new exec "touch \"$TRASH/marker\"" 2>err &&
	test_grep "has CHANGED" err &&
	test ! -e marker &&
	test_cmp changed_kh.orig changed_kh
'

test_expect_success 'nothing was offered to the server: no authentication in its log' '
	lines_before=$(wc -l <"$SSHD_a_LOG") &&
	test_must_fail st "$TRASH/changed_kh" check 2>/dev/null &&
	sleep 0.3 &&
	tail -n +$((lines_before + 1)) "$SSHD_a_LOG" >log.new &&
	cat log.new &&
	test_grep "Connection from 127.0.0.1" log.new &&
	! grep -iE "publickey|Accepted|session opened" log.new
'

test_expect_success 'an unknown host key is refused with its fingerprint and how to accept it' '
	echo "# nothing for this host" >unknown_kh &&
	test_expect_code 17 st "$TRASH/unknown_kh" exec "touch \"$TRASH/marker\"" 2>err &&
	cat err &&
	fp=$(ssh-keygen -lf "$SSHD_a_DIR/host_ed25519.pub" -E sha256 | cut -d" " -f2) &&
	test_grep "host key for .\[127.0.0.1\]:$SSHD_a_PORT. is not in .$TRASH/unknown_kh." err &&
	test_grep "fingerprint $fp" err &&
	test_grep "accept-new-host-key" err &&
	test ! -e marker &&
	echo "# nothing for this host" >expect &&
	test_cmp expect unknown_kh
'

test_expect_success 'with --accept-new the key is recorded and the command runs' '
	st "$TRASH/unknown_kh" --accept-new exec "echo ran" >out 2>err &&
	cat err &&
	test_grep "^note: a (127.0.0.1:$SSHD_a_PORT): added ssh-ed25519 host key SHA256:" err &&
	test_grep "^ran$" out &&
	head -n 1 unknown_kh >first &&
	echo "# nothing for this host" >expect &&
	test_cmp expect first &&
	grep "^\[127.0.0.1\]:$SSHD_a_PORT ssh-ed25519 $(cut -d" " -f2 "$SSHD_a_DIR/host_ed25519.pub")" unknown_kh &&
	ssh-keygen -F "[127.0.0.1]:$SSHD_a_PORT" -f unknown_kh
'

test_expect_success 'the recorded key is then trusted without the flag' '
	st "$TRASH/unknown_kh" exec "echo again" >out 2>err &&
	test_grep "^again$" out &&
	! grep "^note:" err &&
	test $(grep -c "127.0.0.1" unknown_kh) -eq 1
'

test_expect_success 'a missing known_hosts file is created with --accept-new' '
	test_expect_code 17 st "$TRASH/new_kh" check 2>err &&
	test ! -e new_kh &&
	st "$TRASH/new_kh" --accept-new check &&
	test -s new_kh &&
	st "$TRASH/new_kh" check
'

test_expect_success 'OpenSSH accepts the line gpuorch recorded' '
	ssh -q -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile="$TRASH/new_kh" \
		-o IdentitiesOnly=yes -i "$SSHD_a_IDENTITY" -p "$SSHD_a_PORT" \
		"$(id -un)@127.0.0.1" echo openssh-ok >out &&
	test_grep openssh-ok out
'

test_done
