#!/bin/sh
# asan: yes
test_description='issue 30: spec check refuses metrics no step records; runs names GPUs and failures; report --check finds stale reports'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/runlib.sh"

H200=20261127-023843-977378     # attention-wgmma on host h100, an H200
TOOLS=20261122-080919-e482d1    # attention-tools: 2 of 6 gates failed, 4 builds, 8 skipped

test_expect_success 'setup: a project, and a copy of the committed runs' '
	project_init &&
	fixture_runs store && GPUORCH_REPORTS=$TRASH/store && export GPUORCH_REPORTS
'

# a spec with a program off the harness declaring gflops and ms; GATE and
# EXPECT are the metrics of its gate and its expectation
byo_spec() {
	cat >proj/experiments/figs.json <<JSON
{"schema": 1, "name": "figs", "phase": "t", "sources": ["cpu/cputimer.c"],
 "programs": {"bench": {"run": ["./bench"], "figures": {
   "gflops": {"regex": "GFLOPS: ([0-9.]+)", "better": "higher"},
   "ms": {"regex": "ms: ([0-9.]+)", "unit": "ms"}}},
  "cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
 "problems": [{"name": "small", "params": {"work": 1}}],
 "steps": [{"kind": "benchmark", "program": "bench"}, {"kind": "benchmark", "program": "cputimer"}],
 "gates": [{"program": "bench", "metric": "$1", "op": ">", "value": 1}],
 "expected": [{"program": "cputimer", "metric": "$2", "op": "<", "value": 1}]}
JSON
}

test_expect_success 'spec check: a gate on a typo of a declared figure is exit 2, naming the figure' '
	byo_spec gflpos latency_us &&
	test_expect_code 2 "$GPUORCH" spec check proj/experiments/figs.json --root proj 2>e1 &&
	cat e1 &&
	grep "figs.json: .gates\[0\].metric.: unknown metric .gflpos. for program .bench. (did you mean .gflops.?)" e1
'

test_expect_success 'spec check: an expectation on a typo of the vocabulary is exit 2, naming the name' '
	byo_spec gflops latncy_us &&
	test_expect_code 2 "$GPUORCH" spec check proj/experiments/figs.json --root proj 2>e2 &&
	cat e2 &&
	grep "figs.json: .expected\[0\].metric.: unknown metric .latncy_us. for program .cputimer. (did you mean .latency_us.?)" e2 &&
	test_expect_code 2 "$GPUORCH" run proj/experiments/figs.json --root proj --hosts none.json 2>e3 &&
	grep "unknown metric .latncy_us." e3
'

test_expect_success 'spec check: the names the programs record pass' '
	byo_spec gflops timing.p90_us &&
	"$GPUORCH" spec check proj/experiments/figs.json --root proj >ok.out &&
	grep "valid: 2 programs" ok.out
'

test_expect_success 'runs: every host with its GPU; an H200 on host h100 is not "h100" alone' '
	"$GPUORCH" runs --limit 1000 >runs.txt &&
	grep "^$H200  attention-wgmma  *passed  *H200 on h100\$" runs.txt &&
	"$GPUORCH" runs --limit 1000 --json >runs.json &&
	i=0 && while test "$(jq_ runs.json $i.run_id)" != $H200; do i=$((i + 1)) && test $i -lt 1000 || return 1; done &&
	test "$(jq_ runs.json $i.hosts.0)" = h100 &&
	test "$(jq_ runs.json $i.gpus.0)" = "NVIDIA H200" &&
	test "$(jq_ runs.json $i.gpus --len)" = "$(jq_ runs.json $i.hosts --len)"
'

test_expect_success 'runs: failed gates, failed builds and skipped steps after the headline, and in --json' '
	grep -A1 "^$TOOLS " runs.txt | tail -n 1 >tools.line &&
	cat tools.line &&
	grep "^    h100: attn_wmma .* | gates 4/6 passed (2 FAILED); 4 builds FAILED; 8 steps skipped\$" tools.line &&
	i=0 && while test "$(jq_ runs.json $i.run_id)" != $TOOLS; do i=$((i + 1)) && test $i -lt 1000 || return 1; done &&
	test "$(jq_ runs.json $i.counts.gates)" = 6 &&
	test "$(jq_ runs.json $i.counts.gates_failed)" = 2 &&
	test "$(jq_ runs.json $i.counts.builds_failed)" = 4 &&
	test "$(jq_ runs.json $i.counts.steps_skipped)" = 8 &&
	test "$(jq_ runs.json $i.counts.steps_failed)" = 0
'

test_expect_success 'runs: the same counts from the record when the run has no summary (one is written)' '
	s=$(ls store/*/$TOOLS/summary.json) && rm "$s" &&
	"$GPUORCH" runs --limit 1000 >runs2.txt &&
	grep -A1 "^$TOOLS " runs2.txt | tail -n 1 >tools2.line &&
	cat tools2.line &&
	grep "^    h100: attn_wmma .* | gates 4/6 passed (2 FAILED); 4 builds FAILED; 8 steps skipped\$" tools2.line &&
	test -s "$s" &&
	test "$(jq_ "$s" hosts.0.counts.gates_failed)" = 2
'

test_expect_success 'report --check: a report written now is current; the report.md ends naming its renderer' '
	"$GPUORCH" report $H200 >/dev/null &&
	dir=$(ls -d store/attention-wgmma/$H200) &&
	tail -n 1 $dir/report.md | grep "^<!-- gpuorch report [0-9.]* renderer [0-9a-f]\{12\} -->\$" &&
	"$GPUORCH" report --check $H200 >c1.out &&
	cat c1.out &&
	grep "^1 report checked, 0 stale" c1.out &&
	"$GPUORCH" report --check $dir >c2.out && grep "^1 report checked, 0 stale" c2.out
'

test_expect_success 'report --check: an edited, an old and a missing report.md are stale, exit 1' '
	dir=store/attention-wgmma/$H200 &&
	cp $dir/report.md saved.md &&
	sed -i "3s/\$/ (edited)/" $dir/report.md &&
	test_expect_code 1 "$GPUORCH" report --check $H200 >c3.out &&
	cat c3.out &&
	grep "^stale: .*$dir/report.md: line 3 differs (same renderer: edited by hand?)" c3.out &&
	sed "\$d" saved.md >$dir/report.md &&
	test_expect_code 1 "$GPUORCH" report --check store/attention-wgmma >c4.out &&
	grep "^stale: $dir/report.md: line [0-9]* differs; written by a renderer that recorded no version" c4.out &&
	grep "^[0-9]* reports checked, [0-9]* stale" c4.out &&
	sed "s/ renderer [0-9a-f]* -->/ renderer 000000000000 -->/" saved.md >$dir/report.md &&
	test_expect_code 1 "$GPUORCH" report --check $dir >c5.out &&
	grep "^stale: $dir/report.md: line [0-9]* differs; written by [0-9.]* renderer 000000000000" c5.out &&
	rm $dir/report.md &&
	test_expect_code 1 "$GPUORCH" report --check $dir >c6.out &&
	grep "^stale: $dir/report.md: missing" c6.out &&
	cp saved.md $dir/report.md && "$GPUORCH" report --check $dir
'

# The committed reports may or may not be current for this build's renderer
# (a renderer change makes them stale until they are written again): the
# count of stale ones is read first, then one more is made stale.
test_expect_success 'report --check over a whole tree: every run counted, one more stale is exit 1; a directory without runs is an error' '
	"$GPUORCH" report $H200 >/dev/null &&
	"$GPUORCH" report --check >all.out; rc=$? &&
	n=$(find store -name run.json | wc -l) &&
	grep "^$n reports checked, [0-9]* stale" all.out &&
	s0=$(sed -n "s/^$n reports checked, \([0-9]*\) stale.*/\1/p" all.out) &&
	if test "$s0" = 0; then test $rc = 0; else test $rc = 1; fi &&
	dir=store/attention-wgmma/$H200 &&
	sed -i "3s/\$/ (edited)/" $dir/report.md &&
	test_expect_code 1 "$GPUORCH" report --check >all2.out &&
	grep "^$n reports checked, $((s0 + 1)) stale" all2.out &&
	grep "^stale: .*$dir/report.md: line 3 differs" all2.out &&
	mkdir empty &&
	test_expect_code 1 "$GPUORCH" report --check empty 2>e.err &&
	grep "holds no run" e.err &&
	test_expect_code 2 "$GPUORCH" report --check --stdout $H200
'

test_done
