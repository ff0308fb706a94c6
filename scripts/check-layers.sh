#!/bin/sh
# check-layers.sh -- orchestrator/'s structure, checked from the code itself:
#   1. no loop of calls between .c files (A calls B calls ... calls A), read
#      from the objects' symbols (what each defines, what each needs);
#   2. no loop of #includes between headers;
#   3. every call and every #include that crosses folders goes DOWN the
#      layers below (docs/design.md draws them): a folder uses only folders
#      of a lower layer, never one of its own layer or above.
#
#   scripts/check-layers.sh [SRC [OBJDIR]]
#
# SRC is orchestrator (default), OBJDIR build/obj (default; run `make` first).
# Prints one line per problem and exits 1; prints one "layers: ok" line and
# exits 0 when there is none. Needs nm and tsort (binutils, coreutils).
set -u

SRC=${1:-orchestrator}
OBJ=${2:-build/obj}

# folder layer: a folder may use only folders with a smaller number.
LAYERS='
core 0
transport 1
tools 1
spec 1
store 1
remote 2
report 2
run 3
cmd 4
'

die() {
	echo "check-layers: $*" >&2
	exit 2
}

[ -d "$SRC" ] || die "no source folder $SRC (run from the repository root)"
command -v nm >/dev/null 2>&1 || die "nm not found (install binutils)"
command -v tsort >/dev/null 2>&1 || die "tsort not found (install coreutils)"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/check-layers.XXXXXX") || die "cannot make a temporary folder"
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP

# Every .c of SRC needs its object: a stale or missing one would hide calls.
nsrc=0
for c in "$SRC"/*/*.c; do
	[ -f "$c" ] || continue
	rel=${c#"$SRC"/}
	o="$OBJ/${rel%.c}.o"
	[ -f "$o" ] || die "no object $o for $c (run make)"
	[ "$o" -nt "$c" ] || [ ! "$c" -nt "$o" ] || die "$o is older than $c (run make)"
	unit=${rel%.c}
	nm -P -g --defined-only "$o" | awk -v u="$unit" '$2 ~ /^[TDBRCGSV]$/ { print "D", $1, u }' >>"$TMP/syms" ||
		die "nm failed on $o"
	nm -P -u "$o" | awk -v u="$unit" '{ print "U", $1, u }' >>"$TMP/syms" || die "nm failed on $o"
	nsrc=$((nsrc + 1))
done
[ "$nsrc" -gt 0 ] || die "no .c files under $SRC/*/"

# calls: "FROM TO SYMBOL" with units such as core/strbuf
awk '$1 == "D" { def[$2] = $3; next }
     $1 == "U" { need[++n] = $2 " " $3 }
     END { for (i = 1; i <= n; i++) { split(need[i], p, " ");
		if ((p[1] in def) && def[p[1]] != p[2]) print p[2], def[p[1]], p[1] } }' \
	"$TMP/syms" | sort -u >"$TMP/calls"

# includes: "FROM TO" as paths under SRC (quoted includes only)
for f in "$SRC"/*/*.c "$SRC"/*/*.h; do
	[ -f "$f" ] || continue
	sed -n 's/^#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
		while read -r inc; do echo "${f#"$SRC"/} $inc"; done
done >"$TMP/includes"

status=0

# 1. loops of calls between files
awk '{ print $1, $2 }' "$TMP/calls" | sort -u >"$TMP/call-edges"
if ! tsort "$TMP/call-edges" >/dev/null 2>"$TMP/loop"; then
	echo "a loop of calls between files:"
	sed -n 's/^tsort: //p' "$TMP/loop" | grep -v 'input contains a loop' | sed 's/^/  /'
	# the pairs that call each other straight, with the names each takes
	awk -v src="$SRC" '{ k = $1 " " $2; names[k] = names[k] " " $3 }
		END { for (k in names) { split(k, p, " "); r = p[2] " " p[1]
			if (p[1] < p[2] && (r in names))
				print "  " src "/" p[1] ".c <-> " src "/" p[2] ".c:" names[k] " <->" names[r] } }' \
		"$TMP/calls" | sort
	status=1
fi

# 2. loops of includes between headers
awk '$1 ~ /\.h$/ && $2 ~ /\.h$/' "$TMP/includes" >"$TMP/h-edges"
if ! tsort "$TMP/h-edges" >/dev/null 2>"$TMP/hloop"; then
	echo "a loop of #includes between headers:"
	sed -n 's/^tsort: //p' "$TMP/hloop" | grep -v 'input contains a loop' | sed 's/^/  /'
	status=1
fi

# 3. the layers: calls and includes that cross folders go down
{
	echo "$LAYERS" | awk 'NF == 2 { print "L", $1, $2 }'
	awk '{ print "C", $1, $2, $3 }' "$TMP/calls"
	awk '{ print "I", $1, $2 }' "$TMP/includes"
} | awk -v src="$SRC" '
	function dir(p) { sub(/\/.*/, "", p); return p }
	$1 == "L" { rank[$2] = $3; next }
	{
		a = dir($2); b = dir($3)
		if ($1 == "I" && $3 !~ /\//) { next }   # a system or same-folder header
		if (!(a in rank)) { if (!(a in told)) print src "/" a "/ is on no layer: add it to LAYERS in scripts/check-layers.sh and to docs/design.md"; told[a] = 1; bad = 1; next }
		if (!(b in rank)) { if (!(b in told)) print src "/" b "/ is on no layer: add it to LAYERS in scripts/check-layers.sh and to docs/design.md"; told[b] = 1; bad = 1; next }
		if (a == b || rank[a] > rank[b]) next
		if ($1 == "C")
			print src "/" $2 ".c calls " $4 "() of " src "/" $3 ".c: " a " (layer " rank[a] ") may not use " b " (layer " rank[b] ")"
		else
			print src "/" $2 " includes " $3 ": " a " (layer " rank[a] ") may not use " b " (layer " rank[b] ")"
		bad = 1
	}
	END { exit bad }' || status=1

if [ "$status" -eq 0 ]; then
	echo "layers: ok ($nsrc .c files, $(wc -l <"$TMP/call-edges") file-to-file call edges, $(wc -l <"$TMP/includes") includes; no loops, every folder uses only lower layers)"
fi
exit "$status"
