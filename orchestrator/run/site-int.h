/* site-int.h -- what the files of `gpuorch site` share (run/site*.c). */
#ifndef GPUORCH_SITE_INT_H
#define GPUORCH_SITE_INT_H

#include <cjson/cJSON.h>
#include "core/error.h"
#include "core/strbuf.h"
#include "core/strindex.h"
#include "run/history-runs.h"
#include "run/site.h"
#include "store/store.h"

/* The marker file that says a folder is a site gpuorch wrote (and may replace). */
#define SITE_MARKER ".gpuorch-site"

struct site {
	const struct site_opts *o;
	char *tmp;          /* the folder being written, renamed to o->out at the end */
	cJSON *rows;        /* the index's rows (arrays, SITE_COLUMNS' order) */
	struct strindex ids;      /* the rows' run ids (built for the history pages) */
	const char **row_ids, **row_keys;  /* each row's run id and "SLUG/RUN-ID" (its folder
					    * under run/), pointing into rows */
	cJSON *exps;        /* experiment slug -> its name */
	cJSON *figs;        /* experiment slug -> its newest measured run's timed figures,
			     * each [program, problem], once */
	cJSON *figs_from;   /* experiment slug -> [started_at or null, run id, place]:
			     * the run its figures came from */
	cJSON *named, *named_from;  /* the same for named figures (--every-figure),
				     * each [program, problem, NAME] */
	struct site_row *order;   /* each row's place in the newest-first order */
	int norder, aorder;
	struct hruns hist;  /* the runs as history reads them, kept in the same pass
			     * (run/history-runs.h): every history page drawn from them */
	int nruns, nskipped;
	struct strbuf err;  /* the first error */
	enum go_status st;
};

/* The index's columns (data/runs.js), in the order of each row. */
#define SITE_COLUMNS "key run_id experiment slug date commit gpu status headline"

/* ---- pages and files (site-page.c) ---- */
/* Write tmp/rel (its folders made). */
enum go_status site_put(struct site *s, const char *rel, const char *data, size_t len);
/* Write tmp/rel as a script that hands data to the page: "FN(JSON);". */
enum go_status site_put_data(struct site *s, const char *rel, const char *fn, const cJSON *data);
/* A page's start: doctype, title, the stylesheet, <body data-page=PAGE
 * data-root=UP>, the navigation. UP is the way to the site's top ("../../"). */
void site_page_head(struct strbuf *sb, const char *title, const char *page, const char *up);
/* A page's end: the data script (may be NULL), site.js, </body>. */
void site_page_foot(struct strbuf *sb, const char *data_src, const char *up);
/* s escaped for HTML text and attribute values. */
void site_text(struct strbuf *sb, const char *s);
/* Markdown (GitHub's: tables, strikethrough, autolinks) as HTML, raw HTML
 * in it left out (cmark-gfm's safe mode). */
enum go_status site_markdown(const char *md, size_t len, struct strbuf *html, struct strbuf *err);
/* A store folder name fit for a path of the site: letters, digits, '.', '_',
 * '-' (not first a '.'). */
int site_name_ok(const char *name);

/* ---- one run (site-run.c): its row, its page, its charts, its figures (a store_visit) ---- */
/* A row's place in the store's newest-first order: its start time (NULL:
 * none, listed last), its run id, the order it was visited in. */
struct site_row {
	cJSON *row;
	char *started;
	const char *run_id;   /* the row's */
	int pos;
};
int site_run(const struct store_entry *e, void *ctx);
/* After the pass (store_each hands runs in the store's order): the rows
 * newest first, as store_list lists runs, and the experiments in the
 * order of their newest run. */
void site_order_rows(struct site *s);

/* ---- each experiment's history page (site-history.c) ---- */
enum go_status site_histories(struct site *s);

#endif
