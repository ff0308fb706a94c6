/* results.c -- the results store's objects, manifests, push and pull (results.h).
 *
 * The backend only moves whole objects by key; everything that makes the
 * store content-addressed is here: SHA-256 names (core/hash.c), zlib where
 * it saves a tenth or more, the manifest that maps a run directory's paths
 * to objects (cJSON), and the check of every object read against its name. */
#include "store/results.h"
#include "core/fsutil.h"
#include "core/hash.h"
#include "core/jsonutil.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>
#include "core/banned.h"

#define MANIFEST_SCHEMA "gpuorch-results-manifest/1"
#define OBJECT_MAX ((size_t)1 << 32)     /* bytes an object may inflate to */
#define RUN_FILES_MAX 100000             /* files of one run directory */

void results_close(struct results_store *rs)
{
	if (!rs)
		return;
	if (rs->ops && rs->ops->close)
		rs->ops->close(rs->ctx);
	free(rs->where);
	free(rs);
}

static char *object_key(const char *hex)
{
	return xstrfmt("objects/%.2s/%s", hex, hex);
}

static int is_hex64(const char *s)
{
	size_t i;
	for (i = 0; s && i < SHA256_HEX_LEN; i++)
		if (!strchr("0123456789abcdef", s[i]) || !s[i])
			return 0;
	return s && s[SHA256_HEX_LEN] == '\0';
}

/* ---- objects ---- */

enum go_status results_put_object(struct results_store *rs, const void *data, size_t len,
				  char hex[65], int *sent, long long *bytes, struct strbuf *err)
{
	char *key;
	int yes = 0;
	enum go_status st;

	*sent = 0;
	sha256_hex(data, len, hex);
	key = object_key(hex);
	st = rs->ops->exists(rs->ctx, key, &yes, err);
	if (st == GO_OK && !yes) {
		/* compressed where it saves a tenth or more: logs and JSON do, .ncu-rep
		 * (already compressed) does not; the name is the content's either way */
		uLongf clen = compressBound((uLong)len);
		unsigned char *z = len >= 64 ? xmalloc(clen) : NULL;
		if (z && compress2(z, &clen, data, (uLong)len, 6) == Z_OK && clen <= len - len / 10) {
			st = rs->ops->put(rs->ctx, key, z, clen, err);
			*bytes += (long long)clen;
		} else {
			st = rs->ops->put(rs->ctx, key, data, len, err);
			*bytes += (long long)len;
		}
		free(z);
		*sent = st == GO_OK;
	}
	free(key);
	return st;
}

/* The zlib stream in[0..n) inflated into out; 0 when it is not one. */
static int inflated(const unsigned char *in, size_t n, struct strbuf *out)
{
	z_stream zs;
	int rc = Z_OK;
	memset(&zs, 0, sizeof(zs));
	if (inflateInit(&zs) != Z_OK)
		return 0;
	zs.next_in = (unsigned char *)in;
	zs.avail_in = (uInt)n;
	while (rc == Z_OK && out->len < OBJECT_MAX) {
		strbuf_grow(out, 1 << 16);
		zs.next_out = (unsigned char *)out->buf + out->len;
		zs.avail_out = 1 << 16;
		rc = inflate(&zs, Z_NO_FLUSH);
		strbuf_setlen(out, out->len + ((1 << 16) - zs.avail_out));
	}
	inflateEnd(&zs);
	return rc == Z_STREAM_END && zs.avail_in == 0;
}

enum go_status results_get_object(struct results_store *rs, const char *hex, struct strbuf *out,
				  struct strbuf *err)
{
	struct strbuf raw = STRBUF_INIT;
	char *key = object_key(hex), got[SHA256_HEX_LEN + 1] = "";
	enum go_status st = rs->ops->get(rs->ctx, key, &raw, err);

	strbuf_reset(out);
	if (st == GO_ERR_NOT_FOUND) {
		st = go_fail(err, GO_ERR_NOT_FOUND, "object %s is missing from the results store %s "
			     "(a manifest names it): push the run again from a machine that has it",
			     hex, rs->where);
	} else if (st == GO_OK) {
		/* stored compressed or as it is: the content that hashes to the name is the one */
		if (raw.len >= 2 && (unsigned char)raw.buf[0] == 0x78 &&
		    inflated((unsigned char *)raw.buf, raw.len, out))
			sha256_hex(out->buf, out->len, got);
		if (strcmp(got, hex)) {   /* not a zlib stream of it: the bytes as they are */
			strbuf_reset(out);
			strbuf_add(out, raw.buf, raw.len);
			sha256_hex(raw.buf, raw.len, got);
		}
		if (strcmp(got, hex) != 0) {
			strbuf_reset(out);
			st = go_fail(err, GO_ERR_IO, "object %s in the results store %s is corrupt (its "
				     "content does not hash to its name): remove it (%s) and push the "
				     "run again from a machine that has it", hex, rs->where, key);
		}
	}
	strbuf_release(&raw);
	free(key);
	return st;
}

/* ---- a run directory's files ---- */

struct file_list {
	char **path;     /* relative to the run directory */
	int n, alloc;
};

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The plain files under dir/rel, recursively, into fl; a link or a device
 * is an error (a run's files are plain files). */
static enum go_status walk(const char *dir, const char *rel, struct file_list *fl,
			   struct strbuf *err)
{
	char *path = *rel ? xstrfmt("%s/%s", dir, rel) : xstrdup(dir);
	DIR *d = opendir(path);
	struct dirent *de;
	enum go_status st = GO_OK;

	if (!d) {
		st = go_fail(err, GO_ERR_IO, "cannot read the run directory '%s': %s", path,
			     strerror(errno));
		free(path);
		return st;
	}
	while (st == GO_OK && (de = readdir(d))) {
		char *r, *full;
		struct stat sb;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		/* the lock of a live controller, not a file of the run */
		if (!*rel && !strcmp(de->d_name, "controller.lock"))
			continue;
		r = *rel ? xstrfmt("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
		full = xstrfmt("%s/%s", dir, r);
		if (lstat(full, &sb) != 0)
			st = go_fail(err, GO_ERR_IO, "cannot stat '%s': %s", full, strerror(errno));
		else if (S_ISDIR(sb.st_mode))
			st = walk(dir, r, fl, err);
		else if (!S_ISREG(sb.st_mode))
			st = go_fail(err, GO_ERR_IO, "'%s' is not a plain file (a link or a device): a "
				     "run directory's files are pushed as they are; replace it with "
				     "the file it stands for", full);
		else if (fl->n >= RUN_FILES_MAX)
			st = go_fail(err, GO_ERR_IO, "'%s' has more than %d files: not a run directory",
				     dir, RUN_FILES_MAX);
		else {
			if (fl->n == fl->alloc) {
				fl->alloc = fl->alloc ? 2 * fl->alloc : 32;
				fl->path = xrealloc(fl->path, (size_t)fl->alloc * sizeof(*fl->path));
			}
			fl->path[fl->n++] = r;
			r = NULL;
		}
		free(r);
		free(full);
	}
	closedir(d);
	free(path);
	return st;
}

static void file_list_free(struct file_list *fl)
{
	int i;
	for (i = 0; i < fl->n; i++)
		free(fl->path[i]);
	free(fl->path);
}

/* "SLUG" and "RUN-ID" of REPORTS/SLUG/RUN-ID (new strings), or an error. */
static enum go_status split_run_dir(const char *dir, char **slug, char **id, struct strbuf *err)
{
	char *d = xstrdup(dir), *s;
	size_t n = strlen(d);
	while (n > 1 && d[n - 1] == '/')
		d[--n] = '\0';
	s = strrchr(d, '/');
	*slug = *id = NULL;
	if (s && s > d) {
		char *p;
		*s = '\0';
		*id = xstrdup(s + 1);
		p = strrchr(d, '/');
		*slug = xstrdup(p ? p + 1 : d);
	}
	free(d);
	if (!*slug || !**slug || !**id || !strcmp(*slug, "..") || !strcmp(*id, "..") ||
	    !strcmp(*slug, ".") || !strcmp(*id, ".")) {
		free(*slug);
		free(*id);
		*slug = *id = NULL;
		return go_fail(err, GO_ERR_USAGE, "'%s' is not a run directory (REPORTS/EXPERIMENT/"
			       "RUN-ID)", dir);
	}
	return GO_OK;
}

static char *manifest_key(const char *slug, const char *id)
{
	return xstrfmt("runs/%s/%s.json", id, slug);
}

/* ---- push ---- */

/* One file into the store, its manifest row added to files. */
static enum go_status push_file(struct results_store *rs, const char *dir, const char *rel,
				cJSON *files, struct results_counts *n, struct strbuf *err)
{
	char *full = xstrfmt("%s/%s", dir, rel), hex[SHA256_HEX_LEN + 1];
	struct strbuf text = STRBUF_INIT;
	struct stat sb;
	enum go_status st;
	int sent = 0;

	if (stat(full, &sb) != 0)
		st = go_fail(err, GO_ERR_IO, "cannot stat '%s': %s", full, strerror(errno));
	else
		st = fs_read_file(full, &text, err);
	if (st == GO_OK)
		st = results_put_object(rs, text.buf ? text.buf : "", text.len, hex, &sent,
					&n->bytes_sent, err);
	if (st == GO_OK) {
		cJSON *f = cJSON_CreateObject();
		json_add_str(f, "path", rel);
		json_add_str(f, "sha256", hex);
		json_add_num(f, "size", (double)text.len);
		json_add_num(f, "mode", (double)(sb.st_mode & 07777));
		cJSON_AddItemToArray(files, f);
		n->objects_sent += sent;
		n->files++;
	}
	strbuf_release(&text);
	free(full);
	return st;
}

enum go_status results_push_run(struct results_store *rs, const char *dir,
				struct results_counts *n, struct strbuf *err)
{
	struct file_list fl = {0};
	struct strbuf old = STRBUF_INIT, e2 = STRBUF_INIT;
	char *slug = NULL, *id = NULL, *key = NULL, *text = NULL;
	cJSON *m = NULL, *files;
	enum go_status st;
	int i;

	if ((st = split_run_dir(dir, &slug, &id, err)) != GO_OK)
		return st;
	if ((st = walk(dir, "", &fl, err)) != GO_OK)
		goto out;
	qsort(fl.path, (size_t)fl.n, sizeof(*fl.path), by_str);
	m = cJSON_CreateObject();
	json_add_str(m, "schema", MANIFEST_SCHEMA);
	json_add_str(m, "experiment", slug);
	json_add_str(m, "run_id", id);
	files = json_add_arr(m, "files");
	for (i = 0; i < fl.n && st == GO_OK; i++)
		st = push_file(rs, dir, fl.path[i], files, n, err);
	if (st != GO_OK)
		goto out;
	text = cJSON_Print(m);
	key = manifest_key(slug, id);
	/* the manifest last: once it is there, so are its objects */
	st = rs->ops->get(rs->ctx, key, &old, &e2);
	if (st == GO_OK && old.len == strlen(text) && !memcmp(old.buf, text, old.len)) {
		st = GO_OK;   /* the store has this run as it is */
	} else if (st == GO_OK || st == GO_ERR_NOT_FOUND) {
		st = rs->ops->put(rs->ctx, key, text, strlen(text), err);
		n->manifests_sent += st == GO_OK;
	} else {
		st = go_fail(err, st, "%s", e2.buf);
	}
out:
	cJSON_Delete(m);
	cJSON_free(text);
	file_list_free(&fl);
	strbuf_release(&old);
	strbuf_release(&e2);
	free(slug);
	free(id);
	free(key);
	return st;
}

/* ---- pull ---- */

/* A manifest's path: relative, no empty, "." or ".." part. */
static int safe_rel(const char *p)
{
	const char *s = p;
	if (!p || !*p || *p == '/')
		return 0;
	while (*s) {
		size_t n = strcspn(s, "/");
		if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
			return 0;
		s += n;
		if (*s == '/')
			s++;
		if (!*s && s[-1] == '/')
			return 0;
	}
	return 1;
}

/* The manifest of SLUG/RUN-ID checked: its files array, or NULL and err. */
static const cJSON *manifest_files(const cJSON *m, const char *what, struct strbuf *err)
{
	const cJSON *files = cJSON_GetObjectItemCaseSensitive(m, "files"), *f;
	const char *schema = json_str(m, "schema");
	if (!schema || strcmp(schema, MANIFEST_SCHEMA) || !cJSON_IsArray(files)) {
		go_fail(err, GO_ERR_IO, "the manifest of run %s is not a %s manifest: written by "
			"another gpuorch? push the run again", what, MANIFEST_SCHEMA);
		return NULL;
	}
	cJSON_ArrayForEach(f, files) {
		const char *p = json_str(f, "path"), *h = json_str(f, "sha256");
		double mode = json_num(f, "mode", -1), size = json_num(f, "size", -1);
		if (!safe_rel(p) || !is_hex64(h) || mode < 0 || mode > 07777 || size < 0) {
			go_fail(err, GO_ERR_IO, "the manifest of run %s has a bad entry (path '%s'): "
				"push the run again", what, p ? p : "?");
			return NULL;
		}
	}
	return files;
}

/* 1 when the file at path has content hex. */
static int same_content(const char *path, const char *hex)
{
	struct strbuf text = STRBUF_INIT, e = STRBUF_INIT;
	char got[SHA256_HEX_LEN + 1] = "";
	if (fs_read_file(path, &text, &e) == GO_OK)
		sha256_hex(text.buf ? text.buf : "", text.len, got);
	strbuf_release(&text);
	strbuf_release(&e);
	return !strcmp(got, hex);
}

/* One manifest row written into dir. */
static enum go_status pull_file(struct results_store *rs, const char *dir, const cJSON *f,
				struct strbuf *err)
{
	const char *rel = json_str(f, "path"), *hex = json_str(f, "sha256");
	char *full = xstrfmt("%s/%s", dir, rel), *parent = fs_dirname(full);
	struct strbuf data = STRBUF_INIT;
	enum go_status st = results_get_object(rs, hex, &data, err);

	if (st == GO_OK && (double)data.len != json_num(f, "size", -1))
		st = go_fail(err, GO_ERR_IO, "object %s in the results store %s is %zu bytes, not "
			     "the manifest's %.0f for '%s'", hex, rs->where, data.len,
			     json_num(f, "size", -1), rel);
	if (st == GO_OK)
		st = fs_mkdir_p(parent, 0755, err);
	if (st == GO_OK)
		st = fs_write_atomic(full, data.buf ? data.buf : "", data.len, err);
	if (st == GO_OK && chmod(full, (mode_t)json_num(f, "mode", 0644)) != 0)
		st = go_fail(err, GO_ERR_IO, "cannot set the mode of '%s': %s", full, strerror(errno));
	strbuf_release(&data);
	free(parent);
	free(full);
	return st;
}

enum go_status results_pull_run(struct results_store *rs, const char *slug, const char *run_id,
				const char *dir, enum results_clash clash,
				struct results_counts *n, struct strbuf *err)
{
	char *key = manifest_key(slug, run_id), *what = xstrfmt("%s/%s", slug, run_id);
	struct strbuf text = STRBUF_INIT, clashes = STRBUF_INIT;
	const cJSON *files, *f;
	cJSON *m = NULL;
	int nclash = 0;
	char *todo;
	enum go_status st = rs->ops->get(rs->ctx, key, &text, err);

	if (st == GO_ERR_NOT_FOUND)
		st = go_fail(err, GO_ERR_NOT_FOUND, "run %s is not in the results store %s", what,
			     rs->where);
	if (st == GO_OK)
		st = json_parse(text.buf, text.len, key, &m, err);
	if (st != GO_OK || !(files = manifest_files(m, what, err))) {
		st = st != GO_OK ? st : GO_ERR_IO;
		goto out;
	}
	/* what to write, decided before anything is: a refusal leaves the directory as it was */
	todo = xcalloc((size_t)cJSON_GetArraySize(files) + 1, 1);
	{
		int i = 0;
		cJSON_ArrayForEach(f, files) {
			char *full = xstrfmt("%s/%s", dir, json_str(f, "path"));
			struct stat sb;
			n->files++;
			if (lstat(full, &sb) != 0)
				todo[i] = 1;
			else if (!S_ISREG(sb.st_mode) || !same_content(full, json_str(f, "sha256"))) {
				if (clash == RESULTS_OVERWRITE && S_ISREG(sb.st_mode))
					todo[i] = 1;
				else if (clash != RESULTS_KEEP && nclash++ < 5)
					strbuf_addf(&clashes, "%s'%s'", nclash > 1 ? ", " : "", full);
			}
			free(full);
			i++;
		}
	}
	if (nclash) {
		st = go_fail(err, GO_ERR_USAGE, "%d file%s of run %s differ%s from the results store's "
			     "(%s%s): pass --force to replace %s with the store's", nclash,
			     nclash == 1 ? "" : "s", what, nclash == 1 ? "s" : "", clashes.buf,
			     nclash > 5 ? ", ..." : "", nclash == 1 ? "it" : "them");
	} else {
		int i = 0;
		cJSON_ArrayForEach(f, files) {
			if (st == GO_OK && todo[i] && (st = pull_file(rs, dir, f, err)) == GO_OK)
				n->files_written++;
			i++;
		}
	}
	free(todo);
out:
	cJSON_Delete(m);
	strbuf_release(&text);
	strbuf_release(&clashes);
	free(key);
	free(what);
	return st;
}

enum go_status results_find_run(struct results_store *rs, const char *run_id, char **slug,
				struct strbuf *err)
{
	char *prefix = xstrfmt("runs/%s/", run_id), **names = NULL;
	struct strbuf all = STRBUF_INIT;
	enum go_status st;
	int i, k = 0;

	*slug = NULL;
	st = rs->ops->list(rs->ctx, prefix, &names, err);
	for (i = 0; st == GO_OK && names && names[i]; i++) {
		size_t len = strlen(names[i]);
		if (len <= 5 || strcmp(names[i] + len - 5, ".json"))
			continue;
		strbuf_addf(&all, "%s%.*s/%s", k ? ", " : "", (int)(len - 5), names[i], run_id);
		if (!k++)
			*slug = xstrfmt("%.*s", (int)(len - 5), names[i]);
	}
	if (st == GO_OK && k == 0)
		st = go_fail(err, GO_ERR_NOT_FOUND, "run %s is not in the results store %s", run_id,
			     rs->where);
	else if (st == GO_OK && k > 1)
		st = go_fail(err, GO_ERR_USAGE, "run id %s is in the results store %s under %d "
			     "experiments (%s): name one as EXPERIMENT/RUN-ID", run_id, rs->where, k,
			     all.buf);
	if (st != GO_OK) {
		free(*slug);
		*slug = NULL;
	}
	for (i = 0; names && names[i]; i++)
		free(names[i]);
	free(names);
	free(prefix);
	strbuf_release(&all);
	return st;
}
