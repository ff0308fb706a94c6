#!/bin/sh
# asan: yes
test_description='commands over the committed runs: --json for runs, compare and history; one set of run options'
. "$(dirname "$0")/lib/testlib.sh"
GPUORCH_RECORDS_UNCHECKED='its store is made by hand, with step kinds the controller never writes (not-run)'
. "$SRCDIR/tests/lib/runlib.sh"

A=20261122-091229-f53021
B=20261122-090041-7b0011

test_expect_success 'setup: a copy of the committed runs' '
	fixture_runs store && GPUORCH_REPORTS=$TRASH/store && export GPUORCH_REPORTS
'

test_expect_success 'runs --json: one object per run, the same runs as the table' '
	"$GPUORCH" runs --json --limit 1000 >runs.json &&
	"$SRCDIR/scripts/check-json.sh" cli-runs.schema.json runs.json &&
	"$GPUORCH" runs --limit 1000 >runs.txt &&
	test "$(jq_ runs.json . --len)" = $(grep -c "^[0-9]\{8\}-" runs.txt) &&
	test "$(jq_ runs.json 0.run_id)" = "$(sed -n 1p runs.txt | cut -d" " -f1)" &&
	grep "\"headline\":.* us" runs.json &&
	"$GPUORCH" runs --json --limit 1 >one.json && test "$(jq_ one.json . --len)" = 1
'

test_expect_success 'compare --json: the verdicts and counts of the Markdown table' '
	"$GPUORCH" compare $A $B --json >cmp.json &&
	"$SRCDIR/scripts/check-json.sh" cli-compare.schema.json cmp.json &&
	"$GPUORCH" compare $A $B >cmp.md &&
	n=$(jq_ cmp.json rows --len) && test "$n" -ge 2 &&
	test "$(jq_ cmp.json counts.same)" = "$(sed -n "s/.*: \([0-9]*\) same,.*/\1/p" cmp.md)" &&
	: "n is what the program timed, the stored subset beside it (old records keep 2000)" &&
	test "$(jq_ cmp.json rows.0.n_a)" = 2149 && test "$(jq_ cmp.json rows.0.stored_a)" = 2000 &&
	grep "n=2149, 2000 stored" cmp.md &&
	grep "the stored samples are a subset (A 2000 of 2149, B 2000 of 2141" cmp.md &&
	test "$(jq_ cmp.json rule.factor)" = 1.05
'

test_expect_success 'compare tables print microseconds as report.md does (one formatter)' '
	grep "wgmma_tile. M64-N64-K16" store/wgmma-tile/20261122-091249-bdfa93/report.md | grep -F "**5.50 us**" &&
	"$GPUORCH" compare 20261122-091249-bdfa93 20261122-090103-4514dc >w.md &&
	grep "wgmma_tile" w.md | grep "5\.50 us \[" &&
	! grep "5\.500" w.md
'

test_expect_success 'history --json: the points of the table' '
	"$GPUORCH" history demo --json >h.json &&
	"$SRCDIR/scripts/check-json.sh" cli-history.schema.json h.json &&
	"$GPUORCH" history demo >h.md &&
	test "$(jq_ h.json points --len)" = $(grep -c "^| [0-9]" h.md) &&
	test "$(jq_ h.json runs_without_figure --len)" = 0 &&
	test "$(jq_ h.json metric)" = latency_us &&
	test "$(jq_ h.json points.0.nsamples_stored)" = 2000 &&
	test "$(jq_ h.json points.0.nsamples)" -gt 2000 &&
	grep "n=$(jq_ h.json points.0.nsamples), 2000 stored" h.md &&
	grep ">steps: Mann-Whitney p &lt; 0.002<" store/demo/history.svg
'

test_expect_success 'history --json with a run that has no figure (infra_error): the table row and the JSON entry agree' '
	src=$(ls -d store/demo/2026*/ | head -n 1) && id=20261122-000000-0ff1ce &&
	cp -R "$src" store/demo/$id && rm -f store/demo/$id/summary.json &&
	sed -i -e "s/\"run_id\":[[:space:]]*\"[0-9a-f-]*\"/\"run_id\": \"$id\"/" \
	       -e "s/\"outcome\":[[:space:]]*\"passed\"/\"outcome\": \"infra_error\"/" \
	       -e "s/\"kind\":[[:space:]]*\"benchmark\"/\"kind\": \"not-run\"/g" store/demo/$id/run.json &&
	grep "\"outcome\": \"infra_error\"" store/demo/$id/run.json &&
	"$GPUORCH" history demo --json >h2.json &&
	"$SRCDIR/scripts/check-json.sh" cli-history.schema.json h2.json &&
	"$GPUORCH" history demo >h2.md &&
	grep "| $id | - | no figure (infra_error) |" h2.md &&
	test "$(jq_ h2.json runs_without_figure --len)" = 1 &&
	test "$(jq_ h2.json runs_without_figure.0.run_id)" = $id &&
	test "$(jq_ h2.json runs_without_figure.0.outcome)" = infra_error &&
	test $(( $(jq_ h2.json points --len) + 1 )) = $(grep -c "^| [0-9]" h2.md)
'

test_expect_success 'reproduce and find take the run options run takes (--plain too)' '
	test_expect_code 2 "$GPUORCH" reproduce nosuchrun --hosts /dev/null --plain --gpu-wait 5 \
		--reconnect-timeout 5 --accept-new-host-key 2>r.err &&
	grep "nosuchrun" r.err && ! grep "unknown option" r.err &&
	for c in run reproduce find; do
		test_expect_code 2 "$GPUORCH" $c x --hosts /dev/null --gpu-wait soon 2>g.err &&
		grep "gpu-wait: .soon. is not a number of seconds" g.err &&
		"$GPUORCH" $c -h | grep -- "--plain" || return 1
	done
'

test_done
