#!/bin/sh
# runner.sh -- gpuorch's host runner: runs one run's plan (builds, then steps)
# on the host, detached from whatever started it, and appends every event as
# one JSON line to a journal. docs/runner.md is its contract.
#
#   sh runner.sh start RUNDIR         start `run` detached (own session, log in
#                                     RUNDIR/runner.log); prints "started PID",
#                                     "running PID" (one is already running) or
#                                     "finished" (the plan is done)
#   sh runner.sh run RUNDIR           run the plan in the foreground (a Slurm job,
#                                     a cloud instance's boot script)
#   sh runner.sh follow RUNDIR OFFSET print the journal from byte OFFSET on and
#                                     keep following it while the runner lives
#   sh runner.sh kill RUNDIR          stop the runner and every build and step
#                                     it started; prints "killed"; the run is
#                                     not started again (runner.stopped)
#   sh runner.sh reopen RUNDIR        (gpuorch run --resume) a run that is not
#                                     running: what was stopped or lost before
#                                     it ended runs again at the next start;
#                                     prints "reopened N"
#
# RUNDIR/plan.sh is the plan (a shell file of calls: plan_version, src_dir,
# max_builds, fail_fast, text_cap, build, step), RUNDIR/journal the journal.
# Needs POSIX sh plus setsid (util-linux, -w), timeout (coreutils), flock,
# ps, awk, date +%N, tail (GNU, for follow). Nothing here assumes SSH.
# shellcheck disable=SC2154 # the _-variables are set by get(), through eval

RUNNER_VERSION=1
# everything the runner, its builds and steps write is the user's alone
umask 077
RUNNER_SH=${RUNNER_SH:-$0}   # this file (set by a start command that sources it)
GRACE_S=10        # a claimed item with no pgid after this long never started

die() {
	echo "runner: $*" >&2
	exit 2
}

# ------------------------------------------------------------------ JSON
# ESC_AWK escapes its input (followed by a sentinel "x") as a JSON string
# body: mode=str prints "...", mode=text prints ,"NAME_text":"...",
# "NAME_truncated":BOOL, keeping at most cap bytes.
ESC_AWK='
function out(s,   i, n, c) {
	if (s !~ /[\001-\037"\\]/) { printf "%s", s; return }
	n = length(s)
	for (i = 1; i <= n; i++) {
		c = substr(s, i, 1)
		if (c in esc) printf "%s", esc[c]; else printf "%s", c
	}
}
function emit(s) {
	if (trunc) return
	if (total + length(s) > cap) { s = substr(s, 1, cap - total); trunc = 1 }
	total += length(s)
	out(s)
}
BEGIN {
	for (i = 1; i < 32; i++) esc[sprintf("%c", i)] = sprintf("\\u%04x", i)
	esc["\t"] = "\\t"; esc["\n"] = "\\n"; esc["\r"] = "\\r"
	esc["\b"] = "\\b"; esc["\f"] = "\\f"; esc["\\"] = "\\\\"; esc["\""] = "\\\""
	if (cap == "") cap = 1e15
	if (mode == "text") printf ",\"%s_text\":\"", name; else printf "\""
}
NR > 1 { emit(prev "\n") }
{ prev = $0 }
END {
	emit(substr(prev, 1, length(prev) - 1))
	if (mode == "text") printf "\",\"%s_truncated\":%s", name, (trunc ? "true" : "false")
	else printf "\""
}'

# js VALUE: sets JS to VALUE as a JSON string (no fork for plain text).
js() {
	case $1 in
	*[\"\\]* | *[![:print:]]*)
		JS=$(printf '%sx' "$1" | LC_ALL=C awk -v mode=str "$ESC_AWK") ;;
	*) JS="\"$1\"" ;;
	esac
}

# text_field FILE NAME: the file's first TEXT_CAP bytes as NAME_text and
# NAME_truncated fields (nothing when there is no file).
text_field() {
	[ -f "$1" ] || return 0
	if [ ! -s "$1" ]; then
		printf ',"%s_text":"","%s_truncated":false' "$2" "$2"
		return 0
	fi
	{ head -c $((TEXT_CAP + 1)) "$1" | tr -d '\000'; printf x; } |
		LC_ALL=C awk -v mode=text -v name="$2" -v cap="$TEXT_CAP" "$ESC_AWK"
}

# ev NAME FIELDS: append one event; FIELDS is a JSON fragment starting with
# ",". ev_again: the same, at the last clock reading (EVT: the event before
# it, or spawn's), for an event written right after that reading: date is a
# process of its own, and a re-run's processes are most of its cost.
ev() {
	EVT=$(date +%s.%N)
	printf '{"t":%s,"ev":"%s"%s}\n' "$EVT" "$1" "$2" >>"$J"
}
ev_again() {
	[ -n "${EVT:-}" ] || EVT=$(date +%s.%N)
	printf '{"t":%s,"ev":"%s"%s}\n' "$EVT" "$1" "$2" >>"$J"
}

# ------------------------------------------------------------------ processes
# alive SID: a live (not zombie) process is in session SID.
alive() {
	ps -eo sid=,stat= | awk -v s="$1" '$1 == s && $2 !~ /^Z/ {f = 1} END {exit !f}'
}

# members SID ALL: the session's live processes (ALL=0: but its leader).
members() {
	ps -eo pid=,sid=,stat= |
		awk -v s="$1" -v all="$2" '$2 == s && $3 !~ /^Z/ && (all || $1 != s) {print $1}'
}

# Shell variables are global: each function's scratch variables have a
# prefix of their own where it may run inside another's loop.
# kill_item DIR: TERM the item's processes but its wrapper (so the wrapper
# writes rc), wait up to 3 s, then sweep whatever is left, the wrapper too;
# rc is 137 when none was written.
kill_item() {
	[ -s "$1/pgid" ] || return 0
	read -r _sid <"$1/pgid"
	_p=$(members "$_sid" 0)
	[ -n "$_p" ] && kill -TERM $_p 2>/dev/null
	_ki=0
	while [ -n "$(members "$_sid" 1)" ] && [ $_ki -lt 30 ]; do sleep 0.1; _ki=$((_ki + 1)); done
	sweep "$_sid" ""
	msweep "$1"
	[ -f "$1/rc" ] || { echo 137 >"$1/rc.tmp" && mv -f "$1/rc.tmp" "$1/rc"; }
}

# stale DIR: claimed or queued, no rc, and nothing runs it (its session is
# gone, or it never got a pgid within GRACE_S of being queued).
stale() {
	[ -f "$1/rc" ] && return 1
	if [ -s "$1/pgid" ]; then
		read -r _sid <"$1/pgid"
		alive "$_sid" && return 1
		[ -f "$1/rc" ] && return 1
		return 0
	fi
	_q=0
	[ -s "$1/queued" ] && read -r _q <"$1/queued"
	[ $(($(date +%s) - _q)) -ge $GRACE_S ]
}

# SWEEP defines sweep SID KEEP: SIGKILL the live processes of session SID
# but the pids in KEEP (a space-separated list), and list again, 50 ms on,
# until none is left (at most 50 rounds, 2.5 s). One listing is not
# enough: a process that forks between ps reading /proc and the kill
# leaves a child no one saw, which would outlive its step. Zombies are dead
# already and are skipped. One ps and nothing else when nothing is left
# over. The listing (sess_ls SID: "PID STATE" of each process of the
# session) reads /proc/PID/stat with one cat and one awk where /proc is
# there -- ps reads more files per process and starts slower (6.6 ms
# against 1.0 for `sh -c true` on a 70-process host, 2026-11-27) -- and is
# ps elsewhere. The runner (kill_item) and the wrapper and its locked shell
# (their seventh argument) eval it: one definition for all three. Its
# variables are _sw_*: it runs inside callers' loops.
# msweep DIR does the same for every process whose environment carries the
# item's marker GPUORCH_STEP=DIR (the wrapper gives it to the command, so
# every process the command starts inherits it): a daemon that calls setsid
# leaves the session, not the marker (issue 31, item 9). It reads
# /proc/PID/environ (the caller's own processes; none carry the marker), and
# does nothing where /proc is not there. A process that clears its
# environment (env -i) and leaves its session is not found.
SWEEP='sess_ls() {
  if [ -r /proc/self/stat ]; then
    cat /proc/[0-9]*/stat 2>/dev/null |
      awk -v s="$1" '"'"'{ l = $0; sub(/^.*\) /, "", l); split(l, f, " "); if (f[4] == s) print $1, f[1] }'"'"'
  else
    ps -o pid=,stat= -s "$1"
  fi
}
sweep() {
  _sw_n=0
  while [ $_sw_n -lt 50 ]; do
    _sw_k=
    for _sw_x in $(sess_ls "$1"); do
      case $_sw_x in
      [0-9]*) _sw_p=$_sw_x ;;
      Z*) ;;
      *) case " $2 " in *" $_sw_p "*) ;; *) kill -KILL "$_sw_p" 2>/dev/null && _sw_k=1 ;; esac ;;
      esac
    done
    [ -n "$_sw_k" ] || return 0
    _sw_n=$((_sw_n + 1))
    sleep 0.05
  done
}
msweep() {
  [ -r /proc/self/environ ] || return 0
  _sw_n=0
  while [ "$_sw_n" -lt 50 ]; do
    _sw_k=
    for _sw_f in $(grep -lzxF "GPUORCH_STEP=$1" /proc/[0-9]*/environ 2>/dev/null); do
      _sw_p=${_sw_f#/proc/}
      kill -KILL "${_sw_p%/environ}" 2>/dev/null && _sw_k=1
    done
    [ -n "$_sw_k" ] || return 0
    _sw_n=$((_sw_n + 1))
    sleep 0.05
  done
}'
eval "$SWEEP"

# The wrapper: the item's session leader. It claims DIR by creating .launch
# exclusively (noclobber: O_EXCL, no process; exit 3: claimed by another, a
# file or, from a runner before 2026-11-27, a directory), records its pgid, takes the
# GPU locks when given (':'-joined: one flock inside the other, in the
# order given; each waits up to the lock wait), runs `timeout -k 5 T sh DIR/cmd` in SRC, kills what
# the command left in its session (inside the lock, sparing the wrapper and
# every flock between it and the locked shell: a "gpus": N step has N; a
# t_end from in there says that was done, so the session is not listed
# twice), stamps
# t_run/t_end and writes rc last, atomically: the exit status, "timeout" or
# "lock-timeout".
# Then, given a wake FIFO (builds: see nap), it writes a line to it; opened
# read-write, so it never blocks, whether or not the runner still reads.
WRAPPER='d=$1; t=$2; lock=$3; lw=$4; cwd=$5; wake=$6; sw=$7
set -C
{ printf "" > "$d/.launch"; } 2>/dev/null || exit 3
set +C
echo $$ > "$d/pgid"
if ! cd "$cwd" 2>"$d/stderr"; then
  echo 1 > "$d/rc.tmp" && mv -f "$d/rc.tmp" "$d/rc"; exit 0
fi
if [ -n "$lock" ]; then
  set --; ls=$lock
  while [ -n "$ls" ]; do
    set -- "$@" flock -w "$lw" -E 75 "${ls%%:*}"
    case $ls in *:*) ls=${ls#*:} ;; *) ls= ;; esac
  done
  "$@" sh -c '"'"'eval "$4"
    tr=$(date +%s.%N); echo "${tr%.*}" > "$1/locked"; echo "$tr" > "$1/t_run"
    GPUORCH_STEP=$1 timeout -k 5 "$2" sh "$1/cmd"; r=$?
    k="$3 $$"; p=$PPID
    while [ -n "$p" ] && [ "$p" -gt 1 ] && [ "$p" != "$3" ]; do
      k="$k $p"; p=$(ps -o ppid= -p "$p" | tr -d " ")
    done
    sweep "$3" "$k"; msweep "$1"
    date +%s.%N > "$1/t_end"; exit $r'"'"' gpuorch-locked "$d" "$t" $$ "$sw" > "$d/stdout" 2> "$d/stderr"
  rc=$?
  if [ ! -s "$d/locked" ] && [ "$rc" = 75 ]; then rc=lock-timeout; fi
  start=; [ ! -s "$d/locked" ] || read -r start < "$d/locked"
else
  tr=$(date +%s.%N); start=${tr%.*}
  echo "$tr" > "$d/t_run"
  GPUORCH_STEP=$d timeout -k 5 "$t" sh "$d/cmd" > "$d/stdout" 2> "$d/stderr"
  rc=$?
fi
swept=
if [ -s "$d/t_end" ]; then swept=1; else date +%s.%N > "$d/t_end"; fi
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
  if [ -n "$start" ] && [ $(( $(date +%s) - start )) -ge "$t" ]; then rc=timeout; fi
fi
[ -n "$swept" ] || { eval "$sw"; sweep $$ $$; msweep "$d"; }
echo "$rc" > "$d/rc.tmp" && mv -f "$d/rc.tmp" "$d/rc"
if [ -n "$wake" ] && [ -p "$wake" ]; then { echo e >&7; } 7<>"$wake" 2>/dev/null; fi
'

# spawn DIR TIMEOUT LOCK LOCKWAIT COMMAND [WAKE]: write the command, stamp
# queued, start the wrapper in its own session; SPAWNED is its pid. The
# clock reading of queued is EVT's: the caller's started event is ev_again.
spawn() {
	[ -d "$1" ] || mkdir -p "$1" || return 1
	printf '%s\n' "$5" >"$1/cmd" || return 1
	EVT=$(date +%s.%N)
	echo "${EVT%.*}" >"$1/queued"
	setsid -w sh -c "$WRAPPER" gpuorch-item "$1" "$2" "$3" "$4" "$SRC" "${6:-}" "$SWEEP" \
		</dev/null >/dev/null 2>&1 7>&- 8>&- 9>&- &
	SPAWNED=$!
	# started means its session exists: wait (bounded, about 10 s) for the
	# wrapper to record its pgid, unless it is already gone. Its exec of
	# setsid and sh and its claim take a few ms: looked at every 2 ms at
	# first, then every 10 ms (a sleep is a process too)
	_sw=0
	while [ ! -s "$1/pgid" ] && [ ! -f "$1/rc" ] && [ $_sw -lt 1000 ] &&
		kill -0 "$SPAWNED" 2>/dev/null; do
		if [ $_sw -lt 5 ]; then sleep 0.002; else sleep 0.01; fi
		_sw=$((_sw + 1))
	done
}

# ------------------------------------------------------------------ plan
NB=0
NS=0
PLAN_V=
SRC=
MAXB=1
FAILFAST=0
TEXT_CAP=65536

bad_plan() {
	PLAN_ERR="$PLAN_ERR${PLAN_ERR:+; }$*"
}
num() {
	case $2 in
	'' | *[!0-9]*) bad_plan "$1: '$2' is not a whole number" ;;
	esac
}
abs() {
	case $2 in
	/*) ;;
	*) bad_plan "$1: '$2' is not an absolute path" ;;
	esac
}
plan_version() { PLAN_V=$1; }
src_dir() { abs src_dir "$1"; SRC=$1; }
max_builds() { num max_builds "$1"; MAXB=$1; }
fail_fast() { num fail_fast "$1"; FAILFAST=$1; }
text_cap() { num text_cap "$1"; TEXT_CAP=$1; }
probe_later() { abs probe_later "$1"; PLATER=$1; }
# build ID DIR BIN TIMEOUT COMMAND [MAYFAIL]
# MAYFAIL 1: its failure does not stop the phase (a sweep variant that a
# kernel's own static_assert may refuse)
build() {
	[ $# -eq 5 ] || [ $# -eq 6 ] || { bad_plan "build needs 5 or 6 arguments, got $#"; return; }
	[ -n "$1" ] || bad_plan "a build has an empty id"
	abs "build '$1' dir" "$2"
	abs "build '$1' bin" "$3"
	num "build '$1' timeout" "$4"
	NB=$((NB + 1))
	eval "B_${NB}_id=\$1 B_${NB}_dir=\$2 B_${NB}_bin=\$3 B_${NB}_t=\$4 B_${NB}_cmd=\$5 B_${NB}_mf=\${6:-0}"
}
# step ID DIR TIMEOUT LOCK LOCKWAIT BUILD_ID COMMAND
# Reading the plan checks and counts the steps but keeps none of them: they
# run in plan order, one at a time, so each_step reads the plan again and
# hands each its arguments. (Kept as 7 variables a step, a 20,000-step plan
# made 140,000: dash's variable table has 39 buckets, so every variable
# lookup of the run walked thousands of entries, ~0.5 s a step.)
step() {
	[ $# -eq 7 ] || { bad_plan "step needs 7 arguments, got $#"; return; }
	[ -n "$1" ] || bad_plan "a step has an empty id"
	abs "step '$1' dir" "$2"
	num "step '$1' timeout" "$3"
	[ -z "$4" ] || abs "step '$1' lock" "$4"
	num "step '$1' lock wait" "$5"
	NS=$((NS + 1))
}
# each_step FN: FN ID DIR TIMEOUT LOCK LOCKWAIT BUILD_ID COMMAND for every step
# of the plan (read already: it was checked), in plan order; FN sees $STOP
# and returns at once when it is set.
each_step() {
	_each=$1
	build() { :; }
	step() { $_each "$@"; }
	. "$RD/plan.sh"
}

# get VAR KIND INDEX FIELD: VAR=<KIND>_<INDEX>_<FIELD>
get() {
	eval "$1=\${$2_$3_$4}"
}

# ------------------------------------------------------------------ items
# end_fields DIR: sets EF to the end fields read from DIR (status, rc,
# clocks, output texts); KILLED=1 marks an item this runner killed.
end_fields() {
	_rc=
	[ -f "$1/rc" ] && read -r _rc <"$1/rc"
	case $_rc in
	'') _st=lost; _rcj=null ;;
	timeout) _st=timeout; _rcj=124 ;;
	lock-timeout) _st=lock-timeout; _rcj=75 ;;
	*[!0-9]*) _st=lost; _rcj=null ;;
	*) _st=exited; _rcj=$_rc ;;
	esac
	[ "$KILLED" = 1 ] && _st=killed
	EST=$_st
	ERC=$_rc
	_tl=null _tr=null _te=null
	[ -s "$1/locked" ] && read -r _tl <"$1/locked"
	[ -s "$1/t_run" ] && read -r _tr <"$1/t_run"
	[ -s "$1/t_end" ] && read -r _te <"$1/t_end"
	js "$1"
	EF=",\"dir\":$JS,\"status\":\"$_st\",\"rc\":$_rcj,\"t_lock\":$_tl,\"t_run\":$_tr,\"t_end\":$_te"
	# an item that did not pass: the free space it left (a full disk eats
	# the program's own "No space left on device"; diskspace.h)
	if [ "$_rcj" != 0 ]; then
		_df=$(df -Pk "$1" 2>/dev/null | awk 'NR == 2 {print $4}')
		case $_df in '' | *[!0-9]*) ;; *) EF="$EF,\"disk_free_kib\":$_df" ;; esac
	fi
	ETF="$(text_field "$1/stdout" stdout)$(text_field "$1/stderr" stderr)"
	EF="$EF$ETF"
}

# A build's result for this run lives in RUNDIR/.builds/<index>: pass|fail.
build_done() {
	# build_done INDEX STATUS(pass|fail|skipped)
	echo "$2" >"$RD/.builds/$1.tmp" && mv -f "$RD/.builds/$1.tmp" "$RD/.builds/$1"
}

build_end() {
	# build_end INDEX
	get _id B "$1" id
	get _d B "$1" dir
	get _bin B "$1" bin
	get KILLED B "$1" killed
	get _mf B "$1" mf
	end_fields "$_d"
	js "$_id"
	ev build_end ",\"id\":$JS$EF"
	# stopped (not by fail_fast) or lost: did not end; a resume builds it again
	{ [ "$EST" = killed ] && [ -n "$STOP${KILLCMD:-}" ]; } || [ "$EST" = lost ] && : >"$_d/.reopen"
	if [ "$EST" = exited ] && [ "$ERC" = 0 ] && [ -x "$_bin" ]; then
		# its log as journal text, kept for every later reuse (escaping
		# it again costs six processes a build a run)
		printf '%s' "$ETF" >"$_d/log.$TEXT_CAP.json.$$" &&
			mv -f "$_d/log.$TEXT_CAP.json.$$" "$_d/log.$TEXT_CAP.json"
		build_done "$1" pass
	else
		build_done "$1" fail
		[ "$_mf" = 1 ] || BFAILED=1
	fi
}

# build_begin INDEX: reuse, attach to or start build INDEX. Sets BSTATE to
# done (finished and journaled) or running.
build_begin() {
	get _id B "$1" id
	get _d B "$1" dir
	get _bin B "$1" bin
	get _t B "$1" t
	get _cmd B "$1" cmd
	js "$_id"
	_jid=$JS
	BSTATE=running
	if [ -f "$RD/.builds/$1" ]; then
		read -r _r <"$RD/.builds/$1"
		get _mf B "$1" mf
		[ "$_r" = pass ] || [ "$_mf" = 1 ] || BFAILED=1
		BSTATE='done'
		return
	fi
	[ -d "${_d%/*}" ] || mkdir -p "${_d%/*}" || return 1
	# decide under a lock shared by all runners of this host's builds
	exec 8>>"${_d%/*}/.claim.lock"
	flock -w 120 8
	_own=
	[ -s "$_d/owner" ] && read -r _own <"$_d/owner"
	_rc=
	[ -f "$_d/rc" ] && read -r _rc <"$_d/rc"
	if [ "$_rc" = 0 ] && [ -x "$_bin" ] && [ "$_own" != "$RD" ]; then
		exec 8>&-
		touch "$_d/rc" 2>/dev/null   # its last use (gpuorch hosts clean)
		js "$_d"
		_lf=
		[ -s "$_d/log.$TEXT_CAP.json" ] && _lf=$(cat "$_d/log.$TEXT_CAP.json")
		[ -n "$_lf" ] || _lf="$(text_field "$_d/stdout" stdout)$(text_field "$_d/stderr" stderr)"
		ev build_reused ",\"id\":$_jid,\"dir\":$JS$_lf"
		build_done "$1" pass
		BSTATE='done'
		return
	fi
	if [ -n "$_rc" ] && [ "$_own" = "$RD" ]; then
		# ours, ended before a restart: journal it, never build it again
		exec 8>&-
		build_end "$1"
		BSTATE='done'
		return
	fi
	if [ -z "$_rc" ] && { [ -e "$_d/.launch" ] || [ -s "$_d/queued" ]; } && ! stale "$_d"; then
		exec 8>&-
		js "$_d"
		ev build_started ",\"id\":$_jid,\"dir\":$JS,\"attached\":true"
		return
	fi
	[ ! -e "$_d" ] || rm -rf "$_d"
	mkdir -p "$_d" && echo "$RD" >"$_d/owner"
	wake_open
	spawn "$_d" "$_t" "" 0 "$_cmd" "$WAKE"
	exec 8>&-
	eval "B_${1}_pid=\$SPAWNED"
	js "$_d"
	ev_again build_started ",\"id\":$_jid,\"dir\":$JS,\"attached\":false"
}

# build_check INDEX SLOW: 0 when build INDEX has ended (and was journaled).
build_check() {
	get _d B "$1" dir
	if [ ! -f "$_d/rc" ]; then
		[ "$2" = 1 ] || return 1
		stale "$_d" || return 1
	fi
	get _pid B "$1" pid
	[ -n "$_pid" ] && wait "$_pid" 2>/dev/null
	build_end "$1"
	return 0
}

# kill_builds: kill the running builds this run started (not the ones it
# attached to: those belong to another run).
kill_builds() {
	for _k in $RUNNING; do
		get _d B "$_k" dir
		_own=
		[ -s "$_d/owner" ] && read -r _own <"$_d/owner"
		[ "$_own" = "$RD" ] || continue
		eval "B_${_k}_killed=1"
		kill_item "$_d"
	done
}

# wake_open: the FIFO through which a build's wrapper tells the runner it
# ended (RD/.wake, on fd 7, opened read-write so that no open blocks), made
# before the first build is started: a run whose builds are all reused makes
# none. Without mkfifo, WAKE stays empty and nap sleeps its half second.
wake_open() {
	[ -z "$WAKE_TRIED" ] || return 0
	WAKE_TRIED=1
	[ ! -e "$RD/.wake" ] || rm -f "$RD/.wake"
	if mkfifo "$RD/.wake" 2>/dev/null && exec 7<>"$RD/.wake"; then WAKE=$RD/.wake; fi
}

# nap: half a second, or less: until a build's wrapper writes to the wake
# FIFO. The timer writes to it too, so the read ends by then either way; a
# line left from an earlier wake only makes one look more. (Not SIGCHLD
# and wait: bash, as sh, misparses command substitutions while a CHLD trap runs.)
nap() {
	if [ -z "$WAKE" ]; then
		sleep 0.5
		return
	fi
	# not holding the run lock (9) nor a build claim (8): the timer's sleep
	# may outlive the nap, and the runner, by up to half a second
	{ sleep 0.5; echo t >&7; } 8>&- 9>&- &
	_np=$!
	read -r _x <&7
	# the timer ends (or has): reaped, so a long build does not pile up jobs
	kill $_np 2>/dev/null
	wait $_np 2>/dev/null
}

phase_builds() {
	ev_again phase_started ',"name":"build"'
	WAKE=
	WAKE_TRIED=
	RUNNING=
	NRUN=0
	BFAILED=0
	_i=1
	_tick=0
	while :; do
		while [ -z "$STOP" ] && [ $NRUN -lt "$MAXB" ] && [ $_i -le $NB ]; do
			if [ "$BFAILED" = 1 ] && [ "$FAILFAST" = 1 ]; then
				if [ ! -f "$RD/.builds/$_i" ]; then
					get _id B $_i id
					js "$_id"
					ev build_skipped ",\"id\":$JS,\"reason\":\"an earlier build failed (fail_fast)\""
					build_done $_i skipped
				fi
				_i=$((_i + 1))
				continue
			fi
			build_begin $_i || { STOP=error; MSG="cannot create the build directory of build $_i"; }
			if [ "$BSTATE" = running ]; then
				RUNNING="$RUNNING $_i"
				NRUN=$((NRUN + 1))
			fi
			_i=$((_i + 1))
		done
		[ $NRUN -eq 0 ] && { [ $_i -gt $NB ] || [ -n "$STOP" ]; } && break
		# a wrapper gone without its rc: looked for about once a second
		_slow=0
		_tick=$((_tick + 1))
		[ $((_tick % 2)) -eq 0 ] && _slow=1
		_left=
		_ended=0
		for _k in $RUNNING; do
			if build_check $_k $_slow; then
				NRUN=$((NRUN - 1))
				_ended=1
			else
				_left="$_left $_k"
			fi
		done
		RUNNING=$_left
		if [ "$BFAILED" = 1 ] && [ "$FAILFAST" = 1 ] && [ -n "$RUNNING" ]; then
			kill_builds
			continue
		fi
		# a fresh host's probe answered its slow tools in the background:
		# journaled beside the builds, not after them
		[ -z "$PLATER" ] || [ ! -f "$PLATER.later" ] || emit_later
		[ $_ended = 1 ] || nap
	done
	if [ -n "$WAKE" ]; then
		exec 7>&-
		rm -f "$WAKE"
	fi
	if [ -n "$STOP" ]; then
		_s=killed
	elif [ "$BFAILED" = 1 ]; then
		_s=fail
	else
		_s=pass
	fi
	ev_again phase_ended ",\"name\":\"build\",\"status\":\"$_s\""
}

# emit_later: the lines of a probe that answered a fresh host's plan first
# and asked its other tools in the background (the plan's probe_later FILE):
# that part holds FILE.lock until its lines are in FILE.later. Waits for it
# (90 s at most: its tools have their own timeouts; not at all when
# FILE.later is already there, the usual case), so nothing of it runs
# beside a step, and appends them as one probe_later event. A runner that
# starts again after its predecessor sent them finds no FILE.later.
emit_later() {
	[ -n "$PLATER" ] || return 0
	# FILE.later is complete once there (renamed into place): no flock then
	[ -f "$PLATER.later" ] || [ ! -f "$PLATER.lock" ] || flock -w 90 "$PLATER.lock" true 2>/dev/null || :
	[ ! -f "$PLATER.later" ] || ev probe_later "$(text_field "$PLATER.later" probe)"
	rm -f "$PLATER.later" "$PLATER.lock"
	PLATER=
}

# step_wait DIR: wait (no process of ours to wait for) until the step has an
# rc or nothing runs it any more.
step_wait() {
	_tick=0
	while [ ! -f "$1/rc" ]; do
		if [ -n "$STOP" ]; then
			kill_item "$1"
			return
		fi
		# at once, then every second: nothing left running it
		if [ $((_tick % 5)) -eq 0 ] && stale "$1"; then
			return
		fi
		_tick=$((_tick + 1))
		sleep 0.2
	done
}

# run_step ID DIR TIMEOUT LOCK LOCKWAIT BUILD_ID COMMAND (each_step)
run_step() {
	[ -z "$STOP" ] || return 0
	_id=$1 _d=$2 _t=$3 _lock=$4 _lw=$5 _b=$6 _cmd=$7
	[ -f "$_d/.journaled" ] && return
	js "$_id"
	_jid=$JS
	if [ -n "$_b" ]; then
		_bs=none
		_k=1
		while [ $_k -le $NB ]; do
			get _bid B $_k id
			if [ "$_bid" = "$_b" ]; then
				_bs=missing
				[ -f "$RD/.builds/$_k" ] && read -r _bs <"$RD/.builds/$_k"
				break
			fi
			_k=$((_k + 1))
		done
		if [ "$_bs" != pass ]; then
			js "build '$_b': $_bs"
			ev step_skipped ",\"id\":$_jid,\"reason\":$JS"
			mkdir -p "$_d" && : >"$_d/.journaled"
			return
		fi
	fi
	KILLED=
	if [ ! -f "$_d/rc" ]; then
		if [ -e "$_d/.launch" ] || [ -s "$_d/queued" ]; then
			js "$_d"
			ev step_started ",\"id\":$_jid,\"dir\":$JS,\"attached\":true"
			CUR=$_d
			step_wait "$_d"
		else
			spawn "$_d" "$_t" "$_lock" "$_lw" "$_cmd" || {
				STOP=error
				MSG="cannot create the step directory $_d"
				return
			}
			CUR=$_d
			js "$_d"
			ev_again step_started ",\"id\":$_jid,\"dir\":$JS,\"attached\":false"
			wait $SPAWNED
			_w=$?
			# a signal to the runner interrupts wait: wait again while the
			# wrapper lives (dash answers 128+N again for a wrapper killed
			# by signal N: never loop on a dead one)
			while [ ! -f "$_d/rc" ] && [ $_w -gt 128 ] && [ -z "$STOP" ] &&
				kill -0 "$SPAWNED" 2>/dev/null; do
				wait $SPAWNED
				_w=$?
			done
			[ -f "$_d/rc" ] || step_wait "$_d"
		fi
		CUR=
	fi
	[ -n "$STOP" ] && KILLED=1
	end_fields "$_d"
	ev step_end ",\"id\":$_jid$EF"
	# stopped or lost: it did not end; a resume (reopen) runs it again
	[ "$EST" = killed ] || [ "$EST" = lost ] && : >"$_d/.reopen"
	: >"$_d/.journaled"
}

on_signal() {
	[ -n "$STOP" ] && return
	STOP=killed
	MSG="the runner got SIG$1"
	kill_builds
	[ -n "$CUR" ] && kill_item "$CUR"
}

# ------------------------------------------------------------------ commands
cmd_run() {
	RD=$1
	[ -f "$RD/plan.sh" ] || die "no plan at '$RD/plan.sh'"
	J="$RD/journal"
	exec 9>>"$RD/runner.lock"
	if ! flock -n 9; then
		echo "running $(cat "$RD/runner.pid" 2>/dev/null)"
		exit 0
	fi
	if [ -f "$RD/runner.done" ] || [ -f "$RD/runner.stopped" ]; then
		echo finished
		exit 0
	fi
	echo $$ >"$RD/runner.pid.tmp" && mv -f "$RD/runner.pid.tmp" "$RD/runner.pid"
	# `start` waits on a pipe whose write end is our fd 3: closing it (or
	# exiting) tells it the pid is written; nothing of the run inherits it
	if [ "${GPUORCH_RUNNER_HS:-}" = 1 ]; then
		exec 3>&-
		unset GPUORCH_RUNNER_HS
	fi
	_restart=false
	if [ -s "$J" ]; then
		_restart=true
		# a line torn by a runner killed mid-write ends here, as a bad line
		[ -n "$(tail -c 1 "$J" | tr -d '\n')" ] && echo >>"$J"
	fi
	[ -d "$RD/.builds" ] || mkdir -p "$RD/.builds"
	STOP=
	CUR=
	RUNNING=
	PLAN_ERR=
	MSG=
	PLATER=
	for _tool in setsid timeout flock ps awk; do
		command -v $_tool >/dev/null 2>&1 || bad_plan "'$_tool' is not installed on the host"
	done
	if ! _e=$(sh -n "$RD/plan.sh" 2>&1); then
		bad_plan "the plan is not valid shell: $_e"
	elif [ -z "$PLAN_ERR" ]; then
		. "$RD/plan.sh"
		[ "$PLAN_V" = 1 ] || bad_plan "plan version '$PLAN_V' is not 1 (runner version $RUNNER_VERSION)"
		[ -n "$SRC" ] || bad_plan "the plan names no src_dir"
		[ "$MAXB" -ge 1 ] 2>/dev/null || bad_plan "max_builds must be at least 1"
	fi
	{ read -r _hn </proc/sys/kernel/hostname; } 2>/dev/null || _hn=$(uname -n)
	js "$_hn"
	ev runner_started ",\"pid\":$$,\"host\":$JS,\"restart\":$_restart,\"version\":$RUNNER_VERSION,\"builds\":$NB,\"steps\":$NS,\"max_builds\":$MAXB,\"runner\":\"runner.sh\""
	if [ -n "$PLAN_ERR" ]; then
		js "$PLAN_ERR"
		ev runner_ended ",\"status\":\"error\",\"message\":$JS"
		echo "runner: $PLAN_ERR" >&2
		exit 2
	fi
	trap 'on_signal TERM' TERM
	trap 'on_signal INT' INT
	trap 'on_signal HUP' HUP
	phase_builds
	[ -n "$STOP" ] || emit_later
	if [ -z "$STOP" ]; then
		ev_again phase_started ',"name":"run"'
		each_step run_step
		ev_again phase_ended ",\"name\":\"run\",\"status\":\"${STOP:-done}\""
	fi
	if [ -n "$STOP" ]; then
		js "$MSG"
		ev runner_ended ",\"status\":\"$STOP\",\"message\":$JS"
		exit 3
	fi
	ev_again runner_ended ',"status":"done"'
	: >"$RD/runner.done"
	exit 0
}

# held RUNDIR: 0 when a runner holds the run's lock.
held() {
	# flock on a descriptor the shell opens: one exec, not flock + true
	! flock -n 9 9>>"$1/runner.lock" 2>/dev/null
}

cmd_start() {
	RD=$1
	[ -f "$RD/plan.sh" ] || die "no plan at '$RD/plan.sh'"
	if [ -f "$RD/runner.done" ] || [ -f "$RD/runner.stopped" ]; then echo finished; exit 0; fi
	if held "$RD"; then echo "running $(cat "$RD/runner.pid" 2>/dev/null)"; exit 0; fi
	[ ! -e "$RD/runner.pid" ] || rm -f "$RD/runner.pid"
	# The handshake: setsid -f forks the runner off and returns; the runner
	# holds the pipe's write end (fd 3) until its pid is written, so the read
	# returns at that moment (or when it exits): no polling. A setsid without
	# -f (util-linux < 2.31) starts nothing here: the old way then, polling.
	GPUORCH_RUNNER_HS=1 setsid -f sh "$RUNNER_SH" run "$RD" </dev/null 3>&1 >>"$RD/runner.log" 2>&1 |
		{ read -r _x || :; }
	if [ ! -s "$RD/runner.pid" ] && [ ! -f "$RD/runner.done" ] && ! held "$RD"; then
		setsid sh "$RUNNER_SH" run "$RD" </dev/null >>"$RD/runner.log" 2>&1 &
	fi
	_i=0
	while [ ! -s "$RD/runner.pid" ] && [ ! -f "$RD/runner.done" ] && [ $_i -lt 500 ]; do
		sleep 0.02
		_i=$((_i + 1))
	done
	if [ -s "$RD/runner.pid" ]; then read -r _p <"$RD/runner.pid"; echo "started $_p"; exit 0; fi
	if [ -f "$RD/runner.done" ]; then echo finished; exit 0; fi
	die "the runner did not start within 10 s (see $RD/runner.log)"
}

cmd_follow() {
	RD=$1
	case $2 in '' | *[!0-9]*) die "follow: offset '$2' is not a whole number" ;; esac
	[ -f "$RD/journal" ] || : >>"$RD/journal"
	if held "$RD" && [ -s "$RD/runner.pid" ]; then
		read -r _p <"$RD/runner.pid"
		exec tail -s 0.02 -c +$(($2 + 1)) -f --pid="$_p" "$RD/journal"
	fi
	exec tail -c +$(($2 + 1)) "$RD/journal"
}

# kill_step ID DIR ... (each_step): a step a dead runner claimed and did
# not journal is killed and journaled as killed
kill_step() {
	_d=$2
	if [ -e "$_d/.launch" ] && [ ! -f "$_d/.journaled" ]; then
		kill_item "$_d"
		js "$1"
		_jid=$JS
		KILLED=1
		end_fields "$_d"
		ev step_end ",\"id\":$_jid$EF"
		: >"$_d/.reopen"
		: >"$_d/.journaled"
	fi
}

cmd_kill() {
	RD=$1
	J="$RD/journal"
	[ -f "$RD/plan.sh" ] || die "no plan at '$RD/plan.sh'"
	_was=0
	if held "$RD" && [ -s "$RD/runner.pid" ]; then
		_was=1
		kill -TERM "$(cat "$RD/runner.pid")" 2>/dev/null
		_i=0
		while held "$RD" && [ $_i -lt 300 ]; do sleep 0.1; _i=$((_i + 1)); done
	fi
	exec 9>>"$RD/runner.lock"
	flock -w 5 9 || die "the runner $(cat "$RD/runner.pid" 2>/dev/null) did not stop within 30 s"
	# a stopped run is never started again (start and run say "finished")
	: >"$RD/runner.stopped"
	# whatever a dead runner left: every item of the plan that it claimed
	# and did not journal is killed and journaled as killed
	PLAN_ERR=
	KILLCMD=1
	. "$RD/plan.sh"
	mkdir -p "$RD/.builds"
	_k=1
	while [ $_k -le $NB ]; do
		get _d B $_k dir
		_own=
		[ -s "$_d/owner" ] && read -r _own <"$_d/owner"
		if [ "$_own" = "$RD" ] && [ ! -f "$RD/.builds/$_k" ]; then
			kill_item "$_d"
			eval "B_${_k}_killed=1"
			build_end $_k
		fi
		_k=$((_k + 1))
	done
	each_step kill_step
	if [ $_was = 0 ] && [ ! -f "$RD/runner.done" ] && [ -f "$J" ]; then
		ev runner_ended ',"status":"killed","message":"stopped by runner.sh kill after the runner had gone"'
	fi
	echo killed
}

# cmd_reopen RUNDIR: `gpuorch run --resume` of a run that ended without
# finishing everything (interrupted: runner.stopped; a step lost). Under the
# run lock (nothing when a runner holds it: it is running): every item
# marked .reopen (stopped by a signal or `kill`, or lost: it did not end) is
# forgotten -- its directory removed, a build's .builds/<n> too -- and the
# journal loses those items' events and every runner_ended and killed
# phase_ended line, written atomically; runner.stopped and runner.done go.
# The next start then finds the run as a runner killed before those items
# would have (it attaches to nothing, re-runs them, and journals them anew);
# what ended stays journaled and is never run again. Prints "reopened N".
# reopen_step ID DIR ... (each_step): a step marked .reopen is forgotten
reopen_step() {
	if [ -f "$2/.reopen" ]; then
		js "$1"
		_ids="$_ids$JS
"
		rm -rf "$2"
		_ro=$((_ro + 1))
	fi
}

cmd_reopen() {
	RD=$1
	J="$RD/journal"
	[ -f "$RD/plan.sh" ] || die "no plan at '$RD/plan.sh'"
	exec 9>>"$RD/runner.lock"
	if ! flock -n 9; then
		echo "reopened 0"
		return 0
	fi
	PLAN_ERR=
	. "$RD/plan.sh"
	_ro=0
	_ids=
	_k=1
	while [ $_k -le $NB ]; do
		get _d B $_k dir
		_own=
		[ -s "$_d/owner" ] && read -r _own <"$_d/owner"
		if [ "$_own" = "$RD" ] && [ -f "$_d/.reopen" ]; then
			get _id B $_k id
			js "$_id"
			_ids="$_ids$JS
"
			rm -rf "$_d" "$RD/.builds/$_k"
			_ro=$((_ro + 1))
		fi
		_k=$((_k + 1))
	done
	each_step reopen_step
	if [ -f "$RD/runner.stopped" ] || [ $_ro -gt 0 ]; then
		if [ -s "$J" ]; then
			printf '%s' "$_ids" >"$J.ids" &&
				awk 'FILENAME == ARGV[1] { ids["\"id\":" $0 ","] = 1; next }
				/^\{"t":[0-9.]*,"ev":"runner_ended"/ { next }
				/^\{"t":[0-9.]*,"ev":"phase_ended".*"status":"killed"/ { next }
				/^\{"t":[0-9.]*,"ev":"(build|step)_(started|end)",/ {
					for (k in ids) if (index($0, k)) next
				}
				{ print }' "$J.ids" "$J" >"$J.tmp" && mv -f "$J.tmp" "$J" ||
				die "cannot rewrite the journal $J"
			rm -f "$J.ids"
		fi
		rm -f "$RD/runner.stopped" "$RD/runner.done"
	fi
	exec 9>&-
	echo "reopened $_ro"
}

# A start command may source this file with GPUORCH_RUNNER_LIB=1 and call
# cmd_start and cmd_follow itself: two shells fewer per run (remote.c).
[ -z "${GPUORCH_RUNNER_LIB:-}" ] || return 0
case $1 in
start) [ $# -eq 2 ] || die "usage: runner.sh start RUNDIR"; cmd_start "$2" ;;
run) [ $# -eq 2 ] || die "usage: runner.sh run RUNDIR"; cmd_run "$2" ;;
follow) [ $# -eq 3 ] || die "usage: runner.sh follow RUNDIR OFFSET"; cmd_follow "$2" "$3" ;;
kill) [ $# -eq 2 ] || die "usage: runner.sh kill RUNDIR"; cmd_kill "$2" ;;
reopen) [ $# -eq 2 ] || die "usage: runner.sh reopen RUNDIR"; cmd_reopen "$2" ;;
*) die "usage: runner.sh start|run|follow|kill|reopen RUNDIR [OFFSET]" ;;
esac
