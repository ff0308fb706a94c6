#!/bin/sh
test_description='tests/mutations.txt stays true to the code: every planted bug still applies (tests/mutate.sh -c)'
. "$(dirname "$0")/lib/testlib.sh"

MUTATE="$SRCDIR/tests/mutate.sh"

test_expect_success 'every mutation of tests/mutations.txt applies to this tree (each find once, each replace a change)' '
	{ "$MUTATE" -c >out 2>&1; rc=$?; cat out; } &&
	test "$rc" -eq 0 &&
	n=$(grep -c "^mutation " "$SRCDIR/tests/mutations.txt") &&
	test_grep "^$n of $n mutations apply, 0 do not" out
'

test_expect_success 'a mutation whose find no longer occurs is named, and the check fails' '
	cp "$SRCDIR/tests/mutations.txt" list &&
	cat >>list <<-\EOF2 &&

	mutation stale-one
	why a find text the code no longer has
	file orchestrator/core/strbuf.c
	find this text is not in strbuf.c
	replace anything
	tests unit
	EOF2
	test_expect_code 1 "$MUTATE" -c -f list >out2 2>&1 &&
	cat out2 &&
	test_grep "^NOT-APPLIED *stale-one .*occurs 0 times in orchestrator/core/strbuf.c" out2 &&
	test_grep " mutations apply, 1 do not" out2
'

test_expect_success 'a find that occurs twice, and a replace that changes nothing, are refused too' '
	cat >list3 <<-\EOF2 &&
	mutation twice
	file orchestrator/core/strbuf.c
	find strbuf
	replace strbuf_x
	tests unit

	mutation no-change
	file orchestrator/core/strbuf.c
	find #include "core/strbuf.h"
	replace #include "core/strbuf.h"
	tests unit
	EOF2
	test_expect_code 1 "$MUTATE" -c -f list3 >out3 2>&1 &&
	cat out3 &&
	test_grep "^NOT-APPLIED *twice .*occurs [0-9][0-9]* times" out3 &&
	test_grep "^NOT-APPLIED *no-change .*did not change" out3 &&
	test_grep "^0 of 2 mutations apply, 2 do not" out3
'

test_done
