#!/bin/sh
test_description='gpuorch run: a re-run reuses the shipped sources and builds; a changed flag or define rebuilds'
# The build key (plan.c) must cover every input that changes the binary:
# a changed build.defines value or flag reuses nothing (a stale binary
# would be measured otherwise), while an unchanged re-run ships nothing and
# builds nothing. Checks are && chains without `return` (see tests/lib/testlib.sh).
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'build reuse tests'

# spec NAME BUILD: a one-program spec with the given "build" object
spec() {
	cat >proj/experiments/$1.json <<-JSON
	{
	  "schema": 1, "name": "reuse", "phase": "Test phase: build reuse",
	  "sources": ["cpu/cputimer.c"],
	  "build": $2,
	  "targets": {"H100": "sm_90a"},
	  "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
	  "problems": [{"name": "small", "params": {"work": 20000}}],
	  "steps": [{"kind": "correctness", "program": "cputimer", "timeout_s": 60}]
	}
	JSON
}

# built RUN: the one build of the run was made (not reused) and passed,
# and so did its step.
built() {
	test "$(jq_ $1/run.json hosts.0.builds --len)" = 1 &&
	test "$(jq_ $1/run.json hosts.0.builds.0.status)" = PASS &&
	{ test "$(jq_ $1/run.json hosts.0.builds.0.reused)" = false ||
	  { echo "the build was reused: $(jq_ $1/run.json hosts.0.builds.0.command)"; false; }; } &&
	test "$(jq_ $1/run.json hosts.0.steps.0.status)" = PASS
}

test_expect_success 'setup: one host, a project, three specs that differ in one define or flag' '
	sshd_start a &&
	sshd_write_hosts_json hosts.json a &&
	project_init &&
	spec base "{\"flags\": [\"-O2\"], \"defines\": {\"WIDTH\": 4}, \"timeout_s\": 300}" &&
	spec define "{\"flags\": [\"-O2\"], \"defines\": {\"WIDTH\": 8}, \"timeout_s\": 300}" &&
	spec flag "{\"flags\": [\"-O1\"], \"defines\": {\"WIDTH\": 8}, \"timeout_s\": 300}" &&
	(cd proj && git add -A && git commit -qm "reuse specs")
'

test_expect_success 'a first run ships the sources and builds' '
	(cd proj && "$GPUORCH" run experiments/base.json --hosts ../hosts.json) >run1.out 2>&1 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.ship.reused)" = false &&
	built $run &&
	jq_ $run/run.json hosts.0.builds.0.command | grep -- "-DWIDTH=4" &&
	jq_ $run/run.json hosts.0.builds.0.build_key >key1
'

test_expect_success 'an unchanged re-run ships nothing and reuses the build' '
	(cd proj && "$GPUORCH" run experiments/base.json --hosts ../hosts.json) >run2.out 2>&1 &&
	run=$(last_run_dir) &&
	{ test "$(jq_ $run/run.json hosts.0.ship.reused)" = true ||
	  { echo "re-shipped unchanged sources"; false; }; } &&
	test "$(jq_ $run/run.json hosts.0.ship.bytes_sent)" = 0 &&
	test "$(jq_ $run/run.json hosts.0.builds.0.reused)" = true &&
	test -s key1 && test "$(jq_ $run/run.json hosts.0.builds.0.build_key)" = "$(cat key1)" &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS
'

test_expect_success 'a changed build.defines value rebuilds (same sources: nothing re-shipped)' '
	(cd proj && "$GPUORCH" run experiments/define.json --hosts ../hosts.json) >run3.out 2>&1 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.ship.reused)" = true &&
	built $run &&
	jq_ $run/run.json hosts.0.builds.0.command | grep -- "-DWIDTH=8" &&
	jq_ $run/run.json hosts.0.builds.0.build_key >key2 &&
	! cmp -s key1 key2
'

test_expect_success 'a changed build flag rebuilds' '
	(cd proj && "$GPUORCH" run experiments/flag.json --hosts ../hosts.json) >run4.out 2>&1 &&
	run=$(last_run_dir) &&
	built $run &&
	jq_ $run/run.json hosts.0.builds.0.command | grep -- " .-O1. " &&
	jq_ $run/run.json hosts.0.builds.0.build_key >key3 &&
	! cmp -s key2 key3 && ! cmp -s key1 key3
'

test_done
