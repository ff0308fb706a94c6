#!/bin/sh
# cost: 17
# asan: yes
# waits: yes
test_description='gpuorch run --resume: a controller killed with SIGKILL mid-step, started again on the same run, collects what the host runner did alone; nothing runs twice'
# The host runner (docs/runner.md) outlives its controller; --resume runs the
# same pipeline under the same run id, whose start command finds the runner
# ("running" or "finished") and follows its journal from the first byte.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'resume tests'

write_spec() {   # NAME SLEEP-OF-THE-FIRST-STEP
	cat >"proj/experiments/$1.json" <<JSON
{"schema": 1, "name": "$1", "phase": "resume test $1",
 "sources": ["cpu/cputimer.c"], "targets": {"H100": "sm_90a"},
 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
 "problems": [{"name": "slow", "params": {"work": 1000, "sleep": $2}},
              {"name": "quick", "params": {"work": 1000}}],
 "steps": [{"kind": "benchmark", "program": "cputimer", "timeout_s": 60}]}
JSON
}

# start_bg NAME SPEC [ARGS...]: gpuorch run in the background; its pid in NAME.pid
start_bg() {
	_n=$1 _s=$2
	shift 2
	{ (cd proj && exec "$GPUORCH" run experiments/$_s.json --hosts ../hosts.json --plain "$@" \
		>../$_n.out 2>&1) & }
	echo $! >$_n.pid
}

test_expect_success 'setup' '
	sshd_start a && sshd_write_hosts_json hosts.json a && project_init &&
	write_spec slow 5 && (cd proj && git add -A && git commit -qm spec)
'

test_expect_success 'a controller killed with SIGKILL mid-step: runs and report say the run stopped, not passed' '
	start_bg k1 slow &&
	wait_for 60 "grep -q \"^run \" k1.out" &&
	id=$(sed -n "s/^run \([0-9a-f-]*\): .*/\1/p" k1.out | head -n 1) &&
	echo $id >id &&
	wait_for 60 "grep -q step_started $SSHD_a_WORKDIR/runs/$id/journal 2>/dev/null" &&
	run=$(last_run_dir) &&
	# the host starts the step as soon as the build ends; the controller
	# records the build phase when it reads that end: kill it after that
	# (killed before, its journal holds no build, and the next test would
	# find none: seen under ASan with the machine loaded)
	wait_for 60 "grep -q name.:.build.,.status.:.PASS $run/journal.jsonl" &&
	kill -9 $(cat k1.pid) &&
	wait_for 10 "! kill -0 $(cat k1.pid) 2>/dev/null" &&
	test "$(jq_ $run/run.json status)" = running &&
	"$GPUORCH" runs >runs.out && cat runs.out &&
	grep "^$id  slow  *stopped " runs.out &&
	"$GPUORCH" report $id >/dev/null &&
	grep -i "incomplete" $run/report.md
'

test_expect_success 'run.json is written at the start only; the host phases since then are journal lines that runs and report read' '
	id=$(cat id) && run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.phases --len)" = 0 &&
	test -s $run/journal.jsonl &&
	grep "^{\"ev\":\"host\",\"host\":0," $run/journal.jsonl >/dev/null &&
	grep "\*\*Builds\*\*: 1 PASS" $run/report.md &&
	cp $run/journal.jsonl journal.whole &&
	printf "{\"ev\":\"host\",\"host\":0,\"at\":1,\"record\":{\"name\":\"torn" >>$run/journal.jsonl &&
	"$GPUORCH" report $id >/dev/null &&
	grep "\*\*Builds\*\*: 1 PASS" $run/report.md &&
	"$GPUORCH" runs >runs-torn.out && grep "^$id  slow  *stopped " runs-torn.out &&
	cp journal.whole $run/journal.jsonl
'

test_expect_success '--resume collects both steps (the one in flight too) on the same run; nothing ran twice' '
	id=$(cat id) &&
	(cd proj && "$GPUORCH" run experiments/slow.json --hosts ../hosts.json --plain --resume $id) >r1.out 2>&1;
	echo "exit $?" >>r1.out; cat r1.out &&
	grep "^exit 0" r1.out &&
	grep "^run $id: passed" r1.out &&
	run=$(last_run_dir) &&
	test "$(basename $run)" = $id &&
	test "$(jq_ $run/run.json status)" = complete &&
	test ! -e $run/journal.jsonl &&
	test "$(jq_ $run/run.json hosts.0.steps --len)" = 2 &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.steps.1.status)" = PASS &&
	jq_ $run/run.json resumed_at.0 &&
	test "$(grep -c "\"ev\":\"step_started\"" $SSHD_a_WORKDIR/runs/$id/journal)" = 2 &&
	test "$(grep -c "\"ev\":\"build_started\"\|\"ev\":\"build_reused\"" $SSHD_a_WORKDIR/runs/$id/journal)" = 1 &&
	"$GPUORCH" runs >runs2.out && grep "^$id  slow  *passed " runs2.out
'

test_expect_success '--resume refuses a finished run, a changed spec or sources, another live controller' '
	id=$(cat id) &&
	(cd proj && test_expect_code 2 "$GPUORCH" run experiments/slow.json --hosts ../hosts.json --resume $id) 2>done.err &&
	cat done.err && grep "run $id finished (outcome passed): there is nothing to resume" done.err &&
	start_bg k2 slow &&
	wait_for 60 "grep -q \"^run \" k2.out" &&
	id2=$(sed -n "s/^run \([0-9a-f-]*\): .*/\1/p" k2.out | head -n 1) &&
	(cd proj && test_expect_code 2 "$GPUORCH" run experiments/slow.json --hosts ../hosts.json --resume $id2) 2>live.err &&
	cat live.err && grep "another gpuorch (pid $(cat k2.pid)) is running this run now" live.err &&
	kill -9 $(cat k2.pid) && wait_for 10 "! kill -0 $(cat k2.pid) 2>/dev/null" &&
	write_spec slow 4 &&
	(cd proj && test_expect_code 2 "$GPUORCH" run experiments/slow.json --hosts ../hosts.json --resume $id2) 2>spec.err &&
	cat spec.err && grep "was made from another spec" spec.err &&
	write_spec slow 5 && echo "/* edited */" >>proj/cpu/cputimer.c &&
	(cd proj && test_expect_code 2 "$GPUORCH" run experiments/slow.json --hosts ../hosts.json --resume $id2) 2>src.err &&
	cat src.err && grep "the sources changed since run $id2" src.err &&
	(cd proj && git checkout -q cpu/cputimer.c) &&
	(cd proj && "$GPUORCH" run experiments/slow.json --hosts ../hosts.json --plain --resume $id2) >r2.out 2>&1 &&
	grep "^run $id2: passed" r2.out
'

test_done
