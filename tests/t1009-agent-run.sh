#!/bin/sh
# cost: 60
# asan: yes
test_description='gpuorch run through the host agent (orchestrator/host/, docs/runner.md): the first run ships its sources and the host builds it after the run; later runs run under it (same record), its kill and --resume; a host with no working cc stays on runner.sh'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'host agent run tests'
if ! test_have_cmd cc; then
	test_skip 'host agent run tests' 'no C compiler (cc) to build the agent with'
	test_done
fi

# NAME [GATE]: one CPU program, two problems, one benchmark step each; with
# GATE (a directory) the first step leaves a file there and waits until the
# test adds a second (cputimer --meet): it is running when the test strikes
write_spec() {
	_gate=
	[ -z "${2:-}" ] || _gate=", \"meet\": \"$2\", \"meet-n\": 2"
	cat >"proj/experiments/$1.json" <<JSON
{"schema": 1, "name": "$1", "phase": "agent test $1",
 "sources": ["cpu/cputimer.c"], "targets": {"H100": "sm_90a"},
 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
 "problems": [{"name": "one", "params": {"work": 1000$_gate}},
              {"name": "two", "params": {"work": 1000}}],
 "steps": [{"kind": "benchmark", "program": "cputimer", "timeout_s": 120}]}
JSON
}

run() {   # HOSTS SPEC [ARGS...]: gpuorch run in proj
	_h=$1 _s=$2
	shift 2
	(cd proj && "$GPUORCH" run "experiments/$_s.json" --hosts "../$_h" --plain "$@")
}

run_id_of() {
	sed -n "s/^run \([0-9a-f-]*\): .*/\1/p" "$1" | head -n 1
}

test_expect_success 'setup' '
	sshd_start a && sshd_write_hosts_json hosts.json a && project_init &&
	mkdir gate && write_spec two && write_spec gated "$TRASH/gate" &&
	(cd proj && git add -A && git commit -qm spec)
'

test_expect_success 'a first run ships the agent and runs under runner.sh; the host builds the agent after it' '
	run hosts.json two >r1.out 2>&1 &&
	cat r1.out &&
	! grep "host runner: gpuorch-agent" r1.out &&
	test "$(jq_ "$(last_run_dir)/run.json" hosts.0.runner)" = runner.sh &&
	W=$(sshd_var a WORKDIR) &&
	wait_for 120 "find \"$W/agent\" -name \"gpuorch-agent-*\" ! -name \"*.*\" -perm -100 | grep -q ." &&
	test "$(stat -c %a "$W/agent")" = 700 &&
	: "the build left no copy of the sources behind" &&
	wait_for 30 "! ls -d \"$W\"/agent/*.src.* >/dev/null 2>&1"
'

test_expect_success 'the next run runs under the agent: the same record, its journal read as runner.sh'"'"'s' '
	run hosts.json two >r2.out 2>&1 &&
	cat r2.out &&
	test_grep "host runner: gpuorch-agent" r2.out &&
	d=$(last_run_dir) && id=$(basename "$d") &&
	test "$(jq_ "$d/run.json" outcome)" = passed &&
	test "$(jq_ "$d/run.json" hosts.0.runner)" = gpuorch-agent &&
	test "$(jq_ "$d/run.json" hosts.0.steps.0.status)" = PASS &&
	test "$(jq_ "$d/run.json" hosts.0.steps.1.status)" = PASS &&
	W=$(sshd_var a WORKDIR) &&
	test -s "$W/runs/$id/runner.agent" &&
	ab=$(cat "$W/runs/$id/runner.agent") &&
	case $ab in "$W"/agent/gpuorch-agent-*) : ;; *) false ;; esac &&
	test_grep "\"ev\":\"runner_ended\",\"status\":\"done\"" "$W/runs/$id/journal" &&
	test -f "$W/runs/$id/runner.done"
'

test_expect_success 'SIGINT mid-step under the agent: the agent kills the step; --resume runs it again and passes' '
	{ (cd proj && exec "$GPUORCH" run experiments/gated.json --hosts ../hosts.json --plain >../int.out 2>&1) & } &&
	pid=$! &&
	wait_for 120 "test \"\$(ls gate | wc -l)\" = 1" &&
	id=$(run_id_of int.out) &&
	kill -INT $pid &&
	{ wait $pid; rc=$?; } ; cat int.out &&
	test $rc = 130 &&
	test_grep "host runner: gpuorch-agent" int.out &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = INFRA_ERROR &&
	W=$(sshd_var a WORKDIR) &&
	test -f "$W/runs/$id/runner.stopped" &&
	: "the waiting step was killed with its process group: nothing waits at the gate" &&
	wait_for 30 "! pgrep -f \"meet=$TRASH/gate\" >/dev/null" &&
	rm -f gate/* && : >gate/open && : >gate/open2 &&
	run hosts.json gated --resume "$id" >res.out 2>&1;
	echo "exit $?" >>res.out; cat res.out &&
	test_grep "^exit 0" res.out &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS
'

test_expect_success 'the agent'"'"'s sources go only to a host not seen with it built: none now; a host that lost it runs runner.sh once, then gets them again' '
	run hosts.json two >s1.out 2>&1 &&
	cat s1.out && d=$(last_run_dir) &&
	test "$(jq_ "$d/run.json" hosts.0.runner)" = gpuorch-agent &&
	test "$(jq_ "$d/run.json" hosts.0.ship.agent_source_bytes)" = 0 &&
	W=$(sshd_var a WORKDIR) &&
	rm -f "$W"/agent/gpuorch-agent-* &&
	run hosts.json two >s2.out 2>&1 &&
	cat s2.out && d=$(last_run_dir) &&
	test "$(jq_ "$d/run.json" outcome)" = passed &&
	test "$(jq_ "$d/run.json" hosts.0.runner)" = runner.sh &&
	test "$(jq_ "$d/run.json" hosts.0.ship.agent_source_bytes)" = 0 &&
	run hosts.json two >s3.out 2>&1 &&
	cat s3.out && d=$(last_run_dir) &&
	test "$(jq_ "$d/run.json" hosts.0.runner)" = runner.sh &&
	test "$(jq_ "$d/run.json" hosts.0.ship.agent_source_bytes)" -gt 50000 &&
	wait_for 120 "find \"$W/agent\" -name \"gpuorch-agent-*\" ! -name \"*.*\" -perm -100 | grep -q ." &&
	run hosts.json two >s4.out 2>&1 &&
	cat s4.out && d=$(last_run_dir) &&
	test "$(jq_ "$d/run.json" hosts.0.runner)" = gpuorch-agent &&
	test "$(jq_ "$d/run.json" hosts.0.ship.agent_source_bytes)" -gt 50000 &&
	run hosts.json two >s5.out 2>&1 &&
	d=$(last_run_dir) &&
	test "$(jq_ "$d/run.json" hosts.0.ship.agent_source_bytes)" = 0
'

test_expect_success 'a host whose cc does not work: the agent build fails once, is not tried again, and runs stay on runner.sh' '
	mkdir -p badcc && printf "#!/bin/sh\necho no compiler here >&2\nexit 1\n" >badcc/cc && chmod +x badcc/cc &&
	: "nvcc calls gcc, not cc: the builds of the run still work" &&
	sshd_start_with_path b "$TRASH/badcc" && sshd_write_hosts_json hb.json b &&
	run hb.json two >b1.out 2>&1 &&
	cat b1.out &&
	W=$(sshd_var b WORKDIR) &&
	wait_for 120 "ls \"$W\"/agent/*.failed >/dev/null 2>&1" &&
	test_grep "no compiler here" "$W"/agent/gpuorch-agent-*.log &&
	run hb.json two >b2.out 2>&1 &&
	cat b2.out &&
	! grep "host runner: gpuorch-agent" b2.out &&
	d=$(last_run_dir) &&
	test "$(jq_ "$d/run.json" outcome)" = passed &&
	test "$(jq_ "$d/run.json" hosts.0.runner)" = runner.sh &&
	: "not built again" && sleep 2 &&
	test "$(ls "$W"/agent/*.log | wc -l)" = 1 &&
	! ls -d "$W"/agent/*.src.* >/dev/null 2>&1
'

test_done
