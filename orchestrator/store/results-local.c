/* results-local.c -- the results store in a local directory: one file per key (results.h).
 *
 * Key "objects/ab/abcd..." is the file DIR/objects/ab/abcd...; an object is
 * written beside its name and linked into place (fs_write_new), a manifest
 * written and renamed over (fs_write_atomic), so a reader never sees part
 * of either and two writers never mix their bytes. */
#include "store/results.h"
#include "core/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/banned.h"

struct local {
	char *dir;
};

static enum go_status l_get(void *ctx, const char *key, struct strbuf *out, struct strbuf *err)
{
	struct local *l = ctx;
	char *path = xstrfmt("%s/%s", l->dir, key);
	enum go_status st;
	if (access(path, F_OK) != 0 && errno == ENOENT)
		st = go_fail(err, GO_ERR_NOT_FOUND, "'%s' is not there", path);
	else
		st = fs_read_file(path, out, err);
	free(path);
	return st;
}

static enum go_status l_put(void *ctx, const char *key, const void *data, size_t len,
			    struct strbuf *err)
{
	struct local *l = ctx;
	char *path = xstrfmt("%s/%s", l->dir, key), *parent = fs_dirname(path);
	enum go_status st = fs_mkdir_p(parent, 0755, err);
	if (st == GO_OK && !strncmp(key, "objects/", 8)) {
		/* an object's bytes follow from its name: whoever links it first wins */
		st = fs_write_new(path, data, len, err);
		if (st == GO_ERR_USAGE && fs_is_file(path))
			st = GO_OK;
	} else if (st == GO_OK) {
		st = fs_write_atomic(path, data, len, err);
	}
	free(parent);
	free(path);
	return st;
}

static enum go_status l_exists(void *ctx, const char *key, int *yes, struct strbuf *err)
{
	struct local *l = ctx;
	char *path = xstrfmt("%s/%s", l->dir, key);
	*yes = fs_is_file(path);
	free(path);
	return GO_OK;
}

static enum go_status l_list(void *ctx, const char *prefix, char ***names, struct strbuf *err)
{
	struct local *l = ctx;
	char *path = xstrfmt("%s/%s", l->dir, prefix);
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0, alloc = 4;

	*names = xcalloc((size_t)alloc, sizeof(**names));
	free(path);
	if (!d)
		return GO_OK;   /* nothing under it */
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n + 1 >= alloc) {
			alloc *= 2;
			*names = xrealloc(*names, (size_t)alloc * sizeof(**names));
		}
		if (strstr(de->d_name, ".tmp."))
			continue;   /* a write in progress (core/fsutil.c names its temporary files so) */
		(*names)[n++] = xstrdup(de->d_name);
		(*names)[n] = NULL;
	}
	closedir(d);
	return GO_OK;
}

static void l_close(void *ctx)
{
	struct local *l = ctx;
	free(l->dir);
	free(l);
}

static const struct results_ops local_ops = {l_get, l_put, l_exists, l_list, l_close};

struct results_store *results_local_open(const char *dir)
{
	struct results_store *rs = xcalloc(1, sizeof(*rs));
	struct local *l = xcalloc(1, sizeof(*l));
	l->dir = xstrdup(dir);
	rs->ops = &local_ops;
	rs->ctx = l;
	rs->where = xstrdup(dir);
	return rs;
}
