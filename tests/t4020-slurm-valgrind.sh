#!/bin/sh
# cost: 21
test_description='the Slurm client under valgrind: hosts check (token minted over SSH) and a run on the cluster leak nothing'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/slurm.sh"
. "$SRCDIR/tests/lib/runlib.sh"

if [ "${GPUORCH_NO_VALGRIND:-0}" = 1 ] || ! command -v valgrind >/dev/null 2>&1; then
	test_skip 'Slurm valgrind runs' 'valgrind is not installed (or GPUORCH_NO_VALGRIND=1)'
	test_done
fi
run_requires_sshd_nvcc 'Slurm valgrind runs'
if ! _why=$(slurm_available); then
	test_skip 'Slurm valgrind runs' "$_why"
	test_done
fi

VG="valgrind -q --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect --error-exitcode=99 $SRCDIR/build/gpuorch"

test_expect_success 'setup: a single-node Slurm, a login node, a project' '
	slurm_start 8 &&
	slurm_login_start login &&
	slurm_cluster_json hosts.json login &&
	project_init
'

test_expect_success 'hosts check of a cluster under valgrind (token minted over SSH, then a bad one)' '
	(unset SLURM_JWT; $VG hosts check --hosts hosts.json) >check.out 2>&1 || { cat check.out; return 1; } &&
	grep "token  *valid, from scontrol token over SSH" check.out &&
	SLURM_JWT=not.a.token test_expect_code 3 $VG hosts check --hosts hosts.json >bad.out 2>&1 ||
		{ cat bad.out; return 1; }
'

test_expect_success 'a whole run on the cluster under valgrind (jobs, REST, SFTP journals)' '
	(cd proj && unset SLURM_JWT && $VG run experiments/basic.json --hosts ../hosts.json --host hpc --plain) >run.out 2>&1 ||
		{ tail -40 run.out; return 1; } &&
	test "$(jq_ $(last_run_dir)/run.json outcome)" = passed &&
	test "$(jq_ $(last_run_dir)/run.json hosts.0.steps.1.slurm.node)" = node1
'

test_done
