/* test_agent_tree.c -- the host agent's tree_make (orchestrator/host/agent-tree.c):
 * a content made from the blob store, and two processes making the same
 * content at once (two runs of the same sources on one host): both succeed
 * and the tree is whole, never one's files removed by the other. */
#include "agent.h"
#include "check.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utime.h>

/* the agent's state, which agent-main.c defines (not linked here) */
struct agent A;

#define NFILES 2000
#define ROUNDS 6

/* NFILES blobs in bdir (0400, mtime 0, as the store keeps them) and their manifest */
static void make_blobs(const char *bdir, struct sb *m)
{
	int i;
	mkdir(bdir, 0777);
	for (i = 0; i < NFILES; i++) {
		char h[65], *path, line[256];
		struct utimbuf zero = { 0, 0 };
		int fd;
		snprintf(h, sizeof h, "%064x", i + 1);
		path = xfmt("%s/%s", bdir, h);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0400);
		if (fd >= 0) {
			dprintf(fd, "file %d\n", i);
			close(fd);
		}
		utime(path, &zero);
		free(path);
		snprintf(line, sizeof line, "%s 644 d%d/f%d.c\n", h, i % 10, i);
		sb_adds(m, line);
	}
}

/* files of the manifest missing from cdir/src */
static int missing(const char *cdir)
{
	int i, n = 0;
	for (i = 0; i < NFILES; i++) {
		char *q = xfmt("%s/src/d%d/f%d.c", cdir, i % 10, i);
		n += access(q, F_OK) != 0;
		free(q);
	}
	return n;
}

/* two processes make cdir at once; each exits 0 when its tree_make
 * succeeded and the tree was whole right after it */
static int race(const char *cdir, const char *bdir, const char *manifest)
{
	pid_t p[2];
	int k, st, bad = 0;
	fflush(stdout);   /* a fork's copy of the buffer would print twice */
	for (k = 0; k < 2; k++)
		if ((p[k] = fork()) == 0) {
			struct sb err = { 0 };
			int rc = tree_make(cdir, bdir, manifest, &err);
			_exit(rc == 0 && missing(cdir) == 0 ? 0 : 1);
		}
	for (k = 0; k < 2; k++)
		bad += p[k] < 0 || waitpid(p[k], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st);
	return bad;
}

int main(void)
{
	char tmpl[] = "/tmp/test_agent_tree.XXXXXX", *dir = mkdtemp(tmpl), *bdir, *cdir;
	struct sb m = { 0 }, err = { 0 };
	int r, bad = 0, whole = 1;

	if (!dir) {
		printf("not ok 1 - setup\n");
		return 1;
	}
	bdir = xfmt("%s/blobs", dir);
	make_blobs(bdir, &m);
	cdir = xfmt("%s/content/one", dir);
	CHECK(tree_make(cdir, bdir, m.buf, &err) == 0 && missing(cdir) == 0,
	      "a content from the blob store: every file of the manifest", "%s", err.buf ? err.buf : "");
	CHECK(tree_make(cdir, bdir, m.buf, &err) == 0 && missing(cdir) == 0,
	      "made again when complete: still whole", "%s", err.buf ? err.buf : "");
	for (r = 0; r < ROUNDS; r++) {
		/* on the stack: the makers are forks that _exit, and free nothing */
		char c[512], done[600];
		if ((size_t)snprintf(c, sizeof c, "%s/content/race%d", dir, r) >= sizeof c ||
		    (size_t)snprintf(done, sizeof done, "%s/.complete", c) >= sizeof done)
			return 1;
		bad += race(c, bdir, m.buf);
		whole &= missing(c) == 0 && is_file(done);
	}
	CHECK(bad == 0 && whole, "two makers of one content at once: both succeed, the tree whole, .complete",
	      "%d makers failed or saw files missing; whole %d", bad, whole);
	if (rm_rf(dir) < 0)
		printf("# could not remove %s\n", dir);
	free(bdir);
	free(cdir);
	sb_free(&m);
	sb_free(&err);
	return check_summary();
}
