#!/bin/sh
# cost: 10
# asan: yes
test_description='--trace FILE and GPUORCH_TRACE: a timed event trace per host, in order (docs/trace.md)'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'run trace tests'

# spans HOST FILE: the names of HOST's spans, in the order they began, one line
spans() {
	jq -rs --arg h "$1" '[.[] | select(.ph == "X" and .args.host == $h)] | sort_by(.ts) |
		map(.name) | join(" ")' "$2"
}

# in_order HOST FILE: each of HOST's spans begins after the one before it ended
in_order() {
	jq -es --arg h "$1" '[.[] | select(.ph == "X" and .args.host == $h)] | sort_by(.ts) |
		. as $s | [range(1; length) | $s[.].ts >= $s[. - 1].ts + $s[. - 1].dur] | all' \
		"$2" >/dev/null
}

test_expect_success 'setup: two hosts and a project' '
	sshd_start a && sshd_start b &&
	sshd_write_hosts_json hosts.json a b &&
	project_init
'

test_expect_success 'a run over two hosts with --trace traces both, each in order' '
	(cd proj && "$GPUORCH" run experiments/basic.json --hosts ../hosts.json \
		--trace ../trace.jsonl) >run.out 2>run.err &&
	run=$(last_run_dir) && test -n "$run" &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	for h in a b; do
		echo "host $h: $(spans $h trace.jsonl)" &&
		test "$(spans $h trace.jsonl)" = "connect exec disconnect" &&
		in_order $h trace.jsonl || return 1
	done &&
	test $(jq -s "[.[] | select(.name == \"thread_name\")] | length" trace.jsonl) = 2 &&
	jq -r "select(.name == \"exec\") | .args.what" trace.jsonl >what &&
	printf "start and follow\nstart and follow\n" >what.expect &&
	test_cmp what.expect what
'

test_expect_success 'every line is a Chrome trace event; the connects match the record' '
	jq -es "all(.[]; (.name | type) == \"string\" and (.ph | test(\"^[XiM]$\")) and
		(.pid | type) == \"number\" and (.tid | type) == \"number\")" trace.jsonl &&
	jq -es "all(.[] | select(.ph == \"X\"); .dur >= 0 and .ts >= 0)" trace.jsonl &&
	run=$(last_run_dir) &&
	for i in 0 1; do
		h=$(jq_ $run/run.json hosts.$i.name) &&
		rec=$(jq -r ".hosts[$i].phases[] | select(.name == \"connect\") | .status" $run/run.json) &&
		tr=$(jq -rs --arg h "$h" ".[] | select(.name == \"connect\" and .args.host == \$h) |
			.args.status" trace.jsonl) &&
		echo "host $h: record connect $rec, trace connect $tr" &&
		test "$rec" = PASS && test "$tr" = ok || return 1
	done
'

test_expect_success 'GPUORCH_TRACE: hosts check traces each command with its exit code' '
	GPUORCH_TRACE=$TRASH/check.jsonl "$GPUORCH" hosts check --hosts hosts.json --json >check.json &&
	for h in a b; do
		echo "host $h: $(spans $h check.jsonl)" &&
		spans $h check.jsonl | grep "^connect exec.* disconnect$" &&
		in_order $h check.jsonl || return 1
	done &&
	test "$(jq_ check.json 0.status)" = ok && test "$(jq_ check.json 1.status)" = ok &&
	jq -s "[.[] | select(.name == \"exec\") | .args.exit]" check.jsonl >exits &&
	cat exits && jq -e "length >= 2 and all(. == 0)" exits &&
	for h in a b; do
		jq -rs --arg h $h "[.[] | select(.name == \"exec\" and .args.host == \$h) | .args.what] |
			join(\",\")" check.jsonl >what.$h &&
		cat what.$h && grep "^probe" what.$h || return 1
	done
'

test_expect_success 'a failed connect is traced with its reason; --trace overrides GPUORCH_TRACE' '
	sshd_stop b &&
	test_expect_code 3 env GPUORCH_TRACE=$TRASH/not.jsonl "$GPUORCH" hosts check \
		--hosts hosts.json --host b --trace fail.jsonl >/dev/null &&
	test ! -s not.jsonl &&
	test "$(spans b fail.jsonl)" = connect &&
	jq -rs ".[] | select(.name == \"connect\") | .args.status" fail.jsonl | grep "connection refused"
'

test_expect_success 'a trace file that cannot be written is a usage error' '
	test_expect_code 2 "$GPUORCH" hosts check --hosts hosts.json --trace nodir/t.jsonl 2>err &&
	grep "error: --trace: cannot write .nodir/t.jsonl.: No such file or directory" err &&
	test_expect_code 2 env GPUORCH_TRACE=nodir/t.jsonl "$GPUORCH" hosts check \
		--hosts hosts.json 2>err2 &&
	grep "error: GPUORCH_TRACE: --trace: cannot write" err2
'

test_expect_success 'without --trace nothing is written' '
	rm -f trace.jsonl && "$GPUORCH" hosts check --hosts hosts.json --host a >/dev/null &&
	test ! -e trace.jsonl
'
test_done
