#!/bin/sh
# bench-controller.sh -- gpuorch's own latency and remote cost on loopback
# (issue 8): a trivial experiment (one CPU program of ~5 ms) run fresh and
# re-run, on 1 host and on N hosts, for a clean account and for an account
# whose ~/.bashrc costs ~0.3 s of CPU per shell start.
#
#   scripts/bench-controller.sh [--gpuorch PATH] [--hosts N] [--reps R] [--rc-cost S]
#                               [--cases "clean-execd rc-execd clean-shell rc-shell"]
#                               [--fresh F] [--against PATH] [--delay-ms D]
#
# --fresh F: the one-host fresh run F times (the median beyond nvcc, with
# every sample), after the case's other lines; --against PATH: each of those
# fresh runs also with another gpuorch, alternately, under the same rc
# calibration (an A/B of two builds: the rc loop is calibrated once per
# invocation, and the machine's load moves between invocations).
#
# A case is ACCOUNT-MODE: MODE execd is gpuorch as it comes (commands through
# the host's execd once a first run started it: no login shell), MODE shell
# sets execd_idle_s 0 (every command through the login shell, as before the
# execd), MODE persist is execd with "persist_s": 600 (a session keeper per
# host holds the SSH session between runs, docs/host-runner-measurements.md "Session keeper":
# the fresh run starts the keepers, its re-runs open no SSH connection; the
# keepers live under $TRASH/rt and are stopped before each fresh run). Cases
# not given by default: clean-persist, rc-persist.
# A fresh run of an execd (or persist) case is followed by a wait for the execds
# it builds in the background, so its re-runs find them.
#
# --delay-ms D: every host is reached through tests/tools/delayproxy, which
# holds each byte D ms each way (a round trip gains 2 x D: D=10 is issue 33's
# "20 ms of added RTT"; this kernel has no netem). The proxy listens on
# 127.0.0.2 with the sshd's own port; known_hosts gets that address's line;
# the SSH floor's commands go through it too.
#
# Hosts are real OpenSSH servers on 127.0.0.1 started with tests/lib/sshd.sh.
# An "account" is the same Unix user (root on CI) with a HOME of its own:
# each sshd sets HOME for its sessions (SetEnv), and the user's login shell
# (bash, which sshd runs every command through) reads $HOME/.bashrc for every
# SSH command. The rc account's .bashrc is a busy loop calibrated here to
# burn --rc-cost seconds (default 0.3) of CPU, as conda or pyenv init do.
#
# Remote CPU: each sshd runs as a child subreaper (prctl
# PR_SET_CHILD_SUBREAPER, then exec sshd), so everything a run starts on the
# "host" -- the session shells, and the detached runner and its steps once
# orphaned -- is reaped by that sshd and counted in its children's CPU times
# (/proc/PID/stat cutime + cstime). Remote CPU of a run is the growth of the
# sshd's own plus its children's CPU over the run, per host.
#
# Prints one line per case: wall time of the whole `gpuorch run` (1 host:
# per host; N hosts: total, and as a multiple of one host), remote CPU per
# host-run, and on fresh runs the nvcc time the record shows (builds.0) and
# the run's phases; then an edited-source run (a comment added to the
# program's source on hosts that already ran it: one file ships, nvcc
# rebuilds; the median of --reps edits) with its time beyond nvcc; per
# execd case also the SSH floor (see floor()).
# BENCH_SSHD: the sshd to run (default /usr/sbin/sshd), e.g. the one
# ../shared/gpu-host/start-loopback-sshd.sh unpacks on the GPU machine.
# Re-runs are the median of --reps runs. Needs nvcc, sshd, python3.

SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
GPUORCH=$SRCDIR/build/gpuorch
NHOSTS=16
REPS=3
RC_COST=0.3
CASES="clean-execd rc-execd clean-shell rc-shell"
FRESHN=1
AGAINST=
DELAY_MS=0
while [ $# -gt 0 ]; do
	case $1 in
	--cases) CASES=$2; shift 2 ;;
	--gpuorch) GPUORCH=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
	--hosts) NHOSTS=$2; shift 2 ;;
	--reps) REPS=$2; shift 2 ;;
	--rc-cost) RC_COST=$2; shift 2 ;;
	--fresh) FRESHN=$2; shift 2 ;;
	--against) AGAINST=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
	--delay-ms) DELAY_MS=$2; shift 2 ;;
	-h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
	*) echo "bench-controller.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
[ -x "$GPUORCH" ] || { echo "bench-controller.sh: no gpuorch at '$GPUORCH' (run make)" >&2; exit 2; }
[ -z "$AGAINST" ] || [ -x "$AGAINST" ] || { echo "bench-controller.sh: no gpuorch at '$AGAINST' (--against)" >&2; exit 2; }
case $FRESHN in '' | *[!0-9]* | 0) echo "bench-controller.sh: --fresh takes a whole number of runs, at least 1, not '$FRESHN'" >&2; exit 2 ;; esac
command -v python3 >/dev/null || { echo "bench-controller.sh: needs python3 (the subreaper)" >&2; exit 2; }
case $DELAY_MS in '' | *[!0-9]*) echo "bench-controller.sh: --delay-ms takes a whole number of milliseconds, not '$DELAY_MS'" >&2; exit 2 ;; esac
DELAYPROXY=$SRCDIR/build/tests/delayproxy
[ "$DELAY_MS" = 0 ] || [ -x "$DELAYPROXY" ] ||
	{ echo "bench-controller.sh: --delay-ms needs $DELAYPROXY (make -f Makefile -f tests/tools/tools.mk tools)" >&2; exit 2; }
ADDR=127.0.0.1
[ "$DELAY_MS" = 0 ] || ADDR=127.0.0.2

TRASH=$(mktemp -d "${TMPDIR:-/tmp}/gpuorch-bench.XXXXXX")
BENCH_AT_EXIT=
# what tests/lib/sshd.sh needs of tests/lib/testlib.sh
test_at_exit() {
	BENCH_AT_EXIT="$BENCH_AT_EXIT
$1"
}
cleanup() {
	eval "$BENCH_AT_EXIT"
	rm -rf "$TRASH"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# sshd as a child subreaper (see the top)
cat >"$TRASH/sshd-subreaper" <<'EOF'
#!/bin/sh
exec python3 -c 'import ctypes, os, sys
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
os.execv(sys.argv[1], sys.argv[1:])' "${BENCH_SSHD:-/usr/sbin/sshd}" "$@"
EOF
chmod +x "$TRASH/sshd-subreaper"
SSHD_BIN=$TRASH/sshd-subreaper
. "$SRCDIR/tests/lib/sshd.sh"
why=$(sshd_available) || { echo "bench-controller.sh: $why" >&2; exit 2; }

# ---------------------------------------------------------------- accounts
# calibrate a busy loop to RC_COST seconds of CPU on this machine, now: a
# first guess from a short loop, then the loop itself is timed (CPU, user +
# system, median of 3 bash runs) and the count scaled until it costs RC_COST
# within 5 % (at most 4 rounds). That is bash alone; the rc file is then
# calibrated again as the login shell of an SSH command sees it (rc_by_ssh,
# below), which can differ (H100 host, 2026-11-27: 0.315 CPU-s in bash alone,
# 0.48 more for `ssh host true`)
rc_cpu() {   # rc_cpu COUNT: median CPU seconds of bash running that loop
	for _r in 1 2 3; do
		bash -c "TIMEFORMAT='%U %S'; time { i=0; while [ \$i -lt $1 ]; do i=\$((i+1)); done; }" 2>&1 |
			tail -n 1 | awk '{ print $1 + $2 }'
	done | median
}
calibrate() {
	_n=200000
	_t=$(rc_cpu $_n)
	_n=$(awk -v n="$_n" -v t="$_t" -v c="$RC_COST" 'BEGIN { if (t < 0.01) t = 0.01; printf "%d\n", n * c / t }')
	_k=0
	while [ $_k -lt 4 ]; do
		_t=$(rc_cpu "$_n")
		if awk -v t="$_t" -v c="$RC_COST" 'BEGIN { exit !(t >= 0.95 * c && t <= 1.05 * c) }'; then
			break
		fi
		_n=$(awk -v n="$_n" -v t="$_t" -v c="$RC_COST" 'BEGIN { if (t < 0.01) t = 0.01; printf "%d\n", n * c / t }')
		_k=$((_k + 1))
	done
	echo "$_n $_t"
}
median() {
	sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
# rc_file LOOP HOME: the rc account's .bashrc, a busy loop of LOOP rounds;
# each shell start appends its own wall clock span to HOME/.rc-times ("start
# end", bash's EPOCHREALTIME: no process), so a run's login shells can be
# counted and timed apart from gpuorch's own part (rc_spans)
rc_file() {
	printf '_rc0=${EPOCHREALTIME-}; i=0; while [ $i -lt %s ]; do i=$((i+1)); done; [ -z "$_rc0" ] || printf "%%s %%s\\n" "$_rc0" "$EPOCHREALTIME" >>"$HOME/.rc-times"\n' "$1" >"$2/.bashrc"
}
# rc_spans HOME FROM: "COUNT SECONDS" of the shell starts in HOME/.rc-times
# after its first FROM lines
rc_spans() {
	tail -n +$(($2 + 1)) "$1/.rc-times" 2>/dev/null |
		awk '{ n++; s += $2 - $1 } END { printf "%d %.3f\n", n, s }'
}
rc_lines() {   # rc_lines HOME: lines in HOME/.rc-times
	cat "$1/.rc-times" 2>/dev/null | wc -l
}
# delay_host NAME: a delayproxy on 127.0.0.2:PORT in front of NAME's sshd
delay_host() {
	_port=$(sshd_var "$1" PORT)
	"$DELAYPROXY" 127.0.0.2 "$_port" 127.0.0.1 "$_port" "$DELAY_MS" 7200 >"$TRASH/proxy.$1" 2>&1 &
	echo $! >"$TRASH/proxy.$1.pid"
	test_at_exit "kill $! 2>/dev/null"
	_w=0
	until grep -qs listening "$TRASH/proxy.$1"; do
		[ $_w -lt 100 ] && kill -0 "$(cat "$TRASH/proxy.$1.pid")" 2>/dev/null ||
			{ echo "bench: the delay proxy of $1 did not start: $(cat "$TRASH/proxy.$1")" >&2; return 1; }
		sleep 0.1
		_w=$((_w + 1))
	done
	sed 's/^\[127\.0\.0\.1\]/[127.0.0.2]/' "$(sshd_var "$1" KNOWN_HOSTS)" >>"$(sshd_var "$1" KNOWN_HOSTS)"
}
# shellcheck disable=SC2046 # two numbers, split on purpose
set -- $(calibrate)
LOOP=$1 RC_MEASURED=$2
set --
for acct in clean rc; do
	i=1
	while [ $i -le "$NHOSTS" ]; do
		h=$TRASH/home-$acct$i
		mkdir -p "$h"
		if [ $acct = rc ]; then
			rc_file "$LOOP" "$h"
		fi
		eval "SSHD_$acct${i}_EXTRA_ENV=HOME=\$h; export SSHD_$acct${i}_EXTRA_ENV"
		sshd_start "$acct$i" || exit 1
		[ "$DELAY_MS" = 0 ] || delay_host "$acct$i" || exit 1
		i=$((i + 1))
	done
done

# ---------------------------------------------------------------- project
P=$TRASH/proj
mkdir -p "$P/cpu" "$P/experiments"
cp "$SRCDIR/tests/fixtures/project/cpu/cputimer.c" "$P/cpu/"
cat >"$P/experiments/trivial.json" <<'JSON'
{"schema": 1, "name": "trivial", "phase": "controller benchmark: one CPU program of ~5 ms",
 "sources": ["cpu/cputimer.c"], "targets": {"H100": "sm_90a"},
 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
 "problems": [{"name": "p", "params": {"work": 300000, "reps": 5}}],
 "steps": [{"kind": "benchmark", "program": "cputimer", "timeout_s": 60}]}
JSON
(cd "$P" && git init -q && git config user.email b@example.com && git config user.name bench &&
	git add -A && git commit -qm bench) || exit 1
GPUORCH_REPORTS=$TRASH/reports
# the session keepers of MODE persist: their sockets under $TRASH/rt
XDG_RUNTIME_DIR=$TRASH/rt
mkdir -m 700 "$XDG_RUNTIME_DIR"
export XDG_RUNTIME_DIR
stop_keepers() {
	pkill -f "__ssh-keeper $XDG_RUNTIME_DIR/" 2>/dev/null
	_w=0
	while pgrep -f "__ssh-keeper $XDG_RUNTIME_DIR/" >/dev/null && [ $_w -lt 50 ]; do
		sleep 0.1
		_w=$((_w + 1))
	done
}
test_at_exit stop_keepers
# the controller's kept probes (a fresh run starts without them)
GPUORCH_CACHE_DIR=$TRASH/ctl-cache
export GPUORCH_REPORTS GPUORCH_CACHE_DIR

# hosts FILE ACCOUNT N: an inventory of the account's first N servers; with
# MODE=shell the hosts have no execd (execd_idle_s 0: every command through
# the login shell), with MODE=execd the default
hosts() {
	# (sshd_write_hosts_json has variables of its own called _f, _n: not these)
	hf=$1 ha=$2 hn=$3 hnames=
	hi=1
	while [ $hi -le "$hn" ]; do hnames="$hnames $ha$hi"; hi=$((hi + 1)); done
	# shellcheck disable=SC2086
	sshd_write_hosts_json "$hf.tmp" $hnames
	[ "$ADDR" = 127.0.0.1 ] || sed -i "s/\"address\": \"127.0.0.1\"/\"address\": \"$ADDR\"/" "$hf.tmp"
	if [ "$MODE" = shell ]; then
		sed 's/"connect_timeout_s": \([0-9]*\)/"connect_timeout_s": \1, "execd_idle_s": 0/' "$hf.tmp" >"$hf"
		rm -f "$hf.tmp"
	elif [ "$MODE" = persist ]; then
		sed 's/"connect_timeout_s": \([0-9]*\)/"connect_timeout_s": \1, "persist_s": 600/' "$hf.tmp" >"$hf"
		rm -f "$hf.tmp"
	else
		mv -f "$hf.tmp" "$hf"
	fi
}

# cpu_of ACCOUNT N: CPU seconds (self + reaped children) of its first N sshds
# and of their execds (a resident execd reaps its own handlers: their CPU is
# in its cutime, not in the sshd's until it exits)
cpu_of() {
	_a=$1 _n=$2 _pids=
	_i=1
	while [ $_i -le "$_n" ]; do
		_pids="$_pids $(sshd_var "$_a$_i" PID) $(pgrep -f "^$(sshd_var "$_a$_i" WORKDIR)/execd/gpuorch-execd" | tr '\n' ' ')"
		_i=$((_i + 1))
	done
	for _p in $_pids; do
		# fields after the ")" of comm: 12-15 are utime stime cutime cstime
		sed 's/.*) //' "/proc/$_p/stat" 2>/dev/null | awk '{ print $12 + $13 + $14 + $15 }'
	done | awk -v hz="$(getconf CLK_TCK)" '{ s += $1 } END { printf "%.3f\n", s / hz }'
}

# fresh ACCOUNT N: nothing of gpuorch on the hosts (workdir and execd, probe
# cache) nor in the controller's kept probes and session keepers
fresh() {
	rm -rf "$GPUORCH_CACHE_DIR"
	stop_keepers
	_i=1
	while [ $_i -le "$2" ]; do
		pkill -f "^$(sshd_var "$1$_i" WORKDIR)/execd/gpuorch-execd"
		rm -rf "$(sshd_var "$1$_i" WORKDIR)" "$TRASH/home-$1$_i/.cache"
		mkdir -p "$(sshd_var "$1$_i" WORKDIR)"
		_i=$((_i + 1))
	done
}

# one ACCOUNT N: run once; sets WALL (s), CPU (s per host), CTL (the
# controller's CPU-s), NVCC (s, host 0)
one() {
	hosts "$TRASH/hosts.json" "$1" "$2"
	_c0=$(cpu_of "$1" "$2")
	_t0=$(date +%s%N)
	# the controller's CPU: gpuorch and what it starts here (git), from
	# the rusage of a python parent that runs nothing else
	(cd "$P" && python3 -c 'import resource, subprocess, sys
r = subprocess.call(sys.argv[2:])
u = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write("%.4f\n" % (u.ru_utime + u.ru_stime))
sys.exit(r)' "$TRASH/ctl.cpu" "$GPUORCH" run experiments/trivial.json --hosts "$TRASH/hosts.json" --plain) \
		>"$TRASH/run.out" 2>&1 || { echo "bench: the run failed:" >&2; cat "$TRASH/run.out" >&2; exit 1; }
	_t1=$(date +%s%N)
	CTL=$(cat "$TRASH/ctl.cpu")
	sleep 0.5   # the detached runners end and are reaped
	_c1=$(cpu_of "$1" "$2")
	WALL=$(awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
	CPU=$(awk -v a="$_c0" -v b="$_c1" -v n="$2" 'BEGIN { printf "%.3f", (b - a) / n }')
	_run=$(ls -dt "$GPUORCH_REPORTS"/*/*/ | head -n 1)
	NVCC=$("$SRCDIR/build/tests/jsonq" "$_run/run.json" hosts.0.builds.0.duration_s 2>/dev/null |
		awk '{ printf "%.3f", $1 }')
	_rs=$("$SRCDIR/build/tests/jsonq" "$_run/run.json" hosts.0.builds.0.reused 2>/dev/null)
	REUSED=$_rs
	SHIPPED="$("$SRCDIR/build/tests/jsonq" "$_run/run.json" hosts.0.ship.bytes_sent 2>/dev/null) bytes,\
 $("$SRCDIR/build/tests/jsonq" "$_run/run.json" hosts.0.ship.files_sent 2>/dev/null) file(s)"
	# host 0's phases as the record has them: "connect 0.031 probe 0.088 ..."
	PHASES=
	_k=0
	while _pn=$("$SRCDIR/build/tests/jsonq" "$_run/run.json" "hosts.0.phases.$_k.name" 2>/dev/null) &&
		[ -n "$_pn" ] && [ $_k -lt 20 ]; do
		PHASES="$PHASES $_pn $("$SRCDIR/build/tests/jsonq" "$_run/run.json" "hosts.0.phases.$_k.duration_s" |
			awk '{ printf "%.3f", $1 }')"
		_k=$((_k + 1))
	done
}

for tool in jsonq sshtool; do
	[ -x "$SRCDIR/build/tests/$tool" ] ||
		make -s -C "$SRCDIR" -f Makefile -f tests/tools/tools.mk "build/tests/$tool" >/dev/null || {
		echo "bench-controller.sh: cannot build build/tests/$tool (jsonq reads the run records, sshtool" \
		     "measures the SSH floor; build it where the project builds, and copy it here)" >&2; exit 2; }
done
SSHTOOL=$SRCDIR/build/tests/sshtool

# shell_cost ACCOUNT: wall and remote CPU of one `ssh host true`
shell_cost() {
	_c0=$(cpu_of "$1" 1)
	_t0=$(date +%s%N)
	sshd_ssh "${1}1" true
	_t1=$(date +%s%N)
	sleep 0.2
	_c1=$(cpu_of "$1" 1)
	awk -v a="$_t0" -v b="$_t1" -v c="$_c0" -v d="$_c1" \
		'BEGIN { printf "wall %.3f s, remote CPU %.3f s", (b - a) / 1e9, d - c }'
}

# floor ACCOUNT: what SSH alone costs a re-run on these hosts -- connect,
# key exchange, authentication and one command (`true`) through the host's
# execd, with the libssh2 client gpuorch uses (tests/tools/sshtool, one
# process per host) -- on one host, then on all NHOSTS at once; the median
# of REPS. No runner, no step, no record: a floor under any run, whose
# 16-host ratio no runner can beat while each run opens one SSH connection
# per host.
floor() {
	_one='' _all=''
	_r=0
	if [ "$MODE" = persist ]; then
		# through the session keepers: the first command on each host starts its keeper
		_i=1
		while [ $_i -le "$NHOSTS" ]; do
			floor_host "$1" $_i warm || return 0
			_i=$((_i + 1))
		done
	fi
	while [ $_r -lt "$REPS" ]; do
		_t0=$(date +%s%N)
		floor_host "$1" 1 || return 0
		_t1=$(date +%s%N)
		_i=1 _jobs=
		while [ $_i -le "$NHOSTS" ]; do
			floor_host "$1" $_i &
			_jobs="$_jobs $!"
			_i=$((_i + 1))
		done
		# these commands only: a bare wait would wait for the delay proxies
		# shellcheck disable=SC2086 # pids, split on purpose
		wait $_jobs
		_t2=$(date +%s%N)
		_one="$_one $(awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')"
		_all="$_all $(awk -v a="$_t1" -v b="$_t2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')"
		_r=$((_r + 1))
	done
	_o=$(echo $_one | tr ' ' '\n' | median)
	_a=$(echo $_all | tr ' ' '\n' | median)
	_what="connect, auth, \`true\` through the execd; libssh2"
	[ "$MODE" != persist ] || _what="\`true\` through the session keeper and the execd: no connect"
	echo "$1 $MODE SSH floor ($_what): 1 host $_o s (median of$_one), $NHOSTS hosts at once $_a s (median of$_all), x$(awk -v a="$_a" -v b="$_o" 'BEGIN { printf "%.2f", a / b }') one host"
}

# floor_host ACCOUNT I: one `true` through host I's execd (see floor)
floor_host() {
	_s=$(ls "$(sshd_var "$1$2" WORKDIR)"/execd/*.sock 2>/dev/null | head -n 1)
	[ -n "$_s" ] || { echo "  (no execd on $1$2: no SSH floor)"; return 1; }
	_persist=0
	[ "$MODE" != persist ] || _persist=600
	"$SSHTOOL" --label "$1$2" --address "$ADDR" --port "$(sshd_var "$1$2" PORT)" --key "$(sshd_var "$1$2" IDENTITY)" \
		--known-hosts "$(sshd_var "$1$2" KNOWN_HOSTS)" --execd "$_s" --persist $_persist \
		exec true 2>"$TRASH/floor.$2.err" || {
		echo "  (the floor's command failed on $1$2: $(cat "$TRASH/floor.$2.err"))"; return 1; }
	grep -q 'via execd' "$TRASH/floor.$2.err" || echo "  (warning: $1$2's floor command did not go through the execd)"
	[ "$MODE" != persist ] || [ "$3" = warm ] || grep -q 'via keeper' "$TRASH/floor.$2.err" ||
		echo "  (warning: $1$2's floor command did not go through its session keeper)"
}

# beyond_nvcc: the last run's wall time less its nvcc time (one's WALL, NVCC)
beyond_nvcc() {
	awk -v w="$WALL" -v b="$NVCC" 'BEGIN { printf "%.3f", w - b }'
}

# fresh_series ACCOUNT: --fresh F one-host fresh runs (and --against's,
# alternately); each waits for the execd its run builds in the background,
# so no compile of it overlaps the next run
fresh_series() {
	_bn='' _ba='' _fk=0 _g0=$GPUORCH _h=$TRASH/home-${1}1
	_sn='' _sa='' _ln='' _la=''   # login shells: "COUNT:SECONDS" per run; beyond nvcc less them
	while [ $_fk -lt "$FRESHN" ]; do
		for _g in "$_g0" $AGAINST; do
			GPUORCH=$_g
			fresh "$1" 1
			_r0=$(rc_lines "$_h")
			one "$1" 1
			read -r _rn _rs <<-EOF
			$(rc_spans "$_h" "$_r0")
			EOF
			wait_execd "$1" 1
			_b=$(beyond_nvcc)
			_l=$(awk -v b="$_b" -v s="$_rs" 'BEGIN { printf "%.3f", b - s }')
			if [ "$_g" = "$_g0" ]; then
				_bn="$_bn $_b" _sn="$_sn $_rn:$_rs" _ln="$_ln $_l"
			else
				_ba="$_ba $_b" _sa="$_sa $_rn:$_rs" _la="$_la $_l"
			fi
		done
		_fk=$((_fk + 1))
	done
	GPUORCH=$_g0
	echo "$case 1 host fresh, $FRESHN runs: beyond nvcc $(echo $_bn | tr ' ' '\n' | median) s (median of$_bn)"
	[ -z "$AGAINST" ] ||
		echo "$case 1 host fresh, $FRESHN runs of $AGAINST (alternately): beyond nvcc $(echo $_ba | tr ' ' '\n' | median) s (median of$_ba)"
	[ ! -f "$_h/.bashrc" ] || {
		# the rc file's own wall time in each run (its login shells: count:seconds)
		echo "$case 1 host fresh, $FRESHN runs: login shells (count:seconds of rc)$_sn; beyond nvcc less them $(echo $_ln | tr ' ' '\n' | median) s (median of$_ln)"
		[ -z "$AGAINST" ] ||
			echo "$case 1 host fresh, $FRESHN runs of $AGAINST: login shells$_sa; beyond nvcc less them $(echo $_la | tr ' ' '\n' | median) s (median of$_la)"
	}
}

# rc_by_ssh: the rc file's cost as the issue states it, per shell start of
# an SSH command -- the remote CPU of `ssh host true` for the rc account less
# the clean account's (median of 3 each) -- scaled until RC_COST within 5 %
# (at most 4 rounds); every rc account's .bashrc is rewritten each round (it
# is read at each shell start). Sets RC_MEASURED to the last measurement.
ssh_cpu() {   # ssh_cpu ACCOUNT: median remote CPU seconds of 3 `ssh host true`
	for _r in 1 2 3; do
		_c0=$(cpu_of "$1" 1)
		sshd_ssh "${1}1" true
		sleep 0.2
		_c1=$(cpu_of "$1" 1)
		awk -v a="$_c0" -v b="$_c1" 'BEGIN { print b - a }'
	done | median
}
rc_by_ssh() {
	_base=$(ssh_cpu clean)
	_k=0
	while :; do
		RC_MEASURED=$(awk -v r="$(ssh_cpu rc)" -v b="$_base" 'BEGIN { printf "%.3f", r - b }')
		if [ $_k -ge 4 ] ||
			awk -v t="$RC_MEASURED" -v c="$RC_COST" 'BEGIN { exit !(t >= 0.95 * c && t <= 1.05 * c) }'; then
			return 0
		fi
		LOOP=$(awk -v n="$LOOP" -v t="$RC_MEASURED" -v c="$RC_COST" \
			'BEGIN { if (t < 0.01) t = 0.01; printf "%d\n", n * c / t }')
		_i=1
		while [ $_i -le "$NHOSTS" ]; do
			rc_file "$LOOP" "$TRASH/home-rc$_i"
			_i=$((_i + 1))
		done
		_k=$((_k + 1))
	done
}
case " $CASES " in *" rc-"*) rc_by_ssh ;; esac

echo "gpuorch: $GPUORCH ($("$GPUORCH" --version 2>/dev/null | head -n 1); built from the tree it is in)"
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg) (shared with other work)"
echo "rc account: its ~/.bashrc costs $RC_MEASURED CPU-s per SSH command's shell (remote CPU of \`ssh host true\` less the clean account's, medians of 3; a loop of $LOOP, calibrated to --rc-cost $RC_COST)"
echo "one 'ssh host true': clean account $(shell_cost clean); rc account $(shell_cost rc)"
# wait_execd ACCOUNT N: the execds (not in MODE shell) and the host agents
# that the fresh run built in the background are there (the re-runs use them)
wait_execd() {
	_w=0
	while [ $_w -lt 600 ]; do
		_up=0 _i=1
		while [ $_i -le "$2" ]; do
			{ [ "$MODE" = shell ] || ls "$(sshd_var "$1$_i" WORKDIR)"/execd/*.sock >/dev/null 2>&1; } &&
				find "$(sshd_var "$1$_i" WORKDIR)/agent" -name 'gpuorch-agent-*' ! -name '*.*' -perm -100 \
					2>/dev/null | grep -q . && _up=$((_up + 1))
			_i=$((_i + 1))
		done
		[ $_up -eq "$2" ] && return 0
		sleep 0.1
		_w=$((_w + 1))
	done
	echo "  (warning: not every execd and host agent came up within 60 s)"
}

for case in $CASES; do
	acct=${case%-*} MODE=${case#*-}
	one1=
	for n in 1 "$NHOSTS"; do
		fresh "$acct" "$n"
		one "$acct" "$n"
		wait_execd "$acct" "$n"
		echo "$case $n host(s) fresh: wall $WALL s, nvcc $NVCC s (host 0), beyond nvcc $(beyond_nvcc) s, remote CPU $CPU s per host; host 0's phases (s):$PHASES"
		walls='' cpus='' ctls=''
		r=0
		while [ $r -lt "$REPS" ]; do
			one "$acct" "$n"
			[ "$REUSED" = true ] || echo "  (warning: the re-run did not reuse the build)"
			walls="$walls $WALL"
			cpus="$cpus $CPU"
			ctls="$ctls $CTL"
			r=$((r + 1))
		done
		w=$(echo $walls | tr ' ' '\n' | median)
		c=$(echo $cpus | tr ' ' '\n' | median)
		k=$(echo $ctls | tr ' ' '\n' | median)
		[ "$n" = 1 ] && one1=$w
		echo "$case $n host(s) re-run: wall $w s (median of$walls), x$(awk -v a="$w" -v b="$one1" 'BEGIN { printf "%.2f", a / b }') one host, remote CPU $c s per host (median of$cpus); controller CPU $k s, $(awk -v a="$k" -v n="$n" 'BEGIN { printf "%.4f", a / n }') s per host-run (median of$ctls); host 0's phases in the last (s):$PHASES"
		# an edited source on hosts that know gpuorch (execd up, probe kept):
		# the kernel engineer's loop, edit and run again; each edit is a new
		# comment line, so the program's build key changes and nvcc runs
		walls='' cpus='' beyond='' nvccs=''
		r=0
		while [ $r -lt "$REPS" ]; do
			echo "/* bench edit $case $n $r */" >>"$P/cpu/cputimer.c"
			one "$acct" "$n"
			[ "$REUSED" = false ] || echo "  (warning: the edited source did not rebuild)"
			walls="$walls $WALL"
			cpus="$cpus $CPU"
			nvccs="$nvccs $NVCC"
			beyond="$beyond $(beyond_nvcc)"
			r=$((r + 1))
		done
		(cd "$P" && git checkout -q -- cpu/cputimer.c)
		echo "$case $n host(s) edited source (execd up, probe kept): wall $(echo $walls | tr ' ' '\n' | median) s (median of$walls), nvcc $(echo $nvccs | tr ' ' '\n' | median) s, beyond nvcc $(echo $beyond | tr ' ' '\n' | median) s (median of$beyond), remote CPU $(echo $cpus | tr ' ' '\n' | median) s per host; host 0 in the last: shipped $SHIPPED, phases (s):$PHASES"
	done
	if [ "$MODE" != shell ]; then floor "$acct"; fi
	if [ "$FRESHN" -gt 1 ] || [ -n "$AGAINST" ]; then fresh_series "$acct"; fi
done
exit 0
