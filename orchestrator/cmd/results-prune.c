/* results-prune.c -- a run directory's raw record removed once the store holds it (results-prune.h). */
#include "cmd/results-prune.h"
#include "core/fsutil.h"
#include "core/hash.h"
#include "core/jsonutil.h"
#include "store/store.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/banned.h"

#define MANIFEST_SCHEMA "gpuorch-results-manifest/1"   /* store/results.c's manifests */
#define PRUNE_FILES_MAX 100000                         /* files of one run directory */

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);
	return n >= m && !strcmp(s + n - m, tail);
}

int results_reader_file(const char *rel)
{
	if (!strncmp(rel, "charts/", 7))
		return 1;
	if (strchr(rel, '/'))
		return 0;
	return !strcmp(rel, "report.md") || !strcmp(rel, "summary.json") ||
	       !strcmp(rel, "samples.txt") || ends_with(rel, ".md") ||
	       (!strncmp(rel, "compare-", 8) && ends_with(rel, ".txt"));
}

/* ---- the files of a run directory ---- */

struct rel_list {
	char **v;
	int n, alloc;
};

static void rel_add(struct rel_list *l, char *s)
{
	if (l->n == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 32;
		l->v = xrealloc(l->v, (size_t)l->alloc * sizeof(*l->v));
	}
	l->v[l->n++] = s;
}

static void rel_free(struct rel_list *l)
{
	int i;
	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Every entry under dir/rel: plain files into files, directories into dirs
 * (a directory after the ones inside it, so removing dirs in order empties
 * them from the leaves up). */
static enum go_status list_tree(const char *dir, const char *rel, struct rel_list *files,
				struct rel_list *dirs, struct strbuf *err)
{
	char *path = *rel ? xstrfmt("%s/%s", dir, rel) : xstrdup(dir);
	DIR *d = opendir(path);
	struct dirent *de;
	enum go_status st = GO_OK;

	if (!d)
		st = go_fail(err, GO_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
	while (st == GO_OK && (de = readdir(d))) {
		char *r, *full;
		struct stat sb;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		r = *rel ? xstrfmt("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
		full = xstrfmt("%s/%s", dir, r);
		if (lstat(full, &sb) != 0)
			st = go_fail(err, GO_ERR_IO, "cannot stat '%s': %s", full, strerror(errno));
		else if (S_ISDIR(sb.st_mode) && (st = list_tree(dir, r, files, dirs, err)) == GO_OK)
			rel_add(dirs, xstrdup(r));
		else if (st == GO_OK && !S_ISDIR(sb.st_mode) && files->n >= PRUNE_FILES_MAX)
			st = go_fail(err, GO_ERR_IO, "'%s' has more than %d files: not a run directory",
				     dir, PRUNE_FILES_MAX);
		else if (st == GO_OK && !S_ISDIR(sb.st_mode))
			rel_add(files, xstrdup(r));
		free(r);
		free(full);
	}
	if (d)
		closedir(d);
	free(path);
	return st;
}

/* ---- the store's word on the run ---- */

enum go_status results_stored_files(struct results_store *rs, const char *slug,
				    const char *run_id, cJSON **map, struct strbuf *err)
{
	char *key = xstrfmt("runs/%s/%s.json", run_id, slug);   /* store/results.h's layout */
	struct strbuf text = STRBUF_INIT;
	const cJSON *files, *f;
	cJSON *m = NULL;
	enum go_status st;

	*map = NULL;
	st = rs->ops->get(rs->ctx, key, &text, err);
	if (st == GO_ERR_NOT_FOUND)
		st = go_fail(err, GO_ERR_NOT_FOUND, "the results store %s does not hold run %s/%s",
			     rs->where, slug, run_id);
	if (st == GO_OK)
		st = json_parse(text.buf, text.len, key, &m, err);
	files = m ? cJSON_GetObjectItemCaseSensitive(m, "files") : NULL;
	if (st == GO_OK && (!json_str(m, "schema") || strcmp(json_str(m, "schema"), MANIFEST_SCHEMA) ||
			    !cJSON_IsArray(files)))
		st = go_fail(err, GO_ERR_IO, "the results store's manifest of run %s/%s is not a %s "
			     "manifest", slug, run_id, MANIFEST_SCHEMA);
	if (st == GO_OK) {
		*map = cJSON_CreateObject();
		cJSON_ArrayForEach(f, files)
			if (json_str(f, "path") && json_str(f, "sha256"))
				json_add_str(*map, json_str(f, "path"), json_str(f, "sha256"));
	}
	cJSON_Delete(m);
	strbuf_release(&text);
	free(key);
	return st;
}

/* The store's manifest of the run in dir (results_stored_files). */
static enum go_status stored_files(struct results_store *rs, const char *dir, cJSON **map,
				   struct strbuf *err)
{
	char *q = store_qualified_id(dir), *slash = strchr(q, '/');
	enum go_status st;

	*map = NULL;
	if (!slash) {
		free(q);
		return go_fail(err, GO_ERR_USAGE, "'%s' is not a run directory (REPORTS/EXPERIMENT/"
			       "RUN-ID)", dir);
	}
	*slash = '\0';
	st = results_stored_files(rs, q, slash + 1, map, err);
	if (st == GO_ERR_NOT_FOUND)
		strbuf_addf(err, ": nothing removed (push it first: 'gpuorch push %s/%s')", q,
			    slash + 1);
	else if (st != GO_OK)
		strbuf_addstr(err, ": nothing removed");
	free(q);
	return st;
}

/* 1 when rel is to go: a raw file, or an empty one (not the lock: not a file of the run) */
static int to_prune(const char *dir, const char *rel)
{
	char *full;
	struct stat sb;
	int empty;
	if (!strcmp(rel, "controller.lock"))
		return 0;
	if (!results_reader_file(rel))
		return 1;
	full = xstrfmt("%s/%s", dir, rel);
	empty = stat(full, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 0;
	free(full);
	return empty;
}

/* Each file to prune: in the manifest with its content's hash, and the
 * store's object read back as that content (results_get_object hashes it). */
static enum go_status verify(struct results_store *rs, const char *dir, const struct rel_list *fl,
			     const cJSON *map, struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT, back = STRBUF_INIT;
	enum go_status st = GO_OK;
	int i;

	for (i = 0; st == GO_OK && i < fl->n; i++) {
		char *full = xstrfmt("%s/%s", dir, fl->v[i]), hex[SHA256_HEX_LEN + 1];
		const char *want;
		if (!to_prune(dir, fl->v[i])) {
			free(full);
			continue;
		}
		strbuf_reset(&text);
		st = fs_read_file(full, &text, err);
		if (st == GO_OK) {
			sha256_hex(text.buf ? text.buf : "", text.len, hex);
			want = json_str(map, fl->v[i]);
			if (!want || strcmp(want, hex))
				st = go_fail(err, GO_ERR_IO, "'%s' is %s the results store's copy of the "
					     "run: nothing removed (push the run again from a "
					     "directory that has its run.json)", full,
					     want ? "not the same as" : "not in");
		}
		if (st == GO_OK)
			st = results_get_object(rs, hex, &back, err);
		free(full);
	}
	strbuf_release(&text);
	strbuf_release(&back);
	return st;
}

/* ---- removing ---- */

static enum go_status unlink_counted(const char *dir, const char *rel, struct results_pruned *p,
				     struct strbuf *err)
{
	char *full = xstrfmt("%s/%s", dir, rel);
	struct stat sb;
	enum go_status st = GO_OK;
	if (lstat(full, &sb) != 0) {
		/* gone already (removed by hand or by an earlier, cut prune) */
	} else if (unlink(full) != 0) {
		st = go_fail(err, GO_ERR_IO, "cannot remove '%s': %s", full, strerror(errno));
	} else {
		p->removed++;
		p->bytes += (long long)sb.st_size;
	}
	free(full);
	return st;
}

enum go_status results_prune_run(struct results_store *rs, const char *dir,
				 struct results_pruned *p, struct strbuf *err)
{
	struct rel_list files = {0}, dirs = {0};
	char *sum = xstrfmt("%s/summary.json", dir);
	cJSON *map = NULL;
	enum go_status st = GO_OK;
	int i;

	if (!fs_is_file(sum))
		st = go_fail(err, GO_ERR_USAGE, "'%s' has no summary.json (what runs and history read "
			     "once run.json is gone): nothing removed ('gpuorch summarize' writes it)",
			     dir);
	if (st == GO_OK)
		st = list_tree(dir, "", &files, &dirs, err);
	if (st == GO_OK)
		st = stored_files(rs, dir, &map, err);
	if (st == GO_OK)
		st = verify(rs, dir, &files, map, err);
	/* run.json first: a directory without it is never pushed again as a
	 * whole run, so a prune cut here leaves only files the store holds */
	for (i = 0; st == GO_OK && i < files.n; i++)
		if (!strcmp(files.v[i], "run.json"))
			st = unlink_counted(dir, "run.json", p, err);
	for (i = 0; st == GO_OK && i < files.n; i++) {
		if (!strcmp(files.v[i], "run.json"))
			continue;
		if (to_prune(dir, files.v[i]))
			st = unlink_counted(dir, files.v[i], p, err);
		else if (strcmp(files.v[i], "controller.lock"))
			p->kept++;
	}
	/* the lock of no live controller, and the directories left empty */
	if (st == GO_OK && !store_run_live(dir)) {
		char *lock = xstrfmt("%s/controller.lock", dir);
		unlink(lock);
		free(lock);
	}
	for (i = 0; st == GO_OK && i < dirs.n; i++) {
		char *full = xstrfmt("%s/%s", dir, dirs.v[i]);
		rmdir(full);   /* fails, as it should, where a reader's file is left in it */
		free(full);
	}
	cJSON_Delete(map);
	rel_free(&files);
	rel_free(&dirs);
	free(sum);
	return st;
}

/* ---- listing runs ---- */

static int is_run_dir(const char *d)
{
	char *a = xstrfmt("%s/run.json", d), *b = xstrfmt("%s/summary.json", d);
	int yes = fs_is_file(a) || fs_is_file(b);
	free(a);
	free(b);
	return yes;
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The directories directly under dir, sorted. */
static void subdirs(const char *dir, struct rel_list *out)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		char *full;
		if (de->d_name[0] == '.')
			continue;
		full = xstrfmt("%s/%s", dir, de->d_name);
		if (fs_is_dir(full))
			rel_add(out, full);
		else
			free(full);
	}
	if (d)
		closedir(d);
	if (out->n)
		qsort(out->v, (size_t)out->n, sizeof(*out->v), by_str);
}

char **results_run_dirs(const char *dir, int *n)
{
	struct rel_list out = {0}, l1 = {0};
	int i, j;

	if (is_run_dir(dir)) {
		rel_add(&out, xstrdup(dir));
	} else {
		subdirs(dir, &l1);
		for (i = 0; i < l1.n; i++) {
			struct rel_list l2 = {0};
			if (is_run_dir(l1.v[i])) {
				rel_add(&out, xstrdup(l1.v[i]));
				continue;
			}
			subdirs(l1.v[i], &l2);
			for (j = 0; j < l2.n; j++)
				if (is_run_dir(l2.v[j])) {
					rel_add(&out, l2.v[j]);
					l2.v[j] = NULL;
				}
			rel_free(&l2);
		}
		rel_free(&l1);
	}
	*n = out.n;
	if (!out.n) {
		free(out.v);
		return NULL;
	}
	return out.v;
}
