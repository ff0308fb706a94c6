#!/bin/sh
# cost: 15
# asan: yes
test_description='a figure per kernel from one program output (name_regex, name_group): recorded as NAME[KERNEL], a report row each, gated at the boundary, compared and followed in history per kernel'
# kproj/kbench.c is a small C program (built by cc on the test sshd, CPU only)
# that prints one block per kernel as SGEMM benchmarks do: a line naming the
# kernel, then its performance; and a "time KERNEL MS ms" line per kernel.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'figures per kernel tests'

write_bench() {
	cat >kproj/kbench.c <<-'C'
	/* kbench: three kernels' blocks; a 5th argument "dup" prints v07's block
	 * again with another value */
	#include <stdio.h>
	#include <stdlib.h>
	#include <string.h>
	int main(int argc, char **argv)
	{
		static const char *const names[] = { "v01_naive", "v05_blocktile", "v07_vectorized" };
		int i;
		if (argc < 4)
			return 2;
		printf("device 0: a CPU pretending\n");
		for (i = 0; i < 3; i++) {
			printf("Running kernel %s on device 0.\n", names[i]);
			printf("dimensions(m=n=k) 4096, alpha: 0.5, beta: 3\n");
			printf("Average elapsed time: (0.001) s, performance: (%7.1f) GFLOPS. size: (4096).\n",
			       atof(argv[i + 1]));
			printf("time %s %.3f ms\n", names[i], 1000.0 / atof(argv[i + 1]));
		}
		if (argc > 4 && !strcmp(argv[4], "dup"))
			printf("Running kernel v07_vectorized on device 0.\n"
			       "Average elapsed time: (0.001) s, performance: (    1.0) GFLOPS. size: (4096).\n");
		return 0;
	}
	C
}

# spec V01 V05 V07 [GATES]: the spec, the kernels' GFLOPS as parameters
spec() {
	cat >kproj/experiments/k.json <<-JSON
	{"schema": 1, "name": "kfigs", "phase": "figures per kernel",
	 "sources": ["kbench.c"], "targets": {"H100": "sm_90a"},
	 "programs": {"kb": {
	   "build": {"command": ["cc", "-O1", "-o", "kbench", "kbench.c"], "outputs": ["kbench"]},
	   "run": ["./kbench", "{a}", "{b}", "{c}", "{d}"],
	   "figures": {"gflops": {"regex": "performance: \\\\( *([0-9.]+)\\\\) GFLOPS",
	                          "name_regex": "^Running kernel ([A-Za-z0-9_]+) on",
	                          "unit": "GFLOP/s", "better": "higher"},
	               "ms": {"regex": "^time ([A-Za-z0-9_]+) ([0-9.]+) ms$", "name_group": 1,
	                      "unit": "ms", "better": "lower"}},
	   "needs_gpu": false}},
	 "problems": [{"name": "base", "params": {"a": $1, "b": $2, "c": $3, "d": "no"}},
	              {"name": "dup", "params": {"a": 1, "b": 2, "c": 3, "d": "dup"}}],
	 "steps": [{"kind": "benchmark", "program": "kb"}],
	 "gates": [{"program": "kb", "problem": "base", "metric": "gflops[v07_vectorized]", "op": ">=", "value": 300},
	           {"program": "kb", "problem": "base", "metric": "gflops[v07_vectorized]", "op": ">", "value": 300},
	           {"program": "kb", "problem": "base", "metric": "gflops[*]", "op": ">=", "value": 200},
	           {"program": "kb", "problem": "base", "metric": "ms[v01_naive]", "op": "<=", "value": 10}]}
	JSON
}

test_expect_success 'setup: run A (100, 200, 300 GFLOPS), then run B (100, 150, 330)' '
	sshd_start a && sshd_write_hosts_json hosts.json a &&
	mkdir -p kproj/experiments && write_bench &&
	cc -o kbench.local kproj/kbench.c && ./kbench.local 1 2 3 no >local.out && cat local.out &&
	(cd kproj && git init -q && git config user.email t@example.com && git config user.name t) &&
	spec 100 200 300 && (cd kproj && git add -A && git commit -qm a) &&
	(cd kproj && test_expect_code 1 "$GPUORCH" run experiments/k.json --hosts ../hosts.json) >a.out 2>&1 ||
		{ cat a.out; false; } &&
	A=$(basename $(last_run_dir)) && cp -R $(last_run_dir) runA &&
	spec 100 150 330 && (cd kproj && git commit -qam b) &&
	(cd kproj && test_expect_code 1 "$GPUORCH" run experiments/k.json --hosts ../hosts.json) >b.out 2>&1 ||
		{ cat b.out; false; } &&
	B=$(basename $(last_run_dir)) && test "$A" != "$B" &&
	echo "$A $B" >ids
'

test_expect_success 'the record holds a figure per kernel: NAME[KERNEL] with its figure, kernel, value and line' '
	run=runA &&
	test "$(run_step $run benchmark.kb.base status)" = PASS &&
	run_step $run benchmark.kb.base result.figures >figs.json && cat figs.json &&
	test "$(grep -o "\"[a-z]*\[[a-z0-9_]*\]\":{" figs.json | tr -d "\":{" | tr "\n" " ")" = "gflops[v01_naive] gflops[v05_blocktile] gflops[v07_vectorized] ms[v01_naive] ms[v05_blocktile] ms[v07_vectorized] " &&
	test "$(jq_ figs.json "gflops[v05_blocktile].value")" = 200 &&
	test "$(jq_ figs.json "gflops[v07_vectorized].value")" = 300 &&
	test "$(jq_ figs.json "gflops[v07_vectorized].figure")" = gflops &&
	test "$(jq_ figs.json "gflops[v07_vectorized].kernel")" = v07_vectorized &&
	test "$(jq_ figs.json "gflops[v07_vectorized].unit")" = GFLOP/s &&
	test "$(jq_ figs.json "ms[v01_naive].value")" = 10 &&
	test "$(jq_ figs.json "ms[v05_blocktile].line")" = "time v05_blocktile 5.000 ms" &&
	test "$(run_step $run benchmark.kb.base "result.gflops[v01_naive]")" = 100
'

test_expect_success 'a kernel printed twice with two values fails its step, saying which and both values' '
	run=runA &&
	test "$(run_step $run benchmark.kb.dup status)" = FAIL &&
	run_step $run benchmark.kb.dup reason >dup.txt && cat dup.txt &&
	grep "kernel .v07_vectorized. is printed with two values, 3 (\"Average elapsed time: (0.001) s, performance: (    3.0) GFLOPS. size: (4096).\") and 1 (" dup.txt &&
	test "$(run_step $run benchmark.kb.dup "result.figures.ms[v07_vectorized].value")" = 333.33300000000003 &&
	! run_step $run benchmark.kb.dup "result.figures.gflops[v01_naive]"
'

test_expect_success 'gates on one kernel at the boundary (>= holds, > fails) and on every kernel (gflops[*])' '
	run=runA &&
	jq_ $run/run.json hosts.0.gates >gates.json && cat gates.json &&
	test "$(jq_ gates.json . --len)" = 6 &&
	test "$(jq_ gates.json 0.metric)" = "gflops[v07_vectorized]" &&
	test "$(jq_ gates.json 0.verdict)" = PASS && test "$(jq_ gates.json 0.measured)" = 300 &&
	test "$(jq_ gates.json 1.verdict)" = FAIL &&
	test "$(jq_ gates.json 1.reason)" = "measured 300 GFLOP/s, needs > 300" &&
	test "$(jq_ gates.json 2.metric)" = "gflops[v01_naive]" && test "$(jq_ gates.json 2.verdict)" = FAIL &&
	test "$(jq_ gates.json 3.metric)" = "gflops[v05_blocktile]" && test "$(jq_ gates.json 3.verdict)" = PASS &&
	test "$(jq_ gates.json 4.metric)" = "gflops[v07_vectorized]" && test "$(jq_ gates.json 4.verdict)" = PASS &&
	test "$(jq_ gates.json 5.metric)" = "ms[v01_naive]" && test "$(jq_ gates.json 5.verdict)" = PASS
'

test_expect_success 'the report shows each kernel figure as its own row, and its gates' '
	run=runA &&
	grep -F "| a | benchmark.kb.base | gflops\[v01_naive\] | 100 | GFLOP/s | higher | Average elapsed time: (0.001) s, performance: (  100.0) GFLOPS. size: (4096). |" $run/report.md &&
	grep -F "| a | benchmark.kb.base | gflops\[v05_blocktile\] | 200 | GFLOP/s | higher |" $run/report.md &&
	grep -F "| a | benchmark.kb.base | gflops\[v07_vectorized\] | 300 | GFLOP/s | higher |" $run/report.md &&
	grep -F "| a | benchmark.kb.base | ms\[v07_vectorized\] | 3.33 | ms | lower | time v07_vectorized 3.333 ms |" $run/report.md &&
	test "$(grep -c "^| a | benchmark.kb.base | " $run/report.md)" = 6 &&
	grep -F "| ❌ **FAIL** | gflops\[v07_vectorized\] | a | \`kb\` · base | \`gflops[v07_vectorized]\` | 300 GFLOP/s | > 300 | measured 300 GFLOP/s, needs > 300 |" $run/report.md &&
	grep -F "| ❌ **FAIL** | gflops\[v01_naive\] | a | \`kb\` · base | \`gflops[v01_naive]\` | 100 GFLOP/s | >= 200 |" $run/report.md
'

test_expect_success 'compare: each kernel its own row and verdict (v05 worse, v07 better, v01 same)' '
	read A B <ids &&
	test_expect_code 1 "$GPUORCH" compare $A $B --factor 1.05 >cmp.md &&
	cat cmp.md &&
	grep "^| kb base · gflops\\[v01_naive\\] | .* | 100 GFLOP/s | 100 GFLOP/s | x1.000 | - | \*\*same\*\*" cmp.md &&
	grep "^| kb base · gflops\\[v05_blocktile\\] | .* | 200 GFLOP/s | 150 GFLOP/s | x0.750 | - | \*\*worse\*\*.*REGRESSION" cmp.md &&
	grep "^| kb base · gflops\\[v07_vectorized\\] | .* | 300 GFLOP/s | 330 GFLOP/s | x1.100 | - | \*\*better\*\*" cmp.md &&
	grep "^| kb base · ms\\[v05_blocktile\\] | .* | 5 ms | 6.667 ms | x1.333 | - | \*\*worse\*\*" cmp.md
'

test_expect_success 'history and find --figure follow one kernel' '
	(cd kproj && test_expect_code 1 "$GPUORCH" history kfigs --problem base --figure "gflops[v05_blocktile]" --factor 1.05) >h5.md &&
	cat h5.md &&
	grep "figure gflops\\[v05_blocktile\\] (GFLOP/s, higher is better)" h5.md &&
	grep "^| 2 | .* | 150 GFLOP/s | - | \*\*regression\*\* x0.750 |$" h5.md &&
	(cd kproj && "$GPUORCH" history kfigs --problem base --figure "gflops[v07_vectorized]" --factor 1.05 --json) >h7.json &&
	test "$(jq_ h7.json points.1.value)" = 330 && test "$(jq_ h7.json points.1.step)" = gain &&
	ca=$(cd kproj && git rev-parse HEAD~1) && cb=$(cd kproj && git rev-parse HEAD) &&
	(cd kproj && "$GPUORCH" find $ca..$cb kfigs --figure "gflops[v05_blocktile]" --problem base --factor 1.05 --hosts ../hosts.json) >find.out 2>&1;
	cat find.out && grep "^first worse commit: $cb" find.out
'

# bad SPEC-FIGURE-JSON GATE-METRIC [MORE-TOP-LEVEL]: spec check of a figure
bad() {
	cat >kproj/experiments/bad.json <<-JSON
	{"schema": 1, "name": "bad", "phase": "bad figures", "sources": ["kbench.c"], "targets": {"H100": "sm_90a"},
	 "programs": {"kb": {"run": ["./kbench", "1", "2", "3"], "figures": {"gflops": $1}, "needs_gpu": false}},
	 "problems": [{"name": "p", "params": {}}],
	 "steps": [{"kind": "benchmark", "program": "kb"}],
	 "gates": [{"program": "kb", "metric": "$2", "op": ">", "value": 0}]$3}
	JSON
	(cd kproj && "$GPUORCH" spec check experiments/bad.json) >bad.out 2>&1
	echo $? >bad.rc
	cat bad.out
}

test_expect_success 'spec check: a name group the regex lacks, both name forms, a plain name of a per-kernel figure, an expectation on every kernel: exit 2 like any spec error' '
	bad "{\"regex\": \"G: ([0-9.]+)\", \"name_group\": 2}" "gflops[x]" ; test "$(cat bad.rc)" = 2 &&
	grep "programs.kb.figures.gflops.name_group.: .G: (\[0-9.\]+). has no group 2 (it has 1)" bad.out &&
	bad "{\"regex\": \"G: ([0-9.]+)\", \"name_group\": 1}" "gflops[x]" ; test "$(cat bad.rc)" = 2 &&
	grep "with the kernel.s name in group 1, the value is group 2" bad.out &&
	bad "{\"regex\": \"G: ([0-9.]+)\", \"name_group\": 1, \"name_regex\": \"K (.*)\"}" "gflops[x]" ; test "$(cat bad.rc)" = 2 &&
	grep "give at most one of .name_regex." bad.out &&
	bad "{\"regex\": \"G: ([0-9.]+)\", \"name_regex\": \"K .*\"}" "gflops[x]" ; test "$(cat bad.rc)" = 2 &&
	grep "name_regex.: .K \.\*. has no group" bad.out &&
	bad "{\"regex\": \"G: ([0-9.]+)\", \"name_regex\": \"K (.*)\"}" "gflops" ; test "$(cat bad.rc)" = 2 &&
	grep "gflops. gives a figure per kernel: name one kernel.s, .gflops\[KERNEL\]., or every kernel.s, .gflops\[\*\]." bad.out &&
	bad "{\"regex\": \"G: ([0-9.]+)\"}" "gflops[x]" ; test "$(cat bad.rc)" = 2 &&
	grep "has one value, not one per kernel" bad.out &&
	bad "{\"regex\": \"G: ([0-9.]+)\", \"name_regex\": \"K (.*)\"}" "gflops[a.b]" ; test "$(cat bad.rc)" = 2 &&
	grep "a kernel.s figure is .gflops\[KERNEL\]." bad.out &&
	bad "{\"json\": \"a.b\", \"name_group\": 2}" "gflops" ; test "$(cat bad.rc)" = 2 &&
	grep "a .json. figure has one value" bad.out &&
	bad "{\"regex\": \"G: ([0-9.]+)\", \"name_regex\": \"K (.*)\"}" "gflops[*]" ; test "$(cat bad.rc)" = 0 &&
	bad "{\"regex\": \"G: ([0-9.]+)\", \"name_regex\": \"K (.*)\"}" "gflops[*]" \
		", \"expected\": [{\"program\": \"kb\", \"metric\": \"gflops[*]\", \"op\": \">\", \"value\": 0}]"; test "$(cat bad.rc)" = 2 &&
	grep "expected.0..metric.: .gflops\[\*\].: an expectation is one figure; name the kernel (.gflops\[KERNEL\].), or gate every kernel.s with a gate" bad.out
'

test_done
