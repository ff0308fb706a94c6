/* site-run.c -- one run of `gpuorch site`: its row of the index, its page
 * (report.md as HTML), its charts beside the page, its figures for the
 * compare page (site-int.h). */
#include "run/site-int.h"
#include "store/runkeys.h"
#include "core/fsutil.h"
#include "core/jsonutil.h"
#include "core/vocab.h"
#include "report/compare.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/banned.h"

/* What the index shows as a run's status: "stopped" for a run whose
 * controller died ('gpuorch runs' does the same), its status while it is not
 * complete, else its outcome. */
static const char *run_state(const struct store_entry *e)
{
	const char *status = json_str(e->run, "status"), *outcome = json_str(e->run, RK_OUTCOME);
	if (run_status_is(status, RUN_RUNNING) && !store_run_live(e->dir))
		return "stopped";
	if (status && !run_status_is(status, RUN_COMPLETE))
		return status;
	return outcome ? outcome : "unknown";
}

/* The GPU models of the run's hosts, each once: "NVIDIA H100 80GB HBM3, ..." */
static void run_gpus(const cJSON *run, struct strbuf *sb)
{
	const cJSON *h;
	cJSON_ArrayForEach(h, cJSON_GetObjectItem(run, "hosts")) {
		const char *g = json_str(cJSON_GetObjectItem(h, "info"), "gpu_name");
		if (!g || strstr(sb->buf, g))
			continue;
		strbuf_addf(sb, "%s%s", sb->len ? ", " : "", g);
	}
}

/* s as the next cell of row ("" for NULL) */
static void add_cell(cJSON *row, const char *s)
{
	cJSON_AddItemToArray(row, cJSON_CreateString(s ? s : ""));
}

/* < 0 when run A (start time a, id ia, visited at pa) comes before run B in
 * the store's newest-first order (store_list's: start time, then run id,
 * descending; no start time last), the one visited first at a tie */
static int newest_first(const char *a, const char *ia, int pa, const char *b, const char *ib,
			int pb)
{
	int c;
	if (a && b && (c = strcmp(a, b)) != 0)
		return -c;
	if (!a != !b)
		return a ? -1 : 1;
	c = -strcmp(ia, ib);
	return c ? c : (pa > pb) - (pa < pb);
}

static int cmp_rows(const void *x, const void *y)
{
	const struct site_row *a = x, *b = y;
	return newest_first(a->started, a->run_id, a->pos, b->started, b->run_id, b->pos);
}

void site_order_rows(struct site *s)
{
	cJSON *rows = cJSON_CreateArray();
	int i;
	if (s->norder > 1)
		qsort(s->order, (size_t)s->norder, sizeof(*s->order), cmp_rows);
	cJSON_Delete(s->exps);
	s->exps = cJSON_CreateObject();
	for (i = 0; i < s->norder; i++) {
		cJSON *row = cJSON_DetachItemViaPointer(s->rows, s->order[i].row);
		const char *slug = cJSON_GetArrayItem(row, 3)->valuestring;
		cJSON_AddItemToArray(rows, row);
		if (!cJSON_GetObjectItemCaseSensitive(s->exps, slug))
			json_add_str(s->exps, slug, cJSON_GetArrayItem(row, 2)->valuestring);
	}
	cJSON_Delete(s->rows);
	s->rows = rows;
}

static void add_row(struct site *s, const struct store_entry *e, const char *key)
{
	const cJSON *ex = cJSON_GetObjectItem(e->run, "experiment");
	const char *commit = json_str(json_path(e->run, "provenance.git"), "commit");
	const char *name = json_str(ex, "name"), *slash = strchr(key, '/');
	char *slug = xstrfmt("%.*s", (int)(slash - key), key), short_commit[13];
	struct strbuf gpus = STRBUF_INIT;
	cJSON *row = cJSON_CreateArray();

	snprintf(short_commit, sizeof(short_commit), "%s", commit ? commit : "");
	run_gpus(e->run, &gpus);
	/* in SITE_COLUMNS' order */
	add_cell(row, key);
	add_cell(row, e->run_id);
	add_cell(row, name ? name : slug);
	add_cell(row, slug);
	add_cell(row, json_str(e->run, RK_STARTED_AT));
	add_cell(row, short_commit);
	add_cell(row, gpus.len ? gpus.buf : "no GPU");
	add_cell(row, run_state(e));
	add_cell(row, json_str(e->run, "headline"));
	cJSON_AddItemToArray(s->rows, row);
	if (s->norder == s->aorder) {
		s->aorder = s->aorder ? 2 * s->aorder : 256;
		s->order = xrealloc(s->order, (size_t)s->aorder * sizeof(*s->order));
	}
	s->order[s->norder].row = row;
	s->order[s->norder].started = json_str(e->run, RK_STARTED_AT) ?
				      xstrdup(json_str(e->run, RK_STARTED_AT)) : NULL;
	s->order[s->norder].run_id = cJSON_GetArrayItem(row, 1)->valuestring;
	s->order[s->norder].pos = s->norder;
	s->norder++;
	strbuf_release(&gpus);
	free(slug);
}

/* charts/NAME.svg of the run beside its page: a hard link where the store
 * and the site share a file system, else a copy */
static enum go_status put_chart(struct site *s, const char *from, const char *key, const char *name)
{
	char *src = xstrfmt("%s/%s", from, name), *rel = xstrfmt("run/%s/charts/%s", key, name);
	char *dst = xstrfmt("%s/%s", s->tmp, rel), *dir = fs_dirname(dst);
	struct strbuf sb = STRBUF_INIT;
	enum go_status st = fs_mkdir_p(dir, 0755, &s->err);

	if (st == GO_OK && link(src, dst) != 0 && (st = fs_read_file(src, &sb, &s->err)) == GO_OK)
		st = site_put(s, rel, sb.buf, sb.len);
	strbuf_release(&sb);
	free(src);
	free(rel);
	free(dst);
	free(dir);
	return st;
}

static enum go_status put_charts(struct site *s, const struct store_entry *e, const char *key)
{
	char *from = xstrfmt("%s/charts", e->dir);
	DIR *d = opendir(from);
	struct dirent *de;
	enum go_status st = GO_OK;

	while (d && st == GO_OK && (de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name);
		if (n > 4 && !strcmp(de->d_name + n - 4, ".svg") && site_name_ok(de->d_name))
			st = put_chart(s, from, key, de->d_name);
	}
	if (d)
		closedir(d);
	free(from);
	return st;
}

static enum go_status put_page(struct site *s, const struct store_entry *e, const char *key)
{
	char *md_path = xstrfmt("%s/report.md", e->dir), *rel = xstrfmt("run/%s/index.html", key);
	char *title = xstrfmt("%s %s", key, run_state(e));
	struct strbuf md = STRBUF_INIT, page = STRBUF_INIT, err = STRBUF_INIT;
	enum go_status st = GO_OK;

	site_page_head(&page, title, "run", "../../../");
	strbuf_addstr(&page, "<p class=\"run-links\"><a href=\"../../../compare.html?a=");
	site_text(&page, key);
	strbuf_addstr(&page, "\">compare with...</a> <a href=\"../../../history/");
	strbuf_add(&page, key, (size_t)(strchr(key, '/') - key));
	strbuf_addstr(&page, ".html\">history of this experiment</a></p>\n");
	if (fs_read_file(md_path, &md, &err) == GO_OK) {
		st = site_markdown(md.buf, md.len, &page, &s->err);
	} else {
		strbuf_addstr(&page, "<p class=\"no-report\">This run has no report.md (");
		site_text(&page, err.buf);
		strbuf_addstr(&page, "): write one with <code>gpuorch report</code>.</p>\n");
	}
	site_page_foot(&page, NULL, "../../../");
	if (st == GO_OK)
		st = site_put(s, rel, page.buf, page.len);
	strbuf_release(&md);
	strbuf_release(&page);
	strbuf_release(&err);
	free(md_path);
	free(rel);
	free(title);
	return st;
}

/* Figure i of figs as a page's figure: [program, problem] of a timed one,
 * [program, problem, NAME] of a named one (NAME as history --figure takes
 * it), or NULL: not of that kind, or without a program or problem */
static cJSON *figure_entry(const struct figures *figs, int i, int named)
{
	const struct figure *f = &figs->v[i];
	cJSON *e;
	if (!f->program || !f->problem || (named ? !f->name || isnan(f->value)
					   : f->name || isnan(f->median_us)))
		return NULL;
	e = cJSON_CreateArray();
	add_cell(e, f->program);
	add_cell(e, f->problem);
	if (named) {
		char *full = f->field ? xstrfmt("%s.%s", f->name, f->field) : xstrdup(f->name);
		add_cell(e, full);
		free(full);
	}
	return e;
}

/* The experiment's figures of one kind (timed, or named) for its history
 * pages (site-history.c), each once, in the order of its newest run that
 * has any (runs come in the store's order: a newer run's replace an
 * older's); into list, slug -> [[program, problem(, NAME)], ...], and from,
 * slug -> [started_at or null, run id, place] of the run they came from */
static void note_kind(struct site *s, const struct store_entry *e, const char *slug,
		      const struct figures *figs, int named, cJSON *list, cJSON *from)
{
	const cJSON *was = cJSON_GetObjectItemCaseSensitive(from, slug);
	const char *started = json_str(e->run, RK_STARTED_AT);
	int i, pos = s->norder - 1;   /* this run's row: the last added */
	cJSON *a, *f, *x, *y;

	if (was && newest_first(started, e->run_id, pos,
				cJSON_GetStringValue(cJSON_GetArrayItem(was, 0)),
				cJSON_GetArrayItem(was, 1)->valuestring,
				cJSON_GetArrayItem(was, 2)->valueint) > 0)
		return;   /* a newer run's figures are the experiment's */
	a = cJSON_CreateArray();
	for (i = 0; i < figs->n; i++) {
		int dup = 0;
		if (!(x = figure_entry(figs, i, named)))
			continue;
		cJSON_ArrayForEach(y, a)
			dup |= cJSON_Compare(x, y, 1);
		if (dup)
			cJSON_Delete(x);
		else
			cJSON_AddItemToArray(a, x);
	}
	if (!cJSON_GetArraySize(a)) {
		cJSON_Delete(a);
		return;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(list, slug);
	cJSON_AddItemToObject(list, slug, a);
	f = cJSON_CreateArray();
	cJSON_AddItemToArray(f, started ? cJSON_CreateString(started) : cJSON_CreateNull());
	cJSON_AddItemToArray(f, cJSON_CreateString(e->run_id));
	cJSON_AddItemToArray(f, cJSON_CreateNumber(pos));
	cJSON_DeleteItemFromObjectCaseSensitive(from, slug);
	cJSON_AddItemToObject(from, slug, f);
}

/* The experiment's timed figures (and with --every-figure its named ones)
 * for its history pages */
static void note_figures(struct site *s, const struct store_entry *e, const char *key,
			 const struct figures *figs)
{
	char *slug = xstrfmt("%.*s", (int)(strchr(key, '/') - key), key);
	note_kind(s, e, slug, figs, 0, s->figs, s->figs_from);
	if (s->o->every_figure)
		note_kind(s, e, slug, figs, 1, s->named, s->named_from);
	free(slug);
}

/* figures.js: each figure of the run ("PROGRAM PROBLEM" for a benchmark's
 * median, else the figure's name) per GPU model, for compare.html */
static enum go_status put_figures(struct site *s, const struct store_entry *e, const char *key)
{
	struct figures figs;
	cJSON *o = cJSON_CreateObject(), *a;
	char *rel = xstrfmt("run/%s/figures.js", key);
	enum go_status st;
	int i;

	json_add_str(o, "key", key);
	a = json_add_arr(o, "figures");
	figures_of_run(e->run, &figs);
	note_figures(s, e, key, &figs);
	for (i = 0; i < figs.n; i++) {
		const struct figure *f = &figs.v[i];
		double v = f->name ? f->value : f->median_us;
		cJSON *x;
		char *what;
		if (isnan(v) || !f->program)
			continue;
		what = f->name ? xstrfmt("%s %s %s", f->program, f->problem ? f->problem : "", f->name)
			       : xstrfmt("%s %s", f->program, f->problem ? f->problem : "");
		x = cJSON_CreateObject();
		json_add_str(x, "what", what);
		json_add_str(x, "gpu", figure_gpu_label(f));
		json_add_num(x, "value", v);
		json_add_str(x, "unit", f->name ? f->unit : "us");
		json_add_str(x, "better", f->name ? metric_better_name(f->better) : "lower");
		cJSON_AddItemToArray(a, x);
		free(what);
	}
	figures_release(&figs);
	st = site_put_data(s, rel, "gpuorchRun", o);
	cJSON_Delete(o);
	free(rel);
	return st;
}

int site_run(const struct store_entry *e, void *ctx)
{
	struct site *s = ctx;
	char *key = store_qualified_id(e->dir);
	const char *slash = strchr(key, '/');
	char *slug = slash ? xstrfmt("%.*s", (int)(slash - key), key) : NULL;

	hruns_visit(e, &s->hist);   /* history reads every run, a page or not */
	if (!slug || !site_name_ok(slug) || !site_name_ok(slash + 1)) {
		s->nskipped++;   /* a folder name no page path can hold */
	} else {
		add_row(s, e, key);
		s->st = put_page(s, e, key);
		if (s->st == GO_OK)
			s->st = put_charts(s, e, key);
		if (s->st == GO_OK)
			s->st = put_figures(s, e, key);
		s->nruns++;
	}
	free(slug);
	free(key);
	return s->st != GO_OK;
}
