/* agent-follow.c -- gpuorch-agent's `follow RUNDIR OFFSET`: the journal from
 * byte OFFSET on (tail -c +OFFSET+1); while a runner holds the run's lock,
 * what it appends too (inotify on the journal, the runner's pidfd, and a
 * look at the lock every quarter second: no busy loop), ending when the
 * runner has exited, after its last lines. */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <unistd.h>

/* copy: FD from *OFF to its end onto stdout */
static void copy(int fd, off_t *off)
{
	char buf[65536];
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), *off), w = 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		while (w < n) {
			ssize_t k = write(1, buf + w, (size_t)(n - w));
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				exit(1);
			w += k;
		}
		*off += n;
	}
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	return -1;
#endif
}

static void drain(int fd)
{
	char buf[4096];
	while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
		;
}

/* keep_following: until the runner PID (holding RD's lock) has gone */
static void keep_following(const char *rd, const char *jpath, int fd, off_t *off, pid_t pid)
{
	int ino = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	int pfd = open_pidfd(pid);
	struct pollfd p[2];

	if (ino >= 0 && inotify_add_watch(ino, jpath, IN_MODIFY) < 0) {
		xclose(ino);
		ino = -1;
	}
	p[0].fd = ino, p[0].events = POLLIN;
	p[1].fd = pfd, p[1].events = POLLIN;
	for (;;) {
		copy(fd, off);
		if (!held(rd) || kill(pid, 0) < 0)
			break;
		if (poll(p, 2, ino >= 0 ? 250 : 20) < 0 && errno != EINTR)
			sleep_ms(20);
		drain(ino);
	}
	copy(fd, off);
	if (ino >= 0)
		xclose(ino);
	if (pfd >= 0)
		xclose(pfd);
}

int cmd_follow(const char *rd, const char *offset)
{
	char *j = xfmt("%s/journal", rd), *pf = xfmt("%s/runner.pid", rd), buf[64];
	size_t n = strlen(offset);
	off_t off;
	int fd;

	if (!n || n > 18 || strspn(offset, "0123456789") != n)
		die("follow: offset '%s' is not a whole number", offset);
	off = (off_t)strtoll(offset, NULL, 10);
	fd = open(j, O_RDONLY | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		die("cannot open %s: %s", j, strerror(errno));
	if (held(rd) && nonempty(pf) && first_line(pf, buf, sizeof(buf)) == 0 && atol(buf) > 0)
		keep_following(rd, j, fd, &off, (pid_t)atol(buf));
	else
		copy(fd, &off);
	xclose(fd);
	free(j), free(pf);
	return 0;
}
