#!/bin/sh
# cost: 15
# asan: yes
test_description='gpuorch compare on figures read from a program output: better or worse by the ratio rule in the figure direction, exactly at the factor is the same'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'compare figure tests'

# spec G1 M1 G2 M2 G3 M3 G4 M4: the four problems' printed values
spec() {
	cat >fproj/experiments/f.json <<-JSON
	{"schema": 1, "name": "figs", "phase": "compare of output figures",
	 "sources": ["README"], "targets": {"H100": "sm_90a"},
	 "programs": {"fig": {"run": ["sh", "-c", "echo GFLOPS: {g}; echo ms: {m}"],
	   "figures": {"gflops": {"regex": "GFLOPS: ([0-9.]+)", "unit": "GFLOP/s", "better": "higher"},
	               "ms": {"regex": "ms: ([0-9.]+)", "unit": "ms", "better": "lower"}},
	   "needs_gpu": false}},
	 "problems": [{"name": "at-factor", "params": {"g": $1, "m": $2}},
	              {"name": "beyond", "params": {"g": $3, "m": $4}},
	              {"name": "at-inverse", "params": {"g": $5, "m": $6}},
	              {"name": "below", "params": {"g": $7, "m": $8}}],
	 "steps": [{"kind": "benchmark", "program": "fig"}]}
	JSON
}

test_expect_success 'setup: run A, then run B whose figures move by exactly the factor (1.25), beyond it, and by its inverse' '
	sshd_start a && sshd_write_hosts_json hosts.json a &&
	mkdir -p fproj/experiments && echo x >fproj/README &&
	(cd fproj && git init -q && git config user.email t@example.com && git config user.name t) &&
	spec 100 10 100 10 100 10 100 10 && (cd fproj && git add -A && git commit -qm a) &&
	(cd fproj && "$GPUORCH" run experiments/f.json --hosts ../hosts.json) >a.out 2>&1 &&
	A=$(basename $(last_run_dir)) &&
	spec 125 12.5 125.5 7.9 80 8 79.5 12.6 && (cd fproj && git commit -qam b) &&
	(cd fproj && "$GPUORCH" run experiments/f.json --hosts ../hosts.json) >b.out 2>&1 &&
	B=$(basename $(last_run_dir)) && test "$A" != "$B" &&
	echo "$A $B" >ids
'

test_expect_success 'verdicts: at the factor same, beyond it better or worse by direction; a worse figure is a regression (exit 1)' '
	read A B <ids &&
	test_expect_code 1 "$GPUORCH" compare $A $B --factor 1.25 >cmp.md &&
	cat cmp.md &&
	grep "^| fig at-factor · gflops | .* | 100 GFLOP/s | 125 GFLOP/s | x1.250 | - | \*\*same\*\*" cmp.md &&
	grep "^| fig at-factor · ms | .* | 10 ms | 12.5 ms | x1.250 | - | \*\*same\*\*" cmp.md &&
	grep "^| fig beyond · gflops | .* | 100 GFLOP/s | 125.5 GFLOP/s | x1.255 | - | \*\*better\*\*" cmp.md &&
	grep "^| fig beyond · ms | .* | x0.790 | - | \*\*better\*\*" cmp.md &&
	grep "^| fig at-inverse · gflops | .* | x0.800 | - | \*\*same\*\*" cmp.md &&
	grep "^| fig at-inverse · ms | .* | x0.800 | - | \*\*same\*\*" cmp.md &&
	grep "^| fig below · gflops | .* | x0.795 | - | \*\*worse\*\*.*REGRESSION" cmp.md &&
	grep "^| fig below · ms | .* | x1.260 | - | \*\*worse\*\*.*REGRESSION" cmp.md &&
	grep "^8 figures: 4 same, 2 faster or better, 2 slower or worse, 0 different, 0 insufficient data, 0 missing; REGRESSION" cmp.md
'

test_expect_success 'compare --json names each figure with its unit, direction and both values' '
	read A B <ids &&
	test_expect_code 1 "$GPUORCH" compare $A $B --factor 1.25 --json >cmp.json &&
	"$SRCDIR/scripts/check-json.sh" cli-compare.schema.json cmp.json &&
	test "$(jq_ cmp.json rows.2.figure)" = gflops &&
	test "$(jq_ cmp.json rows.2.value_a)" = 100 && test "$(jq_ cmp.json rows.2.value_b)" = 125.5 &&
	test "$(jq_ cmp.json rows.2.unit)" = GFLOP/s && test "$(jq_ cmp.json rows.2.better)" = higher &&
	test "$(jq_ cmp.json rows.2.verdict)" = better &&
	test "$(jq_ cmp.json rows.7.verdict)" = worse && test "$(jq_ cmp.json rows.7.regression)" = true &&
	test "$(jq_ cmp.json regressions)" = 2
'

test_expect_success 'with a wider factor nothing moved: exit 0' '
	read A B <ids &&
	"$GPUORCH" compare $A $B --factor 1.3 >wide.md &&
	grep "^8 figures: 8 same, " wide.md
'

test_expect_success 'history --figure: the figure over the runs; a drop beyond the factor of a higher-is-better figure is a regression (exit 1)' '
	(cd fproj && test_expect_code 1 "$GPUORCH" history figs --problem below --figure gflops --factor 1.25) >hb.md &&
	cat hb.md &&
	grep "figure gflops (GFLOP/s, higher is better)" hb.md &&
	grep "^| 1 | .* | 100 GFLOP/s | - |  |$" hb.md &&
	grep "^| 2 | .* | 79.5 GFLOP/s | - | \*\*regression\*\* x0.795 |$" hb.md &&
	(cd fproj && "$GPUORCH" history figs --problem at-factor --figure gflops --factor 1.25 --json) >ha.json &&
	test "$(jq_ ha.json points --len)" = 2 && test "$(jq_ ha.json points.1.value)" = 125 &&
	test "$(jq_ ha.json points.1.step)" = null && test "$(jq_ ha.json better)" = higher &&
	(cd fproj && "$GPUORCH" history figs --problem beyond --figure ms --factor 1.25 --json) >hm.json &&
	test "$(jq_ hm.json points.1.step)" = gain && test "$(jq_ hm.json unit)" = ms
'

test_expect_success 'find --figure: the commit where a printed figure got worse, from the recorded runs' '
	read A B <ids &&
	ca=$(cd fproj && git rev-parse HEAD~1) && cb=$(cd fproj && git rev-parse HEAD) &&
	(cd fproj && "$GPUORCH" find $ca..$cb figs --figure gflops --problem below --factor 1.25 --hosts ../hosts.json) >find.out 2>&1;
	cat find.out &&
	grep "bad (worse)" find.out &&
	grep "^first worse commit: $cb" find.out &&
	(cd fproj && test_expect_code 1 "$GPUORCH" find $ca..$cb figs --figure gflops --problem at-factor --factor 1.25 --hosts ../hosts.json) >same.out 2>&1;
	cat same.out && grep "does not differ significantly from" same.out
'

test_expect_success 'history --figure NAME that no run has: exit 2, naming the figures there are' '
	(cd fproj && test_expect_code 2 "$GPUORCH" history figs --figure gflps) 2>hn.err &&
	grep "no run of .figs. has a figure .gflps.; its runs have gflops, ms" hn.err &&
	(cd fproj && test_expect_code 2 "$GPUORCH" history figs --figure gflops --metric tflops) 2>hx.err &&
	grep "give --metric or --figure, not both" hx.err
'

# spec2 EXTRA  T-G T-M T-C  UA-G UA-M UA-C  DA-G DA-M DA-C  UB-G UB-M UB-C: experiment
# figs2, a fourth figure named EXTRA, four problems: tie, up-at, down-at, up-beyond
spec2() {
	cat >fproj/experiments/f2.json <<-JSON
	{"schema": 1, "name": "figs2", "phase": "ties, the factor's edge in doubles, missing figures",
	 "sources": ["README"], "targets": {"H100": "sm_90a"},
	 "programs": {"fig": {"run": ["sh", "-c", "echo GFLOPS: {g}; echo ms: {m}; echo count: {c}; echo extra: 1"],
	   "figures": {"gflops": {"regex": "GFLOPS: ([0-9.]+)", "unit": "GFLOP/s", "better": "higher"},
	               "ms": {"regex": "ms: ([0-9.]+)", "unit": "ms", "better": "lower"},
	               "count": {"regex": "count: ([0-9.]+)"},
	               "$1": {"regex": "extra: ([0-9]+)", "better": "higher"}},
	   "needs_gpu": false}},
	 "problems": [{"name": "tie", "params": {"g": $2, "m": $3, "c": $4}},
	              {"name": "up-at", "params": {"g": $5, "m": $6, "c": $7}},
	              {"name": "down-at", "params": {"g": $8, "m": $9, "c": ${10}}},
	              {"name": "up-beyond", "params": {"g": ${11}, "m": ${12}, "c": ${13}}}],
	 "steps": [{"kind": "benchmark", "program": "fig"}]}
	JSON
}

# 1.1865 / 1.13 is 1.0500000000000003 in doubles and 1.13 / 1.1865 is
# 0.9523809523809522 < 1 / 1.05: both exactly the factor on paper.
test_expect_success 'setup: figs2 run A, then run B: a tie, exactly the factor up and down (an ulp past it in doubles), beyond it; figure old becomes new' '
	spec2 old 100 10 5 1.13 1.13 5 1.1865 1.1865 5 1.13 1.13 5 &&
	(cd fproj && git add -A && git commit -qm figs2-a) &&
	(cd fproj && "$GPUORCH" run experiments/f2.json --hosts ../hosts.json) >a2.out 2>&1 ||
		{ cat a2.out; false; } &&
	A=$(basename $(last_run_dir)) && ca=$(cd fproj && git rev-parse HEAD) &&
	spec2 new 100 10 5 1.1865 1.1865 5 1.13 1.13 5 1.1866 1.1866 10 &&
	(cd fproj && git commit -qam figs2-b) &&
	(cd fproj && "$GPUORCH" run experiments/f2.json --hosts ../hosts.json) >b2.out 2>&1 ||
		{ cat b2.out; false; } &&
	B=$(basename $(last_run_dir)) && test "$A" != "$B" && cb=$(cd fproj && git rev-parse HEAD) &&
	echo "$A $B $ca $cb" >ids2
'

test_expect_success 'a tie is the same; exactly the factor up or down is the same although the doubles land an ulp past it; beyond it is a verdict' '
	read A B ca cb <ids2 &&
	test_expect_code 1 "$GPUORCH" compare $A $B --factor 1.05 >c2.md &&
	cat c2.md &&
	grep "^| fig tie · gflops | .* | 100 GFLOP/s | 100 GFLOP/s | x1.000 | - | \*\*same\*\* (one value per run: the ratio rule alone) |$" c2.md &&
	grep "^| fig tie · ms | .* | 10 ms | 10 ms | x1.000 | - | \*\*same\*\* (one value per run: the ratio rule alone) |$" c2.md &&
	grep "^| fig tie · count | .* | 5 | 5 | x1.000 | - | \*\*same\*\* (one value per run: the ratio rule alone) |$" c2.md &&
	grep "^| fig up-at · gflops | .* | 1.13 GFLOP/s | 1.1865 GFLOP/s | x1.050 | - | \*\*same\*\* (one value per run: the ratio rule alone) |$" c2.md &&
	grep "^| fig up-at · ms | .* | 1.13 ms | 1.1865 ms | x1.050 | - | \*\*same\*\* (one value per run: the ratio rule alone) |$" c2.md &&
	grep "^| fig down-at · gflops | .* | 1.1865 GFLOP/s | 1.13 GFLOP/s | x0.952 | - | \*\*same\*\* (one value per run: the ratio rule alone) |$" c2.md &&
	grep "^| fig down-at · ms | .* | x0.952 | - | \*\*same\*\* (one value per run: the ratio rule alone) |$" c2.md &&
	grep "^| fig up-beyond · gflops | .* | 1.13 GFLOP/s | 1.1866 GFLOP/s | x1.050 | - | \*\*better\*\* (one value per run: the ratio rule alone) |$" c2.md &&
	grep "^| fig up-beyond · ms | .* | x1.050 | - | \*\*worse\*\* (one value per run: the ratio rule alone); REGRESSION |$" c2.md &&
	grep "^| fig up-beyond · count | .* | 5 | 10 | x2.000 | - | \*\*different\*\*: value x2.000 (no better direction declared); " c2.md &&
	! grep "up-beyond · count.*REGRESSION" c2.md &&
	test $(grep -c REGRESSION c2.md) = 2
'

test_expect_success 'a figure one run lacks is missing, naming the figures the other run has there' '
	read A B ca cb <ids2 &&
	grep "^| fig tie · old | .* | 1 | - | - | - | \*\*missing\*\*; not measured in the second run, whose figures of fig tie are gflops, ms, count, new |$" c2.md &&
	grep "^| fig tie · new | .* | - | 1 | - | - | \*\*missing\*\*; not measured in the first run, whose figures of fig tie are gflops, ms, count, old |$" c2.md &&
	grep "^20 figures: 9 same, 1 faster or better, 1 slower or worse, 1 different, 0 insufficient data, 8 missing; REGRESSION" c2.md
'

test_expect_success 'history --figure: a tie and exactly the factor are no step (exit 0); a figure with no direction that moved is changed, not a regression' '
	(cd fproj && "$GPUORCH" history figs2 --problem up-at --figure ms --factor 1.05 --json) >hu.json &&
	test "$(jq_ hu.json points --len)" = 2 && test "$(jq_ hu.json points.1.step)" = null &&
	(cd fproj && "$GPUORCH" history figs2 --problem down-at --figure gflops --factor 1.05) >hd.md &&
	grep "^| 2 | .* | 1.13 GFLOP/s | - |  |$" hd.md &&
	(cd fproj && "$GPUORCH" history figs2 --problem tie --figure gflops --json) >ht.json &&
	test "$(jq_ ht.json points.1.value)" = 100 && test "$(jq_ ht.json points.1.step)" = null &&
	(cd fproj && "$GPUORCH" history figs2 --problem up-beyond --figure count) >hc.md &&
	grep "figure count (no unit, no better direction declared)" hc.md &&
	grep "^| 2 | .* | 10 | - | \*\*changed\*\* x2.000 (no better direction declared) |$" hc.md &&
	(cd fproj && "$GPUORCH" history figs2 --problem up-beyond --figure count --json) >hc.json &&
	test "$(jq_ hc.json points.1.step)" = changed && test "$(jq_ hc.json better)" = null &&
	(cd fproj && test_expect_code 1 "$GPUORCH" history figs2 --problem up-beyond --figure ms --factor 1.05) >hm2.md &&
	grep "^| 2 | .* | 1.1866 ms | - | \*\*regression\*\* x1.050 |$" hm2.md &&
	grep ">steps: one value a run,<" reports/figs2/history.svg &&
	grep ">a ratio beyond the factor<" reports/figs2/history.svg &&
	! grep "Mann-Whitney" reports/figs2/history.svg
'

test_expect_success 'find --figure when BAD lacks the figure: the commit is skipped, naming the figures its run has' '
	read A B ca cb <ids2 &&
	(cd fproj && test_expect_code 1 "$GPUORCH" find $ca..$cb figs2 --figure old --problem tie --hosts ../hosts.json) >fm.out 2>&1;
	cat fm.out &&
	grep "^| ${cb%????????????????????????????} | figs2-b | .* | - | - | - | skipped: run [0-9a-f-]* has no figure .old. of fig on tie; it has gflops, ms, count, new (run exit 0) |$" fm.out &&
	grep "could not be compared with" fm.out
'

test_expect_success 'an infra_error run of the experiment: history lists it in the table and the JSON alike, and it does not hide the regression before it' '
	sed "s/\"port\": [0-9]*/\"port\": 1/" hosts.json >dead.json &&
	(cd fproj && test_expect_code 3 "$GPUORCH" run experiments/f.json --hosts ../dead.json) >dead.out 2>&1 ||
		{ cat dead.out; false; } &&
	I=$(basename $(last_run_dir)) &&
	test "$(jq_ reports/figs/$I/run.json outcome)" = infra_error &&
	(cd fproj && test_expect_code 1 "$GPUORCH" history figs --problem below --figure gflops --factor 1.25) >hi.md &&
	cat hi.md &&
	grep "^| 2 | .* | 79.5 GFLOP/s | - | \*\*regression\*\* x0.795 |$" hi.md &&
	grep "^| 3 | .* | $I | - | no figure (infra_error) | - | |$" hi.md &&
	(cd fproj && test_expect_code 1 "$GPUORCH" history figs --problem below --figure gflops --factor 1.25 --json) >hi.json &&
	test "$(jq_ hi.json points --len)" = 2 &&
	test "$(jq_ hi.json runs_without_figure --len)" = 1 &&
	test "$(jq_ hi.json runs_without_figure.0.run_id)" = $I &&
	test "$(jq_ hi.json runs_without_figure.0.index)" = 3 &&
	test "$(jq_ hi.json runs_without_figure.0.outcome)" = infra_error &&
	test $(grep -c "^| [0-9]" hi.md) = 3
'

test_done
