#!/bin/sh
# cost: 40
# asan: yes
test_description='gpuorch compare of two sweep runs: every variant paired with the same variant of the other run and judged by the one rule (a planted 1.5x faster variant faster, one 1.04x faster and the untouched ones same), a variant of one run only listed as missing, in the merged order of the sweeps; --json and --summary carry the same rows; runs without sweeps compare as before'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'compare sweep tests'

# spec NAME TILES DEFINES: the stand-in tests/fixtures/varsweep/varsweep.c
# (made-up samples: the same in every run, unless DEFINES plant a change),
# a plain benchmark of it (TILE=1) and a sweep over TILES
spec() {
	cat >vproj/experiments/$1.json <<-JSON
	{"schema": 1, "name": "vsweep", "phase": "compare of two sweeps",
	 "sources": ["varsweep.c"], "build": {"flags": ["-O2"], "defines": {$3}, "timeout_s": 300},
	 "targets": {"H100": "sm_90a"},
	 "programs": {"vs": {"sources": ["varsweep.c"], "needs_gpu": false}},
	 "problems": [{"name": "p1", "params": {"n": 1}}, {"name": "p2", "params": {"n": 2}}],
	 "steps": [{"kind": "benchmark", "program": "vs", "problems": ["p1"], "timeout_s": 60},
	           {"kind": "sweep", "program": "vs", "problems": ["p1"], "defines": {"TILE": [$2]},
	            "timeout_s": 60}]}
	JSON
}

test_expect_success 'setup: run A sweeps TILE 1 2 4 8; run B sweeps 1 2 3 4 with TILE=4 made 1.5x faster and TILE=2 1.04x' '
	sshd_start a && sshd_write_hosts_json hosts.json a &&
	mkdir -p vproj/experiments && cp "$SRCDIR/tests/fixtures/varsweep/varsweep.c" vproj/ &&
	(cd vproj && git init -q && git config user.email t@example.com && git config user.name t) &&
	spec a "1, 2, 4, 8" "" &&
	spec b "1, 2, 3, 4" "\"FAST_TILE\": 4, \"FAST_BY\": \"1.5\", \"EDGE_TILE\": 2, \"EDGE_BY\": \"1.04\"" &&
	(cd vproj && git add -A && git commit -qm specs) &&
	(cd vproj && "$GPUORCH" run experiments/a.json --hosts ../hosts.json) >a.out 2>&1 || { cat a.out; false; } &&
	A=$(basename $(last_run_dir)) &&
	(cd vproj && "$GPUORCH" run experiments/b.json --hosts ../hosts.json) >b.out 2>&1 || { cat b.out; false; } &&
	B=$(basename $(last_run_dir)) && test "$A" != "$B" &&
	echo "$A $B" >ids &&
	: "the stand-in printed the planted samples: B TILE=4 is A TILE=4 / 1.5" &&
	test "$(jq_ reports/vsweep/$A/run.json hosts.0.steps --len)" = 9 &&
	test "$(jq_ reports/vsweep/$B/run.json hosts.0.steps.8.variant)" = TILE=4
'

test_expect_success 'compare lists the plain benchmark and every variant in the merged order of the sweeps, each judged: 4 faster, 2 (within the factor) and 1 same, 8 (A only) and 3 (B only, in its place) missing' '
	read A B <ids &&
	"$GPUORCH" compare $A $B >cmp.md &&
	cat cmp.md &&
	grep "^| vs p1" cmp.md | cut -d"|" -f2 | sed "s/ *$//" >order &&
	cat >want <<-EOF &&
	 vs p1
	 vs p1 [TILE=1]
	 vs p1 [TILE=2]
	 vs p1 [TILE=3]
	 vs p1 [TILE=4]
	 vs p1 [TILE=8]
	EOF
	test_cmp want order &&
	grep "^| vs p1 | a (no GPU) | 10.05 us \[10.00-10.10, n=200\] | 10.05 us \[10.00-10.10, n=200\] | x1.000 | 1.0000 | \*\*same\*\* |$" cmp.md &&
	grep "^| vs p1 \[TILE=1\] | a (no GPU) | .* | x1.000 | 1.0000 | \*\*same\*\* |$" cmp.md &&
	grep "^| vs p1 \[TILE=2\] | a (no GPU) | 20.10 us .* | 19.32 us .* | x0.962 | .* | \*\*same\*\* (significant, but within the factor) |$" cmp.md &&
	grep "^| vs p1 \[TILE=4\] | a (no GPU) | 40.19 us .* | 26.79 us .* | x0.667 | .* | \*\*faster\*\* |$" cmp.md &&
	grep "^| vs p1 \[TILE=8\] | a (no GPU) | 80.4.* us .* | - | - | - | \*\*missing\*\*; not measured in the second run |$" cmp.md &&
	grep "^| vs p1 \[TILE=3\] | a (no GPU) | - | 30.* us .* | - | - | \*\*missing\*\*; not measured in the first run |$" cmp.md &&
	grep "^6 figures: 3 same, 1 faster or better, 0 slower or worse, 0 different, 0 insufficient data, 2 missing; no regression$" cmp.md
'

test_expect_success 'B against A: the planted variant is slower, a regression (exit 1); each variant still paired with its own' '
	read A B <ids &&
	test_expect_code 1 "$GPUORCH" compare $B $A >rev.md &&
	grep "^| vs p1 \[TILE=4\] | .* | x1.500 | .* | \*\*slower\*\*; REGRESSION |$" rev.md &&
	grep "^| vs p1 \[TILE=2\] | .* | x1.040 | .* | \*\*same\*\* (significant, but within the factor) |$" rev.md &&
	grep "^| vs p1 \[TILE=3\] | .* | \*\*missing\*\*; not measured in the second run |$" rev.md &&
	grep "^| vs p1 \[TILE=8\] | .* | \*\*missing\*\*; not measured in the first run |$" rev.md &&
	grep "^| vs p1" rev.md | cut -d"|" -f2 | sed "s/ *$//" >rev-order && test_cmp order rev-order &&
	grep "^6 figures: 3 same, 0 faster or better, 1 slower or worse, 0 different, 0 insufficient data, 2 missing; REGRESSION$" rev.md
'

test_expect_success 'compare --json: the same rows, each variant named, against its schema' '
	read A B <ids &&
	"$GPUORCH" compare $A $B --json >cmp.json &&
	"$SRCDIR/scripts/check-json.sh" cli-compare.schema.json cmp.json &&
	test "$(jq_ cmp.json rows --len)" = 6 &&
	! jq_ cmp.json rows.0.variant >/dev/null 2>&1 &&
	for i in 1 2 3 4 5; do
		echo "$(jq_ cmp.json rows.$i.variant) $(jq_ cmp.json rows.$i.verdict)" || return 1
	done >vj &&
	printf "TILE=1 same\nTILE=2 same\nTILE=3 missing\nTILE=4 faster\nTILE=8 missing\n" >want &&
	test_cmp want vj &&
	test "$(jq_ cmp.json rows.4.ratio | cut -c1-5)" = 0.666 &&
	test "$(jq_ cmp.json rows.5.median_b_us)" = null && test "$(jq_ cmp.json rows.3.median_a_us)" = null &&
	test "$(jq_ cmp.json counts.faster)" = 1 && test "$(jq_ cmp.json counts.missing)" = 2 &&
	: "a plain row has no variant key at all" &&
	grep -c "\"variant\"" cmp.json >nv && test "$(cat nv)" = 5
'

test_expect_success 'compare --summary: with only the runs'"'"' summaries (no run.json, no store) the same rows, nothing fetched' '
	read A B <ids &&
	mkdir -p thin/vsweep &&
	for r in $A $B; do
		mkdir thin/vsweep/$r && cp reports/vsweep/$r/summary.json reports/vsweep/$r/samples.txt thin/vsweep/$r/ || return 1
	done &&
	test "$(jq_ thin/vsweep/$A/summary.json schema)" = gpuorch.summary/5 &&
	GPUORCH_RESULTS_STORE=none "$GPUORCH" compare --summary --reports thin $A $B >sum.md 2>sum.err &&
	cat sum.err && test ! -s sum.err &&
	test -z "$(find thin -name run.json)" &&
	grep "^- read from the runs. summaries (summary.json, samples.txt)" sum.md &&
	grep -v "^- read from the runs. summaries" sum.md >sum-rows.md &&
	test_cmp cmp.md sum-rows.md &&
	GPUORCH_RESULTS_STORE=none "$GPUORCH" compare --summary --json --reports thin $A $B >sum.json &&
	test_cmp cmp.json sum.json &&
	: "without --summary the raw record is needed, and no store has it" &&
	GPUORCH_RESULTS_STORE=none test_expect_code 2 "$GPUORCH" compare --reports thin $A $B >raw.out 2>&1 &&
	test_grep "raw record is not here" raw.out
'

test_expect_success 'compare --summary: a run with no summary nor run.json is an error saying how to get it; so is a /4 summary (no step GPUs, no sweep steps) without run.json' '
	read A B <ids &&
	mkdir -p thin/vsweep/20261129-000000-e0e0e0 &&
	GPUORCH_RESULTS_STORE=none test_expect_code 2 "$GPUORCH" compare --summary --reports thin $A 20261129-000000-e0e0e0 >none.out 2>&1 &&
	cat none.out &&
	test_grep "run vsweep/20261129-000000-e0e0e0 has no summary this gpuorch reads (.* is missing) and no run.json to make one from: get its raw record with .gpuorch pull vsweep/20261129-000000-e0e0e0." none.out &&
	rm -r thin/vsweep/20261129-000000-e0e0e0 &&
	sed "s:gpuorch.summary/5:gpuorch.summary/4:" thin/vsweep/$B/summary.json >s4 && mv s4 thin/vsweep/$B/summary.json &&
	GPUORCH_RESULTS_STORE=none test_expect_code 2 "$GPUORCH" compare --summary --reports thin $A $B >old.md 2>old.err &&
	cat old.err && test ! -s old.md &&
	test_grep "error: run vsweep/$B.s summary is gpuorch.summary/4, written before summaries kept each step.s GPU and a sweep.s steps, which compare.s rules need: get its raw record with .gpuorch pull vsweep/$B. (then .gpuorch summarize. rewrites the summary), or leave out --summary" old.err
'

test_expect_success 'summarize rewrites a /4 summary from the raw record here into /5, with the sweep steps' '
	read A B <ids &&
	cp -R reports/vsweep/$A old4 &&
	sed "s:gpuorch.summary/5:gpuorch.summary/4:" old4/summary.json >s4 && cp s4 reports/vsweep/$A/summary.json &&
	"$GPUORCH" runs >/dev/null &&
	test "$(jq_ reports/vsweep/$A/summary.json schema)" = gpuorch.summary/4 &&
	"$GPUORCH" summarize >/dev/null &&
	test "$(jq_ reports/vsweep/$A/summary.json schema)" = gpuorch.summary/5 &&
	test_cmp old4/summary.json reports/vsweep/$A/summary.json
'

test_expect_success 'runs without sweeps compare exactly as before (the output of the code before sweeps were compared)' '
	fixture_runs fx &&
	a=attention-forward/20261122-052342-b8cc6a b=attention-forward/20261122-055410-c75786 &&
	"$GPUORCH" compare --reports fx $a $b >plain.md &&
	test_cmp "$SRCDIR/tests/fixtures/compare/attention-forward.md" plain.md &&
	"$GPUORCH" compare --reports fx $a $b --json >plain.json &&
	test_cmp "$SRCDIR/tests/fixtures/compare/attention-forward.json" plain.json &&
	: "two runs with sweeps: their plain rows as before, the variant rows added" &&
	"$GPUORCH" compare --reports fx bsr-wgmma/20261123-065717-9947f2 bsr-wgmma/20261127-225853-0eb9ba >bsr.md &&
	grep -c "^| bsr_wgmma [^ ]* \[BW_" bsr.md >nvar && test "$(cat nvar)" = 26 &&
	grep -v "^| bsr_wgmma [^ ]* \[BW_" bsr.md | grep -v "^[0-9]* figures: " >bsr-plain.md &&
	grep -v "^[0-9]* figures: " "$SRCDIR/tests/fixtures/compare/bsr-wgmma.md" >bsr-old.md &&
	test_cmp bsr-old.md bsr-plain.md
'

test_expect_success 'compare -h names --summary' '
	"$GPUORCH" compare -h >h.out &&
	test_grep "^ *--summary  *compare the runs. summaries (summary.json and" h.out
'

test_done
