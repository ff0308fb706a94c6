/* bisect.c -- the engine of `gpuorch find GOOD..BAD EXPERIMENT`: bisect commits to where a figure changed.
 *
 * Like git bisect: GOOD's figure is the reference; BAD must differ from it
 * significantly (stats_compare on the raw samples, same rule as compare).
 * The commits of `git rev-list GOOD..BAD` are bisected, each measured once:
 * a complete clean run recorded at that commit with the spec's hash there
 * and the figure on the same GPU model is reused, else the experiment is
 * run at that commit (rerun.c). A commit that cannot be measured (build
 * failure, too few samples) is skipped, as `git bisect skip` would. */
#include "run/bisect.h"
#include "report/runsum.h"
#include "run/run-engine.h"
#include "report/compare.h"
#include "core/error.h"
#include "store/gitinfo.h"
#include "remote/hostpick.h"
#include "transport/hosts.h"
#include "core/jsonutil.h"
#include "run/rerun.h"
#include "store/store.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

enum { UNKNOWN, SAME, CHANGED, SKIPPED };

struct point {
	char sha[41];
	char *subject;
	int state;
	cJSON *run;          /* owned */
	int reused;
	struct figure fig;   /* points into run; samples owned */
	int have_fig;
	struct stats_cmp t;
	char *note;
};

static int fig_matches(const struct finder *f, const struct figure *x)
{
	if (f->figure ? !figure_is_named(x, f->figure) || isnan(x->value) : x->name != NULL)
		return 0;
	if (f->program && (!x->program || strcmp(x->program, f->program)))
		return 0;
	if (f->problem && (!x->problem || strcmp(x->problem, f->problem)))
		return 0;
	if (!f->program && x->role && !strcmp(x->role, "baseline"))
		return 0;
	if ((f->target_gpu == NULL) != (x->gpu == NULL))
		return 0;
	return !f->target_gpu || !strcmp(f->target_gpu, x->gpu);
}

/* Take the figure out of a run; 1 when found. A run without the named
 * figure leaves p->note naming the figures it has. */
static int take_figure(const struct finder *f, struct point *p)
{
	struct figures fs;
	int i, found = 0;
	figures_of_run(p->run, &fs);
	for (i = 0; i < fs.n; i++) {
		if (!found && fig_matches(f, &fs.v[i]) && (f->figure || fs.v[i].nsamples >= 2)) {
			p->fig = fs.v[i];
			fs.v[i].samples = NULL;
			found = 1;
		}
	}
	if (found) {
		free(p->note);
		p->note = NULL;
	} else if (f->figure) {
		struct strbuf have = STRBUF_INIT;
		figures_list_names(&fs, f->program, f->problem, &have);
		free(p->note);
		p->note = xstrfmt("run %s has no figure '%s'%s%s%s%s; it has %s",
				  json_str(p->run, "run_id") ? json_str(p->run, "run_id") : "?",
				  f->figure, f->program ? " of " : "", f->program ? f->program : "",
				  f->problem ? " on " : "", f->problem ? f->problem : "",
				  have.len ? have.buf : "no named figure there");
		strbuf_release(&have);
	}
	figures_release(&fs);
	p->have_fig = found;
	return found;
}

static void measure(struct finder *f, struct point *p)
{
	struct strbuf err = STRBUF_INIT, warn = STRBUF_INIT;
	struct store_entry *v = NULL;
	char hash[SHA256_HEX_LEN + 1];
	char *dir = NULL, *path;
	int n = 0, i;

	if (rerun_spec_hash_at(f->root, p->sha, f->spec_path, hash, &err) != GO_OK) {
		p->state = SKIPPED;
		p->note = xstrfmt("no spec here: %s", err.buf);
		goto out;
	}
	/* the summaries find the recorded runs; only a match's record is read */
	if (runsum_list(&v, &n, &warn, &err) == GO_OK) {
		for (i = 0; i < n; i++) {
			struct store_entry e;
			int k = rerun_find_recorded(v + i, n - i, f->experiment, p->sha, hash);
			char *q;
			enum go_status fst;
			if (k < 0)
				break;
			i += k;
			q = store_qualified_id(v[i].dir);   /* by its directory */
			fst = store_find(q, &e, &err);
			free(q);
			if (fst != GO_OK) {
				/* recorded, but its raw record is elsewhere (the results
				 * store): said, never measured again behind the user's back */
				fprintf(stderr, "error: %s\n", err.buf);
				p->state = SKIPPED;
				p->note = xstrfmt("its recorded run's raw record is not here: %s", err.buf);
				f->raw_missing = 1;
				goto out;
			}
			p->run = e.run;
			if (take_figure(f, p)) {
				e.run = NULL;
				p->reused = 1;
				store_entry_release(&e);
				break;
			}
			p->run = NULL;
			store_entry_release(&e);
		}
	}
	if (!p->run) {
		struct rerun_opts ro;
		int rc;
		memset(&ro, 0, sizeof(ro));
		ro.root = f->root;
		ro.hosts_path = f->hosts_path;
		ro.host = f->host;
		ro.step = f->step;
		ro.command_line = f->cl.buf;
		printf("find: measuring %.12s %s\n", p->sha, p->subject ? p->subject : "");
		rc = rerun_at_commit(&ro, f->spec_path, p->sha, &dir);
		if (rc == GO_EXIT_INTERRUPTED) {
			p->state = SKIPPED;
			p->note = xstrdup("interrupted");
			goto out;
		}
		if (dir) {
			path = xstrfmt("%s/run.json", dir);
			if (json_load_file(path, &p->run, GO_ERR_IO, &err) != GO_OK)
				p->run = NULL;
			free(path);
		}
		if (!p->run || !take_figure(f, p)) {
			char *why = p->note;
			p->state = SKIPPED;
			p->note = why ? xstrfmt("%s (run exit %d)", why, rc)
				      : xstrfmt("no figure with samples (run exit %d)", rc);
			free(why);
			goto out;
		}
	}
out:
	store_list_free(v, n);
	strbuf_release(&err);
	strbuf_release(&warn);
	free(dir);
}

static void judge(struct finder *f, const struct point *good, struct point *p, int want)
{
	struct cmp_opts co;
	struct strbuf notes = STRBUF_INIT;
	memset(&co, 0, sizeof(co));
	co.alpha = STATS_DEFAULT_ALPHA;
	co.factor = f->factor;
	if (!compare_comparable(&good->fig, &p->fig, &co, &notes)) {
		memset(&p->t, 0, sizeof(p->t));
		p->t.ratio = p->t.p = NAN;
		p->t.verdict = STATS_INSUFFICIENT;
		p->state = SKIPPED;
		free(p->note);
		p->note = xstrfmt("not comparable with GOOD: %s", notes.buf);
		strbuf_release(&notes);
		return;
	}
	if (f->figure)   /* one value a run: the ratio rule; "slower" is worse */
		compare_named(&good->fig, &p->fig, f->factor, &p->t);
	else   /* compare's one rule (the stored samples; GPU instances) */
		compare_timing(&good->fig, &p->fig, &co, &p->t, &notes);
	if (p->t.verdict == STATS_INSUFFICIENT) {
		p->state = SKIPPED;
		free(p->note);
		p->note = notes.len ? xstrfmt("%s; %s", p->t.why ? p->t.why : "insufficient data",
					      notes.buf)
				    : xstrdup(p->t.why ? p->t.why : "insufficient data");
	} else if ((int)p->t.verdict == want || (want < 0 && p->t.verdict != STATS_SAME)) {
		p->state = CHANGED;
	} else {
		p->state = SAME;
	}
	if (p->state != SKIPPED && notes.len) {   /* GPU instances, a subset of samples */
		free(p->note);
		p->note = strbuf_detach(&notes, NULL);
	}
	strbuf_release(&notes);
}

/* The state column of the evidence table (and --json's "state_text"). */
static const char *point_state(const struct point *p)
{
	if (p->state == SAME)
		return "good (same as GOOD)";
	if (p->state == CHANGED)
		return p->t.verdict == STATS_SLOWER ? (p->fig.name ? "bad (worse)" : "bad (slower)")
		       : (p->fig.name ? "bad (better)" : "bad (faster)");
	return p->state == SKIPPED ? "skipped" : "";
}

/* --json's "points": the evidence table's rows, with the same values */
static void json_evidence(const struct finder *f, const struct point *pts, int n)
{
	cJSON *arr = json_add_arr(f->json, "points");
	struct strbuf sb = STRBUF_INIT;
	int i;

	for (i = 0; i < n; i++) {
		const struct point *p = &pts[i];
		cJSON *o;
		if (p->state == UNKNOWN)
			continue;
		o = cJSON_CreateObject();
		strbuf_reset(&sb);
		if (p->have_fig)
			compare_fmt_figure(&sb, &p->fig);
		json_add_str(o, "commit", p->sha);
		json_add_str(o, "subject", p->subject);
		json_add_str(o, "run", p->run ? json_str(p->run, "run_id") : NULL);
		json_add_bool(o, "recorded", p->reused);
		json_add_str(o, "figure", sb.len ? sb.buf : NULL);
		if (i && p->have_fig && !isnan(p->t.ratio))
			json_add_num(o, "ratio", p->t.ratio);
		else
			cJSON_AddNullToObject(o, "ratio");
		if (!isnan(p->t.p))
			json_add_num(o, "p", p->t.p);
		else
			cJSON_AddNullToObject(o, "p");
		json_add_str(o, "state", p->state == SAME ? "good" : p->state == CHANGED ? "bad"
			     : "skipped");
		json_add_str(o, "state_text", point_state(p));
		json_add_str(o, "note", p->note);
		cJSON_AddItemToArray(arr, o);
	}
	strbuf_release(&sb);
}

static void print_evidence(const struct finder *f, const struct point *pts, int n)
{
	int i;
	struct strbuf sb = STRBUF_INIT;
	if (f->json)
		json_evidence(f, pts, n);
	printf("\n| commit | subject | run | %s | vs GOOD | p | state |\n"
	       "|---|---|---|---|---|---|---|\n", f->figure ? f->figure : "median [min-max, n]");
	for (i = 0; i < n; i++) {
		const struct point *p = &pts[i];
		if (p->state == UNKNOWN)
			continue;
		strbuf_reset(&sb);
		if (p->have_fig)
			compare_fmt_figure(&sb, &p->fig);
		printf("| %.12s | %s | %s%s | %s | ", p->sha, p->subject ? p->subject : "",
		       p->run && json_str(p->run, "run_id") ? json_str(p->run, "run_id") : "-",
		       p->reused ? " (recorded)" : "", sb.len ? sb.buf : "-");
		if (i && p->have_fig && !isnan(p->t.ratio))
			printf("x%.3f | ", p->t.ratio);
		else
			printf("%s | ", i ? "-" : "reference");
		if (!isnan(p->t.p))
			printf("%.2g | ", p->t.p);
		else
			printf("- | ");
		printf("%s%s%s |\n", point_state(p), p->note ? ": " : "", p->note ? p->note : "");
	}
	strbuf_release(&sb);
}

/* One `find`: the commits between GOOD and BAD, the host, the measured points. */
struct fd {
	struct finder *f;
	char good[41], bad[41];
	const char *want_gpu, *want_cc;  /* the recorded runs' GPU */
	int have_record;
	char *spec_owned;
	struct store_entry *v;
	int n;
	char **lines;
	int nl;
	struct point *pts;               /* GOOD, then GOOD..BAD oldest first (BAD last) */
	int npts;
	struct hosts *hs;
	struct hostpick pick;
	int have_pick;
};

/* --json's verdict: result (found, among, nothing, unmeasured), what was followed */
static void json_result(const struct fd *d, const char *result, const char *direction)
{
	const struct finder *f = d->f;
	if (!f->json)
		return;
	json_add_str(f->json, "result", result);
	json_add_str(f->json, "direction", direction);
	json_add_str(f->json, "good", d->good);
	json_add_str(f->json, "bad", d->bad);
	json_add_str(f->json, "experiment", f->experiment);
	json_add_str(f->json, "program", f->program);
	json_add_str(f->json, "problem", f->problem);
	json_add_str(f->json, "figure", f->figure);
}

/* What the store knows of the experiment: its spec path and GPU. 0, or an exit code. */
static int fd_recorded(struct fd *d)
{
	struct strbuf err = STRBUF_INIT, warn = STRBUF_INIT;
	struct finder *f = d->f;
	enum go_status st = runsum_list(&d->v, &d->n, &warn, &err);
	int i, rc = 0;
	if (st != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);
		rc = go_exit_code(st);
		goto out;
	}
	for (i = 0; i < d->n; i++) {
		const cJSON *h;
		if (!rerun_is_run_of(d->v[i].run, f->experiment))
			continue;
		if (!f->spec_path)
			f->spec_path = d->spec_owned = rerun_spec_path_of(d->v[i].run);
		h = cJSON_GetArrayItem(cJSON_GetObjectItem(d->v[i].run, "hosts"), 0);
		d->want_gpu = json_str(json_path(h, "info"), "gpu_name");
		d->want_cc = json_str(json_path(h, "info"), "compute_cap");
		d->have_record = 1;
		break;
	}
	if (!f->spec_path) {
		fprintf(stderr, "error: no run of '%s' is recorded under '%s', so its spec path is "
			"unknown; give --spec PATH\n", f->experiment, store_root());
		rc = GO_EXIT_USAGE;
	}
out:
	strbuf_release(&err);
	strbuf_release(&warn);
	return rc;
}

/* The commits: GOOD, then GOOD..BAD oldest first (BAD last). 0, or an exit code. */
static int fd_commits(struct fd *d)
{
	struct strbuf err = STRBUF_INIT;
	char *r2 = xstrfmt("%s..%s", d->good, d->bad);
	const char *av[] = { "git", "log", "--topo-order", "--reverse", "--format=%H%x09%s", r2, NULL };
	const char *av1[] = { "git", "log", "-1", "--format=%H%x09%s", d->good, NULL };
	char **gl = NULL;
	int i, ngl = 0, rc = 0;
	enum go_status st = rerun_git_lines(d->f->root, av, &d->lines, &d->nl, &err);
	if (st == GO_OK)
		st = rerun_git_lines(d->f->root, av1, &gl, &ngl, &err);
	if (st != GO_OK || ngl != 1) {
		fprintf(stderr, "error: %s\n", err.buf);
		rc = GO_EXIT_USAGE;
	} else if (!d->nl || strncmp(d->lines[d->nl - 1], d->bad, 40)) {
		fprintf(stderr, "error: %.12s is not a descendant of %.12s: nothing to bisect\n",
			d->bad, d->good);
		rc = GO_EXIT_USAGE;
	} else {
		d->pts = xcalloc((size_t)d->nl + 1, sizeof(*d->pts));
		for (i = 0; i <= d->nl; i++) {
			const char *line = i ? d->lines[i - 1] : gl[0];
			memcpy(d->pts[i].sha, line, 40);
			d->pts[i].subject = xstrdup(strlen(line) > 41 ? line + 41 : "");
			d->pts[i].t.p = NAN;
			d->pts[i].t.ratio = NAN;
		}
		d->npts = d->nl + 1;
	}
	rerun_free_lines(gl, ngl);
	free(r2);
	strbuf_release(&err);
	return rc;
}

/* One host with the recorded GPU model (or the given one: --host NAME, or
 * nothing recorded to match, takes the host as it is). 0, or an exit code. */
static int fd_pick_host(struct fd *d)
{
	struct finder *f = d->f;
	struct strbuf err = STRBUF_INIT;
	enum go_status st = hosts_load(f->hosts_path, &d->hs, &err);
	int rc = 0;
	if (st == GO_OK && f->host) {
		char *names[1] = { (char *)f->host };
		st = hosts_select(d->hs, names, 1, &err);
	}
	if (st == GO_OK)
		st = hostpick_by_gpu(d->hs, d->want_gpu, d->want_cc, f->step.accept_new_hostkey,
				     &d->pick, &err);
	if (st != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);
		rc = go_exit_code(st);
		goto out;
	}
	d->have_pick = 1;
	if (d->pick.chosen < 0 && (f->host || !d->have_record) && d->pick.closest >= 0)
		d->pick.chosen = d->pick.closest;
	if (d->pick.chosen < 0) {
		fprintf(stderr, "error: no usable host in '%s' has %s (the GPU of the recorded "
			"runs)\n%s", f->hosts_path, d->want_gpu ? d->want_gpu : "no GPU", d->pick.table.buf);
		rc = GO_EXIT_INFRA;
		goto out;
	}
	f->host = d->hs->v[d->pick.chosen].name;
	f->target_gpu = d->pick.chosen_gpu;
	printf("find: %d commit%s after %.12s; following %s%s%s%s%s on '%s' (%s)\n", d->nl,
	       d->nl == 1 ? "" : "s", d->good, f->figure ? f->figure : "", f->figure ? " of " : "",
	       f->program ? f->program : f->figure ? "the first program that has it"
	       : "the first kernel benchmark",
	       f->problem ? " " : "", f->problem ? f->problem : "", f->host,
	       f->target_gpu ? f->target_gpu : "no GPU");
out:
	strbuf_release(&err);
	return rc;
}

/* GOOD and BAD measured; 0 when BAD differs from GOOD (*want: how), else
 * the exit code after saying why there is nothing to find. */
static int fd_ends(struct fd *d, int *want)
{
	struct finder *f = d->f;
	struct point *g = &d->pts[0], *b = &d->pts[d->npts - 1];
	measure(f, g);
	if (!g->have_fig) {
		print_evidence(f, d->pts, d->npts);
		json_result(d, "unmeasured", NULL);
		fprintf(stderr, "error: GOOD (%.12s) could not be measured: %s\n", d->good,
			g->note ? g->note : "no figure");
		return GO_EXIT_FAILED;
	}
	g->state = SAME;
	if (!f->program)
		f->program = g->fig.program;
	if (!f->problem)
		f->problem = g->fig.problem;
	measure(f, b);
	if (b->have_fig)
		judge(f, g, b, -1);
	if (b->state != CHANGED) {
		print_evidence(f, d->pts, d->npts);
		json_result(d, "nothing", NULL);
		printf("\nBAD (%.12s) %s GOOD (%.12s): nothing to find\n", d->bad,
		       b->state == SAME ? "does not differ significantly from"
					: "could not be compared with", d->good);
		return GO_EXIT_FAILED;
	}
	*want = (int)b->t.verdict;
	return 0;
}

/* Bisect between lo and hi, skipping commits that cannot be measured. */
static void fd_bisect(struct fd *d, int want, int *lo, int *hi)
{
	int iter;
	*lo = 0;
	*hi = d->npts - 1;
	for (iter = 0; iter < d->npts && *hi - *lo > 1; iter++) {
		int mid = -1, best = d->npts + 1, k;
		for (k = *lo + 1; k < *hi; k++) {
			int dist = abs(2 * k - (*lo + *hi));
			if (d->pts[k].state != SKIPPED && dist < best) {
				best = dist;
				mid = k;
			}
		}
		if (mid < 0)
			break;
		measure(d->f, &d->pts[mid]);
		if (d->pts[mid].have_fig)
			judge(d->f, &d->pts[0], &d->pts[mid], want);
		if (d->pts[mid].state == CHANGED)
			*hi = mid;
		else if (d->pts[mid].state == SAME)
			*lo = mid;
	}
}

/* a timing: its median alone; a named figure: its value and unit */
static void fd_fmt_point(const struct finder *f, const struct point *p, struct strbuf *sb)
{
	strbuf_reset(sb);
	if (f->figure)
		compare_fmt_figure(sb, &p->fig);
	else
		metric_fmt(sb, METRIC_MEDIAN_PATH, p->fig.median_us);
}

/* The first commit that differs and the evidence (0), or the commits it
 * is among when some could not be measured (exit 1). */
static int fd_print_result(const struct fd *d, int want, int lo, int hi)
{
	const struct finder *f = d->f;
	const struct point *pts = d->pts;
	struct strbuf sb = STRBUF_INIT;
	int i;
	const char *how = want == STATS_SLOWER ? (f->figure ? "worse" : "slower")
			  : (f->figure ? "better" : "faster");

	print_evidence(d->f, d->pts, d->npts);
	json_result(d, hi - lo != 1 ? "among" : "found", how);
	if (hi - lo != 1) {
		cJSON *among = f->json ? json_add_arr(f->json, "among") : NULL;
		printf("\nthe change is in one of these commits (the others between could not be "
		       "measured):\n");
		for (i = lo + 1; i <= hi; i++) {
			printf("  %s %s\n", pts[i].sha, pts[i].subject);
			if (among)
				cJSON_AddItemToArray(among, cJSON_CreateString(pts[i].sha));
		}
		return GO_EXIT_FAILED;
	}
	if (f->json)
		json_add_str(f->json, "first", pts[hi].sha);
	printf("\nfirst %s commit: %s %s\n", how, pts[hi].sha, pts[hi].subject);
	printf("evidence: %s %s %s ", f->program, f->problem, f->figure ? f->figure : "median");
	fd_fmt_point(f, &pts[lo], &sb);
	printf("%s at %.12s -> ", sb.buf, pts[lo].sha);
	fd_fmt_point(f, &pts[hi], &sb);
	printf("%s at %.12s (x%.3f vs GOOD", sb.buf, pts[hi].sha, pts[hi].t.ratio);
	if (!isnan(pts[hi].t.p))
		printf(", p=%.2g", pts[hi].t.p);
	printf(")\n");
	strbuf_release(&sb);
	return GO_EXIT_OK;
}

int find_main(struct finder *f, const char *range_arg)
{
	struct strbuf err = STRBUF_INIT;
	struct fd d;
	char *range = xstrdup(range_arg), *dots = strstr(range, "..");
	int i, rc, want = 0, lo = 0, hi = 0;
	enum go_status st;

	memset(&d, 0, sizeof(d));
	d.f = f;
	*dots = '\0';
	st = git_resolve(f->root, range, d.good, &err);
	if (st == GO_OK)
		st = git_resolve(f->root, dots + 2, d.bad, &err);
	if (st != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);
		rc = GO_EXIT_USAGE;
	} else {
		rc = fd_recorded(&d);
	}
	if (!rc)
		rc = fd_commits(&d);
	if (!rc)
		rc = fd_pick_host(&d);
	if (!rc)
		rc = fd_ends(&d, &want);
	if (!rc) {
		fd_bisect(&d, want, &lo, &hi);
		rc = fd_print_result(&d, want, lo, hi);
	}
	if (!rc && f->raw_missing) {
		fprintf(stderr, "error: the raw records of some recorded runs are missing (above): "
			"their commits were skipped; 'gpuorch pull RUN_ID' brings them\n");
		rc = GO_EXIT_FAILED;
	}
	for (i = 0; i < d.npts; i++) {
		free(d.pts[i].subject);
		free(d.pts[i].note);
		free(d.pts[i].fig.samples);
		cJSON_Delete(d.pts[i].run);
	}
	free(d.pts);
	rerun_free_lines(d.lines, d.nl);
	if (d.have_pick)
		hostpick_release(&d.pick);
	hosts_free(d.hs);
	store_list_free(d.v, d.n);
	free(range);
	free(d.spec_owned);
	strbuf_release(&err);
	return rc;
}
