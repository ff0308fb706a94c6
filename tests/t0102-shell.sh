#!/bin/sh
test_description='every shell script of the repository passes shellcheck at severity warning (scripts/check-shell.sh)'
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
		"$CHECK" "$SRCDIR"/orchestrator/remote/runner.sh "$SRCDIR"/scripts/*.sh "$SRCDIR"/tests/*.sh "$SRCDIR"/tests/lib/*.sh >out 2>&1 ||
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

test_done
