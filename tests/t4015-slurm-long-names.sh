#!/bin/sh
# cost: 60
# asan: yes
# waits: yes
test_description='a Slurm run ships sources with a 250-byte path and a non-ASCII name (pax), unpacked by tar on the login node'
# Issue 32: the source archive a Slurm run uploads over SFTP and unpacks
# with the login node's tar (run/slurmrun.c) was ustar, so a name over 100
# bytes was refused before anything was sent; a tree ustar cannot name is
# now pax. The project and its checks are tests/lib/longnames.sh's (as
# t2041, over SSH), run as jobs through a real slurmrestd.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/slurm.sh"
. "$SRCDIR/tests/lib/runlib.sh"
. "$SRCDIR/tests/lib/longnames.sh"

run_requires_sshd_nvcc 'Slurm long file name tests'
if ! _why=$(slurm_available); then
	test_skip 'Slurm long file name tests' "$_why"
	test_done
fi

test_expect_success 'setup: a single-node Slurm, its login node, the project' '
	slurm_start 4 &&
	slurm_login_start login &&
	slurm_cluster_json hosts.json login &&
	tok=$(slurm_token 3600) && test -n "$tok" &&
	longnames_project
'

test_expect_success 'the jobs build the 250-byte path and run the non-ASCII program from the unpacked tree' '
	(cd proj && SLURM_JWT=$tok "$GPUORCH" run experiments/longnames.json --hosts ../hosts.json --host hpc) \
		>run.out 2>&1 || { cat run.out; slurm_logs; false; } &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.steps.0.slurm.state)" = COMPLETED &&
	cid=$(jq_ $run/run.json provenance.content_id) &&
	longnames_check $run "$(sshd_var login WORKDIR)/content/$cid/src"
'

test_expect_success 'cleanup: stop Slurm' '
	slurm_stop
'

test_done
