#!/bin/sh
test_description='no new long or tangled function in orchestrator/ (scripts/check-functions.sh, pmccabe): limits at their edge, the list as a ratchet'
. "$(dirname "$0")/lib/testlib.sh"

CHECK="$SRCDIR/scripts/check-functions.sh"
if ! command -v pmccabe >/dev/null 2>&1; then
	test_skip 'function length and complexity checks' 'pmccabe is not installed (scripts/deps.sh --tests installs it)'
	test_done
fi

# cfn FILE NAME N STATEMENT: a C function of N lines, each STATEMENT with
# its line number for %d (pmccabe: "x = x * 3 + %d;" adds nothing to the
# complexity, "if (x == %d) x++;" one)
cfn() {
	{
		echo "int $2(int x)"
		echo "{"
		awk -v n="$3" -v st="$4" "BEGIN { for (i = 0; i < n; i++) printf \"\\t\" st \"\\n\", i }"
		echo "	return x;"
		echo "}"
	} >>"$1"
}
longfn() { cfn "$1" "$2" "$3" "x = x * 3 + %d;"; }
branchy() { cfn "$1" "$2" "$3" "if (x == %d) x++;"; }

# lines_of FILE NAME, complexity_of FILE NAME: as pmccabe counts them
lines_of() { pmccabe "$1" | awk -F'\t' -v n="$2" '$6 ~ (": " n "$") { print $5 }'; }
complexity_of() { pmccabe "$1" | awk -F'\t' -v n="$2" '$6 ~ (": " n "$") { print $1 }'; }

test_expect_success 'the tree passes with its list; every listed function exists and is over a limit' '
	(cd "$SRCDIR" && "$CHECK") >out 2>&1; rc=$?; cat out &&
	test "$rc" = 0 &&
	test_grep "^functions: ok (" out &&
	! grep "can be dropped" out &&
	grep -v "^#" "$SRCDIR/scripts/long-functions.txt" | while read -r f fn l c; do
		test -f "$SRCDIR/$f" || { echo "listed file $f is gone"; return 1; }
		{ test "$l" -gt 100 || test "$c" -gt 30; } || { echo "$f $fn is within the limits"; return 1; }
	done
'

test_expect_success 'a function exactly at the line limit passes; one line more fails, naming it, its file and line' '
	mkdir -p src && : >src/a.c && longfn src/a.c f 60 &&
	n=$(lines_of src/a.c f) && test "$n" -gt 60 &&
	: >empty.txt &&
	"$CHECK" --list empty.txt --lines "$n" src >at.out &&
	test_grep "^functions: ok (1 functions, 0 listed over $n lines" at.out &&
	test_expect_code 1 "$CHECK" --list empty.txt --lines $((n - 1)) src >over.out &&
	test_grep "^src/a.c(1): f is $n lines, complexity 1 (limits $((n - 1)) and 30): split it" over.out &&
	test_grep "^functions: 1 problem$" over.out
'

test_expect_success 'complexity exactly at the limit passes; one branch more fails' '
	mkdir -p cx && : >cx/b.c && branchy cx/b.c g 30 &&
	test "$(complexity_of cx/b.c g)" = 31 &&
	: >empty.txt &&
	"$CHECK" --list empty.txt --complexity 31 cx >c1.out &&
	test_expect_code 1 "$CHECK" --list empty.txt --complexity 30 cx >c2.out &&
	test_grep "^cx/b.c(1): g is .* lines, complexity 31 (limits 100 and 30)" c2.out
'

test_expect_success 'a listed function may stay as long as listed; grown by one line it fails; shorter: a note to lower the list' '
	mkdir -p rt && : >rt/c.c && longfn rt/c.c h 120 &&
	n=$(lines_of rt/c.c h) && c=$(complexity_of rt/c.c h) &&
	echo "rt/c.c h $n $c" >list.txt &&
	"$CHECK" --list list.txt rt >same.out &&
	test_grep "^functions: ok (1 functions, 1 listed" same.out &&
	echo "rt/c.c h $((n - 1)) $c" >list.txt &&
	test_expect_code 1 "$CHECK" --list list.txt rt >grew.out &&
	test_grep "^rt/c.c(1): h grew to $n lines, complexity $c (listed at $((n - 1)) and $c in list.txt): split it" grew.out &&
	echo "rt/c.c h $((n + 5)) $c" >list.txt &&
	"$CHECK" --list list.txt rt >shorter.out &&
	test_grep "^note: rt/c.c(1): h is now $n lines, complexity $c: lower its line in list.txt to that" shorter.out
'

test_expect_success 'a listed function that is gone or within the limits: a note, not an error; a bad list line is an error' '
	mkdir -p gone && : >gone/d.c && longfn gone/d.c small 3 &&
	printf "%s\n" "# comment" "gone/d.c small 200 40" "gone/d.c vanished 150 10" >list.txt &&
	"$CHECK" --list list.txt gone >notes.out &&
	test_grep "^note: gone/d.c small is within the limits now: it can be dropped from list.txt" notes.out &&
	test_grep "^note: gone/d.c vanished is gone: it can be dropped from list.txt" notes.out &&
	echo "gone/d.c small lots 40" >bad.txt &&
	test_expect_code 1 "$CHECK" --list bad.txt gone >bad.out &&
	test_grep "^bad.txt: a line is not \"FILE FUNCTION LINES COMPLEXITY\": gone/d.c small lots 40" bad.out
'

test_expect_success 'bad use: no list, no such folder, a limit that is not a number (exit 2, the fix said)' '
	test_expect_code 2 "$CHECK" --list nosuch.txt src 2>e1 && test_grep "no list .nosuch.txt. (--write prints one)" e1 &&
	test_expect_code 2 "$CHECK" --list empty.txt nosuchdir 2>e2 && test_grep "no such file or folder .nosuchdir." e2 &&
	test_expect_code 2 "$CHECK" --lines ten src 2>e3 && test_grep "a limit is a whole number, not .ten." e3
'

test_expect_success '--write prints the list the tree needs, and the tree passes with it' '
	(cd "$SRCDIR" && "$CHECK" --write) >written.txt &&
	test_grep "^# FILE FUNCTION LINES COMPLEXITY" written.txt &&
	grep -v "^#" written.txt | grep -q . &&
	(cd "$SRCDIR" && "$CHECK" --list "$TRASH/written.txt") >w.out &&
	test_grep "^functions: ok" w.out
'

test_done
