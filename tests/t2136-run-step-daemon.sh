#!/bin/sh
# cost: 12
# asan: yes
test_description='a step program that double-forks and calls setsid leaves nothing behind: every process carrying its GPUORCH_STEP marker is killed at the step end (issue 31, item 9)'
# The host runner's wrapper runs each build and step in a session of its own
# and sweeps that session at the end; a daemon that calls setsid leaves the
# session, but not its environment: the wrapper gives the command
# GPUORCH_STEP=<item dir> and sweeps /proc/*/environ by it (runner.sh msweep).
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'step daemon tests'

test_expect_success 'setup' '
	sshd_start a && sshd_write_hosts_json hosts.json a && project_init &&
	cat >proj/cpu/daemon.c <<-\CSRC &&
	/* daemon.c -- a step program that leaves a daemon: fork, setsid, fork
	 * again; the grandchild writes its pid to --pidfile and sleeps; the
	 * program itself prints a result and exits 0. */
	#include <stdio.h>
	#include <string.h>
	#include <sys/types.h>
	#include <sys/wait.h>
	#include <unistd.h>
	int main(int argc, char **argv)
	{
		const char *pf = "/dev/null";
		pid_t p;
		int i;
		for (i = 1; i < argc; i++)
			if (!strncmp(argv[i], "--pidfile=", 10))
				pf = argv[i] + 10;
		fflush(stdout);
		p = fork();
		if (p == 0) {
			setsid();
			if (fork() == 0) {
				FILE *f = fopen(pf, "w");
				if (f) { fprintf(f, "%d\n", (int)getpid()); fclose(f); }
				freopen("/dev/null", "w", stdout);
				freopen("/dev/null", "w", stderr);
				sleep(300);
			}
			_exit(0);
		}
		waitpid(p, NULL, 0);
		for (i = 0; i < 100 && access(pf, F_OK); i++)
			usleep(20000);
		printf("{\"schema\":\"gpuorch.result/1\",\"program\":\"daemon\",\"mode\":\"bench\","
		       "\"status\":\"pass\",\"problem\":{},\"timing\":{\"n\":1,\"min_us\":1,"
		       "\"median_us\":1,\"max_us\":1,\"samples_us\":[1]}}\n");
		return 0;
	}
	CSRC
	cat >proj/experiments/daemon.json <<-JSON &&
	{"schema": 1, "name": "daemon", "phase": "daemon test",
	 "sources": ["cpu/daemon.c"], "targets": {"H100": "sm_90a"},
	 "programs": {"daemon": {"sources": ["cpu/daemon.c"], "needs_gpu": false}},
	 "problems": [{"name": "d", "params": {"pidfile": "$TRASH/daemon.pid"}}],
	 "steps": [{"kind": "benchmark", "program": "daemon", "timeout_s": 60}]}
	JSON
	(cd proj && git add -A && git commit -qm daemon)
'

test_expect_success 'the run passes and the setsid daemon is gone, with every process that carries the marker' '
	rm -f daemon.pid &&
	(cd proj && "$GPUORCH" run experiments/daemon.json --hosts ../hosts.json --plain) >d.out 2>&1;
	echo "exit $?" >>d.out; cat d.out &&
	grep "^exit 0" d.out &&
	test -s daemon.pid &&
	pid=$(cat daemon.pid) &&
	wait_for 10 "! kill -0 $pid 2>/dev/null" &&
	id=$(sed -n "s/^run \([0-9a-f-]*\): .*/\1/p" d.out | head -n 1) && test -n "$id" &&
	! grep -lzF "GPUORCH_STEP=$SSHD_a_WORKDIR/runs/$id" /proc/[0-9]*/environ 2>/dev/null
'

test_done
