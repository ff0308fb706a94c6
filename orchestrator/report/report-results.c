/* report-results.c -- the report's results, baselines, references and expectations. */
#include "report/report-int.h"
#include "store/gates.h"
#include "core/strdistinct.h"
#include <stdlib.h>

#include <math.h>
#include <string.h>
#include "core/banned.h"

#define MAX_PROBLEMS 256        /* problems listed per host */

/* ==== the run's parts ==== */

const char *rpt_host_name(const cJSON *h)
{
	const char *n = rr_str(h, "name");
	return n ? n : "?";
}

const char *rpt_gpu_name(const cJSON *h)
{
	return rr_str(rr_obj(h, "info"), "gpu_name");
}

int rpt_is_baseline(const cJSON *step)
{
	return rr_streq(rr_str(step, "role"), "baseline");
}

int rpt_problems(const cJSON *spec, const cJSON *h, enum step_kind kind, const char **out, int max)
{
	const cJSON *p, *s;
	const char **all = xmalloc(sizeof(*all) * (size_t)(cJSON_GetArraySize(rr_arr(spec, "problems")) +
							   cJSON_GetArraySize(rr_arr(h, "steps")) + 1));
	int n = 0, i;
	FOR_EACH_OBJ(p, rr_arr(spec, "problems"))
		if (rr_str(p, "name"))
			all[n++] = rr_str(p, "name");
	FOR_EACH_OBJ(s, rr_arr(h, "steps"))
		if (rr_str(s, "problem") && (kind == STEP_ANY || rr_is_kind(s, kind)))
			all[n++] = rr_str(s, "problem");
	n = str_distinct(all, n);
	for (i = 0; i < n && i < max; i++)
		out[i] = all[i];
	free(all);
	return i;
}

static const cJSON *spec_problem(const struct rpt_ctx *c, const char *name)
{
	const cJSON *p;
	FOR_EACH_OBJ(p, rr_arr(c->spec, "problems"))
		if (rr_streq(rr_str(p, "name"), name))
			return p;
	return NULL;
}

/* ==== expectations ==== */

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

/* the verdict of an expectation on a figure gates derive, read as they read it */
static void judge_derived(struct verdict *v, const cJSON *h, const char *program, const char *problem,
			  const char *metric, const char *op, double target)
{
	struct gate_figure f = {.why = STRBUF_INIT};
	int ok;

	gates_measure(h, program, problem, metric, &f);
	v->step = f.step;
	if (!f.has_value) {
		strbuf_add(&v->why, f.why.buf, f.why.len);
	} else {
		v->value = f.value;
		v->has_value = 1;
		if (!metric_op_holds(op, f.value, target, &ok))
			strbuf_addf(&v->why, "unknown operator '%s'", op);
		else
			v->kind = ok ? V_MET : V_MISSED;
	}
	strbuf_release(&f.why);
}

/* One expectation on one host and problem, judged by metric_op_holds -- the
 * gates' operator. A result metric is read through rr_measure, as gates read
 * it; a figure gates derive (speedup: the baseline's median over the
 * kernel's; profile.*, sanitizer.*, ptxas.*) through gates_measure itself. */
static void judge(struct rpt_ctx *c, const cJSON *e, const cJSON *h, const char *problem)
{
	struct verdict *v = new_verdict(c, e, h, problem);
	const char *program = rr_str(e, "program");
	const char *metric = rr_str(e, "metric");
	const char *op = rr_str(e, "op");
	struct rr_measure m;
	const cJSON *s;
	double target;
	int ok;

	if (!program || !metric || !op || !rr_num(e, "value", &target)) {
		strbuf_addstr(&v->why, "the expectation lacks program, metric, op or value");
		return;
	}
	if (gates_metric_derived(metric)) {
		judge_derived(v, h, program, problem, metric, op, target);
		return;
	}
	rr_measure(h, program, problem, metric, &m);
	v->step = s = m.step;
	if (!s) {
		if (!rpt_host_finished(rr_str(h, "status")))
			strbuf_addf(&v->why, "the run stopped before the %s step ran", step_kind_name(m.prefer));
		else if (!host_status_is(rr_str(h, "status"), HOST_OK))
			strbuf_addf(&v->why, "host %s", rr_str(h, "status") ? rr_str(h, "status")
							: host_status_name(HOST_FAILED));
		else
			strbuf_addf(&v->why, "no %s step of this program ran for this problem", step_kind_name(m.prefer));
		return;
	}
	if (m.bad_outputs) {
		/* NaN/Inf outputs: an error over the rest would be a lie; the
		 * check is wrong, so an error expectation is missed */
		struct strbuf bad = STRBUF_INIT;
		rr_bad_outputs(rr_result(s), &bad);
		strbuf_addstr(&v->why, bad.buf);
		strbuf_release(&bad);
		v->kind = V_MISSED;
		return;
	}
	if (!m.has_value) {
		const char *st = rr_str(s, "status");
		if (item_status_is(st, ST_SKIPPED))
			strbuf_addstr(&v->why, "step skipped");
		else if (st && !item_status_is(st, ST_PASS))
			strbuf_addf(&v->why, "step %s", st);
		else
			strbuf_addf(&v->why, "the result has no '%s'", m.path);
		if (rr_str(s, "reason")) {
			strbuf_addstr(&v->why, ": ");
			strbuf_addstr(&v->why, rr_str(s, "reason"));
		}
		return;
	}
	v->value = m.value;
	v->has_value = 1;
	if (m.impossible) {
		strbuf_addstr(&v->why, "the timing beats the roofline floor (impossible); not counted");
		return;
	}
	if (!metric_op_holds(op, m.value, target, &ok)) {
		strbuf_addf(&v->why, "unknown operator '%s'", op);
		return;
	}
	v->kind = ok ? V_MET : V_MISSED;
	if (!item_status_is(rr_str(s, "status"), ST_PASS) && rr_str(s, "status"))
		strbuf_addf(&v->why, "step %s", rr_str(s, "status"));
}

void rpt_judge_all(struct rpt_ctx *c)
{
	const cJSON *e, *h;
	FOR_EACH_OBJ(e, c->expected) {
		const char *gpu = rr_str(e, "gpu");
		const char *problem = rr_str(e, "problem");
		FOR_EACH_OBJ(h, c->hosts) {
			if (gpu && !str_contains_ci(rpt_gpu_name(h), gpu)) {
				struct verdict *v = new_verdict(c, e, h, problem);
				if (rpt_gpu_name(h)) {
					v->kind = V_NOT_APPLICABLE;
					strbuf_addf(&v->why, "the GPU is not '%s'", gpu);
				} else if (!rpt_host_finished(rr_str(h, "status"))) {
					strbuf_addstr(&v->why, "the run stopped before the GPU was probed");
				} else {
					strbuf_addf(&v->why, "host %s: its GPU is unknown",
						    rr_str(h, "status") ? rr_str(h, "status")
						    : host_status_name(HOST_FAILED));
				}
				continue;
			}
			if (problem) {
				judge(c, e, h, problem);
			} else {
				const char *probs[MAX_PROBLEMS];
				int n = rpt_problems(c->spec, h, STEP_ANY, probs, MAX_PROBLEMS), i;
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

/* The measured baseline for a kernel step: same host, same problem; else,
 * for a program that names one of its own problems as its baseline
 * (programs.NAME.baseline_problem: sgemm-cuda's k0 is cuBLAS), its run on
 * that problem. */
static const cJSON *baseline_for(const struct rpt_ctx *c, const cJSON *h, const cJSON *step)
{
	const cJSON *s;
	const char *bp;
	double m;
	for (s = NULL; rr_str(step, "problem") &&
	     (s = rr_next_step(h, s, STEP_BENCHMARK, NULL, rr_str(step, "problem"), "baseline", NULL));)
		if (s != step && rr_num(rr_result(s), METRIC_MEDIAN_PATH, &m) && m > 0)
			return s;
	bp = rr_str(rr_obj(rr_obj(c ? c->spec : NULL, "programs"), rr_str(step, "program")), "baseline_problem");
	if (bp && !rr_streq(bp, rr_str(step, "problem"))) {
		s = rr_find_step(h, STEP_BENCHMARK, rr_str(step, "program"), bp, NULL, NULL);
		if (s && item_status_is(rr_str(s, "status"), ST_PASS))
			return s;
	}
	return NULL;
}

/* The ratio baseline / kernel by the first figure both results have that
 * declares its better direction (higher: kernel / baseline); 0 when none. */
static int figure_speedup(const cJSON *b, const cJSON *k, double *ratio, const char **name)
{
	const cJSON *f;
	FOR_EACH_OBJ(f, rr_obj(rr_result(k), "figures")) {
		const cJSON *bf = rr_obj(rr_obj(rr_result(b), "figures"), f->string);
		double kv, bv;
		const char *better = rr_str(f, "better");
		if (!bf || !better || !rr_num(f, "value", &kv) || !rr_num(bf, "value", &bv) || kv <= 0 || bv <= 0 ||
		    rr_true(f, "impossible") || rr_true(bf, "impossible"))
			continue;
		*ratio = !strcmp(better, "higher") ? kv / bv : bv / kv;
		*name = f->string;
		return 1;
	}
	return 0;
}

/* "1.14× vs `sdpa`" (or "0.80× vs" when slower) into md; 0 when none.
 * markdown: bold figure and code-span name; else plain text. */
int rpt_add_speedup(const struct rpt_ctx *c, struct strbuf *md, const cJSON *h, const cJSON *step,
		    int markdown)
{
	const cJSON *b = baseline_for(c, h, step);
	double bm, km, b10, b90, k10, k90, r;
	const char *fig;
	if (b && !rr_num(rr_result(step), METRIC_MEDIAN_PATH, &km) && figure_speedup(b, step, &r, &fig)) {
		/* a program off the harness against its own baseline problem, by its figure */
		if (markdown)
			strbuf_addstr(md, "**");
		rpt_fmt_ratio(md, r);
		strbuf_addstr(md, markdown ? "** vs " : " vs ");
		if (markdown)
			rpt_md_code(md, rr_str(b, "program"));
		else
			strbuf_addstr(md, rr_str(b, "program") ? rr_str(b, "program") : "baseline");
		strbuf_addch(md, ' ');
		rpt_md_cell(md, rr_str(b, "problem"));
		strbuf_addstr(md, " (");
		rpt_md_cell(md, fig);
		strbuf_addch(md, ')');
		return 1;
	}
	if (!b || !rr_num(rr_result(step), METRIC_MEDIAN_PATH, &km) || km <= 0 ||
	    !rr_num(rr_result(b), METRIC_MEDIAN_PATH, &bm))
		return 0;
	if (markdown)
		strbuf_addstr(md, "**");
	rpt_fmt_ratio(md, bm / km);
	if (markdown)
		strbuf_addstr(md, "**");
	strbuf_addstr(md, " vs ");
	if (markdown)
		rpt_md_code(md, rr_str(b, "program"));
	else
		strbuf_addstr(md, rr_str(b, "program") ? rr_str(b, "program") : "baseline");
	/* a speedup whose p10-p90 range (baseline's p10 over the kernel's p90, and p90 over p10)
	 * holds both faster and slower says nothing about which is faster: flag it */
	if (rr_num(rr_result(b), "timing.p10_us", &b10) && rr_num(rr_result(b), "timing.p90_us", &b90) &&
	    rr_num(rr_result(step), "timing.p10_us", &k10) && rr_num(rr_result(step), "timing.p90_us", &k90) &&
	    k10 > 0 && k90 > 0 && b10 / k90 < 1 && b90 / k10 > 1 && (bm / km > 1.05 || bm / km < 1 / 1.05)) {
		strbuf_addstr(md, markdown ? " ⚠️ spread " : " (spread ");
		rpt_fmt_ratio(md, b10 / k90);
		strbuf_addstr(md, "–");
		rpt_fmt_ratio(md, b90 / k10);
		strbuf_addstr(md, markdown ? ": inconclusive" : ": inconclusive)");
	}
	return 1;
}

/* o names v by key one ("program": "x") or many ("programs": ["x", "y"]);
 * naming nothing is naming none (a reference or baseline applies only to
 * the programs and problems it names: issue 30 item 12). */
static int names(const cJSON *o, const char *one, const char *many, const char *v)
{
	const cJSON *it;
	if (rr_str(o, one))
		return rr_streq(rr_str(o, one), v);
	cJSON_ArrayForEach(it, rr_arr(o, many))
		if (cJSON_IsString(it) && rr_streq(it->valuestring, v))
			return 1;
	return 0;
}

static int names_step(const cJSON *o, const cJSON *step)
{
	return names(o, "program", "programs", rr_str(step, "program")) &&
	       names(o, "problem", "problems", rr_str(step, "problem"));
}

int rpt_ref_applies(const cJSON *ref, const cJSON *h, const cJSON *step)
{
	const char *gpu = rr_str(ref, "gpu");
	return (!gpu || str_contains_ci(rpt_gpu_name(h), gpu)) && names_step(ref, step);
}

/* "FA3 450 / 312.4 = 1.44× remaining" for a kernel step; 0 when not comparable. */
int rpt_add_reference_gap(struct strbuf *md, const cJSON *ref, const cJSON *step)
{
	const cJSON *res = rr_result(step);
	double r, k;
	if (rr_num(ref, "tflops", &r) && rr_num(res, "model.tflops", &k) && k > 0 && r > 0) {
		rpt_md_cell(md, rr_str(ref, "name") ? rr_str(ref, "name") : "reference");
		strbuf_addch(md, ' ');
		metric_fmt_tflops(md, r);
		strbuf_addstr(md, " / ");
		metric_fmt_tflops(md, k);
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
	if (rr_num(ref, "latency_us", &r) && rr_num(res, METRIC_MEDIAN_PATH, &k) && k > 0 && r > 0) {
		rpt_md_cell(md, rr_str(ref, "name") ? rr_str(ref, "name") : "reference");
		strbuf_addch(md, ' ');
		metric_fmt_us(md, k);
		strbuf_addstr(md, " / ");
		metric_fmt_us(md, r);
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

int rpt_baseline_applies(const cJSON *b, const cJSON *h, const cJSON *step)
{
	const char *gpu = rr_str(b, "gpu");
	return (!gpu || str_contains_ci(rpt_gpu_name(h), gpu)) && names_step(b, step);
}

/* "PyTorch SDPA 47.10 us (seed 001, L4): 1.14× faster" */
int rpt_add_spec_baseline(struct strbuf *md, const cJSON *b, const cJSON *step)
{
	const cJSON *res = rr_result(step);
	double r, k;
	int have = 0;
	rpt_md_cell(md, rr_str(b, "name") ? rr_str(b, "name") : "baseline");
	strbuf_addch(md, ' ');
	if (rr_num(b, "latency_us", &r)) {
		metric_fmt_us(md, r);
		strbuf_addstr(md, " us");
	} else if (rr_num(b, "tflops", &r)) {
		metric_fmt_tflops(md, r);
		strbuf_addstr(md, " TFLOPS");
	} else {
		strbuf_addstr(md, DASH);
	}
	strbuf_addstr(md, " (");
	rpt_md_cell(md, rr_str(b, "source") ? rr_str(b, "source") : "spec");
	if (rr_str(b, "gpu")) {
		strbuf_addstr(md, ", ");
		rpt_md_cell(md, rr_str(b, "gpu"));
	}
	strbuf_addstr(md, ")");
	if (rr_num(b, "latency_us", &r) && r > 0 && rr_num(res, METRIC_MEDIAN_PATH, &k) && k > 0) {
		strbuf_addstr(md, ": ours ");
		metric_fmt_us(md, k);
		strbuf_addstr(md, " us, ");
		rpt_fmt_ratio(md, k <= r ? r / k : k / r);
		strbuf_addstr(md, k <= r ? " faster" : " slower");
		have = 1;
	} else if (rr_num(b, "tflops", &r) && r > 0 && rr_num(res, "model.tflops", &k) && k > 0) {
		strbuf_addstr(md, ": ours ");
		metric_fmt_tflops(md, k);
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
	const cJSON *s = rr_find_step(h, STEP_CORRECTNESS, program, problem, NULL, NULL);
	if (!s || !rr_obj(rr_result(s), "correctness")) {
		const cJSON *b = rr_find_step(h, STEP_BENCHMARK, program, problem, NULL, NULL);
		if (b && rr_obj(rr_result(b), "correctness"))
			return b;
	}
	return s;
}

void rpt_add_correctness_short(struct strbuf *md, const cJSON *s)
{
	const cJSON *corr = rr_obj(rr_result(s), "correctness");
	double v;
	if (!corr) {
		strbuf_addstr(md, "correctness ");
		if (s) {
			rpt_cell_status(md, rr_str(s, "status"));
		} else {
			strbuf_addstr(md, "not checked");
		}
		return;
	}
	strbuf_addstr(md, rr_true(corr, "pass") ? "correct ✅" : "**INCORRECT ❌**");
	if (rr_bad_outputs(rr_result(s), NULL)) {
		struct strbuf bad = STRBUF_INIT;
		rr_bad_outputs(rr_result(s), &bad);
		strbuf_addstr(md, " (");
		rpt_md_cell(md, bad.buf);
		strbuf_addch(md, ')');
		strbuf_release(&bad);
	} else if (rr_num(corr, "max_abs", &v)) {
		strbuf_addstr(md, " (max_abs ");
		metric_fmt_g(md, v);
		if (rr_num(corr, "rel_l2", &v)) {
			strbuf_addstr(md, ", rel_l2 ");
			metric_fmt_g(md, v);
		}
		strbuf_addch(md, ')');
	}
}

/* ==== 4. results ==== */

static void add_bench_row(struct rpt_ctx *c, struct strbuf *md, const cJSON *h,
			  const cJSON *s)
{
	const cJSON *res = rr_result(s);
	double v;
	strbuf_addstr(md, "| ");
	rpt_md_code(md, rr_str(s, "program"));
	strbuf_addstr(md, " | ");
	rpt_md_cell_n(md, rr_str(s, "role") ? rr_str(s, "role") : "kernel", 20);
	strbuf_addstr(md, " | ");
	rpt_cell_status(md, rr_str(s, "status"));
	strbuf_addstr(md, " | ");
	if (rr_num(res, METRIC_MEDIAN_PATH, &v)) {
		strbuf_addstr(md, rpt_is_baseline(s) ? "" : "**");
		metric_fmt_us(md, v);
		strbuf_addstr(md, rpt_is_baseline(s) ? "" : "**");
	} else {
		strbuf_addstr(md, DASH);
	}
	strbuf_addstr(md, " | ");
	rpt_add_row_clock(c, md, h, s);
	strbuf_addstr(md, " | ");
	rpt_cell_us_range(md, res, "timing.p10_us", "timing.p90_us");
	strbuf_addstr(md, " | ");
	if (rr_num(res, "timing.cv_pct", &v))
		strbuf_addf(md, "%.2f%%", v);
	else
		strbuf_addstr(md, DASH);
	strbuf_addstr(md, " | ");
	rpt_cell_num(md, res, "timing.n", rpt_fmt_int);
	if (rr_str(rr_obj(res, "timing"), "stop_rule")) {
		strbuf_addstr(md, " (");
		rpt_md_cell_n(md, rr_str(rr_obj(res, "timing"), "stop_rule"), 20);
		strbuf_addch(md, ')');
	}
	strbuf_addstr(md, " | ");
	rpt_cell_num(md, res, "model.tflops", metric_fmt_tflops);
	strbuf_addstr(md, " | ");
	rpt_cell_num(md, res, "model.gbps", metric_fmt_gbps);
	strbuf_addstr(md, " | ");
	{
		cJSON *roof = rpt_roofline(c, h, s);
		rpt_cell_pct_of_peak(md, roof);
		cJSON_Delete(roof);
	}
	if (rr_true(res, METRIC_IMPOSSIBLE_PATH))
		strbuf_addstr(md, " ⚠️ **IMPOSSIBLE**");
	strbuf_addstr(md, " | ");
	if (rpt_is_baseline(s))
		strbuf_addstr(md, "(baseline)");
	else if (rr_true(res, METRIC_IMPOSSIBLE_PATH))
		strbuf_addstr(md, "not trusted");
	else if (!rpt_add_speedup(c, md, h, s, 1))
		strbuf_addstr(md, DASH);
	strbuf_addstr(md, " |\n");
	(void)c;
}

static void add_correctness_row(struct strbuf *md, const cJSON *s)
{
	const cJSON *res = rr_result(s), *corr = rr_obj(res, "correctness");
	const cJSON *tol = rr_obj(corr, "tol"), *trials = rr_arr(corr, "trials");
	strbuf_addstr(md, "| ");
	rpt_md_code(md, rr_str(s, "program"));
	strbuf_addstr(md, " | ");
	rpt_md_cell_n(md, rr_str(s, "kind"), 20);
	strbuf_addstr(md, " | ");
	rpt_cell_status(md, rr_str(s, "status"));
	strbuf_addstr(md, " | ");
	if (rr_bad_outputs(res, NULL)) {
		/* the errors of outputs that are not numbers: the count, never 0 */
		struct strbuf bad = STRBUF_INIT;
		rr_bad_outputs(res, &bad);
		strbuf_addstr(md, "❌ ");
		rpt_md_cell(md, bad.buf);
		strbuf_release(&bad);
	} else {
		rpt_cell_num(md, corr, "max_abs", metric_fmt_g);
	}
	strbuf_addstr(md, " | ");
	rpt_cell_num(md, corr, "max_rel", metric_fmt_g);
	strbuf_addstr(md, " | ");
	rpt_cell_num(md, corr, "rel_l2", metric_fmt_g);
	strbuf_addstr(md, " | ");
	if (tol) {
		const cJSON *x;
		int n = 0;
		cJSON_ArrayForEach(x, tol) {
			if (!cJSON_IsNumber(x))
				continue;
			strbuf_addf(md, "%s%s ≤ ", n++ ? ", " : "", x->string);
			metric_fmt_g(md, x->valuedouble);
		}
		if (!n)
			strbuf_addstr(md, DASH);
	} else {
		strbuf_addstr(md, DASH);
	}
	strbuf_addstr(md, " | ");
	if (!corr)
		strbuf_addstr(md, DASH);
	else if (rr_true(corr, "pass"))
		strbuf_addstr(md, "✅ pass");
	else
		strbuf_addstr(md, "❌ **fail**");
	if (trials)
		strbuf_addf(md, " (%d trial%s)", cJSON_GetArraySize(trials),
			    cJSON_GetArraySize(trials) == 1 ? "" : "s");
	strbuf_addstr(md, " |\n");
}

/* A benchmark row has a figure to show: a timing or a model in its result
 * (a program off the harness has neither: its figures have their own
 * section), or a status other than PASS with no result. A table of rows of
 * only "—" is left out; add_plain_step says what it would have. */
static int bench_has_figures(const cJSON *s)
{
	const cJSON *res = rr_result(s);
	return rr_obj(res, "timing") || rr_obj(res, "model");
}

static int check_has_figures(const cJSON *s)
{
	const cJSON *corr = rr_obj(rr_result(s), "correctness");
	double v;
	return rr_num(corr, "max_abs", &v) || rr_num(corr, "max_rel", &v) ||
	       rr_num(corr, "rel_l2", &v) || rr_obj(corr, "tol");
}

/* "- `prog` benchmark ✅ PASS: no timing in its result; its figures: ..." */
static void add_plain_step(struct strbuf *md, const cJSON *s, const char *what)
{
	const cJSON *res = rr_result(s), *corr = rr_obj(res, "correctness");
	strbuf_addstr(md, "- ");
	rpt_md_step_program(md, s);
	strbuf_addf(md, " %s ", what);
	rpt_cell_status(md, rr_str(s, "status"));
	if (corr && rr_str(corr, "verdict")) {
		strbuf_addstr(md, rr_true(corr, "pass") ? " (✅ pass: " : " (❌ **fail**: ");
		rpt_md_cell_n(md, rr_str(corr, "verdict"), 120);
		strbuf_addstr(md, ")");
	}
	if (!res)
		strbuf_addstr(md, ": no result recorded");
	else if (!strcmp(what, "benchmark") && rr_obj(res, "figures") && rr_obj(res, "figures")->child)
		strbuf_addstr(md, ": no timing in its result; its figures are under \"Figures from "
				  "the programs' output\"");
	else if (!strcmp(what, "benchmark"))
		strbuf_addstr(md, ": no timing in its result");
	strbuf_addstr(md, "\n");
}

/* A problem with no benchmark or correctness step on a host: the steps that
 * did run it (sanitize, profile, sweep, kernel_timing), counted by kind, so
 * it never reads "No step was recorded" when some did. */
static void add_other_steps(struct strbuf *md, const cJSON *h, const char *problem)
{
	static const enum step_kind kinds[] = { STEP_SWEEP, STEP_KERNEL_TIMING, STEP_PROFILE,
						STEP_SANITIZE };
	const cJSON *s;
	int i, n, any = 0;
	for (i = 0; i < (int)(sizeof(kinds) / sizeof(kinds[0])); i++) {
		n = 0;
		FOR_EACH_STEP_OF(s, h, kinds[i], problem)
			n++;
		if (!n)
			continue;
		strbuf_addstr(md, any++ ? ", " : "No benchmark or correctness step ran for this "
					      "problem on this host; it was run by ");
		strbuf_addf(md, "%d %s step%s", n, step_kind_name(kinds[i]), n == 1 ? "" : "s");
	}
	strbuf_addstr(md, any ? " (their sections below).\n\n"
			  : rr_obj(h, "spread") ? "Another host of the pool ran this problem (--spread).\n\n"
			  : "No step was recorded for this problem on this host.\n\n");
}

/* A step of a spread run (the host's "spread"): the GPU it ran on, for the
 * rows of one experiment come from many GPUs. 1 when a line was added. */
static int add_spread_gpu(struct strbuf *md, const cJSON *s)
{
	const cJSON *g, *gpus = rr_arr(s, "gpus");
	int n = 0;
	if (!gpus || !gpus->child)
		return 0;
	strbuf_addstr(md, "- ");
	rpt_md_step_program(md, s);
	strbuf_addch(md, ' ');
	rpt_md_cell_n(md, rr_str(s, "kind"), 20);
	strbuf_addstr(md, " ran on GPU");
	FOR_EACH_OBJ(g, gpus) {
		double idx = -1;
		rr_num(g, "index", &idx);
		strbuf_addf(md, "%s %.0f ", n++ ? "," : "", idx);
		rpt_md_code(md, rr_str(g, "uuid") ? rr_str(g, "uuid") : "(uuid not known)");
	}
	strbuf_addstr(md, " (--spread)\n");
	return 1;
}

/* Where and how step s ran: a benchmark's clock note, a spread step's GPU;
 * the lines added. */
static int add_where_notes(struct rpt_ctx *c, struct strbuf *md, const cJSON *h, const cJSON *s)
{
	int n = 0;
	if (rr_is_kind(s, STEP_BENCHMARK))
		n += rpt_add_clock_note(c, md, h, s);
	if (rr_obj(h, "spread"))
		n += add_spread_gpu(md, s);
	return n;
}

static void results_problem(struct rpt_ctx *c, const cJSON *h, const char *problem)
{
	struct strbuf *md = c->md;
	const cJSON *s, *ref, *b;
	int nb = 0, nc = 0, notes = 0, nb_plain = 0, nc_plain = 0;
	struct strbuf plain = STRBUF_INIT;   /* steps whose table row would be all "—" */

	strbuf_addstr(md, "#### ");
	rpt_md_cell(md, problem);
	{
		const cJSON *p = spec_problem(c, problem);
		if (p && rr_obj(p, "params")) {
			strbuf_addstr(md, " — ");
			rpt_add_kv(md, rr_obj(p, "params"), "=");
		}
	}
	strbuf_addstr(md, "\n\n");

	FOR_EACH_STEP_OF(s, h, STEP_BENCHMARK, problem) {
		if (!bench_has_figures(s)) {
			add_plain_step(&plain, s, "benchmark");
			nb_plain++;
			continue;
		}
		if (!nb++)
			strbuf_addstr(md, "| program | role | status | median (us) | SM clock (MHz) "
					  "| p10–p90 (us) | CV "
					  "| n (stop) | TFLOPS | GB/s | % of peak | speedup |\n"
					  "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
		add_bench_row(c, md, h, s);
	}
	if (nb) {
		strbuf_addstr(md, "\n");
		{
			size_t before = md->len;
			rpt_add_libraries(md, h, problem);
			if (md->len > before)
				strbuf_addstr(md, "\n");
		}
	}

	FOR_EACH_STEP_OF(s, h, STEP_ANY, problem) {
		if (!rr_is_kind(s, STEP_CORRECTNESS) &&
		    !(rr_is_kind(s, STEP_BENCHMARK) && rr_obj(rr_result(s), "correctness") &&
		      !rr_find_step(h, STEP_CORRECTNESS, rr_str(s, "program"), problem, NULL, NULL)))
			continue;
		if (!check_has_figures(s)) {
			if (rr_is_kind(s, STEP_BENCHMARK) && !bench_has_figures(s))
				continue;   /* its benchmark line above says it */
			add_plain_step(&plain, s, rr_is_kind(s, STEP_CORRECTNESS)
					       ? "correctness" : "checked by its benchmark");
			nc_plain++;
			continue;
		}
		if (!nc++)
			strbuf_addstr(md, "| program | checked by | status | max_abs | max_rel | rel_l2 "
					  "| tolerance | verdict |\n"
					  "|---|---|---|---|---|---|---|---|\n");
		add_correctness_row(md, s);
	}
	if (nc)
		strbuf_addstr(md, "\n");
	if (plain.len) {
		strbuf_add(md, plain.buf, plain.len);
		strbuf_addstr(md, "\n");
	}
	strbuf_release(&plain);
	if (!nb && !nc && !nb_plain && !nc_plain)
		add_other_steps(md, h, problem);

	/* comparisons, flags and reasons */
	FOR_EACH_OBJ(s, rr_arr(h, "steps")) {
		const cJSON *res = rr_result(s);
		const cJSON *t = rr_obj(res, "timing");
		double v;
		if (!rr_streq(rr_str(s, "problem"), problem))
			continue;
		if (rr_is_kind(s, STEP_BENCHMARK) && !rpt_is_baseline(s) &&
		    rr_num(res, METRIC_MEDIAN_PATH, &v) && !rr_true(res, METRIC_IMPOSSIBLE_PATH)) {
			FOR_EACH_OBJ(ref, c->references) {
				struct strbuf one = STRBUF_INIT;
				if (rpt_ref_applies(ref, h, s) && rpt_add_reference_gap(&one, ref, s)) {
					strbuf_addstr(md, "- ");
					rpt_md_step_program(md, s);
					strbuf_addstr(md, " vs reference ");
					strbuf_addstr(md, one.buf);
					strbuf_addstr(md, "\n");
					notes++;
				}
				strbuf_release(&one);
			}
			FOR_EACH_OBJ(b, c->baselines) {
				if (!rpt_baseline_applies(b, h, s))
					continue;
				strbuf_addstr(md, "- ");
				rpt_md_step_program(md, s);
				strbuf_addstr(md, " vs spec baseline ");
				rpt_add_spec_baseline(md, b, s);
				strbuf_addstr(md, "\n");
				notes++;
			}
		}
		notes += add_where_notes(c, md, h, s);
		if (rr_true(res, METRIC_IMPOSSIBLE_PATH)) {
			strbuf_addstr(md, "- ⚠️ **IMPOSSIBLE**: ");
			rpt_md_step_program(md, s);
			strbuf_addstr(md, " median ");
			rpt_cell_num(md, res, METRIC_MEDIAN_PATH, metric_fmt_us);
			strbuf_addstr(md, " us beats ");
			rpt_impossible_bound(md, res, 1);
			strbuf_addstr(md, ". Do not trust this number.\n");
			notes++;
		}
		if (t && ((rr_num(t, "dropped_throttled", &v) && v > 0) ||
			  rr_streq(rr_str(t, "stop_rule"), "time_cap") ||
			  rr_streq(rr_str(t, "stop_rule"), "max_samples"))) {
			strbuf_addstr(md, "- ");
			rpt_md_step_program(md, s);
			strbuf_addstr(md, " timing: ");
			if (rr_num(t, "dropped_throttled", &v) && v > 0)
				strbuf_addf(md, "%.0f throttled sample%s dropped; ", v,
					    v == 1 ? "" : "s");
			strbuf_addstr(md, "stopped by ");
			rpt_md_code(md, rr_str(t, "stop_rule"));
			if (rr_streq(rr_str(t, "stop_rule"), "time_cap") ||
			    rr_streq(rr_str(t, "stop_rule"), "max_samples"))
				strbuf_addstr(md, " before the spread settled (CV target not reached)");
			if (rr_num(t, "sm_clock_mhz_median", &v))
				strbuf_addf(md, "; SM clock median %.0f MHz", v);
			strbuf_addstr(md, "\n");
			notes++;
		}
		if (!item_status_is(rr_str(s, "status"), ST_PASS)) {
			strbuf_addstr(md, "- ");
			rpt_cell_status(md, rr_str(s, "status"));
			strbuf_addch(md, ' ');
			rpt_md_cell_n(md, rr_str(s, "kind"), 20);
			strbuf_addch(md, ' ');
			rpt_md_step_program(md, s);
			strbuf_addstr(md, ": ");
			rpt_md_cell_n(md, rr_str(s, "reason") ? rr_str(s, "reason") : "no reason recorded", 400);
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
		const cJSON *info = rr_obj(h, "info");
		strbuf_addstr(md, "### ");
		rpt_md_cell(md, rpt_host_name(h));
		strbuf_addstr(md, " — ");
		rpt_md_cell(md, rpt_gpu_name(h) ? rpt_gpu_name(h) : "GPU unknown");
		if (rr_str(info, "arch")) {
			strbuf_addstr(md, " (");
			rpt_md_cell_n(md, rr_str(info, "arch"), 20);
			strbuf_addch(md, ')');
		}
		strbuf_addstr(md, "\n\n");
		if (rr_num(info, "sm_clock_mhz", &v)) {
			strbuf_addf(md, "SM clock %.0f MHz", v);
			if (rr_num(info, "max_sm_clock_mhz", &v))
				strbuf_addf(md, " (max %.0f)", v);
			if (rr_num(info, "mem_clock_mhz", &v))
				strbuf_addf(md, ", memory clock %.0f MHz", v);
			strbuf_addstr(md, " at probe time.\n\n");
		}
		if (!cJSON_GetArraySize(rr_arr(h, "steps"))) {
			strbuf_addstr(md, "No results: ");
			rpt_cell_host_status(md, h);
			if (rr_str(h, "error")) {
				strbuf_addstr(md, " — ");
				rpt_md_cell_n(md, rr_str(h, "error"), 400);
			}
			strbuf_addstr(md, "\n\n");
			continue;
		}
		n = rpt_problems(c->spec, h, STEP_ANY, probs, MAX_PROBLEMS);
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
		rpt_md_code(md, rr_str(e, "program"));
		strbuf_addch(md, ' ');
		rpt_md_cell_n(md, rr_str(e, "metric"), 60);
		strbuf_addch(md, ' ');
		rpt_md_cell_n(md, rr_str(e, "op"), 4);
		strbuf_addch(md, ' ');
		if (rr_num(e, "value", &target))
			metric_fmt_target(md, rr_str(e, "metric"), target);
		else
			strbuf_addstr(md, DASH);
		if (rr_str(e, "gpu")) {
			strbuf_addstr(md, " on ");
			rpt_md_cell_n(md, rr_str(e, "gpu"), 40);
		}
		if (rr_str(e, "note")) {
			strbuf_addstr(md, " (");
			rpt_md_cell(md, rr_str(e, "note"));
			strbuf_addch(md, ')');
		}
		strbuf_addstr(md, " | ");
		rpt_md_cell(md, rpt_host_name(v->host));
		strbuf_addstr(md, " | ");
		rpt_md_cell(md, v->problem ? v->problem : rr_str(e, "problem"));
		strbuf_addstr(md, " | ");
		if (v->has_value)
			metric_fmt(md, rr_str(e, "metric"), v->value);
		else
			strbuf_addstr(md, DASH);
		strbuf_addstr(md, " | ");
		switch (v->kind) {
		case V_MET:
			strbuf_addstr(md, "✅ met");
			break;
		case V_MISSED:
			strbuf_addstr(md, "❌ **missed**");
			if (v->has_value && rr_num(e, "value", &target) && target != 0 && v->value != 0) {
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
