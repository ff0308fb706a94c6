/* timeline.c -- `gpuorch history`'s engine: every run of an experiment across commits (timeline.h).
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
 * Only the plotted points' samples are read (samples.txt). */
#include "run/timeline.h"
#include "report/compare.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "report/history.h"
#include "core/jsonutil.h"
#include "run/rerun.h"
#include "store/store.h"
#include "report/runsum.h"
#include "store/runread.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

struct hrun {
	const struct store_entry *e;
	int order;              /* commit position; UNKNOWN_ORDER when git does not know it */
	const char *started;
	const char *date, *subject;  /* from git, may be NULL */
};

struct gitc {
	char sha[41];
	char *date, *subject;
};

/* The place of sha among the commits git listed (oldest first). */
static int commit_pos(const struct gitc *commits, int ncommits, const char *sha, int *pos)
{
	int i;
	for (i = 0; sha && i < ncommits; i++)
		if (!strcmp(commits[i].sha, sha)) {
			*pos = i;
			return 1;
		}
	return 0;
}

#define UNKNOWN_ORDER (1 << 30)

static int cmp_started(const struct hrun *a, const struct hrun *b)
{
	int c = strcmp(a->started ? a->started : "", b->started ? b->started : "");
	return c ? c : strcmp(a->e->run_id, b->e->run_id);
}

static int cmp_hrun(const void *x, const void *y)
{
	const struct hrun *a = x, *b = y;
	if (a->order != b->order)
		return a->order < b->order ? -1 : 1;
	return cmp_started(a, b);
}

/* Runs of known commits in commit order, then (from k on) the others in time
 * order: each of the others goes before the first run of a known commit
 * that started after it, so an old run without a commit is not "newest". */
static void order_runs(struct hrun *runs, int n)
{
	struct hrun *out;
	int k, i, j, m = 0;
	if (n <= 0)   /* nothing to order (and gcc's ASan build sees n >= 1) */
		return;
	out = xcalloc((size_t)n + 1, sizeof(*out));
	qsort(runs, (size_t)n, sizeof(*runs), cmp_hrun);
	for (k = 0; k < n && runs[k].order < UNKNOWN_ORDER; k++)
		;
	for (i = 0, j = k; i < k || j < n;) {
		if (j < n && (i == k || cmp_started(&runs[j], &runs[i]) < 0))
			out[m++] = runs[j++];
		else
			out[m++] = runs[i++];
	}
	memcpy(runs, out, (size_t)n * sizeof(*runs));
	free(out);
}

/* "c7d6a3e", "c7d6a3e+5be1dc0" (the diff's hash of a dirty tree; "+?" when
 * the record has none), "(none)" */
static char *run_identity(const cJSON *run)
{
	const cJSON *git = json_path(run, "provenance.git");
	const char *sha = json_str(git, "commit"), *diff = json_str(git, "diff_sha256");
	if (!sha)
		return xstrdup("(none)");
	if (!cJSON_IsTrue(cJSON_GetObjectItem(git, "dirty")))
		return xstrfmt("%.7s", sha);
	return xstrfmt("%.7s+%.7s", sha, diff ? diff : "?");
}

static int add_series(const char ***names, int *n, const char *name)
{
	int i;
	for (i = 0; i < *n; i++)
		if (!strcmp((*names)[i], name))
			return i;
	*names = xrealloc(*names, (size_t)(*n + 1) * sizeof(char *));
	(*names)[*n] = name;
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

int timeline_run(const struct timeline_opts *o)
{
	const char *program = o->program, *problem = o->problem, *exp = o->experiment;
	const char *root = o->root ? o->root : ".";
	const char *slug = NULL, *name = NULL;
	const struct metric_def *metric = o->metric ? o->metric : metric_find("latency_us");
	const char *fig = o->figure, *fig_unit = NULL;
	enum metric_better fig_better = METRIC_BETTER_NONE;
	char *moved = NULL;   /* per point: a figure with no direction moved beyond the factor */
	char *unsure = NULL;  /* per point: the record's samples and medians disagree, one says slower */
	char **notes = NULL;  /* per point: what the step's verdict says besides (GPU instances, ...) */
	struct cmp_opts co;
	int tflops = metric->better == METRIC_HIGHER_BETTER, json = o->json;
	int i, j, n = 0, nr = 0, nl = 0, rc = GO_EXIT_OK, nseries = 0, npts = 0;
	double factor = o->factor > 0 ? o->factor : STATS_DEFAULT_FACTOR;
	struct strbuf err = STRBUF_INIT, warn = STRBUF_INIT, md = STRBUF_INIT, svg = STRBUF_INIT,
		      cell = STRBUF_INIT, why = STRBUF_INIT;
	struct store_entry *v = NULL;
	struct hrun *runs = NULL;
	struct figures *figs = NULL;
	struct history_point *pts = NULL;
	const struct figure **pfig = NULL;
	const char **series = NULL;
	char **lines = NULL, **slots = NULL, *dir = NULL, *path = NULL;
	int last_step = 0, ncommits = 0;
	struct gitc *commits = NULL;
	enum go_status st;

	st = runsum_list(&v, &n, &warn, &err);
	if (st != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);
		rc = go_exit_code(st);
		goto out;
	}
	if (warn.len)
		fputs(warn.buf, stderr);
	runs = xcalloc((size_t)n + 1, sizeof(*runs));
	for (i = 0; i < n; i++)
		if (rerun_is_run_of(v[i].run, exp))
			runs[nr++].e = &v[i];
	if (!nr) {
		fprintf(stderr, "error: no complete run of '%s' under '%s'; see 'gpuorch runs'\n", exp,
			store_root());
		rc = GO_EXIT_USAGE;
		goto out;
	}
	slug = json_str(json_path(runs[0].e->run, "experiment"), "slug");
	name = json_str(json_path(runs[0].e->run, "experiment"), "name");

	/* Commit order from git (best effort: no repository, no order). */
	{
		const char *av[] = { "git", "log", "--topo-order", "--reverse", "--all",
				     "--format=%H%x09%cs%x09%s", NULL };
		if (rerun_git_lines(root, av, &lines, &nl, &err) != GO_OK) {
			fprintf(stderr, "warning: runs are in time order, not commit order: %s\n",
				err.buf);
			nl = 0;
		}
		commits = xcalloc((size_t)nl + 1, sizeof(*commits));
		for (i = 0; i < nl; i++) {
			char *t1 = strchr(lines[i], '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
			if (!t1 || !t2 || t1 - lines[i] != 40)
				continue;
			memcpy(commits[ncommits].sha, lines[i], 40);
			*t2 = '\0';
			commits[ncommits].date = t1 + 1;
			commits[ncommits].subject = t2 + 1;
			ncommits++;
		}
	}
	for (i = 0; i < nr; i++) {
		const char *sha = json_str(json_path(runs[i].e->run, "provenance.git"), "commit");
		int pos;
		runs[i].started = json_str(runs[i].e->run, "started_at");
		runs[i].order = commit_pos(commits, ncommits, sha, &pos) ? pos : UNKNOWN_ORDER;
		if (runs[i].order < UNKNOWN_ORDER) {
			runs[i].date = commits[pos].date;
			runs[i].subject = commits[pos].subject;
		}
	}
	order_runs(runs, nr);

	/* The figure: given, or the newest run's first kernel benchmark. */
	figs = xcalloc((size_t)nr, sizeof(*figs));
	for (i = 0; i < nr; i++)
		figures_of_run(runs[i].e->run, &figs[i]);
	if (fig) {
		/* the figure's direction and unit, from its newest run */
		int found = 0;
		for (i = nr - 1; i >= 0 && !found; i--)
			for (j = 0; j < figs[i].n && !found; j++)
				if (figure_is_named(&figs[i].v[j], fig) &&
				    (!program || rr_streq(figs[i].v[j].program, program)) &&
				    (!problem || rr_streq(figs[i].v[j].problem, problem))) {
					fig_better = figs[i].v[j].better;
					tflops = fig_better == METRIC_HIGHER_BETTER;
					fig_unit = figs[i].v[j].unit;
					found = 1;
				}
		if (!found) {
			struct strbuf have = STRBUF_INIT;
			for (i = nr - 1; i >= 0; i--)
				figures_list_names(&figs[i], NULL, NULL, &have);
			fprintf(stderr, "error: no run of '%s' has a figure '%s'%s%s%s%s; its runs have %s\n",
				exp, fig, program ? " of " : "", program ? program : "", problem ? " on " : "",
				problem ? problem : "", have.len ? have.buf : "no named figures (only timings: "
				"use --metric)");
			strbuf_release(&have);
			rc = GO_EXIT_USAGE;
			goto out;
		}
	}
	if (!fig && !program && !problem) {
		/* the newest run that says which step sums it up (its summary's headline,
		 * store/runread.h: the spec's "headline", or the fastest kernel on the
		 * largest problem) */
		for (i = nr - 1; i >= 0 && !program; i--) {
			const cJSON *h0 = cJSON_GetArrayItem(rr_arr(runs[i].e->run, "hosts"), 0);
			const cJSON *hl = rr_obj(h0, "headline");
			if (!hl)   /* a whole run.json, or an older summary: its steps decide */
				hl = rr_headline_step(runs[i].e->run, h0);
			if (rr_str(hl, "program") && rr_str(hl, "problem")) {
				program = rr_str(hl, "program");
				problem = rr_str(hl, "problem");
			}
		}
	}
	if (!program || !problem) {
		for (i = nr - 1; i >= 0 && (!program || !problem); i--)
			for (j = 0; j < figs[i].n; j++) {
				const struct figure *f = &figs[i].v[j];
				if ((program && strcmp(f->program ? f->program : "", program)) ||
				    (f->role && !strcmp(f->role, "baseline")) ||
				    (fig ? !figure_is_named(f, fig) : isnan(f->median_us) || f->name != NULL))
					continue;
				if (!program)
					program = f->program;
				if (!problem)
					problem = f->problem;
				break;
			}
	}
	if (!program || !problem) {
		fprintf(stderr, "error: no run of '%s' has a timed benchmark%s%s\n", exp,
			program ? " of " : "", program ? program : "");
		rc = GO_EXIT_USAGE;
		goto out;
	}

	/* Points: one per run and GPU model. */
	slots = xcalloc((size_t)nr, sizeof(char *));
	pts = xcalloc((size_t)nr * 8 + 1, sizeof(*pts));
	pfig = xcalloc((size_t)nr * 8 + 1, sizeof(*pfig));
	moved = xcalloc((size_t)nr * 8 + 1, 1);
	unsure = xcalloc((size_t)nr * 8 + 1, 1);
	notes = xcalloc((size_t)nr * 8 + 1, sizeof(char *));
	memset(&co, 0, sizeof(co));
	co.alpha = STATS_DEFAULT_ALPHA;
	co.factor = factor;
	for (i = 0; i < nr; i++) {
		slots[i] = run_identity(runs[i].e->run);
		for (j = 0; j < figs[i].n && npts < nr * 8; j++) {
			struct figure *f = &figs[i].v[j];
			struct history_point *p;
			int s, k, dup = 0;
			if (!f->program || strcmp(f->program, program) || !f->problem ||
			    strcmp(f->problem, problem))
				continue;
			if (fig ? !figure_is_named(f, fig) || isnan(f->value)
				: f->name || isnan(f->median_us) || isnan(timeline_value(metric, f)))
				continue;
			s = add_series(&series, &nseries, figure_gpu_label(f));
			for (k = 0; k < npts; k++)
				dup |= pts[k].x == i && pts[k].series == s;
			if (dup)
				continue;
			p = &pts[npts];
			pfig[npts++] = f;
			p->x = i;
			p->series = s;
			p->y = fig ? f->value : timeline_value(metric, f);
			if (!f->samples && f->samples_at)
				runsum_read_samples(runs[i].e->dir, f->samples_at, &f->samples,
						    &f->nsamples);
			stats_sort(f->samples, f->nsamples);
			p->lo = p->hi = NAN;
			if (f->nsamples >= 2) {
				double q10 = stats_quantile(f->samples, f->nsamples, 0.1);
				double q90 = stats_quantile(f->samples, f->nsamples, 0.9);
				if (tflops && q10 > 0 && q90 > 0) {
					p->lo = p->y * f->median_us / q90;
					p->hi = p->y * f->median_us / q10;
				} else if (!tflops) {
					p->lo = q10;
					p->hi = q90;
				}
			}
			/* a step against the previous point of this series */
			for (k = npts - 2; k >= 0; k--) {
				struct stats_cmp t;
				if (pts[k].series != s)
					continue;
				if (fig) {
					/* one value a run: compare's ratio rule in the figure's
					 * direction; step > 0 is "worse", as a slower timing is */
					moved[npts - 1] = (char)compare_named(pfig[k], f, factor, &t);
					if (t.verdict == STATS_SLOWER || t.verdict == STATS_FASTER)
						p->step = t.verdict == STATS_SLOWER ? 1 : -1;
					p->ratio = t.ratio;
					break;
				}
				/* compare's one rule, on the samples of both points */
				strbuf_reset(&why);
				if (!compare_comparable(pfig[k], f, &co, &why)) {
					notes[npts - 1] = xstrfmt("not comparable with the point before: %s",
								  why.buf);
					break;
				}
				unsure[npts - 1] = (char)compare_timing(pfig[k], f, &co, &t, &why);
				if (t.verdict == STATS_SLOWER || t.verdict == STATS_FASTER || unsure[npts - 1])
					p->step = t.verdict == STATS_FASTER ? -1 : 1;
				/* the samples' ratio (of the plotted figure for TFLOPS/GB/s) */
				p->ratio = tflops ? p->y / pts[k].y : t.ratio;
				/* named beside a step, and always across GPU instances */
				if (why.len && (p->step || compare_instances_differ(pfig[k], f)))
					notes[npts - 1] = strbuf_detach(&why, NULL);
				break;
			}
		}
	}

	/* history.md and history.svg */
	dir = xstrfmt("%s/%s", store_root(), slug ? slug : exp);
	strbuf_addf(&md, "# History: %s\n\n", name ? name : exp);
	if (fig)
		strbuf_addf(&md, "%s %s, figure %s (%s, %s) over commits (oldest first), %d run%s.\n\n",
			    program, problem, fig, fig_unit ? fig_unit : "no unit", better_words(fig_better),
			    nr, nr == 1 ? "" : "s");
	else
		strbuf_addf(&md, "%s %s, %s over commits (oldest first), %d run%s.\n\n", program, problem,
			    tflops ? metric->unit : "median latency", nr, nr == 1 ? "" : "s");
	strbuf_addstr(&md, "![history chart](history.svg)\n\n");
	if (fig)
		strbuf_addf(&md, "The figure has one value a run: a step is a point beyond x%.3g of the "
			    "previous point of the same GPU.\n\n", factor);
	else
		strbuf_addf(&md, "A step is a point that differs from the previous point of the same GPU "
			    "model by `gpuorch compare`'s rule: the Mann-Whitney U test on the stored samples "
			    "(p < %g) and their medians' ratio beyond x%.3g (x%.3g between two GPU instances). "
			    "A run without a known commit is placed by its start time; a dirty tree's run is "
			    "named by its commit and its diff's hash.\n\n",
			    STATS_DEFAULT_ALPHA, factor, factor > CMP_INSTANCE_FACTOR ? factor : CMP_INSTANCE_FACTOR);
	strbuf_addf(&md, "| # | commit | date | subject | run | host (GPU) | %s | "
		    "TFLOPS | step |\n|---|---|---|---|---|---|---|---|---|\n",
		    fig ? "value" : "median [min-max, n]");
	for (i = 0; i < nr; i++) {
		int any = 0;
		for (j = 0; j < npts; j++) {
			const struct figure *f = pfig[j];
			if (pts[j].x != i)
				continue;
			any = 1;
			strbuf_reset(&cell);
			compare_fmt_figure(&cell, f);
			strbuf_addf(&md, "| %d | %s | %s | %s | %s | %s (%s) | %s | ", i + 1, slots[i],
				    runs[i].date ? runs[i].date : "-",
				    runs[i].subject ? runs[i].subject : "(commit unknown here)",
				    runs[i].e->run_id, f->host ? f->host : "?", figure_gpu_label(f),
				    cell.buf);
			if (isnan(f->tflops))
				strbuf_addstr(&md, "- | ");
			else
				strbuf_addf(&md, "%.1f | ", f->tflops);
			/* step > 0: worse (a slower timing, a figure gone the wrong way) */
			if (pts[j].step)
				strbuf_addf(&md, "**%s** x%.3f", unsure[j] ? "regression?" : pts[j].step > 0
					    ? "regression" : "gain", pts[j].ratio);
			else if (moved[j])
				strbuf_addf(&md, "**changed** x%.3f (no better direction declared)",
					    pts[j].ratio);
			if (notes[j])
				strbuf_addf(&md, "%s%s", pts[j].step || moved[j] ? "; " : "", notes[j]);
			strbuf_addstr(&md, " |\n");
		}
		if (!any)
			strbuf_addf(&md, "| %d | %s | %s | %s | %s | - | no figure (%s) | - | |\n", i + 1,
				    slots[i], runs[i].date ? runs[i].date : "-",
				    runs[i].subject ? runs[i].subject : "(commit unknown here)",
				    runs[i].e->run_id, json_str(runs[i].e->run, "outcome")
				    ? json_str(runs[i].e->run, "outcome") : "?");
	}
	{
		struct history_chart ch;
		char *y_label;
		char *title = fig ? xstrfmt("%s: %s %s, %s", name ? name : exp, program, problem, fig)
			    : xstrfmt("%s: %s %s", name ? name : exp, program, problem);
		/* for TFLOPS a slower run is a step down: flip the sign */
		for (j = 0; tflops && j < npts; j++)
			pts[j].step = -pts[j].step;
		memset(&ch, 0, sizeof(ch));
		ch.title = title;
		ch.y_label = y_label = fig ? xstrfmt("%s (%s, %s)", fig, fig_unit ? fig_unit : "no unit",
						      better_words(fig_better))
				 : tflops ? xstrfmt("%s (higher is better)", metric->unit)
				 : xstrdup("median latency (us, lower is better)");
		ch.higher_is_better = tflops;
		ch.one_value = fig != NULL;
		ch.slots = (const char *const *)slots;
		ch.nslots = nr;
		ch.series = series;
		ch.nseries = nseries;
		ch.pts = pts;
		ch.npts = npts;
		history_svg(&ch, &svg);
		free(title);
		free(y_label);
	}
	/* the newest measured point: a newer run without the figure (an
	 * infra_error, a failed step) does not hide its regression */
	for (j = 0, i = -1; j < npts; j++)
		if (pts[j].x > i)
			i = pts[j].x;
	for (j = 0; j < npts; j++)
		if (pts[j].x == i && pts[j].step)
			last_step = tflops ? -pts[j].step : pts[j].step;
	path = xstrfmt("%s/history.svg", dir);
	st = fs_write_atomic(path, svg.buf, svg.len, &err);
	free(path);
	path = xstrfmt("%s/history.md", dir);
	if (st == GO_OK)
		st = fs_write_atomic(path, md.buf, md.len, &err);
	if (st != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);
		rc = go_exit_code(st);
		goto out;
	}
	if (json) {
		cJSON *jo = cJSON_CreateObject(), *a;
		char *text;
		json_add_str(jo, "experiment", name ? name : exp);
		json_add_str(jo, "program", program);
		json_add_str(jo, "problem", problem);
		json_add_str(jo, "metric", fig ? fig : metric->name);
		json_add_str(jo, "unit", fig ? fig_unit : metric->unit);
		if (fig)
			json_add_str(jo, "better", metric_better_name(fig_better));
		json_add_str(jo, "history_md", path);
		a = json_add_arr(jo, "points");
		for (j = 0; j < npts; j++) {
			const struct figure *f = pfig[j];
			cJSON *pt = cJSON_CreateObject();
			json_add_num(pt, "index", pts[j].x + 1);
			json_add_str(pt, "commit", json_str(json_path(runs[pts[j].x].e->run, "provenance.git"),
							    "commit"));
			json_add_str(pt, "run_id", runs[pts[j].x].e->run_id);
			json_add_str(pt, "host", f->host);
			json_add_str(pt, "gpu", figure_gpu_label(f));
			json_add_num(pt, "value", pts[j].y);
			json_add_num(pt, "median_us", f->median_us);
			json_add_num(pt, "nsamples", f->ntotal > f->nsamples ? f->ntotal : f->nsamples);
			json_add_str(pt, "step", moved[j] ? "changed" : !pts[j].step ? NULL
				     : unsure[j] ? "regression?"
				     : ((pts[j].step > 0) ^ tflops) ? "regression" : "gain");
			if (notes[j])
				json_add_str(pt, "note", notes[j]);
			json_add_num(pt, "nsamples_stored", f->nsamples);
			if (f->clock_mhz > 0)
				json_add_num(pt, "sm_clock_mhz", f->clock_mhz);
			if (pts[j].step || moved[j])
				json_add_num(pt, "ratio", pts[j].ratio);
			cJSON_AddItemToArray(a, pt);
		}
		/* the table's other rows: runs with no such figure (infra_error, a
		 * step that did not pass), so the JSON says what the table says */
		a = json_add_arr(jo, "runs_without_figure");
		for (i = 0; i < nr; i++) {
			cJSON *ro;
			for (j = 0; j < npts && pts[j].x != i; j++)
				;
			if (j < npts)
				continue;
			ro = cJSON_CreateObject();
			json_add_num(ro, "index", i + 1);
			json_add_str(ro, "commit", json_str(json_path(runs[i].e->run, "provenance.git"), "commit"));
			json_add_str(ro, "run_id", runs[i].e->run_id);
			json_add_str(ro, "outcome", json_str(runs[i].e->run, "outcome"));
			cJSON_AddItemToArray(a, ro);
		}
		text = cJSON_Print(jo);
		puts(text);
		free(text);
		cJSON_Delete(jo);
	} else {
		fputs(md.buf, stdout);
		printf("\nhistory: %s (chart: %s/history.svg)\n", path, dir);
	}
	if (last_step > 0)
		rc = GO_EXIT_FAILED;
out:
	for (i = 0; figs && i < nr; i++)
		figures_release(&figs[i]);
	free(figs);
	for (i = 0; slots && i < nr; i++)
		free(slots[i]);
	free(slots);
	free(pts);
	free(pfig);
	free(moved);
	free(unsure);
	for (j = 0; notes && j < npts; j++)
		free(notes[j]);
	free(notes);
	free(series);
	free(runs);
	free(commits);
	rerun_free_lines(lines, nl);
	store_list_free(v, n);
	free(dir);
	free(path);
	strbuf_release(&err);
	strbuf_release(&warn);
	strbuf_release(&md);
	strbuf_release(&svg);
	strbuf_release(&cell);
	strbuf_release(&why);
	return rc;
}

