#!/bin/sh
# cost: 40
# asan: yes
test_description='sources with a 250-byte path and a non-ASCII name ship over SSH, build and run'
# Issue 32: the source archive was ustar, whose name field holds 100 bytes
# (155 more as a prefix split at a "/"), so such a tree was refused before
# anything was sent ("cannot pack ...: Pathname too long", exit 4). Now a
# tree ustar cannot name is packed as pax (remote/pack.c). The project and
# its checks are tests/lib/longnames.sh's. Checks are && chains.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"
. "$SRCDIR/tests/lib/longnames.sh"

run_requires_sshd_nvcc 'long file name tests'

test_expect_success 'setup: a project with a 250-byte path and a non-ASCII name, committed' '
	sshd_start a &&
	sshd_write_hosts_json hosts.json a &&
	longnames_project
'

test_expect_success 'gpuorch spec check packs it (it exited 4: Pathname too long)' '
	(cd proj && "$GPUORCH" spec check experiments/longnames.json) >check.out 2>&1 ||
		{ cat check.out; false; } &&
	cat check.out
'

test_expect_success 'the dry run lists both names as they are; the commit packs to the same content id' '
	(cd proj && "$GPUORCH" run experiments/longnames.json --hosts ../hosts.json --dry-run) >dry.out &&
	grep -F "  $LONG_C" dry.out &&
	grep -F "  $UML_C" dry.out &&
	(cd proj && "$GPUORCH" run experiments/longnames.json --hosts ../hosts.json --dry-run --commit HEAD) >dryc.out &&
	grep "^content id" dry.out >cid.wt &&
	grep "^content id" dryc.out >cid.commit &&
	test_cmp cid.wt cid.commit
'

test_expect_success 'a run ships them: nvcc builds the 250-byte path, the non-ASCII program prints its answer' '
	(cd proj && "$GPUORCH" run experiments/longnames.json --hosts ../hosts.json) >run.out 2>&1 ||
		{ cat run.out; false; } &&
	run=$(last_run_dir) &&
	cid=$(jq_ $run/run.json provenance.content_id) &&
	longnames_check $run "$SSHD_a_WORKDIR/content/$cid/src" &&
	grep -x "linked from the blobs (perl): [0-9]* linked, 0 copied" "$SSHD_a_WORKDIR/content/$cid/tree.txt" &&
	echo "$cid" >cid.first
'

test_expect_success 'an edit: the host links the new tree from the blobs, long and non-ASCII names too' '
	sed -i "s/42/43/" "proj/$UML_C" &&
	(cd proj && git commit -qam "answer 43" && "$GPUORCH" run experiments/longnames.json --hosts ../hosts.json) >run2.out 2>&1 ||
		{ cat run2.out; false; } &&
	run=$(last_run_dir) &&
	cid=$(jq_ $run/run.json provenance.content_id) &&
	test "$cid" != "$(cat cid.first)" &&
	cat "$SSHD_a_WORKDIR/content/$cid/tree.txt" &&
	grep -x "linked from the blobs (perl): [0-9]* linked, 0 copied" "$SSHD_a_WORKDIR/content/$cid/tree.txt" &&
	longnames_check $run "$SSHD_a_WORKDIR/content/$cid/src" 43
'

test_expect_success 'a fresh host without perl: the tree assembled file by file holds the same names' '
	sshd_forget_workdir a &&
	SSHD_a_EXTRA_ENV=GPUORCH_PERL=/nonexistent/perl && export SSHD_a_EXTRA_ENV &&
	sshd_restart a &&
	(cd proj && "$GPUORCH" run experiments/longnames.json --hosts ../hosts.json) >run3.out 2>&1 ||
		{ cat run3.out; false; } &&
	run=$(last_run_dir) &&
	cid=$(jq_ $run/run.json provenance.content_id) &&
	cat "$SSHD_a_WORKDIR/content/$cid/tree.txt" &&
	head -n 1 "$SSHD_a_WORKDIR/content/$cid/tree.txt" | grep -x "file by file from the blobs" &&
	longnames_check $run "$SSHD_a_WORKDIR/content/$cid/src" 43
'

test_done
