/* agent-sweep.c -- gpuorch-agent's killing of what an item leaves: sweep
 * (SIGKILL a session's processes, listed again until none is left: a
 * process forking between the listing and the kill leaves a child no one
 * saw), msweep (the same for every process whose environment carries the
 * item's marker GPUORCH_STEP=DIR: a daemon that called setsid), and
 * kill_item (a stop: TERM but the item's own process, up to 3 s, then both
 * sweeps; rc 137 when none was written). As runner.sh's. */
#include "agent.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXP 4096

/* sweep SID KEEP: SIGKILL the live processes of session SID but KEEP, and
 * list again, 50 ms on, until none is left (at most 50 rounds) */
void sweep(pid_t sid, pid_t keep)
{
	static pid_t p[MAXP];
	int round, n, i, killed;

	if (sid <= 0)
		return;
	for (round = 0; round < 50; round++) {
		n = members(sid, 1, p, MAXP);
		killed = 0;
		for (i = 0; i < n; i++)
			if (p[i] != keep && kill(p[i], SIGKILL) == 0)
				killed = 1;
		if (!killed)
			return;
		sleep_ms(50);
	}
}

/* carries: PID's environment holds the entry WANT (grep -zxF) */
static int carries(const char *pid, const char *want, size_t wlen)
{
	char *path = xfmt("/proc/%s/environ", pid);
	struct sb env = { 0 };
	size_t off = 0;
	int found = 0;

	if (read_all(path, &env) == 0) {
		while (off < env.len && !found) {
			size_t n = strnlen(env.buf + off, env.len - off);
			found = n == wlen && !memcmp(env.buf + off, want, wlen);
			off += n + 1;
		}
	}
	free(path);
	sb_free(&env);
	return found;
}

/* mark_kill: SIGKILL every process carrying WANT; 1 when one was */
static int mark_kill(const char *want)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t wlen = strlen(want);
	pid_t me = getpid();
	int killed = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		pid_t pid;
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		pid = (pid_t)atol(e->d_name);
		if (pid != me && carries(e->d_name, want, wlen) && kill(pid, SIGKILL) == 0)
			killed = 1;
	}
	closedir(d);
	return killed;
}

void msweep(const char *dir)
{
	char *want;
	int round;

	if (access("/proc/self/environ", R_OK) < 0)
		return;
	want = xfmt("GPUORCH_STEP=%s", dir);
	for (round = 0; round < 50 && mark_kill(want); round++)
		sleep_ms(50);
	free(want);
}

void kill_item(const char *dir)
{
	static pid_t p[MAXP];
	char *pg = xfmt("%s/pgid", dir), *rc = xfmt("%s/rc", dir), *tmp = xfmt("%s/rc.tmp", dir);
	char buf[64];
	pid_t sid;
	int n, i;

	if (!nonempty(pg) || first_line(pg, buf, sizeof(buf)) < 0 || (sid = (pid_t)atol(buf)) <= 0)
		goto out;
	n = members(sid, 0, p, MAXP);
	for (i = 0; i < n; i++)
		(void)kill(p[i], SIGTERM); /* gone since the listing: nothing to do */
	for (i = 0; i < 30 && members(sid, 1, NULL, 0) > 0; i++)
		sleep_ms(100);
	sweep(sid, 0);
	msweep(dir);
	if (!is_file(rc) && write_atomic(rc, tmp, "137\n") < 0)
		fprintf(stderr, "runner: cannot write %s: %s\n", rc, strerror(errno));
out:
	free(pg), free(rc), free(tmp);
}
