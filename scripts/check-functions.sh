#!/bin/sh
# check-functions.sh -- no new long or tangled function in orchestrator/ (as
# curl's top-length and top-complexity, read by pmccabe):
#   a function over LINES lines or over COMPLEXITY (modified McCabe: each
#   if, loop, case statement, && and || adds one; a switch counts once) is
#   an error unless scripts/long-functions.txt lists it, and a listed one
#   must not grow past the lines and complexity written there (a ratchet:
#   split it, then lower or drop its line).
#
#   scripts/check-functions.sh [--list FILE] [--lines N] [--complexity N]
#                              [--write] [SRC...]
#
# SRC: the .c files or folders to read (default orchestrator). --list: the
# allowed list (default scripts/long-functions.txt; lines "FILE FUNCTION
# LINES COMPLEXITY", # comments). --write prints the list today's tree needs
# (to start one, or to lower it after a split). Prints one line per problem
# and exits 1; else "functions: ok (N functions, M listed, the longest ...)"
# and exits 0. A listed function that is now within both limits, or gone, is
# said ("can be dropped from the list"), not an error. Needs pmccabe.
set -u

LIST=scripts/long-functions.txt
MAXL=100
MAXC=30
WRITE=0
die() { echo "check-functions.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--list) [ $# -ge 2 ] || die "--list needs a file"; LIST=$2; shift 2 ;;
	--lines) [ $# -ge 2 ] || die "--lines needs a number"; MAXL=$2; shift 2 ;;
	--complexity) [ $# -ge 2 ] || die "--complexity needs a number"; MAXC=$2; shift 2 ;;
	--write) WRITE=1; shift ;;
	-h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
	--) shift; break ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) break ;;
	esac
done
for n in "$MAXL" "$MAXC"; do
	case $n in '' | *[!0-9]*) die "a limit is a whole number, not '$n'" ;; esac
done
[ $# -gt 0 ] || set -- orchestrator
command -v pmccabe >/dev/null 2>&1 || die "pmccabe not found (apt-get install pmccabe; scripts/deps.sh --tests installs it)"
[ "$WRITE" = 1 ] || [ -f "$LIST" ] || die "no list '$LIST' (--write prints one)"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/check-functions.XXXXXX") || die "cannot make a temporary folder"
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP

for src in "$@"; do
	[ -e "$src" ] || die "no such file or folder '$src'"
	find "$src" -name '*.c' -type f
done | LC_ALL=C sort >"$TMP/files"
[ -s "$TMP/files" ] || die "no .c file under $*"
# pmccabe: modified McCabe, traditional, statements, first line, lines, "file(line): name"
tr '\n' '\0' <"$TMP/files" | xargs -0 pmccabe >"$TMP/pm" 2>"$TMP/pm.err" ||
	die "pmccabe failed: $(head -n 3 "$TMP/pm.err")"

if [ "$WRITE" = 1 ]; then
	echo "# scripts/check-functions.sh's list: functions over $MAXL lines or complexity $MAXC,"
	echo "# allowed at most these lines and complexity until they are split."
	echo "# FILE FUNCTION LINES COMPLEXITY"
	awk -F'\t' -v L="$MAXL" -v C="$MAXC" '$5 > L || $1 > C {
		w = $6; sub(/\([0-9]+\): /, " ", w); print w, $5, $1 }' "$TMP/pm" | LC_ALL=C sort
	exit 0
fi

awk -F'\t' -v L="$MAXL" -v C="$MAXC" -v list="$LIST" '
BEGIN {
	while ((getline line < list) > 0) {
		if (line ~ /^[ \t]*(#|$)/)
			continue
		nf = split(line, f, /[ \t]+/)
		if (nf != 4 || f[3] !~ /^[0-9]+$/ || f[4] !~ /^[0-9]+$/) {
			printf "%s: a line is not \"FILE FUNCTION LINES COMPLEXITY\": %s\n", list, line
			bad++
			continue
		}
		k = f[1] " " f[2]
		al[k] = f[3]; ac[k] = f[4]; listed++
	}
}
{
	w = $6
	file = w; sub(/\(.*/, "", file)
	at = w; sub(/: .*/, "", at)
	name = w; sub(/^[^)]*\): /, "", name)
	k = file " " name
	n++
	if ($5 > maxl) { maxl = $5; longest = at " " name }
	seen[k] = 1
	over = $5 > L || $1 > C
	if (!over) {
		if (k in al)
			drop[k] = 1
	} else if (!(k in al)) {
		printf "%s: %s is %d lines, complexity %d (limits %d and %d): split it into functions that each do one thing\n", at, name, $5, $1, L, C
		bad++
	} else if ($5 > al[k] || $1 > ac[k]) {
		printf "%s: %s grew to %d lines, complexity %d (listed at %d and %d in %s): split it, do not grow it\n", at, name, $5, $1, al[k], ac[k], list
		bad++
	} else if ($5 < al[k] || $1 < ac[k]) {
		printf "note: %s: %s is now %d lines, complexity %d: lower its line in %s to that\n", at, name, $5, $1, list
	}
}
END {
	for (k in al)
		if (!(k in seen) || (k in drop))
			printf "note: %s is %s: it can be dropped from %s\n", k, (k in seen) ? "within the limits now" : "gone", list
	if (bad) {
		printf "functions: %d problem%s\n", bad, bad == 1 ? "" : "s"
		exit 1
	}
	printf "functions: ok (%d functions, %d listed over %d lines or complexity %d, the longest %s, %d lines)\n", n, listed, L, C, longest, maxl
}' "$TMP/pm"
