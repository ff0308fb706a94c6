#!/bin/sh
# cost: 18
# asan: yes
test_description='gpuorch run end to end on three real loopback sshd hosts'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'run tests'

test_expect_success 'setup: three hosts and a project' '
	sshd_start a && sshd_start b && sshd_start c &&
	sshd_write_hosts_json hosts.json a b c &&
	project_init
'

test_expect_success 'every command answers -h' '
	for c in run hosts runs report; do
		"$GPUORCH" $c -h >help.out && grep "^usage: gpuorch $c" help.out || return 1
	done
'

test_expect_success 'hosts check finds nvcc off the SSH PATH and no GPU' '
	"$GPUORCH" hosts check --hosts hosts.json --json >check.json &&
	"$SRCDIR/scripts/check-json.sh" cli-hosts-check.schema.json check.json &&
	echo "host a: status $(jq_ check.json 0.status), nvcc $(jq_ check.json 0.nvcc.path)," \
		"has_gpu $(jq_ check.json 0.has_gpu); expected nvcc $(nvcc_path)" &&
	test "$(jq_ check.json 0.status)" = ok &&
	test "$(jq_ check.json 2.status)" = ok &&
	test "$(jq_ check.json 0.nvcc.path)" = "$(nvcc_path)" &&
	test "$(jq_ check.json 0.has_gpu)" = false
'

test_expect_success '--dry-run prints the plan and sends nothing' '
	(cd proj && "$GPUORCH" run experiments/basic.json --hosts ../hosts.json --dry-run) >plan.out &&
	grep "content id" plan.out &&
	grep "cpu/cputimer.c" plan.out &&
	grep -- "-gencode=arch=compute_90a,code=sm_90a" plan.out &&
	grep "step benchmark.cputimer.small" plan.out &&
	test ! -e "$SSHD_a_WORKDIR/content" &&
	test ! -d reports
'

test_expect_success 'a run across three hosts in parallel passes' '
	(cd proj && "$GPUORCH" run experiments/basic.json --hosts ../hosts.json) >run1.out 2>run1.err &&
	run=$(last_run_dir) && test -n "$run" &&
	test "$(jq_ $run/run.json status)" = complete &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	test "$(jq_ $run/run.json hosts --len)" = 3 &&
	for i in 0 1 2; do
		test "$(jq_ $run/run.json hosts.$i.status)" = ok || return 1
	done &&
	test -f $run/report.md && grep "report: $run/report.md" run1.out
'

test_expect_success 'the report opens with a compact table: a line per host and kernel benchmark, the words below it' '
	run=$(last_run_dir) &&
	sed -n "/^## At a glance/,/^## /p" $run/report.md >glance.md && cat glance.md &&
	grep "^| host | kernel | problem | median | TFLOPS or figure | vs baseline (speedup) | of reference speed | correct |$" glance.md &&
	test $(grep -c "^| [^-h|].* | .cputimer. | small | \*\*[0-9.]* us\*\* | — | — | — | ✅ |$" glance.md) = 3 &&
	test $(grep -c "^| .* | .scale. | small | .*SKIPPED | — | — | — | not checked |$" glance.md) = 3 &&
	test $(grep -c "^- \*\*.*\*\* .cputimer. small: " glance.md) = 3 &&
	first_row=$(grep -n "^| .* | .cputimer. |" glance.md | head -n 1 | cut -d: -f1) &&
	first_words=$(grep -n "^- \*\*" glance.md | head -n 1 | cut -d: -f1) &&
	test "$first_row" -lt "$first_words"
'

test_expect_success 'the record holds builds with ptxas resources and honest skips' '
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.archs --len)" = 2 &&
	jq_ $run/run.json hosts.0.builds >builds.json &&
	grep "\"program\":\"scale\"" builds.json &&
	grep "\"registers\":" builds.json &&
	grep "scale_kernel" builds.json &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.steps.1.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.steps.2.status)" = SKIPPED &&
	jq_ $run/run.json hosts.0.steps.2.reason | grep "no CUDA device" &&
	jq_ $run/run.json hosts.1.steps.1.result.timing.median_us >med &&
	from=$(jq_ $run/run.json hosts.0.steps.1.ran_from_unix_s) &&
	to=$(jq_ $run/run.json hosts.0.steps.1.ran_to_unix_s) &&
	awk -v a="$from" -v b="$to" "BEGIN { exit !(a > 1.7e9 && b >= a) }" &&
	test -s med &&
	test "$(jq_ $run/run.json hosts.0.ship.reused)" = false &&
	test "$(jq_ $run/run.json provenance.git.dirty)" = false &&
	test "$(jq_ $run/run.json provenance.files --len)" = 2 &&
	ls $run/logs/a/ | grep build-scale-sm_90a.log
'

test_expect_success 'a re-run of unchanged sources ships 0 bytes and reuses the builds' '
	cid1=$(jq_ $(last_run_dir)/run.json provenance.content_id) &&
	sleep 1 &&
	(cd proj && "$GPUORCH" run experiments/basic.json --hosts ../hosts.json) >run2.out 2>&1 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json provenance.content_id)" = "$cid1" &&
	for i in 0 1 2; do
		test "$(jq_ $run/run.json hosts.$i.ship.bytes_sent)" = 0 &&
		test "$(jq_ $run/run.json hosts.$i.ship.reused)" = true &&
		test "$(jq_ $run/run.json hosts.$i.builds.0.reused)" = true || return 1
	done &&
	grep "0 bytes sent" run2.out
'

test_expect_success 'runs lists both runs, report rewrites the report' '
	"$GPUORCH" runs >runs.out &&
	test $(grep -c "^2[0-9]*-[0-9]*-[0-9a-f]*  basic" runs.out) = 2 &&
	id=$(basename $(last_run_dir)) &&
	rm $(last_run_dir)/report.md &&
	"$GPUORCH" report $id >rep.out &&
	test -f $(last_run_dir)/report.md
'

test_expect_success 'a malformed spec exits 2 with the JSON path, before connecting' '
	sed "s/\"program\": \"scale\"/\"program\": \"nosuch\"/" proj/experiments/basic.json >proj/experiments/bad.json &&
	sshd_forget_workdir c &&
	(cd proj && test_expect_code 2 "$GPUORCH" run experiments/bad.json --hosts ../hosts.json) 2>bad.err &&
	grep "steps\[2\].program" bad.err &&
	test -z "$(ls "$SSHD_c_WORKDIR")"
'

test_expect_success 'an unknown --host is an error naming the known ones' '
	(cd proj && test_expect_code 2 "$GPUORCH" run experiments/basic.json --hosts ../hosts.json --host zz) 2>host.err &&
	grep "zz" host.err
'

test_done
