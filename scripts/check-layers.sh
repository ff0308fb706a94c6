#!/bin/sh
# check-layers.sh -- orchestrator/'s structure, checked from the code itself:
#   1. no loop of calls between .c files (A calls B calls ... calls A), read
#      from the objects' symbols (what each defines, what each needs);
#   2. no loop of #includes between headers;
#   3. every call and every #include that crosses folders goes DOWN the
#      layers below (docs/design.md draws them): a folder uses only folders
#      of a lower layer, never one of its own layer or above;
#   4. the run record (run.json) has one writer, store/runwrite.h: no file
#      outside store/ calls record_lock, record_unlock or record_host_append,
#      nor hands the record's tree (a host's hj, a root, hosts_arr) to a
#      cJSON call that adds, replaces, deletes, detaches or inserts items.
#
#   scripts/check-layers.sh [SRC [OBJDIR]]
#
# SRC is orchestrator (default), OBJDIR build/obj (default; run `make` first).
# Prints one line per problem and exits 1; prints one "layers: ok" line and
# exits 0 when there is none. Needs nm (binutils) and awk.
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
sched 2
cloud 2
report 2
run 3
cmd 4
'

# folders of programs of their own, not linked into gpuorch and on no layer:
# host/ is gpuorch-agent (docs/runner.md), built on the hosts with only libc
OWN_PROGRAMS=' host '

# own_program FOLDER: FOLDER is one of OWN_PROGRAMS
own_program() {
	case $OWN_PROGRAMS in *" $1 "*) return 0 ;; esac
	return 1
}

die() {
	echo "check-layers: $*" >&2
	exit 2
}

[ -d "$SRC" ] || die "no source folder $SRC (run from the repository root)"
command -v nm >/dev/null 2>&1 || die "nm not found (install binutils)"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/check-layers.XXXXXX") || die "cannot make a temporary folder"
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP

# Every .c of SRC needs its object: a stale or missing one would hide calls.
nsrc=0
for c in "$SRC"/*/*.c; do
	[ -f "$c" ] || continue
	rel=${c#"$SRC"/}
	! own_program "${rel%%/*}" || continue
	o="$OBJ/${rel%.c}.o"
	[ -f "$o" ] || die "no object $o for $c (run make)"
	# shellcheck disable=SC3013 # -nt: dash, bash and busybox sh all have it
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
	rel=${f#"$SRC"/}
	! own_program "${rel%%/*}" || continue
	sed -n 's/^#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
		while read -r inc; do echo "${f#"$SRC"/} $inc"; done
done >"$TMP/includes"

# loops FILE: the loops (strongly connected sets of two or more) of the
# graph whose edges are the lines "FROM TO" of FILE, one per line, members
# sorted; prints nothing when there is none (Tarjan's algorithm).
loops() {
	awk '
	function visit(v,    i, w, m, line) {
		idx[v] = lowl[v] = ++counter; stack[++sp] = v; on[v] = 1
		for (i = 1; i <= nout[v]; i++) {
			w = out[v, i]
			if (!(w in idx)) { visit(w); if (lowl[w] < lowl[v]) lowl[v] = lowl[w] }
			else if (on[w] && idx[w] < lowl[v]) lowl[v] = idx[w]
		}
		if (lowl[v] == idx[v]) {
			m = 0; line = ""
			do { w = stack[sp--]; on[w] = 0; mem[++m] = w } while (w != v)
			if (m > 1) { isort(mem, m); for (i = 1; i <= m; i++) line = line (i > 1 ? ", " : "") mem[i]; print line }
		}
	}
	function isort(a, n,    i, j, t) {
		for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	}
	$1 != $2 { out[$1, ++nout[$1]] = $2; node[$1] = 1; node[$2] = 1 }
	END { for (v in node) if (!(v in idx)) visit(v) }' "$1" | sort
}

status=0

# 1. loops of calls between files
awk '{ print $1, $2 }' "$TMP/calls" | sort -u >"$TMP/call-edges"
loops "$TMP/call-edges" >"$TMP/loop"
if [ -s "$TMP/loop" ]; then
	echo "a loop of calls between files (each line: files that reach each other through calls):"
	awk -v src="$SRC" '{ n = split($0, m, ", "); line = ""
		for (i = 1; i <= n; i++) line = line (i > 1 ? ", " : "") src "/" m[i] ".c"
		print "  " line }' "$TMP/loop"
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
loops "$TMP/h-edges" >"$TMP/hloop"
if [ -s "$TMP/hloop" ]; then
	echo "a loop of #includes between headers:"
	awk -v src="$SRC" '{ n = split($0, m, ", "); line = ""
		for (i = 1; i <= n; i++) line = line (i > 1 ? ", " : "") src "/" m[i]
		print "  " line }' "$TMP/hloop"
	status=1
fi

# 3. the layers: every folder is on one, and calls and includes that cross
# folders go down
for d in "$SRC"/*/; do
	d=${d%/}; d=${d##*/}
	! own_program "$d" || continue
	echo "$LAYERS" | awk -v d="$d" '$1 == d { found = 1 } END { exit !found }' || {
		echo "$SRC/$d/ is on no layer: add it to LAYERS in scripts/check-layers.sh and to docs/design.md"
		status=1
	}
done
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
		if (!(a in rank) || !(b in rank)) next   # said above
		if (a == b || rank[a] > rank[b]) next
		if ($1 == "C")
			print src "/" $2 ".c calls " $4 "() of " src "/" $3 ".c: " a " (layer " rank[a] ") may not use " b " (layer " rank[b] ")"
		else
			print src "/" $2 " includes " $3 ": " a " (layer " rank[a] ") may not use " b " (layer " rank[b] ")"
		bad = 1
	}
	END { exit bad }' || status=1

# 4. one writer of the run record: its lock and its tree stay in store/
awk -v src="$SRC" '$1 == "U" && ($2 == "record_lock" || $2 == "record_unlock" ||
		$2 == "record_host_append") && $3 !~ /^store\// {
		print src "/" $3 ".c calls " $2 "(): only store/ writes the run record (use store/runwrite.h)"
		bad = 1 }
	END { exit bad }' "$TMP/syms" || status=1
for f in "$SRC"/*/*.c; do
	[ -f "$f" ] || continue
	rel=${f#"$SRC"/}
	d=${rel%%/*}
	! own_program "$d" || continue
	[ "$d" != store ] || continue
	grep -nE '(cJSON_(Add|Replace|Delete|Detach|Insert|Set)[A-Za-z]*|json_add_[a-z]+|json_array_insert)[[:space:]]*\([^,;]*(->hj|->root|\.root|hosts_arr)([^A-Za-z0-9_]|$)' "$f" |
		awk -v f="$f" -F: '{ line = $1; sub(/^[0-9]+:[[:space:]]*/, ""); print f ":" line ": changes the run record outside store/ (use store/runwrite.h): " $0 }'
done >"$TMP/writers"
if [ -s "$TMP/writers" ]; then
	cat "$TMP/writers"
	status=1
fi

if [ "$status" -eq 0 ]; then
	echo "layers: ok ($nsrc .c files, $(wc -l <"$TMP/call-edges") file-to-file call edges, $(wc -l <"$TMP/includes") includes; no loops, every folder uses only lower layers, the run record written in store/ only)"
fi
exit "$status"
