/* agent-tree.c -- a content's sources made from the host's blob store by
 * the agent itself (attach), where start.sh runs awk, mv, find and perl:
 * CDIR/manifest written, CDIR/src/ made with every file a hard link to its
 * blob (one link(2) a file; no byte written twice) and an executable one
 * (manifest mode 755) a copy of its own, chmod 700 (the blob's mode is
 * shared by its links); a copy too where a link cannot be made (another
 * file system). Then CDIR/tree.txt says how, and CDIR/.complete is written
 * last. No process is forked (issue 35: a first run's host CPU). Where
 * blobs are missing it names them as start.sh does (through the execd,
 * whose command cannot wait for them on its stdin).
 *
 * The manifest is remote/blobs.c's: one line per file, "SHA256 MODE PATH"
 * (MODE 644 or 755, PATH relative, no "." or ".." part). A blob counts as
 * there when the put or the tar left it as it was: a regular file, 0400,
 * mtime 0 (older than 10,000 days: start.sh's find); one written or
 * chmodded through a content's src/ since is not: it is removed and asked
 * for again, as a missing one (start.sh removes every such blob of the
 * store with one find; the agent looks at the manifest's alone). */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BLOB_OLD_S (10000L * 86400L)   /* start.sh: find -mtime +10000 */

/* one manifest line */
struct entry {
	char hash[65];
	int exec;
	const char *path;   /* into the line's copy */
	size_t plen;
};

static int hex64(const char *s)
{
	int i;
	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* a relative path with no empty, "." or ".." part */
static int plain_path(const char *p, size_t n)
{
	size_t i = 0, s;
	if (!n || p[0] == '/')
		return 0;
	while (i <= n) {
		for (s = i; i < n && p[i] != '/'; i++)
			;
		if (i == s || (i - s == 1 && p[s] == '.') || (i - s == 2 && p[s] == '.' && p[s + 1] == '.'))
			return 0;
		i++;
	}
	return 1;
}

/* the line at *pos (up to its '\n') into e; 1 one, 0 the end, -1 not a manifest line */
static int next_entry(const char *m, size_t *pos, struct entry *e)
{
	const char *l = m + *pos, *nl;
	size_t n;

	if (!*l)
		return 0;
	nl = strchr(l, '\n');
	n = nl ? (size_t)(nl - l) : strlen(l);
	*pos += n + (nl ? 1 : 0);
	if (n < 64 + 5 + 1 || !hex64(l) || l[64] != ' ' || l[68] != ' ' ||
	    (strncmp(l + 65, "644", 3) && strncmp(l + 65, "755", 3)))
		return -1;
	memcpy(e->hash, l, 64);
	e->hash[64] = '\0';
	e->exec = l[65] == '7';
	e->path = l + 69;
	e->plen = n - 69;
	if (!plain_path(e->path, e->plen) || memchr(e->path, '\0', e->plen))
		return -1;
	return 1;
}

int tree_lacks(const char *bdir, const char *manifest, int say)
{
	struct entry e;
	struct stat st;
	struct sb said = { 0 };   /* the hashes said, each once (one content, two paths) */
	size_t pos = 0;
	time_t old = time(NULL) - BLOB_OLD_S;
	int r, n = 0, fd = open(bdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	while ((r = next_entry(manifest, &pos, &e)) == 1) {
		int there = fd >= 0 && fstatat(fd, e.hash, &st, AT_SYMLINK_NOFOLLOW) == 0;
		if (there && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0400 && st.st_mtime < old)
			continue;
		if (said.buf && strstr(said.buf, e.hash))   /* each ends in a newline: no match spans two */
			continue;
		n++;
		if (!say)
			break;
		if (there && S_ISREG(st.st_mode))
			unlinkat(fd, e.hash, 0);   /* written through a src/: it goes again */
		printf("gpuorch-start: missing %s\n", e.hash);
		sb_adds(&said, e.hash);
		sb_adds(&said, "\n");
	}
	if (fd >= 0)
		xclose(fd);
	sb_free(&said);
	return r < 0 ? -1 : n;
}

/* the directories above path in src (fd sfd), made where the file before
 * (its directory: *last) did not already need them */
static int parents(int sfd, const struct entry *e, struct sb *last)
{
	const char *slash = NULL;
	char *d;
	size_t i, n;

	for (i = 0; i < e->plen; i++)
		if (e->path[i] == '/')
			slash = e->path + i;
	n = slash ? (size_t)(slash - e->path) : 0;
	if (!n || (last->len == n && !memcmp(last->buf, e->path, n)))
		return 0;
	d = xfmt("%.*s", (int)n, e->path);
	for (i = 1; i <= n; i++) {
		if (d[i] != '/' && d[i] != '\0')
			continue;
		d[i] = '\0';
		if (mkdirat(sfd, d, 0777) < 0 && errno != EEXIST) {
			free(d);
			return -1;
		}
		d[i] = i < n ? '/' : '\0';
	}
	free(d);
	last->len = 0;
	sb_add(last, e->path, n);
	return 0;
}

/* the blob's bytes into a new file: sendfile (no copy through this
 * process), read and write where the kernel cannot */
static int copy_blob(int bfd, int sfd, const char *hash, const char *path, int exec)
{
	int in = openat(bfd, hash, O_RDONLY | O_CLOEXEC), out = -1, rc = -1;
	struct stat st;
	off_t off = 0;

	if (in < 0 || fstat(in, &st) < 0)
		goto out;
	out = openat(sfd, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, exec ? 0777 : 0666);
	if (out < 0)
		goto out;
	while (off < st.st_size) {
		ssize_t n = sendfile(out, in, &off, (size_t)(st.st_size - off) < (1u << 30)
							 ? (size_t)(st.st_size - off) : (1u << 30));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EINVAL || errno == ENOSYS) && off == 0)
			break;   /* below: by hand */
		if (n <= 0)
			goto out;
	}
	if (off < st.st_size) {
		static char buf[1 << 20];
		ssize_t n;
		while ((n = read(in, buf, sizeof(buf))) != 0) {
			ssize_t w = 0;
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				goto out;
			while (w < n) {
				ssize_t k = write(out, buf + w, (size_t)(n - w));
				if (k < 0 && errno == EINTR)
					continue;
				if (k <= 0)
					goto out;
				w += k;
			}
		}
	}
	rc = exec && fchmod(out, 0700) < 0 ? -1 : 0;
out:
	if (out >= 0 && close(out) < 0)
		rc = -1;
	if (in >= 0)
		close(in);
	return rc;
}

/* CDIR/src from the manifest: 0, or -1 with errno and *what (the path) */
static int make_src(const char *cdir, const char *bdir, const char *manifest, int *nl, int *nc,
		    char **what)
{
	struct sb last = { 0 };
	struct entry e;
	size_t pos = 0;
	char *src = xfmt("%s/src", cdir);
	int bfd = -1, sfd = -1, r, rc = -1;

	*what = xstrdup(src);
	if (rm_rf(src) < 0 || mkdir(src, 0777) < 0 ||
	    (sfd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		goto out;
	free(*what);
	*what = xstrdup(bdir);
	if ((bfd = open(bdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		goto out;
	while ((r = next_entry(manifest, &pos, &e)) == 1) {
		char *p = xfmt("%.*s", (int)e.plen, e.path);
		free(*what);
		*what = xfmt("%s/%s", src, p);
		if (parents(sfd, &e, &last) < 0) {
			free(p);
			goto out;
		}
		if (!e.exec && linkat(bfd, e.hash, sfd, p, 0) == 0) {
			(*nl)++;
		} else if (copy_blob(bfd, sfd, e.hash, p, e.exec) == 0) {
			(*nc)++;
		} else {
			free(p);
			goto out;
		}
		free(p);
	}
	rc = r == 0 ? 0 : -1;
	if (r < 0)
		errno = EINVAL;
out:
	if (bfd >= 0)
		close(bfd);
	if (sfd >= 0)
		close(sfd);
	sb_free(&last);
	free(src);
	return rc;
}

int tree_make(const char *cdir, const char *bdir, const char *manifest, struct sb *err)
{
	char *p = NULL, *t = NULL, *what = NULL;
	int nl = 0, nc = 0, rc = -1, lfd;

	if (mkdir_p(cdir) < 0) {
		sb_addf(err, "%s: %s", cdir, strerror(errno));
		return -1;
	}
	/* two runs of the same sources on one host make one content: the
	 * second waits for the first and finds it complete (make_src starts by
	 * removing src/, so two at once would remove each other's files) */
	p = xfmt("%s/.lock", cdir);
	lfd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (lfd < 0 || flock(lfd, LOCK_EX) < 0) {
		sb_addf(err, "%s: %s", p, strerror(errno));
		goto out;
	}
	free(p);
	p = xfmt("%s/.complete", cdir);
	if (is_file(p)) {
		rc = 0;
		goto out;
	}
	free(p);
	p = xfmt("%s/manifest", cdir);
	t = xfmt("%s/manifest.tmp", cdir);
	if (write_atomic(p, t, manifest) < 0) {
		sb_addf(err, "%s: %s", p, strerror(errno));
		unlink(t);
		goto out;
	}
	if (make_src(cdir, bdir, manifest, &nl, &nc, &what) < 0) {
		int e = errno;
		char *src = xfmt("%s/src", cdir);
		sb_addf(err, "%s: %s", what, strerror(e));
		rm_rf(src);   /* nothing half made stays */
		free(src);
		goto out;
	}
	free(p), free(t);
	p = xfmt("%s/tree.txt", cdir);
	t = xfmt("linked from the blobs (gpuorch-agent): %d linked, %d copied\n", nl, nc);
	if (write_file(p, t, strlen(t)) < 0) {
		sb_addf(err, "%s: %s", p, strerror(errno));
		goto out;
	}
	free(p);
	p = xfmt("%s/.complete", cdir);
	if (write_file(p, "", 0) < 0) {
		sb_addf(err, "%s: %s", p, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (lfd >= 0)
		close(lfd);   /* the lock goes with it */
	free(p), free(t), free(what);
	return rc;
}
