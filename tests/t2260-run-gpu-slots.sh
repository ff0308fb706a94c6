#!/bin/sh
# cost: 90
# asan: yes
test_description='every GPU of a host: the probe lists them, timed steps run one per GPU at once, each step records its GPU, a "gpus": 2 step holds two GPU locks (issue 32 part 2)'
# The host's nvidia-smi is a stand-in listing 4 H100s. The step program is a
# stand-in too (tests/lib/gpupool.sh): it appends "start TAG
# CUDA_VISIBLE_DEVICES" and "end TAG ..." to a log beside the test, and may
# wait (bounded) until the log holds N starts: steps that must run at once
# meet there, so the test asserts the order of the lines, never a time.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"
. "$SRCDIR/tests/lib/gpupool.sh"

run_requires_sshd_nvcc 'GPU slot tests'
if ! test_have_cmd cc || ! test_have_cmd flock; then
	test_skip 'GPU slot tests' 'no C compiler (cc) for the host agent, or no flock'
	test_done
fi

uuid() { gpupool_uuid fa4e "$1"; }

# spec NAME STEPS PROBLEMS: one stand-in program, the given steps and problems
spec() {
	cat >"proj/experiments/$1.json" <<JSON
{"schema": 1, "name": "$1", "phase": "gpu slots $1",
 "sources": ["slot"], "targets": {"H100": "sm_90a"},
 "programs": {"s": {"run": ["sh", "slot/step.sh", "{tag}", "{log}", "{want}"],
                    "figures": {"gflops": {"regex": "^GFLOPS: ([0-9.]+)$", "unit": "GFLOP/s"}}}},
 "problems": [$3],
 "steps": [$2]}
JSON
}
# bench [EXTRA]: one benchmark step of the program
bench() {
	printf '{"kind": "benchmark", "program": "s", "timeout_s": 120%s}' "${1:-}"
}
run() {   # SPEC [HOSTS]: gpuorch run in proj
	(cd proj && "$GPUORCH" run "experiments/$1.json" --hosts "../${2:-hosts.json}" --plain)
}
# hosts_with FILE GPUS: hosts.json with the host entry's "gpus": GPUS
hosts_with() {
	sed "s/\"connect_timeout_s\": 20}/\"connect_timeout_s\": 20, \"gpus\": $2}/" hosts.json >"$1"
}

test_expect_success 'setup: a host whose nvidia-smi lists 4 GPUs; a stand-in step program' '
	gpupool_smi smi4 fa4e "NVIDIA H100 80GB HBM3" 9.0 "0 1 2 3" &&
	sshd_start_with_path g "$TRASH/smi4" &&
	sshd_write_hosts_json hosts.json g &&
	project_init &&
	mkdir -p proj/slot &&
	gpupool_step_sh proj/slot/step.sh &&
	LOG=warm.log && spec warm "$(bench)" "$(gpupool_prob w 0)" &&
	LOG=sweep.log && spec sweep "$(bench)" \
		"$(gpupool_prob p1 4), $(gpupool_prob p2 4), $(gpupool_prob p3 4), $(gpupool_prob p4 4), $(gpupool_prob p5 4), $(gpupool_prob p6 4), $(gpupool_prob p7 4), $(gpupool_prob p8 4)" &&
	LOG=flat.log && spec flat "$(bench)" "$(gpupool_prob f1 0), $(gpupool_prob f2 0), $(gpupool_prob f3 0), $(gpupool_prob f4 0)" &&
	LOG=pair.log && spec pair "$(bench ", \"problems\": [\"w\"], \"gpus\": 2"), $(bench ", \"problems\": [\"q1\", \"q2\", \"q3\", \"q4\"]")" \
		"$(gpupool_prob w 3), $(gpupool_prob q1 0), $(gpupool_prob q2 0), $(gpupool_prob q3 0), $(gpupool_prob q4 0)" &&
	(cd proj && git add -A && git commit -qm slots)
'

test_expect_success 'hosts check lists every GPU of the host' '
	"$GPUORCH" hosts check --hosts hosts.json >check.out 2>&1 || { cat check.out; false; } &&
	cat check.out &&
	for i in 0 1 2 3; do
		grep " $i: NVIDIA H100 80GB HBM3, $(uuid $i), 81559 MiB" check.out || return 1
	done &&
	"$GPUORCH" hosts check --hosts hosts.json --json >check.json &&
	test "$(jq_ check.json 0.gpus.3.uuid)" = "$(uuid 3)"
'

test_expect_success 'a first run (under runner.sh) builds the host agent' '
	run warm >warm.out 2>&1 || { cat warm.out; false; } &&
	W=$(sshd_var g WORKDIR) &&
	wait_for 300 "find \"$W/agent\" -name \"gpuorch-agent-*\" ! -name \"*.*\" -perm -100 | grep -q ."
'

test_expect_success 'a sweep of 8 timed steps on 4 GPUs: 4 at once, one per GPU at a time, every GPU used, each row records its GPU' '
	run sweep >sweep.out 2>&1 || { cat sweep.out; false; } &&
	cat sweep.out sweep.log &&
	grep "host runner: gpuorch-agent" sweep.out &&
	: "the first four lines are the four starts: they met, at once" &&
	test "$(head -n 4 sweep.log | grep -c "^start")" = 4 &&
	gpupool_overlap sweep.log >ov && test ! -s ov &&
	test "$(grep "^start" sweep.log | cut -d" " -f3 | sort -u | wc -l)" = 4 &&
	run=$(last_run_dir) &&
	for k in 0 1 2 3 4 5 6 7; do
		tag=$(jq_ "$run/run.json" hosts.0.steps.$k.problem) &&
		used=$(grep "^start $tag " sweep.log | cut -d" " -f3) &&
		test "$(jq_ "$run/run.json" hosts.0.steps.$k.gpus.0.uuid)" = "$used" &&
		test "$(jq_ "$run/run.json" hosts.0.steps.$k.gpus.0.index)" = "${used#${used%?}}" &&
		test "$(jq_ "$run/run.json" hosts.0.steps.$k.status)" = PASS || return 1
	done &&
	test "$(jq_ "$run/run.json" hosts.0.info.gpus.3.index)" = 3
'

test_expect_success 'a "gpus": 2 step holds two GPU locks: the steps on its GPUs wait for it, the others run beside it' '
	run pair >pair.out 2>&1 || { cat pair.out; false; } &&
	cat pair.out pair.log &&
	run=$(last_run_dir) &&
	w=$(grep "^start w " pair.log | cut -d" " -f3) &&
	test "$(echo "$w" | tr , "\n" | wc -l)" = 2 &&
	grep "^end w $w held=2\$" pair.log &&
	test "$(jq_ "$run/run.json" hosts.0.steps.0.gpus.0.uuid),$(jq_ "$run/run.json" hosts.0.steps.0.gpus.1.uuid)" = "$w" &&
	gpupool_overlap pair.log >ov && test ! -s ov &&
	: "q1 and q2 ran beside w (w waited for them), q3 and q4 after it, on its GPUs" &&
	sed -n "/^end w /q;p" pair.log >before &&
	grep "^start q1 " before && grep "^start q2 " before &&
	! grep "^start q3 " before && ! grep "^start q4 " before &&
	q3=$(grep "^start q3 " pair.log | cut -d" " -f3) &&
	q4=$(grep "^start q4 " pair.log | cut -d" " -f3) &&
	test "$q3,$q4" = "$w"
'

test_expect_success 'spec check --hosts refuses a step of more GPUs than any host lists' '
	hosts_with one.json "[1]" &&
	test_expect_code 2 "$GPUORCH" spec check proj/experiments/pair.json --root proj --hosts one.json 2>err &&
	cat err &&
	grep "steps\[0\] (benchmark of .s.) asks for \"gpus\": 2, more than any host of one.json runs steps on (at most 1: host .g.)" err &&
	"$GPUORCH" spec check proj/experiments/pair.json --root proj --hosts hosts.json
'

test_expect_success 'a host entry that lists GPUs runs on those only; one it lacks is an error naming the GPUs it has' '
	hosts_with two.json "[3, 1]" &&
	run flat two.json >two.out 2>&1 || { cat two.out; false; } &&
	cat flat.log &&
	test "$(grep "^start" flat.log | cut -d" " -f3 | sort -u | tr "\n" " ")" = "$(uuid 1) $(uuid 3) " &&
	hosts_with bad.json "[0, 7]" &&
	test_must_fail run flat bad.json >bad.out 2>&1 &&
	cat bad.out &&
	grep "host .g.: \"gpus\" lists GPU 7, and the host has GPUs 0, 1, 2, 3" bad.out
'

test_done
