#!/bin/sh
# asan: yes
test_description='ssh.c SFTP: upload/download round trip, atomic replace, caps, full disk'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"

if ! why=$(sshd_available); then
	test_skip 'ssh sftp tests' "$why"
	test_done
fi

test_expect_success 'start sshd' '
	sshd_start a &&
	W=$SSHD_a_WORKDIR
'

test_expect_success 'upload then download 5 MB; checksums match on both sides' '
	head -c 5242880 /dev/urandom >big &&
	sshd_sshtool a upload big "$W/big.bin" >out &&
	echo "sent 5242880" >expect &&
	test_cmp expect out &&
	sha256sum <big >sum.local &&
	sshd_sshtool a exec "sha256sum <\"$W/big.bin\"" >sum.remote &&
	test_cmp sum.local sum.remote &&
	sshd_sshtool a download "$W/big.bin" back &&
	cmp big back &&
	test ! -e "$W/big.bin.part"
'

test_expect_success 'an upload replaces an existing file' '
	echo old >"$W/replace.txt" &&
	echo new-content >new &&
	sshd_sshtool a upload new "$W/replace.txt" &&
	test_cmp new "$W/replace.txt" &&
	test ! -e "$W/replace.txt.part"
'

test_expect_success 'an empty file uploads' '
	: >empty &&
	sshd_sshtool a upload empty "$W/empty" &&
	test -f "$W/empty" && test ! -s "$W/empty"
'

test_expect_success 'paths with spaces, quotes, $() and ; are taken literally' '
	name="$W/a b '\''q'\'' \"d\" \$(touch gpuorch-pwned-$$); touch gpuorch-pwned2-$$ \`touch gpuorch-pwned3-$$\`" &&
	echo payload >p &&
	sshd_sshtool a upload p "$name" &&
	test_cmp p "$name" &&
	ls "$W" &&
	test $(ls "$W" | grep -c pwned) -eq 1 &&
	test ! -e "$HOME/gpuorch-pwned-$$" && test ! -e "$HOME/gpuorch-pwned2-$$" &&
	test ! -e "$HOME/gpuorch-pwned3-$$" &&
	sshd_sshtool a download "$name" p.back &&
	test_cmp p p.back
'

test_expect_success 'a download larger than its cap is refused' '
	test_expect_code 21 sshd_sshtool a download "$W/big.bin" capped 1000 2>err &&
	test_grep "a (127.0.0.1:$SSHD_a_PORT): .$W/big.bin. is larger than the 1000 bytes allowed" err &&
	test ! -e capped
'

test_expect_success 'a missing remote file is "not found", naming the path' '
	test_expect_code 22 sshd_sshtool a download "$W/nope" x 2>err &&
	test_grep "a (127.0.0.1:$SSHD_a_PORT): cannot open .$W/nope.: no such file" err
'

test_expect_success 'an upload into a missing directory fails clearly' '
	test_must_fail sshd_sshtool a upload p "$W/no/such/dir/f" 2>err &&
	test_grep "cannot create .$W/no/such/dir/f.part." err
'

full_disk_ok=
if ! test_is_root; then
	test_skip 'a full remote disk gives "no space left on device"' \
		'needs root to mount a 1 MiB tmpfs as the remote workdir'
elif mkdir -p "$TRASH/full" && mount -t tmpfs -o size=1m tmpfs "$TRASH/full" 2>/dev/null; then
	full_disk_ok=1
	test_at_exit "umount '$TRASH/full'"
else
	test_skip 'a full remote disk gives "no space left on device"' \
		'mount -t tmpfs failed (no CAP_SYS_ADMIN in this container?)'
fi
if [ -n "$full_disk_ok" ]; then
	test_expect_success 'a full remote disk gives "no space left on device" and leaves no .part' '
		head -c 4194304 /dev/urandom >four &&
		test_expect_code 21 sshd_sshtool a upload four "$TRASH/full/four.bin" >out 2>err &&
		cat err &&
		test_grep "a (127.0.0.1:$SSHD_a_PORT): cannot write .$TRASH/full/four.bin.: no space left on device" err &&
		test ! -e "$TRASH/full/four.bin.part" &&
		test ! -e "$TRASH/full/four.bin" &&
		test -z "$(ls -A "$TRASH/full")"
	'
	test_expect_success 'after a failed upload the same file system still takes a small one' '
		echo small >small &&
		sshd_sshtool a upload small "$TRASH/full/small" &&
		test_cmp small "$TRASH/full/small"
	'
fi

test_done
