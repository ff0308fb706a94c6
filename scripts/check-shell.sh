#!/bin/sh
# check-shell.sh -- every shell script of the repository through shellcheck,
# at severity warning (errors and warnings; style and info notes aside).
#
#   scripts/check-shell.sh [FILE...]
#
# Without FILEs: every tracked *.sh, and every tracked file without that
# suffix whose first line starts a POSIX sh or bash script (.ci/run). A
# file's own "# shellcheck disable=..." lines say why where a warning is
# wrong (a variable set by eval, read by a test body that is a string);
# tests/.shellcheckrc holds the one such rule for all test files. Prints
# what shellcheck found (gcc format) and "shell: N problems in M files",
# exit 1; or "shell: ok (N files)", exit 0. Needs shellcheck.
set -u

die() { echo "check-shell.sh: $*" >&2; exit 2; }
command -v shellcheck >/dev/null 2>&1 ||
	die "shellcheck not found (apt-get install shellcheck; scripts/deps.sh --tests installs it)"
cd "$(dirname "$0")/.." || die "cannot enter the repository root"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/check-shell.XXXXXX") || die "cannot make a temporary folder"
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP

if [ $# -gt 0 ]; then
	for f in "$@"; do
		[ -f "$f" ] || die "no such file '$f'"
		echo "$f"
	done >"$TMP/files"
else
	git rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
		die "not in a git work tree: name the files to check"
	git ls-files -z | tr '\0' '\n' | while IFS= read -r f; do
		[ -f "$f" ] || continue
		case $f in
		*.sh) echo "$f" ;;
		*.*) ;;
		*) head -n 1 "$f" 2>/dev/null | grep -q '^#! *\(/usr\)\{0,1\}/bin/\(env \)\{0,1\}\(ba\)\{0,1\}sh\b' && echo "$f" ;;
		esac
	done >"$TMP/files"
fi
n=$(wc -l <"$TMP/files" | tr -d ' ')
[ "$n" -gt 0 ] || die "no shell script found"
tr '\n' '\0' <"$TMP/files" | xargs -0 shellcheck -S warning -f gcc -x >"$TMP/out" 2>&1
grep -v '^$' "$TMP/out" >"$TMP/found" || :
if [ -s "$TMP/found" ]; then
	cat "$TMP/found"
	echo "shell: $(wc -l <"$TMP/found" | tr -d ' ') problems in $(cut -d: -f1 "$TMP/found" | sort -u | wc -l | tr -d ' ') files"
	exit 1
fi
echo "shell: ok ($n files)"
