/* agent-proc.c -- gpuorch-agent's view of processes, from /proc: a
 * session's live members (runner.sh's alive/members/sess_ls, without ps or
 * awk), and whether an item is stale (claimed or queued, no rc, and nothing
 * runs it). */
#include "agent.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* proc_stat: PID's state and session from /proc/PID/stat; -1 when gone */
static int proc_stat(const char *pid, char *state, long *sid)
{
	char path[64], buf[1024], *p;
	int fd;
	ssize_t n;
	long ppid, pgrp;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	xclose(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (!(p = strrchr(buf, ')')))
		return -1;
	if (sscanf(p + 1, " %c %ld %ld %ld", state, &ppid, &pgrp, sid) != 4)
		return -1;
	return 0;
}

/* session_list: the live (not zombie) processes of session SID, up to MAX
 * into OUT (NULL: only counted); ALL=0: but its leader */
static int session_list(pid_t sid, int all, pid_t *out, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char st;
		long s;
		pid_t pid;
		if (!isdigit((unsigned char)e->d_name[0]) || proc_stat(e->d_name, &st, &s) < 0)
			continue;
		pid = (pid_t)atol(e->d_name);
		if (s != (long)sid || st == 'Z' || (!all && pid == sid))
			continue;
		if (out && n < max)
			out[n] = pid;
		n++;
	}
	closedir(d);
	return n;
}

int alive(pid_t sid)
{
	return sid > 0 && session_list(sid, 1, NULL, 0) > 0;
}

int members(pid_t sid, int all, pid_t *out, int max)
{
	int n = session_list(sid, all, out, max);
	if (!out)
		return n;
	return n < max ? n : max;
}

static pid_t read_pid(const char *path)
{
	char buf[64];
	long v;
	if (first_line(path, buf, sizeof(buf)) < 0 || !buf[0])
		return 0;
	v = atol(buf);
	return v > 0 ? (pid_t)v : 0;
}

/* stale DIR: claimed or queued, no rc, and nothing runs it (its session is
 * gone, or it got no pgid within GRACE_S of being queued) */
int stale(const char *dir)
{
	char *rc = xfmt("%s/rc", dir), *pg = xfmt("%s/pgid", dir), *q = xfmt("%s/queued", dir);
	char buf[64];
	int r = 0;
	long queued = 0;

	if (is_file(rc))
		goto out;
	if (nonempty(pg)) {
		r = !alive(read_pid(pg)) && !is_file(rc);
		goto out;
	}
	if (nonempty(q) && first_line(q, buf, sizeof(buf)) == 0)
		queued = atol(buf);
	r = now_s() - queued >= GRACE_S;
out:
	free(rc), free(pg), free(q);
	return r;
}

/* close_fds_from: close every descriptor from LOWEST on (a forked item must
 * keep none of the runner's: its run lock, a build claim, the journal) */
void close_fds_from(int lowest)
{
	DIR *d = opendir("/proc/self/fd");
	int fds[1024], n = 0, i, me;
	struct dirent *e;

	if (!d) {
		for (i = lowest; i < 1024; i++)
			(void)close(i); /* EBADF for the unused ones: nothing to check */
		return;
	}
	me = dirfd(d);
	while ((e = readdir(d)) && n < 1024) {
		int fd;
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		fd = atoi(e->d_name);
		if (fd >= lowest && fd != me)
			fds[n++] = fd;
	}
	closedir(d);
	for (i = 0; i < n; i++)
		xclose(fds[i]);
}
