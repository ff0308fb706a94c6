/* test_gates.c -- unit tests of gates.c: every kind of figure a gate reads,
 * unmeasured figures failing with the reason, GPU filters, and sweep rankings
 * (a wrong variant never wins). Profile and sanitizer figures come from the
 * real H100 captures in tests/fixtures/gpu-tools through ncu.c and sanitizer.c. */
#include "store/gates.h"
#include "core/fsutil.h"
#include "core/jsonutil.h"
#include "tools/ncu.h"
#include "tools/sanitizer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/banned.h"


static const char host_json[] =
	"{\"name\": \"h100\", \"status\": \"ok\", \"info\": {\"gpu_name\": \"NVIDIA H100 80GB HBM3\", \"arch\": \"sm_90a\"},"
	" \"builds\": ["
	"  {\"program\": \"attn\", \"arch\": \"sm_90a\", \"status\": \"PASS\", \"resources\": ["
	"    {\"kernel\": \"k1\", \"entry\": true, \"registers\": 128, \"spill_store_bytes\": 0},"
	"    {\"kernel\": \"k2\", \"entry\": true, \"registers\": 96, \"spill_store_bytes\": 16},"
	"    {\"kernel\": \"dev\", \"entry\": false, \"registers\": 255}]},"
	"  {\"program\": \"attn\", \"arch\": \"sm_89\", \"status\": \"PASS\", \"resources\": ["
	"    {\"kernel\": \"k1\", \"entry\": true, \"registers\": 200}]},"
	"  {\"program\": \"sw\", \"variant\": \"T=64\", \"arch\": \"sm_90a\", \"status\": \"PASS\", \"resources\": [{\"kernel\": \"s\", \"registers\": 64, \"spill_store_bytes\": 0, \"smem_bytes\": 1024}]},"
	"  {\"program\": \"sw\", \"variant\": \"T=128\", \"arch\": \"sm_90a\", \"status\": \"PASS\", \"resources\": [{\"kernel\": \"s\", \"registers\": 168, \"spill_store_bytes\": 8, \"smem_bytes\": 2048}]},"
	"  {\"program\": \"sw\", \"variant\": \"T=256\", \"arch\": \"sm_90a\", \"status\": \"FAIL\", \"reason\": \"ptxas error: too much shared data\", \"resources\": []},"
	"  {\"program\": \"sw\", \"variant\": \"T=32\", \"arch\": \"sm_90a\", \"status\": \"PASS\", \"resources\": []},"
	"  {\"program\": \"sw\", \"variant\": \"T=16\", \"arch\": \"sm_90a\", \"status\": \"PASS\", \"resources\": []}],"
	" \"steps\": ["
	"  {\"id\": \"correctness.attn.P\", \"kind\": \"correctness\", \"program\": \"attn\", \"problem\": \"P\", \"status\": \"PASS\", \"result\": {\"correctness\": {\"max_abs\": 0.004, \"rel_l2\": 0.0002}}},"
	"  {\"id\": \"benchmark.attn.P\", \"kind\": \"benchmark\", \"program\": \"attn\", \"problem\": \"P\", \"role\": \"kernel\", \"status\": \"PASS\", \"result\": {\"timing\": {\"median_us\": 40, \"p90_us\": 42}, \"model\": {\"tflops\": 300}}},"
	"  {\"id\": \"benchmark.sdpa.P\", \"kind\": \"benchmark\", \"program\": \"sdpa\", \"problem\": \"P\", \"role\": \"baseline\", \"status\": \"PASS\", \"result\": {\"timing\": {\"median_us\": 100}}},"
	"  {\"id\": \"benchmark.fake.P\", \"kind\": \"benchmark\", \"program\": \"fake\", \"problem\": \"P\", \"status\": \"PASS\", \"result\": {\"timing\": {\"median_us\": 0.1}, \"model\": {\"impossible\": true}}},"
	"  {\"id\": \"profile.attn.P\", \"kind\": \"profile\", \"program\": \"attn\", \"problem\": \"P\", \"status\": \"PASS\", \"result\": {}},"
	"  {\"id\": \"sanitize.attn.P.memcheck\", \"kind\": \"sanitize\", \"tool\": \"memcheck\", \"program\": \"attn\", \"problem\": \"P\", \"status\": \"FAIL\", \"result\": {}},"
	"  {\"id\": \"sanitize.attn.P.racecheck\", \"kind\": \"sanitize\", \"tool\": \"racecheck\", \"program\": \"attn\", \"problem\": \"P\", \"status\": \"SKIPPED\", \"reason\": \"compute-sanitizer not found on the host\", \"result\": null},"
	"  {\"id\": \"s1c\", \"kind\": \"sweep\", \"mode\": \"check\", \"variant\": \"T=64\", \"program\": \"sw\", \"problem\": \"P\", \"arch\": \"sm_90a\", \"status\": \"PASS\"},"
	"  {\"id\": \"s1b\", \"kind\": \"sweep\", \"mode\": \"bench\", \"variant\": \"T=64\", \"program\": \"sw\", \"problem\": \"P\", \"arch\": \"sm_90a\", \"status\": \"PASS\", \"result\": {\"timing\": {\"median_us\": 30}}},"
	"  {\"id\": \"s2c\", \"kind\": \"sweep\", \"mode\": \"check\", \"variant\": \"T=128\", \"program\": \"sw\", \"problem\": \"P\", \"arch\": \"sm_90a\", \"status\": \"PASS\"},"
	"  {\"id\": \"s2b\", \"kind\": \"sweep\", \"mode\": \"bench\", \"variant\": \"T=128\", \"program\": \"sw\", \"problem\": \"P\", \"arch\": \"sm_90a\", \"status\": \"PASS\", \"result\": {\"timing\": {\"median_us\": 20}}},"
	"  {\"id\": \"s3c\", \"kind\": \"sweep\", \"mode\": \"check\", \"variant\": \"T=256\", \"program\": \"sw\", \"problem\": \"P\", \"arch\": \"sm_90a\", \"status\": \"SKIPPED\", \"reason\": \"not built\"},"
	"  {\"id\": \"s4c\", \"kind\": \"sweep\", \"mode\": \"check\", \"variant\": \"T=32\", \"program\": \"sw\", \"problem\": \"P\", \"arch\": \"sm_90a\", \"status\": \"FAIL\", \"reason\": \"trial 1: rel_l2 0.5 > 0.01\"},"
	"  {\"id\": \"s4b\", \"kind\": \"sweep\", \"mode\": \"bench\", \"variant\": \"T=32\", \"program\": \"sw\", \"problem\": \"P\", \"arch\": \"sm_90a\", \"status\": \"PASS\", \"result\": {\"timing\": {\"median_us\": 5}}},"
	"  {\"id\": \"s5c\", \"kind\": \"sweep\", \"mode\": \"check\", \"variant\": \"T=16\", \"program\": \"sw\", \"problem\": \"P\", \"arch\": \"sm_90a\", \"status\": \"PASS\"},"
	"  {\"id\": \"s5b\", \"kind\": \"sweep\", \"mode\": \"bench\", \"variant\": \"T=16\", \"program\": \"sw\", \"problem\": \"P\", \"arch\": \"sm_90a\", \"status\": \"FAIL\", \"reason\": \"too many resources requested for launch\"}"
	" ]}";

static cJSON *load_host(void)
{
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	cJSON *h = cJSON_Parse(host_json), *prof = NULL, *san = NULL, *steps, *s;
	static char *const metrics[] = {
		"sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active",
		"launch__registers_per_thread", NULL };
	if (!h) {
		printf("# bad host JSON\n");
		return cJSON_CreateObject();
	}
	steps = cJSON_GetObjectItem(h, "steps");
	fs_read_file("tests/fixtures/gpu-tools/ncu-raw.csv", &text, &err);
	ncu_parse_csv(text.buf, text.len, metrics, &prof, &err);
	cJSON_ArrayForEach(s, steps)
		if (!strcmp(json_str(s, "kind"), "profile"))
			cJSON_AddItemToObject(cJSON_GetObjectItem(s, "result"), "profile", prof);
	strbuf_reset(&text);
	fs_read_file("tests/fixtures/gpu-tools/memcheck-oob1.txt", &text, &err);
	sanitizer_parse(text.buf, text.len, "memcheck", &san, &err);
	cJSON_ArrayForEach(s, steps)
		if (json_str(s, "tool") && !strcmp(json_str(s, "tool"), "memcheck"))
			cJSON_AddItemToObject(cJSON_GetObjectItem(s, "result"), "sanitizer", san);
	strbuf_release(&text);
	strbuf_release(&err);
	return h;
}

/* Judge one gate given as JSON on the host; returns its (first) result. */
static cJSON *judge(const cJSON *h, const char *gate, int *nfailed)
{
	cJSON *gates = cJSON_Parse(gate), *out;
	out = gates_evaluate_host(gates, h, nfailed);
	cJSON_Delete(gates);
	return out;
}

static void expect(const cJSON *h, const char *what, const char *gate, const char *verdict,
		   double measured, const char *reason_part)
{
	int nf = -1;
	cJSON *out = judge(h, gate, &nf);
	const cJSON *r = cJSON_GetArrayItem(out, 0);
	const char *v = json_str(r, "verdict"), *why = json_str(r, "reason");
	int ok = v && !strcmp(v, verdict) && nf == !strcmp(verdict, "FAIL");
	if (!isnan(measured))   /* a value is expected */
		ok = ok && json_has_num(r, "measured") && json_num(r, "measured", -1) == measured;
	else
		ok = ok && cJSON_IsNull(cJSON_GetObjectItem(r, "measured"));
	if (reason_part)
		ok = ok && why && strstr(why, reason_part);
	else
		ok = ok && !why;
	CHECK(ok, what, "verdict=%s measured=%g nfailed=%d reason=%s", v ? v : "-",
	      json_num(r, "measured", -1), nf, why ? why : "(null)");
	cJSON_Delete(out);
}

#define NONE NAN

static void test_gates(void)
{
	cJSON *h = load_host(), *out;
	int nf;

	expect(h, "latency gate passes", "[{\"program\": \"attn\", \"metric\": \"latency_us\", \"op\": \"<\", \"value\": 50}]",
	       "PASS", 40, NULL);
	expect(h, "latency gate fails with measured and threshold",
	       "[{\"program\": \"attn\", \"metric\": \"latency_us\", \"op\": \"<\", \"value\": 0.001}]",
	       "FAIL", 40, "measured 40 us, needs < 0.001");
	expect(h, "a dotted path into the result", "[{\"program\": \"attn\", \"metric\": \"timing.p90_us\", \"op\": \"<=\", \"value\": 42}]",
	       "PASS", 42, NULL);
	expect(h, "an error metric reads the correctness step", "[{\"program\": \"attn\", \"metric\": \"max_abs\", \"op\": \"<\", \"value\": 0.01}]",
	       "PASS", 0.004, NULL);
	expect(h, "speedup vs the measured baseline: 100 / 40", "[{\"program\": \"attn\", \"metric\": \"speedup\", \"op\": \">=\", \"value\": 2}]",
	       "PASS", 2.5, NULL);
	expect(h, "a real ncu counter: tensor pipe 2.425 % is not >= 40",
	       "[{\"program\": \"attn\", \"metric\": \"profile.sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active\", \"op\": \">=\", \"value\": 40, \"name\": \"tensor pipe >= 40%\"}]",
	       "FAIL", 2.425, "measured 2.425 %, needs >= 40");
	expect(h, "a counter the profile lacks is not measured: FAIL",
	       "[{\"program\": \"attn\", \"metric\": \"profile.dram__throughput.avg.pct_of_peak_sustained_elapsed\", \"op\": \">=\", \"value\": 60}]",
	       "FAIL", NONE, "not measured: ncu reported no value");
	expect(h, "memcheck errors from the real planted-bug log",
	       "[{\"program\": \"attn\", \"metric\": \"sanitizer.memcheck.errors\", \"op\": \"==\", \"value\": 0}]",
	       "FAIL", 3, "measured 3 errors, needs == 0");
	expect(h, "a skipped sanitizer step: FAIL, saying why",
	       "[{\"program\": \"attn\", \"metric\": \"sanitizer.racecheck.errors\", \"op\": \"==\", \"value\": 0}]",
	       "FAIL", NONE, "SKIPPED: compute-sanitizer not found on the host");
	expect(h, "ptxas registers: max over the kernels of the GPU's arch, device functions aside",
	       "[{\"program\": \"attn\", \"metric\": \"ptxas.registers\", \"op\": \"<=\", \"value\": 128}]",
	       "PASS", 128, NULL);
	expect(h, "ptxas spill stores", "[{\"program\": \"attn\", \"metric\": \"ptxas.spill_store_bytes\", \"op\": \"==\", \"value\": 0}]",
	       "FAIL", 16, "measured 16 bytes");
	/* Every operator at equality (the fixture's model.tflops is 300): a
	 * measured 300 >= 300 passes, 300 > 300 fails, and so on. */
	expect(h, "boundary: 300 >= 300 passes", "[{\"program\": \"attn\", \"metric\": \"tflops\", \"op\": \">=\", \"value\": 300}]",
	       "PASS", 300, NULL);
	expect(h, "boundary: 300 > 300 fails", "[{\"program\": \"attn\", \"metric\": \"tflops\", \"op\": \">\", \"value\": 300}]",
	       "FAIL", 300, "needs > 300");
	expect(h, "boundary: 300 <= 300 passes", "[{\"program\": \"attn\", \"metric\": \"tflops\", \"op\": \"<=\", \"value\": 300}]",
	       "PASS", 300, NULL);
	expect(h, "boundary: 300 < 300 fails", "[{\"program\": \"attn\", \"metric\": \"tflops\", \"op\": \"<\", \"value\": 300}]",
	       "FAIL", 300, "needs < 300");
	expect(h, "boundary: 300 == 300 passes", "[{\"program\": \"attn\", \"metric\": \"tflops\", \"op\": \"==\", \"value\": 300}]",
	       "PASS", 300, NULL);
	expect(h, "just past the boundary: 300 >= 300.5 fails", "[{\"program\": \"attn\", \"metric\": \"tflops\", \"op\": \">=\", \"value\": 300.5}]",
	       "FAIL", 300, "needs >= 300.5");
	expect(h, "just past the boundary: 300 <= 299.5 fails", "[{\"program\": \"attn\", \"metric\": \"tflops\", \"op\": \"<=\", \"value\": 299.5}]",
	       "FAIL", 300, "needs <= 299.5");
	expect(h, "just inside: 300 > 299.5 passes", "[{\"program\": \"attn\", \"metric\": \"tflops\", \"op\": \">\", \"value\": 299.5}]",
	       "PASS", 300, NULL);
	expect(h, "just inside: 300 < 300.5 passes", "[{\"program\": \"attn\", \"metric\": \"tflops\", \"op\": \"<\", \"value\": 300.5}]",
	       "PASS", 300, NULL);
	expect(h, "a GPU filter that does not match is not applicable",
	       "[{\"program\": \"attn\", \"gpu\": \"L4\", \"metric\": \"latency_us\", \"op\": \"<\", \"value\": 1}]",
	       "N/A", NONE, "is not 'L4'");
	expect(h, "an impossible timing is not a measurement",
	       "[{\"program\": \"fake\", \"metric\": \"latency_us\", \"op\": \"<\", \"value\": 1}]",
	       "FAIL", NONE, "roofline floor");
	expect(h, "a program that never ran", "[{\"program\": \"nope\", \"metric\": \"latency_us\", \"op\": \"<\", \"value\": 1}]",
	       "FAIL", NONE, "no benchmark step of 'nope' ran on this host");
	expect(h, "no baseline for a speedup", "[{\"program\": \"attn\", \"problem\": \"Q\", \"metric\": \"speedup\", \"op\": \">\", \"value\": 1}]",
	       "FAIL", NONE, "no benchmark step of 'attn' for problem 'Q'");
	expect(h, "a gate missing its value fails", "[{\"program\": \"attn\", \"metric\": \"latency_us\", \"op\": \"<\"}]",
	       "FAIL", NONE, "lacks program, metric, op or value");

	out = judge(h, "[{\"program\": \"attn\", \"metric\": \"latency_us\", \"op\": \"<\", \"value\": 50},"
		       "{\"program\": \"attn\", \"metric\": \"latency_us\", \"op\": \">\", \"value\": 50}]", &nf);
	CHECK(cJSON_GetArraySize(out) == 2 && nf == 1, "failures are counted", "n=%d nf=%d",
	      cJSON_GetArraySize(out), nf);
	{
		struct strbuf sb = STRBUF_INIT;
		gates_describe(cJSON_GetArrayItem(out, 1), &sb);
		CHECK(!strcmp(sb.buf, "❌ latency_us > 50 [attn, P]: measured 40 us, needs > 50"),
		      "describe: one line", "%s", sb.buf);
		strbuf_release(&sb);
	}
	cJSON_Delete(out);

	{
		cJSON *unreachable = cJSON_Parse("{\"name\": \"x\", \"status\": \"unreachable\", \"error\": \"connection refused\", \"steps\": []}");
		out = judge(unreachable, "[{\"program\": \"attn\", \"metric\": \"latency_us\", \"op\": \"<\", \"value\": 50}]", &nf);
		CHECK(nf == 1 && strstr(json_str(cJSON_GetArrayItem(out, 0), "reason"), "host unreachable: connection refused"),
		      "an unreachable host fails its gates, saying so", "%s",
		      json_str(cJSON_GetArrayItem(out, 0), "reason"));
		cJSON_Delete(out);
		cJSON_Delete(unreachable);
	}
	cJSON_Delete(h);
}

static void test_sweep(void)
{
	cJSON *h = load_host(), *sw = sweep_rank_host(h);
	const cJSON *r = cJSON_GetArrayItem(sw, 0), *v = cJSON_GetObjectItem(r, "variants");
#define VAR(i, k) json_str(cJSON_GetArrayItem(v, i), k)
	CHECK(cJSON_GetArraySize(sw) == 1 && !strcmp(json_str(r, "winner"), "T=128") &&
	      json_num(r, "winner_median_us", 0) == 20,
	      "the fastest correct variant wins; the faster wrong one does not", "%s",
	      json_str(r, "winner") ? json_str(r, "winner") : "(none)");
	CHECK(cJSON_GetArraySize(v) == 5 && !strcmp(VAR(0, "variant"), "T=128") &&
	      !strcmp(VAR(1, "variant"), "T=64") && json_num(cJSON_GetArrayItem(v, 1), "relative", 0) == 1.5 &&
	      json_num(cJSON_GetArrayItem(v, 0), "registers", 0) == 168 &&
	      json_num(cJSON_GetArrayItem(v, 0), "spill_store_bytes", 0) == 8,
	      "ranked by median, relative to the winner, with ptxas resources", "-");
	CHECK(!strcmp(VAR(2, "variant"), "T=256") && strstr(VAR(2, "reason"), "build FAIL: ptxas error") &&
	      !strcmp(VAR(3, "variant"), "T=32") && strstr(VAR(3, "reason"), "correctness FAIL: trial 1") &&
	      !strcmp(VAR(4, "variant"), "T=16") && strstr(VAR(4, "reason"), "benchmark FAIL: too many resources"),
	      "unranked variants keep spec order and say why", "%s | %s | %s", VAR(2, "reason"),
	      VAR(3, "reason"), VAR(4, "reason"));
#undef VAR
	cJSON_Delete(sw);
	cJSON_Delete(h);
}

/* a host whose sweep has two passing variants, A and B, with n samples each:
 * A's are a + (i % 7) * 0.01, B's b + (i % 7) * 0.01 (ties within each) */
static cJSON *two_variants(double a, double b, int n)
{
	cJSON *h = cJSON_CreateObject(), *steps = cJSON_AddArrayToObject(h, "steps");
	const char *label[2] = {"V=A", "V=B"};
	double base[2] = {a, b};
	int k, i;
	for (k = 0; k < 2; k++) {
		cJSON *st = cJSON_CreateObject(), *t, *sm;
		cJSON_AddStringToObject(st, "kind", "sweep");
		cJSON_AddStringToObject(st, "mode", "bench");
		cJSON_AddStringToObject(st, "variant", label[k]);
		cJSON_AddStringToObject(st, "program", "sw");
		cJSON_AddStringToObject(st, "problem", "P");
		cJSON_AddStringToObject(st, "status", "PASS");
		t = cJSON_AddObjectToObject(cJSON_AddObjectToObject(st, "result"), "timing");
		cJSON_AddNumberToObject(t, "median_us", base[k] + 0.03);   /* i % 7 == 3 is the middle */
		sm = cJSON_AddArrayToObject(t, "samples_us");
		for (i = 0; i < n; i++)
			cJSON_AddItemToArray(sm, cJSON_CreateNumber(base[k] + (i % 7) * 0.01));
		cJSON_AddItemToArray(steps, st);
	}
	return h;
}

/* the winner of a sweep of two variants, and whether it is clear */
static void tie_case(const char *name, double a, double b, int n, int want_clear, const char *want_vs)
{
	cJSON *h = two_variants(a, b, n), *sw = sweep_rank_host(h);
	const cJSON *r = cJSON_GetArrayItem(sw, 0);
	const cJSON *v1 = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "variants"), 1);
	const cJSON *clear = cJSON_GetObjectItem(r, "winner_clear");
	struct strbuf line = STRBUF_INIT;
	sweep_describe(r, &line);
	CHECK(json_str(r, "winner") && !strcmp(json_str(r, "winner"), a <= b ? "V=A" : "V=B") &&
	      cJSON_IsBool(clear) && cJSON_IsTrue(clear) == want_clear &&
	      json_str(v1, "vs_winner") && !strcmp(json_str(v1, "vs_winner"), want_vs) &&
	      (strstr(line.buf, "not a clear winner") != NULL) == !want_clear,
	      name, "winner %s clear %d vs %s: %s", json_str(r, "winner") ? json_str(r, "winner") : "-",
	      cJSON_IsTrue(clear), json_str(v1, "vs_winner") ? json_str(v1, "vs_winner") : "-", line.buf);
	strbuf_release(&line);
	cJSON_Delete(sw);
	cJSON_Delete(h);
}

/* A sweep's winner is clear only when compare's rule finds every other
 * variant slower: not on a lower median alone */
static void test_sweep_ties(void)
{
	tie_case("the same samples: the first in spec order has the lowest median, not a clear winner",
		 100, 100, 50, 0, "same");
	tie_case("20 % apart on 50 samples each: a clear winner", 100, 120, 50, 1, "slower");
	tie_case("the medians x1.05 apart exactly (significant): within the factor, the same",
		 99.97, 104.97, 50, 0, "same");
	tie_case("just beyond x1.05: slower", 99.97, 105.2, 50, 1, "slower");
	tie_case("20 % apart on 5 samples each: too few to tell, not a clear winner", 100, 120, 5, 0,
		 "insufficient data");
}

/* one passing sweep step (bench) of variant V with n samples base + (i % 7) *
 * 0.01, run on GPU uuid (NULL: the record does not say), into steps */
static void add_variant(cJSON *steps, const char *v, double base, int n, const char *uuid)
{
	cJSON *st = cJSON_CreateObject(), *t, *sm;
	int i;
	cJSON_AddStringToObject(st, "kind", "sweep");
	cJSON_AddStringToObject(st, "mode", "bench");
	cJSON_AddStringToObject(st, "variant", v);
	cJSON_AddStringToObject(st, "program", "sw");
	cJSON_AddStringToObject(st, "problem", "P");
	cJSON_AddStringToObject(st, "status", "PASS");
	if (uuid) {
		cJSON *g = cJSON_CreateObject();
		cJSON_AddStringToObject(g, "uuid", uuid);
		cJSON_AddItemToArray(cJSON_AddArrayToObject(st, "gpus"), g);
	}
	t = cJSON_AddObjectToObject(cJSON_AddObjectToObject(st, "result"), "timing");
	cJSON_AddNumberToObject(t, "median_us", base + 0.03);
	sm = cJSON_AddArrayToObject(t, "samples_us");
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(sm, cJSON_CreateNumber(base + (i % 7) * 0.01));
	cJSON_AddItemToArray(steps, st);
}

/* a variant's field of sweep sw, by label */
static const cJSON *variant_of(const cJSON *sw, const char *label)
{
	const cJSON *v;
	cJSON_ArrayForEach(v, cJSON_GetObjectItem(sw, "variants"))
		if (json_str(v, "variant") && !strcmp(json_str(v, "variant"), label))
			return v;
	return NULL;
}

/* Two variants 6 % apart: slower on one GPU (beyond x1.05), the same on two
 * instances of one model (within x1.08, issue 14's cross-instance rule);
 * exactly at 1.08 the same, just beyond it slower */
static void test_sweep_instances(void)
{
	struct { const char *name; double b; const char *ua, *ub, *want; double factor; } c[] = {
		{ "6 % apart on one GPU: slower", 106.0, "GPU-1", "GPU-1", "slower", 1.05 },
		{ "6 % apart on two GPU instances: the same (x1.08 across instances)", 106.0, "GPU-1", "GPU-2", "same", 1.08 },
		{ "x1.08 exactly across instances: the same", 107.97, "GPU-1", "GPU-2", "same", 1.08 },
		{ "just beyond x1.08 across instances: slower", 108.3, "GPU-1", "GPU-2", "slower", 1.08 },
		{ "no GPU recorded (an older record): one GPU's rule", 106.0, NULL, NULL, "slower", 1.05 },
	};
	size_t k;
	for (k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		cJSON *h = cJSON_CreateObject(), *steps = cJSON_AddArrayToObject(h, "steps"), *sw;
		const cJSON *vb;
		double f = 0;
		add_variant(steps, "V=A", 99.97, 50, c[k].ua);
		add_variant(steps, "V=B", c[k].b - 0.03, 50, c[k].ub);
		sw = sweep_rank_host(h);
		vb = variant_of(cJSON_GetArrayItem(sw, 0), "V=B");
		if (vb && cJSON_IsNumber(cJSON_GetObjectItem(vb, "factor_vs_winner")))
			f = cJSON_GetObjectItem(vb, "factor_vs_winner")->valuedouble;
		CHECK(vb && json_str(vb, "vs_winner") && !strcmp(json_str(vb, "vs_winner"), c[k].want) &&
		      f == c[k].factor && (!c[k].ub || (json_str(vb, "gpu_uuid") && !strcmp(json_str(vb, "gpu_uuid"), c[k].ub))),
		      c[k].name, "vs_winner %s, factor %g", vb && json_str(vb, "vs_winner") ? json_str(vb, "vs_winner") : "-", f);
		cJSON_Delete(sw);
		cJSON_Delete(h);
	}
}

/* run --spread: a sweep's variants dealt over two hosts of one pool are ranked
 * across the pool (the winner is the pool's fastest, not each host's); a
 * host of another pool and a host without "spread" are not in it */
static void test_sweep_pools(void)
{
	cJSON *hosts = cJSON_CreateArray(), *pools;
	const char *names[4] = { "a", "b", "c", "d" };
	const char *pool[4] = { "H100", "H100", "A100", NULL };
	const cJSON *p, *sw;
	int k, np = 0;
	for (k = 0; k < 4; k++) {
		cJSON *h = cJSON_CreateObject(), *steps;
		cJSON_AddStringToObject(h, "name", names[k]);
		if (pool[k])
			cJSON_AddStringToObject(cJSON_AddObjectToObject(h, "spread"), "pool", pool[k]);
		steps = cJSON_AddArrayToObject(h, "steps");
		cJSON_AddItemToArray(hosts, h);
		if (k == 0) {   /* a: V=1 (300) and V=3 (200) */
			add_variant(steps, "V=1", 300, 50, "GPU-a0");
			add_variant(steps, "V=3", 200, 50, "GPU-a1");
		} else if (k == 1) {   /* b: V=2 (100, the pool's fastest) and V=4 (400) */
			add_variant(steps, "V=2", 100, 50, "GPU-b0");
			add_variant(steps, "V=4", 400, 50, "GPU-b1");
		} else {   /* c and d: faster still, but not of the pool */
			add_variant(steps, "V=5", 10, 50, "GPU-c0");
		}
	}
	pools = sweep_rank_pools(hosts);
	cJSON_ArrayForEach(p, pools)
		np++;
	CHECK(np == 2, "two pools with a sweep (H100, A100); the host without spread in none", "%d", np);
	p = cJSON_GetArrayItem(pools, 0);
	sw = cJSON_GetArrayItem(cJSON_GetObjectItem(p, "sweeps"), 0);
	CHECK(json_str(p, "pool") && !strcmp(json_str(p, "pool"), "H100") &&
	      cJSON_GetArraySize(cJSON_GetObjectItem(p, "hosts")) == 2 &&
	      !strcmp(cJSON_GetArrayItem(cJSON_GetObjectItem(p, "hosts"), 1)->valuestring, "b"),
	      "the H100 pool is hosts a and b", "%s", json_str(p, "pool") ? json_str(p, "pool") : "-");
	CHECK(json_str(sw, "winner") && !strcmp(json_str(sw, "winner"), "V=2") &&
	      cJSON_GetArraySize(cJSON_GetObjectItem(sw, "variants")) == 4 &&
	      cJSON_IsTrue(cJSON_GetObjectItem(sw, "winner_clear")),
	      "the pool's winner is b's V=2 of all four variants, not a's V=3", "winner %s",
	      json_str(sw, "winner") ? json_str(sw, "winner") : "-");
	CHECK(variant_of(sw, "V=3") && cJSON_GetObjectItem(variant_of(sw, "V=3"), "rank")->valuedouble == 2 &&
	      variant_of(sw, "V=1") && cJSON_GetObjectItem(variant_of(sw, "V=1"), "rank")->valuedouble == 3 &&
	      !variant_of(sw, "V=5"),
	      "ranks across the pool: V=3 second, V=1 third; the A100 host's variant not among them", "-");
	cJSON_Delete(pools);
	cJSON_DeleteItemFromObject(cJSON_GetArrayItem(hosts, 0), "spread");
	cJSON_DeleteItemFromObject(cJSON_GetArrayItem(hosts, 1), "spread");
	cJSON_DeleteItemFromObject(cJSON_GetArrayItem(hosts, 2), "spread");
	pools = sweep_rank_pools(hosts);
	CHECK(cJSON_GetArraySize(pools) == 0, "without --spread: no pool", "%d", cJSON_GetArraySize(pools));
	cJSON_Delete(pools);
	cJSON_Delete(hosts);
}

/* issue 30 item 2: an all-NaN output has no error to judge: a gate on it fails with the count */
static void test_nan_gates(void)
{
	cJSON *h = cJSON_Parse(
		"{\"name\": \"h\", \"status\": \"ok\", \"steps\": ["
		" {\"id\": \"correctness.old.P\", \"kind\": \"correctness\", \"program\": \"old\", \"problem\": \"P\", \"status\": \"FAIL\","
		"  \"result\": {\"correctness\": {\"max_abs\": 0, \"max_rel\": 0, \"rel_l2\": 0, \"pass\": false,"
		"   \"trials\": [{\"max_abs\": 0, \"nonfinite\": 0, \"unwritten\": 0}, {\"max_abs\": 0, \"nonfinite\": 1048576, \"unwritten\": 0}]}}},"
		" {\"id\": \"correctness.new.P\", \"kind\": \"correctness\", \"program\": \"new\", \"problem\": \"P\", \"status\": \"FAIL\","
		"  \"result\": {\"correctness\": {\"max_abs\": null, \"rel_l2\": null, \"pass\": false, \"nonfinite\": 1048576,"
		"   \"nan\": 1048576, \"unwritten\": 0, \"outputs\": 1048576}}},"
		" {\"id\": \"correctness.one.P\", \"kind\": \"correctness\", \"program\": \"one\", \"problem\": \"P\", \"status\": \"FAIL\","
		"  \"result\": {\"correctness\": {\"max_abs\": null, \"rel_l2\": null, \"pass\": false, \"nonfinite\": 1,"
		"   \"nan\": 0, \"unwritten\": 2, \"outputs\": 4096}}},"
		" {\"id\": \"correctness.ok.P\", \"kind\": \"correctness\", \"program\": \"ok\", \"problem\": \"P\", \"status\": \"PASS\","
		"  \"result\": {\"correctness\": {\"max_abs\": 0, \"rel_l2\": 0, \"pass\": true, \"nonfinite\": 0,"
		"   \"nan\": 0, \"unwritten\": 0, \"outputs\": 4096}}}"
		"]}");
	expect(h, "an older record's all-NaN trial fails rel_l2 < 0.01 (its rel_l2 0 is not an error)",
	       "[{\"program\": \"old\", \"metric\": \"rel_l2\", \"op\": \"<\", \"value\": 0.01}]", "FAIL", NONE,
	       "not measured: NaN/Inf in 1,048,576 outputs: the outputs are not all numbers");
	expect(h, "all NaN: the gate fails with the count",
	       "[{\"program\": \"new\", \"metric\": \"max_abs\", \"op\": \"<\", \"value\": 0.01}]", "FAIL", NONE,
	       "NaN in 1,048,576 of 1,048,576 outputs");
	expect(h, "one Inf and two unwritten outputs fail an error gate",
	       "[{\"program\": \"one\", \"metric\": \"correctness.rel_l2\", \"op\": \"<=\", \"value\": 1}]", "FAIL", NONE,
	       "Inf in 1 of 4,096 outputs; 2 of 4,096 outputs never written");
	expect(h, "counts of 0: the error is judged",
	       "[{\"program\": \"ok\", \"metric\": \"rel_l2\", \"op\": \"<\", \"value\": 0.01}]", "PASS", 0, NULL);
	expect(h, "a timing metric is not struck by a check's counts",
	       "[{\"program\": \"new\", \"metric\": \"latency_us\", \"op\": \"<\", \"value\": 1}]", "FAIL", NONE,
	       "not measured");
	cJSON_Delete(h);
}

/* issue 32: gates of a --spread run. A gate x problem whose rows one host
 * ran is that host's; one whose kernel and baseline ran on two hosts of a
 * pool is judged once for the pool, naming both rows; a host of no pool
 * judges everything, as before. */
static void test_pool_gates(void)
{
	cJSON *hosts = cJSON_Parse(
		"[{\"name\": \"a\", \"status\": \"ok\", \"spread\": {\"pool\": \"H100\"}, \"steps\": ["
		"  {\"id\": \"benchmark.k.q\", \"kind\": \"benchmark\", \"program\": \"k\", \"problem\": \"q\", \"role\": \"kernel\","
		"   \"status\": \"PASS\", \"gpus\": [{\"index\": 0, \"uuid\": \"GPU-a0\"}], \"result\": {\"timing\": {\"median_us\": 50}}},"
		"  {\"id\": \"benchmark.k.r\", \"kind\": \"benchmark\", \"program\": \"k\", \"problem\": \"r\", \"role\": \"kernel\","
		"   \"status\": \"PASS\", \"result\": {\"timing\": {\"median_us\": 10}}},"
		"  {\"id\": \"benchmark.base.r\", \"kind\": \"benchmark\", \"program\": \"base\", \"problem\": \"r\", \"role\": \"baseline\","
		"   \"status\": \"PASS\", \"result\": {\"timing\": {\"median_us\": 30}}}]},"
		" {\"name\": \"b\", \"status\": \"ok\", \"spread\": {\"pool\": \"H100\"}, \"steps\": ["
		"  {\"id\": \"benchmark.base.q\", \"kind\": \"benchmark\", \"program\": \"base\", \"problem\": \"q\", \"role\": \"baseline\","
		"   \"status\": \"PASS\", \"gpus\": [{\"index\": 0, \"uuid\": \"GPU-b0\"}], \"result\": {\"timing\": {\"median_us\": 100}}}]}]");
	cJSON *gates = cJSON_Parse(
		"[{\"program\": \"k\", \"metric\": \"speedup\", \"op\": \">=\", \"value\": 2},"
		" {\"program\": \"k\", \"problem\": \"q\", \"metric\": \"latency_us\", \"op\": \"<\", \"value\": 60}]");
	cJSON *ga = gates_evaluate_host(gates, cJSON_GetArrayItem(hosts, 0), NULL);
	cJSON *gb = gates_evaluate_host(gates, cJSON_GetArrayItem(hosts, 1), NULL);
	cJSON *pools, *pg, *rows;
	int nf = -1, i;
	char got[256] = "";

	cJSON_ArrayForEach(pg, ga) {
		size_t n = strlen(got);
		snprintf(got + n, sizeof(got) - n, "%s %s %s; ", json_str(pg, "metric"), json_str(pg, "problem"),
			 json_str(pg, "verdict"));
	}
	CHECK(!strcmp(got, "speedup r PASS; latency_us q PASS; "),
	      "host a judges the speedup of r (kernel and baseline both here) and q's latency, not q's speedup", "%s", got);
	CHECK(cJSON_GetArraySize(gb) == 0, "host b ran no step of k: it judges none of k's gates (none fails as not run)",
	      "%d", cJSON_GetArraySize(gb));
	pools = gates_evaluate_pools(gates, hosts, &nf);
	pg = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(pools, 0), "gates"), 0);
	rows = cJSON_GetObjectItem(pg, "rows");
	CHECK(cJSON_GetArraySize(pools) == 1 && cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(pools, 0), "gates")) == 1 &&
	      json_str(pg, "problem") && !strcmp(json_str(pg, "problem"), "q") && !strcmp(json_str(pg, "verdict"), "PASS") &&
	      cJSON_GetObjectItem(pg, "measured")->valuedouble == 2 && nf == 0,
	      "the pool judges q's speedup once: 100 / 50 = 2, exactly at >= 2", "%s", pg ? json_str(pg, "verdict") : "-");
	CHECK(cJSON_GetArraySize(rows) == 2 && !strcmp(json_str(cJSON_GetArrayItem(rows, 0), "host"), "a") &&
	      !strcmp(json_str(cJSON_GetArrayItem(rows, 0), "step"), "benchmark.k.q") &&
	      !strcmp(json_str(cJSON_GetArrayItem(rows, 1), "host"), "b") &&
	      !strcmp(json_str(cJSON_GetArrayItem(rows, 1), "step"), "benchmark.base.q") &&
	      !strcmp(json_str(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 1), "gpus"), 0), "uuid"), "GPU-b0"),
	      "its rows: the kernel on a, the baseline on b (with its GPU)", "%d rows", cJSON_GetArraySize(rows));
	cJSON_Delete(pools);
	cJSON_Delete(ga);
	cJSON_Delete(gb);
	/* without --spread every host judges every gate, as before: b fails k's as not run */
	for (i = 0; i < 2; i++)
		cJSON_DeleteItemFromObject(cJSON_GetArrayItem(hosts, i), "spread");
	gb = gates_evaluate_host(gates, cJSON_GetArrayItem(hosts, 1), &nf);
	pools = gates_evaluate_pools(gates, hosts, NULL);
	CHECK(cJSON_GetArraySize(gb) == 2 && nf == 2 && cJSON_GetArraySize(pools) == 0,
	      "without --spread: host b fails both of k's gates, and there is no pool", "%d gates, %d failed", cJSON_GetArraySize(gb), nf);
	cJSON_Delete(pools);
	cJSON_Delete(gb);
	cJSON_Delete(gates);
	cJSON_Delete(hosts);
}

/* run --spread: a host dealt only a sweep's variants of a program holds none
 * of the program's gates (a gate reads neither a variant's steps nor its
 * builds): it judges none and fails none as not run there */
static void test_pool_gates_variants_only(void)
{
	cJSON *h = cJSON_Parse(
		"{\"name\": \"b\", \"status\": \"ok\", \"spread\": {\"pool\": \"H100\"},"
		" \"builds\": [{\"program\": \"k\", \"variant\": \"TILE=128\", \"arch\": \"sm_90a\", \"status\": \"PASS\","
		"   \"resources\": [{\"kernel\": \"k\", \"spill_store_bytes\": 0}]}],"
		" \"steps\": [{\"id\": \"sweep.k.P.v2\", \"kind\": \"sweep\", \"program\": \"k\", \"problem\": \"P\","
		"   \"variant\": \"TILE=128\", \"role\": \"kernel\", \"status\": \"PASS\","
		"   \"result\": {\"timing\": {\"median_us\": 10}, \"correctness\": {\"rel_l2\": 0.001}}}]}");
	cJSON *gates = cJSON_Parse(
		"[{\"program\": \"k\", \"metric\": \"rel_l2\", \"op\": \"<\", \"value\": 0.01},"
		" {\"program\": \"k\", \"metric\": \"ptxas.spill_store_bytes\", \"op\": \"==\", \"value\": 0},"
		" {\"program\": \"k\", \"problem\": \"P\", \"metric\": \"latency_us\", \"op\": \"<\", \"value\": 100}]");
	int nf = -1;
	cJSON *out = gates_evaluate_host(gates, h, &nf);
	CHECK(cJSON_GetArraySize(out) == 0 && nf == 0,
	      "a spread host with only a sweep's variants of k judges none of k's gates (correctness, ptxas, latency)",
	      "%d gates, %d failed", cJSON_GetArraySize(out), nf);
	cJSON_Delete(out);
	cJSON_Delete(gates);
	cJSON_Delete(h);
}

int main(void)
{
	test_gates();
	test_nan_gates();
	test_pool_gates();
	test_pool_gates_variants_only();
	test_sweep();
	test_sweep_ties();
	test_sweep_instances();
	test_sweep_pools();
	return check_summary();
}
