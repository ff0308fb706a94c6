/* gitinfo.c -- git provenance (commit, dirty diff, branch) and proc_run(),
 * the one place gpuorch starts a local program.
 *
 * Design: proc_run() forks and execs argv directly (never a shell), with
 * stdin on /dev/null and stdout/stderr on two pipes that one poll() loop
 * drains together, so a child that fills one pipe while we read the other
 * cannot deadlock. Each stream is capped (PROC_OUTPUT_CAP, or the caller's
 * ->max): past the cap bytes are read and dropped and ->truncated is set. A
 * CLOEXEC pipe carries exec's errno back, so "no such program" is an error
 * of its own rather than exit 127. The wait is bounded: a child still
 * running after PROC_TIMEOUT_MS is killed. All git queries go through it. */
#define _GNU_SOURCE
#include "store/gitinfo.h"
#include "core/hash.h"

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

#define PROC_OUTPUT_CAP ((size_t)64 << 20)
#define PROC_TIMEOUT_MS (10 * 60 * 1000)

/* ---------------------------------------------------------------- proc_run */

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
		       int status_w)
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

enum go_status proc_run(const char *dir, const char *const *argv, struct strbuf *out,
			struct strbuf *errout, int *exit_code, struct strbuf *err)
{
	int outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, stp[2] = { -1, -1 };
	struct strbuf discard_out = STRBUF_INIT, discard_err = STRBUF_INIT;
	struct strbuf *sinks[2];
	struct strbuf what = STRBUF_INIT;
	int64_t deadline = time_mono_ms() + PROC_TIMEOUT_MS;
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
		child_exec(dir, argv, outp[1], errp[1], stp[1]);

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
			     what.buf, PROC_TIMEOUT_MS / 1000);
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

/* ---------------------------------------------------------------- git */

/* Run git with args in root; stdout into out (trimmed of one trailing
 * newline when trim); *code gets the exit status. */
static enum go_status git_run(const char *root, const char *const *argv, struct strbuf *out,
			      struct strbuf *errout, int *code, int trim, struct strbuf *err)
{
	enum go_status st = proc_run(root, argv, out, errout, code, err);
	if (st == GO_ERR_NOT_FOUND)
		return go_fail(err, GO_ERR_GIT, "cannot run 'git': not found on PATH; install git");
	if (st != GO_OK)
		return st == GO_ERR_TIMEOUT ? st : GO_ERR_GIT;
	if (trim && out->len && out->buf[out->len - 1] == '\n')
		strbuf_setlen(out, out->len - 1);
	return GO_OK;
}

static void first_line(struct strbuf *dst, const struct strbuf *src)
{
	strbuf_reset(dst);
	strbuf_add(dst, src->buf, strcspn(src->buf, "\n"));
}

static int is_hex40(const char *s)
{
	size_t i;
	for (i = 0; i < 40; i++)
		if (!strchr("0123456789abcdef", s[i]) || !s[i])
			return 0;
	return s[40] == '\0';
}

enum go_status git_info_worktree(const char *root, struct git_info *gi, struct strbuf *err)
{
	struct strbuf out = STRBUF_INIT, eo = STRBUF_INIT, msg = STRBUF_INIT;
	enum go_status st;
	int code = 0;
	const char *top[] = { "git", "rev-parse", "--show-toplevel", NULL };
	const char *head[] = { "git", "rev-parse", "--verify", "-q", "HEAD^{commit}", NULL };
	const char *status[] = { "git", "status", "--porcelain", "--untracked-files=no", NULL };
	const char *branch[] = { "git", "symbolic-ref", "--short", "-q", "HEAD", NULL };
	const char *empty_tree[] = { "git", "hash-object", "-t", "tree", "/dev/null", NULL };

	memset(gi, 0, sizeof(*gi));
	st = git_run(root, top, &out, &eo, &code, 1, err);
	if (st != GO_OK)
		goto out;
	if (code != 0) /* not a repository: no provenance, not an error */
		goto out;
	gi->is_repo = 1;

	strbuf_reset(&out);
	st = git_run(root, head, &out, &eo, &code, 1, err);
	if (st != GO_OK)
		goto out;
	if (code == 0 && is_hex40(out.buf))
		memcpy(gi->commit, out.buf, 41);

	strbuf_reset(&out);
	strbuf_reset(&eo);
	st = git_run(root, branch, &out, &eo, &code, 1, err);
	if (st != GO_OK)
		goto out;
	if (code == 0 && out.len)
		gi->branch = xstrdup(out.buf);

	if (!gi->commit[0]) {
		/* No commits yet: everything tracked is "changed"; the diff is
		 * against the empty tree. */
		gi->dirty = 1;
		strbuf_reset(&out);
		st = git_run(root, empty_tree, &out, &eo, &code, 1, err);
		if (st != GO_OK)
			goto out;
		if (code != 0) {
			first_line(&msg, &eo);
			st = go_fail(err, GO_ERR_GIT, "cannot compute git's empty tree in '%s': %s",
				     root, msg.buf);
			goto out;
		}
	} else {
		strbuf_reset(&out);
		strbuf_reset(&eo);
		st = git_run(root, status, &out, &eo, &code, 0, err);
		if (st != GO_OK)
			goto out;
		if (code != 0) {
			first_line(&msg, &eo);
			st = go_fail(err, GO_ERR_GIT, "'git status' failed in '%s': %s", root, msg.buf);
			goto out;
		}
		gi->dirty = out.len > 0;
		strbuf_reset(&out);
		strbuf_addstr(&out, "HEAD");
	}

	if (gi->dirty) {
		struct strbuf diff = STRBUF_INIT;
		char *base = strbuf_detach(&out, NULL);
		const char *dargv[] = { "git", "diff", "--binary", "--no-color", "--no-ext-diff",
					base, "--", NULL };
		strbuf_reset(&eo);
		st = git_run(root, dargv, &diff, &eo, &code, 0, err);
		free(base);
		if (st == GO_OK && code != 0) {
			first_line(&msg, &eo);
			st = go_fail(err, GO_ERR_GIT, "'git diff' failed in '%s': %s", root, msg.buf);
		}
		if (st == GO_OK && diff.truncated)
			st = go_fail(err, GO_ERR_GIT,
				     "the diff of the work tree in '%s' is over %zu MiB; commit the changes and use --commit",
				     root, PROC_OUTPUT_CAP >> 20);
		if (st != GO_OK) {
			strbuf_release(&diff);
			goto out;
		}
		sha256_hex(diff.buf, diff.len, gi->diff_sha256);
		gi->diff = strbuf_detach(&diff, NULL);
	}
out:
	if (st != GO_OK)
		git_info_release(gi);
	strbuf_release(&out);
	strbuf_release(&eo);
	strbuf_release(&msg);
	return st;
}

enum go_status git_resolve(const char *root, const char *rev, char out[41], struct strbuf *err)
{
	struct strbuf o = STRBUF_INIT, eo = STRBUF_INIT, spec = STRBUF_INIT;
	enum go_status st;
	int code = 0;

	out[0] = '\0';
	if (!*rev || *rev == '-')
		return go_fail(err, GO_ERR_GIT, "unknown revision '%s' in '%s'", rev, root);
	strbuf_addf(&spec, "%s^{commit}", rev);
	{
		const char *argv[] = { "git", "rev-parse", "--verify", "-q", spec.buf, NULL };
		st = git_run(root, argv, &o, &eo, &code, 1, err);
	}
	if (st == GO_OK && (code != 0 || !is_hex40(o.buf)))
		st = go_fail(err, GO_ERR_GIT,
			     "unknown revision '%s' in '%s'; give a commit, branch or tag that exists there",
			     rev, root);
	if (st == GO_OK)
		memcpy(out, o.buf, 41);
	strbuf_release(&o);
	strbuf_release(&eo);
	strbuf_release(&spec);
	return st;
}

enum go_status git_show_file(const char *root, const char *rev, const char *path,
			     struct strbuf *out, struct strbuf *err)
{
	struct strbuf obj = STRBUF_INIT, eo = STRBUF_INIT, data = STRBUF_INIT;
	char commit[41];
	enum go_status st;
	int code = 0;

	st = git_resolve(root, rev, commit, err);
	if (st != GO_OK)
		return st;
	/* "./" makes the path relative to root, like the work-tree packer. */
	strbuf_addf(&obj, "%s:./%s", commit, path);
	{
		const char *argv[] = { "git", "cat-file", "blob", obj.buf, NULL };
		st = git_run(root, argv, &data, &eo, &code, 0, err);
	}
	if (st == GO_OK && code != 0)
		st = go_fail(err, GO_ERR_NOT_FOUND, "'%s' does not exist in commit %.12s ('%s')",
			     path, commit, rev);
	if (st == GO_OK && data.truncated)
		st = go_fail(err, GO_ERR_IO, "'%s' in commit %.12s is over %zu MiB", path, commit,
			     PROC_OUTPUT_CAP >> 20);
	if (st == GO_OK)
		strbuf_add(out, data.buf, data.len);
	strbuf_release(&obj);
	strbuf_release(&eo);
	strbuf_release(&data);
	return st;
}

void git_info_release(struct git_info *gi)
{
	free(gi->diff);
	free(gi->branch);
	memset(gi, 0, sizeof(*gi));
}
