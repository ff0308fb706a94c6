/* report.c -- the Markdown phase report of a run, rendered from run.json alone.
 *
 * DESIGN
 *   report_render() is a pure function of the record (docs/run-record.md,
 *   docs/report.md): no clock, no file system, no environment. Every value
 *   is read through the typed getters below, so a record with missing or
 *   wrong-typed fields renders "—" where the value would be, never crashes.
 *   Text that came from the record goes through md_cell()/md_code() before
 *   it reaches the page (table pipes, newlines, HTML, length).
 *
 *   Expectations are judged once (judge_all) into an array of verdicts that
 *   the at-a-glance counts, the expectations section and the headline share.
 *
 *   Sections, in order: title + outcome line (and a loud notice for a run
 *   that did not finish), gates at a glance, at a glance, configuration,
 *   results per host and problem, sweeps, profiles, sanitizers, ptxas
 *   resources, expectations, steps, provenance. Gates and sweep rankings
 *   come from gates.c (stored in the record by the run; judged here only
 *   for a record that has none).
 */
#include "report.h"
#include "fsutil.h"
#include "gates.h"
#include "jsonutil.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "banned.h"

#define DASH "—"
#define MAX_PROBLEMS 256        /* problems listed per host */
#define CELL_MAX 240            /* characters of free text in a table cell */

/* ==== typed access: wrong types read as absent ==== */

static const cJSON *obj(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
	return cJSON_IsObject(v) ? v : NULL;
}

static const cJSON *arr(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
	return cJSON_IsArray(v) ? v : NULL;
}

static const char *str(const cJSON *o, const char *key)
{
	return cJSON_IsObject(o) ? json_str(o, key) : NULL;
}

/* A finite number at key (dotted path allowed). */
static int num(const cJSON *o, const char *path, double *v)
{
	const cJSON *j = cJSON_IsObject(o) ? json_path(o, path) : NULL;
	if (!cJSON_IsNumber(j) || !isfinite(j->valuedouble))
		return 0;
	*v = j->valuedouble;
	return 1;
}

static int is_true(const cJSON *o, const char *path)
{
	return cJSON_IsTrue(cJSON_IsObject(o) ? json_path(o, path) : NULL);
}

/* Iterate the objects of an array, skipping elements of any other type. */
#define FOR_EACH_OBJ(x, a) cJSON_ArrayForEach(x, a) if (!cJSON_IsObject(x)) {} else

static int streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* ==== Markdown text ==== */

/* Free text for a table cell or a line: one line, pipes escaped, no HTML. */
static void md_cell_n(struct strbuf *md, const char *s, size_t max)
{
	size_t n = 0;
	if (!s || !*s) {
		strbuf_addstr(md, DASH);
		return;
	}
	for (; *s && n < max; s++, n++) {
		unsigned char c = (unsigned char)*s;
		if (c == '|')
			strbuf_addstr(md, "\\|");
		else if (c == '<' && (isalpha((unsigned char)s[1]) || s[1] == '/' || s[1] == '!' ||
				      s[1] == '?'))
			strbuf_addstr(md, "&lt;");   /* could open an HTML tag */
		else if (c == '\n' || c == '\r' || c == '\t')
			strbuf_addch(md, ' ');
		else if (c < 0x20)
			;
		else
			strbuf_addch(md, c);
	}
	if (*s) {
		/* do not cut a UTF-8 sequence in half */
		while (md->len && ((unsigned char)md->buf[md->len - 1] & 0xC0) == 0x80)
			strbuf_setlen(md, md->len - 1);
		if (md->len && ((unsigned char)md->buf[md->len - 1] & 0xC0) == 0xC0)
			strbuf_setlen(md, md->len - 1);
		strbuf_addstr(md, "…");
	}
}

static void md_cell(struct strbuf *md, const char *s)
{
	md_cell_n(md, s, CELL_MAX);
}

/* A name in a code span; pipes escaped (GitHub tables honour \| in code). */
static void md_code(struct strbuf *md, const char *s)
{
	const char *p;
	if (!s || !*s) {
		strbuf_addstr(md, DASH);
		return;
	}
	strbuf_addstr(md, strchr(s, '`') ? "`` " : "`");
	for (p = s; *p && p - s < CELL_MAX; p++) {
		if (*p == '|')
			strbuf_addstr(md, "\\|");
		else if (*p == '\n' || *p == '\r')
			strbuf_addch(md, ' ');
		else
			strbuf_addch(md, *p);
	}
	strbuf_addstr(md, strchr(s, '`') ? " ``" : "`");
}

/* ==== numbers ==== */

/* Microseconds: 41.30, 110.1, 0.810 (three or four significant digits). */
static void fmt_us(struct strbuf *sb, double v)
{
	double a = fabs(v);
	if (a >= 1e9)
		strbuf_addf(sb, "%.3g", v);
	else if (a >= 1000)
		strbuf_addf(sb, "%.0f", v);
	else if (a >= 100)
		strbuf_addf(sb, "%.1f", v);
	else if (a >= 1)
		strbuf_addf(sb, "%.2f", v);
	else
		strbuf_addf(sb, "%.3f", v);
}

static void fmt_tflops(struct strbuf *sb, double v)
{
	double a = fabs(v);
	if (a >= 1e9)
		strbuf_addf(sb, "%.3g", v);
	else if (a >= 10 || a == 0)
		strbuf_addf(sb, "%.1f", v);
	else if (a >= 1)
		strbuf_addf(sb, "%.2f", v);
	else
		strbuf_addf(sb, "%.3f", v);
}

static void fmt_gbps(struct strbuf *sb, double v)
{
	double a = fabs(v);
	if (a >= 1e9)
		strbuf_addf(sb, "%.3g", v);
	else if (a >= 100)
		strbuf_addf(sb, "%.0f", v);
	else
		strbuf_addf(sb, "%.1f", v);
}

/* Errors and other small quantities. */
static void fmt_g(struct strbuf *sb, double v)
{
	strbuf_addf(sb, "%.3g", v);
}

static void fmt_ratio(struct strbuf *sb, double v)
{
	if (fabs(v) >= 1e6)
		strbuf_addf(sb, "%.3g×", v);
	else if (fabs(v) >= 100)
		strbuf_addf(sb, "%.0f×", v);
	else
		strbuf_addf(sb, "%.2f×", v);
}

static void fmt_secs(struct strbuf *sb, double v)
{
	if (v >= 3600)
		strbuf_addf(sb, "%dh%02dm", (int)(v / 3600), (int)fmod(v / 60, 60));
	else if (v >= 60)
		strbuf_addf(sb, "%dm%02ds", (int)(v / 60), (int)fmod(v, 60));
	else
		strbuf_addf(sb, "%.1f s", v);
}

static void fmt_bytes(struct strbuf *sb, double v)
{
	if (v < 1024)
		strbuf_addf(sb, "%.0f B", v);
	else if (v < 1024.0 * 1024)
		strbuf_addf(sb, "%.1f KiB", v / 1024);
	else if (v < 1024.0 * 1024 * 1024)
		strbuf_addf(sb, "%.1f MiB", v / (1024.0 * 1024));
	else
		strbuf_addf(sb, "%.2f GiB", v / (1024.0 * 1024 * 1024));
}

/* A number at path formatted by fn, or "—". */
static void cell_num(struct strbuf *md, const cJSON *o, const char *path,
		     void (*fn)(struct strbuf *, double))
{
	double v;
	if (num(o, path, &v))
		fn(md, v);
	else
		strbuf_addstr(md, DASH);
}

static void fmt_int(struct strbuf *sb, double v)
{
	if (fabs(v) < 1e15)
		strbuf_addf(sb, "%.0f", v);
	else
		strbuf_addf(sb, "%.3g", v);
}

/* "2026-11-22T05:10:00Z" -> "2026-11-22 05:10:00 UTC" */
static void fmt_time(struct strbuf *md, const char *iso)
{
	if (iso && strlen(iso) == 20 && iso[10] == 'T' && iso[19] == 'Z')
		strbuf_addf(md, "%.10s %.8s UTC", iso, iso + 11);
	else
		md_cell(md, iso);
}

/* A spec value (number or string) as text. */
static void fmt_value(struct strbuf *sb, const cJSON *v)
{
	if (cJSON_IsNumber(v))
		strbuf_addf(sb, "%.6g", v->valuedouble);
	else if (cJSON_IsString(v))
		md_cell(sb, v->valuestring);
	else if (cJSON_IsBool(v))
		strbuf_addstr(sb, cJSON_IsTrue(v) ? "true" : "false");
	else
		strbuf_addstr(sb, DASH);
}

/* ==== statuses ==== */

static const char *step_icon(const char *st)
{
	if (streq(st, "PASS"))
		return "✅";
	if (streq(st, "FAIL") || streq(st, "KILLED"))
		return "❌";
	if (streq(st, "TIMEOUT"))
		return "⏱️";
	if (streq(st, "SKIPPED"))
		return "⏭️";
	if (streq(st, "INFRA_ERROR"))
		return "⚠️";
	return "❔";
}

static void cell_status(struct strbuf *md, const char *st)
{
	strbuf_addf(md, "%s ", step_icon(st));
	md_cell_n(md, st ? st : "unknown", 20);
}

static int host_finished(const char *st)
{
	return streq(st, "ok") || streq(st, "failed") || streq(st, "unreachable") ||
	       streq(st, "skipped");
}

static void cell_host_status(struct strbuf *md, const cJSON *h)
{
	const char *st = str(h, "status");
	if (streq(st, "ok"))
		strbuf_addstr(md, "✅ ok");
	else if (streq(st, "failed") || streq(st, "unreachable"))
		strbuf_addf(md, "❌ %s", st);
	else if (streq(st, "skipped"))
		strbuf_addstr(md, "⏭️ skipped");
	else {
		strbuf_addstr(md, "⚠️ did not finish (");
		md_cell_n(md, st ? st : "no status", 20);
		strbuf_addch(md, ')');
	}
}

/* ==== the run's parts ==== */

struct verdict {
	const cJSON *exp;
	const cJSON *host;
	const char *problem;     /* NULL: no problem applies */
	enum { V_MET, V_MISSED, V_NOT_MEASURED, V_NOT_APPLICABLE } kind;
	double value;
	int has_value;
	const cJSON *step;
	struct strbuf why;
};

struct ctx {
	const cJSON *run, *exp, *spec, *hosts, *expected, *references, *baselines;
	struct strbuf *md;
	struct strbuf scratch;   /* text collected for later in a section */
	struct verdict *v;
	int nv, av;
};

static const char *host_name(const cJSON *h)
{
	const char *n = str(h, "name");
	return n ? n : "?";
}

static const char *gpu_name(const cJSON *h)
{
	return str(obj(h, "info"), "gpu_name");
}

static const cJSON *result_of(const cJSON *step)
{
	return obj(step, "result");
}

/* The first step on host h that matches (NULL fields match anything). */
static const cJSON *find_step(const cJSON *h, const char *kind, const char *program,
			      const char *problem, const char *role)
{
	const cJSON *s;
	FOR_EACH_OBJ(s, arr(h, "steps")) {
		if (kind && !streq(str(s, "kind"), kind))
			continue;
		if (program && !streq(str(s, "program"), program))
			continue;
		if (problem && !streq(str(s, "problem"), problem))
			continue;
		if (role && !streq(str(s, "role") ? str(s, "role") : "kernel", role))
			continue;
		return s;
	}
	return NULL;
}

static int is_baseline(const cJSON *step)
{
	return streq(str(step, "role"), "baseline");
}

/* Distinct problem names: the spec's, then any others the host ran. */
static int problem_list(const struct ctx *c, const cJSON *h, const char **out, int max)
{
	const cJSON *p, *s;
	int n = 0, i;
	FOR_EACH_OBJ(p, arr(c->spec, "problems")) {
		const char *name = str(p, "name");
		if (name && n < max) {
			for (i = 0; i < n && strcmp(out[i], name); i++)
				;
			if (i == n)
				out[n++] = name;
		}
	}
	FOR_EACH_OBJ(s, arr(h, "steps")) {
		const char *name = str(s, "problem");
		if (name && n < max) {
			for (i = 0; i < n && strcmp(out[i], name); i++)
				;
			if (i == n)
				out[n++] = name;
		}
	}
	return n;
}

static const cJSON *spec_problem(const struct ctx *c, const char *name)
{
	const cJSON *p;
	FOR_EACH_OBJ(p, arr(c->spec, "problems"))
		if (streq(str(p, "name"), name))
			return p;
	return NULL;
}

/* ==== expectations ==== */

static const char *metric_path(const char *metric)
{
	if (streq(metric, "latency_us"))
		return "timing.median_us";
	if (streq(metric, "tflops"))
		return "model.tflops";
	if (streq(metric, "gbps"))
		return "model.gbps";
	if (streq(metric, "max_abs"))
		return "correctness.max_abs";
	if (streq(metric, "max_rel"))
		return "correctness.max_rel";
	if (streq(metric, "rel_l2"))
		return "correctness.rel_l2";
	return metric;
}

static int is_error_metric(const char *metric)
{
	return streq(metric, "max_abs") || streq(metric, "max_rel") || streq(metric, "rel_l2") ||
	       (metric && !strncmp(metric, "correctness.", 12));
}

static int is_timing_metric(const char *metric)
{
	return streq(metric, "latency_us") || streq(metric, "tflops") || streq(metric, "gbps") ||
	       (metric && (!strncmp(metric, "timing.", 7) || !strncmp(metric, "model.", 6)));
}

static void fmt_metric(struct strbuf *sb, const char *metric, double v)
{
	if (streq(metric, "latency_us") || (metric && !strncmp(metric, "timing.", 7) &&
					    strstr(metric, "_us"))) {
		fmt_us(sb, v);
		strbuf_addstr(sb, " us");
	} else if (streq(metric, "tflops") || streq(metric, "model.tflops")) {
		fmt_tflops(sb, v);
		strbuf_addstr(sb, " TFLOPS");
	} else if (streq(metric, "gbps") || streq(metric, "model.gbps")) {
		fmt_gbps(sb, v);
		strbuf_addstr(sb, " GB/s");
	} else {
		fmt_g(sb, v);
	}
}

/* An expectation's value as the author wrote it: "25 us", "300 TFLOPS", "0.02". */
static void fmt_target(struct strbuf *sb, const char *metric, double v)
{
	strbuf_addf(sb, "%g", v);
	if (streq(metric, "latency_us") || (metric && !strncmp(metric, "timing.", 7) &&
					    strstr(metric, "_us")))
		strbuf_addstr(sb, " us");
	else if (streq(metric, "tflops") || streq(metric, "model.tflops"))
		strbuf_addstr(sb, " TFLOPS");
	else if (streq(metric, "gbps") || streq(metric, "model.gbps"))
		strbuf_addstr(sb, " GB/s");
}

static int compare(const char *op, double a, double b, int *ok)
{
	if (streq(op, "<"))
		*ok = a < b;
	else if (streq(op, "<="))
		*ok = a <= b;
	else if (streq(op, ">"))
		*ok = a > b;
	else if (streq(op, ">="))
		*ok = a >= b;
	else if (streq(op, "=="))
		*ok = a == b;
	else
		return 0;
	return 1;
}

static struct verdict *new_verdict(struct ctx *c, const cJSON *e, const cJSON *h,
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
static void judge(struct ctx *c, const cJSON *e, const cJSON *h, const char *problem)
{
	struct verdict *v = new_verdict(c, e, h, problem);
	const char *program = str(e, "program");
	const char *metric = str(e, "metric");
	const char *op = str(e, "op");
	const char *prefer = is_error_metric(metric) ? "correctness" : "benchmark";
	const char *other = is_error_metric(metric) ? "benchmark" : "correctness";
	const cJSON *s, *res;
	double target, val;
	int ok;

	if (!program || !metric || !op || !num(e, "value", &target)) {
		strbuf_addstr(&v->why, "the expectation lacks program, metric, op or value");
		return;
	}
	{
		const cJSON *ps = find_step(h, prefer, program, problem, NULL);
		const cJSON *os = find_step(h, other, program, problem, NULL);
		if (ps && num(result_of(ps), metric_path(metric), &val))
			s = ps;
		else if (os && num(result_of(os), metric_path(metric), &val))
			s = os;
		else
			s = ps;   /* the missing value is the preferred step's */
	}
	v->step = s;
	if (!s) {
		if (!host_finished(str(h, "status")))
			strbuf_addf(&v->why, "the run stopped before the %s step ran", prefer);
		else if (!streq(str(h, "status"), "ok"))
			strbuf_addf(&v->why, "host %s", str(h, "status") ? str(h, "status") : "failed");
		else
			strbuf_addf(&v->why, "no %s step of this program ran for this problem", prefer);
		return;
	}
	res = result_of(s);
	if (!num(res, metric_path(metric), &val)) {
		const char *st = str(s, "status");
		if (streq(st, "SKIPPED"))
			strbuf_addstr(&v->why, "step skipped");
		else if (st && !streq(st, "PASS"))
			strbuf_addf(&v->why, "step %s", st);
		else
			strbuf_addf(&v->why, "the result has no '%s'", metric_path(metric));
		if (str(s, "reason")) {
			strbuf_addstr(&v->why, ": ");
			strbuf_addstr(&v->why, str(s, "reason"));
		}
		return;
	}
	v->value = val;
	v->has_value = 1;
	if (is_timing_metric(metric) && is_true(res, "model.impossible")) {
		strbuf_addstr(&v->why, "the timing beats the roofline floor (impossible); not counted");
		return;
	}
	if (!compare(op, val, target, &ok)) {
		strbuf_addf(&v->why, "unknown operator '%s'", op);
		return;
	}
	v->kind = ok ? V_MET : V_MISSED;
	if (!streq(str(s, "status"), "PASS") && str(s, "status"))
		strbuf_addf(&v->why, "step %s", str(s, "status"));
}

static void judge_all(struct ctx *c)
{
	const cJSON *e, *h;
	FOR_EACH_OBJ(e, c->expected) {
		const char *gpu = str(e, "gpu");
		const char *problem = str(e, "problem");
		FOR_EACH_OBJ(h, c->hosts) {
			if (gpu && !str_contains_ci(gpu_name(h), gpu)) {
				struct verdict *v = new_verdict(c, e, h, problem);
				if (gpu_name(h)) {
					v->kind = V_NOT_APPLICABLE;
					strbuf_addf(&v->why, "the GPU is not '%s'", gpu);
				} else if (!host_finished(str(h, "status"))) {
					strbuf_addstr(&v->why, "the run stopped before the GPU was probed");
				} else {
					strbuf_addf(&v->why, "host %s: its GPU is unknown",
						    str(h, "status") ? str(h, "status") : "failed");
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

static void count_verdicts(const struct ctx *c, const cJSON *h, int cnt[4])
{
	int i;
	memset(cnt, 0, 4 * sizeof(int));
	for (i = 0; i < c->nv; i++)
		if (!h || c->v[i].host == h)
			cnt[c->v[i].kind]++;
}

static void add_verdict_counts(struct strbuf *md, const int cnt[4], int with_na)
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
	FOR_EACH_OBJ(s, arr(h, "steps")) {
		if (is_baseline(s) && streq(str(s, "kind"), "benchmark") &&
		    streq(str(s, "problem"), str(step, "problem")) && s != step &&
		    num(result_of(s), "timing.median_us", &m) && m > 0)
			return s;
	}
	return NULL;
}

/* "1.14× vs `sdpa`" (or "0.80× vs" when slower) into md; 0 when none.
 * markdown: bold figure and code-span name; else plain text. */
static int add_speedup(struct strbuf *md, const cJSON *h, const cJSON *step, int markdown)
{
	const cJSON *b = baseline_for(h, step);
	double bm, km;
	if (!b || !num(result_of(step), "timing.median_us", &km) || km <= 0 ||
	    !num(result_of(b), "timing.median_us", &bm))
		return 0;
	if (markdown)
		strbuf_addstr(md, "**");
	fmt_ratio(md, bm / km);
	if (markdown)
		strbuf_addstr(md, "**");
	strbuf_addstr(md, " vs ");
	if (markdown)
		md_code(md, str(b, "program"));
	else
		strbuf_addstr(md, str(b, "program") ? str(b, "program") : "baseline");
	return 1;
}

static int ref_applies(const cJSON *ref, const cJSON *h)
{
	const char *gpu = str(ref, "gpu");
	return !gpu || str_contains_ci(gpu_name(h), gpu);
}

/* "FA3 450 / 312.4 = 1.44× remaining" for a kernel step; 0 when not comparable. */
static int add_reference_gap(struct strbuf *md, const cJSON *ref, const cJSON *step)
{
	const cJSON *res = result_of(step);
	double r, k;
	if (num(ref, "tflops", &r) && num(res, "model.tflops", &k) && k > 0 && r > 0) {
		md_cell(md, str(ref, "name") ? str(ref, "name") : "reference");
		strbuf_addch(md, ' ');
		fmt_tflops(md, r);
		strbuf_addstr(md, " / ");
		fmt_tflops(md, k);
		strbuf_addstr(md, " TFLOPS = ");
		if (r >= k) {
			fmt_ratio(md, r / k);
			strbuf_addstr(md, " remaining");
		} else {
			fmt_ratio(md, k / r);
			strbuf_addstr(md, " ahead");
		}
		return 1;
	}
	if (num(ref, "latency_us", &r) && num(res, "timing.median_us", &k) && k > 0 && r > 0) {
		md_cell(md, str(ref, "name") ? str(ref, "name") : "reference");
		strbuf_addch(md, ' ');
		fmt_us(md, k);
		strbuf_addstr(md, " / ");
		fmt_us(md, r);
		strbuf_addstr(md, " us = ");
		if (k >= r) {
			fmt_ratio(md, k / r);
			strbuf_addstr(md, " remaining");
		} else {
			fmt_ratio(md, r / k);
			strbuf_addstr(md, " ahead");
		}
		return 1;
	}
	return 0;
}

static int baseline_applies(const cJSON *b, const cJSON *h, const char *problem)
{
	const char *gpu = str(b, "gpu"), *p = str(b, "problem");
	return (!gpu || str_contains_ci(gpu_name(h), gpu)) && (!p || streq(p, problem));
}

/* "PyTorch SDPA 47.10 us (seed 001, L4): 1.14× faster" */
static int add_spec_baseline(struct strbuf *md, const cJSON *b, const cJSON *step)
{
	const cJSON *res = result_of(step);
	double r, k;
	int have = 0;
	md_cell(md, str(b, "name") ? str(b, "name") : "baseline");
	strbuf_addch(md, ' ');
	if (num(b, "latency_us", &r)) {
		fmt_us(md, r);
		strbuf_addstr(md, " us");
	} else if (num(b, "tflops", &r)) {
		fmt_tflops(md, r);
		strbuf_addstr(md, " TFLOPS");
	} else {
		strbuf_addstr(md, DASH);
	}
	strbuf_addstr(md, " (");
	md_cell(md, str(b, "source") ? str(b, "source") : "spec");
	if (str(b, "gpu")) {
		strbuf_addstr(md, ", ");
		md_cell(md, str(b, "gpu"));
	}
	strbuf_addstr(md, ")");
	if (num(b, "latency_us", &r) && r > 0 && num(res, "timing.median_us", &k) && k > 0) {
		strbuf_addstr(md, ": ours ");
		fmt_us(md, k);
		strbuf_addstr(md, " us, ");
		fmt_ratio(md, k <= r ? r / k : k / r);
		strbuf_addstr(md, k <= r ? " faster" : " slower");
		have = 1;
	} else if (num(b, "tflops", &r) && r > 0 && num(res, "model.tflops", &k) && k > 0) {
		strbuf_addstr(md, ": ours ");
		fmt_tflops(md, k);
		strbuf_addstr(md, " TFLOPS, ");
		fmt_ratio(md, k >= r ? k / r : r / k);
		strbuf_addstr(md, k >= r ? " faster" : " slower");
		have = 1;
	}
	if (!have)
		strbuf_addstr(md, ": not comparable with what was measured");
	return 1;
}

/* The correctness verdict for program/problem on host h: its correctness
 * step when there is one, else the benchmark's own check. */
static const cJSON *correctness_step(const cJSON *h, const char *program, const char *problem)
{
	const cJSON *s = find_step(h, "correctness", program, problem, NULL);
	if (!s || !obj(result_of(s), "correctness")) {
		const cJSON *b = find_step(h, "benchmark", program, problem, NULL);
		if (b && obj(result_of(b), "correctness"))
			return b;
	}
	return s;
}

static void add_correctness_short(struct strbuf *md, const cJSON *s)
{
	const cJSON *corr = obj(result_of(s), "correctness");
	double v;
	if (!corr) {
		strbuf_addstr(md, "correctness ");
		if (s) {
			cell_status(md, str(s, "status"));
		} else {
			strbuf_addstr(md, "not checked");
		}
		return;
	}
	strbuf_addstr(md, is_true(corr, "pass") ? "correct ✅" : "**INCORRECT ❌**");
	if (num(corr, "max_abs", &v)) {
		strbuf_addstr(md, " (max_abs ");
		fmt_g(md, v);
		if (num(corr, "rel_l2", &v)) {
			strbuf_addstr(md, ", rel_l2 ");
			fmt_g(md, v);
		}
		strbuf_addch(md, ')');
	}
}

/* ==== 1. title ==== */

static void outcome_text(const struct ctx *c, struct strbuf *md)
{
	const char *status = str(c->run, "status");
	const char *outcome = str(c->run, "outcome");
	if (!streq(status, "complete"))
		strbuf_addstr(md, "⚠️ **incomplete: the run did not finish**");
	else if (streq(outcome, "passed"))
		strbuf_addstr(md, "✅ **passed**");
	else if (streq(outcome, "failed"))
		strbuf_addstr(md, "❌ **failed**");
	else if (streq(outcome, "infra_error"))
		strbuf_addstr(md, "❌ **infrastructure error: no host could be used**");
	else
		strbuf_addstr(md, "⚠️ **outcome unknown**");
}

static void section_title(struct ctx *c)
{
	struct strbuf *md = c->md;
	const char *phase = str(c->exp, "phase");
	const char *name = str(c->exp, "name");
	const char *desc = str(c->exp, "description");
	double v;
	int cnt[4];

	strbuf_addstr(md, "# ");
	md_cell_n(md, phase ? phase : name ? name : "gpuorch run", 400);
	strbuf_addstr(md, "\n\n");
	strbuf_addstr(md, "**Experiment** ");
	md_cell(md, name);
	strbuf_addstr(md, " · **Started** ");
	fmt_time(md, str(c->run, "started_at"));
	if (num(c->run, "duration_s", &v)) {
		strbuf_addstr(md, " · **Took** ");
		fmt_secs(md, v);
	}
	strbuf_addstr(md, " · **Run** ");
	md_code(md, str(c->run, "run_id"));
	strbuf_addstr(md, "  \n**Outcome**: ");
	outcome_text(c, md);
	if (num(c->run, "exit_code", &v))
		strbuf_addf(md, " (exit %.0f)", v);
	count_verdicts(c, NULL, cnt);
	if (cnt[V_MET] + cnt[V_MISSED] + cnt[V_NOT_MEASURED]) {
		strbuf_addstr(md, " · expectations: ");
		add_verdict_counts(md, cnt, 0);
	}
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c->run, "dry_run")))
		strbuf_addstr(md, " · dry run");
	strbuf_addstr(md, "\n\n");
	if (desc) {
		md_cell_n(md, desc, 2000);
		strbuf_addstr(md, "\n\n");
	}
}

/* Planned (kind, program, problem) steps from the spec that host h has not recorded. */
static void add_missing_steps(const struct ctx *c, const cJSON *h, struct strbuf *md)
{
	const cJSON *st;
	int planned = 0, missing = 0, shown = 0;
	struct strbuf list = STRBUF_INIT;

	FOR_EACH_OBJ(st, arr(c->spec, "steps")) {
		const char *kind = str(st, "kind"), *program = str(st, "program");
		const cJSON *probs = arr(st, "problems") ? arr(st, "problems")
							 : arr(c->spec, "problems");
		const cJSON *p;
		cJSON_ArrayForEach(p, probs) {
			const char *pname = cJSON_IsString(p) ? p->valuestring : str(p, "name");
			planned++;
			if (find_step(h, kind, program, pname, NULL))
				continue;
			missing++;
			if (shown++ < 8) {
				strbuf_addstr(&list, shown > 1 ? ", " : "");
				md_cell_n(&list, kind, 20);
				strbuf_addch(&list, ' ');
				md_code(&list, program);
				strbuf_addch(&list, ' ');
				md_cell_n(&list, pname, 60);
			}
		}
	}
	if (planned) {
		strbuf_addf(md, "; %d of %d planned steps recorded", planned - missing, planned);
		if (missing)
			strbuf_addf(md, "; never completed: %s%s", list.buf,
				    missing > 8 ? ", …" : "");
	}
	strbuf_release(&list);
}

static void section_unfinished(struct ctx *c)
{
	struct strbuf *md = c->md;
	const char *status = str(c->run, "status");
	const cJSON *h;
	int complete = streq(status, "complete"), any = 0;

	FOR_EACH_OBJ(h, c->hosts)
		if (!host_finished(str(h, "status")))
			any = 1;
	if (complete && !any)
		return;
	strbuf_addstr(md, "> ⚠️ **This run did not finish.** ");
	if (!complete && status) {
		strbuf_addstr(md, "The record's status is ");
		md_code(md, status);
		strbuf_addstr(md, streq(status, "running")
			      ? " (the controller was killed, or is still running)"
			      : streq(status, "incomplete") ? " (interrupted)" : "");
		strbuf_addstr(md, ". ");
	} else if (!complete) {
		strbuf_addstr(md, "The record has no status. ");
	}
	strbuf_addstr(md, "What follows is only what was recorded before it stopped.\n");
	FOR_EACH_OBJ(h, c->hosts) {
		const cJSON *ph, *last = NULL;
		if (host_finished(str(h, "status")))
			continue;
		strbuf_addstr(md, "> - **");
		md_cell(md, host_name(h));
		strbuf_addstr(md, "** never completed (status ");
		md_code(md, str(h, "status") ? str(h, "status") : "missing");
		strbuf_addstr(md, ")");
		FOR_EACH_OBJ(ph, arr(h, "phases"))
			last = ph;
		if (last) {
			strbuf_addstr(md, "; last phase ");
			md_cell_n(md, str(last, "name"), 20);
			strbuf_addch(md, ' ');
			md_cell_n(md, str(last, "status"), 20);
		} else {
			strbuf_addstr(md, "; no phase recorded");
		}
		add_missing_steps(c, h, md);
		strbuf_addstr(md, "\n");
	}
	strbuf_addstr(md, "\n");
}

/* ==== 2. at a glance ==== */

/* Totals of statuses over steps (and builds) of host h, or of all hosts. */
struct counts {
	int pass, fail, timeout, killed, infra, skipped, other;
};

static void count_status(struct counts *k, const char *st)
{
	if (streq(st, "PASS"))
		k->pass++;
	else if (streq(st, "FAIL"))
		k->fail++;
	else if (streq(st, "TIMEOUT"))
		k->timeout++;
	else if (streq(st, "KILLED"))
		k->killed++;
	else if (streq(st, "INFRA_ERROR"))
		k->infra++;
	else if (streq(st, "SKIPPED"))
		k->skipped++;
	else
		k->other++;
}

/* "3 PASS · 1 FAIL"; failures in bold when bold. */
static void add_counts(struct strbuf *md, const struct counts *k, int bold)
{
	const char *b = bold ? "**" : "";
	int any = 0;
	if (k->pass)
		strbuf_addf(md, "%s%d PASS", any++ ? " · " : "", k->pass);
	if (k->fail)
		strbuf_addf(md, "%s%s%d FAIL%s", any++ ? " · " : "", b, k->fail, b);
	if (k->timeout)
		strbuf_addf(md, "%s%s%d TIMEOUT%s", any++ ? " · " : "", b, k->timeout, b);
	if (k->killed)
		strbuf_addf(md, "%s%s%d KILLED%s", any++ ? " · " : "", b, k->killed, b);
	if (k->infra)
		strbuf_addf(md, "%s%s%d INFRA_ERROR%s", any++ ? " · " : "", b, k->infra, b);
	if (k->skipped)
		strbuf_addf(md, "%s%d SKIPPED", any++ ? " · " : "", k->skipped);
	if (k->other)
		strbuf_addf(md, "%s%d unknown", any++ ? " · " : "", k->other);
	if (!any)
		strbuf_addstr(md, "none");
}

/* The key line for one kernel benchmark: figures, comparisons, correctness. */
static void add_key_result(const struct ctx *c, struct strbuf *md, const cJSON *h,
			   const cJSON *s)
{
	const cJSON *res = result_of(s);
	const cJSON *ref, *b;
	double v;
	int n = 0;

	strbuf_addstr(md, "- **");
	md_cell(md, host_name(h));
	strbuf_addstr(md, "** ");
	md_code(md, str(s, "program"));
	strbuf_addch(md, ' ');
	md_cell(md, str(s, "problem"));
	strbuf_addstr(md, ": ");
	if (!streq(str(s, "status"), "PASS") && !num(res, "timing.median_us", &v)) {
		cell_status(md, str(s, "status"));
		if (str(s, "reason")) {
			strbuf_addstr(md, " — ");
			md_cell(md, str(s, "reason"));
		}
		strbuf_addstr(md, "\n");
		return;
	}
	if (is_true(res, "model.impossible")) {
		/* not a result: say so first, and compare it with nothing */
		strbuf_addstr(md, "⚠️ **IMPOSSIBLE timing**: ");
		cell_num(md, res, "timing.median_us", fmt_us);
		strbuf_addstr(md, " us");
		if (num(res, "model.tflops", &v) && v > 0) {
			strbuf_addstr(md, ", ");
			fmt_tflops(md, v);
			strbuf_addstr(md, " TFLOPS");
		}
		strbuf_addstr(md, " beats the roofline floor of ");
		cell_num(md, res, "model.floor_us", fmt_us);
		strbuf_addstr(md, " us; the measurement is wrong, not fast");
		strbuf_addstr(md, "\n");
		return;
	}
	if (num(res, "timing.median_us", &v)) {
		strbuf_addstr(md, "**");
		fmt_us(md, v);
		strbuf_addstr(md, " us**");
	} else {
		strbuf_addstr(md, "no timing");
	}
	if (num(res, "model.tflops", &v) && v > 0) {
		strbuf_addstr(md, ", **");
		fmt_tflops(md, v);
		strbuf_addstr(md, " TFLOPS**");
	}
	if (num(res, "model.gbps", &v) && v > 0) {
		strbuf_addstr(md, ", ");
		fmt_gbps(md, v);
		strbuf_addstr(md, " GB/s");
	}
	if (num(res, "model.pct_of_floor", &v))
		strbuf_addf(md, " (%.0f%% of speed of light)", v);
	strbuf_addstr(md, " — ");
	if (add_speedup(md, h, s, 1))
		strbuf_addstr(md, " (measured)");
	else
		strbuf_addstr(md, "no measured baseline");
	FOR_EACH_OBJ(ref, c->references) {
		struct strbuf one = STRBUF_INIT;
		if (ref_applies(ref, h) && add_reference_gap(&one, ref, s)) {
			strbuf_addstr(md, "; ");
			strbuf_addstr(md, one.buf);
			n++;
		}
		strbuf_release(&one);
	}
	FOR_EACH_OBJ(b, c->baselines) {
		if (n < 4 && baseline_applies(b, h, str(s, "problem"))) {
			strbuf_addstr(md, "; vs ");
			add_spec_baseline(md, b, s);
			n++;
		}
	}
	strbuf_addstr(md, "; ");
	add_correctness_short(md, correctness_step(h, str(s, "program"), str(s, "problem")));
	strbuf_addstr(md, "\n");
}

static void section_glance(struct ctx *c)
{
	struct strbuf *md = c->md;
	const cJSON *h, *s, *b;
	struct counts all_steps = { 0 }, all_builds = { 0 };
	int cnt[4], any = 0, alerts = 0;

	strbuf_addstr(md, "## At a glance\n\n");

	/* the figures first: every kernel benchmark */
	FOR_EACH_OBJ(h, c->hosts) {
		FOR_EACH_OBJ(s, arr(h, "steps")) {
			if (!streq(str(s, "kind"), "benchmark") || is_baseline(s))
				continue;
			add_key_result(c, md, h, s);
			any = 1;
		}
	}
	if (!any)
		strbuf_addstr(md, "- No kernel benchmark was recorded.\n");
	strbuf_addstr(md, "\n");

	strbuf_addstr(md, "| host | GPU | status | builds | steps | expectations |\n"
			  "|---|---|---|---|---|---|\n");
	FOR_EACH_OBJ(h, c->hosts) {
		struct counts ks = { 0 }, kb = { 0 };
		FOR_EACH_OBJ(s, arr(h, "steps")) {
			count_status(&ks, str(s, "status"));
			count_status(&all_steps, str(s, "status"));
		}
		FOR_EACH_OBJ(b, arr(h, "builds")) {
			count_status(&kb, str(b, "status"));
			count_status(&all_builds, str(b, "status"));
		}
		strbuf_addstr(md, "| ");
		md_cell(md, host_name(h));
		strbuf_addstr(md, " | ");
		md_cell(md, gpu_name(h));
		if (str(obj(h, "info"), "arch")) {
			strbuf_addstr(md, " (");
			md_cell_n(md, str(obj(h, "info"), "arch"), 20);
			strbuf_addch(md, ')');
		}
		strbuf_addstr(md, " | ");
		cell_host_status(md, h);
		if (str(h, "error")) {
			strbuf_addstr(md, ": ");
			md_cell_n(md, str(h, "error"), 120);
		}
		strbuf_addstr(md, " | ");
		add_counts(md, &kb, 1);
		strbuf_addstr(md, " | ");
		add_counts(md, &ks, 1);
		strbuf_addstr(md, " | ");
		count_verdicts(c, h, cnt);
		add_verdict_counts(md, cnt, 0);
		strbuf_addstr(md, " |\n");
	}
	if (!cJSON_GetArraySize(c->hosts))
		strbuf_addstr(md, "| " DASH " | " DASH " | no hosts recorded | | | |\n");
	strbuf_addstr(md, "\n**Builds**: ");
	add_counts(md, &all_builds, 1);
	strbuf_addstr(md, "  \n**Steps**: ");
	add_counts(md, &all_steps, 1);
	strbuf_addstr(md, "  \n**Expectations**: ");
	count_verdicts(c, NULL, cnt);
	add_verdict_counts(md, cnt, 1);
	strbuf_addstr(md, "\n\n");

	/* the expectations that were missed, by name */
	{
		int i, shown = 0;
		for (i = 0; i < c->nv; i++) {
			const struct verdict *v = &c->v[i];
			double target;
			if (v->kind != V_MISSED)
				continue;
			if (shown++ >= 8)
				continue;
			strbuf_addstr(md, shown == 1 ? "**Missed expectations**\n\n" : "");
			strbuf_addstr(md, "- ❌ ");
			md_code(md, str(v->exp, "program"));
			strbuf_addch(md, ' ');
			md_cell_n(md, str(v->exp, "metric"), 60);
			strbuf_addch(md, ' ');
			md_cell_n(md, str(v->exp, "op"), 4);
			strbuf_addch(md, ' ');
			if (num(v->exp, "value", &target))
				fmt_target(md, str(v->exp, "metric"), target);
			strbuf_addstr(md, " on ");
			md_cell(md, host_name(v->host));
			if (v->problem) {
				strbuf_addstr(md, " (");
				md_cell(md, v->problem);
				strbuf_addch(md, ')');
			}
			strbuf_addstr(md, ": measured ");
			fmt_metric(md, str(v->exp, "metric"), v->value);
			strbuf_addstr(md, "\n");
		}
		if (shown > 8)
			strbuf_addf(md, "- … and %d more (see Expectations)\n", shown - 8);
		if (shown)
			strbuf_addstr(md, "\n");
	}

	/* alerts a kernel engineer must not miss */
	FOR_EACH_OBJ(h, c->hosts) {
		FOR_EACH_OBJ(s, arr(h, "steps")) {
			const cJSON *res = result_of(s);
			double v;
			if (is_true(res, "model.impossible")) {
				strbuf_addstr(md, alerts++ ? "" : "**Alerts**\n\n");
				strbuf_addstr(md, "- ⚠️ **IMPOSSIBLE** on ");
				md_cell(md, host_name(h));
				strbuf_addstr(md, ": ");
				md_code(md, str(s, "program"));
				strbuf_addch(md, ' ');
				md_cell(md, str(s, "problem"));
				strbuf_addstr(md, " median ");
				cell_num(md, res, "timing.median_us", fmt_us);
				strbuf_addstr(md, " us is below the physical floor ");
				cell_num(md, res, "model.floor_us", fmt_us);
				strbuf_addstr(md, " us: the measurement is wrong (no work done? wrong FLOP "
						  "count? asynchronous work not timed?)\n");
			}
			if (obj(res, "correctness") && !is_true(res, "correctness.pass")) {
				strbuf_addstr(md, alerts++ ? "" : "**Alerts**\n\n");
				strbuf_addstr(md, "- ❌ **wrong results** on ");
				md_cell(md, host_name(h));
				strbuf_addstr(md, ": ");
				md_code(md, str(s, "program"));
				strbuf_addch(md, ' ');
				md_cell(md, str(s, "problem"));
				strbuf_addstr(md, " max_abs ");
				cell_num(md, res, "correctness.max_abs", fmt_g);
				strbuf_addstr(md, ", rel_l2 ");
				cell_num(md, res, "correctness.rel_l2", fmt_g);
				strbuf_addstr(md, "\n");
			}
			if (num(res, "timing.dropped_throttled", &v) && v > 0) {
				strbuf_addstr(md, alerts++ ? "" : "**Alerts**\n\n");
				strbuf_addf(md, "- ⚠️ %.0f sample%s dropped for clock throttling on ", v,
					    v == 1 ? "" : "s");
				md_cell(md, host_name(h));
				strbuf_addstr(md, ": ");
				md_code(md, str(s, "program"));
				strbuf_addch(md, ' ');
				md_cell(md, str(s, "problem"));
				strbuf_addstr(md, "\n");
			}
		}
		FOR_EACH_OBJ(b, arr(h, "builds")) {
			const cJSON *k;
			FOR_EACH_OBJ(k, arr(b, "resources")) {
				double st = 0, ld = 0;
				num(k, "spill_store_bytes", &st);
				num(k, "spill_load_bytes", &ld);
				if (st > 0 || ld > 0) {
					strbuf_addstr(md, alerts++ ? "" : "**Alerts**\n\n");
					strbuf_addstr(md, "- ⚠️ register **spills** in ");
					md_code(md, str(k, "demangled") ? str(k, "demangled")
									 : str(k, "kernel"));
					strbuf_addstr(md, " (");
					md_cell(md, str(b, "program"));
					strbuf_addstr(md, ", ");
					md_cell(md, str(k, "arch") ? str(k, "arch") : str(b, "arch"));
					strbuf_addf(md, " on %s): %.0f B stores, %.0f B loads\n",
						    host_name(h), st, ld);
				}
			}
		}
	}
	if (alerts)
		strbuf_addstr(md, "\n");
}

/* ==== 3. configuration ==== */

static void add_string_list(struct strbuf *md, const cJSON *a)
{
	const cJSON *x;
	int n = 0;
	cJSON_ArrayForEach(x, a) {
		if (!cJSON_IsString(x))
			continue;
		strbuf_addstr(md, n++ ? " " : "");
		md_code(md, x->valuestring);
	}
	if (!n)
		strbuf_addstr(md, DASH);
}

static void add_kv(struct strbuf *md, const cJSON *o, const char *sep)
{
	const cJSON *x;
	int n = 0;
	if (cJSON_IsObject(o)) {
		cJSON_ArrayForEach(x, o) {
			strbuf_addstr(md, n++ ? " " : "");
			strbuf_addch(md, '`');
			md_cell_n(md, x->string, 60);
			strbuf_addstr(md, sep);
			fmt_value(md, x);
			strbuf_addch(md, '`');
		}
	}
	if (!n)
		strbuf_addstr(md, DASH);
}

static void section_config(struct ctx *c)
{
	struct strbuf *md = c->md;
	const cJSON *spec = c->spec, *build = obj(spec, "build");
	const cJSON *x, *st;
	const char *sha = str(c->exp, "spec_sha256");
	double v;

	strbuf_addstr(md, "## Configuration\n\n");
	strbuf_addstr(md, "- **Spec**: ");
	md_code(md, str(c->exp, "spec_path"));
	strbuf_addstr(md, " (sha256 ");
	if (sha)
		strbuf_addf(md, "`%.12s…`", sha);
	else
		strbuf_addstr(md, DASH);
	strbuf_addstr(md, ")\n- **Build flags**: ");
	add_string_list(md, arr(build, "flags"));
	strbuf_addstr(md, "; **defines**: ");
	add_kv(md, obj(build, "defines"), "=");
	if (num(build, "timeout_s", &v))
		strbuf_addf(md, "; build timeout %.0f s", v);
	strbuf_addstr(md, "\n- **Targets**: ");
	{
		int n = 0;
		cJSON_ArrayForEach(x, obj(spec, "targets")) {
			strbuf_addstr(md, n++ ? ", " : "");
			md_cell_n(md, x->string, 60);
			strbuf_addstr(md, " → ");
			md_cell_n(md, cJSON_IsString(x) ? x->valuestring : NULL, 20);
		}
		if (!n)
			strbuf_addstr(md, DASH);
	}
	strbuf_addstr(md, "\n- **Tolerance**: ");
	add_kv(md, obj(spec, "tolerance"), " ≤ ");
	strbuf_addstr(md, "\n\n");

	if (cJSON_GetArraySize(obj(spec, "programs"))) {
		strbuf_addstr(md, "| program | built from | libs | min arch | needs GPU |\n"
				  "|---|---|---|---|---|\n");
		cJSON_ArrayForEach(x, obj(spec, "programs")) {
			const cJSON *ng = cJSON_GetObjectItemCaseSensitive(x, "needs_gpu");
			strbuf_addstr(md, "| ");
			md_code(md, x->string);
			strbuf_addstr(md, " | ");
			if (str(x, "script")) {
				strbuf_addstr(md, "script ");
				md_code(md, str(x, "script"));
			} else {
				add_string_list(md, arr(x, "sources"));
			}
			strbuf_addstr(md, " | ");
			add_string_list(md, arr(x, "libs"));
			strbuf_addstr(md, " | ");
			md_cell_n(md, str(x, "min_arch"), 20);
			strbuf_addstr(md, cJSON_IsFalse(ng) ? " | no |\n" : " | yes |\n");
		}
		strbuf_addstr(md, "\n");
	}
	if (cJSON_GetArraySize(arr(spec, "problems"))) {
		strbuf_addstr(md, "| problem | parameters |\n|---|---|\n");
		FOR_EACH_OBJ(x, arr(spec, "problems")) {
			strbuf_addstr(md, "| ");
			md_cell(md, str(x, "name"));
			strbuf_addstr(md, " | ");
			add_kv(md, obj(x, "params"), "=");
			strbuf_addstr(md, " |\n");
		}
		strbuf_addstr(md, "\n");
	}
	if (cJSON_GetArraySize(arr(spec, "steps"))) {
		int n = 0;
		strbuf_addstr(md, "**Planned steps**: ");
		FOR_EACH_OBJ(st, arr(spec, "steps")) {
			strbuf_addstr(md, n++ ? "; " : "");
			md_cell_n(md, str(st, "kind"), 20);
			strbuf_addch(md, ' ');
			md_code(md, str(st, "program"));
			if (streq(str(st, "role"), "baseline"))
				strbuf_addstr(md, " (baseline)");
			if (num(st, "timeout_s", &v))
				strbuf_addf(md, ", timeout %.0f s", v);
		}
		strbuf_addstr(md, "\n\n");
	}
	if (!spec)
		strbuf_addstr(md, "The record holds no copy of the spec.\n\n");
}

/* ==== 4. results ==== */

static void add_bench_row(const struct ctx *c, struct strbuf *md, const cJSON *h,
			  const cJSON *s)
{
	const cJSON *res = result_of(s);
	double v, lo, hi;
	strbuf_addstr(md, "| ");
	md_code(md, str(s, "program"));
	strbuf_addstr(md, " | ");
	md_cell_n(md, str(s, "role") ? str(s, "role") : "kernel", 20);
	strbuf_addstr(md, " | ");
	cell_status(md, str(s, "status"));
	strbuf_addstr(md, " | ");
	if (num(res, "timing.median_us", &v)) {
		strbuf_addstr(md, is_baseline(s) ? "" : "**");
		fmt_us(md, v);
		strbuf_addstr(md, is_baseline(s) ? "" : "**");
	} else {
		strbuf_addstr(md, DASH);
	}
	strbuf_addstr(md, " | ");
	if (num(res, "timing.p10_us", &lo) && num(res, "timing.p90_us", &hi)) {
		fmt_us(md, lo);
		strbuf_addstr(md, "–");
		fmt_us(md, hi);
	} else {
		strbuf_addstr(md, DASH);
	}
	strbuf_addstr(md, " | ");
	if (num(res, "timing.cv_pct", &v))
		strbuf_addf(md, "%.2f%%", v);
	else
		strbuf_addstr(md, DASH);
	strbuf_addstr(md, " | ");
	cell_num(md, res, "timing.n", fmt_int);
	if (str(obj(res, "timing"), "stop_rule")) {
		strbuf_addstr(md, " (");
		md_cell_n(md, str(obj(res, "timing"), "stop_rule"), 20);
		strbuf_addch(md, ')');
	}
	strbuf_addstr(md, " | ");
	cell_num(md, res, "model.tflops", fmt_tflops);
	strbuf_addstr(md, " | ");
	cell_num(md, res, "model.gbps", fmt_gbps);
	strbuf_addstr(md, " | ");
	if (num(res, "model.pct_of_floor", &v))
		strbuf_addf(md, "%.0f%%", v);
	else
		strbuf_addstr(md, DASH);
	if (is_true(res, "model.impossible"))
		strbuf_addstr(md, " ⚠️ **IMPOSSIBLE**");
	strbuf_addstr(md, " | ");
	if (is_baseline(s))
		strbuf_addstr(md, "(baseline)");
	else if (is_true(res, "model.impossible"))
		strbuf_addstr(md, "not trusted");
	else if (!add_speedup(md, h, s, 1))
		strbuf_addstr(md, DASH);
	strbuf_addstr(md, " |\n");
	(void)c;
}

static void add_correctness_row(struct strbuf *md, const cJSON *s)
{
	const cJSON *res = result_of(s), *corr = obj(res, "correctness");
	const cJSON *tol = obj(corr, "tol"), *trials = arr(corr, "trials");
	strbuf_addstr(md, "| ");
	md_code(md, str(s, "program"));
	strbuf_addstr(md, " | ");
	md_cell_n(md, str(s, "kind"), 20);
	strbuf_addstr(md, " | ");
	cell_status(md, str(s, "status"));
	strbuf_addstr(md, " | ");
	cell_num(md, corr, "max_abs", fmt_g);
	strbuf_addstr(md, " | ");
	cell_num(md, corr, "max_rel", fmt_g);
	strbuf_addstr(md, " | ");
	cell_num(md, corr, "rel_l2", fmt_g);
	strbuf_addstr(md, " | ");
	if (tol) {
		const cJSON *x;
		int n = 0;
		cJSON_ArrayForEach(x, tol) {
			if (!cJSON_IsNumber(x))
				continue;
			strbuf_addf(md, "%s%s ≤ ", n++ ? ", " : "", x->string);
			fmt_g(md, x->valuedouble);
		}
		if (!n)
			strbuf_addstr(md, DASH);
	} else {
		strbuf_addstr(md, DASH);
	}
	strbuf_addstr(md, " | ");
	if (!corr)
		strbuf_addstr(md, DASH);
	else if (is_true(corr, "pass"))
		strbuf_addstr(md, "✅ pass");
	else
		strbuf_addstr(md, "❌ **fail**");
	if (trials)
		strbuf_addf(md, " (%d trial%s)", cJSON_GetArraySize(trials),
			    cJSON_GetArraySize(trials) == 1 ? "" : "s");
	strbuf_addstr(md, " |\n");
}

static void results_problem(struct ctx *c, const cJSON *h, const char *problem)
{
	struct strbuf *md = c->md;
	const cJSON *s, *ref, *b;
	int nb = 0, nc = 0, notes = 0;

	strbuf_addstr(md, "#### ");
	md_cell(md, problem);
	{
		const cJSON *p = spec_problem(c, problem);
		if (p && obj(p, "params")) {
			strbuf_addstr(md, " — ");
			add_kv(md, obj(p, "params"), "=");
		}
	}
	strbuf_addstr(md, "\n\n");

	FOR_EACH_OBJ(s, arr(h, "steps")) {
		if (!streq(str(s, "problem"), problem) || !streq(str(s, "kind"), "benchmark"))
			continue;
		if (!nb++)
			strbuf_addstr(md, "| program | role | status | median (us) | p10–p90 (us) | CV "
					  "| n (stop) | TFLOPS | GB/s | % of floor | speedup |\n"
					  "|---|---|---|---|---|---|---|---|---|---|---|\n");
		add_bench_row(c, md, h, s);
	}
	if (nb)
		strbuf_addstr(md, "\n");

	FOR_EACH_OBJ(s, arr(h, "steps")) {
		if (!streq(str(s, "problem"), problem))
			continue;
		if (!streq(str(s, "kind"), "correctness") &&
		    !(streq(str(s, "kind"), "benchmark") && obj(result_of(s), "correctness") &&
		      !find_step(h, "correctness", str(s, "program"), problem, NULL)))
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
	FOR_EACH_OBJ(s, arr(h, "steps")) {
		const cJSON *res = result_of(s);
		const cJSON *t = obj(res, "timing");
		double v;
		if (!streq(str(s, "problem"), problem))
			continue;
		if (streq(str(s, "kind"), "benchmark") && !is_baseline(s) &&
		    num(res, "timing.median_us", &v) && !is_true(res, "model.impossible")) {
			FOR_EACH_OBJ(ref, c->references) {
				struct strbuf one = STRBUF_INIT;
				if (ref_applies(ref, h) && add_reference_gap(&one, ref, s)) {
					strbuf_addstr(md, "- ");
					md_code(md, str(s, "program"));
					strbuf_addstr(md, " vs reference ");
					strbuf_addstr(md, one.buf);
					strbuf_addstr(md, "\n");
					notes++;
				}
				strbuf_release(&one);
			}
			FOR_EACH_OBJ(b, c->baselines) {
				if (!baseline_applies(b, h, problem))
					continue;
				strbuf_addstr(md, "- ");
				md_code(md, str(s, "program"));
				strbuf_addstr(md, " vs spec baseline ");
				add_spec_baseline(md, b, s);
				strbuf_addstr(md, "\n");
				notes++;
			}
		}
		if (is_true(res, "model.impossible")) {
			strbuf_addstr(md, "- ⚠️ **IMPOSSIBLE**: ");
			md_code(md, str(s, "program"));
			strbuf_addstr(md, " median ");
			cell_num(md, res, "timing.median_us", fmt_us);
			strbuf_addstr(md, " us beats the floor of ");
			cell_num(md, res, "model.floor_us", fmt_us);
			strbuf_addstr(md, " us (peak ");
			cell_num(md, res, "model.peak_tflops", fmt_tflops);
			strbuf_addstr(md, " TFLOPS / ");
			cell_num(md, res, "model.peak_gbps", fmt_gbps);
			strbuf_addstr(md, " GB/s, ");
			md_cell(md, str(obj(res, "model"), "peak_source"));
			strbuf_addstr(md, "). Do not trust this number.\n");
			notes++;
		}
		if (t && ((num(t, "dropped_throttled", &v) && v > 0) ||
			  streq(str(t, "stop_rule"), "time_cap") ||
			  streq(str(t, "stop_rule"), "max_samples"))) {
			strbuf_addstr(md, "- ");
			md_code(md, str(s, "program"));
			strbuf_addstr(md, " timing: ");
			if (num(t, "dropped_throttled", &v) && v > 0)
				strbuf_addf(md, "%.0f throttled sample%s dropped; ", v,
					    v == 1 ? "" : "s");
			strbuf_addstr(md, "stopped by ");
			md_code(md, str(t, "stop_rule"));
			if (streq(str(t, "stop_rule"), "time_cap") ||
			    streq(str(t, "stop_rule"), "max_samples"))
				strbuf_addstr(md, " before the spread settled (CV target not reached)");
			if (num(t, "sm_clock_mhz_median", &v))
				strbuf_addf(md, "; SM clock median %.0f MHz", v);
			strbuf_addstr(md, "\n");
			notes++;
		}
		if (!streq(str(s, "status"), "PASS")) {
			strbuf_addstr(md, "- ");
			cell_status(md, str(s, "status"));
			strbuf_addch(md, ' ');
			md_cell_n(md, str(s, "kind"), 20);
			strbuf_addch(md, ' ');
			md_code(md, str(s, "program"));
			strbuf_addstr(md, ": ");
			md_cell_n(md, str(s, "reason") ? str(s, "reason") : "no reason recorded", 400);
			strbuf_addstr(md, "\n");
			notes++;
		}
	}
	if (notes)
		strbuf_addstr(md, "\n");
}

static void section_results(struct ctx *c)
{
	struct strbuf *md = c->md;
	const cJSON *h;
	strbuf_addstr(md, "## Results\n\n");
	FOR_EACH_OBJ(h, c->hosts) {
		const char *probs[MAX_PROBLEMS];
		int n, i;
		double v;
		const cJSON *info = obj(h, "info");
		strbuf_addstr(md, "### ");
		md_cell(md, host_name(h));
		strbuf_addstr(md, " — ");
		md_cell(md, gpu_name(h) ? gpu_name(h) : "GPU unknown");
		if (str(info, "arch")) {
			strbuf_addstr(md, " (");
			md_cell_n(md, str(info, "arch"), 20);
			strbuf_addch(md, ')');
		}
		strbuf_addstr(md, "\n\n");
		if (num(info, "sm_clock_mhz", &v)) {
			strbuf_addf(md, "SM clock %.0f MHz", v);
			if (num(info, "max_sm_clock_mhz", &v))
				strbuf_addf(md, " (max %.0f)", v);
			if (num(info, "mem_clock_mhz", &v))
				strbuf_addf(md, ", memory clock %.0f MHz", v);
			strbuf_addstr(md, " at probe time.\n\n");
		}
		if (!cJSON_GetArraySize(arr(h, "steps"))) {
			strbuf_addstr(md, "No results: ");
			cell_host_status(md, h);
			if (str(h, "error")) {
				strbuf_addstr(md, " — ");
				md_cell_n(md, str(h, "error"), 400);
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

/* ==== 5. ptxas resources ==== */

static void add_resource_row(struct strbuf *md, const cJSON *b, const cJSON *k,
			     const char *hosts)
{
	double st = 0, ld = 0, v;
	int has_st = num(k, "spill_store_bytes", &st), has_ld = num(k, "spill_load_bytes", &ld);
	strbuf_addstr(md, "| ");
	md_code(md, str(b, "program"));
	strbuf_addstr(md, " | ");
	md_code(md, str(k, "demangled") ? str(k, "demangled") : str(k, "kernel"));
	if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(k, "entry")))
		strbuf_addstr(md, " (device fn)");
	strbuf_addstr(md, " | ");
	md_cell_n(md, str(k, "arch") ? str(k, "arch") : str(b, "arch"), 20);
	strbuf_addstr(md, " | ");
	if (num(k, "registers", &v))
		strbuf_addf(md, v >= 255 ? "**%.0f** (cap)" : "%.0f", v);
	else
		strbuf_addstr(md, DASH);
	strbuf_addstr(md, " | ");
	if (num(k, "smem_bytes", &v))
		fmt_bytes(md, v);
	else
		strbuf_addstr(md, DASH);
	strbuf_addstr(md, " | ");
	if (num(k, "stack_bytes", &v))
		fmt_bytes(md, v);
	else
		strbuf_addstr(md, DASH);
	strbuf_addstr(md, " | ");
	if (!has_st && !has_ld)
		strbuf_addstr(md, DASH);
	else if (st > 0 || ld > 0)
		strbuf_addf(md, "⚠️ **%.0f B / %.0f B**", st, ld);
	else
		strbuf_addstr(md, "0 / 0");
	strbuf_addstr(md, " | ");
	if (num(k, "cmem_bytes", &v))
		fmt_bytes(md, v);
	else
		strbuf_addstr(md, DASH);
	strbuf_addstr(md, " | ");
	cell_num(md, k, "barriers", fmt_int);
	strbuf_addstr(md, " | ");
	md_cell(md, hosts);
	strbuf_addstr(md, " |\n");
}

/* The first build with this key that has a ptxas report. */
static const cJSON *build_with_resources(const struct ctx *c, const char *key)
{
	const cJSON *h, *b;
	FOR_EACH_OBJ(h, c->hosts)
		FOR_EACH_OBJ(b, arr(h, "builds"))
			if (streq(str(b, "build_key"), key) && cJSON_GetArraySize(arr(b, "resources")))
				return b;
	return NULL;
}

static void section_ptxas(struct ctx *c)
{
	struct strbuf *md = c->md;
	struct strbuf shown = STRBUF_INIT;   /* build keys already shown, one per line */
	const cJSON *h, *b, *h2, *b2, *k, *w;
	int rows = 0, nwarn = 0;

	strbuf_addstr(md, "## ptxas resources\n\n");
	FOR_EACH_OBJ(h, c->hosts) {
		FOR_EACH_OBJ(b, arr(h, "builds")) {
			const char *key = str(b, "build_key");
			const cJSON *src = b;
			struct strbuf hosts = STRBUF_INIT;
			if (key) {
				struct strbuf line = STRBUF_INIT;
				strbuf_addf(&line, "\n%s\n", key);
				if (strstr(shown.buf, line.buf)) {
					strbuf_release(&line);
					continue;
				}
				strbuf_addstr(&shown, shown.len ? line.buf + 1 : line.buf);
				strbuf_release(&line);
				if (build_with_resources(c, key))
					src = build_with_resources(c, key);
				/* the same build (same key) on several hosts: one set of rows */
				FOR_EACH_OBJ(h2, c->hosts)
					FOR_EACH_OBJ(b2, arr(h2, "builds"))
						if (streq(str(b2, "build_key"), key))
							strbuf_addf(&hosts, "%s%s", hosts.len ? ", " : "",
								    host_name(h2));
			} else {
				strbuf_addstr(&hosts, host_name(h));
			}
			FOR_EACH_OBJ(k, arr(src, "resources")) {
				if (!rows++)
					strbuf_addstr(md, "| program | kernel | arch | registers | smem | "
							  "stack | spill stores / loads | cmem | "
							  "barriers | hosts |\n"
							  "|---|---|---|---|---|---|---|---|---|---|\n");
				add_resource_row(md, src, k, hosts.buf);
			}
			FOR_EACH_OBJ(k, arr(src, "resources")) {
				cJSON_ArrayForEach(w, arr(k, "warnings")) {
					if (!cJSON_IsString(w) || nwarn >= 20)
						continue;
					strbuf_addstr(&c->scratch, "- ");
					md_code(&c->scratch, str(k, "demangled") ? str(k, "demangled")
										  : str(k, "kernel"));
					strbuf_addstr(&c->scratch, " (");
					md_cell_n(&c->scratch, str(k, "arch"), 20);
					strbuf_addstr(&c->scratch, "): ");
					md_cell(&c->scratch, w->valuestring);
					strbuf_addstr(&c->scratch, "\n");
					nwarn++;
				}
			}
			strbuf_release(&hosts);
		}
	}
	if (rows)
		strbuf_addstr(md, "\n");
	else
		strbuf_addstr(md, "No ptxas report was recorded (no build ran, or nvcc printed "
				  "none).\n\n");
	if (nwarn) {
		strbuf_addstr(md, "ptxas warnings:\n\n");
		strbuf_addstr(md, c->scratch.buf);
		strbuf_addstr(md, "\n");
	}
	strbuf_reset(&c->scratch);
	strbuf_release(&shown);
}

/* ==== 6. expectations ==== */

/* ==== gates, sweeps, profiles, sanitizers ==== */

/* A number as measured: microseconds for "us", else three significant digits. */
static void fmt_measured(struct strbuf *md, double v, const char *unit)
{
	if (streq(unit, "us"))
		fmt_us(md, v);
	else if (fabs(v) >= 1e4 && fabs(v) < 1e15 && v == floor(v))
		strbuf_addf(md, "%.0f", v);
	else
		fmt_g(md, v);
	if (unit && *unit && !streq(unit, "×")) {
		strbuf_addch(md, ' ');
		md_cell_n(md, unit, 40);
	} else if (streq(unit, "×")) {
		strbuf_addstr(md, "×");
	}
}

/* The host's stored gates, or (a record written before gates were stored,
 * or cut short) the gates judged now from the record; *owned is set then. */
static const cJSON *host_gates(const struct ctx *c, const cJSON *h, cJSON **owned)
{
	const cJSON *g = arr(h, "gates");
	const cJSON *spec_gates = arr(c->spec, "gates");
	*owned = NULL;
	if (g)
		return g;
	if (!spec_gates || !cJSON_GetArraySize(spec_gates))
		return NULL;
	*owned = gates_evaluate_host(spec_gates, h, NULL);
	return *owned;
}

static void section_gates(struct ctx *c)
{
	struct strbuf *md = c->md;
	const cJSON *h, *g;
	int npass = 0, nfail = 0, nna = 0, any = 0, judged_now = 0;
	struct strbuf rows = STRBUF_INIT;

	FOR_EACH_OBJ(h, c->hosts) {
		cJSON *owned;
		const cJSON *gs = host_gates(c, h, &owned);
		judged_now |= owned != NULL;
		FOR_EACH_OBJ(g, gs) {
			const char *v = str(g, "verdict");
			double m, t;
			any = 1;
			if (streq(v, "PASS"))
				npass++;
			else if (streq(v, "N/A"))
				nna++;
			else
				nfail++;
			strbuf_addf(&rows, "| %s | ", streq(v, "PASS") ? "✅ pass" : streq(v, "N/A") ? "➖ n/a" : "❌ **FAIL**");
			md_cell(&rows, str(g, "name") ? str(g, "name") : str(g, "metric"));
			strbuf_addstr(&rows, " | ");
			md_cell(&rows, host_name(h));
			strbuf_addstr(&rows, " | ");
			md_code(&rows, str(g, "program"));
			if (str(g, "problem")) {
				strbuf_addstr(&rows, " · ");
				md_cell(&rows, str(g, "problem"));
			}
			strbuf_addstr(&rows, " | ");
			md_code(&rows, str(g, "metric"));
			strbuf_addstr(&rows, " | ");
			if (num(g, "measured", &m))
				fmt_measured(&rows, m, str(g, "unit"));
			else
				strbuf_addstr(&rows, "not measured");
			strbuf_addf(&rows, " | %s ", str(g, "op") ? str(g, "op") : "?");
			if (num(g, "threshold", &t))
				fmt_g(&rows, t);
			strbuf_addstr(&rows, " | ");
			md_cell(&rows, streq(v, "PASS") ? NULL : str(g, "reason"));
			strbuf_addstr(&rows, " |\n");
		}
		cJSON_Delete(owned);
	}
	if (!any) {
		strbuf_release(&rows);
		return;
	}
	strbuf_addstr(md, "## Gates at a glance\n\n");
	strbuf_addf(md, "**%d gate result%s: ", npass + nfail + nna,
		    npass + nfail + nna == 1 ? "" : "s");
	strbuf_addf(md, "%d ✅ passed · %d ❌ failed", npass, nfail);
	if (nna)
		strbuf_addf(md, " · %d ➖ not applicable", nna);
	strbuf_addstr(md, "**");
	if (nfail)
		strbuf_addstr(md, " — a failed gate fails the run (exit 1); a gate on a figure that "
				  "was not measured fails");
	strbuf_addstr(md, "\n\n");
	if (judged_now)
		strbuf_addstr(md, "> The record holds no stored gate results for some hosts; those "
				  "were judged from the record by the report.\n\n");
	strbuf_addstr(md, "| verdict | gate | host | program · problem | metric | measured | needs | why |\n"
			  "|---|---|---|---|---|---|---|---|\n");
	strbuf_add(md, rows.buf, rows.len);
	strbuf_addstr(md, "\n");
	strbuf_release(&rows);
}

static void section_sweeps(struct ctx *c)
{
	struct strbuf *md = c->md;
	const cJSON *h, *sw, *v;
	int any = 0;

	FOR_EACH_OBJ(h, c->hosts) {
		cJSON *owned = arr(h, "sweeps") ? NULL : sweep_rank_host(h);
		const cJSON *sweeps = owned ? owned : arr(h, "sweeps");
		FOR_EACH_OBJ(sw, sweeps) {
			double wm;
			if (!any++)
				strbuf_addstr(md, "## Sweeps\n\nEach variant was built with its defines "
						  "and run one at a time; only a variant whose build, "
						  "correctness run and benchmark all passed is ranked, so a "
						  "wrong variant never wins.\n\n");
			strbuf_addstr(md, "### ");
			md_code(md, str(sw, "program"));
			strbuf_addstr(md, " · ");
			md_cell(md, str(sw, "problem"));
			strbuf_addstr(md, " on ");
			md_cell(md, host_name(h));
			strbuf_addstr(md, "\n\n");
			if (str(sw, "winner")) {
				strbuf_addstr(md, "🏆 **Winner**: ");
				md_code(md, str(sw, "winner"));
				if (num(sw, "winner_median_us", &wm)) {
					strbuf_addstr(md, " — ");
					fmt_us(md, wm);
					strbuf_addstr(md, " us median");
				}
				strbuf_addstr(md, "\n\n");
			} else {
				strbuf_addstr(md, "❌ **No variant passed**: nothing is ranked.\n\n");
			}
			strbuf_addstr(md, "| rank | variant | median (us) | vs winner | registers | spill st / ld | smem | status |\n"
					  "|---|---|---|---|---|---|---|---|\n");
			FOR_EACH_OBJ(v, arr(sw, "variants")) {
				double r;
				if (num(v, "rank", &r))
					strbuf_addf(md, "| %s%.0f | ", r == 1 ? "🏆 " : "", r);
				else
					strbuf_addstr(md, "| — | ");
				md_code(md, str(v, "variant"));
				strbuf_addstr(md, " | ");
				cell_num(md, v, "median_us", fmt_us);
				strbuf_addstr(md, " | ");
				if (num(v, "relative", &r))
					strbuf_addf(md, "%.2f×", r);
				else
					strbuf_addstr(md, DASH);
				strbuf_addstr(md, " | ");
				cell_num(md, v, "registers", fmt_int);
				strbuf_addstr(md, " | ");
				cell_num(md, v, "spill_store_bytes", fmt_int);
				strbuf_addstr(md, " / ");
				cell_num(md, v, "spill_load_bytes", fmt_int);
				strbuf_addstr(md, " | ");
				cell_num(md, v, "smem_bytes", fmt_bytes);
				strbuf_addstr(md, " | ");
				if (is_true(v, "ranked"))
					strbuf_addstr(md, "✅ ranked");
				else {
					strbuf_addstr(md, "❌ ");
					md_cell(md, str(v, "reason"));
				}
				strbuf_addstr(md, " |\n");
			}
			strbuf_addstr(md, "\n");
		}
		cJSON_Delete(owned);
	}
}

static void section_profiles(struct ctx *c)
{
	struct strbuf *md = c->md;
	const cJSON *h, *s, *m, *k, *x;
	int any = 0;

	FOR_EACH_OBJ(h, c->hosts) {
		FOR_EACH_OBJ(s, arr(h, "steps")) {
			const cJSON *t = obj(s, "tool_settings");
			const cJSON *prof = obj(result_of(s), "profile");
			double v;
			int nk = 0;
			if (!streq(str(s, "kind"), "profile"))
				continue;
			if (!any++)
				strbuf_addstr(md, "## Profiles (Nsight Compute)\n\nCounters from `ncu` on "
						  "a few launches of the kernel, kept apart from the timed "
						  "benchmarks (profiling serialises and replays kernels; its "
						  "times are not comparable).\n\n");
			strbuf_addstr(md, "### ");
			md_code(md, str(s, "program"));
			strbuf_addstr(md, " · ");
			md_cell(md, str(s, "problem"));
			strbuf_addstr(md, " on ");
			md_cell(md, host_name(h));
			strbuf_addstr(md, " — ");
			cell_status(md, str(s, "status"));
			strbuf_addstr(md, "\n\n");
			if (str(s, "reason")) {
				strbuf_addstr(md, "- ");
				md_cell_n(md, str(s, "reason"), 600);
				strbuf_addstr(md, "\n");
			}
			strbuf_addstr(md, "- ncu ");
			md_cell(md, str(t, "version") ? str(t, "version") : "(version unknown)");
			strbuf_addstr(md, ", kernel `regex:");
			md_cell_n(md, str(t, "kernel_regex"), 120);
			strbuf_addstr(md, "`");
			if (num(t, "launch_skip", &v))
				strbuf_addf(md, ", skip %.0f", v);
			if (num(t, "launch_count", &v))
				strbuf_addf(md, ", %.0f launch%s", v, v == 1 ? "" : "es");
			strbuf_addstr(md, ", clock control ");
			md_cell_n(md, str(t, "clock_control"), 20);
			strbuf_addstr(md, ", cache control ");
			md_cell_n(md, str(t, "cache_control"), 20);
			strbuf_addstr(md, ", program mode ");
			md_cell_n(md, str(t, "program_mode"), 20);
			strbuf_addstr(md, "\n");
			if (str(s, "profile_report")) {
				strbuf_addstr(md, "- report: `");
				md_cell(md, str(s, "profile_report"));
				strbuf_addstr(md, "` (open in Nsight Compute)\n");
			}
			FOR_EACH_OBJ(k, arr(prof, "kernels")) {
				if (nk++ >= 4)
					break;
				strbuf_addstr(md, "- launch ");
				if (num(k, "id", &v))
					strbuf_addf(md, "%.0f", v);
				strbuf_addstr(md, ": ");
				md_code(md, str(k, "name"));
				strbuf_addstr(md, " grid ");
				md_cell_n(md, str(k, "grid"), 40);
				strbuf_addstr(md, " block ");
				md_cell_n(md, str(k, "block"), 40);
				strbuf_addstr(md, "\n");
			}
			if (cJSON_GetArraySize(arr(prof, "missing"))) {
				strbuf_addstr(md, "- ❌ **not measured** (missing, n/a or NaN): ");
				cJSON_ArrayForEach(x, arr(prof, "missing")) {
					if (cJSON_IsString(x)) {
						md_code(md, x->valuestring);
						strbuf_addstr(md, x->next ? ", " : "");
					}
				}
				strbuf_addstr(md, "\n");
			}
			strbuf_addstr(md, "\n");
			if (!obj(prof, "metrics") || !obj(prof, "metrics")->child)
				continue;
			strbuf_addstr(md, "| metric | value (mean) | min – max | launches |\n"
					  "|---|---|---|---|\n");
			cJSON_ArrayForEach(m, obj(prof, "metrics")) {
				double lo, hi;
				if (!cJSON_IsObject(m))
					continue;
				strbuf_addstr(md, "| ");
				md_code(md, m->string);
				strbuf_addstr(md, " | ");
				if (num(m, "value", &v))
					fmt_measured(md, v, str(m, "unit"));
				else
					strbuf_addstr(md, DASH);
				strbuf_addstr(md, " | ");
				if (num(m, "min", &lo) && num(m, "max", &hi)) {
					fmt_g(md, lo);
					strbuf_addstr(md, " – ");
					fmt_g(md, hi);
				} else {
					strbuf_addstr(md, DASH);
				}
				strbuf_addstr(md, " | ");
				cell_num(md, m, "n", fmt_int);
				strbuf_addstr(md, " |\n");
			}
			strbuf_addstr(md, "\n");
		}
	}
}

static void section_sanitizers(struct ctx *c)
{
	struct strbuf *md = c->md;
	const cJSON *h, *s, *f;
	int any = 0;
	struct strbuf details = STRBUF_INIT;

	FOR_EACH_OBJ(h, c->hosts) {
		FOR_EACH_OBJ(s, arr(h, "steps")) {
			const cJSON *san = obj(result_of(s), "sanitizer");
			double v;
			int nf = 0;
			if (!streq(str(s, "kind"), "sanitize"))
				continue;
			if (!any++)
				strbuf_addstr(md, "## Sanitizer (compute-sanitizer)\n\n"
						  "| host | program · problem | tool | status | errors | warnings | first error |\n"
						  "|---|---|---|---|---|---|---|\n");
			strbuf_addstr(md, "| ");
			md_cell(md, host_name(h));
			strbuf_addstr(md, " | ");
			md_code(md, str(s, "program"));
			strbuf_addstr(md, " · ");
			md_cell(md, str(s, "problem"));
			strbuf_addstr(md, " | ");
			md_cell(md, str(s, "tool"));
			strbuf_addstr(md, " | ");
			cell_status(md, str(s, "status"));
			strbuf_addstr(md, " | ");
			if (num(san, "errors", &v))
				strbuf_addf(md, v > 0 ? "**%.0f**" : "%.0f", v);
			else
				strbuf_addstr(md, DASH);
			strbuf_addstr(md, " | ");
			cell_num(md, san, "warnings", fmt_int);
			strbuf_addstr(md, " | ");
			f = cJSON_GetArrayItem(arr(san, "first_errors"), 0);
			if (f) {
				md_cell_n(md, str(f, "what"), 120);
				if (str(f, "location")) {
					strbuf_addstr(md, " at ");
					md_code(md, str(f, "location"));
				}
			} else {
				md_cell(md, streq(str(s, "status"), "PASS") ? NULL : str(s, "reason"));
			}
			strbuf_addstr(md, " |\n");
			FOR_EACH_OBJ(f, arr(san, "first_errors")) {
				if (!nf++) {
					strbuf_addstr(&details, "**");
					md_cell(&details, host_name(h));
					strbuf_addstr(&details, " · ");
					md_cell(&details, str(s, "program"));
					strbuf_addstr(&details, " · ");
					md_cell(&details, str(s, "problem"));
					strbuf_addstr(&details, " · ");
					md_cell(&details, str(s, "tool"));
					strbuf_addstr(&details, "** (first reports)\n\n");
				}
				if (nf > 5)
					break;
				strbuf_addstr(&details, "- ");
				md_cell_n(&details, str(f, "what"), 200);
				if (str(f, "kernel")) {
					strbuf_addstr(&details, " in ");
					md_code(&details, str(f, "kernel"));
				}
				if (str(f, "location")) {
					strbuf_addstr(&details, " at ");
					md_code(&details, str(f, "location"));
				}
				if (str(f, "thread")) {
					strbuf_addstr(&details, ", thread ");
					md_cell_n(&details, str(f, "thread"), 40);
				}
				if (str(f, "block")) {
					strbuf_addstr(&details, " block ");
					md_cell_n(&details, str(f, "block"), 40);
				}
				if (str(f, "address")) {
					strbuf_addstr(&details, ", address ");
					md_cell_n(&details, str(f, "address"), 40);
				}
				strbuf_addstr(&details, "\n");
			}
			if (nf)
				strbuf_addstr(&details, "\n");
		}
	}
	if (any) {
		strbuf_addstr(md, "\n");
		strbuf_add(md, details.buf, details.len);
		strbuf_addstr(md, "Errors need a program built with `-lineinfo` to name source lines.\n\n");
	}
	strbuf_release(&details);
}

static void section_expectations(struct ctx *c)
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
		md_code(md, str(e, "program"));
		strbuf_addch(md, ' ');
		md_cell_n(md, str(e, "metric"), 60);
		strbuf_addch(md, ' ');
		md_cell_n(md, str(e, "op"), 4);
		strbuf_addch(md, ' ');
		if (num(e, "value", &target))
			fmt_target(md, str(e, "metric"), target);
		else
			strbuf_addstr(md, DASH);
		if (str(e, "gpu")) {
			strbuf_addstr(md, " on ");
			md_cell_n(md, str(e, "gpu"), 40);
		}
		if (str(e, "note")) {
			strbuf_addstr(md, " (");
			md_cell(md, str(e, "note"));
			strbuf_addch(md, ')');
		}
		strbuf_addstr(md, " | ");
		md_cell(md, host_name(v->host));
		strbuf_addstr(md, " | ");
		md_cell(md, v->problem ? v->problem : str(e, "problem"));
		strbuf_addstr(md, " | ");
		if (v->has_value)
			fmt_metric(md, str(e, "metric"), v->value);
		else
			strbuf_addstr(md, DASH);
		strbuf_addstr(md, " | ");
		switch (v->kind) {
		case V_MET:
			strbuf_addstr(md, "✅ met");
			break;
		case V_MISSED:
			strbuf_addstr(md, "❌ **missed**");
			if (v->has_value && num(e, "value", &target) && target != 0 && v->value != 0) {
				double r = fabs(v->value / target);
				strbuf_addstr(md, " (");
				fmt_ratio(md, r >= 1 ? r : 1 / r);
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
			md_cell_n(md, v->why.buf, 200);
		}
		strbuf_addstr(md, " |\n");
	}
	strbuf_addstr(md, "\n");
}

/* ==== 7. steps ==== */

static void section_steps(struct ctx *c)
{
	struct strbuf *md = c->md;
	const cJSON *h, *x;
	double v;

	strbuf_addstr(md, "## Steps\n\n");
	FOR_EACH_OBJ(h, c->hosts) {
		const cJSON *ship = obj(h, "ship");
		strbuf_addstr(md, "### ");
		md_cell(md, host_name(h));
		strbuf_addstr(md, " (");
		md_cell(md, str(h, "user"));
		strbuf_addch(md, '@');
		md_cell(md, str(h, "address"));
		if (num(h, "port", &v))
			strbuf_addf(md, ":%.0f", v);
		strbuf_addstr(md, ") — ");
		cell_host_status(md, h);
		strbuf_addstr(md, "\n\n");
		if (str(h, "error")) {
			strbuf_addstr(md, "Error: ");
			md_cell_n(md, str(h, "error"), 1000);
			strbuf_addstr(md, "\n\n");
		}
		if (cJSON_GetArraySize(arr(h, "phases"))) {
			strbuf_addstr(md, "| phase | status | time | detail |\n|---|---|---|---|\n");
			FOR_EACH_OBJ(x, arr(h, "phases")) {
				strbuf_addstr(md, "| ");
				md_cell_n(md, str(x, "name"), 20);
				strbuf_addstr(md, " | ");
				cell_status(md, str(x, "status"));
				strbuf_addstr(md, " | ");
				cell_num(md, x, "duration_s", fmt_secs);
				strbuf_addstr(md, " | ");
				md_cell(md, str(x, "detail"));
				strbuf_addstr(md, " |\n");
			}
			strbuf_addstr(md, "\n");
		} else {
			strbuf_addstr(md, "No phase was recorded.\n\n");
		}
		if (ship) {
			strbuf_addstr(md, "Ship: ");
			if (is_true(ship, "reused"))
				strbuf_addstr(md, "content already on the host (reused), ");
			if (num(ship, "bytes_sent", &v))
				fmt_bytes(md, v);
			else
				strbuf_addstr(md, DASH);
			strbuf_addstr(md, " sent to ");
			md_code(md, str(ship, "remote_dir"));
			strbuf_addstr(md, "\n\n");
		}
		if (cJSON_GetArraySize(arr(h, "builds"))) {
			strbuf_addstr(md, "| build | arch | status | time | reused | exit | reason | log |\n"
					  "|---|---|---|---|---|---|---|---|\n");
			FOR_EACH_OBJ(x, arr(h, "builds")) {
				strbuf_addstr(md, "| ");
				md_code(md, str(x, "program"));
				strbuf_addstr(md, " | ");
				md_cell_n(md, str(x, "arch"), 20);
				strbuf_addstr(md, " | ");
				cell_status(md, str(x, "status"));
				strbuf_addstr(md, " | ");
				cell_num(md, x, "duration_s", fmt_secs);
				strbuf_addstr(md, is_true(x, "reused") ? " | reused | " : " | no | ");
				cell_num(md, x, "exit_code", fmt_int);
				strbuf_addstr(md, " | ");
				md_cell(md, str(x, "reason"));
				strbuf_addstr(md, " | ");
				md_code(md, str(x, "log"));
				strbuf_addstr(md, " |\n");
			}
			strbuf_addstr(md, "\n");
		}
		if (cJSON_GetArraySize(arr(h, "steps"))) {
			strbuf_addstr(md, "| step | status | time | exit | reason | stdout / stderr |\n"
					  "|---|---|---|---|---|---|\n");
			FOR_EACH_OBJ(x, arr(h, "steps")) {
				strbuf_addstr(md, "| ");
				md_code(md, str(x, "id"));
				strbuf_addstr(md, " | ");
				cell_status(md, str(x, "status"));
				strbuf_addstr(md, " | ");
				cell_num(md, x, "duration_s", fmt_secs);
				if (num(x, "timeout_s", &v))
					strbuf_addf(md, " / %.0f s", v);
				strbuf_addstr(md, " | ");
				if (num(x, "signal", &v))
					strbuf_addf(md, "signal %.0f", v);
				else
					cell_num(md, x, "exit_code", fmt_int);
				strbuf_addstr(md, " | ");
				md_cell(md, str(x, "reason"));
				strbuf_addstr(md, " | ");
				md_code(md, str(x, "stdout_log"));
				strbuf_addstr(md, " ");
				md_code(md, str(x, "stderr_log"));
				strbuf_addstr(md, " |\n");
			}
			strbuf_addstr(md, "\n");
		}
	}
}

/* ==== 8. provenance ==== */

static void add_tool(struct strbuf *md, const cJSON *t)
{
	if (!str(t, "path") && !str(t, "version")) {
		strbuf_addstr(md, "not found");
		return;
	}
	md_cell_n(md, str(t, "version"), 60);
	strbuf_addstr(md, " ");
	md_code(md, str(t, "path"));
}

static void section_provenance(struct ctx *c)
{
	struct strbuf *md = c->md;
	const cJSON *p = obj(c->run, "provenance"), *git = obj(p, "git");
	const cJSON *files = arr(p, "files"), *h, *f;
	double v, total = 0;

	strbuf_addstr(md, "## Provenance\n\n");
	strbuf_addstr(md, "- **gpuorch** ");
	md_cell_n(md, str(p, "gpuorch_version"), 40);
	strbuf_addstr(md, "; command ");
	md_code(md, str(c->run, "command_line"));
	strbuf_addstr(md, "\n- **Source**: ");
	md_cell_n(md, str(p, "source"), 20);
	strbuf_addstr(md, ", commit ");
	md_code(md, str(git, "commit"));
	if (str(git, "branch")) {
		strbuf_addstr(md, " on ");
		md_code(md, str(git, "branch"));
	}
	if (is_true(git, "dirty")) {
		strbuf_addstr(md, ", **dirty** (diff sha256 ");
		if (str(git, "diff_sha256"))
			strbuf_addf(md, "`%.12s…`", str(git, "diff_sha256"));
		else
			strbuf_addstr(md, DASH);
		if (str(git, "diff_file")) {
			strbuf_addstr(md, ", saved as ");
			md_code(md, str(git, "diff_file"));
		}
		strbuf_addch(md, ')');
	} else if (git) {
		strbuf_addstr(md, ", clean");
	}
	if (str(git, "note")) {
		strbuf_addstr(md, " — ");
		md_cell(md, str(git, "note"));
	}
	strbuf_addstr(md, "\n- **Spec** sha256 ");
	md_code(md, str(c->exp, "spec_sha256"));
	strbuf_addstr(md, "\n- **Content id** ");
	md_code(md, str(p, "content_id"));
	if (num(p, "archive_bytes", &v)) {
		strbuf_addstr(md, " (archive ");
		fmt_bytes(md, v);
		strbuf_addch(md, ')');
	}
	strbuf_addstr(md, "\n- **Controller** ");
	md_cell(md, str(obj(p, "controller"), "user"));
	strbuf_addch(md, '@');
	md_cell(md, str(obj(p, "controller"), "hostname"));
	strbuf_addstr(md, "; started ");
	fmt_time(md, str(c->run, "started_at"));
	strbuf_addstr(md, ", ended ");
	fmt_time(md, str(c->run, "ended_at"));
	strbuf_addstr(md, "\n\n");

	FOR_EACH_OBJ(f, files)
		if (num(f, "size", &v))
			total += v;
	strbuf_addf(md, "<details><summary>%d file%s shipped (", cJSON_GetArraySize(files),
		    cJSON_GetArraySize(files) == 1 ? "" : "s");
	fmt_bytes(md, total);
	strbuf_addstr(md, ")</summary>\n\n");
	if (cJSON_GetArraySize(files)) {
		strbuf_addstr(md, "| file | size | sha256 |\n|---|---|---|\n");
		FOR_EACH_OBJ(f, files) {
			strbuf_addstr(md, "| ");
			md_code(md, str(f, "path"));
			strbuf_addstr(md, " | ");
			cell_num(md, f, "size", fmt_int);
			strbuf_addstr(md, " | ");
			md_code(md, str(f, "sha256"));
			strbuf_addstr(md, " |\n");
		}
	}
	strbuf_addstr(md, "\n</details>\n\n");

	if (!cJSON_GetArraySize(c->hosts))
		return;
	strbuf_addstr(md, "| host | GPU | UUID | CC | driver | clocks (SM / max / mem MHz) | "
			  "nvcc | ncu | compute-sanitizer | python | torch | host time |\n"
			  "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	FOR_EACH_OBJ(h, c->hosts) {
		const cJSON *info = obj(h, "info"), *ph;
		double t = 0;
		int nph = 0;
		strbuf_addstr(md, "| ");
		md_cell(md, host_name(h));
		if (str(info, "hostname")) {
			strbuf_addstr(md, " (");
			md_cell_n(md, str(info, "hostname"), 60);
			strbuf_addch(md, ')');
		}
		strbuf_addstr(md, " | ");
		md_cell(md, str(info, "gpu_name") ? str(info, "gpu_name")
			: str(info, "gpu_reason") ? str(info, "gpu_reason") : NULL);
		strbuf_addstr(md, " | ");
		md_code(md, str(info, "gpu_uuid"));
		strbuf_addstr(md, " | ");
		md_cell_n(md, str(info, "compute_cap"), 10);
		strbuf_addstr(md, " | ");
		md_cell_n(md, str(info, "driver"), 40);
		strbuf_addstr(md, " | ");
		cell_num(md, info, "sm_clock_mhz", fmt_int);
		strbuf_addstr(md, " / ");
		cell_num(md, info, "max_sm_clock_mhz", fmt_int);
		strbuf_addstr(md, " / ");
		cell_num(md, info, "mem_clock_mhz", fmt_int);
		strbuf_addstr(md, " | ");
		add_tool(md, obj(info, "nvcc"));
		strbuf_addstr(md, " | ");
		add_tool(md, obj(info, "ncu"));
		strbuf_addstr(md, " | ");
		add_tool(md, obj(info, "compute_sanitizer"));
		strbuf_addstr(md, " | ");
		add_tool(md, obj(info, "python"));
		strbuf_addstr(md, " | ");
		md_cell_n(md, str(info, "torch"), 40);
		strbuf_addstr(md, " | ");
		FOR_EACH_OBJ(ph, arr(h, "phases"))
			if (num(ph, "duration_s", &v) && nph++ < 1000)
				t += v;
		if (nph)
			fmt_secs(md, t);
		else
			strbuf_addstr(md, DASH);
		strbuf_addstr(md, " |\n");
	}
	strbuf_addstr(md, "\n");
}

/* ==== entry points ==== */

static void ctx_init(struct ctx *c, const cJSON *run, struct strbuf *md)
{
	memset(c, 0, sizeof(*c));
	c->run = cJSON_IsObject(run) ? run : NULL;
	c->exp = obj(c->run, "experiment");
	c->spec = obj(c->exp, "spec");
	c->hosts = arr(c->run, "hosts");
	/* the record's copies first; the spec's when the record has none */
	c->expected = arr(c->run, "expected") ? arr(c->run, "expected") : arr(c->spec, "expected");
	c->references = arr(c->run, "references") ? arr(c->run, "references")
						   : arr(c->spec, "references");
	c->baselines = arr(c->run, "baselines") ? arr(c->run, "baselines")
						 : arr(c->spec, "baselines");
	c->md = md;
	strbuf_init(&c->scratch, 0);
	judge_all(c);
}

static void ctx_release(struct ctx *c)
{
	int i;
	for (i = 0; i < c->nv; i++)
		strbuf_release(&c->v[i].why);
	free(c->v);
	strbuf_release(&c->scratch);
}

void report_render(const cJSON *run, struct strbuf *md)
{
	struct ctx c;
	ctx_init(&c, run, md);
	section_title(&c);
	section_unfinished(&c);
	section_gates(&c);
	section_glance(&c);
	section_config(&c);
	section_results(&c);
	section_sweeps(&c);
	section_profiles(&c);
	section_sanitizers(&c);
	section_ptxas(&c);
	section_expectations(&c);
	section_steps(&c);
	section_provenance(&c);
	strbuf_addstr(md, "---\n\n*Written by gpuorch from `run.json` alone; "
			  "`gpuorch report ");
	md_cell_n(md, str(c.run, "run_id"), 40);
	strbuf_addstr(md, "` writes it again. Raw output of every build and step is under "
			  "`logs/`.*\n");
	ctx_release(&c);
}

enum go_status report_write(const cJSON *run, const char *path, struct strbuf *err)
{
	struct strbuf md = STRBUF_INIT;
	enum go_status st;
	report_render(run, &md);
	st = fs_write_atomic(path, md.buf, md.len, err);
	strbuf_release(&md);
	return st;
}

void report_headline(const cJSON *run, struct strbuf *sb)
{
	struct ctx c;
	struct strbuf md = STRBUF_INIT;
	const cJSON *h, *s;
	int nh = 0, cnt[4];

	ctx_init(&c, run, &md);
	if (c.run && !streq(str(c.run, "status"), "complete"))
		strbuf_addstr(sb, "INCOMPLETE: ");
	FOR_EACH_OBJ(h, c.hosts) {
		const cJSON *first = NULL, *impossible = NULL;
		struct counts k = { 0 };
		double v;
		if (nh++ >= 3) {
			strbuf_addf(sb, "; +%d more host%s", cJSON_GetArraySize(c.hosts) - 3,
				    cJSON_GetArraySize(c.hosts) - 3 == 1 ? "" : "s");
			break;
		}
		strbuf_addstr(sb, nh > 1 ? "; " : "");
		strbuf_addstr(sb, host_name(h));
		strbuf_addstr(sb, ": ");
		FOR_EACH_OBJ(s, arr(h, "steps")) {
			count_status(&k, str(s, "status"));
			if (!streq(str(s, "kind"), "benchmark") || is_baseline(s) ||
			    !num(result_of(s), "timing.median_us", &v))
				continue;
			if (is_true(result_of(s), "model.impossible")) {
				if (!impossible)
					impossible = s;
			} else if (!first) {
				first = s;
			}
		}
		if (!first)
			first = impossible;   /* reported, but as what it is */
		if (first) {
			const cJSON *res = result_of(first);
			strbuf_addstr(sb, str(first, "program") ? str(first, "program") : "?");
			strbuf_addch(sb, ' ');
			strbuf_addstr(sb, str(first, "problem") ? str(first, "problem") : "?");
			strbuf_addstr(sb, " ");
			num(res, "timing.median_us", &v);
			fmt_us(sb, v);
			strbuf_addstr(sb, " us");
			if (is_true(res, "model.impossible")) {
				strbuf_addstr(sb, " IMPOSSIBLE (beats the roofline floor)");
			} else if (num(res, "model.tflops", &v) && v > 0) {
				strbuf_addstr(sb, ", ");
				fmt_tflops(sb, v);
				strbuf_addstr(sb, " TFLOPS");
			}
			if (!is_true(res, "model.impossible")) {
				struct strbuf sp = STRBUF_INIT;
				if (add_speedup(&sp, h, first, 0)) {
					strbuf_addstr(sb, ", ");
					strbuf_addstr(sb, sp.buf);
				}
				strbuf_release(&sp);
			}
			if (k.fail + k.timeout + k.killed + k.infra)
				strbuf_addf(sb, ", %d step%s did not pass", k.fail + k.timeout +
					    k.killed + k.infra,
					    k.fail + k.timeout + k.killed + k.infra == 1 ? "" : "s");
		} else if (!streq(str(h, "status"), "ok") && str(h, "error")) {
			strbuf_addstr(sb, str(h, "status") ? str(h, "status") : "failed");
			strbuf_addstr(sb, " (");
			strbuf_add(sb, str(h, "error"), strcspn(str(h, "error"), "\n") > 80
				   ? 80 : strcspn(str(h, "error"), "\n"));
			strbuf_addch(sb, ')');
		} else if (k.pass + k.fail + k.timeout + k.killed + k.infra + k.skipped + k.other) {
			add_counts(sb, &k, 0);
		} else {
			strbuf_addstr(sb, str(h, "status") ? str(h, "status") : "no result");
		}
	}
	if (!nh)
		strbuf_addstr(sb, c.run ? "no hosts" : "not a run record");
	count_verdicts(&c, NULL, cnt);
	if (cnt[V_MET] + cnt[V_MISSED])
		strbuf_addf(sb, " [expectations %d/%d met]", cnt[V_MET], cnt[V_MET] + cnt[V_MISSED]);
	strbuf_release(&md);
	ctx_release(&c);
}
