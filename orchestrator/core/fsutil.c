/* fsutil.c -- local file helpers; the only place that writes files atomically. */
#define _GNU_SOURCE
#include "core/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/banned.h"

enum go_status fs_read_file_stat(const char *path, struct strbuf *sb, struct stat *st,
				 struct strbuf *err)
{
	struct stat own;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return go_fail(err, go_from_errno(errno), "cannot open '%s': %s", path,
			       strerror(errno));
	/* the file read is the file described: a rename over path after the
	 * open changes neither */
	if (fstat(fd, st ? st : &own) < 0) {
		int e = errno;
		close(fd);
		return go_fail(err, GO_ERR_IO, "cannot stat '%s': %s", path, strerror(e));
	}
	/* room for the whole file at once (one allocation, not a doubling per
	 * 64 KiB read); a file that grew meanwhile still reads whole */
	if ((st ? st : &own)->st_size > 0)
		strbuf_grow(sb, (size_t)(st ? st : &own)->st_size + 1);
	for (;;) {
		if (sb->alloc - sb->len < 2)   /* room for 1 byte and the NUL: EOF is a read of 0 */
			strbuf_grow(sb, 65536);
		n = read(fd, sb->buf + sb->len, sb->alloc - sb->len - 1);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			return go_fail(err, GO_ERR_IO, "cannot read '%s': %s", path, strerror(e));
		}
		sb->len += (size_t)n;
		sb->buf[sb->len] = '\0';
	}
	close(fd);
	return GO_OK;
}

enum go_status fs_read_file(const char *path, struct strbuf *sb, struct strbuf *err)
{
	return fs_read_file_stat(path, sb, NULL, err);
}

char *fs_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xstrfmt("%.*s", (int)(slash - path), path);
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc;
	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/* replace: rename over path (else link: never replacing); sync: fsync the
 * file before and its directory after (durable once this returns) */
static enum go_status write_atomic(const char *path, const void *data, size_t len,
				   int replace, int sync, struct strbuf *err)
{
	char *tmp = xstrfmt("%s.tmp.XXXXXX", path);
	char *dir = fs_dirname(path);
	const char *p = data;
	enum go_status st = GO_OK;
	int fd = mkostemp(tmp, O_CLOEXEC);

	if (fd < 0) {
		st = go_fail(err, GO_ERR_IO, "cannot create a temporary file beside '%s': %s",
			     path, strerror(errno));
		goto out;
	}
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			st = go_fail(err, GO_ERR_IO, "cannot write '%s': %s", tmp, strerror(errno));
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	if (st == GO_OK && fchmod(fd, 0644) < 0)
		st = go_fail(err, GO_ERR_IO, "cannot chmod '%s': %s", tmp, strerror(errno));
	if (st == GO_OK && sync && fsync(fd) < 0)
		st = go_fail(err, GO_ERR_IO, "cannot fsync '%s': %s", tmp, strerror(errno));
	if (close(fd) < 0 && st == GO_OK)
		st = go_fail(err, GO_ERR_IO, "cannot close '%s': %s", tmp, strerror(errno));
	if (st == GO_OK && replace && rename(tmp, path) < 0)
		st = go_fail(err, GO_ERR_IO, "cannot rename '%s' to '%s': %s", tmp, path,
			     strerror(errno));
	if (st == GO_OK && !replace && link(tmp, path) < 0) {
		if (errno == EEXIST)
			st = go_fail(err, GO_ERR_USAGE, "'%s' exists already; it is left as it is",
				     path);
		else
			st = go_fail(err, GO_ERR_IO, "cannot create '%s': %s", path, strerror(errno));
	}
	if (st != GO_OK || !replace)
		unlink(tmp);
	if (st == GO_OK && sync)
		fsync_dir(dir);
out:
	free(tmp);
	free(dir);
	return st;
}

enum go_status fs_write_atomic(const char *path, const void *data, size_t len,
			       struct strbuf *err)
{
	return write_atomic(path, data, len, 1, 1, err);
}

enum go_status fs_write_derived(const char *path, const void *data, size_t len,
				struct strbuf *err)
{
	return write_atomic(path, data, len, 1, 0, err);
}

enum go_status fs_write_new(const char *path, const void *data, size_t len, struct strbuf *err)
{
	return write_atomic(path, data, len, 0, 1, err);
}

enum go_status fs_mkdir_p(const char *path, int mode, struct strbuf *err)
{
	char *p = xstrdup(path);
	char *s = p;
	enum go_status st = GO_OK;

	if (*s == '/')
		s++;
	for (;; s++) {
		int end = (*s == '\0');
		if (*s == '/' || end) {
			char c = *s;
			*s = '\0';
			if (*p && mkdir(p, (mode_t)mode) < 0 && errno != EEXIST) {
				st = go_fail(err, GO_ERR_IO, "cannot create directory '%s': %s", p,
					     strerror(errno));
				break;
			}
			*s = c;
			if (end)
				break;
		}
	}
	if (st == GO_OK && !fs_is_dir(path))
		st = go_fail(err, GO_ERR_IO, "'%s' exists and is not a directory", path);
	free(p);
	return st;
}

int fs_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int fs_is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

void fs_remove_tree(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *de;

	if (lstat(path, &st) < 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlink(path);
		return;
	}
	d = opendir(path);
	if (d) {
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			char *child = xstrfmt("%s/%s", path, de->d_name);
			fs_remove_tree(child);
			free(child);
		}
		closedir(d);
	}
	rmdir(path);
}
