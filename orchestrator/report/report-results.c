/* report-results.c -- the report's results, baselines, references and expectations. */
#include "report/report-int.h"

#include <math.h>
#include <string.h>
#include "core/banned.h"

#define MAX_PROBLEMS 256        /* problems listed per host */

/* ==== the run's parts ==== */

const char *rpt_host_name(const cJSON *h)
{
	const char *n = rpt_str(h, "name");
	return n ? n : "?";
}

const char *rpt_gpu_name(const cJSON *h)
{
	return rpt_str(rpt_obj(h, "info"), "gpu_name");
}

const cJSON *rpt_result_of(const cJSON *step)
{
	return rpt_obj(step, "result");
}

/* The first step on host h that matches (NULL fields match anything). */
const cJSON *rpt_find_step(const cJSON *h, const char *kind, const char *program,
			   const char *problem, const char *role)
{
	const cJSON *s;
	FOR_EACH_OBJ(s, rpt_arr(h, "steps")) {
		if (kind && !rpt_streq(rpt_str(s, "kind"), kind))
			continue;
		if (program && !rpt_streq(rpt_str(s, "program"), program))
			continue;
		if (problem && !rpt_streq(rpt_str(s, "problem"), problem))
			continue;
		if (role && !rpt_streq(rpt_str(s, "role") ? rpt_str(s, "role") : "kernel", role))
			continue;
		return s;
	}
	return NULL;
}

int rpt_is_baseline(const cJSON *step)
{
	return rpt_streq(rpt_str(step, "role"), "baseline");
}

/* Distinct problem names: the spec's, then any others the host ran. */
static int problem_list(const struct rpt_ctx *c, const cJSON *h, const char **out, int max)
{
	const cJSON *p, *s;
	int n = 0, i;
	FOR_EACH_OBJ(p, rpt_arr(c->spec, "problems")) {
		const char *name = rpt_str(p, "name");
		if (name && n < max) {
			for (i = 0; i < n && strcmp(out[i], name); i++)
				;
			if (i == n)
				out[n++] = name;
		}
	}
	FOR_EACH_OBJ(s, rpt_arr(h, "steps")) {
		const char *name = rpt_str(s, "problem");
		if (name && n < max) {
			for (i = 0; i < n && strcmp(out[i], name); i++)
				;
			if (i == n)
				out[n++] = name;
		}
	}
	return n;
}

static const cJSON *spec_problem(const struct rpt_ctx *c, const char *name)
{
	const cJSON *p;
	FOR_EACH_OBJ(p, rpt_arr(c->spec, "problems"))
		if (rpt_streq(rpt_str(p, "name"), name))
			return p;
	return NULL;
}

/* ==== expectations ==== */

static const char *metric_path(const char *metric)
{
	if (rpt_streq(metric, "latency_us"))
		return "timing.median_us";
	if (rpt_streq(metric, "tflops"))
		return "model.tflops";
	if (rpt_streq(metric, "gbps"))
		return "model.gbps";
	if (rpt_streq(metric, "max_abs"))
		return "correctness.max_abs";
	if (rpt_streq(metric, "max_rel"))
		return "correctness.max_rel";
	if (rpt_streq(metric, "rel_l2"))
		return "correctness.rel_l2";
	return metric;
}

static int is_error_metric(const char *metric)
{
	return rpt_streq(metric, "max_abs") || rpt_streq(metric, "max_rel") || rpt_streq(metric, "rel_l2") ||
	       (metric && !strncmp(metric, "correctness.", 12));
}

static int is_timing_metric(const char *metric)
{
	return rpt_streq(metric, "latency_us") || rpt_streq(metric, "tflops") || rpt_streq(metric, "gbps") ||
	       (metric && (!strncmp(metric, "timing.", 7) || !strncmp(metric, "model.", 6)));
}

void rpt_fmt_metric(struct strbuf *sb, const char *metric, double v)
{
	if (rpt_streq(metric, "latency_us") || (metric && !strncmp(metric, "timing.", 7) &&
					    strstr(metric, "_us"))) {
		rpt_fmt_us(sb, v);
		strbuf_addstr(sb, " us");
	} else if (rpt_streq(metric, "tflops") || rpt_streq(metric, "model.tflops")) {
		rpt_fmt_tflops(sb, v);
		strbuf_addstr(sb, " TFLOPS");
	} else if (rpt_streq(metric, "gbps") || rpt_streq(metric, "model.gbps")) {
		rpt_fmt_gbps(sb, v);
		strbuf_addstr(sb, " GB/s");
	} else {
		rpt_fmt_g(sb, v);
	}
}

/* An expectation's value as the author wrote it: "25 us", "300 TFLOPS", "0.02". */
void rpt_fmt_target(struct strbuf *sb, const char *metric, double v)
{
	strbuf_addf(sb, "%g", v);
	if (rpt_streq(metric, "latency_us") || (metric && !strncmp(metric, "timing.", 7) &&
					    strstr(metric, "_us")))
		strbuf_addstr(sb, " us");
	else if (rpt_streq(metric, "tflops") || rpt_streq(metric, "model.tflops"))
		strbuf_addstr(sb, " TFLOPS");
	else if (rpt_streq(metric, "gbps") || rpt_streq(metric, "model.gbps"))
		strbuf_addstr(sb, " GB/s");
}

static int compare(const char *op, double a, double b, int *ok)
{
	if (rpt_streq(op, "<"))
		*ok = a < b;
	else if (rpt_streq(op, "<="))
		*ok = a <= b;
	else if (rpt_streq(op, ">"))
		*ok = a > b;
	else if (rpt_streq(op, ">="))
		*ok = a >= b;
	else if (rpt_streq(op, "=="))
		*ok = a == b;
	else
		return 0;
	return 1;
}

static struct verdict *new_verdict(struct rpt_ctx *c, const cJSON *e, const cJSON *h,
				   const char *problem)
{
	struct verdict *v;
	if (c->nv == c->av) {
		c->av = c->av ? 2 * c->av : 16;
		c->v = xrealloc(c->v, (size_t)c->av * sizeof(*c->v));
	}
	v = &c->v[c->nv++];
	memset(v, 0, sizeof(*v));
	strbuf_init(&v->why, 0);
	v->exp = e;
	v->host = h;
	v->problem = problem;
	v->kind = V_NOT_MEASURED;
	return v;
}

/* One expectation on one host and problem. */
static void judge(struct rpt_ctx *c, const cJSON *e, const cJSON *h, const char *problem)
{
	struct verdict *v = new_verdict(c, e, h, problem);
	const char *program = rpt_str(e, "program");
	const char *metric = rpt_str(e, "metric");
	const char *op = rpt_str(e, "op");
	const char *prefer = is_error_metric(metric) ? "correctness" : "benchmark";
	const char *other = is_error_metric(metric) ? "benchmark" : "correctness";
	const cJSON *s, *res;
	double target, val;
	int ok;

	if (!program || !metric || !op || !rpt_num(e, "value", &target)) {
		strbuf_addstr(&v->why, "the expectation lacks program, metric, op or value");
		return;
	}
	{
		const cJSON *ps = rpt_find_step(h, prefer, program, problem, NULL);
		const cJSON *os = rpt_find_step(h, other, program, problem, NULL);
		if (ps && rpt_num(rpt_result_of(ps), metric_path(metric), &val))
			s = ps;
		else if (os && rpt_num(rpt_result_of(os), metric_path(metric), &val))
			s = os;
		else
			s = ps;   /* the missing value is the preferred step's */
	}
	v->step = s;
	if (!s) {
		if (!rpt_host_finished(rpt_str(h, "status")))
			strbuf_addf(&v->why, "the run stopped before the %s step ran", prefer);
		else if (!rpt_streq(rpt_str(h, "status"), "ok"))
			strbuf_addf(&v->why, "host %s", rpt_str(h, "status") ? rpt_str(h, "status") : "failed");
		else
			strbuf_addf(&v->why, "no %s step of this program ran for this problem", prefer);
		return;
	}
	res = rpt_result_of(s);
	if (!rpt_num(res, metric_path(metric), &val)) {
		const char *st = rpt_str(s, "status");
		if (rpt_streq(st, "SKIPPED"))
			strbuf_addstr(&v->why, "step skipped");
		else if (st && !rpt_streq(st, "PASS"))
			strbuf_addf(&v->why, "step %s", st);
		else
			strbuf_addf(&v->why, "the result has no '%s'", metric_path(metric));
		if (rpt_str(s, "reason")) {
			strbuf_addstr(&v->why, ": ");
			strbuf_addstr(&v->why, rpt_str(s, "reason"));
		}
		return;
	}
	v->value = val;
	v->has_value = 1;
	if (is_timing_metric(metric) && rpt_is_true(res, "model.impossible")) {
		strbuf_addstr(&v->why, "the timing beats the roofline floor (impossible); not counted");
		return;
	}
	if (!compare(op, val, target, &ok)) {
		strbuf_addf(&v->why, "unknown operator '%s'", op);
		return;
	}
	v->kind = ok ? V_MET : V_MISSED;
	if (!rpt_streq(rpt_str(s, "status"), "PASS") && rpt_str(s, "status"))
		strbuf_addf(&v->why, "step %s", rpt_str(s, "status"));
}

void rpt_judge_all(struct rpt_ctx *c)
{
	const cJSON *e, *h;
	FOR_EACH_OBJ(e, c->expected) {
		const char *gpu = rpt_str(e, "gpu");
		const char *problem = rpt_str(e, "problem");
		FOR_EACH_OBJ(h, c->hosts) {
			if (gpu && !str_contains_ci(rpt_gpu_name(h), gpu)) {
				struct verdict *v = new_verdict(c, e, h, problem);
				if (rpt_gpu_name(h)) {
					v->kind = V_NOT_APPLICABLE;
					strbuf_addf(&v->why, "the GPU is not '%s'", gpu);
				} else if (!rpt_host_finished(rpt_str(h, "status"))) {
					strbuf_addstr(&v->why, "the run stopped before the GPU was probed");
				} else {
					strbuf_addf(&v->why, "host %s: its GPU is unknown",
						    rpt_str(h, "status") ? rpt_str(h, "status") : "failed");
				}
				continue;
			}
			if (problem) {
				judge(c, e, h, problem);
			} else {
				const char *probs[MAX_PROBLEMS];
				int n = problem_list(c, h, probs, MAX_PROBLEMS), i;
				for (i = 0; i < n; i++)
					judge(c, e, h, probs[i]);
				if (!n)
					judge(c, e, h, NULL);
			}
		}
	}
}

void rpt_count_verdicts(const struct rpt_ctx *c, const cJSON *h, int cnt[4])
{
	int i;
	memset(cnt, 0, 4 * sizeof(int));
	for (i = 0; i < c->nv; i++)
		if (!h || c->v[i].host == h)
			cnt[c->v[i].kind]++;
}

void rpt_add_verdict_counts(struct strbuf *md, const int cnt[4], int with_na)
{
	int any = 0;
	if (cnt[V_MET])
		strbuf_addf(md, "%s%d ✅ met", any++ ? " · " : "", cnt[V_MET]);
	if (cnt[V_MISSED])
		strbuf_addf(md, "%s%d ❌ missed", any++ ? " · " : "", cnt[V_MISSED]);
	if (cnt[V_NOT_MEASURED])
		strbuf_addf(md, "%s%d ⚪ not measured", any++ ? " · " : "", cnt[V_NOT_MEASURED]);
	if (cnt[V_NOT_APPLICABLE] && with_na)
		strbuf_addf(md, "%s%d not applicable", any++ ? " · " : "", cnt[V_NOT_APPLICABLE]);
	if (!any)
		strbuf_addstr(md, DASH);
}

/* ==== comparisons shared by the glance and the results ==== */

/* The measured baseline for a kernel step: same host, same problem. */
static const cJSON *baseline_for(const cJSON *h, const cJSON *step)
{
	const cJSON *s;
	double m;
	FOR_EACH_OBJ(s, rpt_arr(h, "steps")) {
		if (rpt_is_baseline(s) && rpt_streq(rpt_str(s, "kind"), "benchmark") &&
		    rpt_streq(rpt_str(s, "problem"), rpt_str(step, "problem")) && s != step &&
		    rpt_num(rpt_result_of(s), "timing.median_us", &m) && m > 0)
			return s;
	}
	return NULL;
}

/* "1.14× vs `sdpa`" (or "0.80× vs" when slower) into md; 0 when none.
 * markdown: bold figure and code-span name; else plain text. */
int rpt_add_speedup(struct strbuf *md, const cJSON *h, const cJSON *step, int markdown)
{
	const cJSON *b = baseline_for(h, step);
	double bm, km;
	if (!b || !rpt_num(rpt_result_of(step), "timing.median_us", &km) || km <= 0 ||
	    !rpt_num(rpt_result_of(b), "timing.median_us", &bm))
		return 0;
	if (markdown)
		strbuf_addstr(md, "**");
	rpt_fmt_ratio(md, bm / km);
	if (markdown)
		strbuf_addstr(md, "**");
	strbuf_addstr(md, " vs ");
	if (markdown)
		rpt_md_code(md, rpt_str(b, "program"));
	else
		strbuf_addstr(md, rpt_str(b, "program") ? rpt_str(b, "program") : "baseline");
	return 1;
}

int rpt_ref_applies(const cJSON *ref, const cJSON *h)
{
	const char *gpu = rpt_str(ref, "gpu");
	return !gpu || str_contains_ci(rpt_gpu_name(h), gpu);
}

/* "FA3 450 / 312.4 = 1.44× remaining" for a kernel step; 0 when not comparable. */
int rpt_add_reference_gap(struct strbuf *md, const cJSON *ref, const cJSON *step)
{
	const cJSON *res = rpt_result_of(step);
	double r, k;
	if (rpt_num(ref, "tflops", &r) && rpt_num(res, "model.tflops", &k) && k > 0 && r > 0) {
		rpt_md_cell(md, rpt_str(ref, "name") ? rpt_str(ref, "name") : "reference");
		strbuf_addch(md, ' ');
		rpt_fmt_tflops(md, r);
		strbuf_addstr(md, " / ");
		rpt_fmt_tflops(md, k);
		strbuf_addstr(md, " TFLOPS = ");
		if (r >= k) {
			rpt_fmt_ratio(md, r / k);
			strbuf_addstr(md, " remaining");
		} else {
			rpt_fmt_ratio(md, k / r);
			strbuf_addstr(md, " ahead");
		}
		return 1;
	}
	if (rpt_num(ref, "latency_us", &r) && rpt_num(res, "timing.median_us", &k) && k > 0 && r > 0) {
		rpt_md_cell(md, rpt_str(ref, "name") ? rpt_str(ref, "name") : "reference");
		strbuf_addch(md, ' ');
		rpt_fmt_us(md, k);
		strbuf_addstr(md, " / ");
		rpt_fmt_us(md, r);
		strbuf_addstr(md, " us = ");
		if (k >= r) {
			rpt_fmt_ratio(md, k / r);
			strbuf_addstr(md, " remaining");
		} else {
			rpt_fmt_ratio(md, r / k);
			strbuf_addstr(md, " ahead");
		}
		return 1;
	}
	return 0;
}

int rpt_baseline_applies(const cJSON *b, const cJSON *h, const char *problem)
{
	const char *gpu = rpt_str(b, "gpu"), *p = rpt_str(b, "problem");
	return (!gpu || str_contains_ci(rpt_gpu_name(h), gpu)) && (!p || rpt_streq(p, problem));
}

/* "PyTorch SDPA 47.10 us (seed 001, L4): 1.14× faster" */
int rpt_add_spec_baseline(struct strbuf *md, const cJSON *b, const cJSON *step)
{
	const cJSON *res = rpt_result_of(step);
	double r, k;
	int have = 0;
	rpt_md_cell(md, rpt_str(b, "name") ? rpt_str(b, "name") : "baseline");
	strbuf_addch(md, ' ');
	if (rpt_num(b, "latency_us", &r)) {
		rpt_fmt_us(md, r);
		strbuf_addstr(md, " us");
	} else if (rpt_num(b, "tflops", &r)) {
		rpt_fmt_tflops(md, r);
		strbuf_addstr(md, " TFLOPS");
	} else {
		strbuf_addstr(md, DASH);
	}
	strbuf_addstr(md, " (");
	rpt_md_cell(md, rpt_str(b, "source") ? rpt_str(b, "source") : "spec");
	if (rpt_str(b, "gpu")) {
		strbuf_addstr(md, ", ");
		rpt_md_cell(md, rpt_str(b, "gpu"));
	}
	strbuf_addstr(md, ")");
	if (rpt_num(b, "latency_us", &r) && r > 0 && rpt_num(res, "timing.median_us", &k) && k > 0) {
		strbuf_addstr(md, ": ours ");
		rpt_fmt_us(md, k);
		strbuf_addstr(md, " us, ");
		rpt_fmt_ratio(md, k <= r ? r / k : k / r);
		strbuf_addstr(md, k <= r ? " faster" : " slower");
		have = 1;
	} else if (rpt_num(b, "tflops", &r) && r > 0 && rpt_num(res, "model.tflops", &k) && k > 0) {
		strbuf_addstr(md, ": ours ");
		rpt_fmt_tflops(md, k);
		strbuf_addstr(md, " TFLOPS, ");
		rpt_fmt_ratio(md, k >= r ? k / r : r / k);
		strbuf_addstr(md, k >= r ? " faster" : " slower");
		have = 1;
	}
	if (!have)
		strbuf_addstr(md, ": not comparable with what was measured");
	return 1;
}

/* The correctness verdict for program/problem on host h: its correctness
 * step when there is one, else the benchmark's own check. */
const cJSON *rpt_correctness_step(const cJSON *h, const char *program, const char *problem)
{
	const cJSON *s = rpt_find_step(h, "correctness", program, problem, NULL);
	if (!s || !rpt_obj(rpt_result_of(s), "correctness")) {
		const cJSON *b = rpt_find_step(h, "benchmark", program, problem, NULL);
		if (b && rpt_obj(rpt_result_of(b), "correctness"))
			return b;
	}
	return s;
}

void rpt_add_correctness_short(struct strbuf *md, const cJSON *s)
{
	const cJSON *corr = rpt_obj(rpt_result_of(s), "correctness");
	double v;
	if (!corr) {
		strbuf_addstr(md, "correctness ");
		if (s) {
			rpt_cell_status(md, rpt_str(s, "status"));
		} else {
			strbuf_addstr(md, "not checked");
		}
		return;
	}
	strbuf_addstr(md, rpt_is_true(corr, "pass") ? "correct ✅" : "**INCORRECT ❌**");
	if (rpt_num(corr, "max_abs", &v)) {
		strbuf_addstr(md, " (max_abs ");
		rpt_fmt_g(md, v);
		if (rpt_num(corr, "rel_l2", &v)) {
			strbuf_addstr(md, ", rel_l2 ");
			rpt_fmt_g(md, v);
		}
		strbuf_addch(md, ')');
	}
}

/* ==== 4. results ==== */

static void add_bench_row(const struct rpt_ctx *c, struct strbuf *md, const cJSON *h,
			  const cJSON *s)
{
	const cJSON *res = rpt_result_of(s);
	double v, lo, hi;
	strbuf_addstr(md, "| ");
	rpt_md_code(md, rpt_str(s, "program"));
	strbuf_addstr(md, " | ");
	rpt_md_cell_n(md, rpt_str(s, "role") ? rpt_str(s, "role") : "kernel", 20);
	strbuf_addstr(md, " | ");
	rpt_cell_status(md, rpt_str(s, "status"));
	strbuf_addstr(md, " | ");
	if (rpt_num(res, "timing.median_us", &v)) {
		strbuf_addstr(md, rpt_is_baseline(s) ? "" : "**");
		rpt_fmt_us(md, v);
		strbuf_addstr(md, rpt_is_baseline(s) ? "" : "**");
	} else {
		strbuf_addstr(md, DASH);
	}
	strbuf_addstr(md, " | ");
	if (rpt_num(res, "timing.p10_us", &lo) && rpt_num(res, "timing.p90_us", &hi)) {
		rpt_fmt_us(md, lo);
		strbuf_addstr(md, "–");
		rpt_fmt_us(md, hi);
	} else {
		strbuf_addstr(md, DASH);
	}
	strbuf_addstr(md, " | ");
	if (rpt_num(res, "timing.cv_pct", &v))
		strbuf_addf(md, "%.2f%%", v);
	else
		strbuf_addstr(md, DASH);
	strbuf_addstr(md, " | ");
	rpt_cell_num(md, res, "timing.n", rpt_fmt_int);
	if (rpt_str(rpt_obj(res, "timing"), "stop_rule")) {
		strbuf_addstr(md, " (");
		rpt_md_cell_n(md, rpt_str(rpt_obj(res, "timing"), "stop_rule"), 20);
		strbuf_addch(md, ')');
	}
	strbuf_addstr(md, " | ");
	rpt_cell_num(md, res, "model.tflops", rpt_fmt_tflops);
	strbuf_addstr(md, " | ");
	rpt_cell_num(md, res, "model.gbps", rpt_fmt_gbps);
	strbuf_addstr(md, " | ");
	if (rpt_num(res, "model.pct_of_floor", &v))
		strbuf_addf(md, "%.0f%%", v);
	else
		strbuf_addstr(md, DASH);
	if (rpt_is_true(res, "model.impossible"))
		strbuf_addstr(md, " ⚠️ **IMPOSSIBLE**");
	strbuf_addstr(md, " | ");
	if (rpt_is_baseline(s))
		strbuf_addstr(md, "(baseline)");
	else if (rpt_is_true(res, "model.impossible"))
		strbuf_addstr(md, "not trusted");
	else if (!rpt_add_speedup(md, h, s, 1))
		strbuf_addstr(md, DASH);
	strbuf_addstr(md, " |\n");
	(void)c;
}

static void add_correctness_row(struct strbuf *md, const cJSON *s)
{
	const cJSON *res = rpt_result_of(s), *corr = rpt_obj(res, "correctness");
	const cJSON *tol = rpt_obj(corr, "tol"), *trials = rpt_arr(corr, "trials");
	strbuf_addstr(md, "| ");
	rpt_md_code(md, rpt_str(s, "program"));
	strbuf_addstr(md, " | ");
	rpt_md_cell_n(md, rpt_str(s, "kind"), 20);
	strbuf_addstr(md, " | ");
	rpt_cell_status(md, rpt_str(s, "status"));
	strbuf_addstr(md, " | ");
	rpt_cell_num(md, corr, "max_abs", rpt_fmt_g);
	strbuf_addstr(md, " | ");
	rpt_cell_num(md, corr, "max_rel", rpt_fmt_g);
	strbuf_addstr(md, " | ");
	rpt_cell_num(md, corr, "rel_l2", rpt_fmt_g);
	strbuf_addstr(md, " | ");
	if (tol) {
		const cJSON *x;
		int n = 0;
		cJSON_ArrayForEach(x, tol) {
			if (!cJSON_IsNumber(x))
				continue;
			strbuf_addf(md, "%s%s ≤ ", n++ ? ", " : "", x->string);
			rpt_fmt_g(md, x->valuedouble);
		}
		if (!n)
			strbuf_addstr(md, DASH);
	} else {
		strbuf_addstr(md, DASH);
	}
	strbuf_addstr(md, " | ");
	if (!corr)
		strbuf_addstr(md, DASH);
	else if (rpt_is_true(corr, "pass"))
		strbuf_addstr(md, "✅ pass");
	else
		strbuf_addstr(md, "❌ **fail**");
	if (trials)
		strbuf_addf(md, " (%d trial%s)", cJSON_GetArraySize(trials),
			    cJSON_GetArraySize(trials) == 1 ? "" : "s");
	strbuf_addstr(md, " |\n");
}

static void results_problem(struct rpt_ctx *c, const cJSON *h, const char *problem)
{
	struct strbuf *md = c->md;
	const cJSON *s, *ref, *b;
	int nb = 0, nc = 0, notes = 0;

	strbuf_addstr(md, "#### ");
	rpt_md_cell(md, problem);
	{
		const cJSON *p = spec_problem(c, problem);
		if (p && rpt_obj(p, "params")) {
			strbuf_addstr(md, " — ");
			rpt_add_kv(md, rpt_obj(p, "params"), "=");
		}
	}
	strbuf_addstr(md, "\n\n");

	FOR_EACH_OBJ(s, rpt_arr(h, "steps")) {
		if (!rpt_streq(rpt_str(s, "problem"), problem) || !rpt_streq(rpt_str(s, "kind"), "benchmark"))
			continue;
		if (!nb++)
			strbuf_addstr(md, "| program | role | status | median (us) | p10–p90 (us) | CV "
					  "| n (stop) | TFLOPS | GB/s | % of floor | speedup |\n"
					  "|---|---|---|---|---|---|---|---|---|---|---|\n");
		add_bench_row(c, md, h, s);
	}
	if (nb)
		strbuf_addstr(md, "\n");

	FOR_EACH_OBJ(s, rpt_arr(h, "steps")) {
		if (!rpt_streq(rpt_str(s, "problem"), problem))
			continue;
		if (!rpt_streq(rpt_str(s, "kind"), "correctness") &&
		    !(rpt_streq(rpt_str(s, "kind"), "benchmark") && rpt_obj(rpt_result_of(s), "correctness") &&
		      !rpt_find_step(h, "correctness", rpt_str(s, "program"), problem, NULL)))
			continue;
		if (!nc++)
			strbuf_addstr(md, "| program | checked by | status | max_abs | max_rel | rel_l2 "
					  "| tolerance | verdict |\n"
					  "|---|---|---|---|---|---|---|---|\n");
		add_correctness_row(md, s);
	}
	if (nc)
		strbuf_addstr(md, "\n");
	if (!nb && !nc)
		strbuf_addstr(md, "No step was recorded for this problem on this host.\n\n");

	/* comparisons, flags and reasons */
	FOR_EACH_OBJ(s, rpt_arr(h, "steps")) {
		const cJSON *res = rpt_result_of(s);
		const cJSON *t = rpt_obj(res, "timing");
		double v;
		if (!rpt_streq(rpt_str(s, "problem"), problem))
			continue;
		if (rpt_streq(rpt_str(s, "kind"), "benchmark") && !rpt_is_baseline(s) &&
		    rpt_num(res, "timing.median_us", &v) && !rpt_is_true(res, "model.impossible")) {
			FOR_EACH_OBJ(ref, c->references) {
				struct strbuf one = STRBUF_INIT;
				if (rpt_ref_applies(ref, h) && rpt_add_reference_gap(&one, ref, s)) {
					strbuf_addstr(md, "- ");
					rpt_md_code(md, rpt_str(s, "program"));
					strbuf_addstr(md, " vs reference ");
					strbuf_addstr(md, one.buf);
					strbuf_addstr(md, "\n");
					notes++;
				}
				strbuf_release(&one);
			}
			FOR_EACH_OBJ(b, c->baselines) {
				if (!rpt_baseline_applies(b, h, problem))
					continue;
				strbuf_addstr(md, "- ");
				rpt_md_code(md, rpt_str(s, "program"));
				strbuf_addstr(md, " vs spec baseline ");
				rpt_add_spec_baseline(md, b, s);
				strbuf_addstr(md, "\n");
				notes++;
			}
		}
		if (rpt_is_true(res, "model.impossible")) {
			strbuf_addstr(md, "- ⚠️ **IMPOSSIBLE**: ");
			rpt_md_code(md, rpt_str(s, "program"));
			strbuf_addstr(md, " median ");
			rpt_cell_num(md, res, "timing.median_us", rpt_fmt_us);
			strbuf_addstr(md, " us beats the floor of ");
			rpt_cell_num(md, res, "model.floor_us", rpt_fmt_us);
			strbuf_addstr(md, " us (peak ");
			rpt_cell_num(md, res, "model.peak_tflops", rpt_fmt_tflops);
			strbuf_addstr(md, " TFLOPS / ");
			rpt_cell_num(md, res, "model.peak_gbps", rpt_fmt_gbps);
			strbuf_addstr(md, " GB/s, ");
			rpt_md_cell(md, rpt_str(rpt_obj(res, "model"), "peak_source"));
			strbuf_addstr(md, "). Do not trust this number.\n");
			notes++;
		}
		if (t && ((rpt_num(t, "dropped_throttled", &v) && v > 0) ||
			  rpt_streq(rpt_str(t, "stop_rule"), "time_cap") ||
			  rpt_streq(rpt_str(t, "stop_rule"), "max_samples"))) {
			strbuf_addstr(md, "- ");
			rpt_md_code(md, rpt_str(s, "program"));
			strbuf_addstr(md, " timing: ");
			if (rpt_num(t, "dropped_throttled", &v) && v > 0)
				strbuf_addf(md, "%.0f throttled sample%s dropped; ", v,
					    v == 1 ? "" : "s");
			strbuf_addstr(md, "stopped by ");
			rpt_md_code(md, rpt_str(t, "stop_rule"));
			if (rpt_streq(rpt_str(t, "stop_rule"), "time_cap") ||
			    rpt_streq(rpt_str(t, "stop_rule"), "max_samples"))
				strbuf_addstr(md, " before the spread settled (CV target not reached)");
			if (rpt_num(t, "sm_clock_mhz_median", &v))
				strbuf_addf(md, "; SM clock median %.0f MHz", v);
			strbuf_addstr(md, "\n");
			notes++;
		}
		if (!rpt_streq(rpt_str(s, "status"), "PASS")) {
			strbuf_addstr(md, "- ");
			rpt_cell_status(md, rpt_str(s, "status"));
			strbuf_addch(md, ' ');
			rpt_md_cell_n(md, rpt_str(s, "kind"), 20);
			strbuf_addch(md, ' ');
			rpt_md_code(md, rpt_str(s, "program"));
			strbuf_addstr(md, ": ");
			rpt_md_cell_n(md, rpt_str(s, "reason") ? rpt_str(s, "reason") : "no reason recorded", 400);
			strbuf_addstr(md, "\n");
			notes++;
		}
	}
	if (notes)
		strbuf_addstr(md, "\n");
}

void rpt_section_results(struct rpt_ctx *c)
{
	struct strbuf *md = c->md;
	const cJSON *h;
	strbuf_addstr(md, "## Results\n\n");
	FOR_EACH_OBJ(h, c->hosts) {
		const char *probs[MAX_PROBLEMS];
		int n, i;
		double v;
		const cJSON *info = rpt_obj(h, "info");
		strbuf_addstr(md, "### ");
		rpt_md_cell(md, rpt_host_name(h));
		strbuf_addstr(md, " — ");
		rpt_md_cell(md, rpt_gpu_name(h) ? rpt_gpu_name(h) : "GPU unknown");
		if (rpt_str(info, "arch")) {
			strbuf_addstr(md, " (");
			rpt_md_cell_n(md, rpt_str(info, "arch"), 20);
			strbuf_addch(md, ')');
		}
		strbuf_addstr(md, "\n\n");
		if (rpt_num(info, "sm_clock_mhz", &v)) {
			strbuf_addf(md, "SM clock %.0f MHz", v);
			if (rpt_num(info, "max_sm_clock_mhz", &v))
				strbuf_addf(md, " (max %.0f)", v);
			if (rpt_num(info, "mem_clock_mhz", &v))
				strbuf_addf(md, ", memory clock %.0f MHz", v);
			strbuf_addstr(md, " at probe time.\n\n");
		}
		if (!cJSON_GetArraySize(rpt_arr(h, "steps"))) {
			strbuf_addstr(md, "No results: ");
			rpt_cell_host_status(md, h);
			if (rpt_str(h, "error")) {
				strbuf_addstr(md, " — ");
				rpt_md_cell_n(md, rpt_str(h, "error"), 400);
			}
			strbuf_addstr(md, "\n\n");
			continue;
		}
		n = problem_list(c, h, probs, MAX_PROBLEMS);
		for (i = 0; i < n; i++)
			results_problem(c, h, probs[i]);
	}
	if (!cJSON_GetArraySize(c->hosts))
		strbuf_addstr(md, "No hosts were recorded.\n\n");
}

/* ==== 6. expectations ==== */

void rpt_section_expectations(struct rpt_ctx *c)
{
	struct strbuf *md = c->md;
	int i;

	strbuf_addstr(md, "## Expectations vs measurements\n\n");
	if (!cJSON_GetArraySize(c->expected)) {
		strbuf_addstr(md, "The spec states no expectations.\n\n");
		return;
	}
	if (!c->nv) {
		strbuf_addstr(md, "No host was recorded, so no expectation could be judged.\n\n");
		return;
	}
	strbuf_addstr(md, "| expectation | host | problem | measured | verdict |\n"
			  "|---|---|---|---|---|\n");
	for (i = 0; i < c->nv; i++) {
		const struct verdict *v = &c->v[i];
		const cJSON *e = v->exp;
		double target;
		strbuf_addstr(md, "| ");
		rpt_md_code(md, rpt_str(e, "program"));
		strbuf_addch(md, ' ');
		rpt_md_cell_n(md, rpt_str(e, "metric"), 60);
		strbuf_addch(md, ' ');
		rpt_md_cell_n(md, rpt_str(e, "op"), 4);
		strbuf_addch(md, ' ');
		if (rpt_num(e, "value", &target))
			rpt_fmt_target(md, rpt_str(e, "metric"), target);
		else
			strbuf_addstr(md, DASH);
		if (rpt_str(e, "gpu")) {
			strbuf_addstr(md, " on ");
			rpt_md_cell_n(md, rpt_str(e, "gpu"), 40);
		}
		if (rpt_str(e, "note")) {
			strbuf_addstr(md, " (");
			rpt_md_cell(md, rpt_str(e, "note"));
			strbuf_addch(md, ')');
		}
		strbuf_addstr(md, " | ");
		rpt_md_cell(md, rpt_host_name(v->host));
		strbuf_addstr(md, " | ");
		rpt_md_cell(md, v->problem ? v->problem : rpt_str(e, "problem"));
		strbuf_addstr(md, " | ");
		if (v->has_value)
			rpt_fmt_metric(md, rpt_str(e, "metric"), v->value);
		else
			strbuf_addstr(md, DASH);
		strbuf_addstr(md, " | ");
		switch (v->kind) {
		case V_MET:
			strbuf_addstr(md, "✅ met");
			break;
		case V_MISSED:
			strbuf_addstr(md, "❌ **missed**");
			if (v->has_value && rpt_num(e, "value", &target) && target != 0 && v->value != 0) {
				double r = fabs(v->value / target);
				strbuf_addstr(md, " (");
				rpt_fmt_ratio(md, r >= 1 ? r : 1 / r);
				strbuf_addstr(md, " off)");
			}
			break;
		case V_NOT_MEASURED:
			strbuf_addstr(md, "⚪ not measured");
			break;
		case V_NOT_APPLICABLE:
			strbuf_addstr(md, "➖ not applicable");
			break;
		}
		if (v->why.len) {
			strbuf_addstr(md, v->kind == V_NOT_APPLICABLE ? " — " : ": ");
			rpt_md_cell_n(md, v->why.buf, 200);
		}
		strbuf_addstr(md, " |\n");
	}
	strbuf_addstr(md, "\n");
}
