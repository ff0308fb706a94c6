/* test_metric.c -- unit tests of the metric vocabulary (core/metric.c) and the record reader (store/runread.c). */
#include "core/metric.h"
#include "store/runread.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "core/banned.h"

static const char *fmt(void (*fn)(struct strbuf *, double), double v)
{
	static char out[64];
	struct strbuf sb = STRBUF_INIT;
	fn(&sb, v);
	snprintf(out, sizeof(out), "%s", sb.buf);
	strbuf_release(&sb);
	return out;
}

static const char *fmt_metric(const char *metric, double v, int target)
{
	static char out[64];
	struct strbuf sb = STRBUF_INIT;
	if (target)
		metric_fmt_target(&sb, metric, v);
	else
		metric_fmt(&sb, metric, v);
	snprintf(out, sizeof(out), "%s", sb.buf);
	strbuf_release(&sb);
	return out;
}

static void vocabulary(void)
{
	const struct metric_def *d = metric_find("latency_us");
	CHECK(d && !strcmp(d->path, "timing.median_us") && !strcmp(d->unit, "us") &&
	      d->better == METRIC_LOWER_BETTER, "latency_us: the median, in us, lower is better",
	      "%s", d ? d->path : "(none)");
	CHECK(metric_find("timing.median_us") == d, "the result path finds the same entry", "no");
	d = metric_find("tflops");
	CHECK(d && !strcmp(d->path, "model.tflops") && d->better == METRIC_HIGHER_BETTER,
	      "tflops: model.tflops, higher is better", "%s", d ? d->path : "(none)");
	d = metric_find("gbps");
	CHECK(d && !strcmp(d->path, "model.gbps") && !strcmp(d->unit, "GB/s"), "gbps: model.gbps in GB/s",
	      "%s", d ? d->path : "(none)");
	CHECK(!strcmp(metric_result_path("max_abs"), "correctness.max_abs") &&
	      !strcmp(metric_result_path("rel_l2"), "correctness.rel_l2"),
	      "error metrics live under correctness.", "%s", metric_result_path("max_abs"));
	CHECK(!strcmp(metric_result_path("timing.p90_us"), "timing.p90_us") && !metric_find("speedup"),
	      "any other name is a dotted path of its own", "%s", metric_result_path("timing.p90_us"));
	CHECK(metric_is_error("max_rel") && metric_is_error("correctness.max_abs") &&
	      !metric_is_error("latency_us") && !metric_is_error("tflops"),
	      "error metrics: max_abs, max_rel, rel_l2, correctness.*", "no");
	CHECK(metric_is_timing("latency_us") && metric_is_timing("tflops") && metric_is_timing("gbps") &&
	      metric_is_timing("timing.p90_us") && metric_is_timing("model.bytes") &&
	      !metric_is_timing("max_abs") && !metric_is_timing("profile.x"),
	      "the impossible-timing rule covers timing.* and model.* (and their names)", "no");
	CHECK(metric_unit("timing.p90_us") && !strcmp(metric_unit("timing.p90_us"), "us") &&
	      !metric_unit("max_abs") && !metric_unit("timing.samples"),
	      "units: us for timing.*_us, none for errors", "%s", metric_unit("timing.p90_us"));
}

static void formatters(void)
{
	CHECK(!strcmp(fmt(metric_fmt_us, 5.5), "5.50"), "5.5 us prints 5.50 (as report.md always did)",
	      "'%s'", fmt(metric_fmt_us, 5.5));
	CHECK(!strcmp(fmt(metric_fmt_us, 0.81), "0.810") && !strcmp(fmt(metric_fmt_us, 110.12), "110.1") &&
	      !strcmp(fmt(metric_fmt_us, 4120.4), "4120") && !strcmp(fmt(metric_fmt_us, 41.3), "41.30"),
	      "microseconds keep 3-4 significant digits", "'%s' '%s' '%s'", fmt(metric_fmt_us, 0.81),
	      fmt(metric_fmt_us, 110.12), fmt(metric_fmt_us, 4120.4));
	CHECK(!strcmp(fmt(metric_fmt_us, NAN), "-"), "NaN prints a dash", "'%s'", fmt(metric_fmt_us, NAN));
	CHECK(!strcmp(fmt(metric_fmt_tflops, 312.44), "312.4") && !strcmp(fmt(metric_fmt_tflops, 0.0237), "0.024"),
	      "TFLOPS", "'%s' '%s'", fmt(metric_fmt_tflops, 312.44), fmt(metric_fmt_tflops, 0.0237));
	CHECK(!strcmp(fmt(metric_fmt_gbps, 2765.4), "2765") && !strcmp(fmt(metric_fmt_gbps, 27.66), "27.7"),
	      "GB/s", "'%s'", fmt(metric_fmt_gbps, 2765.4));
	CHECK(!strcmp(fmt_metric("latency_us", 41.3, 0), "41.30 us") &&
	      !strcmp(fmt_metric("timing.median_us", 41.3, 0), "41.30 us") &&
	      !strcmp(fmt_metric("tflops", 70.846, 0), "70.8 TFLOPS") &&
	      !strcmp(fmt_metric("max_abs", 0.0123456, 0), "0.0123"),
	      "a value with its unit, by name or by path", "'%s' '%s'", fmt_metric("latency_us", 41.3, 0),
	      fmt_metric("tflops", 70.846, 0));
	CHECK(!strcmp(fmt_metric("latency_us", 25, 1), "25 us") && !strcmp(fmt_metric("max_abs", 0.02, 1), "0.02"),
	      "a target as the author wrote it", "'%s'", fmt_metric("latency_us", 25, 1));
}

static void operators(void)
{
	int h = -1;
	CHECK(metric_op_holds("<", 1, 2, &h) && h == 1, "1 < 2", "h=%d", h);
	CHECK(metric_op_holds("<", 2, 2, &h) && h == 0, "not 2 < 2", "h=%d", h);
	CHECK(metric_op_holds("<=", 2, 2, &h) && h == 1, "2 <= 2", "h=%d", h);
	CHECK(metric_op_holds(">", 3, 2, &h) && h == 1, "3 > 2", "h=%d", h);
	CHECK(metric_op_holds(">", 2, 2, &h) && h == 0, "not 2 > 2", "h=%d", h);
	CHECK(metric_op_holds(">=", 2, 2, &h) && h == 1, "2 >= 2", "h=%d", h);
	CHECK(metric_op_holds("==", 0, 0, &h) && h == 1 && metric_op_holds("==", 0, 1, &h) && h == 0,
	      "== exactly", "h=%d", h);
	h = 7;
	CHECK(!metric_op_holds("=<", 1, 2, &h) && !metric_op_holds(NULL, 1, 2, &h) && h == 7,
	      "an unknown operator is refused, not judged", "h=%d", h);
}

static const char host_json[] =
	"{\"name\": \"h\", \"status\": \"ok\", \"steps\": ["
	" {\"kind\": \"correctness\", \"program\": \"k\", \"problem\": \"P\", \"status\": \"PASS\","
	"  \"result\": {\"correctness\": {\"max_abs\": 0.001}}},"
	" {\"kind\": \"benchmark\", \"program\": \"k\", \"problem\": \"P\", \"status\": \"PASS\","
	"  \"result\": {\"timing\": {\"median_us\": 41.3}, \"model\": {\"tflops\": 7.5},"
	"              \"correctness\": {\"max_abs\": 0.5, \"rel_l2\": 0.01}}},"
	" {\"kind\": \"benchmark\", \"program\": \"k\", \"problem\": \"Q\", \"status\": \"PASS\","
	"  \"result\": {\"timing\": {\"median_us\": 0.1}, \"model\": {\"tflops\": 900, \"impossible\": true}}},"
	" {\"kind\": \"benchmark\", \"program\": \"base\", \"problem\": \"P\", \"role\": \"baseline\", \"status\": \"PASS\"},"
	" {\"kind\": \"sanitize\", \"program\": \"k\", \"problem\": \"P\", \"tool\": \"racecheck\", \"status\": \"PASS\"},"
	" {\"kind\": \"sanitize\", \"program\": \"k\", \"problem\": \"P\", \"tool\": \"memcheck\", \"status\": \"FAIL\"},"
	" {\"kind\": \"benchmark\", \"program\": \"k\", \"problem\": \"R\", \"status\": \"FAIL\", \"result\": {}}"
	"]}";

static void reader(void)
{
	cJSON *h = cJSON_Parse(host_json);
	struct rr_measure m;
	const cJSON *s;
	double v = 0;

	s = rr_find_step(h, STEP_SANITIZE, "k", "P", NULL, "memcheck");
	CHECK(rr_streq(rr_str(s, "status"), "FAIL"), "find_step: the tool picks the memcheck step", "%s",
	      rr_str(s, "status"));
	s = rr_find_step(h, STEP_BENCHMARK, NULL, "P", "baseline", NULL);
	CHECK(rr_streq(rr_str(s, "program"), "base"), "find_step: role baseline", "%s", rr_str(s, "program"));
	s = rr_find_step(h, STEP_BENCHMARK, NULL, "P", "kernel", NULL);
	CHECK(rr_streq(rr_str(s, "program"), "k"), "find_step: a step naming no role is a kernel", "%s",
	      rr_str(s, "program"));
	CHECK(!rr_find_step(h, STEP_PROFILE, "k", NULL, NULL, NULL), "find_step: nothing matches, NULL", "found");

	rr_measure(h, "k", "P", "latency_us", &m);
	CHECK(m.has_value && m.value == 41.3 && !m.impossible && rr_streq(rr_str(m.step, "kind"), "benchmark"),
	      "latency_us reads the benchmark's median", "%g", m.value);
	rr_measure(h, "k", "P", "max_abs", &m);
	CHECK(m.has_value && m.value == 0.001 && rr_streq(rr_str(m.step, "kind"), "correctness"),
	      "max_abs reads the correctness step first", "%g from %s", m.value, rr_str(m.step, "kind"));
	rr_measure(h, "k", "P", "rel_l2", &m);
	CHECK(m.has_value && m.value == 0.01 && rr_streq(rr_str(m.step, "kind"), "benchmark"),
	      "... else the benchmark's own check", "%g", m.value);
	rr_measure(h, "k", "Q", "tflops", &m);
	CHECK(m.has_value && m.impossible, "an impossible timing is found, and struck out", "impossible=%d",
	      m.impossible);
	rr_measure(h, "k", "Q", "max_abs", &m);
	CHECK(!m.has_value && !m.impossible && !m.step && m.prefer == STEP_CORRECTNESS,
	      "no correctness step for Q: nothing, and which kind was wanted", "%s",
	      step_kind_name(m.prefer));
	rr_measure(h, "k", "R", "latency_us", &m);
	CHECK(!m.has_value && rr_streq(rr_str(m.step, "status"), "FAIL") &&
	      !strcmp(m.path, "timing.median_us"),
	      "a failed benchmark: no value, the step that failed, and the path looked for", "%s", m.path);
	CHECK(rr_num(h, "steps.1.result.timing.median_us", &v) && v == 41.3, "rr_num: a dotted path", "%g", v);
	CHECK(!rr_num(h, "steps.0.kind", &v) && isnan(rr_num_or_nan(h, "steps.9")),
	      "rr_num: a string or a missing field is absent", "no");
	CHECK(!rr_str(h, "steps") && !rr_arr(h, "name") && !rr_obj(NULL, "x"),
	      "mistyped fields read as absent", "no");
	cJSON_Delete(h);
}

static void directions(void)
{
	const char *unit = NULL;
	enum metric_better b = METRIC_BETTER_NONE;
	CHECK(metric_better_of("latency_us") == METRIC_LOWER_BETTER &&
	      metric_better_of("model.tflops") == METRIC_HIGHER_BETTER,
	      "the table's directions", "%d", metric_better_of("model.tflops"));
	CHECK(metric_better_of("kernel:sgemm.median_us") == METRIC_LOWER_BETTER &&
	      metric_better_of("kernel:sgemm.total_us") == METRIC_LOWER_BETTER &&
	      metric_better_of("kernel:sgemm.launches") == METRIC_BETTER_NONE &&
	      metric_better_of("kernel:sgemm.share_pct") == METRIC_BETTER_NONE,
	      "a kernel's times are lower-is-better; its counts and shares have no direction", "no");
	CHECK(metric_better_of("gflops") == METRIC_BETTER_NONE && metric_better_of(NULL) == METRIC_BETTER_NONE,
	      "an output figure's direction is not guessed from its name", "no");
	CHECK(metric_better_parse("higher") == METRIC_HIGHER_BETTER &&
	      metric_better_parse("lower") == METRIC_LOWER_BETTER &&
	      metric_better_parse("Higher") == METRIC_BETTER_NONE && metric_better_parse(NULL) == METRIC_BETTER_NONE,
	      "better parses higher and lower, nothing else", "no");
	CHECK(!strcmp(metric_better_name(METRIC_HIGHER_BETTER), "higher") &&
	      !strcmp(metric_better_name(METRIC_LOWER_BETTER), "lower") &&
	      !metric_better_name(METRIC_BETTER_NONE), "better names", "no");
	metric_named("gflops", "GFLOP/s", "higher", &unit, &b);
	CHECK(unit && !strcmp(unit, "GFLOP/s") && b == METRIC_HIGHER_BETTER,
	      "an output figure keeps its declared unit and direction", "%s", unit ? unit : "(none)");
	metric_named("kernel:saxpy.median_us", "ms", "higher", &unit, &b);
	CHECK(unit && !strcmp(unit, "us") && b == METRIC_LOWER_BETTER,
	      "a kernel figure takes the vocabulary's unit and direction", "%s", unit ? unit : "(none)");
}

/* issue 30 item 7: a program's own figure over the GPU's physical peak is found but not judged */
static void impossible_figure(void)
{
	cJSON *h = cJSON_Parse("{\"steps\":[{\"kind\":\"benchmark\",\"program\":\"b\",\"problem\":\"P\","
			       "\"result\":{\"gflops\":1e9,\"ok\":5,\"figures\":{\"gflops\":{\"value\":1e9,"
			       "\"unit\":\"GFLOP/s\",\"impossible\":true},\"ok\":{\"value\":5}}}}]}");
	struct rr_measure m;
	rr_measure(h, "b", "P", "gflops", &m);
	CHECK(m.has_value && m.impossible, "an output figure over its physical peak is struck out", "%d %d",
	      m.has_value, m.impossible);
	rr_measure(h, "b", "P", "ok", &m);
	CHECK(m.has_value && !m.impossible, "a figure within its peak is judged", "%d %d", m.has_value, m.impossible);
	cJSON_Delete(h);
}

/* rr_index_begin: every search answers as the linear one did, for every
 * combination of arguments, in each host, and a step's successors too */
static const char run_json[] =
	"{\"hosts\": [{\"name\": \"a\", \"steps\": ["
	" {\"kind\": \"benchmark\", \"program\": \"k\", \"problem\": \"Q\"},"
	" 7,"
	" {\"kind\": \"correctness\", \"program\": \"k\", \"problem\": \"P\"},"
	" {\"kind\": \"benchmark\", \"program\": \"base\", \"problem\": \"P\", \"role\": \"baseline\"},"
	" {\"kind\": \"benchmark\", \"program\": \"k\"},"
	" {\"kind\": \"benchmark\", \"program\": \"k\", \"problem\": \"P\"},"
	" {\"kind\": \"benchmark\", \"program\": \"base\", \"problem\": \"P\", \"role\": \"baseline\"},"
	" {\"kind\": \"sanitize\", \"program\": \"k\", \"problem\": \"P\", \"tool\": \"memcheck\"},"
	" {\"kind\": \"benchmark\", \"program\": \"k\", \"problem\": \"Q\"},"
	" {\"kind\": \"benchmark\", \"program\": \"k\", \"problem\": 3}"
	"]}, {\"name\": \"b\", \"steps\": ["
	" {\"kind\": \"benchmark\", \"program\": \"base\", \"problem\": \"Q\", \"role\": \"baseline\"},"
	" {\"kind\": \"benchmark\", \"program\": \"k\", \"problem\": \"Q\"}]},"
	" {\"name\": \"c\"}]}";

static int same_walk(const cJSON *h, enum step_kind kind, const char *prog, const char *prob,
		     const char *role, const char *tool, const cJSON **lin, int nlin)
{
	const cJSON *s = NULL;
	int i = 0;
	while ((s = rr_next_step(h, s, kind, prog, prob, role, tool))) {
		if (i >= nlin || lin[i] != s)
			return 0;
		i++;
	}
	return i == nlin;
}

static void indexed_reader(void)
{
	static const enum step_kind kinds[] = { STEP_ANY, STEP_BENCHMARK, STEP_CORRECTNESS, STEP_SANITIZE };
	static const char *const progs[] = { NULL, "k", "base" };
	static const char *const probs[] = { NULL, "P", "Q", "Z" };
	static const char *const roles[] = { NULL, "baseline", "kernel" };
	static const char *const tools[] = { NULL, "memcheck" };
	cJSON *run = cJSON_Parse(run_json), *other = cJSON_Parse(host_json);
	const cJSON *h;
	int a, b, c, d, e, combos = 0, bad = 0, walks_bad = 0;

	cJSON_ArrayForEach(h, cJSON_GetObjectItem(run, "hosts"))
	for (a = 0; a < 4; a++) for (b = 0; b < 3; b++) for (c = 0; c < 4; c++)
	for (d = 0; d < 3; d++) for (e = 0; e < 2; e++) {
		const cJSON *lin[16], *s = NULL, *found;
		int n = 0;
		while ((s = rr_next_step(h, s, kinds[a], progs[b], probs[c], roles[d], tools[e])) && n < 16)
			lin[n++] = s;
		rr_index_begin(run);
		rr_index_begin(run);   /* nested: the outer index holds */
		rr_index_end();
		found = rr_find_step(h, kinds[a], progs[b], probs[c], roles[d], tools[e]);
		bad += found != (n ? lin[0] : NULL);
		walks_bad += !same_walk(h, kinds[a], progs[b], probs[c], roles[d], tools[e], lin, n);
		rr_index_end();
		combos++;
	}
	CHECK(combos == 3 * 288 && !bad, "an open index finds what the linear search finds (3 hosts x 288 searches)",
	      "%d of %d differ", bad, combos);
	CHECK(!walks_bad, "an open index walks a problem's steps in record order, as the linear walk",
	      "%d of %d walks differ", walks_bad, combos);
	rr_index_begin(run);
	h = rr_find_step(other, STEP_BENCHMARK, NULL, "P", "baseline", NULL);
	CHECK(rr_streq(rr_str(h, "program"), "base"), "a host of another record is searched linearly",
	      "%s", rr_str(h, "program"));
	rr_index_end();
	rr_index_end();   /* one end too many: nothing to close */
	cJSON_Delete(run);
	cJSON_Delete(other);
}

int main(void)
{
	impossible_figure();
	vocabulary();
	directions();
	formatters();
	operators();
	reader();
	indexed_reader();
	return check_summary();
}
