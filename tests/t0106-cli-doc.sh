#!/bin/sh
# asan: yes
test_description='one declaration of each command'"'"'s options (orchestrator/cmd/): make install puts gpuorch, gpuorch(1) and the completions under DESTDIR/PREFIX; every option of every usage is in the man page and the completions; bash completes options and values; the README lists what the commands declare'
. "$(dirname "$0")/lib/testlib.sh"

# usage_options CMD: the options CMD's usage lists (its "    --name" lines), one a line
usage_options() {
	"$GPUORCH" "$1" -h | sed -n 's/^    \(--[a-z0-9][a-z0-9-]*\).*/\1/p'
}

# commands: the commands `gpuorch help` lists
commands() {
	"$GPUORCH" help | awk '/^commands:/ { on = 1; next } on && /^   [a-z]/ { print $1 } /^$/ { on = 0 }'
}

# verb CMD: a first argument CMD's options follow ("hosts check"), or nothing
verb() {
	case $1 in
	hosts | spec) echo check ;;
	esac
}

test_expect_success 'make install DESTDIR=... PREFIX=/usr installs the binary, gpuorch(1) and both completions' '
	make -s -C "$SRCDIR" install DESTDIR="$TRASH/inst" PREFIX=/usr >make.out 2>&1 ||
		{ cat make.out; false; } &&
	test -x inst/usr/bin/gpuorch &&
	test -s inst/usr/share/man/man1/gpuorch.1 &&
	test -s inst/usr/share/bash-completion/completions/gpuorch &&
	test -s inst/usr/share/zsh/site-functions/_gpuorch &&
	inst/usr/bin/gpuorch --version >version.out &&
	test_grep "^gpuorch " version.out &&
	commands >cmds && test "$(wc -l <cmds)" -ge 11 && grep -qx run cmds && grep -qx hosts cmds
'

test_expect_success 'every option in every command'"'"'s usage is in that command'"'"'s part of gpuorch(1)' '
	if command -v groff >/dev/null 2>&1; then
		groff -man -Tascii -P-cbou inst/usr/share/man/man1/gpuorch.1 >man.txt 2>man.err &&
		test ! -s man.err
	else
		sed "s/\\\\-/-/g" inst/usr/share/man/man1/gpuorch.1 >man.txt
	fi &&
	n=0 &&
	while read -r c; do
		awk -v h="gpuorch $c" "\$0 ~ /^ *gpuorch [a-z]+\$/ { on = (\$1 \" \" \$2 == h) } on" man.txt >"man-$c" &&
		test -s "man-$c" &&
		usage_options "$c" >"opts-$c" &&
		while read -r o; do
			grep -q -e "^ *$o\\( \\|\$\\)" "man-$c" || { echo "$c: $o not in gpuorch(1)"; return 1; }
			n=$((n + 1))
		done <"opts-$c" || return 1
	done <cmds &&
	echo "$n options found in the man page" && test "$n" -ge 60
'

test_expect_success 'every option of a usage, and only those, is in the bash and zsh completions; the forms name only declared options' '
	comp=inst/usr/share/bash-completion/completions/gpuorch &&
	while read -r c; do
		sed -n "s/^_gpuorch_opts_$c=.\\(.*\\).\$/\\1/p" "$comp" | tr " " "\\n" | sed "s/=.*//" | sort >"bash-$c" &&
		sort "opts-$c" >"sorted-$c" &&
		test_cmp "sorted-$c" "bash-$c" &&
		awk -v v="_gpuorch_opts_$c=(" "\$0 == v { on = 1; next } on && /^\\)/ { on = 0 } on" \
			inst/usr/share/zsh/site-functions/_gpuorch | sed "s/^[[:space:]]*.\\(--[a-z0-9-]*\\).*/\\1/" |
			sort >"zsh-$c" &&
		test_cmp "sorted-$c" "zsh-$c" &&
		"$GPUORCH" "$c" -h | sed -n "/^usage:/,/^\$/p" | grep -o -e "--[a-z0-9][a-z0-9-]*" | sort -u >"forms-$c" &&
		{ ! comm -23 "forms-$c" "sorted-$c" | grep . || { echo "$c: a form names an undeclared option"; false; }; } ||
			return 1
	done <cmds
'

if command -v bash >/dev/null 2>&1; then
	# complete.sh COMPLETION WORDS...: source COMPLETION (what complete -p
	# says of gpuorch then in ./registered), ask it for WORDS (the last one
	# being completed), print what it offers, one a line
	cat >complete.sh <<-\EOF
	. "$1"; shift
	complete -p gpuorch >registered || exit 1
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	_gpuorch
	[ "${#COMPREPLY[@]}" -eq 0 ] || printf "%s\n" "${COMPREPLY[@]}"
	EOF
	test_expect_success 'bash: complete -p names _gpuorch; a command completes its options, a value its kind' '
		comp=$TRASH/inst/usr/share/bash-completion/completions/gpuorch &&
		bash complete.sh "$comp" gpuorch ru >out && sort out >got &&
		printf "%s\n" run runs >want && test_cmp want got &&
		grep -qx "complete -F _gpuorch gpuorch" registered &&
		while read -r c; do
			bash complete.sh "$comp" gpuorch $c $(verb "$c") -- | sort >"got-$c" &&
			{ cat "opts-$c"; echo --help; } | sort >"want-$c" &&
			test_cmp "want-$c" "got-$c" || return 1
		done <cmds &&
		bash complete.sh "$comp" gpuorch hosts "" | sort >verbs &&
		printf "%s\n" check clean disconnect down list status up >want && test_cmp want verbs &&
		bash complete.sh "$comp" gpuorch history EXP --metric "" | sort >metric &&
		printf "%s\n" gbps latency_us tflops >want && test_cmp want metric &&
		mkdir -p repdir && : >repfile &&
		bash complete.sh "$comp" gpuorch runs --reports rep >dirs &&
		printf "%s\n" repdir >want && test_cmp want dirs &&
		bash complete.sh "$comp" gpuorch run --host "" >none &&
		test ! -s none
	'
else
	test_skip 'bash: complete -p names _gpuorch; a command completes its options, a value its kind' 'bash is not installed'
fi

if command -v zsh >/dev/null 2>&1; then
	test_expect_success 'zsh: the completion function parses' '
		zsh -n inst/usr/share/zsh/site-functions/_gpuorch &&
		head -n 1 inst/usr/share/zsh/site-functions/_gpuorch >first &&
		echo "#compdef gpuorch" >want && test_cmp want first
	'
else
	test_skip 'zsh: the completion function parses' 'zsh is not installed (scripts/deps.sh --tests installs it)'
fi

test_expect_success 'README.md lists the commands as they are declared (make readme writes it)' '
	"$SRCDIR/scripts/readme-commands.sh" --check "$GPUORCH" "$SRCDIR/README.md" &&
	sed "s/^<!-- commands: begin.*/&\\n- **bogus**: not a command/" "$SRCDIR/README.md" >README.md &&
	test_expect_code 1 "$SRCDIR/scripts/readme-commands.sh" --check "$GPUORCH" README.md 2>stale.err &&
	test_grep "make readme" stale.err &&
	"$SRCDIR/scripts/readme-commands.sh" "$GPUORCH" README.md &&
	cmp README.md "$SRCDIR/README.md"
'

test_expect_success 'make uninstall removes what make install put there' '
	make -s -C "$SRCDIR" uninstall DESTDIR="$TRASH/inst" PREFIX=/usr &&
	test ! -e inst/usr/bin/gpuorch &&
	test ! -e inst/usr/share/man/man1/gpuorch.1 &&
	test ! -e inst/usr/share/bash-completion/completions/gpuorch &&
	test ! -e inst/usr/share/zsh/site-functions/_gpuorch
'

test_done
