/* history-runs.c -- the runs `gpuorch history` reads, kept from one pass over the store (history-runs.h).
 *
 * A kept figure is its own values (~120 bytes: median, min, max, ...,
 * where its samples lie in samples.txt) and a pointer to its shape, what it
 * shares with the same figure of other runs (host, GPU, program, problem,
 * build: one copy a set, in a tsearch tree); its strings are the set's
 * pool's (figure_intern). Its samples stay in samples.txt. The commit
 * order is git log's, as history always had it: each run's commit found by
 * a binary search of the commits sorted by sha. */
#include "run/history-runs.h"
#include "report/runsum.h"
#include "store/runkeys.h"
#include "store/runread.h"
#include "core/jsonutil.h"
#include "run/rerun.h"

#include <math.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

struct gitc {
	char sha[41];
	const char *date, *subject;
};

void hruns_init(struct hruns *s, const char *experiment, int keep_named)
{
	struct strpool empty = STRPOOL_INIT;
	memset(s, 0, sizeof(*s));
	s->experiment = experiment;
	s->keep_named = keep_named;
	s->pool = empty;
}

/* "c7d6a3e", "c7d6a3e+5be1dc0" (the diff's hash of a dirty tree; "+?" when
 * the record has none), "(none)" */
static const char *run_identity(struct hruns *s, const cJSON *run)
{
	const cJSON *git = json_path(run, "provenance.git");
	const char *sha = json_str(git, "commit"), *diff = json_str(git, "diff_sha256");
	char id[32];
	if (!sha)
		return strpool_get(&s->pool, "(none)");
	if (!cJSON_IsTrue(cJSON_GetObjectItem(git, "dirty")))
		snprintf(id, sizeof(id), "%.7s", sha);
	else
		snprintf(id, sizeof(id), "%.7s+%.7s", sha, diff ? diff : "?");
	return strpool_get(&s->pool, id);
}

static int cmp_shape(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct figure));
}

/* What figure f shares with other runs' figures, the set's one copy: f with
 * its own values unset (f's strings interned already, so equal strings are
 * equal pointers; f's padding is zero: figures_of_run clears each figure) */
static const struct figure *keep_shape(struct hruns *s, const struct figure *f)
{
	struct figure sh, *copy;
	void *at;
	memcpy(&sh, f, sizeof(sh));
	sh.run_id = sh.commit = NULL;
	sh.median_us = sh.min_us = sh.max_us = sh.tflops = sh.gbps = sh.clock_mhz = sh.value = 0;
	sh.samples = NULL;
	sh.nsamples = sh.ntotal = 0;
	sh.samples_error = NULL;
	sh.samples_at = NULL;
	at = tfind(&sh, &s->shapes, cmp_shape);
	if (at)
		return *(const struct figure **)at;
	copy = xmalloc(sizeof(*copy));
	memcpy(copy, &sh, sizeof(sh));
	if (!tsearch(copy, &s->shapes, cmp_shape)) {
		fprintf(stderr, "fatal: out of memory keeping a figure\n");
		abort();
	}
	return copy;
}

void hrun_figure(const struct hrun *r, int j, struct figure *out)
{
	const struct hfig *h = &r->figs[j];
	memcpy(out, h->shape, sizeof(*out));
	out->run_id = h->run_id;
	out->commit = h->commit;
	out->median_us = h->median_us;
	out->min_us = h->min_us;
	out->max_us = h->max_us;
	out->tflops = h->tflops;
	out->gbps = h->gbps;
	out->clock_mhz = h->clock_mhz;
	out->value = h->value;
	out->samples = NULL;
	out->nsamples = h->nsamples;
	out->ntotal = h->ntotal;
	out->samples_error = h->samples_error;
}

/* The figures history may plot or follow: timed ones (a median), and named
 * ones when the set keeps them; each one's samples' place noted */
static void keep_figures(struct hruns *s, struct hrun *r, const cJSON *run)
{
	struct figures all;
	int i, k = 0;
	figures_of_run(run, &all);
	r->figs = xcalloc((size_t)all.n + 1, sizeof(*r->figs));
	for (i = 0; i < all.n; i++) {
		struct figure *f = &all.v[i];
		struct hfig *h = &r->figs[k];
		if (f->name ? !s->keep_named : isnan(f->median_us))
			continue;
		runsum_samples_at(f->samples_at, h->at);   /* none there: at stays [0, 0] */
		figure_intern(f, &s->pool);
		h->shape = keep_shape(s, f);
		h->run_id = f->run_id;
		h->commit = f->commit;
		h->median_us = f->median_us;
		h->min_us = f->min_us;
		h->max_us = f->max_us;
		h->tflops = f->tflops;
		h->gbps = f->gbps;
		h->clock_mhz = f->clock_mhz;
		h->value = f->value;
		h->src = f->samples && f->nsamples > 0 ? i : -1;   /* read again: tl_read_run */
		h->nsamples = f->nsamples;
		h->ntotal = f->ntotal;
		h->samples_error = f->samples_error;
		k++;
	}
	r->nfigs = k;
	figures_release(&all);
}

int hruns_visit(const struct store_entry *e, void *ctx)
{
	struct hruns *s = ctx;
	const cJSON *run = e->run, *ex = json_path(run, "experiment");
	const cJSON *h0 = cJSON_GetArrayItem(rr_arr(run, "hosts"), 0), *hl;
	struct hrun *r;
	if (s->experiment ? !rerun_is_run_of(run, s->experiment) : !rerun_is_complete(run))
		return 0;
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->v = xrealloc(s->v, (size_t)s->cap * sizeof(*s->v));
	}
	r = &s->v[s->n++];
	memset(r, 0, sizeof(*r));
	r->run_id = strpool_get(&s->pool, e->run_id);
	r->dir = strpool_get(&s->pool, e->dir);
	r->started = strpool_get(&s->pool, json_str(run, RK_STARTED_AT));
	r->commit = strpool_get(&s->pool, json_str(json_path(run, "provenance.git"), "commit"));
	r->slot = run_identity(s, run);
	r->outcome = strpool_get(&s->pool, json_str(run, RK_OUTCOME));
	r->exp_name = strpool_get(&s->pool, json_str(ex, "name"));
	r->exp_slug = strpool_get(&s->pool, json_str(ex, "slug"));
	/* the headline history follows by default: the summary's, or as its
	 * steps decide (a whole run.json, an older summary) */
	hl = rr_obj(h0, "headline");
	if (!hl)
		hl = rr_headline_step(run, h0);
	if (rr_str(hl, "program") && rr_str(hl, "problem")) {
		r->hl_program = strpool_get(&s->pool, rr_str(hl, "program"));
		r->hl_problem = strpool_get(&s->pool, rr_str(hl, "problem"));
	}
	r->order = HRUN_UNKNOWN_ORDER;
	keep_figures(s, r, run);
	return 0;
}

static const struct gitc *sort_base;   /* by_sha's commits (qsort has no context) */

static int by_sha(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y, c = strcmp(sort_base[a].sha, sort_base[b].sha);
	return c ? c : a - b;   /* a sha listed twice: its first place first */
}

/* The place of sha among the commits git listed (oldest first; its first
 * place when listed twice): a binary search of their indices sorted by sha. */
static int commit_pos(const struct gitc *commits, const int *by, int ncommits, const char *sha,
		      int *pos)
{
	int lo = 0, hi = ncommits;
	while (sha && lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (strcmp(commits[by[mid]].sha, sha) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!sha || lo >= ncommits || strcmp(commits[by[lo]].sha, sha))
		return 0;
	*pos = by[lo];
	return 1;
}

/* git log's lines as commits (sha, date, subject) */
static void read_commits(struct hruns *s)
{
	int i;
	s->commits = xcalloc((size_t)s->nl + 1, sizeof(*s->commits));
	for (i = 0; i < s->nl; i++) {
		char *t1 = strchr(s->lines[i], '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
		struct gitc *c = &s->commits[s->ncommits];
		if (!t1 || !t2 || t1 - s->lines[i] != 40)
			continue;
		memcpy(c->sha, s->lines[i], 40);
		*t2 = '\0';
		c->date = t1 + 1;
		c->subject = t2 + 1;
		s->ncommits++;
	}
}

static void forget_commits(struct hruns *s)
{
	rerun_free_lines(s->lines, s->nl);
	free(s->commits);
	free(s->root);
	free(s->order_err);
	s->lines = NULL;
	s->commits = NULL;
	s->root = s->order_err = NULL;
	s->nl = s->ncommits = 0;
}

const char *hruns_order(struct hruns *s, const char *root)
{
	const char *av[] = { "git", "log", "--topo-order", "--reverse", "--all",
			     "--format=%H%x09%cs%x09%s", NULL };
	struct strbuf err = STRBUF_INIT;
	int i, *by;
	if (s->root && !strcmp(s->root, root))
		return s->order_err;
	forget_commits(s);
	s->root = xstrdup(root);
	if (rerun_git_lines(root, av, &s->lines, &s->nl, &err) != GO_OK) {
		s->order_err = strbuf_detach(&err, NULL);
		s->nl = 0;
	}
	strbuf_release(&err);
	read_commits(s);
	by = xcalloc((size_t)s->ncommits + 1, sizeof(*by));
	for (i = 0; i < s->ncommits; i++)
		by[i] = i;
	sort_base = s->commits;
	qsort(by, (size_t)s->ncommits, sizeof(*by), by_sha);
	for (i = 0; i < s->n; i++) {
		struct hrun *r = &s->v[i];
		int pos;
		r->order = HRUN_UNKNOWN_ORDER;
		r->date = r->subject = NULL;
		if (commit_pos(s->commits, by, s->ncommits, r->commit, &pos)) {
			r->order = pos;
			r->date = s->commits[pos].date;
			r->subject = s->commits[pos].subject;
		}
	}
	free(by);
	return s->order_err;
}

void hruns_release(struct hruns *s)
{
	int i;
	for (i = 0; i < s->n; i++)
		free(s->v[i].figs);
	while (s->shapes) {   /* POSIX has no tdestroy: the root, one at a time */
		struct figure *sh = *(struct figure **)s->shapes;
		tdelete(sh, &s->shapes, cmp_shape);
		free(sh);
	}
	free(s->v);
	free(s->warnings);
	forget_commits(s);
	strpool_release(&s->pool);
	memset(s, 0, sizeof(*s));
}
