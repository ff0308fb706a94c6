#!/bin/sh
# cost: 120
# timeout: 1200
# asan: yes
# waits: yes
test_description='Slurm: a step of "gpus": 2 asks Slurm for two GPUs of one node (gres), and runs with both (issue 32 part 2)'
# The node's two GPUs are /dev/null and /dev/zero: gres/gpu needs device
# files, not GPUs; Slurm sets CUDA_VISIBLE_DEVICES to the ones it allocates.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/slurm.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'Slurm GPU tests'
if ! _why=$(slurm_available); then
	test_skip 'Slurm GPU tests' "$_why"
	test_done
fi

test_expect_success 'setup: a node with Gres=gpu:2, a cluster entry with an arch, a step of "gpus": 2' '
	SLURM_NODE_EXTRA="Gres=gpu:2 " SLURM_CONF_EXTRA=GresTypes=gpu \
	SLURM_GRES_CONF="$(printf "AutoDetect=off\nName=gpu File=/dev/null\nName=gpu File=/dev/zero")" \
	SLURM_CGROUP_CONF=CgroupPlugin=cgroup/v1 slurm_start 4 &&
	slurm_login_start login &&
	slurm_cluster_json plain.json login ", \"gpus\": \"1\"" &&
	sed "s|\"workdir\":|\"arch\": \"sm_90a\", \"workdir\":|" plain.json >hosts.json &&
	grep "\"arch\": \"sm_90a\"" hosts.json &&
	tok=$(slurm_token 3600) && test -n "$tok" &&
	project_init &&
	mkdir -p proj/gp &&
	printf "echo \"CVD=\$CUDA_VISIBLE_DEVICES\"\necho \"GFLOPS: 1.0\"\n" >proj/gp/two.sh &&
	cat >proj/experiments/two.json <<-EOF &&
	{"schema": 1, "name": "two-gpus", "phase": "a step of two GPUs on Slurm",
	 "sources": ["gp"], "targets": {"H100": "sm_90a"},
	 "programs": {"two": {"run": ["sh", "gp/two.sh"],
	                      "figures": {"gflops": {"regex": "^GFLOPS: ([0-9.]+)\$", "unit": "GFLOP/s"}}}},
	 "problems": [{"name": "one"}],
	 "steps": [{"kind": "benchmark", "program": "two", "gpus": 2, "timeout_s": 120}]}
	EOF
	(cd proj && git add -A && git commit -qm two)
'

test_expect_success 'spec check --hosts takes a step of "gpus": 2 on a Slurm cluster (it was refused)' '
	"$GPUORCH" spec check proj/experiments/two.json --root proj --hosts hosts.json
'

test_expect_success 'the step job asks for two GPUs of its node and runs with both' '
	(cd proj && SLURM_JWT=$tok "$GPUORCH" run experiments/two.json --hosts ../hosts.json --plain) >run.out 2>&1 ||
		{ cat run.out; slurm_logs; false; } &&
	cat run.out &&
	run=$(last_run_dir) &&
	test "$(jq_ "$run/run.json" hosts.0.steps.0.status)" = PASS &&
	out=$(jq_ "$run/run.json" hosts.0.steps.0.stdout_log) &&
	cat "$run/$out" &&
	cvd=$(sed -n "s/^CVD=//p" "$run/$out") &&
	test "$(echo "$cvd" | tr , "\n" | grep -c .)" = 2 &&
	: "the record names the GPUs Slurm gave the job" &&
	test "$(jq_ "$run/run.json" hosts.0.steps.0.slurm.cuda_visible_devices)" = "$cvd"
'

test_done
