/* agent-item.c -- the item's own process (runner.sh's WRAPPER), forked by
 * the runner: a session of its own; it claims DIR by creating .launch
 * exclusively (exit 3: claimed by another), records its pgid, takes its GPU
 * locks when given (':'-joined, in order) (rc "lock-timeout" when the wait runs out), runs
 * `sh DIR/cmd` in the sources with GPUORCH_STEP=DIR and its timeout (TERM to
 * the command's group at T, KILL 5 s later: rc 124 or 137, then "timeout"),
 * kills what the command left in its session and by its marker (inside the
 * lock), stamps t_run/t_end and writes rc last, atomically. It outlives a
 * runner that dies: a restarted runner reads its rc. */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

static double mono(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
		return (double)time(NULL);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void put(const char *dir, const char *name, const char *text)
{
	char *p = xfmt("%s/%s", dir, name);
	if (write_file(p, text, strlen(text)) < 0)
		fprintf(stderr, "gpuorch-agent: cannot write %s: %s\n", p, strerror(errno));
	free(p);
}

static void command_child(const char *dir, int out, int err)
{
	char *cmd = xfmt("%s/cmd", dir);
	sigset_t none;

	sigemptyset(&none);
	if (setpgid(0, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 ||
	    sigprocmask(SIG_SETMASK, &none, NULL) < 0 || setenv("GPUORCH_STEP", dir, 1) < 0)
		_exit(126);
	xclose(out);
	xclose(err);
	execl("/bin/sh", "sh", cmd, (char *)NULL);
	_exit(127);
}

/* wait_timed: PID's status as the shell gives it (128+N for signal N), under
 * timeout -k 5 T's rules: TERM to its group at T (then 124), KILL 5 s later
 * (then 137) */
static int wait_timed(pid_t pid, long t)
{
	double deadline = t > 0 ? mono() + (double)t : 0;
	int st, phase = 0;
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		double left;
		struct timespec ts;
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return 1;
		if (!deadline) {
			(void)sigwaitinfo(&chld, NULL); /* EINTR: looked at again */
			continue;
		}
		left = deadline - mono();
		if (left <= 0) {
			(void)kill(-pid, phase ? SIGKILL : SIGTERM); /* ESRCH: it just ended */
			(void)kill(pid, phase ? SIGKILL : SIGTERM);
			phase++;
			deadline = phase == 1 ? mono() + 5 : 0;
			continue;
		}
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
		(void)sigtimedwait(&chld, NULL, &ts); /* EAGAIN at the deadline */
	}
	if (phase)
		return phase > 1 ? 137 : 124;
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

/* run_command: sh DIR/cmd with its output in DIR/stdout and DIR/stderr */
static int run_command(const char *dir, long t, int out, int err)
{
	sigset_t chld;
	pid_t pid;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &chld, NULL) < 0)
		return 1;
	pid = fork();
	if (pid < 0) {
		dprintf(err, "gpuorch-agent: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0)
		command_child(dir, out, err);
	return wait_timed(pid, t);
}

static int open_out(const char *dir, const char *name)
{
	char *p = xfmt("%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	free(p);
	return fd;
}

static void stamp(const char *dir, const char *name, char *tr, size_t size)
{
	char line[48];
	now_str(tr, size);
	snprintf(line, sizeof(line), "%s\n", tr);
	put(dir, name, line);
}

/* take_locks: each lock of LOCKS (':'-joined paths, in the order given:
 * every step takes a host's GPU locks in the same order) into FDS, waiting
 * LW s in all; the number taken, -1 when one cannot be opened */
static int take_locks(const char *locks, long lw, int *fds, int max, int err)
{
	long deadline = now_s() + lw;
	const char *p = locks;
	int n = 0;

	while (*p && n < max) {
		size_t len = strcspn(p, ":");
		char *path = xfmt("%.*s", (int)len, p);
		long left = deadline - now_s();
		fds[n] = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0666);
		if (fds[n] < 0) {
			dprintf(err, "gpuorch-agent: cannot open the lock %s: %s\n", path,
				strerror(errno));
			free(path);
			return -1;
		}
		free(path);
		if (flock_wait(fds[n], left > 0 ? left : 0) < 0) {
			xclose(fds[n]);
			return n;
		}
		n++;
		p += len + (p[len] == ':');
	}
	return n;
}

static int count_locks(const char *locks)
{
	int n = 1;
	for (; *locks; locks++)
		n += *locks == ':';
	return n;
}

/* locked_run: the command inside its GPU locks; the sweeps and t_end inside
 * them too. -2: the lock wait ran out. *START: the locks' second. */
static int locked_run(const char *dir, long t, const char *lock, long lw, int out, int err,
		      long *start)
{
	char tr[40], line[48];
	int fds[64], want = count_locks(lock), n, r, i;

	if (want > 64) {
		dprintf(err, "gpuorch-agent: %d GPU locks; at most 64\n", want);
		return 1;
	}
	n = take_locks(lock, lw, fds, want, err);
	if (n < want) {
		for (i = 0; i < n; i++)
			xclose(fds[i]);
		return n < 0 ? 1 : -2;
	}
	now_str(tr, sizeof(tr));
	*start = atol(tr);
	snprintf(line, sizeof(line), "%ld\n", *start);
	put(dir, "locked", line);
	snprintf(line, sizeof(line), "%s\n", tr);
	put(dir, "t_run", line);
	r = run_command(dir, t, out, err);
	sweep(getpid(), getpid());
	msweep(dir);
	stamp(dir, "t_end", tr, sizeof(tr));
	for (i = n - 1; i >= 0; i--)
		xclose(fds[i]);
	return r;
}

static void claim(const char *dir)
{
	char *p = xfmt("%s/.launch", dir), line[32];
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	free(p);
	if (fd < 0 || close(fd) < 0)
		_exit(3);
	snprintf(line, sizeof(line), "%ld\n", (long)getpid());
	put(dir, "pgid", line);
}

static void finish(const char *dir, const char *rc) __attribute__((noreturn));
static void finish(const char *dir, const char *rc)
{
	char *p = xfmt("%s/rc", dir), *tmp = xfmt("%s/rc.tmp", dir), *line = xfmt("%s\n", rc);
	if (write_atomic(p, tmp, line) < 0)
		fprintf(stderr, "gpuorch-agent: cannot write %s: %s\n", p, strerror(errno));
	free(p), free(tmp), free(line);
	_exit(0);
}

static void item_setup(void)
{
	sigset_t none;
	int null;

	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0 || setsid() < 0)
		_exit(3);
	close_fds_from(3);
	null = open("/dev/null", O_RDWR);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
		_exit(3);
	if (null > 2)
		xclose(null);
}

void item_main(const char *dir, long t, const char *lock, long lw, const char *cwd)
{
	char tr[40], rc[32];
	long start = 0;
	int out, err, r, swept = 0;

	item_setup();
	claim(dir);
	err = open_out(dir, "stderr");
	if (err < 0)
		finish(dir, "1");
	if (chdir(cwd) < 0) {
		dprintf(err, "gpuorch-agent: cd: can't cd to %s: %s\n", cwd, strerror(errno));
		finish(dir, "1");
	}
	if ((out = open_out(dir, "stdout")) < 0)
		finish(dir, "1");
	if (*lock) {
		r = locked_run(dir, t, lock, lw, out, err, &start);
		swept = r != -2;
	} else {
		stamp(dir, "t_run", tr, sizeof(tr));
		start = atol(tr);
		r = run_command(dir, t, out, err);
	}
	if (!swept)
		stamp(dir, "t_end", tr, sizeof(tr));
	snprintf(rc, sizeof(rc), "%d", r);
	if (r == -2)
		snprintf(rc, sizeof(rc), "lock-timeout");
	else if ((r == 124 || r == 137) && start && now_s() - start >= t)
		snprintf(rc, sizeof(rc), "timeout");
	if (!swept) {
		sweep(getpid(), getpid());
		msweep(dir);
	}
	finish(dir, rc);
}
