/* gates.c -- pass/fail gates on recorded figures, and sweep rankings (gates.h).
 *
 * Design: everything is read from the host's object of the record through
 * typed getters (a missing or mistyped field is "not measured"), so the
 * functions are pure and a record from an older or interrupted run is
 * judged like any other. Where a figure comes from:
 *   latency_us, tflops, gbps, timing.*, model.*  the benchmark step
 *   max_abs, max_rel, rel_l2, correctness.*      the correctness step, else the benchmark
 *   speedup                                      baseline median / kernel median (same problem)
 *   profile.M                                    the profile step: result.profile.metrics[M].value
 *   sanitizer.T.errors|warnings                  the sanitize step running tool T
 *   ptxas.R                                      max of R over the program's kernels, in its
 *                                                builds for the host's GPU arch (every arch
 *                                                built when the host has no GPU)
 *   anything else                                a dotted path into the benchmark's result,
 *                                                else the correctness step's */
#include "store/gates.h"
#include "core/jsonutil.h"
#include "core/stats.h"
#include "core/strbuf.h"
#include "core/metric.h"
#include "core/vocab.h"
#include "store/runread.h"
#include "store/samples.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

#define MAX_PROBLEMS 256

/* ---------------------------------------------------------------- access */

static const cJSON *get(const cJSON *o, const char *key)
{
	return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

static const cJSON *steps_of(const cJSON *h)
{
	const cJSON *s = get(h, "steps");
	return cJSON_IsArray(s) ? s : NULL;
}

/* ---------------------------------------------------------------- gates */

struct judged {
	double value;
	int has_value;
	const char *unit;
	const cJSON *step;
	const cJSON *base;      /* speedup: the baseline's step */
	struct strbuf why;
	struct strbuf arch;
};

/* Why a step has no value: its status and reason. */
static void step_why(struct strbuf *why, const cJSON *s, const char *what)
{
	const char *st = rr_str(s, "status"), *r = rr_str(s, "reason");
	if (st && !item_status_is(st, ST_PASS))
		strbuf_addf(why, "the %s step %s %s", rr_str(s, "kind") ? rr_str(s, "kind") : "",
			    rr_str(s, "id") ? rr_str(s, "id") : "", st);
	else
		strbuf_addf(why, "the %s step's result has no '%s'",
			    rr_str(s, "kind") ? rr_str(s, "kind") : "", what);
	if (r)
		strbuf_addf(why, ": %s", r);
}

static void no_step(struct strbuf *why, const cJSON *h, enum step_kind k, const char *program,
		    const char *problem)
{
	const char *hs = rr_str(h, "status"), *kind = step_kind_name(k);
	if (hs && !host_status_is(hs, HOST_OK) && !host_status_is(hs, HOST_PENDING))
		strbuf_addf(why, "host %s%s%s", hs, rr_str(h, "error") ? ": " : "",
			    rr_str(h, "error") ? rr_str(h, "error") : "");
	else if (!hs || host_status_is(hs, HOST_PENDING))
		strbuf_addf(why, "the run stopped before a %s step of '%s' ran", kind, program);
	else
		strbuf_addf(why, "no %s step of '%s'%s%s%s ran on this host", kind, program,
			    problem ? " for problem '" : "", problem ? problem : "",
			    problem ? "'" : "");
}

/* metric ends with suffix */
static int metric_ends(const char *metric, const char *suffix)
{
	size_t n = strlen(metric), k = strlen(suffix);
	return n > k && !strcmp(metric + n - k, suffix);
}

/* The unit of figures.NAME.FIELD's figure (its value and its peak share it) */
static const char *figure_unit(const cJSON *result, const char *metric)
{
	const char *dot = strrchr(metric, '.');
	char *path = xstrfmt("%.*s.unit", (int)(dot - metric), metric);
	const cJSON *u = json_path(result, path);
	free(path);
	return cJSON_IsString(u) ? u->valuestring : NULL;
}

static void judge_result_metric(struct judged *j, const cJSON *h, const char *program,
				const char *problem, const char *metric)
{
	struct rr_measure m;
	rr_measure(h, program, problem, metric, &m);
	j->step = m.step;
	if (m.bad_outputs) {
		/* NaN/Inf outputs: an error over the rest would be a lie */
		struct strbuf bad = STRBUF_INIT;
		rr_bad_outputs(rr_result(m.step), &bad);
		strbuf_addf(&j->why, "%s: the outputs are not all numbers", bad.buf);
		strbuf_release(&bad);
		return;
	}
	if (!m.has_value) {
		if (m.step)
			step_why(&j->why, m.step, m.path);
		else
			no_step(&j->why, h, m.prefer, program, problem);
		return;
	}
	j->value = m.value;
	j->has_value = !m.impossible;
	j->unit = metric_unit(metric);
	if (!j->unit)   /* a program's own figure: the unit its spec declared */
		j->unit = rr_str(rr_obj(rr_obj(rr_result(m.step), "figures"), metric), "unit");
	if (!j->unit && !strncmp(metric, "figures.", 8))   /* a result's figure, or its % of peak */
		j->unit = metric_ends(metric, ".pct_of_peak") ? "%" : figure_unit(rr_result(m.step), metric);
	if (m.impossible)
		strbuf_addstr(&j->why, metric_is_timing(metric)
				       ? "the timing beats the roofline floor (impossible): not a measurement to judge"
				       : "the figure is over the GPU's physical peak (impossible): not a measurement to judge");
}

static void judge_speedup(struct judged *j, const cJSON *h, const char *program,
			  const char *problem)
{
	const cJSON *k = rr_find_step(h, STEP_BENCHMARK, program, problem, "kernel", NULL);
	const cJSON *s, *base = NULL;
	double km, bm = 0;
	if (!k) {
		no_step(&j->why, h, STEP_BENCHMARK, program, problem);
		return;
	}
	if (!rr_num(get(k, "result"), METRIC_MEDIAN_PATH, &km) || km <= 0) {
		step_why(&j->why, k, METRIC_MEDIAN_PATH);
		return;
	}
	FOR_EACH_OBJ(s, steps_of(h)) {
		if (s != k && rr_is_kind(s, STEP_BENCHMARK) &&
		    rr_streq(rr_str(s, "role"), "baseline") && rr_streq(rr_str(s, "problem"), problem)) {
			base = s;
			if (rr_num(get(s, "result"), METRIC_MEDIAN_PATH, &bm) && bm > 0)
				break;
		}
	}
	if (!base) {
		strbuf_addf(&j->why, "no baseline benchmark (\"role\": \"baseline\") ran for problem '%s'",
			    problem ? problem : "?");
		return;
	}
	if (!(bm > 0)) {
		strbuf_addstr(&j->why, "the baseline has no timing: ");
		step_why(&j->why, base, METRIC_MEDIAN_PATH);
		return;
	}
	j->step = k;
	j->base = base;
	j->value = bm / km;
	j->has_value = 1;
	j->unit = "×";
}

static void judge_profile(struct judged *j, const cJSON *h, const char *program,
			  const char *problem, const char *m)
{
	const cJSON *s = rr_find_step(h, STEP_PROFILE, program, problem, NULL, NULL);
	const cJSON *mo;
	if (!s) {
		no_step(&j->why, h, STEP_PROFILE, program, problem);
		return;
	}
	j->step = s;
	mo = get(get(get(get(s, "result"), "profile"), "metrics"), m);
	if (!rr_num(mo, "value", &j->value)) {
		const char *st = rr_str(s, "status");
		if (st && !item_status_is(st, ST_PASS))
			step_why(&j->why, s, m);
		else
			strbuf_addf(&j->why, "ncu reported no value for '%s'", m);
		return;
	}
	j->has_value = 1;
	j->unit = rr_str(mo, "unit");
}

static void judge_sanitizer(struct judged *j, const cJSON *h, const char *program,
			    const char *problem, const char *rest)
{
	const char *dot = strchr(rest, '.');
	char *tool = dot ? xstrfmt("%.*s", (int)(dot - rest), rest) : xstrdup(rest);
	const cJSON *s = rr_find_step(h, STEP_SANITIZE, program, problem, NULL, tool);
	if (!s) {
		no_step(&j->why, h, STEP_SANITIZE, program, problem);
		strbuf_addf(&j->why, " (tool %s)", tool);
		free(tool);
		return;
	}
	free(tool);
	j->step = s;
	if (!dot || !rr_num(get(get(s, "result"), "sanitizer"), dot + 1, &j->value)) {
		step_why(&j->why, s, dot ? dot + 1 : rest);
		return;
	}
	j->has_value = 1;
	j->unit = dot && !strcmp(dot + 1, "warnings") ? "warnings" : "errors";
}

static void judge_ptxas(struct judged *j, const cJSON *h, const char *program, const char *res)
{
	const char *arch = rr_str(get(h, "info"), "arch");
	const cJSON *b, *k, *builds = get(h, "builds");
	int nbuilds = 0;
	FOR_EACH_OBJ(b, builds) {
		if (!rr_streq(rr_str(b, "program"), program) || get(b, "variant"))
			continue;
		if (arch && !rr_streq(rr_str(b, "arch"), arch))
			continue;
		nbuilds++;
		if (!item_status_is(rr_str(b, "status"), ST_PASS)) {
			if (!j->why.len)
				strbuf_addf(&j->why, "the build of '%s' for %s %s%s%s", program,
					    rr_str(b, "arch") ? rr_str(b, "arch") : "?",
					    rr_str(b, "status") ? rr_str(b, "status") : "did not pass",
					    rr_str(b, "reason") ? ": " : "",
					    rr_str(b, "reason") ? rr_str(b, "reason") : "");
			continue;
		}
		FOR_EACH_OBJ(k, get(b, "resources")) {
			double v;
			if (cJSON_IsFalse(get(k, "entry")))
				continue;   /* device functions are inside their kernels */
			if (!rr_num(k, res, &v))
				continue;
			if (!j->has_value || v > j->value) {
				j->value = v;
				j->has_value = 1;
			}
		}
		if (j->arch.len)
			strbuf_addch(&j->arch, ',');
		strbuf_addstr(&j->arch, rr_str(b, "arch") ? rr_str(b, "arch") : "?");
	}
	if (j->has_value) {
		strbuf_reset(&j->why);
		j->unit = !strcmp(res, "registers") ? "registers" : !strcmp(res, "barriers") ? "barriers" : "bytes";
		return;
	}
	if (j->why.len)
		return;
	if (!nbuilds)
		strbuf_addf(&j->why, "no build of '%s'%s%s is in the record", program,
			    arch ? " for " : "", arch ? arch : "");
	else
		strbuf_addf(&j->why, "ptxas reported no '%s' for the kernels of '%s'", res, program);
}

/* what kind of figure a gate's metric names: read from a result, or derived */
enum figure_kind { FIG_RESULT, FIG_PROFILE, FIG_SANITIZER, FIG_PTXAS, FIG_SPEEDUP };

static enum figure_kind figure_kind(const char *metric)
{
	if (!strncmp(metric, "profile.", 8))
		return FIG_PROFILE;
	if (!strncmp(metric, "sanitizer.", 10))
		return FIG_SANITIZER;
	if (!strncmp(metric, "ptxas.", 6))
		return FIG_PTXAS;
	return strcmp(metric, "speedup") ? FIG_RESULT : FIG_SPEEDUP;
}

int gates_metric_derived(const char *metric)
{
	return metric && figure_kind(metric) != FIG_RESULT;
}

/* the figure METRIC of program/problem on host h, by its kind */
static void measure(struct judged *j, const cJSON *h, const char *program, const char *problem,
		    const char *metric)
{
	switch (figure_kind(metric)) {
	case FIG_PROFILE: judge_profile(j, h, program, problem, metric + 8); break;
	case FIG_SANITIZER: judge_sanitizer(j, h, program, problem, metric + 10); break;
	case FIG_PTXAS: judge_ptxas(j, h, program, metric + 6); break;
	case FIG_SPEEDUP: judge_speedup(j, h, program, problem); break;
	case FIG_RESULT: judge_result_metric(j, h, program, problem, metric); break;
	}
}

void gates_measure(const cJSON *h, const char *program, const char *problem, const char *metric,
		   struct gate_figure *f)
{
	struct judged j;

	memset(&j, 0, sizeof(j));
	strbuf_init(&j.why, 0);
	strbuf_init(&j.arch, 0);
	if (program && metric)
		measure(&j, h, program, problem, metric);
	else
		strbuf_addstr(&j.why, "no program or metric named");
	f->value = j.value;
	f->has_value = j.has_value;
	f->unit = j.unit;
	f->step = j.step;
	strbuf_add(&f->why, j.why.buf, j.why.len);
	strbuf_release(&j.why);
	strbuf_release(&j.arch);
}

/* ---------------------------------------------------------------- pools */

/* Where gates are judged. A run --spread deals a pool's units over its
 * hosts, so a host holds only its share: a gate x problem whose rows one
 * host holds is judged on that host, as without --spread; one whose rows
 * ran on other hosts of the pool (a problem the host did not run, a
 * speedup whose baseline ran elsewhere) is judged once for the pool, on
 * every step of its hosts (sweep_pool_host), naming the rows it read. */
struct gate_scope {
	const cJSON *hosts;     /* NULL: one host */
	const char *pool;
};

/* h ran a step of program (for problem, when given); for speedup a
 * baseline benchmark of the problem too; for ptxas.* it built program. A
 * sweep's variants are not the program's rows: a gate reads neither its
 * steps nor its variant builds (judge_ptxas, rr_measure), so a host dealt
 * only variants does not hold the gate */
static int host_holds(const cJSON *h, const char *program, const char *problem, const char *metric)
{
	const cJSON *s;
	int kernel = 0, base = 0;
	if (metric && !strncmp(metric, "ptxas.", 6)) {
		FOR_EACH_OBJ(s, get(h, "builds"))
			kernel |= rr_streq(rr_str(s, "program"), program) && !get(s, "variant");
		return kernel;
	}
	FOR_EACH_OBJ(s, steps_of(h)) {
		if ((problem && !rr_streq(rr_str(s, "problem"), problem)) || rr_is_kind(s, STEP_SWEEP))
			continue;
		kernel |= rr_streq(rr_str(s, "program"), program);
		base |= rr_is_kind(s, STEP_BENCHMARK) && rr_streq(rr_str(s, "role"), "baseline");
	}
	return kernel && (!metric || strcmp(metric, "speedup") || base);
}

/* Whether gate x problem is judged in scope sc on h: on a host, unless it
 * is a spread host without the rows; for a pool, when no host of it holds
 * them */
static int judged_here(const struct gate_scope *sc, const cJSON *h, const char *program,
		       const char *problem, const char *metric)
{
	const cJSON *x;
	if (!sc->pool)
		return !rr_str(get(h, "spread"), "pool") || host_holds(h, program, problem, metric);
	FOR_EACH_OBJ(x, sc->hosts)
		if (rr_streq(rr_str(get(x, "spread"), "pool"), sc->pool) &&
		    host_holds(x, program, problem, metric))
			return 0;
	return 1;
}

/* A pool gate's row: the host of the pool that ran step (by its id: a
 * spread unit runs on one host), the step and its GPUs */
static void add_row(cJSON *rows, const struct gate_scope *sc, const cJSON *step)
{
	const cJSON *h, *s;
	const char *id = rr_str(step, "id");
	cJSON *row;
	if (!id)
		return;
	FOR_EACH_OBJ(h, sc->hosts) {
		if (!rr_streq(rr_str(get(h, "spread"), "pool"), sc->pool))
			continue;
		FOR_EACH_OBJ(s, steps_of(h)) {
			if (!rr_streq(rr_str(s, "id"), id))
				continue;
			row = cJSON_CreateObject();
			json_add_str(row, "host", rr_str(h, "name"));
			json_add_str(row, "step", id);
			if (get(s, "gpus"))
				cJSON_AddItemToObject(row, "gpus", cJSON_Duplicate(get(s, "gpus"), 1));
			cJSON_AddItemToArray(rows, row);
			return;
		}
	}
}

static cJSON *judge_one(const cJSON *g, const cJSON *h, const char *problem, int *nfailed,
			const struct gate_scope *sc)
{
	const char *program = rr_str(g, "program"), *metric = rr_str(g, "metric");
	const char *op = rr_str(g, "op"), *gpu = rr_str(g, "gpu");
	const char *host_gpu = rr_str(get(h, "info"), "gpu_name");
	cJSON *r = cJSON_CreateObject();
	struct judged j;
	double threshold = 0;
	int holds = 0;
	enum gate_verdict verdict = VERDICT_FAIL;

	memset(&j, 0, sizeof(j));
	strbuf_init(&j.why, 0);
	strbuf_init(&j.arch, 0);
	json_add_str(r, "name", rr_str(g, "name"));
	json_add_str(r, "program", program);
	json_add_str(r, "problem", problem);
	json_add_str(r, "gpu", gpu);
	json_add_str(r, "metric", metric);
	json_add_str(r, "op", op);
	if (!program || !metric || !op || !rr_num(g, "value", &threshold)) {
		strbuf_addstr(&j.why, "the gate lacks program, metric, op or value");
	} else if (gpu && !str_contains_ci(host_gpu, gpu)) {
		verdict = VERDICT_NA;
		if (host_gpu)
			strbuf_addf(&j.why, "the GPU (%s) is not '%s'", host_gpu, gpu);
		else
			strbuf_addf(&j.why, "this host has no '%s' GPU (none detected)", gpu);
	} else {
		measure(&j, h, program, problem, metric);
		if (j.has_value && metric_op_holds(op, j.value, threshold, &holds) && holds) {
			verdict = VERDICT_PASS;
		} else if (j.has_value) {
			strbuf_addf(&j.why, "measured %.6g%s%s, needs %s %.6g", j.value,
				    j.unit ? " " : "", j.unit ? j.unit : "", op, threshold);
		} else {
			/* a figure that was not measured fails the gate, saying why */
			char *why = strbuf_detach(&j.why, NULL);
			strbuf_addf(&j.why, "not measured: %s", *why ? why : "no value recorded");
			free(why);
		}
	}
	json_add_num(r, "threshold", threshold);
	if (j.has_value)
		json_add_num(r, "measured", j.value);
	else
		cJSON_AddNullToObject(r, "measured");
	json_add_str(r, "unit", j.unit);
	json_add_str(r, "verdict", gate_verdict_name(verdict));
	json_add_str(r, "reason", verdict == VERDICT_PASS ? NULL : j.why.buf);
	json_add_str(r, "step", rr_str(j.step, "id"));
	json_add_str(r, "arch", j.arch.len ? j.arch.buf : rr_str(j.step, "arch"));
	if (sc && sc->pool) {
		cJSON *rows = json_add_arr(r, "rows");
		if (j.step)
			add_row(rows, sc, j.step);
		if (j.base)
			add_row(rows, sc, j.base);
	}
	if (verdict == VERDICT_FAIL && nfailed)
		(*nfailed)++;
	strbuf_release(&j.why);
	strbuf_release(&j.arch);
	return r;
}

/* 1 when metric is NAME[*]: every kernel's figure NAME (docs/byo.md) */
static int every_kernel(const char *metric)
{
	size_t n = metric ? strlen(metric) : 0;
	return n > 3 && !strcmp(metric + n - 3, "[*]");
}

/* A gate on NAME[*]: judged on each NAME[KERNEL] the program's steps for the
 * problem recorded, in the order they first appear; on NAME[*] itself (not
 * measured, saying why) when there is none. */
static void judge_every_kernel(cJSON *out, const cJSON *g, const cJSON *h, const char *problem,
			       int *nfailed, const struct gate_scope *sc)
{
	const char *program = rr_str(g, "program"), *metric = rr_str(g, "metric");
	size_t n = strlen(metric) - 3;
	cJSON *seen = cJSON_CreateObject();
	const cJSON *s, *f;
	FOR_EACH_OBJ(s, steps_of(h)) {
		if (!rr_streq(rr_str(s, "program"), program) ||
		    (problem && !rr_streq(rr_str(s, "problem"), problem)))
			continue;
		FOR_EACH_OBJ(f, get(get(s, "result"), "figures")) {
			const char *fig = rr_str(f, "figure"), *k = rr_str(f, "kernel");
			cJSON *one;
			if (!fig || !k || strlen(fig) != n || strncmp(fig, metric, n) ||
			    get(seen, f->string))
				continue;
			cJSON_AddTrueToObject(seen, f->string);
			one = cJSON_Duplicate(g, 1);
			cJSON_ReplaceItemInObjectCaseSensitive(one, "metric",
							       cJSON_CreateString(f->string));
			cJSON_AddItemToArray(out, judge_one(one, h, problem, nfailed, sc));
			cJSON_Delete(one);
		}
	}
	if (!seen->child)
		cJSON_AddItemToArray(out, judge_one(g, h, problem, nfailed, sc));
	cJSON_Delete(seen);
}

/* gate g on problem (NULL: none) of h, when it is judged in scope sc */
static void judge_gate(cJSON *out, const cJSON *g, const cJSON *h, const char *problem, int *nfailed,
		       const struct gate_scope *sc)
{
	const char *metric = rr_str(g, "metric");
	if (!judged_here(sc, h, rr_str(g, "program"), problem, metric))
		return;
	if (every_kernel(metric))
		judge_every_kernel(out, g, h, problem, nfailed, sc);
	else
		cJSON_AddItemToArray(out, judge_one(g, h, problem, nfailed, sc));
}

static cJSON *evaluate(const cJSON *gates, const cJSON *h, int *nfailed, const struct gate_scope *sc)
{
	cJSON *out = cJSON_CreateArray();
	const cJSON *g, *s;
	if (nfailed)
		*nfailed = 0;
	FOR_EACH_OBJ(g, gates) {
		const char *program = rr_str(g, "program"), *metric = rr_str(g, "metric");
		const char *problems[MAX_PROBLEMS];
		int n = 0, i;
		if (rr_str(g, "problem") || (metric && !strncmp(metric, "ptxas.", 6))) {
			judge_gate(out, g, h, rr_str(g, "problem"), nfailed, sc);
			continue;
		}
		/* every problem this program ran (or was planned for) on the host
		 * with a step of the kind that measures the metric: a profile
		 * gate is judged where a profile step ran, not on every problem */
		FOR_EACH_OBJ(s, steps_of(h)) {
			const char *p = rr_str(s, "problem");
			enum step_kind kind = !metric ? STEP_ANY
				: !strncmp(metric, "profile.", 8) ? STEP_PROFILE
				: !strncmp(metric, "sanitizer.", 10) ? STEP_SANITIZE
				: metric_is_kernel(metric) ? STEP_KERNEL_TIMING : STEP_ANY;
			if (!p || !rr_streq(rr_str(s, "program"), program) || rr_is_kind(s, STEP_SWEEP))
				continue;
			if (kind != STEP_ANY && !rr_is_kind(s, kind))
				continue;
			for (i = 0; i < n && strcmp(problems[i], p); i++)
				;
			if (i == n && n < MAX_PROBLEMS)
				problems[n++] = p;
		}
		if (!n)
			judge_gate(out, g, h, NULL, nfailed, sc);
		for (i = 0; i < n; i++)
			judge_gate(out, g, h, problems[i], nfailed, sc);
	}
	return out;
}

cJSON *gates_evaluate_host(const cJSON *gates, const cJSON *h, int *nfailed)
{
	struct gate_scope one = { NULL, NULL };
	return evaluate(gates, h, nfailed, &one);
}

cJSON *gates_evaluate_pools(const cJSON *gates, const cJSON *hosts, int *nfailed)
{
	cJSON *out = cJSON_CreateArray();
	const cJSON *h, *p;
	int nf = 0;
	if (nfailed)
		*nfailed = 0;
	FOR_EACH_OBJ(h, hosts) {
		struct gate_scope sc = { hosts, rr_str(get(h, "spread"), "pool") };
		cJSON *ph, *res, *e;
		int seen = 0;
		if (!sc.pool)
			continue;
		FOR_EACH_OBJ(p, out)
			seen |= rr_streq(rr_str(p, "pool"), sc.pool);
		if (seen)
			continue;
		/* the pool's steps as one host's, with its first host's probe
		 * (one GPU model: a gate's "gpu" reads its name) */
		ph = sweep_pool_host(hosts, sc.pool);
		if (get(h, "info"))
			cJSON_AddItemReferenceToObject(ph, "info", (cJSON *)get(h, "info"));
		res = evaluate(gates, ph, &nf, &sc);
		if (nfailed)
			*nfailed += nf;
		if (!cJSON_GetArraySize(res)) {
			cJSON_Delete(res);
			cJSON_Delete(ph);
			continue;
		}
		e = cJSON_CreateObject();
		json_add_str(e, "pool", sc.pool);
		cJSON_AddItemToObject(e, "hosts", cJSON_Duplicate(get(ph, "pool_hosts"), 1));
		cJSON_AddItemToObject(e, "gates", res);
		cJSON_AddItemToArray(out, e);
		cJSON_Delete(ph);
	}
	return out;
}

void gates_describe(const cJSON *g, struct strbuf *sb)
{
	const char *v = rr_str(g, "verdict");
	double m, t = 0;
	strbuf_addf(sb, "%s ", gate_verdict_is(v, VERDICT_PASS) ? "✅"
			       : gate_verdict_is(v, VERDICT_NA) ? "➖" : "❌");
	if (rr_str(g, "name"))
		strbuf_addf(sb, "%s (", rr_str(g, "name"));
	rr_num(g, "threshold", &t);
	strbuf_addf(sb, "%s %s %.6g", rr_str(g, "metric") ? rr_str(g, "metric") : "?",
		    rr_str(g, "op") ? rr_str(g, "op") : "?", t);
	if (rr_str(g, "name"))
		strbuf_addch(sb, ')');
	strbuf_addf(sb, " [%s%s%s]", rr_str(g, "program") ? rr_str(g, "program") : "?",
		    rr_str(g, "problem") ? ", " : "", rr_str(g, "problem") ? rr_str(g, "problem") : "");
	if (gate_verdict_is(v, VERDICT_PASS) && rr_num(g, "measured", &m))
		strbuf_addf(sb, ": measured %.6g%s%s", m, rr_str(g, "unit") ? " " : "",
			    rr_str(g, "unit") ? rr_str(g, "unit") : "");
	else if (rr_str(g, "reason"))
		strbuf_addf(sb, ": %s", rr_str(g, "reason"));
}

/* ---------------------------------------------------------------- sweeps */

struct variant_row {
	const char *label;
	const cJSON *check, *bench, *build;
	double median;
	int ranked;
	double *samples;          /* the benchmark's stored samples (store/samples.h) */
	int nsamples;
	struct stats_cmp vs;      /* against the winner (ranked rows after the first) */
	double factor;            /* the rule's factor against the winner */
};

/* the GPU a benchmark step ran on (its slot's uuid: a host of many GPUs,
 * --spread), NULL when the record does not say */
static const char *row_gpu(const struct variant_row *r)
{
	return r->bench ? rr_str(cJSON_GetArrayItem(get(r->bench, "gpus"), 0), "uuid") : NULL;
}

/* compare's factor between two rows: beyond STATS_DEFAULT_FACTOR on one
 * GPU, beyond STATS_INSTANCE_FACTOR when they ran on two GPU instances */
static double rows_factor(const struct variant_row *a, const struct variant_row *b)
{
	const char *ga = row_gpu(a), *gb = row_gpu(b);
	return ga && gb && strcmp(ga, gb) ? STATS_INSTANCE_FACTOR : STATS_DEFAULT_FACTOR;
}

/* the kept samples of a benchmark step's result, into r */
static void take_samples(struct variant_row *r)
{
	struct samples s;
	if (samples_read_timing(json_path(get(r->bench, "result"), "timing"), &s, NULL) <= 0)
		return;
	r->samples = s.v;
	r->nsamples = s.n;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct variant_row *x = a, *y = b;
	if (x->ranked != y->ranked)
		return y->ranked - x->ranked;
	if (x->ranked && x->median != y->median)
		return x->median < y->median ? -1 : 1;
	return 0;   /* ties keep spec order: the caller sorts stably */
}

/* One ptxas entry's identity: kernel name and every resource. */
static void entry_key(struct strbuf *sb, const cJSON *k)
{
	static const char *const nums[] = { "registers", "smem_bytes", "stack_bytes",
					    "spill_store_bytes", "spill_load_bytes", "barriers", NULL };
	double v;
	int i;
	strbuf_reset(sb);
	strbuf_addstr(sb, rr_str(k, "kernel") ? rr_str(k, "kernel") : "");
	for (i = 0; nums[i]; i++) {
		if (rr_num(k, nums[i], &v))
			strbuf_addf(sb, "|%.17g", v);
		else
			strbuf_addstr(sb, "|-");
	}
}

static int build_has_entry(const cJSON *b, const char *key, struct strbuf *tmp)
{
	const cJSON *k;
	FOR_EACH_OBJ(k, get(b, "resources")) {
		entry_key(tmp, k);
		if (!strcmp(tmp->buf, key))
			return 1;
	}
	return 0;
}

void sweep_variant_resources(const cJSON *h, const char *program, const char *variant,
			     const char *problem, cJSON *o)
{
	static const char *const keys[] = { "registers", "spill_store_bytes", "spill_load_bytes",
					    "smem_bytes", NULL };
	const cJSON *b, *build = NULL, *k, *s;
	struct strbuf key = STRBUF_INIT, tmp = STRBUF_INIT;
	double best[4] = { 0, 0, 0, 0 }, reg_min = 0, v, dyn = 0;
	int have[4] = { 0, 0, 0, 0 }, nvar = 0, nk = 0, i, have_dyn = 0;

	FOR_EACH_OBJ(b, get(h, "builds"))
		if (rr_streq(rr_str(b, "program"), program) && rr_streq(rr_str(b, "variant"), variant) &&
		    (!build || (!cJSON_GetArraySize(get(build, "resources")) &&
				cJSON_GetArraySize(get(b, "resources")))))
			build = b;
	FOR_EACH_OBJ(b, get(h, "builds"))
		nvar += build && rr_streq(rr_str(b, "program"), program) && rr_str(b, "variant") &&
			rr_streq(rr_str(b, "arch"), rr_str(build, "arch")) &&
			cJSON_GetArraySize(get(b, "resources"));
	FOR_EACH_OBJ(k, get(build, "resources")) {
		int everywhere = nvar > 1;
		if (cJSON_IsFalse(get(k, "entry")))
			continue;
		/* a kernel the same in every variant's build (the harness's, a
		 * reference) is not what the sweep varies */
		entry_key(&key, k);
		FOR_EACH_OBJ(b, get(h, "builds"))
			if (everywhere && b != build && rr_streq(rr_str(b, "program"), program) &&
			    rr_str(b, "variant") && rr_streq(rr_str(b, "arch"), rr_str(build, "arch")) &&
			    cJSON_GetArraySize(get(b, "resources")) && !build_has_entry(b, key.buf, &tmp))
				everywhere = 0;
		if (everywhere)
			continue;
		nk++;
		for (i = 0; keys[i]; i++)
			if (rr_num(k, keys[i], &v)) {
				if (!have[i] || v > best[i])
					best[i] = v;
				if (i == 0 && (!have[i] || v < reg_min))
					reg_min = v;
				have[i] = 1;
			}
	}
	for (i = 0; keys[i]; i++) {
		if (have[i])
			json_add_num(o, keys[i], best[i]);
		else
			cJSON_AddNullToObject(o, keys[i]);
	}
	if (have[0])
		json_add_num(o, "registers_min", reg_min);
	else
		cJSON_AddNullToObject(o, "registers_min");
	json_add_num(o, "kernels", nk);
	/* dynamic shared memory: set at launch, so only the program's result knows it */
	FOR_EACH_OBJ(s, steps_of(h))
		if (rr_is_kind(s, STEP_SWEEP) && rr_streq(rr_str(s, "program"), program) &&
		    rr_streq(rr_str(s, "variant"), variant) && (!problem || rr_streq(rr_str(s, "problem"), problem)) &&
		    rr_num(get(s, "result"), "config.smem_bytes", &v) && (!have_dyn || v > dyn)) {
			dyn = v;
			have_dyn = 1;
		}
	if (have_dyn)
		json_add_num(o, "dynamic_smem_bytes", dyn);
	else
		cJSON_AddNullToObject(o, "dynamic_smem_bytes");
	strbuf_release(&key);
	strbuf_release(&tmp);
}

static void not_ranked_reason(struct strbuf *sb, const struct variant_row *r)
{
	const cJSON *s = NULL;
	const char *what = NULL;
	if (r->build && !item_status_is(rr_str(r->build, "status"), ST_PASS)) {
		strbuf_addf(sb, "build %s", rr_str(r->build, "status") ? rr_str(r->build, "status") : "?");
		if (rr_str(r->build, "reason"))
			strbuf_addf(sb, ": %s", rr_str(r->build, "reason"));
		return;
	}
	if (r->check && !item_status_is(rr_str(r->check, "status"), ST_PASS)) {
		s = r->check;
		what = "correctness";
	} else if (!r->bench) {
		strbuf_addstr(sb, "no benchmark ran");
		return;
	} else if (!item_status_is(rr_str(r->bench, "status"), ST_PASS)) {
		s = r->bench;
		what = "benchmark";
	} else {
		strbuf_addstr(sb, "the benchmark reported no median");
		return;
	}
	strbuf_addf(sb, "%s %s", what, rr_str(s, "status") ? rr_str(s, "status") : "?");
	if (rr_str(s, "reason"))
		strbuf_addf(sb, ": %s", rr_str(s, "reason"));
}

/* A variant's entry of a sweep's "variants": rank (0: not ranked), first:
 * it is the winner's row */
static cJSON *variant_json(const cJSON *h, const char *program, const char *problem,
			   const struct variant_row *r, int rank, int first, double best)
{
	cJSON *v = cJSON_CreateObject();
	json_add_str(v, "variant", r->label);
	if (r->ranked) {
		json_add_num(v, "rank", rank);
		json_add_num(v, "median_us", r->median);
		json_add_num(v, "relative", r->median / best);
		json_add_bool(v, "ranked", 1);
		cJSON_AddNullToObject(v, "reason");
		if (!first) {
			json_add_str(v, "vs_winner", stats_verdict_name(r->vs.verdict));
			json_add_num(v, "factor_vs_winner", r->factor);
			if (isnan(r->vs.p))
				cJSON_AddNullToObject(v, "p_vs_winner");
			else
				json_add_num(v, "p_vs_winner", r->vs.p);
		} else {
			cJSON_AddNullToObject(v, "vs_winner");
			cJSON_AddNullToObject(v, "p_vs_winner");
		}
	} else {
		struct strbuf why = STRBUF_INIT;
		double m;
		cJSON_AddNullToObject(v, "rank");
		if (r->bench && rr_num(get(r->bench, "result"), METRIC_MEDIAN_PATH, &m))
			json_add_num(v, "median_us", m);
		else
			cJSON_AddNullToObject(v, "median_us");
		cJSON_AddNullToObject(v, "relative");
		json_add_bool(v, "ranked", 0);
		not_ranked_reason(&why, r);
		json_add_str(v, "reason", why.buf);
		strbuf_release(&why);
	}
	json_add_str(v, "check_status", r->check ? rr_str(r->check, "status") : NULL);
	json_add_str(v, "bench_status", r->bench ? rr_str(r->bench, "status") : NULL);
	json_add_str(v, "build_status", r->build ? rr_str(r->build, "status") : NULL);
	json_add_str(v, "gpu_uuid", row_gpu(r));
	sweep_variant_resources(h, program, r->label, problem, v);
	return v;
}

static cJSON *rank_one(const cJSON *h, const char *program, const char *problem)
{
	struct variant_row *rows = NULL;
	int n = 0, alloc = 0, i, rank = 0;
	const cJSON *s, *b;
	cJSON *out = cJSON_CreateObject(), *vars;
	double best = 0;

	FOR_EACH_OBJ(s, steps_of(h)) {
		const char *label = rr_str(s, "variant");
		if (!rr_is_kind(s, STEP_SWEEP) || !rr_streq(rr_str(s, "program"), program) ||
		    !rr_streq(rr_str(s, "problem"), problem) || !label)
			continue;
		for (i = 0; i < n && strcmp(rows[i].label, label); i++)
			;
		if (i == n) {
			if (n == alloc) {
				alloc = alloc ? 2 * alloc : 16;
				rows = xrealloc(rows, sizeof(*rows) * (size_t)alloc);
			}
			memset(&rows[n], 0, sizeof(rows[n]));
			rows[n++].label = label;
			FOR_EACH_OBJ(b, get(h, "builds"))
				if (rr_streq(rr_str(b, "program"), program) &&
				    rr_streq(rr_str(b, "variant"), label) &&
				    rr_streq(rr_str(b, "arch"), rr_str(s, "arch")))
					rows[i].build = b;
		}
		if (rr_streq(rr_str(s, "mode"), "check"))
			rows[i].check = s;
		else
			rows[i].bench = s;
	}
	for (i = 0; i < n; i++) {
		struct variant_row *r = &rows[i];
		r->ranked = r->bench && item_status_is(rr_str(r->bench, "status"), ST_PASS) &&
			    (!r->check || item_status_is(rr_str(r->check, "status"), ST_PASS)) &&
			    (!r->build || item_status_is(rr_str(r->build, "status"), ST_PASS)) &&
			    rr_num(get(r->bench, "result"), METRIC_MEDIAN_PATH, &r->median) &&
			    r->median > 0;
	}
	/* a stable sort by (ranked first, median): insertion sort keeps spec order on ties */
	for (i = 1; i < n; i++) {
		struct variant_row t = rows[i];
		int j = i;
		while (j > 0 && cmp_rows(&rows[j - 1], &t) > 0) {
			rows[j] = rows[j - 1];
			j--;
		}
		rows[j] = t;
	}
	json_add_str(out, "program", program);
	json_add_str(out, "problem", problem);
	if (n && rows[0].ranked) {
		/* the lowest median wins; it is a clear winner only when every other
		 * ranked variant is slower by compare's rule (Mann-Whitney on the
		 * kept samples and the ratio of medians beyond the factor): a
		 * variant the rule cannot tell from it ties with it */
		int clear = 1;
		best = rows[0].median;
		for (i = 0; i < n; i++)
			if (rows[i].ranked)
				take_samples(&rows[i]);
		for (i = 1; i < n && rows[i].ranked; i++) {
			rows[i].factor = rows_factor(&rows[0], &rows[i]);
			stats_compare_medians(rows[0].samples, rows[0].nsamples, rows[i].samples,
					      rows[i].nsamples, rows[0].median, rows[i].median,
					      STATS_DEFAULT_ALPHA, rows[i].factor, &rows[i].vs);
			if (rows[i].vs.verdict != STATS_SLOWER)
				clear = 0;
		}
		json_add_str(out, "winner", rows[0].label);
		json_add_num(out, "winner_median_us", best);
		json_add_bool(out, "winner_clear", clear);
	} else {
		cJSON_AddNullToObject(out, "winner");
		cJSON_AddNullToObject(out, "winner_median_us");
		cJSON_AddNullToObject(out, "winner_clear");
	}
	vars = json_add_arr(out, "variants");
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(vars, variant_json(h, program, problem, &rows[i],
							rows[i].ranked ? ++rank : 0, i == 0, best));
	for (i = 0; i < n; i++)
		free(rows[i].samples);
	free(rows);
	return out;
}

void sweep_describe(const cJSON *sw, struct strbuf *sb)
{
	const char *w = rr_str(sw, "winner");
	const cJSON *v;
	int k = 0;

	strbuf_addf(sb, "sweep %s %s: ", rr_str(sw, "program") ? rr_str(sw, "program") : "?",
		    rr_str(sw, "problem") ? rr_str(sw, "problem") : "?");
	if (!w) {
		strbuf_addstr(sb, "no variant passed");
		return;
	}
	strbuf_addf(sb, "fastest correct variant %s", w);
	if (!cJSON_IsFalse(cJSON_GetObjectItem(sw, "winner_clear")))
		return;
	strbuf_addstr(sb, ", not a clear winner: ");
	FOR_EACH_OBJ(v, rr_arr(sw, "variants"))
		if (rr_str(v, "vs_winner") && !rr_streq(rr_str(v, "vs_winner"), "slower"))
			strbuf_addf(sb, "%s%s (%s)", k++ ? ", " : "", rr_str(v, "variant"), rr_str(v, "vs_winner"));
	strbuf_addstr(sb, " by compare's rule");
}

cJSON *sweep_rank_host(const cJSON *h)
{
	cJSON *out = cJSON_CreateArray();
	const cJSON *s, *t;
	FOR_EACH_OBJ(s, steps_of(h)) {
		int seen = 0;
		if (!rr_is_kind(s, STEP_SWEEP) || !rr_str(s, "program") || !rr_str(s, "problem"))
			continue;
		FOR_EACH_OBJ(t, out)
			if (rr_streq(rr_str(t, "program"), rr_str(s, "program")) &&
			    rr_streq(rr_str(t, "problem"), rr_str(s, "problem")))
				seen = 1;
		if (!seen)
			cJSON_AddItemToArray(out, rank_one(h, rr_str(s, "program"), rr_str(s, "problem")));
	}
	return out;
}

cJSON *sweep_pool_host(const cJSON *hosts, const char *pool)
{
	cJSON *ph = cJSON_CreateObject(), *steps, *builds, *names;
	const cJSON *h, *x;
	json_add_str(ph, "name", pool);
	steps = json_add_arr(ph, "steps");
	builds = json_add_arr(ph, "builds");
	names = json_add_arr(ph, "pool_hosts");
	FOR_EACH_OBJ(h, hosts) {
		if (!rr_streq(rr_str(get(h, "spread"), "pool"), pool))
			continue;
		cJSON_AddItemToArray(names, cJSON_CreateString(rr_str(h, "name") ? rr_str(h, "name") : "?"));
		FOR_EACH_OBJ(x, get(h, "steps"))
			cJSON_AddItemReferenceToArray(steps, (cJSON *)x);
		FOR_EACH_OBJ(x, get(h, "builds"))
			cJSON_AddItemReferenceToArray(builds, (cJSON *)x);
	}
	return ph;
}

cJSON *sweep_rank_pools(const cJSON *hosts)
{
	cJSON *out = cJSON_CreateArray();
	const cJSON *h, *p;
	FOR_EACH_OBJ(h, hosts) {
		const char *pool = rr_str(get(h, "spread"), "pool");
		int seen = 0;
		if (!pool)
			continue;
		FOR_EACH_OBJ(p, out)
			seen |= rr_streq(rr_str(p, "pool"), pool);
		if (!seen) {
			cJSON *ph = sweep_pool_host(hosts, pool), *e = cJSON_CreateObject();
			cJSON *sweeps = sweep_rank_host(ph);
			json_add_str(e, "pool", pool);
			cJSON_AddItemToObject(e, "hosts", cJSON_Duplicate(get(ph, "pool_hosts"), 1));
			if (cJSON_GetArraySize(sweeps))
				cJSON_AddItemToObject(e, "sweeps", sweeps);
			else
				cJSON_Delete(sweeps);
			cJSON_Delete(ph);
			if (get(e, "sweeps"))
				cJSON_AddItemToArray(out, e);
			else
				cJSON_Delete(e);
		}
	}
	return out;
}
