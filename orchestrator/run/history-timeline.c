/* history-timeline.c -- `gpuorch history`'s engine: every run of an experiment across commits (history-timeline.h).
 *
 * Runs come from the store's summaries (report/runsum.h); they are ordered
 * by their commit's place in `git log --topo-order --reverse --all` (oldest
 * first), runs at one commit by start time; a run whose commit git does not
 * know (or without one) goes by its start time: before the first run of a
 * known commit that started after it. A run's identity is its commit and,
 * from a dirty work tree, its diff's hash ("c7d6a3e+5be1dc0"). One point per
 * run and GPU model; a step change is a point that differs from the previous
 * point of its series by compare's one timing rule (compare_timing: the
 * stored samples, the factor, the instance factor across GPU instances).
 * Only the plotted points' samples are read (samples.txt). The runs come
 * from a set (run/history-runs.h): the caller's, filled in its own pass over
 * the store (`gpuorch site` draws every page from one), or one filled here
 * by a pass of its own; either way each summary is read once. What stays
 * besides the set is what is printed (each point's figure and, until the
 * next point of its series is compared with it, its samples). */
#include "run/history-timeline.h"
#include "run/history-runs.h"
#include "store/runkeys.h"
#include "report/compare.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/parmap.h"
#include "core/stats.h"
#include "report/history-chart.h"
#include "core/jsonutil.h"
#include "run/rerun.h"
#include "store/store.h"
#include "report/runsum.h"
#include "store/runread.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

static int cmp_started(const struct hrun *a, const struct hrun *b)
{
	int c = strcmp(a->started ? a->started : "", b->started ? b->started : "");
	return c ? c : strcmp(a->run_id, b->run_id);
}

static int cmp_hrun(const void *x, const void *y)
{
	const struct hrun *a = *(const struct hrun *const *)x, *b = *(const struct hrun *const *)y;
	if (a->order != b->order)
		return a->order < b->order ? -1 : 1;
	return cmp_started(a, b);
}

/* The store's newest-first order (store_list's): start time, then run id, descending */
static int newer(const struct hrun *a, const struct hrun *b)
{
	int c;
	if (a->started && b->started && (c = strcmp(a->started, b->started)) != 0)
		return -c;
	if (!a->started != !b->started)
		return a->started ? -1 : 1;
	return -strcmp(a->run_id, b->run_id);
}

static int cmp_newest(const void *x, const void *y)
{
	return newer(*(const struct hrun *const *)x, *(const struct hrun *const *)y);
}

/* Runs of known commits in commit order, then (from k on) the others in time
 * order: each of the others goes before the first run of a known commit
 * that started after it, so an old run without a commit is not "newest". */
static void order_runs(const struct hrun **runs, int n)
{
	const struct hrun **out;
	int k, i, j, m = 0;
	if (n <= 0)   /* nothing to order (and gcc's ASan build sees n >= 1) */
		return;
	out = xcalloc((size_t)n + 1, sizeof(*out));
	qsort(runs, (size_t)n, sizeof(*runs), cmp_hrun);
	for (k = 0; k < n && runs[k]->order < HRUN_UNKNOWN_ORDER; k++)
		;
	for (i = 0, j = k; i < k || j < n;) {
		if (j < n && (i == k || cmp_started(runs[j], runs[i]) < 0))
			out[m++] = runs[j++];
		else
			out[m++] = runs[i++];
	}
	memcpy(runs, out, (size_t)n * sizeof(*runs));
	free(out);
}

static int add_series(const char ***names, int *n, const char *name)
{
	int i;
	for (i = 0; i < *n; i++)
		if (!strcmp((*names)[i], name))
			return i;
	*names = xrealloc(*names, (size_t)(*n + 1) * sizeof(char *));
	(*names)[*n] = xstrdup(name);
	return (*n)++;
}

static const char *better_words(enum metric_better b)
{
	return b == METRIC_HIGHER_BETTER ? "higher is better"
	       : b == METRIC_LOWER_BETTER ? "lower is better" : "no better direction declared";
}

double timeline_value(const struct metric_def *m, const struct figure *f)
{
	if (!strcmp(m->name, "latency_us"))
		return f ? f->median_us : 0;
	if (!strcmp(m->name, "tflops"))
		return f ? f->tflops : 0;
	if (!strcmp(m->name, "gbps"))
		return f ? f->gbps : 0;
	return NAN;
}

/* One `history` invocation: what it loads, computes and renders. */
struct tl {
	const struct timeline_opts *o;
	const char *program, *problem, *exp, *root, *slug, *name;
	const struct metric_def *metric;
	const char *fig, *fig_unit;
	enum metric_better fig_better;
	int tflops;             /* the plotted figure is higher-is-better */
	double factor;
	char *own_program, *own_problem, *own_unit;  /* what program, problem, fig_unit
						      * point to when read from a run */
	struct hruns *set;      /* the runs read: o->runs, or own */
	struct hruns own;
	const struct hrun **runs;   /* the experiment's, in commit order */
	int nr;
	const char **series;    /* GPU labels (owned) */
	int nseries;
	struct history_point *pts;
	struct figure **pfig;     /* each point's figure (figure_keep; its samples freed once a
				     a later point of its series compared) */
	char *moved;            /* per point: a figure with no direction moved beyond the factor */
	char *unsure;           /* per point: the record's samples and medians disagree, one says slower */
	char **notes;           /* per point: what the step's verdict says besides (GPU instances, ...) */
	int npts;
	const struct cmp_opts *co;   /* tl_points' comparison options */
	char *dir, *path;
	struct strbuf md, svg;
};

/* An error or warning of this history: on stderr, or into o->why (one line each) */
__attribute__((format(printf, 2, 3)))
static void tl_say(const struct tl *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (t->o->why)
		strbuf_vaddf(t->o->why, fmt, ap);
	else
		vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/* threads reading samples for the points (core/parmap.h): each holds one
 * run's samples, the window twice that many */
#define TL_JOBS 16

static char *dup_or_null(const char *x)
{
	return x ? xstrdup(x) : NULL;
}

/* The experiment's runs of the set (filled here by a pass over the store
 * unless the caller's), the slug and name of its newest (store_list's
 * order); 0, or an exit code after its message. */
static int tl_select(struct tl *t)
{
	struct strbuf err = STRBUF_INIT, warn = STRBUF_INIT;
	const struct hrun *newest = NULL;
	enum go_status st;
	int i;
	if (t->o->runs) {
		t->set = t->o->runs;
	} else {
		t->set = &t->own;
		hruns_init(&t->own, t->exp, t->fig != NULL);
		st = store_each(runsum_load, hruns_visit, &t->own, &warn, &err);
		if (st != GO_OK) {
			tl_say(t, "error: %s\n", err.buf);
			strbuf_release(&err);
			strbuf_release(&warn);
			return go_exit_code(st);
		}
		if (warn.len)
			t->own.warnings = strbuf_detach(&warn, NULL);
	}
	if (t->fig && !t->set->keep_named) {   /* a programming error: no figure to find */
		fprintf(stderr, "BUG: history of figure '%s' from a set without named figures\n", t->fig);
		abort();
	}
	if (t->set->warnings)
		tl_say(t, "%s", t->set->warnings);
	t->runs = xcalloc((size_t)t->set->n + 1, sizeof(*t->runs));
	for (i = 0; i < t->set->n; i++) {
		const struct hrun *r = &t->set->v[i];
		if (!rr_streq(r->exp_name, t->exp) && !rr_streq(r->exp_slug, t->exp))
			continue;
		t->runs[t->nr++] = r;
		if (!newest || newer(r, newest) < 0)
			newest = r;
	}
	if (newest) {
		t->slug = newest->exp_slug;
		t->name = newest->exp_name;
	}
	strbuf_release(&err);
	strbuf_release(&warn);
	return 0;
}

/* The experiment's runs, ordered by commit (git log, best effort: no
 * repository, no order). 0, or an exit code after its message. */
static int tl_load(struct tl *t)
{
	const char *why;
	int rc = tl_select(t);
	if (rc)
		return rc;
	if (!t->nr) {
		tl_say(t, "error: no complete run of '%s' under '%s'; see 'gpuorch runs'\n", t->exp,
			store_root());
		return GO_EXIT_USAGE;
	}
	/* newest first, as the store lists them, before the commit order */
	qsort(t->runs, (size_t)t->nr, sizeof(*t->runs), cmp_newest);
	why = hruns_order(t->set, t->root);
	if (why)
		tl_say(t, "warning: runs are in time order, not commit order: %s\n", why);
	order_runs(t->runs, t->nr);
	return 0;
}

/* A named figure's direction and unit, from its newest run. 0, or an exit
 * code after saying which figures the runs have. */
static int tl_figure_kind(struct tl *t)
{
	struct strbuf have = STRBUF_INIT;
	int i, j, found = 0;
	for (i = t->nr - 1; i >= 0 && !found; i--) {
		for (j = 0; j < t->runs[i]->nfigs && !found; j++) {
			struct figure fig, *f = &fig;
			hrun_figure(t->runs[i], j, f);
			if (figure_is_named(f, t->fig) && (!t->program || rr_streq(f->program, t->program)) &&
			    (!t->problem || rr_streq(f->problem, t->problem))) {
				t->fig_better = f->better;
				t->tflops = t->fig_better == METRIC_HIGHER_BETTER;
				t->fig_unit = t->own_unit = dup_or_null(f->unit);
				found = 1;
			}
		}
	}
	if (found)
		return 0;
	for (i = t->nr - 1; i >= 0; i--) {
		struct figures figs;
		figs.n = t->runs[i]->nfigs;
		figs.v = xcalloc((size_t)figs.n + 1, sizeof(*figs.v));
		for (j = 0; j < figs.n; j++)
			hrun_figure(t->runs[i], j, &figs.v[j]);
		figures_list_names(&figs, NULL, NULL, &have);
		free(figs.v);   /* no samples in them (hrun_figure) */
	}
	tl_say(t, "error: no run of '%s' has a figure '%s'%s%s%s%s; its runs have %s\n",
		t->exp, t->fig, t->program ? " of " : "", t->program ? t->program : "",
		t->problem ? " on " : "", t->problem ? t->problem : "",
		have.len ? have.buf : "no named figures (only timings: use --metric)");
	strbuf_release(&have);
	return GO_EXIT_USAGE;
}

/* program (and problem) as the run at hand names them, kept beyond its tree */
static void tl_follow(struct tl *t, const char *program, const char *problem)
{
	if (!t->program && program) {
		free(t->own_program);
		t->program = t->own_program = xstrdup(program);
	}
	if (!t->problem && problem) {
		free(t->own_problem);
		t->problem = t->own_problem = xstrdup(problem);
	}
}

/* The program and problem to follow when not given: the newest run's
 * headline (its summary's, or its steps' as store/runread.h decides: the
 * set kept it), else
 * the newest run's first kernel with the figure. 0, or an exit code. */
static int tl_pick_step(struct tl *t)
{
	int i, j;
	if (!t->fig && !t->program && !t->problem)
		for (i = t->nr - 1; i >= 0 && !t->program; i--)
			tl_follow(t, t->runs[i]->hl_program, t->runs[i]->hl_problem);
	for (i = t->nr - 1; i >= 0 && (!t->program || !t->problem); i--) {
		for (j = 0; j < t->runs[i]->nfigs; j++) {
			struct figure fig, *f = &fig;
			hrun_figure(t->runs[i], j, f);
			if ((t->program && strcmp(f->program ? f->program : "", t->program)) ||
			    (f->role && !strcmp(f->role, "baseline")) ||
			    (t->fig ? !figure_is_named(f, t->fig) : isnan(f->median_us) || f->name != NULL))
				continue;
			tl_follow(t, f->program, f->problem);
			break;
		}
	}
	if (t->program && t->problem)
		return 0;
	tl_say(t, "error: no run of '%s' has a timed benchmark%s%s\n", t->exp,
		t->program ? " of " : "", t->program ? t->program : "");
	return GO_EXIT_USAGE;
}

/* Point i (the newest) against the previous point k of its series: a step
 * by compare's one rule (the samples of both; one value a run: the ratio in
 * the figure's direction; step > 0 is worse, as a slower timing is). */
static void tl_step(struct tl *t, const struct cmp_opts *co, int k, int i)
{
	const struct figure *f = t->pfig[i];
	struct history_point *p = &t->pts[i];
	struct strbuf why = STRBUF_INIT;
	struct stats_cmp c;
	if (t->fig) {
		t->moved[i] = (char)compare_named(t->pfig[k], f, t->factor, &c);
		if (c.verdict == STATS_SLOWER || c.verdict == STATS_FASTER)
			p->step = c.verdict == STATS_SLOWER ? 1 : -1;
		p->ratio = c.ratio;
	} else if (!compare_comparable(t->pfig[k], f, co, &why)) {
		t->notes[i] = xstrfmt("not comparable with the point before: %s", why.buf);
	} else {
		t->unsure[i] = (char)compare_timing(t->pfig[k], f, co, &c, &why);
		if (c.verdict == STATS_SLOWER || c.verdict == STATS_FASTER || t->unsure[i])
			p->step = c.verdict == STATS_FASTER ? -1 : 1;
		/* the samples' ratio (of the plotted figure for TFLOPS/GB/s) */
		p->ratio = t->tflops ? p->y / t->pts[k].y : c.ratio;
		/* named beside a step, and always across GPU instances */
		if (why.len && (p->step || compare_instances_differ(t->pfig[k], f)))
			t->notes[i] = strbuf_detach(&why, NULL);
	}
	strbuf_release(&why);
}

/* Figure f of run i as a new point, kept beyond the set's figure with its
 * own samples (v, n: read from samples.txt; taken), its spread the
 * 10th-90th percentile, stepped against its series' last. */
static void tl_add_point(struct tl *t, const struct cmp_opts *co, int i, const struct figure *src,
			 double *v, int n, int s)
{
	struct history_point *p = &t->pts[t->npts];
	struct figure *f = xmalloc(sizeof(*f));
	int k;
	*f = *src;   /* its strings are the set's, which outlives the history */
	f->samples = v;
	f->nsamples = n;
	t->pfig[t->npts++] = f;   /* freed by figure_free_kept: the struct and its samples */
	p->x = i;
	p->series = s;
	p->y = t->fig ? f->value : timeline_value(t->metric, f);
	stats_sort(f->samples, f->nsamples);
	p->lo = p->hi = NAN;
	if (f->nsamples >= 2) {
		double q10 = stats_quantile(f->samples, f->nsamples, 0.1);
		double q90 = stats_quantile(f->samples, f->nsamples, 0.9);
		if (t->tflops && q10 > 0 && q90 > 0) {
			p->lo = p->y * f->median_us / q90;
			p->hi = p->y * f->median_us / q10;
		} else if (!t->tflops) {
			p->lo = q10;
			p->hi = q90;
		}
	}
	for (k = t->npts - 2; k >= 0; k--)
		if (t->pts[k].series == s) {
			tl_step(t, co, k, t->npts - 1);
			/* k is no longer its series' last: nothing compares with its
			 * samples again (their count stays), so the memory of a
			 * history is one point's samples a series, not every point's */
			free(t->pfig[k]->samples);
			t->pfig[k]->samples = NULL;
			break;
		}
}

/* Figure f is of what the history follows: its program, problem and figure. */
static int tl_wanted(const struct tl *t, const struct figure *f)
{
	if (!f->program || strcmp(f->program, t->program) || !f->problem ||
	    strcmp(f->problem, t->problem))
		return 0;
	return t->fig ? figure_is_named(f, t->fig) && !isnan(f->value)
		      : !f->name && !isnan(f->median_us) && !isnan(timeline_value(t->metric, f));
}

/* The samples of run i's points (v[j], n[j] for its figure j: a wanted
 * figure, the first of its GPU model in the run), read and sorted: made on core/parmap.c's threads (reading samples.txt is most
 * of history's time), taken in run order by tl_take_run. */
struct tl_read {
	double **v;
	int *n;
	int nfigs;
};

/* A wanted figure before figure j of run r has its GPU model: j makes no
 * point (tl_take_run takes a run's first figure of each series). */
static int tl_seen_gpu(const struct tl *t, const struct hrun *r, int j)
{
	struct figure fj, fk;
	int k;
	hrun_figure(r, j, &fj);
	for (k = 0; k < j; k++) {
		hrun_figure(r, k, &fk);
		if (tl_wanted(t, &fk) && !strcmp(figure_gpu_label(&fk), figure_gpu_label(&fj)))
			return 1;
	}
	return 0;
}

static void *tl_read_run(int i, void *ctx)
{
	const struct tl *t = ctx;   /* read only here: t->runs and the options */
	const struct hrun *r = t->runs[i];
	struct tl_read *rd = xcalloc(1, sizeof(*rd));
	int j;
	rd->nfigs = r->nfigs;
	rd->v = xcalloc((size_t)r->nfigs + 1, sizeof(*rd->v));
	rd->n = xcalloc((size_t)r->nfigs + 1, sizeof(*rd->n));
	for (j = 0; j < r->nfigs; j++) {
		struct figure fig, *f = &fig;
		hrun_figure(r, j, f);
		if (!tl_wanted(t, f) || tl_seen_gpu(t, r, j))
			continue;
		if (r->figs[j].src >= 0) {   /* inline in the summary: read it again */
			struct strbuf why = STRBUF_INIT;
			struct figures all = { NULL, 0 };
			cJSON *run = NULL;
			if (runsum_load(r->dir, &run, &why) == GO_OK)
				figures_of_run(run, &all);
			if (r->figs[j].src < all.n) {
				rd->v[j] = all.v[r->figs[j].src].samples;
				rd->n[j] = all.v[r->figs[j].src].nsamples;
				all.v[r->figs[j].src].samples = NULL;
			}
			figures_release(&all);
			cJSON_Delete(run);
			strbuf_release(&why);
		} else if (r->figs[j].at[1] > 0) {
			runsum_read_samples_at(r->dir, r->figs[j].at[0], r->figs[j].at[1], &rd->v[j],
					       &rd->n[j]);
		}
		stats_sort(rd->v[j], rd->n[j]);   /* a no-op for samples.txt: stored sorted */
	}
	return rd;
}

static void tl_read_drop(void *p, void *ctx)
{
	struct tl_read *rd = p;
	int j;
	(void)ctx;
	for (j = 0; j < rd->nfigs; j++)
		free(rd->v[j]);
	free(rd->v);
	free(rd->n);
	free(rd);
}

/* Run i's points, in run order (a pmap_take_fn). */
static int tl_take_run(int i, void *p, void *ctx)
{
	struct tl *t = ctx;
	struct tl_read *rd = p;
	int j, k, cap = t->nr * 8;
	int first = t->npts;   /* run i's points: from here on */
	for (j = 0; j < t->runs[i]->nfigs && t->npts < cap; j++) {
		struct figure fig, *f = &fig;
		int s, dup = 0;
		hrun_figure(t->runs[i], j, f);
		if (!tl_wanted(t, f))
			continue;
		s = add_series(&t->series, &t->nseries, figure_gpu_label(f));
		for (k = first; k < t->npts; k++)
			dup |= t->pts[k].series == s;
		if (!dup) {
			tl_add_point(t, t->co, i, f, rd->v[j], rd->n[j], s);
			rd->v[j] = NULL;   /* the point's now */
		}
	}
	tl_read_drop(rd, ctx);
	return 0;
}

/* The points: one per run and GPU model, of the program, problem and figure
 * followed; each run's samples read (on the pool's threads), its points
 * taken in run order. */
static void tl_points(struct tl *t)
{
	struct cmp_opts co;
	int cap = t->nr * 8;
	t->pts = xcalloc((size_t)cap + 1, sizeof(*t->pts));
	t->pfig = xcalloc((size_t)cap + 1, sizeof(*t->pfig));
	t->moved = xcalloc((size_t)cap + 1, 1);
	t->unsure = xcalloc((size_t)cap + 1, 1);
	t->notes = xcalloc((size_t)cap + 1, sizeof(char *));
	memset(&co, 0, sizeof(co));
	co.alpha = STATS_DEFAULT_ALPHA;
	co.factor = t->factor;
	t->co = &co;
	pmap_run(t->nr, pmap_jobs(TL_JOBS), tl_read_run, tl_take_run, tl_read_drop, t);
	t->co = NULL;
}

/* history.md's head: what is plotted and what a step is */
static void tl_md_head(struct tl *t)
{
	const char *nm = t->name ? t->name : t->exp;
	strbuf_addf(&t->md, "# History: %s\n\n", nm);
	if (t->fig)
		strbuf_addf(&t->md, "%s %s, figure %s (%s, %s) over commits (oldest first), %d run%s.\n\n",
			    t->program, t->problem, t->fig, t->fig_unit ? t->fig_unit : "no unit",
			    better_words(t->fig_better), t->nr, t->nr == 1 ? "" : "s");
	else
		strbuf_addf(&t->md, "%s %s, %s over commits (oldest first), %d run%s.\n\n", t->program,
			    t->problem, t->tflops ? t->metric->unit : "median latency", t->nr,
			    t->nr == 1 ? "" : "s");
	strbuf_addstr(&t->md, "![history chart](history.svg)\n\n");
	if (t->fig)
		strbuf_addf(&t->md, "The figure has one value a run: a step is a point beyond x%.3g of the "
			    "previous point of the same GPU.\n\n", t->factor);
	else
		strbuf_addf(&t->md, "A step is a point that differs from the previous point of the same GPU "
			    "model by `gpuorch compare`'s rule: the Mann-Whitney U test on the stored samples "
			    "(p < %g) and their medians' ratio beyond x%.3g (x%.3g between two GPU instances). "
			    "A run without a known commit is placed by its start time; a dirty tree's run is "
			    "named by its commit and its diff's hash.\n\n",
			    STATS_DEFAULT_ALPHA, t->factor,
			    t->factor > CMP_INSTANCE_FACTOR ? t->factor : CMP_INSTANCE_FACTOR);
	strbuf_addf(&t->md, "| # | commit | date | subject | run | host (GPU) | %s | "
		    "TFLOPS | step |\n|---|---|---|---|---|---|---|---|---|\n",
		    t->fig ? "value" : "median [min-max, n]");
}

/* history.md's row of point j (run i) */
static void tl_md_point(struct tl *t, int i, int j, struct strbuf *cell)
{
	const struct figure *f = t->pfig[j];
	const struct history_point *p = &t->pts[j];
	strbuf_reset(cell);
	compare_fmt_figure(cell, f);
	strbuf_addf(&t->md, "| %d | %s | %s | %s | %s | %s (%s) | %s | ", i + 1, t->runs[i]->slot,
		    t->runs[i]->date ? t->runs[i]->date : "-",
		    t->runs[i]->subject ? t->runs[i]->subject : "(commit unknown here)",
		    t->runs[i]->run_id, f->host ? f->host : "?", figure_gpu_label(f), cell->buf);
	if (isnan(f->tflops))
		strbuf_addstr(&t->md, "- | ");
	else
		strbuf_addf(&t->md, "%.1f | ", f->tflops);
	/* step > 0: worse (a slower timing, a figure gone the wrong way) */
	if (p->step)
		strbuf_addf(&t->md, "**%s** x%.3f", t->unsure[j] ? "regression?" : p->step > 0
			    ? "regression" : "gain", p->ratio);
	else if (t->moved[j])
		strbuf_addf(&t->md, "**changed** x%.3f (no better direction declared)", p->ratio);
	if (t->notes[j])
		strbuf_addf(&t->md, "%s%s", p->step || t->moved[j] ? "; " : "", t->notes[j]);
	strbuf_addstr(&t->md, " |\n");
}

/* history.md: the head, then a row per point, or per run without one (the
 * points are in run order: tl_points adds them run by run) */
static void tl_render_md(struct tl *t)
{
	struct strbuf cell = STRBUF_INIT;
	int i, j = 0;
	tl_md_head(t);
	for (i = 0; i < t->nr; i++) {
		int any = 0;
		for (; j < t->npts && t->pts[j].x == i; j++) {
			any = 1;
			tl_md_point(t, i, j, &cell);
		}
		if (!any)
			strbuf_addf(&t->md, "| %d | %s | %s | %s | %s | - | no figure (%s) | - | |\n", i + 1,
				    t->runs[i]->slot, t->runs[i]->date ? t->runs[i]->date : "-",
				    t->runs[i]->subject ? t->runs[i]->subject : "(commit unknown here)",
				    t->runs[i]->run_id, t->runs[i]->outcome ? t->runs[i]->outcome : "?");
	}
	strbuf_release(&cell);
}

/* history.svg (report/history-chart.h); for TFLOPS a slower run is a step down:
 * the points' steps are flipped for the chart and stay so */
static void tl_render_svg(struct tl *t)
{
	struct history_chart ch;
	const char *nm = t->name ? t->name : t->exp;
	char *title = t->fig ? xstrfmt("%s: %s %s, %s", nm, t->program, t->problem, t->fig)
			     : xstrfmt("%s: %s %s", nm, t->program, t->problem);
	char *y_label = t->fig ? xstrfmt("%s (%s, %s)", t->fig, t->fig_unit ? t->fig_unit : "no unit",
					 better_words(t->fig_better))
			: t->tflops ? xstrfmt("%s (higher is better)", t->metric->unit)
			: xstrdup("median latency (us, lower is better)");
	const char **slots = xcalloc((size_t)t->nr + 1, sizeof(*slots));
	int j;
	for (j = 0; j < t->nr; j++)
		slots[j] = t->runs[j]->slot;
	for (j = 0; t->tflops && j < t->npts; j++)
		t->pts[j].step = -t->pts[j].step;
	memset(&ch, 0, sizeof(ch));
	ch.title = title;
	ch.y_label = y_label;
	ch.higher_is_better = t->tflops;
	ch.one_value = t->fig != NULL;
	ch.slots = slots;
	ch.nslots = t->nr;
	ch.series = t->series;
	ch.nseries = t->nseries;
	ch.pts = t->pts;
	ch.npts = t->npts;
	history_svg(&ch, &t->svg);
	free(slots);
	free(title);
	free(y_label);
}

/* the step of the newest measured point (> 0: a regression): a newer run
 * without the figure (an infra_error, a failed step) does not hide it */
static int tl_last_step(const struct tl *t)
{
	int i = -1, j, last = 0;
	for (j = 0; j < t->npts; j++)
		if (t->pts[j].x > i)
			i = t->pts[j].x;
	for (j = 0; j < t->npts; j++)
		if (t->pts[j].x == i && t->pts[j].step)
			last = t->tflops ? -t->pts[j].step : t->pts[j].step;
	return last;
}

/* history.svg and history.md under the experiment's folder of the store */
static int tl_write(struct tl *t)
{
	struct strbuf err = STRBUF_INIT;
	enum go_status st;
	t->dir = xstrfmt("%s/%s", store_root(), t->slug ? t->slug : t->exp);
	t->path = xstrfmt("%s/history.svg", t->dir);
	st = fs_write_atomic(t->path, t->svg.buf, t->svg.len, &err);
	free(t->path);
	t->path = xstrfmt("%s/history.md", t->dir);
	if (st == GO_OK)
		st = fs_write_atomic(t->path, t->md.buf, t->md.len, &err);
	if (st != GO_OK)
		fprintf(stderr, "error: %s\n", err.buf);
	strbuf_release(&err);
	return st == GO_OK ? 0 : go_exit_code(st);
}

/* --json: the points, and the runs without the figure (the table's other rows) */
static cJSON *tl_json(const struct tl *t)
{
	cJSON *jo = cJSON_CreateObject(), *a;
	int i, j;
	json_add_str(jo, "experiment", t->name ? t->name : t->exp);
	json_add_str(jo, "program", t->program);
	json_add_str(jo, "problem", t->problem);
	json_add_str(jo, "metric", t->fig ? t->fig : t->metric->name);
	json_add_str(jo, "unit", t->fig ? t->fig_unit : t->metric->unit);
	if (t->fig)
		json_add_str(jo, "better", metric_better_name(t->fig_better));
	json_add_str(jo, "history_md", t->path);
	a = json_add_arr(jo, "points");
	for (j = 0; j < t->npts; j++) {
		const struct figure *f = t->pfig[j];
		const struct history_point *p = &t->pts[j];
		cJSON *pt = cJSON_CreateObject();
		json_add_num(pt, "index", p->x + 1);
		json_add_str(pt, "commit", t->runs[p->x]->commit);
		json_add_str(pt, "run_id", t->runs[p->x]->run_id);
		json_add_str(pt, "host", f->host);
		json_add_str(pt, "gpu", figure_gpu_label(f));
		json_add_num(pt, "value", p->y);
		json_add_num(pt, "median_us", f->median_us);
		json_add_num(pt, "nsamples", f->ntotal > f->nsamples ? f->ntotal : f->nsamples);
		json_add_str(pt, "step", t->moved[j] ? "changed" : !p->step ? NULL
			     : t->unsure[j] ? "regression?"
			     : ((p->step > 0) ^ t->tflops) ? "regression" : "gain");
		if (t->notes[j])
			json_add_str(pt, "note", t->notes[j]);
		json_add_num(pt, "nsamples_stored", f->nsamples);
		if (f->clock_mhz > 0)
			json_add_num(pt, "sm_clock_mhz", f->clock_mhz);
		if (p->step || t->moved[j])
			json_add_num(pt, "ratio", p->ratio);
		if (!isnan(p->lo) && !isnan(p->hi)) {
			json_add_num(pt, "p10", p->lo);
			json_add_num(pt, "p90", p->hi);
		}
		cJSON_AddItemToArray(a, pt);
	}
	a = json_add_arr(jo, "runs_without_figure");
	for (i = 0, j = 0; i < t->nr; i++) {
		cJSON *ro;
		int any = 0;
		for (; j < t->npts && t->pts[j].x == i; j++)   /* points are in run order */
			any = 1;
		if (any)
			continue;
		ro = cJSON_CreateObject();
		json_add_num(ro, "index", i + 1);
		json_add_str(ro, "commit", t->runs[i]->commit);
		json_add_str(ro, "run_id", t->runs[i]->run_id);
		json_add_str(ro, "outcome", t->runs[i]->outcome);
		cJSON_AddItemToArray(a, ro);
	}
	return jo;
}

static void tl_print_json(const struct tl *t)
{
	cJSON *jo = tl_json(t);
	char *text = cJSON_Print(jo);
	puts(text);
	free(text);
	cJSON_Delete(jo);
}

static void tl_free(struct tl *t)
{
	int i;
	for (i = 0; t->pfig && i < t->npts; i++)
		figure_free_kept(t->pfig[i]);
	for (i = 0; i < t->nseries; i++)
		free((char *)t->series[i]);
	free(t->own_program);
	free(t->own_problem);
	free(t->own_unit);
	free(t->pts);
	free(t->pfig);
	free(t->moved);
	free(t->unsure);
	for (i = 0; t->notes && i < t->npts; i++)
		free(t->notes[i]);
	free(t->notes);
	free(t->series);
	free(t->runs);
	if (t->set == &t->own)
		hruns_release(&t->own);
	free(t->dir);
	free(t->path);
	strbuf_release(&t->md);
	strbuf_release(&t->svg);
}

int timeline_run(const struct timeline_opts *o)
{
	struct tl t;
	int rc;

	memset(&t, 0, sizeof(t));
	t.o = o;
	t.program = o->program;
	t.problem = o->problem;
	t.exp = o->experiment;
	t.root = o->root ? o->root : ".";
	t.metric = o->metric ? o->metric : metric_find("latency_us");
	t.fig = o->figure;
	t.fig_better = METRIC_BETTER_NONE;
	t.tflops = t.metric->better == METRIC_HIGHER_BETTER;
	t.factor = o->factor > 0 ? o->factor : STATS_DEFAULT_FACTOR;
	strbuf_init(&t.md, 0);
	strbuf_init(&t.svg, 0);

	rc = tl_load(&t);
	if (!rc && t.fig)
		rc = tl_figure_kind(&t);
	if (!rc)
		rc = tl_pick_step(&t);
	if (!rc) {
		tl_points(&t);
		tl_render_md(&t);
		tl_render_svg(&t);
		rc = o->json_out ? 0 : tl_write(&t);
	}
	if (!rc && o->json_out) {
		*o->json_out = tl_json(&t);
	} else if (!rc) {
		if (o->json)
			tl_print_json(&t);
		else {
			fputs(t.md.buf, stdout);
			printf("\nhistory: %s (chart: %s/history.svg)\n", t.path, t.dir);
		}
		if (tl_last_step(&t) > 0)
			rc = GO_EXIT_FAILED;
	}
	tl_free(&t);
	return rc;
}
