#!/bin/sh
# readme-commands.sh -- README.md's command list is what `gpuorch __doc readme`
# prints from the commands' declarations (orchestrator/cmd/cmd-doc.c): this
# puts it between README's two marker lines, or with --check says whether
# it is there already.
#
#   scripts/readme-commands.sh [--check] GPUORCH README.md
#
# The markers: a line starting "<!-- commands: begin" and one starting
# "<!-- commands: end". Exit 0: written, or (--check) up to date; 1: (--check)
# README's list differs, the differences printed; 2: bad use, no markers.
set -u
check=0
if [ "${1-}" = --check ]; then check=1; shift; fi
[ $# -eq 2 ] || { echo "usage: readme-commands.sh [--check] GPUORCH README.md" >&2; exit 2; }
gpuorch=$1 readme=$2
die() { echo "readme-commands.sh: $*" >&2; exit 2; }
[ -r "$readme" ] || die "cannot read '$readme'"
grep -q '^<!-- commands: begin' "$readme" && grep -q '^<!-- commands: end' "$readme" ||
	die "'$readme' has no '<!-- commands: begin' and '<!-- commands: end' lines to put the list between"
tmp=$(mktemp "${TMPDIR:-/tmp}/readme-commands.XXXXXX") || die "cannot make a temporary file"
trap 'rm -f "$tmp" "$tmp.list"' EXIT
"$gpuorch" __doc readme >"$tmp.list" || die "'$gpuorch __doc readme' failed"
awk -v list="$tmp.list" '
	/^<!-- commands: end/ { skip = 0 }
	!skip { print }
	/^<!-- commands: begin/ {
		while ((getline line < list) > 0)
			print line
		skip = 1
	}
' "$readme" >"$tmp" || die "cannot write '$tmp'"
if [ "$check" = 1 ]; then
	if ! cmp -s "$readme" "$tmp"; then
		echo "readme-commands.sh: the command list in $readme is not the one the commands declare; 'make readme' writes it:" >&2
		diff "$readme" "$tmp" >&2
		exit 1
	fi
	exit 0
fi
cmp -s "$readme" "$tmp" || cat "$tmp" >"$readme" || die "cannot write '$readme'"
