#!/bin/sh
# cost: 20
# asan: yes
test_description='a full disk on the host is named as such (issue 31, item 10): hosts check warns, a run that cannot fit does not start, a step that fills the disk says "no space left on device"'
# The host's work directory is a real small file system: a tmpfs mounted on
# it (the tests run as root; without the right to mount, the tests skip and
# say so). diskspace.h has the estimate; tests/unit/test_diskspace the
# classification at its edges.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'disk-full tests'

# mount_small SIZE: the host's work directory becomes a fresh tmpfs of SIZE
mount_small() {
	# shellcheck disable=SC2154 # set by sshd_start (tests/lib/sshd.sh), through eval
	_w=$SSHD_a_WORKDIR
	sshd_forget_workdir a
	if mountpoint -q "$_w" 2>/dev/null; then umount -l "$_w" || return 1; fi
	rm -rf "$_w" && mkdir -p "$_w" && mount -t tmpfs -o size="$1",mode=0700 tmpfs "$_w"
}

write_spec() {   # NAME PROGRAM
	cat >"proj/experiments/$1.json" <<JSON
{"schema": 1, "name": "$1", "phase": "disk test $1",
 "sources": ["cpu/$2.c"], "targets": {"H100": "sm_90a"},
 "programs": {"$2": {"sources": ["cpu/$2.c"], "needs_gpu": false}},
 "problems": [{"name": "p", "params": {"work": 1}}],
 "steps": [{"kind": "benchmark", "program": "$2", "timeout_s": 60}]}
JSON
}

test_expect_success 'setup' '
	sshd_start a && sshd_write_hosts_json hosts.json a && project_init &&
	test_at_exit "umount -l \"$SSHD_a_WORKDIR\"" &&
	cat >proj/cpu/fill.c <<-\CSRC &&
	/* fill.c -- writes 16 MiB into its working directory, says why it cannot */
	#include <stdio.h>
	#include <string.h>
	int main(void)
	{
		static char buf[1 << 20];
		FILE *f = fopen("fill.bin", "w");
		int i;
		memset(buf, 7, sizeof(buf));
		for (i = 0; f && i < 16; i++)
			if (fwrite(buf, 1, sizeof(buf), f) != sizeof(buf) || fflush(f)) {
				perror("fill.bin");
				return 1;
			}
		if (!f || fclose(f)) { perror("fill.bin"); return 1; }
		return 0;
	}
	CSRC
	write_spec small cputimer && write_spec fill fill &&
	(cd proj && git add -A && git commit -qm disk)
'

if mkdir -p "$TRASH/mnt-probe" && mount -t tmpfs -o size=2m tmpfs "$TRASH/mnt-probe" 2>/dev/null; then
	umount "$TRASH/mnt-probe"
	test_have_mount=1
else
	test_have_mount=
fi

if [ -z "$test_have_mount" ]; then
	test_skip 'a 2 MiB work directory' 'cannot mount a tmpfs here (not root, or no CAP_SYS_ADMIN)'
	test_skip 'a step that fills the disk' 'cannot mount a tmpfs here'
	test_done
fi

test_expect_success 'a 2 MiB work directory: hosts check warns; a run does not start, and says why' '
	mount_small 2m &&
	"$GPUORCH" hosts check --hosts hosts.json >check.out 2>&1; cat check.out &&
	grep "warning: only [0-9]* KiB free in the work directory" check.out &&
	(cd proj && "$GPUORCH" run experiments/small.json --hosts ../hosts.json --plain) >small.out 2>&1;
	echo "exit $?" >>small.out; cat small.out &&
	grep "^exit 3" small.out &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = infra_error &&
	jq_ $run/run.json hosts.0.error >err.txt &&
	grep "not enough free disk on .a.: [0-9]* KiB free in $SSHD_a_WORKDIR, the run needs about [0-9]* KiB" err.txt &&
	grep "nothing was started" err.txt &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = SKIPPED &&
	id=$(basename $run) && test ! -e "$SSHD_a_WORKDIR/runs/$id"
'

test_expect_success 'a step that fills the disk (its own message and rc lost on it): the reason says "no space left on device"' '
	mount_small 8m &&
	(cd proj && "$GPUORCH" run experiments/fill.json --hosts ../hosts.json --plain) >fill.out 2>&1;
	echo "exit $?" >>fill.out; cat fill.out &&
	grep "^exit 1" fill.out &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.builds.0.status)" = PASS &&
	jq_ $run/run.json hosts.0.steps.0.reason >reason.txt && cat reason.txt &&
	grep "^no space left on device on the host: [0-9]* KiB free in its file system when it ended" reason.txt &&
	grep "no space left on device" fill.out
'

test_expect_success 'a 6 MiB work directory with the execd running: the blob that does not fit is refused by its put, none half-written stays, the run says the disk is short' '
	mount_small 6m &&
	W=$SSHD_a_WORKDIR &&
	(cd proj && "$GPUORCH" run experiments/small.json --hosts ../hosts.json --plain) >s1.out 2>&1 &&
	wait_for 120 "ls \"$W\"/execd/*.sock >/dev/null 2>&1" &&
	mkdir -p proj/data &&
	for i in 1 2 3 4; do head -c 2097152 /dev/urandom >proj/data/d$i.bin || return 1; done &&
	cat >proj/experiments/data.json <<-JSON &&
	{"schema": 1, "name": "data", "phase": "disk test data",
	 "sources": ["cpu/cputimer.c", "data"], "targets": {"H100": "sm_90a"},
	 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
	 "problems": [{"name": "p", "params": {"work": 1}}],
	 "steps": [{"kind": "benchmark", "program": "cputimer", "timeout_s": 60}]}
	JSON
	(cd proj && git add -A && git commit -qm data) &&
	(cd proj && "$GPUORCH" run experiments/data.json --hosts ../hosts.json --plain) >data.out 2>&1;
	echo "exit $?" >>data.out; cat data.out &&
	grep "^exit 3" data.out &&
	grep "the host.s execd did not store them all (gpuorch-execd: cannot write blob [0-9a-f]* into .*: No space left on device" data.out &&
	run=$(last_run_dir) &&
	jq_ $run/run.json hosts.0.error >err.txt &&
	grep "not enough free disk on .a.: [0-9]* KiB free" err.txt &&
	! ls -A "$W/blobs" | grep "^\.put" &&
	for b in "$W"/blobs/*; do
		test "$(sha256sum <"$b" | cut -c1-64)" = "$(basename "$b")" &&
		test "$(stat -c %a "$b")" = 400 || return 1
	done
'

test_done
