/* runread.c -- typed reads of a run record and the one metric reader (runread.h). */
#include "store/runread.h"
#include "core/metric.h"
#include "core/jsonutil.h"

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

const cJSON *rr_find_step(const cJSON *h, const char *kind, const char *program,
			  const char *problem, const char *role, const char *tool)
{
	const cJSON *s;
	cJSON_ArrayForEach(s, rr_arr(h, "steps")) {
		if (!cJSON_IsObject(s))
			continue;
		if (kind && !rr_streq(rr_str(s, "kind"), kind))
			continue;
		if (program && !rr_streq(rr_str(s, "program"), program))
			continue;
		if (problem && !rr_streq(rr_str(s, "problem"), problem))
			continue;
		if (role && strcmp(rr_role(s), role))
			continue;
		if (tool && !rr_streq(rr_str(s, "tool"), tool))
			continue;
		return s;
	}
	return NULL;
}

void rr_measure(const cJSON *h, const char *program, const char *problem, const char *metric,
		struct rr_measure *out)
{
	int err = metric_is_error(metric), kern = metric_is_kernel(metric);
	const char *other = err || kern ? "benchmark" : "correctness";
	const cJSON *a, *b;

	memset(out, 0, sizeof(*out));
	out->path = metric_result_path(metric);
	out->prefer = err ? "correctness" : kern ? "kernel_timing" : "benchmark";
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
	/* a program's own figure over the GPU's physical peak (store/peaks.h) */
	if (!out->impossible && !strchr(metric, '.')) {
		const cJSON *f = rr_obj(rr_obj(rr_result(out->step), "figures"), metric);
		out->impossible = rr_true(f, "impossible");
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
	return rr_streq(rr_str(s, "kind"), "benchmark") && !rr_streq(rr_str(s, "role"), "baseline") &&
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
