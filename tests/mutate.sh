#!/bin/sh
# mutate.sh -- re-check the suite's strength: plant each mutation of
# tests/mutations.txt (one at a time) in a scratch copy of the committed
# tree, run the tests named for it, and print killed / survived.
#
#   tests/mutate.sh [-f LIST] [-t SECONDS] [-n] [-c] [ID...]
#
#   -f LIST     the mutation list (default tests/mutations.txt; format there)
#   -t SECONDS  time limit of one mutant's test run (default 600)
#   -n          skip the baseline run (the named tests on the unmutated copy)
#   -c          check only: every mutation still applies to the work tree
#               (each find occurs once, each replace changes its file);
#               nothing is built or run (the suite runs this: t0105)
#   ID...       only these mutations
#
# The real tree is never touched: HEAD is exported (git archive) into a
# mktemp -d directory and built once there; the named tests are run once on
# it (they must pass, or a "killed" means nothing); then each mutant is a
# cp -a of that built copy with its edits applied (each find string must
# occur exactly once, and the file must change), rebuilt with make, and its
# tests run by tests/run-tests.sh under `setsid -w` (a session and process
# group of its own, killed as a whole afterwards) and `timeout`, with TMPDIR
# inside the scratch directory. ASan and valgrind passes are skipped.
# Output, one line per mutation:
#   killed|SURVIVED|NOT-APPLIED|BUILD-FAILED|NO-TESTS  ID  (seconds)  detail
# then "N killed, N survived, N other". Exits 1 unless every mutation was
# killed. The scratch directory is removed at exit (kept with
# MUTATE_KEEP=1). MUTATE_JOBS sets make's -j (default 2).
set -u

START=$(pwd)
cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)
LIST=$ROOT/tests/mutations.txt
LIMIT=600
BASELINE=1
CHECK=0
while getopts f:t:nc opt; do
	case $opt in
	f) case $OPTARG in /*) _f=$OPTARG ;; *) _f=$START/$OPTARG ;; esac   # relative to where it was run
	   LIST=$(cd "$(dirname "$_f")" && pwd)/$(basename "$_f") ;;
	t) LIMIT=$OPTARG ;;
	n) BASELINE=0 ;;
	c) CHECK=1 ;;
	*) sed -n '2,14s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
ONLY=" $* "
JOBS=${MUTATE_JOBS:-2}
[ -f "$LIST" ] || { echo "mutate.sh: no mutation list at $LIST" >&2; exit 2; }
command -v setsid >/dev/null 2>&1 || { echo "mutate.sh: setsid not found (util-linux)" >&2; exit 2; }

S=$(mktemp -d "${TMPDIR:-/tmp}/gpuorch-mutate.XXXXXX") || exit 2
trap 'if [ "${MUTATE_KEEP:-0}" = 1 ]; then echo "# kept $S"; else chmod -R u+w "$S" 2>/dev/null; rm -rf "$S"; fi' EXIT
trap 'exit 130' INT TERM HUP
mkdir -p "$S/base" "$S/logs" "$S/tmp"

now() { date +%s; }

# build DIR LOG: make the controller, the unit tests and the test tools
build() {
	(cd "$1" && make -j"$JOBS" all unit >"$2" 2>&1 &&
	 make -j"$JOBS" -f Makefile -f tests/tools/tools.mk tools >>"$2" 2>&1)
}

# run_tests DIR LOG PATTERNS: tests/run-tests.sh PATTERNS in DIR, sandboxed;
# returns its exit status
run_tests() {
	_pid=$S/pgid
	rm -f "$_pid"
	(cd "$1" && TMPDIR="$S/tmp" GPUORCH_NO_ASAN=1 GPUORCH_NO_VALGRIND=1 \
		GPUORCH_TEST_TIMEOUT="$LIMIT" setsid -w sh -c 'echo $$ >"$0"; exec timeout -k 10 "$@"' \
		"$_pid" "$LIMIT" tests/run-tests.sh $3 >"$2" 2>&1 </dev/null)
	_rc=$?
	# anything the tests left behind in their process group
	[ -s "$_pid" ] && kill -9 -- "-$(cat "$_pid")" 2>/dev/null
	return $_rc
}

# count FILE: occurrences of $FIND in FILE
count() {
	awk 'BEGIN { f = ENVIRON["FIND"] } { s = $0; while ((i = index(s, f)) > 0) { n++; s = substr(s, i + length(f)) } } END { print n + 0 }' "$1"
}

# apply DIR EDITS: apply the edits ("F path", "S find", "R replace" lines);
# prints why not and returns 1 when one does not apply
apply() {
	_file=
	while IFS= read -r _l; do
		_k=${_l%% *}
		_v=${_l#* }
		case $_k in
		F) _file=$1/$_v
		   [ -f "$_file" ] || { echo "no file $_v"; return 1; } ;;
		S) FIND=$_v ;;
		R) export FIND
		   _n=$(count "$_file")
		   [ "$_n" = 1 ] || { printf "'%s' occurs %s times in %s\n" "$FIND" "$_n" "${_file#$1/}"; return 1; }
		   cp "$_file" "$_file.orig"
		   REPL=$_v awk 'BEGIN { f = ENVIRON["FIND"]; r = ENVIRON["REPL"] }
			!done && (i = index($0, f)) { $0 = substr($0, 1, i - 1) r substr($0, i + length(f)); done = 1 }
			{ print }' "$_file.orig" >"$_file" || return 1
		   if cmp -s "$_file" "$_file.orig"; then echo "${_file#$1/} did not change"; return 1; fi
		   rm -f "$_file.orig" ;;
		esac
	done <"$2"
	return 0
}

nkilled=0 nsurvived=0 nother=0
report() {
	printf '%-13s %-34s %5ss  %s\n' "$1" "$2" "$3" "$4"
	case $1 in
	killed) nkilled=$((nkilled + 1)) ;;
	SURVIVED) nsurvived=$((nsurvived + 1)) ;;
	*) nother=$((nother + 1)) ;;
	esac
}

# mutant ID TESTS EDITS
mutant() {
	_t0=$(now)
	_m=$S/m-$1
	_log=$S/logs/$1.log
	cp -a "$S/base" "$_m" || exit 2
	if ! _why=$(apply "$_m" "$3"); then
		report NOT-APPLIED "$1" $(($(now) - _t0)) "$_why"
	elif ! build "$_m" "$_log"; then
		report BUILD-FAILED "$1" $(($(now) - _t0)) "$(grep -m1 'error' "$_log")"
	else
		run_tests "$_m" "$_log" "$2"
		_rc=$?
		_ran=$(grep -cE '^(PASS|FAIL) (unit/|t[0-9])' "$_log")
		_first=$(grep -m1 -E '^FAIL (unit/|t[0-9])' "$_log" | sed 's/^FAIL //')
		if [ "$_ran" -eq 0 ]; then
			report NO-TESTS "$1" $(($(now) - _t0)) "no test matched: $2"
		elif [ $_rc -ne 0 ]; then
			report killed "$1" $(($(now) - _t0)) "${_first:-exit $_rc}"
		else
			report SURVIVED "$1" $(($(now) - _t0)) "$2 all passed"
		fi
	fi
	chmod -R u+w "$_m" 2>/dev/null
	rm -rf "$_m"
}

# ---- parse the list into one EDITS file per mutation ----------------------

ids=
id='' tests='' edits=''
flush() {
	[ -n "$id" ] || return 0
	case "$ONLY" in
	"  ") ;;
	*" $id "*) ;;
	*) id='' tests=''; return 0 ;;
	esac
	[ -n "$tests" ] || { echo "mutate.sh: mutation $id names no tests" >&2; exit 2; }
	echo "$tests" >"$S/tests-$id"
	ids="$ids $id"
	id='' tests=''
}
lineno=0
while IFS= read -r line || [ -n "$line" ]; do
	lineno=$((lineno + 1))
	case $line in
	'#'*) continue ;;
	'') flush; continue ;;
	esac
	k=${line%% *}
	v=${line#* }
	case $k in
	mutation) flush; id=$v; : >"$S/edits-$id" ;;
	why) ;;
	file) printf 'F %s\n' "$v" >>"$S/edits-$id" ;;
	find) printf 'S %s\n' "$v" >>"$S/edits-$id" ;;
	replace) printf 'R %s\n' "$v" >>"$S/edits-$id" ;;
	tests) tests=$v ;;
	*) echo "mutate.sh: $LIST:$lineno: unknown key '$k' (mutation, why, file, find, replace, tests)" >&2
	   exit 2 ;;
	esac
done <"$LIST"
flush
[ -n "$ids" ] || { echo "mutate.sh: no mutation selected" >&2; exit 2; }

# ---- -c: does each mutation still apply to the work tree? ------------------

if [ $CHECK = 1 ]; then
	n=0 bad=0
	for i in $ids; do
		n=$((n + 1))
		# a copy of just the files the mutation edits
		rm -rf "$S/c" && mkdir -p "$S/c" || exit 2
		while IFS= read -r _l; do
			case $_l in
			"F "*) mkdir -p "$S/c/$(dirname "${_l#F }")" && { cp "$ROOT/${_l#F }" "$S/c/${_l#F }" 2>/dev/null || :; } ;;
			esac
		done <"$S/edits-$i"
		if ! _why=$(apply "$S/c" "$S/edits-$i"); then
			printf '%-13s %-34s %s\n' NOT-APPLIED "$i" "$_why"
			bad=$((bad + 1))
		fi
	done
	echo "$((n - bad)) of $n mutations apply, $bad do not"
	[ $bad -eq 0 ]
	exit
fi

# ---- the unmutated copy ---------------------------------------------------

echo "# mutating $(git -C "$ROOT" rev-parse --short HEAD) in $S"
git -C "$ROOT" archive HEAD | tar -x -C "$S/base" || exit 2
if ! build "$S/base" "$S/logs/base-build.log"; then
	echo "mutate.sh: the unmutated tree does not build:" >&2
	tail -n 20 "$S/logs/base-build.log" >&2
	exit 2
fi
if [ $BASELINE = 1 ]; then
	all=$(for i in $ids; do cat "$S/tests-$i"; done | tr ' ' '\n' | sort -u | tr '\n' ' ')
	t0=$(now)
	if ! run_tests "$S/base" "$S/logs/baseline.log" "$all"; then
		echo "mutate.sh: the tests fail on the unmutated tree (so no mutant can be judged):" >&2
		grep -E '^FAIL ' "$S/logs/baseline.log" >&2
		exit 2
	fi
	echo "# baseline: $all passed ($(($(now) - t0))s)"
fi

for i in $ids; do
	mutant "$i" "$(cat "$S/tests-$i")" "$S/edits-$i"
done
echo "$nkilled killed, $nsurvived survived, $nother other"
[ $nsurvived -eq 0 ] && [ $nother -eq 0 ]
