#!/bin/sh
# check-shell.sh -- every shell script of the repository through shellcheck,
# at severity warning (errors and warnings; style and info notes aside), and
# no shell script hidden from it in C strings.
#
#   scripts/check-shell.sh [FILE...]
#
# Without FILEs: every tracked *.sh, and every tracked file without that
# suffix whose first line starts a POSIX sh or bash script (.ci/run); and
# every tracked .c file of orchestrator/. A file's own "# shellcheck
# disable=..." lines say why where a warning is wrong (a variable set by
# eval, read by a test body that is a string); tests/.shellcheckrc holds the
# one such rule for all test files. Prints what shellcheck found (gcc
# format) and "shell: N problems in M files", exit 1; or "shell: ok (N
# files)", exit 0. Needs shellcheck.
#
# A script that gpuorch sends to hosts belongs in a .sh file of its own
# (orchestrator/remote/probe.sh, ...), embedded in the binary by
# scripts/embed.sh --sh (the Makefile's EMBED), where shellcheck reads it.
# In a .c file (a FILE named *.c, or those above), a run of 8 or more lines
# that are C string literals ending in \n" (comment lines between them do
# not end a run), 3 or more of them with shell syntax (; then, ; do, a line
# that is fi, done or esac, $( ${ && || a pipe, >/dev/null), is one such
# script, and a problem: "FILE:LINE:1: error: a shell script in C strings".
# usage and help texts are English: they have none of that syntax. A run
# that must stay in C goes into ALLOWED_IN_C below, with why.
set -u

# ALLOWED_IN_C: "FILE NAME" lines, NAME the C array or macro a run is in,
# each after a comment line saying why it stays. None now.
ALLOWED_IN_C='
'

die() { echo "check-shell.sh: $*" >&2; exit 2; }
command -v shellcheck >/dev/null 2>&1 ||
	die "shellcheck not found (apt-get install shellcheck; scripts/deps.sh --tests installs it)"
cd "$(dirname "$0")/.." || die "cannot enter the repository root"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/check-shell.XXXXXX") || die "cannot make a temporary folder"
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP

# scripts_in_c FILE...: a line for each run of C string lines that is a
# shell script (above), unless ALLOWED_IN_C names it
scripts_in_c() {
	ALLOWED_IN_C=$ALLOWED_IN_C awk '
	BEGIN {
		na = split(ENVIRON["ALLOWED_IN_C"], a, "\n")
		for (i = 1; i <= na; i++)
			if (a[i] != "")
				ok[a[i]] = 1
	}
	function flush() {
		if (n >= 8 && hits >= 3 && !((FILENAME " " name) in ok))
			printf "%s:%d:1: error: a shell script in C strings (%d lines in %s, %d of them shell syntax): shellcheck cannot read it; move it into a .sh file embedded by scripts/embed.sh --sh (the Makefile'"'"'s EMBED)\n", fname, start, n, name, hits
		n = 0
		hits = 0
	}
	FNR == 1 { flush(); name = "?" }
	{ fname = FILENAME }
	# what a run is in: the array or the macro
	/^[a-z].*[A-Za-z_][A-Za-z0-9_]*\[\] *=/ {
		name = $0
		sub(/\[\].*/, "", name)
		sub(/.*[^A-Za-z0-9_]/, "", name)
	}
	/^#[ \t]*define[ \t]/ { name = $2 }
	# a C string line ending in \n" (then , ; ) or a macro line'"'"'s \)
	/^[ \t]*"([^"\\]|\\.)*\\n"[ \t]*[,;)]?[ \t]*(\\[ \t]*)?(\/\*.*\*\/[ \t]*)?$/ {
		if (n == 0)
			start = FNR
		n++
		if ($0 ~ /;[ \t]*(then|do)([ \t]|\\n)/ ||
		    $0 ~ /^[ \t]*"[ \t]*(fi|done|esac)([ \t;)|&>]|\\n)/ ||
		    $0 ~ /\$[({]/ || $0 ~ /&& |\|\| |[^|]\| [^|]/ || $0 ~ />\/dev\/null/)
			hits++
		next
	}
	# comment lines do not end a run
	/^[ \t]*(\/\*|\*|\/\/)/ { next }
	{ flush() }
	END { flush() }
	' "$@"
}

if [ $# -gt 0 ]; then
	for f in "$@"; do
		[ -f "$f" ] || die "no such file '$f'"
		case $f in
		*.c) echo "$f" >>"$TMP/cfiles" ;;
		*) echo "$f" ;;
		esac
	done >"$TMP/files"
else
	git rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
		die "not in a git work tree: name the files to check"
	git ls-files -z | tr '\0' '\n' | while IFS= read -r f; do
		[ -f "$f" ] || continue
		case $f in
		*.sh) echo "$f" ;;
		orchestrator/*.c) echo "$f" >>"$TMP/cfiles" ;;
		*.*) ;;
		*) head -n 1 "$f" 2>/dev/null | grep -q '^#! *\(/usr\)\{0,1\}/bin/\(env \)\{0,1\}\(ba\)\{0,1\}sh\b' && echo "$f" ;;
		esac
	done >"$TMP/files"
fi
n=$(wc -l <"$TMP/files" | tr -d ' ')
nc=0
[ ! -f "$TMP/cfiles" ] || nc=$(wc -l <"$TMP/cfiles" | tr -d ' ')
[ "$n" -gt 0 ] || [ "$nc" -gt 0 ] || die "no shell script found"
: >"$TMP/out"
[ "$n" -eq 0 ] ||
	tr '\n' '\0' <"$TMP/files" | xargs -0 shellcheck -S warning -f gcc -x >"$TMP/out" 2>&1
[ "$nc" -eq 0 ] ||
	while IFS= read -r f; do
		scripts_in_c "$f" || echo "$f:1:1: error: cannot read it"
	done <"$TMP/cfiles" >>"$TMP/out" 2>&1
grep -v '^$' "$TMP/out" >"$TMP/found" || :
if [ -s "$TMP/found" ]; then
	cat "$TMP/found"
	echo "shell: $(wc -l <"$TMP/found" | tr -d ' ') problems in $(cut -d: -f1 "$TMP/found" | sort -u | wc -l | tr -d ' ') files"
	exit 1
fi
if [ "$nc" -gt 0 ]; then
	echo "shell: ok ($n files; no shell script in the C strings of $nc .c files)"
else
	echo "shell: ok ($n files)"
fi
