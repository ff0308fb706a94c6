/* proc.c -- proc_run(), the one place gpuorch starts a local program (proc.h).
 *
 * Design: proc_run() forks and execs argv directly (never a shell), with
 * stdin on /dev/null and stdout/stderr on two pipes that one poll() loop
 * drains together, so a child that fills one pipe while we read the other
 * cannot deadlock. Each stream is capped (PROC_OUTPUT_CAP, or the caller's
 * ->max): past the cap bytes are read and dropped and ->truncated is set. A
 * CLOEXEC pipe carries exec's errno back, so "no such program" is an error
 * of its own rather than exit 127. The wait is bounded: a child still
 * running after PROC_TIMEOUT_MS is killed. proc_run_timed() takes its own
 * bound and starts the program in a process group of its own, so a timeout
 * kills the program and everything it started (a cloud CLI that hangs in a
 * child). git queries
 * (store/gitinfo.c), `ssh -G` (transport/hosts.c) and the packer's file list
 * go through it. */
#define _GNU_SOURCE
#include "core/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/timeutil.h"
#include "core/banned.h"

#define PROC_TIMEOUT_MS (10 * 60 * 1000)

static void describe_argv(struct strbuf *sb, const char *const *argv)
{
	int i;
	for (i = 0; argv[i] && i < 3; i++) {
		if (i)
			strbuf_addch(sb, ' ');
		strbuf_addstr(sb, argv[i]);
	}
	if (argv[i])
		strbuf_addstr(sb, " ...");
}

static void append_capped(struct strbuf *sb, const char *data, size_t n)
{
	size_t cap = sb->max ? sb->max : PROC_OUTPUT_CAP;
	if (sb->len >= cap) {
		sb->truncated = 1;
		return;
	}
	if (n > cap - sb->len) {
		n = cap - sb->len;
		sb->truncated = 1;
	}
	strbuf_add(sb, data, n);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Child side: never returns. Only async-signal-safe calls before exec. */
static void child_exec(const char *dir, const char *const *argv, int out_w, int err_w,
		       int status_w, int own_group)
{
	int e;
	int devnull = open("/dev/null", O_RDONLY);
	if (devnull >= 0) {
		dup2(devnull, 0);
		if (devnull > 2)
			close(devnull);
	}
	dup2(out_w, 1);
	dup2(err_w, 2);
	if (out_w > 2)
		close(out_w);
	if (err_w > 2)
		close(err_w);
	signal(SIGPIPE, SIG_DFL);
	if (own_group)
		setpgid(0, 0);
	{
		/* a controller thread may block signals; the program must not inherit that */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
	}
	if (dir && chdir(dir) < 0) {
		e = errno;
		e = -e; /* negative: chdir failed */
		if (write(status_w, &e, sizeof(e)) < 0)
			_exit(126);
		_exit(126);
	}
	execvp(argv[0], (char *const *)argv);
	e = errno;
	if (write(status_w, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

static enum go_status run_bounded(const char *dir, const char *const *argv, struct strbuf *out,
				  struct strbuf *errout, int *exit_code, int timeout_ms,
				  int own_group, struct strbuf *err)
{
	int outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, stp[2] = { -1, -1 };
	struct strbuf discard_out = STRBUF_INIT, discard_err = STRBUF_INIT;
	struct strbuf *sinks[2];
	struct strbuf what = STRBUF_INIT;
	int64_t deadline = time_mono_ms() + timeout_ms;
	enum go_status st = GO_OK;
	int fds[2];
	int status = 0, exec_errno = 0, timed_out = 0;
	pid_t pid;
	ssize_t n;

	if (!argv || !argv[0])
		return go_fail(err, GO_ERR_INTERNAL, "proc_run: empty argument list");
	describe_argv(&what, argv);
	sinks[0] = out ? out : &discard_out;
	sinks[1] = errout ? errout : &discard_err;
	discard_out.max = discard_err.max = 1;

	if (pipe2(outp, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0 ||
	    pipe2(stp, O_CLOEXEC) < 0) {
		st = go_fail(err, GO_ERR_IO, "cannot create a pipe for '%s': %s", what.buf,
			     strerror(errno));
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		st = go_fail(err, GO_ERR_IO, "cannot start '%s': fork: %s", what.buf,
			     strerror(errno));
		goto out;
	}
	if (pid == 0)
		child_exec(dir, argv, outp[1], errp[1], stp[1], own_group);

	close_fd(&outp[1]);
	close_fd(&errp[1]);
	close_fd(&stp[1]);
	fds[0] = outp[0];
	fds[1] = errp[0];
	while (fds[0] >= 0 || fds[1] >= 0) {
		struct pollfd pf[2];
		int np = 0, i, rc;
		int64_t left = deadline - time_mono_ms();
		char buf[65536];

		if (left <= 0) {
			timed_out = 1;
			if (own_group)
				kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			break;
		}
		for (i = 0; i < 2; i++) {
			if (fds[i] >= 0) {
				pf[np].fd = fds[i];
				pf[np].events = POLLIN;
				pf[np].revents = 0;
				np++;
			}
		}
		rc = poll(pf, (nfds_t)np, left > 1000 ? 1000 : (int)left);
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			kill(pid, SIGKILL);
			st = go_fail(err, GO_ERR_IO, "cannot poll the output of '%s': %s",
				     what.buf, strerror(errno));
			break;
		}
		for (i = 0; i < np; i++) {
			int which = pf[i].fd == fds[0] ? 0 : 1;
			if (!pf[i].revents)
				continue;
			n = read(pf[i].fd, buf, sizeof(buf));
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) {
				close_fd(&fds[which]);
				if (which == 0)
					outp[0] = -1;
				else
					errp[0] = -1;
				continue;
			}
			append_capped(sinks[which], buf, (size_t)n);
		}
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			if (st == GO_OK)
				st = go_fail(err, GO_ERR_IO, "cannot wait for '%s': %s", what.buf,
					     strerror(errno));
			goto out;
		}
	}
	do {
		n = read(stp[0], &exec_errno, sizeof(exec_errno));
	} while (n < 0 && errno == EINTR);
	if (st != GO_OK)
		goto out;
	if (n == (ssize_t)sizeof(exec_errno)) {
		if (exec_errno < 0)
			st = go_fail(err, GO_ERR_IO, "cannot run '%s' in '%s': %s", what.buf,
				     dir ? dir : ".", strerror(-exec_errno));
		else
			st = go_fail(err, exec_errno == ENOENT ? GO_ERR_NOT_FOUND : GO_ERR_IO,
				     "cannot run '%s': %s", argv[0], strerror(exec_errno));
		goto out;
	}
	if (timed_out) {
		st = go_fail(err, GO_ERR_TIMEOUT, "'%s' did not finish within %d s and was killed",
			     what.buf, (timeout_ms + 999) / 1000);
		goto out;
	}
	{
		int code = WIFEXITED(status) ? WEXITSTATUS(status)
			   : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 255;
		if (exit_code) {
			*exit_code = code;
		} else if (code != 0) {
			struct strbuf line = STRBUF_INIT;
			strbuf_add(&line, sinks[1]->buf, strcspn(sinks[1]->buf, "\n"));
			st = go_fail(err, GO_ERR_IO, "'%s' failed with exit status %d%s%s",
				     what.buf, code, line.len ? ": " : "", line.buf);
			strbuf_release(&line);
		}
	}
out:
	close_fd(&outp[0]);
	close_fd(&outp[1]);
	close_fd(&errp[0]);
	close_fd(&errp[1]);
	close_fd(&stp[0]);
	close_fd(&stp[1]);
	strbuf_release(&discard_out);
	strbuf_release(&discard_err);
	strbuf_release(&what);
	return st;
}

enum go_status proc_run(const char *dir, const char *const *argv, struct strbuf *out,
			struct strbuf *errout, int *exit_code, struct strbuf *err)
{
	return run_bounded(dir, argv, out, errout, exit_code, PROC_TIMEOUT_MS, 0, err);
}

enum go_status proc_run_timed(const char *dir, const char *const *argv, struct strbuf *out,
			      struct strbuf *errout, int *exit_code, int timeout_ms,
			      struct strbuf *err)
{
	if (timeout_ms <= 0)
		return go_fail(err, GO_ERR_INTERNAL, "proc_run_timed: timeout %d ms", timeout_ms);
	return run_bounded(dir, argv, out, errout, exit_code, timeout_ms, 1, err);
}
