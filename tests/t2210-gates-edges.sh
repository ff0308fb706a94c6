#!/bin/sh
test_description='gpuorch run: a gate alone fails the run (exit 1); gates at their boundary, end to end'
# Every step of these specs passes (or is SKIPPED for want of a GPU), so the
# exit code comes from the gates alone. The boundary gates read ptxas's
# spill stores of scale.cu, which are 0 for every build: deterministic.
# Checks are && chains without `return` (see tests/lib/testlib.sh).
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'gate edge tests'

# spec NAME GATES: a spec whose steps all pass, with the given gates array
spec() {
	cat >proj/experiments/$1.json <<-JSON
	{
	  "schema": 1, "name": "$1", "phase": "Test phase: gates alone",
	  "sources": ["cpu/cputimer.c", "gpu/scale.cu"],
	  "build": {"flags": ["-O2"], "timeout_s": 300},
	  "targets": {"H100": "sm_90a"},
	  "programs": {
	    "cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false},
	    "scale": {"sources": ["gpu/scale.cu"]}
	  },
	  "problems": [{"name": "small", "params": {"work": 20000}}],
	  "steps": [
	    {"kind": "correctness", "program": "cputimer", "timeout_s": 60},
	    {"kind": "benchmark", "program": "cputimer", "timeout_s": 60},
	    {"kind": "benchmark", "program": "scale", "timeout_s": 60}
	  ],
	  "gates": $2
	}
	JSON
}

BOUNDARY='{"name": "spills >= 0", "program": "scale", "metric": "ptxas.spill_store_bytes", "op": ">=", "value": 0},
    {"name": "spills <= 0", "program": "scale", "metric": "ptxas.spill_store_bytes", "op": "<=", "value": 0},
    {"name": "spills == 0", "program": "scale", "metric": "ptxas.spill_store_bytes", "op": "==", "value": 0},
    {"name": "generous latency", "program": "cputimer", "metric": "latency_us", "op": "<", "value": 10000000}'

test_expect_success 'setup: one host, a project, specs that differ only in their gates' '
	sshd_start a &&
	sshd_write_hosts_json hosts.json a &&
	project_init &&
	spec gate-only "[$BOUNDARY,
    {\"name\": \"spills > 0\", \"program\": \"scale\", \"metric\": \"ptxas.spill_store_bytes\", \"op\": \">\", \"value\": 0},
    {\"name\": \"spills < 0\", \"program\": \"scale\", \"metric\": \"ptxas.spill_store_bytes\", \"op\": \"<\", \"value\": 0}]" &&
	spec boundary-pass "[$BOUNDARY]" &&
	(cd proj && git add -A && git commit -qm "gate specs")
'

test_expect_success 'a run whose only failure is a gate exits 1 (every step passed)' '
	(cd proj && test_expect_code 1 "$GPUORCH" run experiments/gate-only.json --hosts ../hosts.json) >run1.out 2>&1 &&
	run=$(last_run_dir) && test -n "$run" &&
	test "$(jq_ $run/run.json outcome)" = failed &&
	test "$(jq_ $run/run.json exit_code)" = 1 &&
	jq_ $run/run.json hosts.0.steps >steps.json &&
	test "$(jq_ $run/run.json hosts.0.steps --len)" = 3 &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.steps.1.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.steps.2.status)" = SKIPPED &&
	! grep "\"status\":\"FAIL\"" steps.json &&
	test "$(jq_ $run/run.json hosts.0.builds.0.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.builds.1.status)" = PASS &&
	grep "gate .*spills > 0" run1.out
'

test_expect_success 'at the boundary: 0 >= 0, 0 <= 0, 0 == 0 pass; 0 > 0 and 0 < 0 fail' '
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.gates --len)" = 6 &&
	test "$(jq_ $run/run.json hosts.0.gates.0.measured)" = 0 &&
	test "$(jq_ $run/run.json hosts.0.gates.0.verdict)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.gates.1.verdict)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.gates.2.verdict)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.gates.3.verdict)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.gates.4.verdict)" = FAIL &&
	test "$(jq_ $run/run.json hosts.0.gates.4.measured)" = 0 &&
	jq_ $run/run.json hosts.0.gates.4.reason | grep "needs > 0" &&
	test "$(jq_ $run/run.json hosts.0.gates.5.verdict)" = FAIL &&
	jq_ $run/run.json hosts.0.gates.5.reason | grep "needs < 0"
'

test_expect_success 'the same run without the failing gates exits 0' '
	(cd proj && "$GPUORCH" run experiments/boundary-pass.json --hosts ../hosts.json) >run2.out 2>&1 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	test "$(jq_ $run/run.json exit_code)" = 0 &&
	test "$(jq_ $run/run.json hosts.0.gates --len)" = 4 &&
	test "$(jq_ $run/run.json hosts.0.gates.0.verdict)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.gates.1.verdict)" = PASS
'

test_done
