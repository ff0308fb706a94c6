/* site-history.c -- `gpuorch site`'s history pages: for each experiment,
 * the points `gpuorch history EXPERIMENT --json` gives (run/history-timeline.h)
 * as data/history-SLUG.js, drawn by site.js as a zoomable chart on
 * history/SLUG.html, each point a link to its run's page (site-int.h). */
#include "run/site-int.h"
#include "core/jsonutil.h"
#include "run/history-timeline.h"
#include "core/stats.h"

#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

/* "SLUG/RUN-ID" of a run id (the first run listed with it), or NULL */
static const char *key_of(const struct site *s, const char *run_id)
{
	int i = strindex_find(&s->ids, run_id);
	return i >= 0 ? s->row_keys[i] : NULL;
}

/* The points as site.js draws them: each with its run's folder ("key"), and
 * how many runs the x axis holds */
static cJSON *history_data(struct site *s, const char *slug, cJSON *tl)
{
	cJSON *d = cJSON_CreateObject(), *p;
	static const char *const keep[] = { "experiment", "program", "problem", "metric", "unit",
					    "better", NULL };
	int i, n = 0;
	json_add_str(d, "kind", "history");
	json_add_str(d, "slug", slug);
	for (i = 0; keep[i]; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(tl, keep[i]);
		if (v)
			cJSON_AddItemToObject(d, keep[i], cJSON_Duplicate(v, 1));
	}
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(tl, "points")) {
		json_add_str(p, "key", key_of(s, json_str(p, "run_id")));
		if (json_num(p, "index", 0) > n)
			n = (int)json_num(p, "index", 0);
	}
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(tl, "runs_without_figure")) {
		json_add_str(p, "key", key_of(s, json_str(p, "run_id")));
		if (json_num(p, "index", 0) > n)
			n = (int)json_num(p, "index", 0);
	}
	json_add_num(d, "nruns", n);
	cJSON_AddItemToObject(d, "points", cJSON_DetachItemFromObject(tl, "points"));
	cJSON_AddItemToObject(d, "runs_without_figure",
			      cJSON_DetachItemFromObject(tl, "runs_without_figure"));
	return d;
}

/* One history page: the experiment, the figure (program and problem, and
 * a named figure's name; NULL for history's default), where it goes */
struct hpage {
	const char *slug, *name;
	const char *program, *problem, *figure;
	char *stem;           /* "SLUG" (the default) or "SLUG--N": history/STEM.html */
	cJSON *pages;         /* the figures with a page of their own, SLUG--1, --2...:
			       * each [program, problem] or [program, problem, NAME] */
};

/* links to the experiment's pages of every figure */
static void figure_links(struct strbuf *pg, const struct hpage *h)
{
	const cJSON *f;
	int k = 0;
	if (!cJSON_GetArraySize(h->pages))
		return;
	strbuf_addf(pg, "<p class=\"figures\">every figure: <a href=\"%s.html\">headline</a>",
		    h->slug);
	cJSON_ArrayForEach(f, h->pages) {
		strbuf_addf(pg, " &middot; <a class=\"figure-link\" href=\"%s--%d.html\">", h->slug, ++k);
		site_text(pg, cJSON_GetArrayItem(f, 0)->valuestring);
		strbuf_addch(pg, ' ');
		site_text(pg, cJSON_GetArrayItem(f, 1)->valuestring);
		if (cJSON_GetArraySize(f) > 2) {
			strbuf_addch(pg, ' ');
			site_text(pg, cJSON_GetArrayItem(f, 2)->valuestring);
		}
		strbuf_addstr(pg, "</a>");
	}
	strbuf_addstr(pg, "</p>\n");
}

static void history_page(struct strbuf *pg, const struct hpage *h, const cJSON *d, const char *why)
{
	char *title = xstrfmt("history of %s", h->name);
	char *src = xstrfmt("../data/history-%s.js", h->stem);
	site_page_head(pg, title, "history", "../");
	strbuf_addstr(pg, "<h1>");
	site_text(pg, title);
	strbuf_addstr(pg, "</h1>\n");
	figure_links(pg, h);
	if (d) {
		strbuf_addstr(pg, "<p class=\"figure\">");
		site_text(pg, json_str(d, "program"));
		strbuf_addch(pg, ' ');
		site_text(pg, json_str(d, "problem"));
		strbuf_addstr(pg, ": the median of each run (line), its samples' 10th to 90th "
			      "percentile (band), one series per GPU model. Wheel: zoom; drag: pan; "
			      "a point opens its run. <button id=\"zoom-reset\">all runs</button></p>\n"
			      "<div id=\"chart\"></div>\n<ul id=\"legend\"></ul>\n");
	}
	if (why && *why) {
		strbuf_addstr(pg, "<pre class=\"why\">");
		site_text(pg, why);
		strbuf_addstr(pg, "</pre>\n");
	}
	site_page_foot(pg, d ? src : NULL, "../");
	free(title);
	free(src);
}

/* history/STEM.html (and its data): the chart, or why there is none */
static enum go_status one_history(struct site *s, const struct hpage *h)
{
	struct timeline_opts o;
	struct strbuf why = STRBUF_INIT, pg = STRBUF_INIT;
	cJSON *tl = NULL, *d = NULL;
	char *rel;
	enum go_status st = GO_OK;

	memset(&o, 0, sizeof(o));
	o.experiment = h->slug;
	o.program = h->program;
	o.problem = h->problem;
	o.figure = h->figure;
	o.factor = STATS_DEFAULT_FACTOR;
	o.root = s->o->root;
	o.json_out = &tl;
	o.why = &why;
	o.runs = &s->hist;   /* read in the site's pass: no pass of its own */
	timeline_run(&o);   /* its exit code says what why says */
	if (tl) {
		d = history_data(s, h->slug, tl);
		rel = xstrfmt("data/history-%s.js", h->stem);
		st = site_put_data(s, rel, "gpuorchData", d);
		free(rel);
	}
	history_page(&pg, h, d, why.buf);
	rel = xstrfmt("history/%s.html", h->stem);
	if (st == GO_OK)
		st = site_put(s, rel, pg.buf, pg.len);
	free(rel);
	cJSON_Delete(tl);
	cJSON_Delete(d);
	strbuf_release(&why);
	strbuf_release(&pg);
	return st;
}

/* The experiment's pages: history's default figure, then with
 * --every-figure one per timed figure (when it has more than one: else the
 * default page is its page) and one per named figure */
static enum go_status experiment_histories(struct site *s, const char *slug, const char *name)
{
	struct hpage h;
	const cJSON *timed = cJSON_GetObjectItemCaseSensitive(s->figs, slug);
	const cJSON *named = cJSON_GetObjectItemCaseSensitive(s->named, slug), *f;
	enum go_status st;
	int k = 0;

	memset(&h, 0, sizeof(h));
	h.slug = slug;
	h.name = name;
	h.pages = cJSON_CreateArray();
	if (s->o->every_figure && cJSON_GetArraySize(timed) > 1)
		cJSON_ArrayForEach(f, timed)
			cJSON_AddItemToArray(h.pages, cJSON_Duplicate(f, 1));
	if (s->o->every_figure)
		cJSON_ArrayForEach(f, named)
			cJSON_AddItemToArray(h.pages, cJSON_Duplicate(f, 1));
	h.stem = xstrdup(slug);
	st = one_history(s, &h);
	cJSON_ArrayForEach(f, h.pages) {
		if (st != GO_OK)
			break;
		free(h.stem);
		h.stem = xstrfmt("%s--%d", slug, ++k);
		h.program = cJSON_GetArrayItem(f, 0)->valuestring;
		h.problem = cJSON_GetArrayItem(f, 1)->valuestring;
		h.figure = cJSON_GetArraySize(f) > 2 ? cJSON_GetArrayItem(f, 2)->valuestring : NULL;
		st = one_history(s, &h);
	}
	free(h.stem);
	cJSON_Delete(h.pages);
	return st;
}

enum go_status site_histories(struct site *s)
{
	struct strbuf pg = STRBUF_INIT;
	const cJSON *x;
	enum go_status st = GO_OK;
	int i = 0, n = cJSON_GetArraySize(s->rows);

	s->row_ids = xcalloc((size_t)n + 1, sizeof(*s->row_ids));
	s->row_keys = xcalloc((size_t)n + 1, sizeof(*s->row_keys));
	cJSON_ArrayForEach(x, s->rows) {
		s->row_keys[i] = cJSON_GetArrayItem(x, 0)->valuestring;
		s->row_ids[i++] = cJSON_GetArrayItem(x, 1)->valuestring;
	}
	strindex_build(&s->ids, s->row_ids, n);
	site_page_head(&pg, "history", "histories", "../");
	strbuf_addstr(&pg, "<h1>History by experiment</h1>\n<ul id=\"histories\">\n");
	cJSON_ArrayForEach(x, s->exps) {
		if (st == GO_OK)
			st = experiment_histories(s, x->string, x->valuestring);
		strbuf_addf(&pg, "<li><a href=\"%s.html\">", x->string);
		site_text(&pg, x->valuestring);
		strbuf_addstr(&pg, "</a></li>\n");
	}
	strbuf_addstr(&pg, "</ul>\n");
	site_page_foot(&pg, NULL, "../");
	if (st == GO_OK)
		st = site_put(s, "history/index.html", pg.buf, pg.len);
	strbuf_release(&pg);
	return st;
}
