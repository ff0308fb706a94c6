#!/bin/sh
# bench-agent.sh -- what a re-run costs a host under each runner: runner.sh
# (POSIX sh) against gpuorch-agent (C, orchestrator/host/). The plan is a
# re-run's: one build already built by an earlier run (reused) and one
# trivial step (`true`, under a GPU lock file of its own).
#
#   scripts/bench-agent.sh [N]
#
# Runs `runner.sh run` and `gpuorch-agent run` N times each (default 20),
# each time on a fresh run directory, and prints the CPU-seconds per run of
# each (user + sys of the runner and every process it waited for: the
# shell's `times` of a subshell that runs only them), and, where strace is
# installed, the processes one run forks and the programs it executes
# (strace -f -c, one more run each). Then how soon each runner sees an item
# end: nine builds and nine steps of 0.1 s, one at a time, and the median gap
# from an item's end (t_end) to its end event, builds beside steps (a runner
# that only looked at builds every 0.5 s would add ~0.4 s to the builds').
# GPUORCH_AGENT names the agent (default
# build/gpuorch-agent, `make` builds it); GPUORCH_RUNNER_SHELL the shell of
# runner.sh (default sh). A measurement, not a test: nothing here passes or
# fails on a number.
set -u

cd "$(dirname "$0")/.." || exit 1
N=${1:-20}
case $N in '' | *[!0-9]* | 0) echo "bench-agent.sh: N must be a whole number, not '$N'" >&2; exit 2 ;; esac
AGENT=${GPUORCH_AGENT:-build/gpuorch-agent}
RSH=${GPUORCH_RUNNER_SHELL:-sh}
RUNNER=$(pwd)/orchestrator/remote/runner.sh
[ -x "$AGENT" ] || { echo "bench-agent.sh: no agent at $AGENT (run make)" >&2; exit 2; }
AGENT=$(cd "$(dirname "$AGENT")" && pwd)/$(basename "$AGENT")
T=$(mktemp -d "${TMPDIR:-/tmp}/bench-agent.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM HUP
mkdir -p "$T/src" "$T/builds" "$T/runs"

# plan RUNDIR: the re-run's plan in RUNDIR
plan() {
	mkdir -p "$1" &&
	{
		printf "plan_version 1\nsrc_dir '%s'\nmax_builds 2\nfail_fast 1\ntext_cap 4194304\n" "$T/src"
		printf "build 'k1' '%s' '%s' 600 '%s'\n" "$T/builds/k1" "$T/builds/k1/prog" \
			"echo ptxas info : Used 10 registers >&2; printf '\\''#!/bin/sh\\ntrue\\n'\\'' >$T/builds/k1/prog && chmod +x $T/builds/k1/prog"
		printf "step 's1' '%s' 60 '%s' 30 'k1' 'true'\n" "$1/s1" "$T/gpu0.lock"
	} >"$1/plan.sh"
}

# secs "XmY.Zs": seconds
secs() {
	echo "$1" | awk '{ split($0, p, "m"); sub(/s$/, "", p[2]); printf "%.6f", p[1] * 60 + p[2] }'
}

# cpu NAME CMD...: CMD RUNDIR run N times on fresh run directories (their
# plans written first); prints NAME's CPU-seconds per run (the children's
# user + sys of a subshell that runs nothing else)
cpu() {
	_name=$1
	shift
	_i=0
	while [ "$_i" -lt "$N" ]; do
		plan "$T/runs/$_name-$_i" || exit 1
		_i=$((_i + 1))
	done
	_t=$(
		_i=0
		while [ "$_i" -lt "$N" ]; do
			"$@" "$T/runs/$_name-$_i" >/dev/null 2>&1 ||
				{ echo "bench-agent.sh: $_name run $_i failed (journal $T/runs/$_name-$_i/journal)" >&2; exit 1; }
			_i=$((_i + 1))
		done
		# not in a pipeline: a forked times would count none of them
		times >"$T/times"
	) || exit 1
	_t=$(tail -n 1 "$T/times")
	_u=$(secs "$(echo "$_t" | awk '{ print $1 }')")
	_s=$(secs "$(echo "$_t" | awk '{ print $2 }')")
	awk -v n="$N" -v u="$_u" -v s="$_s" -v name="$_name" \
		'BEGIN { printf "%-14s %d runs: %.4f CPU-s per run (user %.4f, sys %.4f)\n", name, n, (u + s) / n, u / n, s / n }'
}

# forks NAME CMD...: one more run under strace -f -c: processes forked and
# programs executed
forks() {
	_name=$1
	shift
	plan "$T/runs/$_name-strace" || return 1
	strace -f -c -o "$T/$_name.strace" -e trace=clone,fork,vfork,clone3,execve \
		"$@" "$T/runs/$_name-strace" >/dev/null 2>&1 || { echo "$_name: strace run failed"; return 0; }
	awk -v name="$_name" '$NF ~ /^(clone|clone3|fork|vfork)$/ { f += $(NF - 1 - ($(NF - 1) !~ /^[0-9]+$/)) }
		$NF == "execve" { e += $4 }
		END { printf "%-14s one run: %d forks, %d programs executed\n", name, f, e }' "$T/$_name.strace"
}

# the build, once, by the agent: every run below reuses it
plan "$T/runs/setup" && "$AGENT" run "$T/runs/setup" >/dev/null 2>&1 ||
	{ echo "bench-agent.sh: the setup build failed" >&2; exit 1; }
grep -q '"ev":"build_end","id":"k1".*"status":"exited","rc":0' "$T/runs/setup/journal" ||
	{ echo "bench-agent.sh: the setup build did not pass" >&2; exit 1; }

echo "a re-run: one reused build, one step 'true' under a GPU lock; $N runs each on fresh run directories"
cpu runner.sh "$RSH" "$RUNNER" run
cpu gpuorch-agent "$AGENT" run
grep -q '"ev":"build_reused"' "$T/runs/gpuorch-agent-0/journal" ||
	echo "bench-agent.sh: warning: the build was not reused" >&2
if command -v strace >/dev/null 2>&1; then
	forks runner.sh "$RSH" "$RUNNER" run
	forks gpuorch-agent "$AGENT" run
else
	echo "(no strace: forks not counted)"
fi

# wake NAME CMD...: one run of nine 0.1 s builds (one at a time) and nine
# 0.1 s steps; prints the median gap from an item's end to its end event
wake() {
	_name=$1
	shift
	_r=$T/runs/$_name-wake
	mkdir -p "$_r" || return 1
	{
		printf "plan_version 1\nsrc_dir '%s'\nmax_builds 1\nfail_fast 1\ntext_cap 4194304\n" "$T/src"
		for _i in 1 2 3 4 5 6 7 8 9; do
			printf "build 'w%s' '%s' '%s' 60 'sleep 0.1 && cp /bin/true %s'\n" \
				"$_i" "$_r/b$_i" "$_r/b$_i/prog" "$_r/b$_i/prog"
		done
		for _i in 1 2 3 4 5 6 7 8 9; do
			printf "step 's%s' '%s' 30 '' 0 '' 'sleep 0.1'\n" "$_i" "$_r/s$_i"
		done
	} >"$_r/plan.sh"
	"$@" "$_r" >/dev/null 2>&1 || { echo "$_name: the wake run failed (journal $_r/journal)"; return 0; }
	sed -n 's/^{"t":\([0-9.]*\),"ev":"\(build\|step\)_end".*"t_end":\([0-9.]*\),.*/\2 \1 \3/p' "$_r/journal" |
		awk -v name="$_name" '{ g = $2 - $3; if ($1 == "build") b[nb++] = g; else s[ns++] = g }
		function med(a, n,   i, j, t) {
			for (i = 1; i < n; i++) for (j = i; j > 0 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
			return n % 2 ? a[int(n / 2)] : (a[n / 2 - 1] + a[n / 2]) / 2
		}
		END { if (nb != 9 || ns != 9) { printf "%-14s wake: %d builds, %d steps ended (not 9 and 9)\n", name, nb, ns; exit }
			printf "%-14s item end to its event, medians of 9: builds %.3f s, steps %.3f s\n", name, med(b, nb), med(s, ns) }'
}

wake runner.sh "$RSH" "$RUNNER" run
wake gpuorch-agent "$AGENT" run
