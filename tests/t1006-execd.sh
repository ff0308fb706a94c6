#!/bin/sh
# cost: 40
# asan: yes
test_description='the host execd: commands over a direct-streamlocal channel without a login shell, the same results as exec, stale and absent execds fall back, a client that leaves hangs up its command, gpuorch run re-runs without any login shell'
# The account's ~/.bashrc appends a line to a log for every shell that reads
# it (sshd starts bash for every exec request; bash reads .bashrc when sshd
# runs it): the log counts login shells.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

if ! why=$(sshd_available); then
	test_skip 'execd tests' "$why"
	test_done
fi
if ! test_have_cmd cc; then
	test_skip 'execd tests' 'no C compiler (cc) to build the execd with'
	test_done
fi

XHOME=$TRASH/home
XD=$TRASH/xd
XS=$XD/t.sock
SHELLS=$TRASH/shells.log
MARK=gpuorch-t1006-$$-mark
SLEEPER="$TRASH/sleep-$MARK"
cp "$(command -v sleep)" "$SLEEPER"
test_at_exit "pkill -KILL -f '$MARK'; pkill -f '$TRASH/.*gpuorch-execd'"

shells() {
	wc -l <"$SHELLS" | tr -d ' '
}

# xtool ARGS: sshtool against server a through the execd on $XS
xtool() {
	sshd_sshtool a --execd "$XS" "$@"
}

test_expect_success 'setup: an account whose .bashrc logs each shell, the execd built and started over SSH' '
	mkdir -p "$XHOME" &&
	echo "echo shell >>$SHELLS" >"$XHOME/.bashrc" &&
	: >"$SHELLS" &&
	SSHD_a_EXTRA_ENV="HOME=$XHOME" && export SSHD_a_EXTRA_ENV &&
	sshd_start a &&
	sshd_sshtool a exec "true" &&
	test "$(shells)" = 1 &&
	mkdir -m 700 "$XD" &&
	cc -O2 -Wall -Wextra -Werror -o "$XD/gpuorch-execd" "${T1006_EXECD_SRC:-$SRCDIR/orchestrator/remote/host/gpuorch-execd.c}" &&
	sshd_sshtool a exec "$XD/gpuorch-execd start $XS 600" >out &&
	test_grep "^started [0-9]" out &&
	test -S "$XS" &&
	test "$(stat -c %a "$XS")" = 600 &&
	sshd_sshtool a exec "$XD/gpuorch-execd start $XS 600" >out &&
	test_grep "^running$" out
'

test_expect_success 'exec through the execd: stdout, stderr and the exit code, and no login shell' '
	n=$(shells) &&
	test_expect_code 3 xtool exec "echo to-out; echo to-err >&2; exit 3" >out 2>err &&
	echo to-out >expect &&
	test_cmp expect out &&
	test_grep "^to-err$" err &&
	test_grep "^sshtool: via execd$" err &&
	test "$(shells)" = "$n"
'

test_expect_success 'through the execd: 3 MB of stdin, stdout and 2 MB of stderr together' '
	head -c 3000000 /dev/urandom | od -An -tx1 >input &&
	xtool exec "cat; cat >&2 </dev/null; head -c 2000000 /dev/zero | tr \"\\0\" x >&2" \
		<input >out 2>err &&
	test_cmp input out &&
	test "$(head -c 2000000 err | tr -d x | wc -c)" -eq 0 &&
	test "$(tail -c +2000001 err)" = "sshtool: via execd"
'

test_expect_success 'through the execd: an end by a signal is decoded' '
	test_expect_code 99 xtool exec "kill -KILL \$\$" 2>err &&
	test_grep "sshtool: signal KILL" err &&
	test_expect_code 99 xtool exec "kill -TERM \$\$" 2>err &&
	test_grep "sshtool: signal TERM" err &&
	test_grep "via execd" err
'

test_expect_success 'through the execd: the same directory, PATH and HOME as an exec request' '
	sshd_sshtool a exec "pwd; echo \$PATH; echo \$HOME; umask" >by-exec &&
	xtool exec "pwd; echo \$PATH; echo \$HOME; umask" >by-execd 2>err &&
	test_grep "via execd" err &&
	test_cmp by-exec by-execd &&
	test_grep "^$XHOME$" by-execd
'

test_expect_success 'a command that does not read its stdin ends normally' '
	head -c 5000000 /dev/zero >zeros &&
	xtool exec "head -c 3 >/dev/null; echo done" <zeros >out 2>err &&
	echo done >expect &&
	test_cmp expect out &&
	test_grep "via execd" err
'

test_expect_success 'a command that closes its outputs before it ends: its end reaches the client as soon as an ordinary one'"'"'s, not at the server'"'"'s 200 ms tick' '
	# the same 20 ms command, one whose outputs close at its exit, one that
	# closes them first (its handler then sees EOF while the command still
	# runs): 4 batches of 3 runs each, alternating, so that a load that
	# comes and goes weighs on both; the medians of the batch medians
	: >med-plain && : >med-closed &&
	for i in 1 2 3 4; do
		xtool --repeat 3 exec "sleep 0.02" 2>err-plain &&
		xtool --repeat 3 exec "exec >/dev/null 2>&1; sleep 0.02" 2>err-closed &&
		cat err-plain err-closed &&
		test_grep "via execd" err-closed &&
		sed -n "s/^sshtool: 3 runs, median \([0-9]*\) ms.*/\1/p" err-plain >>med-plain &&
		sed -n "s/^sshtool: 3 runs, median \([0-9]*\) ms.*/\1/p" err-closed >>med-closed || return 1
	done &&
	test $(wc -l <med-plain) = 4 && test $(wc -l <med-closed) = 4 &&
	a=$(sort -n med-plain | sed -n 2,3p | awk "{ s += \$1 } END { print int(s / 2) }") &&
	b=$(sort -n med-closed | sed -n 2,3p | awk "{ s += \$1 } END { print int(s / 2) }") &&
	echo "outputs closed first: $b ms; at exit: $a ms (medians of 4 batch medians)" &&
	test $((b - a)) -lt 120
'

test_expect_success 'a client that leaves mid-command hangs the command up' '
	# the command says it got SIGHUP (the execd KILLs the group 5 s after
	# it, so only the stamp tells a hangup from that; no time bound needed)
	test_expect_code 20 xtool --timeout-ms 1000 exec \
		"trap \"echo hup >\\\"$TRASH/hup-seen\\\"; exit 0\" HUP; \"$SLEEPER\" 60 & wait" 2>err &&
	wait_for 30 "test -s \"$TRASH/hup-seen\"" &&
	wait_for 30 "! pgrep -f \"$SLEEPER\" >/dev/null"
'

# the runner's follow through the execd ends so: its reader stops at the
# journal's end while `tail -f` still runs; the client lets the channel go
# at once (ssh-exec.c channel_discard) and the execd still hangs it up. The
# mark comes once the sleeper runs its own program: a hang-up between its
# fork and its exec can be lost with the shell's trap, in the child (the
# execd hangs a group up once, as sshd does)
test_expect_success 'a command its reader stops is let go at once and hung up' '
	rm -f hup-seen &&
	cat >stopped.sh <<-EOF &&
	trap "echo hup >\"$TRASH/hup-seen\"; exit 0" HUP
	"$SLEEPER" 60 &
	p=\$!
	until case \$(readlink /proc/\$p/exe) in */sleep-$MARK) true ;; *) false ;; esac; do sleep 0.01; done
	echo started
	wait
	EOF
	xtool exec-until started "sh $TRASH/stopped.sh" >out 2>err &&
	test_grep "^started$" out &&
	test_grep "via execd" err &&
	test_grep "^sshtool: let go [0-9]* ms after the mark" err &&
	wait_for 30 "test -s \"$TRASH/hup-seen\"" &&
	wait_for 30 "! pgrep -f \"$SLEEPER\" >/dev/null"
'

test_expect_success 'no execd at the socket: the command runs the ordinary way' '
	n=$(shells) &&
	test_expect_code 4 sshd_sshtool a --execd "$XD/none.sock" exec "echo hi; exit 4" >out 2>err &&
	echo hi >expect &&
	test_cmp expect out &&
	test_grep "^sshtool: via exec$" err &&
	test "$(shells)" = $((n + 1))
'

test_expect_success 'a changed .bashrc makes the execd stale: the command runs the ordinary way, the execd leaves' '
	xtool exec "true" 2>err && test_grep "via execd" err &&
	echo "export T1006=changed; echo shell >>$SHELLS" >"$XHOME/.bashrc" &&
	xtool exec "echo \$T1006" >out 2>err &&
	echo changed >expect &&
	test_cmp expect out &&
	test_grep "^sshtool: via exec$" err &&
	wait_for 30 "test ! -S \"$XS\"" &&
	sshd_sshtool a exec "$XD/gpuorch-execd start $XS 600" >out &&
	test_grep "^started" out &&
	xtool exec "echo \$T1006" >out 2>err &&
	test_cmp expect out &&
	test_grep "via execd" err
'

test_expect_success 'an execd left idle goes, and removes its socket' '
	sshd_sshtool a exec "$XD/gpuorch-execd start $XD/idle.sock 1" >out &&
	# "started PID" comes after the bind: the socket was there (under load
	# the 1 s may be over before a test -S here could look)
	pid=$(sed -n "s/^started \([0-9]*\)$/\1/p" out) && test -n "$pid" &&
	wait_for 60 "test ! -e \"$XD/idle.sock\"" &&
	wait_for 60 "case \$(ps -o stat= -p $pid 2>/dev/null) in \"\" | Z*) true ;; *) false ;; esac"
'

test_expect_success 'bad arguments are refused with the usage' '
	test_expect_code 2 "$XD/gpuorch-execd" start relative.sock 60 2>err &&
	test_grep "usage" err &&
	test_expect_code 2 "$XD/gpuorch-execd" start "$XD/x.sock" 0 2>err &&
	test_grep "usage" err &&
	long=$(printf "%0120d" 0) &&
	test_expect_code 2 "$XD/gpuorch-execd" start "/tmp/$long.sock" 60 2>err &&
	test_grep "too long" err
'

# ------------------------------------------------- a put of blobs (issue 35)

# frames FILE...: each file as a put carries it, "SHA256 SIZE" and its bytes
frames() {
	for f in "$@"; do
		printf "%s %s\n" "$(sha256sum <"$f" | cut -c1-64)" "$(wc -c <"$f" | tr -d " ")" && cat "$f" || return 1
	done
}
sha() { sha256sum <"$1" | cut -c1-64; }

test_expect_success 'a put through the execd: each blob stored read-only with mtime 0, byte-identical, its directory made' '
	mkdir bsrc &&
	head -c 300000 /dev/urandom >bsrc/a && : >bsrc/empty && printf x >bsrc/one &&
	frames bsrc/a bsrc/empty bsrc/one >put1 &&
	xtool put "$TRASH/store/b" <put1 2>err &&
	for f in a empty one; do
		cmp "$TRASH/store/b/$(sha bsrc/$f)" bsrc/$f &&
		test "$(stat -c %a "$TRASH/store/b/$(sha bsrc/$f)")" = 400 &&
		test "$(stat -c %Y "$TRASH/store/b/$(sha bsrc/$f)")" = 0 || return 1
	done &&
	test "$(ls -A "$TRASH/store/b" | wc -l)" = 3 &&
	test "$(stat -c %a "$TRASH/store/b")" = 700
'

test_expect_success 'a blob changed on the way is refused and never stored; the blobs beside it are' '
	printf y >bsrc/y &&
	{ printf "%s 1\n" "$(sha bsrc/one)" && cat bsrc/y && frames bsrc/a; } >put2 &&
	test_expect_code 1 xtool put "$TRASH/store/c" <put2 2>err &&
	cat err &&
	test_grep "blob $(sha bsrc/one) refused: its 1 bytes hash to $(sha bsrc/y) (changed on the way); it was not stored" err &&
	test ! -e "$TRASH/store/c/$(sha bsrc/one)" &&
	cmp "$TRASH/store/c/$(sha bsrc/a)" bsrc/a &&
	test "$(ls -A "$TRASH/store/c" | wc -l)" = 1
'

test_expect_success 'a put whose blob is longer than the put (a wrong size) is refused: nothing stored' '
	{ printf "%s 300000\n" "$(sha bsrc/a)" && head -c 299999 bsrc/a; } >put3 &&
	! xtool put "$TRASH/store/d" <put3 2>err &&
	cat err &&
	test_grep "does not start with \"SHA256 SIZE\" within its length" err &&
	test "$(ls -A "$TRASH/store/d" | wc -l)" = 0
'

test_expect_success 'a blob shorter than its size: the next line is no blob line, the blob hashes wrong: refused, nothing stored' '
	{ printf "%s 300001\n" "$(sha bsrc/a)" && cat bsrc/a && printf "z"; } >put4 &&
	test_expect_code 1 xtool put "$TRASH/store/e" <put4 2>err &&
	test_grep "blob $(sha bsrc/a) refused: its 300001 bytes hash to" err &&
	test "$(ls -A "$TRASH/store/e" | wc -l)" = 0
'

test_expect_success 'a put says how far it has read every 128 KiB; the client keeps no more than its bound (512 KiB or more) ahead of that' '
	head -c 4194304 /dev/urandom >bsrc/big &&
	frames bsrc/big bsrc/a >put5 && total=$(wc -c <put5) &&
	xtool put "$TRASH/store/f" <put5 >flow.out 2>err &&
	cat flow.out &&
	read -r w1 acked w2 ahead w3 bound <flow.out &&
	test "$w1 $w2 $w3" = "acked ahead-max bound" &&
	: "the last word came within the last 128 KiB: it says every 128 KiB read" &&
	test "$acked" -le "$total" && test "$acked" -gt $((total - 131072)) &&
	test "$bound" -ge 524288 && test "$ahead" -gt 0 && test "$ahead" -le "$bound" &&
	cmp "$TRASH/store/f/$(sha bsrc/big)" bsrc/big && cmp "$TRASH/store/f/$(sha bsrc/a)" bsrc/a
'

# ---------------------------------------------------------------- gpuorch run

test_expect_success 'setup: a project with one CPU program' '
	project_init &&
	cat >proj/experiments/cpu1.json <<-JSON &&
	{"schema": 1, "name": "cpu1", "phase": "execd test",
	 "sources": ["cpu/cputimer.c"], "targets": {"H100": "sm_90a"},
	 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
	 "problems": [{"name": "p", "params": {"work": 1000, "reps": 3}}],
	 "steps": [{"kind": "benchmark", "program": "cputimer", "timeout_s": 60}]}
	JSON
	sshd_write_hosts_json hosts.json a
'

test_expect_success 'a first run builds and starts the execd; a re-run starts no login shell' '
	n0=$(shells) &&
	(cd proj && "$GPUORCH" run experiments/cpu1.json --hosts ../hosts.json --plain) >run1 2>&1 &&
	cat run1 &&
	d=$(last_run_dir) &&
	test "$(jq_ "$d/run.json" hosts.0.ship.files_sent)" = 1 &&
	test "$(jq_ "$d/run.json" hosts.0.ship.reused)" = false &&
	echo "login shells of a fresh run: $(( $(shells) - n0 ))" &&
	test "$(shells)" = $((n0 + 1)) &&
	W=$(sshd_var a WORKDIR) &&
	wait_for 60 "ls \"$W\"/execd/*.sock >/dev/null 2>&1" &&
	test "$(stat -c %a "$W/execd")" = 700 &&
	n=$(shells) &&
	(cd proj && "$GPUORCH" run experiments/cpu1.json --hosts ../hosts.json --plain) >run2 2>&1 &&
	test_grep "through the host.s execd (no login shell)" run2 &&
	test_grep "PASS" run2 &&
	test "$(shells)" = "$n" &&
	d=$(last_run_dir) &&
	test "$(jq_ "$d/run.json" hosts.0.steps.0.status)" = PASS &&
	test "$(jq_ "$d/run.json" hosts.0.ship.bytes_sent)" = 0
'

test_expect_success 'an edited source rides on the re-run'"'"'s one command through the execd: no login shell, no SFTP' '
	echo "/* edited */" >>proj/cpu/cputimer.c &&
	n=$(shells) &&
	(cd proj && "$GPUORCH" run experiments/cpu1.json --hosts ../hosts.json --plain) >run2e 2>&1 &&
	cat run2e &&
	test_grep "through the host.s execd (no login shell)" run2e &&
	test "$(shells)" = "$n" &&
	d=$(last_run_dir) &&
	test "$(jq_ "$d/run.json" outcome)" = passed &&
	test "$(jq_ "$d/run.json" hosts.0.ship.files_sent)" = 1 &&
	test "$(jq_ "$d/run.json" hosts.0.ship.reused)" = false &&
	cdir=$(jq_ "$d/run.json" hosts.0.ship.remote_dir) &&
	cmp "$cdir/src/cpu/cputimer.c" proj/cpu/cputimer.c
'

test_expect_success 'a host that lost what the controller sent it (blobs and content removed): the start asks, the next carries it' '
	W=$(sshd_var a WORKDIR) &&
	rm -rf "$W/blobs" "$W/content" &&
	n=$(shells) &&
	(cd proj && "$GPUORCH" run experiments/cpu1.json --hosts ../hosts.json --plain) >run2l 2>&1 &&
	cat run2l &&
	test "$(shells)" = "$n" &&
	d=$(last_run_dir) &&
	test "$(jq_ "$d/run.json" outcome)" = passed &&
	test "$(jq_ "$d/run.json" hosts.0.ship.files_sent)" = 1 &&
	cdir=$(jq_ "$d/run.json" hosts.0.ship.remote_dir) &&
	cmp "$cdir/src/cpu/cputimer.c" proj/cpu/cputimer.c &&
	ls "$W/blobs" | wc -l | grep -qx 1
'

test_expect_success 'a 20 MB tree of 40 files: written by the execd straight into the store, every file byte-identical' '
	mkdir -p proj/data &&
	i=1 && while [ $i -le 40 ]; do head -c 524288 /dev/urandom >proj/data/f$i.bin; i=$((i + 1)); done &&
	sed "0,/\"sources\": \[\"cpu\/cputimer.c\"\]/s//\"sources\": [\"cpu\/cputimer.c\", \"data\"]/; s|\"name\": \"cpu1\"|\"name\": \"big\"|" \
		proj/experiments/cpu1.json >proj/experiments/big.json &&
	grep -c data proj/experiments/big.json | grep -qx 1 &&
	(cd proj && git add -A && git commit -qm data) &&
	W=$(sshd_var a WORKDIR) &&
	n=$(shells) &&
	(cd proj && "$GPUORCH" run experiments/big.json --hosts ../hosts.json --plain) >runbig 2>&1 &&
	cat runbig &&
	test "$(shells)" = "$n" &&
	test_grep "ship: 20974400 bytes sent (40 of 41 files; the host had the others), written by the host.s execd" runbig &&
	d=$(last_run_dir) &&
	test "$(jq_ "$d/run.json" outcome)" = passed &&
	test "$(jq_ "$d/run.json" hosts.0.ship.files_sent)" = 40 &&
	cdir=$(jq_ "$d/run.json" hosts.0.ship.remote_dir) &&
	i=1 && while [ $i -le 40 ]; do cmp "$cdir/src/data/f$i.bin" proj/data/f$i.bin || return 1; i=$((i + 1)); done &&
	! ls -A "$W/blobs" | grep "^\.put"
'

test_expect_success 'execd_idle_s 0: every command through the login shell again' '
	sed "s|\"connect_timeout_s\": 20|\"connect_timeout_s\": 20, \"execd_idle_s\": 0|" hosts.json >h0.json &&
	grep -q "\"execd_idle_s\": 0" h0.json &&
	n=$(shells) &&
	(cd proj && "$GPUORCH" run experiments/cpu1.json --hosts ../h0.json --plain) >run3 2>&1 &&
	! grep "through the host.s execd" run3 &&
	test "$(shells)" -gt "$n"
'

test_expect_success 'an sshd that forwards no Unix sockets: runs pass the ordinary way' '
	SSHD_b_EXTRA_CONFIG="AllowStreamLocalForwarding no" && export SSHD_b_EXTRA_CONFIG &&
	sshd_start b &&
	sshd_write_hosts_json hb.json b &&
	(cd proj && "$GPUORCH" run experiments/cpu1.json --hosts ../hb.json --plain) >run4 2>&1 &&
	W=$(sshd_var b WORKDIR) &&
	wait_for 60 "ls \"$W\"/execd/*.sock >/dev/null 2>&1" &&
	(cd proj && "$GPUORCH" run experiments/cpu1.json --hosts ../hb.json --plain) >run5 2>&1 &&
	! grep "through the host.s execd" run5 &&
	d=$(last_run_dir) &&
	test "$(jq_ "$d/run.json" hosts.0.steps.0.status)" = PASS
'

test_expect_success 'an execd killed between runs: the next run starts it again' '
	W=$(sshd_var a WORKDIR) &&
	pkill -f "$W/execd/gpuorch-execd" &&
	wait_for 30 "! pgrep -f \"$W/execd/gpuorch-execd\" >/dev/null" &&
	(cd proj && "$GPUORCH" run experiments/cpu1.json --hosts ../hosts.json --plain) >run6 2>&1 &&
	! grep "through the host.s execd" run6 &&
	wait_for 10 "pgrep -f \"$W/execd/gpuorch-execd\" >/dev/null" &&
	n=$(shells) &&
	(cd proj && "$GPUORCH" run experiments/cpu1.json --hosts ../hosts.json --plain) >run7 2>&1 &&
	test_grep "through the host.s execd" run7 &&
	test "$(shells)" = "$n"
'

# issue 35 item 5: an idle execd stays execd_idle_s (1,800 s by default);
# hosts check shows it, hosts disconnect and hosts clean stop it now (its
# socket removed: it exits), and the next run starts a new one
test_expect_success 'hosts check shows the running execd; hosts disconnect stops it; the next run starts it again' '
	W=$(sshd_var a WORKDIR) &&
	pgrep -f "$W/execd/gpuorch-execd" >/dev/null &&
	"$GPUORCH" hosts check --hosts hosts.json >chk.out &&
	test_grep "^    execds  *1 running" chk.out &&
	"$GPUORCH" hosts check --hosts hosts.json --json >chk.json &&
	test "$(jq_ chk.json 0.execds_running)" = 1 &&
	"$GPUORCH" hosts disconnect --hosts hosts.json >dis.out &&
	cat dis.out &&
	test_grep "^a  1 execd stopped$" dis.out &&
	wait_for 60 "! pgrep -f \"$W/execd/gpuorch-execd\" >/dev/null" &&
	test -z "$(ls "$W"/execd/*.sock 2>/dev/null)" &&
	"$GPUORCH" hosts disconnect --hosts hosts.json >dis2.out &&
	test_grep "^a  0 execds stopped$" dis2.out &&
	"$GPUORCH" hosts check --hosts hosts.json >chk2.out &&
	! grep "execds .*running" chk2.out &&
	(cd proj && "$GPUORCH" run experiments/cpu1.json --hosts ../hosts.json --plain) >run8 2>&1 &&
	wait_for 30 "pgrep -f \"$W/execd/gpuorch-execd\" >/dev/null"
'

test_expect_success 'hosts clean stops the running execd (--dry-run only says so)' '
	W=$(sshd_var a WORKDIR) &&
	wait_for 30 "ls \"$W\"/execd/*.sock >/dev/null 2>&1" &&
	"$GPUORCH" hosts clean --hosts hosts.json --dry-run >cd.out &&
	test_grep "would stop 1 running execd" cd.out &&
	pgrep -f "$W/execd/gpuorch-execd" >/dev/null &&
	"$GPUORCH" hosts clean --hosts hosts.json >cl.out &&
	cat cl.out &&
	test_grep "stopped 1 running execd" cl.out &&
	wait_for 60 "! pgrep -f \"$W/execd/gpuorch-execd\" >/dev/null"
'

# issue 35 item 3: a host whose work directory alone was removed (its
# account, ~/.bashrc and the controller's caches of it kept) pays for one
# login shell on its next run, as a brand-new host does, not one per command
test_expect_success 'a host whose work directory was removed: its next run starts one login shell' '
	W=$(sshd_var a WORKDIR) &&
	# signalled again until none is left: a server started after the
	# first signal (a late start of a run) is stopped too
	wait_for 120 "! pkill -f \"$W/execd/gpuorch-execd\"" &&
	rm -rf "$W" &&
	n=$(shells) &&
	(cd proj && "$GPUORCH" run experiments/cpu1.json --hosts ../hosts.json --plain) >run9 2>&1 &&
	cat run9 &&
	d=$(last_run_dir) &&
	test "$(jq_ "$d/run.json" outcome)" = passed &&
	echo "login shells: $(( $(shells) - n ))" &&
	test "$(shells)" = $((n + 1)) &&
	: "the controller believed the host had the file: the start named it and got it on its stdin" &&
	test "$(jq_ "$d/run.json" hosts.0.ship.files_sent)" = 1 &&
	test "$(jq_ "$d/run.json" hosts.0.ship.reused)" = false &&
	cdir=$(jq_ "$d/run.json" hosts.0.ship.remote_dir) &&
	cmp "$cdir/src/cpu/cputimer.c" proj/cpu/cputimer.c
'

test_expect_success 'the same with no probe kept: probe, plan and the files the host lacks in one login shell' '
	W=$(sshd_var a WORKDIR) &&
	# signalled again until none is left: a server started after the
	# first signal (a late start of a run) is stopped too
	wait_for 120 "! pkill -f \"$W/execd/gpuorch-execd\"" &&
	rm -rf "$W" "$TRASH"/cache/probe-*.txt &&
	n=$(shells) &&
	(cd proj && "$GPUORCH" run experiments/cpu1.json --hosts ../hosts.json --plain) >run10 2>&1 &&
	cat run10 &&
	d=$(last_run_dir) &&
	test "$(jq_ "$d/run.json" outcome)" = passed &&
	test "$(shells)" = $((n + 1)) &&
	test "$(jq_ "$d/run.json" hosts.0.ship.files_sent)" = 1
'

test_expect_success 'a second run while the first one'"'"'s execd builds: one build, and its server stays up' '
	: "the account'"'"'s cc sleeps 3 s before compiling (PATH set by its .bashrc), so run 2 starts while the" &&
	: "execd of run 1 builds; before the fix run 2 started a second build whose binary replaced the first" &&
	: "server'"'"'s: that server left, the second found its lock still held, and no execd was left" &&
	mkdir -p "$TRASH/homec" "$TRASH/slowcc" &&
	printf "#!/bin/sh\necho \"build \$*\" >>%s\nsleep 3\nexec %s \"\$@\"\n" "$TRASH/cc.log" "$(command -v cc)" \
		>"$TRASH/slowcc/cc" && chmod +x "$TRASH/slowcc/cc" &&
	echo "PATH=$TRASH/slowcc:\$PATH; export PATH" >"$TRASH/homec/.bashrc" &&
	SSHD_c_EXTRA_ENV="HOME=$TRASH/homec" && export SSHD_c_EXTRA_ENV &&
	sshd_start c &&
	sshd_write_hosts_json hc.json c &&
	(cd proj && "$GPUORCH" run experiments/cpu1.json --hosts ../hc.json --plain) >runc1 2>&1 &&
	(cd proj && "$GPUORCH" run experiments/cpu1.json --hosts ../hc.json --plain) >runc2 2>&1 &&
	test_grep "PASS" runc2 &&
	W=$(sshd_var c WORKDIR) &&
	wait_for 60 "ls \"$W\"/execd/*.sock >/dev/null 2>&1" &&
	: "the second start'"'"'s builder, if any, has had its chance to replace the binary" &&
	sleep 5 &&
	: "one build of the execd (the host agent is built with the same cc: its build is not counted)" &&
	test "$(grep -c "gpuorch-execd-" "$TRASH/cc.log")" = 1 &&
	ls "$W"/execd/*.sock &&
	(cd proj && "$GPUORCH" run experiments/cpu1.json --hosts ../hc.json --plain) >runc3 2>&1 &&
	test_grep "through the host.s execd" runc3
'

test_done
