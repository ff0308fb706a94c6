/* site.c -- `gpuorch site`: the site's folder, its index and compare pages,
 * and putting it in place (site.h).
 *
 * Everything is written into a new folder beside OUT (OUT.new-XXXXXX, made
 * by mkdtemp), which then takes OUT's place: renameat2(RENAME_EXCHANGE)
 * swaps the two folders in one step where the file system can, else OUT is
 * renamed aside and the new folder renamed in; the old site is removed after.
 * A reader sees the old site or the new one, never a mix. OUT may be missing,
 * an empty folder, or a site gpuorch wrote (it holds SITE_MARKER): anything
 * else is refused, so a mistyped --out never removes someone's files.
 * The store is read in one pass (store_each): each run's page, its row, and
 * what history needs of it (run/history-runs.h), whatever the pages. */
#include "run/site-int.h"
#include "run/site-assets.h"
#include "core/fsutil.h"
#include "core/jsonutil.h"
#include "report/runsum.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "core/banned.h"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/* 1: dir has entries other than "." and ".." */
static int dir_has_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int any = 0;
	while (d && !any && (de = readdir(d)) != NULL)
		any = strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	if (d)
		closedir(d);
	return any;
}

/* OUT may be replaced: missing, an empty folder, or a site (SITE_MARKER) */
static enum go_status check_out(const char *out, struct strbuf *err)
{
	struct stat st;
	char *marker;
	int ok;
	if (lstat(out, &st) != 0)
		return errno == ENOENT ? GO_OK : go_fail(err, GO_ERR_IO, "cannot write the site to "
					"'%s': %s; give another --out", out, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return go_fail(err, GO_ERR_USAGE, "cannot write the site to '%s': it is not a folder; "
			       "give a new or empty folder as --out", out);
	marker = xstrfmt("%s/%s", out, SITE_MARKER);
	ok = fs_is_file(marker) || !dir_has_entries(out);
	free(marker);
	return ok ? GO_OK : go_fail(err, GO_ERR_USAGE, "'%s' holds files of its own, not a site "
				    "that 'gpuorch site' wrote (no %s in it): it is left alone; give "
				    "a new or empty folder as --out", out, SITE_MARKER);
}

/* The new folder beside out ("out.new-XXXXXX"), mode 0755 */
static enum go_status make_tmp(struct site *s)
{
	const char *out = s->o->out;
	size_t n = strlen(out);
	while (n > 1 && out[n - 1] == '/')
		n--;
	s->tmp = xstrfmt("%.*s.new-XXXXXX", (int)n, out);
	if (!mkdtemp(s->tmp)) {
		char *dir = fs_dirname(s->tmp);
		enum go_status st = go_fail(&s->err, GO_ERR_IO, "cannot write the site to '%s': cannot "
					    "make a folder in '%s' (%s); give a writable --out", out,
					    dir, strerror(errno));
		free(dir);
		free(s->tmp);
		s->tmp = NULL;
		return st;
	}
	chmod(s->tmp, 0755);
	return GO_OK;
}

/* The new site takes out's place; the old one (if any) is removed */
static enum go_status publish(struct site *s)
{
	const char *out = s->o->out;
	char *aside;
	if (syscall(SYS_renameat2, AT_FDCWD, s->tmp, AT_FDCWD, out, RENAME_EXCHANGE) == 0) {
		fs_remove_tree(s->tmp);   /* the old site, now under the new folder's name */
		return GO_OK;
	}
	if (errno == ENOENT && rename(s->tmp, out) == 0)
		return GO_OK;
	/* no exchange here (an old kernel, some file systems): out aside, then the new in */
	aside = xstrfmt("%s.old", s->tmp);
	if (rename(out, aside) != 0 && errno != ENOENT) {
		free(aside);
		return go_fail(&s->err, GO_ERR_IO, "cannot replace '%s': %s", out, strerror(errno));
	}
	if (rename(s->tmp, out) != 0) {
		int e = errno;
		rename(aside, out);
		free(aside);
		return go_fail(&s->err, GO_ERR_IO, "cannot put the site in '%s': %s", out, strerror(e));
	}
	fs_remove_tree(aside);
	free(aside);
	return GO_OK;
}

static enum go_status put_index(struct site *s)
{
	struct strbuf pg = STRBUF_INIT;
	cJSON *d = cJSON_CreateObject(), *cols = json_add_arr(d, "columns");
	char *names = xstrdup(SITE_COLUMNS), *w, *save = NULL;
	enum go_status st;

	for (w = strtok_r(names, " ", &save); w; w = strtok_r(NULL, " ", &save))
		cJSON_AddItemToArray(cols, cJSON_CreateString(w));
	free(names);
	json_add_str(d, "kind", "runs");
	cJSON_AddItemToObject(d, "rows", s->rows);
	st = site_put_data(s, "data/runs.js", "gpuorchData", d);
	cJSON_DetachItemFromObject(d, "rows");
	cJSON_Delete(d);
	site_page_head(&pg, "runs", "index", "");
	strbuf_addstr(&pg, "<h1>Runs</h1>\n<div id=\"filters\"></div>\n<p id=\"count\"></p>\n"
		      "<table id=\"runs\"><thead><tr><th>compare</th><th>run</th><th>experiment</th>"
		      "<th>started (UTC)</th><th>commit</th><th>GPU</th><th>status</th>"
		      "<th>headline</th></tr></thead>\n<tbody></tbody></table>\n<div id=\"pager\"></div>\n");
	site_page_foot(&pg, "data/runs.js", "");
	if (st == GO_OK)
		st = site_put(s, "index.html", pg.buf, pg.len);
	strbuf_release(&pg);
	return st;
}

static enum go_status put_static(struct site *s)
{
	struct strbuf pg = STRBUF_INIT;
	enum go_status st;
	site_page_head(&pg, "compare", "compare", "");
	strbuf_addstr(&pg, "<h1>Compare two runs</h1>\n<p id=\"compare-what\"></p>\n"
		      "<table id=\"compare-table\"><thead><tr><th>figure</th><th>GPU</th><th>A</th>"
		      "<th>B</th><th>unit</th><th>B / A</th></tr></thead>\n<tbody></tbody></table>\n");
	site_page_foot(&pg, NULL, "");
	st = site_put(s, "compare.html", pg.buf, pg.len);
	if (st == GO_OK)
		st = site_put(s, "site.js", (const char *)gpuorch_site_js, gpuorch_site_js_len);
	if (st == GO_OK)
		st = site_put(s, "site.css", (const char *)gpuorch_site_css, gpuorch_site_css_len);
	if (st == GO_OK)
		st = site_put(s, SITE_MARKER, "gpuorch site\n", 13);
	strbuf_release(&pg);
	return st;
}

static enum go_status build(struct site *s)
{
	struct strbuf warn = STRBUF_INIT;
	enum go_status st = check_out(s->o->out, &s->err);
	if (st == GO_OK)
		st = make_tmp(s);
	/* the one pass over the store: pages, rows and history's runs */
	if (st == GO_OK)
		st = store_each(runsum_load, site_run, s, &warn, &s->err);
	if (warn.len) {
		fputs(warn.buf, stderr);
		s->hist.warnings = xstrdup(warn.buf);   /* each history page says them */
	}
	strbuf_release(&warn);
	if (st == GO_OK)
		st = s->st;
	if (st == GO_OK)
		site_order_rows(s);
	if (st == GO_OK)
		st = site_histories(s);
	if (st == GO_OK)
		st = put_static(s);
	if (st == GO_OK)
		st = put_index(s);
	if (st == GO_OK)
		st = publish(s);
	return st;
}

/* site --json: what the summary line and the warning say */
static void summary_json(const struct site *s, cJSON *o)
{
	char *index = xstrfmt("%s/index.html", s->o->out);
	const cJSON *e;
	cJSON *exps;
	json_add_str(o, "out", s->o->out);
	json_add_str(o, "index", index);
	json_add_num(o, "runs", s->nruns);
	exps = json_add_arr(o, "experiments");
	cJSON_ArrayForEach(e, s->exps)
		cJSON_AddItemToArray(exps, cJSON_CreateString(e->string));
	json_add_num(o, "left_out", s->nskipped);
	free(index);
}

int site_write(const struct site_opts *o)
{
	struct site s;
	enum go_status st;
	int i;

	memset(&s, 0, sizeof(s));
	s.o = o;
	strbuf_init(&s.err, 0);
	s.rows = cJSON_CreateArray();
	s.exps = cJSON_CreateObject();
	s.figs = cJSON_CreateObject();
	s.figs_from = cJSON_CreateObject();
	s.named = cJSON_CreateObject();
	s.named_from = cJSON_CreateObject();
	hruns_init(&s.hist, NULL, o->every_figure);   /* named figures: for their pages */
	st = build(&s);
	if (st != GO_OK) {
		fprintf(stderr, "error: %s\n", s.err.buf);
		if (s.tmp)
			fs_remove_tree(s.tmp);
	} else if (o->json) {
		summary_json(&s, o->json);
	} else if (!o->quiet) {
		printf("site: %d run%s, %d experiment%s in %s (open %s/index.html)\n", s.nruns,
		       s.nruns == 1 ? "" : "s", cJSON_GetArraySize(s.exps),
		       cJSON_GetArraySize(s.exps) == 1 ? "" : "s", o->out, o->out);
	}
	if (s.nskipped)
		fprintf(stderr, "warning: %d run folder%s left out: a name that is not letters, digits, "
			"'.', '_' or '-'\n", s.nskipped, s.nskipped == 1 ? "" : "s");
	cJSON_Delete(s.rows);
	cJSON_Delete(s.exps);
	cJSON_Delete(s.figs);
	cJSON_Delete(s.figs_from);
	cJSON_Delete(s.named);
	cJSON_Delete(s.named_from);
	for (i = 0; i < s.norder; i++)
		free(s.order[i].started);
	free(s.order);
	hruns_release(&s.hist);
	strindex_release(&s.ids);
	free(s.row_ids);
	free(s.row_keys);
	free(s.tmp);
	strbuf_release(&s.err);
	return st == GO_OK ? GO_EXIT_OK : go_exit_code(st);
}
