#!/bin/sh
# asan: yes
test_description='Slurm test cluster knobs used by scripts/gpu-slurm.sh: a node with Gres=gpu:1 (gres.conf), GPUs counted by hosts check; a slurmd that exits at start is reported at once'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/slurm.sh"
. "$SRCDIR/tests/lib/runlib.sh"

if ! _why=$(sshd_available) || ! _why=$(slurm_available); then
	test_skip 'Slurm cluster tests' "$_why"
	test_done
fi

# the GPU is /dev/null here: gres/gpu needs a device file, not a GPU
test_expect_success 'setup: a node with Gres=gpu:1 from SLURM_NODE_EXTRA, SLURM_CONF_EXTRA and SLURM_GRES_CONF' '
	SLURM_NODE_EXTRA="Gres=gpu:1 " SLURM_CONF_EXTRA=GresTypes=gpu \
	SLURM_GRES_CONF="$(printf "AutoDetect=off\nName=gpu File=/dev/null")" \
	SLURM_CGROUP_CONF=CgroupPlugin=cgroup/v1 slurm_start 4 &&
	grep "^NodeName=node1 .* Gres=gpu:1 State=UNKNOWN" "$SLURM_DIR/slurm.conf" &&
	grep "^GresTypes=gpu" "$SLURM_DIR/slurm.conf" &&
	grep "^Name=gpu File=/dev/null" "$SLURM_DIR/gres.conf" &&
	grep "^CgroupPlugin=cgroup/v1" "$SLURM_DIR/cgroup.conf" &&
	slurm_login_start login &&
	slurm_cluster_json hosts.json login ", \"gpus\": \"1\"" &&
	slurm_cluster_json typed.json login ", \"gpus\": \"gpu:1\"" &&
	tok=$(slurm_token 3600) && test -n "$tok"
'

test_expect_success 'hosts check counts the node GPU, free and in use by a job' '
	SLURM_JWT=$tok "$GPUORCH" hosts check --hosts hosts.json >check.out &&
	cat check.out &&
	grep "^    node  *node1: idle, CPUs 0/4 used, GPUs 0/1 used" check.out &&
	grep "^    gpus  *1 free / 1 total" check.out &&
	jid=$(sbatch --parsable -p debug --gpus=1 -o /dev/null --wrap "sleep 60") &&
	wait_for 30 "squeue -h -j $jid -o %T | grep -q RUNNING" &&
	SLURM_JWT=$tok "$GPUORCH" hosts check --hosts hosts.json >busy.out &&
	scancel $jid &&
	cat busy.out &&
	grep "^    node  *node1: mixed, CPUs 1/4 used, GPUs 1/1 used" busy.out &&
	grep "^    gpus  *0 free / 1 total" busy.out
'

test_expect_success '"gpus": "gpu:1" asks for GPUs of type "gpu": Slurm refuses it, hosts check and run say so before submitting' '
	test_must_fail sbatch --parsable -p debug --gpus=gpu:1 -o /dev/null --wrap true 2>sb.err &&
	grep "Requested node configuration is not available" sb.err &&
	SLURM_JWT=$tok test_expect_code 3 "$GPUORCH" hosts check --hosts typed.json >typed.out &&
	cat typed.out &&
	grep "asks for GPUs of type .gpu., and no node of partition debug has that type (node1 gpu:1)" typed.out &&
	grep "Fix: \"gpus\": \"1\" for GPUs of any type" typed.out &&
	sed "s/\"gpus\": \"gpu:1\"/\"gpus\": \"gpu:2\"/" typed.json >typed2.json &&
	SLURM_JWT=$tok test_expect_code 3 "$GPUORCH" hosts check --hosts typed2.json >typed2.out &&
	grep "Fix: \"gpus\": \"2\" for GPUs of any type" typed2.out &&
	project_init &&
	(cd proj && SLURM_JWT=$tok test_expect_code 3 "$GPUORCH" run experiments/basic.json --hosts ../typed.json --plain) >run.out 2>&1 &&
	cat run.out &&
	grep "asks for GPUs of type .gpu." run.out &&
	! grep -i "cannot submit" run.out
'

test_expect_success 'a slurmd that exits at start (an unknown cgroup plugin): slurm_start fails at once with its log' '
	(
		TRASH=$TRASH/second && mkdir -p "$TRASH" &&
		slurm_pids_= &&
		: "at once: the message is the exit it saw, not a timeout (no wall-clock check: CI is loaded)" &&
		if SLURM_CGROUP_CONF=CgroupPlugin=cgroup/bogus slurm_start 2 2>start.err; then
			slurm_stop; exit 1
		fi
		slurm_stop
		cat start.err &&
		grep "slurmd exited while starting" start.err &&
		grep "cannot find cgroup plugin for cgroup/bogus" start.err
	)
'

test_done
