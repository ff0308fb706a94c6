#!/bin/sh
# cost: 10
# asan: yes
test_description='--json on run and spec check: one document on stdout, valid against its schema, the text output'"'"'s data'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'run --json tests'

check_json() {
	"$SRCDIR/scripts/check-json.sh" "$@"
}

test_expect_success 'setup: two hosts and a project' '
	sshd_start a && sshd_start b &&
	sshd_write_hosts_json hosts.json a b &&
	project_init
'

test_expect_success 'run --json: one JSON document on stdout, the progress on stderr' '
	(cd proj && "$GPUORCH" run experiments/basic.json --hosts ../hosts.json --json) \
		>run.json.out 2>run.err &&
	cat run.json.out &&
	check_json cli-run.schema.json run.json.out &&
	test "$(jq -r .schema run.json.out)" = gpuorch.cli.run/1 &&
	test "$(jq -r .exit_code run.json.out)" = 0 &&
	grep "^run [0-9-]*[0-9a-f]*: passed (0 hosts failed" run.err &&
	grep "^report: " run.err
'

test_expect_success 'run --json: the values of the text and of the record' '
	id=$(sed -n "s/^run \([^:]*\): passed.*/\1/p" run.err) && test -n "$id" &&
	test "$(jq -r .run.run_id run.json.out)" = "$id" &&
	test "$(jq -r .run.outcome run.json.out)" = passed &&
	test "$(jq -r .run.status run.json.out)" = complete &&
	test "$(jq -r ".run.hosts | join(\" \")" run.json.out)" = "a b" &&
	report=$(sed -n "s/^report: //p" run.err) &&
	test "$(jq -r .report run.json.out)" = "$report" && test -f "$report" &&
	dir=$(jq -r .run.dir run.json.out) &&
	test "$(jq -r .exit_code $dir/run.json)" = "$(jq -r .exit_code run.json.out)" &&
	"$GPUORCH" runs --json >runs.out &&
	jq -S ".[] | select(.run_id == \"$id\")" runs.out >from-runs &&
	jq -S .run run.json.out >from-run &&
	test_cmp from-runs from-run
'

test_expect_success 'run --json on a failed run: exit 1, the failure in the document' '
	test_expect_code 1 sh -c "cd proj && \"\$0\" run experiments/gates.json --hosts ../hosts.json \
		--json >../fail.out 2>../fail.err" "$GPUORCH" &&
	check_json cli-run.schema.json fail.out &&
	test "$(jq -r .exit_code fail.out)" = 1 &&
	test "$(jq -r .run.outcome fail.out)" = failed &&
	jq -c .run.counts fail.out && tail -n 1 fail.err &&
	bs=$(jq ".run.counts.builds_failed + .run.counts.steps_failed" fail.out) &&
	gf=$(jq .run.counts.gates_failed fail.out) && test "$gf" -gt 0 &&
	grep "^run $(jq -r .run.run_id fail.out): FAILED (0 hosts failed, $bs build/steps did not pass, $gf gates failed)$" fail.err
'

test_expect_success 'run --json with bad input: exit 2, nothing on stdout, the error on stderr' '
	test_expect_code 2 sh -c "cd proj && \"\$0\" run experiments/nonesuch.json --hosts ../hosts.json \
		--json >../bad.out 2>../bad.err" "$GPUORCH" &&
	test ! -s bad.out && grep "^error: " bad.err &&
	test_expect_code 2 "$GPUORCH" run proj/experiments/basic.json --hosts hosts.json --dry-run \
		--json >dry.out 2>dry.err &&
	test ! -s dry.out && grep "drop --json" dry.err
'

test_expect_success 'spec check --json: the numbers of the text line' '
	(cd proj && "$GPUORCH" spec check experiments/basic.json --hosts ../hosts.json) >sc.txt &&
	(cd proj && "$GPUORCH" spec check experiments/basic.json --hosts ../hosts.json --json) >sc.out &&
	check_json cli-spec-check.schema.json sc.out &&
	cat sc.txt &&
	test "experiments/basic.json: valid: $(jq -r .programs sc.out) programs, $(jq -r .problems sc.out) problem, $(jq -r .steps sc.out) steps; '"'"'sources'"'"' select $(jq -r .files sc.out) files ($(jq -r .archive_bytes sc.out) bytes archive)" = "$(cat sc.txt)" &&
	test "$(jq -r .hosts_checked sc.out)" = true
'

test_expect_success 'spec check --json on a bad spec: exit 2, nothing on stdout' '
	echo "{" >proj/experiments/broken.json &&
	test_expect_code 2 sh -c "cd proj && \"\$0\" spec check experiments/broken.json --json \
		>../scbad.out 2>../scbad.err" "$GPUORCH" &&
	test ! -s scbad.out && grep "^error: " scbad.err
'

test_expect_success 'the schema checker finds a wrong document' '
	jq ".run.outcome = \"maybe\"" run.json.out >wrong.json &&
	test_expect_code 1 check_json cli-run.schema.json wrong.json >wrong.out &&
	grep "run/outcome" wrong.out
'
test_expect_success 'report --json: the report.md it wrote, as the text says' '
	id=$(jq -r .run.run_id run.json.out) &&
	"$GPUORCH" report "$id" >rep.txt &&
	"$GPUORCH" report "$id" --json >rep.out &&
	check_json cli-report.schema.json rep.out &&
	test "$(jq -r .report rep.out)" = "$(cat rep.txt)" &&
	test "$(jq -r .run_id rep.out)" = "$id" && test "$(jq -r .mode rep.out)" = write
'

test_expect_success 'report --check --json: the counts and the stale reports of the text' '
	"$GPUORCH" report --check --json >chk.out &&
	check_json cli-report.schema.json chk.out &&
	test "$(jq -r .checked chk.out)" = 2 && test "$(jq -r .stale chk.out)" = 0 &&
	test "$(jq -r ".problems | length" chk.out)" = 0 &&
	dir=$(jq -r .run.dir run.json.out) &&
	echo "edited by hand" >>"$dir/report.md" &&
	test_expect_code 1 "$GPUORCH" report --check >chk.txt &&
	test_expect_code 1 "$GPUORCH" report --check --json >chk2.out &&
	check_json cli-report.schema.json chk2.out &&
	cat chk.txt &&
	test "$(jq -r .stale chk2.out)" = 1 &&
	jq -r ".problems[] | \"\(.state): \(.file): \(.why)\"" chk2.out >from-json &&
	grep -v "reports checked" chk.txt >from-text &&
	test_cmp from-text from-json &&
	grep "^2 reports checked, 1 stale (renderer $(jq -r .renderer.release chk2.out) $(jq -r .renderer.id chk2.out))$" chk.txt
'

test_expect_success 'report --json with no such run: exit 2, nothing on stdout' '
	test_expect_code 2 "$GPUORCH" report 19990101-000000-000000 --json >none.out 2>none.err &&
	test ! -s none.out && grep "^error: " none.err &&
	test_expect_code 2 "$GPUORCH" report x --stdout --json >none2.out 2>none2.err &&
	test ! -s none2.out && grep "drop --json" none2.err
'

test_done
