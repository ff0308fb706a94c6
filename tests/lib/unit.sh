# shellcheck shell=sh
# unit.sh -- sourced by tests/run-tests.sh and tests/lib/valgrind-units.sh:
# how a unit test binary is run and judged, and which tests a PATTERN list
# selects. The includer defines record STATUS NAME [DETAIL] and sets OUTDIR
# (a scratch directory), FILE_TIMEOUT (seconds) and PATTERNS.

now_ms() {
	_t=$(date +%s%N)
	echo $((_t / 1000000))
}

secs() {
	printf '%d.%02ds' $(($1 / 1000)) $((($1 % 1000) / 10))
}

# selected NAME: whether NAME contains one of $PATTERNS (all, when none).
selected() {
	[ -z "$PATTERNS" ] && return 0
	for _p in $PATTERNS; do
		case "$1" in
		*"$_p"*) return 0 ;;
		esac
	done
	return 1
}

# run_unit LABEL BINARY [WRAPPER...]: one unit test binary is one test.
run_unit() {
	_label=$1
	_bin=$2
	shift 2
	_start=$(now_ms)
	timeout -k 10 "$FILE_TIMEOUT" "$@" "$_bin" >"$OUTDIR/unit.log" 2>&1 </dev/null
	_rc=$?
	_t=$(secs $(( $(now_ms) - _start )))
	_ok=$(grep -c '^ok ' "$OUTDIR/unit.log")
	_nok=$(grep -c '^not ok ' "$OUTDIR/unit.log")
	if [ $_rc -eq 0 ] && [ "$_nok" -eq 0 ] && [ "$_ok" -gt 0 ]; then
		record PASS "$_label" "($_ok checks, $_t)"
	else
		if [ "$_ok" -eq 0 ] && [ $_rc -eq 0 ]; then
			_why="no 'ok N' line: the test checked nothing"
		else
			_why="exit $_rc, $_nok of $((_ok + _nok)) checks failed"
		fi
		record FAIL "$_label" "($_t): $_why"
		{ grep '^not ok ' "$OUTDIR/unit.log"; tail -n 40 "$OUTDIR/unit.log"; } |
			sed -e 's/^/    | /'
	fi
}
