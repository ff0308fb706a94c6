/* runread.c -- typed reads of a run record and the one metric reader (runread.h). */
#include "store/runread.h"
#include "core/metric.h"
#include "core/jsonutil.h"
#include "core/strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

const cJSON *rr_obj(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
	return cJSON_IsObject(v) ? v : NULL;
}

const cJSON *rr_arr(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
	return cJSON_IsArray(v) ? v : NULL;
}

const char *rr_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int rr_num(const cJSON *o, const char *path, double *v)
{
	const cJSON *j = cJSON_IsObject(o) && path ? json_path(o, path) : NULL;
	if (!cJSON_IsNumber(j) || !isfinite(j->valuedouble))
		return 0;
	*v = j->valuedouble;
	return 1;
}

double rr_num_or_nan(const cJSON *o, const char *path)
{
	double v;
	return rr_num(o, path, &v) ? v : NAN;
}

int rr_true(const cJSON *o, const char *path)
{
	return cJSON_IsObject(o) && path && cJSON_IsTrue(json_path(o, path));
}

int rr_streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

const char *rr_role(const cJSON *step)
{
	const char *r = rr_str(step, "role");
	return r ? r : "kernel";
}

const cJSON *rr_result(const cJSON *step)
{
	return rr_obj(step, "result");
}

/* ---- the steps of a record by problem (rr_index_begin) ----
 * A report, a compare or the gates look steps up by problem once per step
 * or per gate: over a linear search that is O(steps^2) (a 20,000-step run's
 * report did not end in 10 minutes). While an index is open, a search that
 * names a problem looks at that problem's steps only, in record order, so
 * it finds exactly what the linear search finds. */
struct ix_ent {
	const char *problem;
	int pos;              /* in the host's steps: record order */
	const cJSON *s;
};
struct ix_host {
	const cJSON *h;
	struct ix_ent *e;
	int n;
};
static _Thread_local struct ix_host *ix_hosts;
static _Thread_local int ix_nhosts, ix_depth;

static int ix_cmp(const void *a, const void *b)
{
	const struct ix_ent *x = a, *y = b;
	int c = strcmp(x->problem, y->problem);
	return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

void rr_index_begin(const cJSON *run)
{
	const cJSON *h, *s;
	if (ix_depth++)
		return;   /* the outer one holds */
	cJSON_ArrayForEach(h, rr_arr(run, "hosts")) {
		struct ix_host *x;
		int pos = 0;
		ix_hosts = xrealloc(ix_hosts, sizeof(*ix_hosts) * (size_t)(ix_nhosts + 1));
		x = &ix_hosts[ix_nhosts++];
		x->h = h;
		x->n = 0;
		x->e = xmalloc(sizeof(*x->e) * (size_t)(cJSON_GetArraySize(rr_arr(h, "steps")) + 1));
		cJSON_ArrayForEach(s, rr_arr(h, "steps")) {
			const char *p = rr_str(s, "problem");
			if (p) {
				x->e[x->n].problem = p;
				x->e[x->n].pos = pos;
				x->e[x->n++].s = s;
			}
			pos++;
		}
		qsort(x->e, (size_t)x->n, sizeof(*x->e), ix_cmp);
	}
}

void rr_index_end(void)
{
	int i;
	if (!ix_depth || --ix_depth)
		return;
	for (i = 0; i < ix_nhosts; i++)
		free(ix_hosts[i].e);
	free(ix_hosts);
	ix_hosts = NULL;
	ix_nhosts = 0;
}

/* The open index's entries of problem on host h: *n of them; NULL when
 * no index covers h. */
static const struct ix_ent *ix_problem(const cJSON *h, const char *problem, int *n)
{
	const struct ix_host *x = NULL;
	int i, lo, hi;
	for (i = 0; i < ix_nhosts && !x; i++)
		if (ix_hosts[i].h == h)
			x = &ix_hosts[i];
	if (!x)
		return NULL;
	lo = 0, hi = x->n;
	while (lo < hi) {   /* the first entry not below problem */
		int mid = lo + (hi - lo) / 2;
		if (strcmp(x->e[mid].problem, problem) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (hi = lo; hi < x->n && !strcmp(x->e[hi].problem, problem); hi++)
		;
	*n = hi - lo;
	return x->e + lo;
}

int rr_is_kind(const cJSON *step, enum step_kind k)
{
	return rr_streq(rr_str(step, "kind"), step_kind_name(k));
}

static int step_matches(const cJSON *s, enum step_kind kind, const char *program,
			const char *problem, const char *role, const char *tool)
{
	if (!cJSON_IsObject(s))
		return 0;
	if (kind != STEP_ANY && !rr_is_kind(s, kind))
		return 0;
	if (program && !rr_streq(rr_str(s, "program"), program))
		return 0;
	if (problem && !rr_streq(rr_str(s, "problem"), problem))
		return 0;
	if (role && strcmp(rr_role(s), role))
		return 0;
	if (tool && !rr_streq(rr_str(s, "tool"), tool))
		return 0;
	return 1;
}

const cJSON *rr_next_step(const cJSON *h, const cJSON *after, enum step_kind kind,
			  const char *program, const char *problem, const char *role,
			  const char *tool)
{
	const struct ix_ent *e;
	const cJSON *s;
	int n, i = 0;

	if (problem && (e = ix_problem(h, problem, &n))) {
		if (after)
			for (; i < n && e[i].s != after; i++)
				;
		for (i = after ? i + 1 : 0; i < n; i++)
			if (step_matches(e[i].s, kind, program, problem, role, tool))
				return e[i].s;
		return NULL;
	}
	s = after ? after->next : (rr_arr(h, "steps") ? rr_arr(h, "steps")->child : NULL);
	for (; s; s = s->next)
		if (step_matches(s, kind, program, problem, role, tool))
			return s;
	return NULL;
}

const cJSON *rr_find_step(const cJSON *h, enum step_kind kind, const char *program,
			  const char *problem, const char *role, const char *tool)
{
	return rr_next_step(h, NULL, kind, program, problem, role, tool);
}

void rr_measure(const cJSON *h, const char *program, const char *problem, const char *metric,
		struct rr_measure *out)
{
	int err = metric_is_error(metric), kern = metric_is_kernel(metric);
	enum step_kind other = err || kern ? STEP_BENCHMARK : STEP_CORRECTNESS;
	const cJSON *a, *b;

	memset(out, 0, sizeof(*out));
	out->path = metric_result_path(metric);
	out->prefer = err ? STEP_CORRECTNESS : kern ? STEP_KERNEL_TIMING : STEP_BENCHMARK;
	if (!program || !metric)
		return;
	a = rr_find_step(h, out->prefer, program, problem, NULL, NULL);
	b = rr_find_step(h, other, program, problem, NULL, NULL);
	if (a && rr_num(rr_result(a), out->path, &out->value))
		out->step = a;
	else if (b && rr_num(rr_result(b), out->path, &out->value))
		out->step = b;
	else {
		out->step = a;   /* the missing value is the preferred step's */
		if (err)
			out->bad_outputs = rr_bad_outputs(rr_result(a ? a : b), NULL);
		if (!a && out->bad_outputs)
			out->step = b;
		return;
	}
	out->has_value = 1;
	out->impossible = metric_is_timing(metric) && rr_true(rr_result(out->step), METRIC_IMPOSSIBLE_PATH);
	/* a kernel whose fastest launch beats the bound of its declared work */
	if (!out->impossible && kern && strrchr(metric, '.')) {
		char *obj = xstrfmt("%.*s", (int)(strrchr(metric, '.') - metric), metric);
		out->impossible = rr_true(rr_obj(rr_result(out->step), obj), "impossible");
		free(obj);
	}
	/* a program's own figure over the GPU's physical peak (store/peaks.h):
	 * NAME (off the harness), or figures.NAME.FIELD (a result's figure) */
	if (!out->impossible && !strchr(metric, '.')) {
		const cJSON *f = rr_obj(rr_obj(rr_result(out->step), "figures"), metric);
		out->impossible = rr_true(f, "impossible");
	} else if (!out->impossible && !strncmp(metric, "figures.", 8) && strrchr(metric, '.') > metric + 8) {
		char *path = xstrfmt("%.*s.impossible", (int)(strrchr(metric, '.') - metric), metric);
		out->impossible = rr_true(rr_result(out->step), path);
		free(path);
	}
	if (err)
		out->bad_outputs = rr_bad_outputs(rr_result(out->step), NULL);
}

static void add_count(struct strbuf *sb, double v)
{
	char d[32];
	int len = snprintf(d, sizeof(d), "%.0f", v), i;
	for (i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			strbuf_addch(sb, ',');
		strbuf_addch(sb, d[i]);
	}
}

static void add_bad(struct strbuf *why, const char *what, double n, double outputs, int after)
{
	if (!n)
		return;
	if (why->len)
		strbuf_addstr(why, "; ");
	if (!after)
		strbuf_addf(why, "%s in ", what);
	add_count(why, n);
	if (outputs > 0) {
		strbuf_addstr(why, " of ");
		add_count(why, outputs);
	}
	strbuf_addstr(why, " outputs");
	if (after)
		strbuf_addf(why, " %s", what);
}

double rr_bad_outputs(const cJSON *result, struct strbuf *why)
{
	const cJSON *corr = rr_obj(result, "correctness"), *t;
	double nonf = 0, nan = 0, unwr = 0, outputs = 0, v;
	int has_nan = 0;
	if (!corr)
		return 0;
	if (rr_num(corr, "nonfinite", &nonf)) {
		has_nan = rr_num(corr, "nan", &nan);
		rr_num(corr, "unwritten", &unwr);
		rr_num(corr, "outputs", &outputs);
	} else {
		/* an older record: the trial with the most */
		cJSON_ArrayForEach(t, rr_arr(corr, "trials")) {
			double f = 0, u = 0;
			rr_num(t, "nonfinite", &f);
			rr_num(t, "unwritten", &u);
			if (f + u > nonf + unwr) {
				nonf = f;
				unwr = u;
				outputs = rr_num(t, "outputs", &v) ? v : 0;
				has_nan = rr_num(t, "nan", &nan);
			}
		}
	}
	if (why && nonf + unwr > 0) {
		strbuf_reset(why);
		if (has_nan) {
			add_bad(why, "NaN", nan, outputs, 0);
			add_bad(why, "Inf", nonf - nan, outputs, 0);
		} else {
			add_bad(why, "NaN/Inf", nonf, outputs, 0);
		}
		add_bad(why, "never written", unwr, outputs, 1);
	}
	return nonf + unwr;
}

static int headline_candidate(const cJSON *s, const char *program, const char *problem)
{
	double m;
	return rr_is_kind(s, STEP_BENCHMARK) && !rr_streq(rr_str(s, "role"), "baseline") &&
	       rr_num(rr_result(s), METRIC_MEDIAN_PATH, &m) && m > 0 &&
	       !rr_true(rr_result(s), METRIC_IMPOSSIBLE_PATH) &&
	       (!program || rr_streq(rr_str(s, "program"), program)) &&
	       (!problem || rr_streq(rr_str(s, "problem"), problem));
}

static const cJSON *headline_among(const cJSON *h, const char *program, const char *problem)
{
	const cJSON *s, *best = NULL;
	const char *prob = problem;
	double most = -1, f, m, bm = 0;
	if (!prob)
		cJSON_ArrayForEach(s, rr_arr(h, "steps")) {
			if (!cJSON_IsObject(s) || !headline_candidate(s, program, NULL))
				continue;
			if (!prob)
				prob = rr_str(s, "problem");   /* the first timed, when none has a model */
			if (rr_num(rr_result(s), "model.flops", &f) && f > most) {
				most = f;
				prob = rr_str(s, "problem");
			}
		}
	cJSON_ArrayForEach(s, rr_arr(h, "steps"))
		if (cJSON_IsObject(s) && headline_candidate(s, program, prob) &&
		    rr_num(rr_result(s), METRIC_MEDIAN_PATH, &m) && (!best || m < bm)) {
			best = s;
			bm = m;
		}
	return best;
}

const cJSON *rr_headline_step(const cJSON *run, const cJSON *h)
{
	const cJSON *hl = rr_obj(rr_obj(rr_obj(run, "experiment"), "spec"), "headline"), *s = NULL;
	if (hl && rr_str(hl, "program"))
		s = headline_among(h, rr_str(hl, "program"), rr_str(hl, "problem"));
	return s ? s : headline_among(h, NULL, NULL);
}
