#!/bin/sh
test_description='every shell script of the repository passes shellcheck at severity warning, and none hides in C strings (scripts/check-shell.sh)'
. "$(dirname "$0")/lib/testlib.sh"

CHECK="$SRCDIR/scripts/check-shell.sh"
if ! command -v shellcheck >/dev/null 2>&1; then
	test_skip 'shellcheck of the shell scripts' 'shellcheck is not installed (scripts/deps.sh --tests installs it)'
	test_done
fi

test_expect_success 'every tracked shell script (the runner, scripts, tests, .ci/run) passes' '
	if git -C "$SRCDIR" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		"$CHECK" >out 2>&1; rc=$?; cat out &&
		test "$rc" = 0 && test_grep "^shell: ok (" out &&
		git -C "$SRCDIR" ls-files | grep -x -e orchestrator/remote/runner.sh -e .ci/run >listed &&
		test "$(wc -l <listed)" = 2
	else
		"$CHECK" "$SRCDIR"/orchestrator/*/*.sh "$SRCDIR"/scripts/*.sh "$SRCDIR"/tests/*.sh "$SRCDIR"/tests/lib/*.sh \
			"$SRCDIR"/orchestrator/*/*.c >out 2>&1 ||
			{ cat out; false; }
	fi
'

test_expect_success 'a script with a warning fails, naming the file, the line and the check' '
	printf "%s\n" "#!/bin/sh" "cd /nowhere" "echo \$UNSET_HERE_X" >bad.sh &&
	test_expect_code 1 "$CHECK" "$TRASH/bad.sh" >bad.out &&
	test_grep "bad.sh:2:1: warning: .*\[SC2164\]" bad.out &&
	test_grep "^shell: 1 problems in 1 files$" bad.out &&
	printf "%s\n" "#!/bin/sh" "cd /nowhere || exit 1" >good.sh &&
	"$CHECK" "$TRASH/good.sh" >good.out && test_grep "^shell: ok (1 files)$" good.out &&
	test_expect_code 2 "$CHECK" "$TRASH/nosuch.sh" 2>e && test_grep "no such file" e
'

test_expect_success 'a shell script in C strings is a problem, named with its file and line' '
	cat >bad.c <<-\EOF &&
	/* a host script pasted back into C, where shellcheck cannot read it */
	static const char s[] =
		"for f in *.o; do\n"
		"  if [ -f \"$f\" ]; then\n"
		/* a comment between its lines does not hide it */
		"    rm -f \"$f\" 2>/dev/null\n"
		"  fi\n"
		"done\n"
		"x=$(cat list | wc -l)\n"
		"[ \"$x\" -gt 0 ] || exit 1\n"
		"echo done\n";
	EOF
	test_expect_code 1 "$CHECK" "$TRASH/bad.c" >c.out &&
	cat c.out &&
	test_grep "bad.c:3:1: error: a shell script in C strings (8 lines in s, 7 of them shell syntax)" c.out &&
	test_grep "^shell: 1 problems in 1 files$" c.out &&
	: "one that ALLOWED_IN_C names (in a copy of the check) is let be" &&
	mkdir -p copy/scripts &&
	sed "/^ALLOWED_IN_C=/a\\
$TRASH/bad.c s" "$CHECK" >copy/scripts/check-shell.sh &&
	sh copy/scripts/check-shell.sh "$TRASH/bad.c" >allowed.out &&
	test_grep "^shell: ok (0 files; no shell script in the C strings of 1 .c files)$" allowed.out &&
	: "seven lines are no script: a short command stays in C" &&
	sed "/echo done/d" bad.c >short.c &&
	"$CHECK" "$TRASH/short.c" >short.out &&
	test_grep "^shell: ok (0 files; no shell script in the C strings of 1 .c files)$" short.out
'

test_expect_success 'the usage texts of the commands (English, in C strings) are no shell script' '
	"$CHECK" "$SRCDIR"/orchestrator/cmd/*.c >u.out &&
	n=$(ls "$SRCDIR"/orchestrator/cmd/*.c | wc -l) &&
	test_grep "^shell: ok (0 files; no shell script in the C strings of $n .c files)$" u.out
'

test_done
