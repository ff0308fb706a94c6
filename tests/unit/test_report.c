/* test_report.c -- unit tests of report.c on the hand-made records in tests/fixtures/runs.
 *
 * Run from the repository root. Besides the checks it writes the rendered
 * fixtures to build/tests/sample-report*.md for a person to read. */
#include "report/report.h"
#include "core/fsutil.h"
#include "core/jsonutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "core/banned.h"


/* The rendered text must contain needle. */
#define HAS(md, needle, what) CHECK(strstr((md), (needle)) != NULL, what, "missing: %s", needle)
#define HASNT(md, needle, what) CHECK(strstr((md), (needle)) == NULL, what, "present: %s", needle)

static cJSON *load(const char *name)
{
	struct strbuf err = STRBUF_INIT;
	char *path = xstrfmt("tests/fixtures/runs/%s", name);
	cJSON *j = NULL;
	if (json_load_file(path, &j, GO_ERR_IO, &err) != GO_OK) {
		printf("# cannot load %s: %s\n", path, err.buf);
		n_failed++;
		j = cJSON_CreateObject();
	}
	free(path);
	strbuf_release(&err);
	return j;
}

static char *render(const cJSON *run)
{
	struct strbuf md = STRBUF_INIT;
	report_render(run, &md);
	return strbuf_detach(&md, NULL);
}

static char *headline(const cJSON *run)
{
	struct strbuf sb = STRBUF_INIT;
	report_headline(run, &sb);
	return strbuf_detach(&sb, NULL);
}

static void save_sample(const char *name, const char *md)
{
	struct strbuf err = STRBUF_INIT;
	char *path = xstrfmt("build/tests/%s", name);
	if (fs_mkdir_p("build/tests", 0755, &err) != GO_OK ||
	    fs_write_atomic(path, md, strlen(md), &err) != GO_OK)
		printf("# cannot write %s: %s\n", path, err.buf);
	else
		printf("# wrote %s\n", path);
	free(path);
	strbuf_release(&err);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (; (hay = strstr(hay, needle)); hay += strlen(needle))
		n++;
	return n;
}

static void test_pass(void)
{
	cJSON *run = load("pass-2host.json");
	char *before = cJSON_PrintUnformatted(run);
	char *md = render(run), *md2 = render(run);
	char *after = cJSON_PrintUnformatted(run);
	char *hl = headline(run);

	save_sample("sample-report.md", md);
	CHECK(!strcmp(md, md2), "rendering is deterministic", "two renders differ");
	CHECK(!strcmp(before, after), "rendering does not change the record", "record changed");
	CHECK(!strncmp(md, "# Phase 3: WMMA attention forward\n", 34), "title is the phase",
	      "%.60s", md);
	HAS(md, "**Outcome**: ✅ **passed** (exit 0)", "outcome passed");
	HAS(md, "`20261122-051000-a1b2c3`", "run id in the header");
	HAS(md, "2026-11-22 05:10:00 UTC", "start date readable");
	HASNT(md, "did not finish", "a complete run is not called unfinished");
	/* results */
	HAS(md, "| `attn_wmma` | kernel | ✅ PASS | **41.30** | 1980 | 40.97–41.75 | 0.30% | 200 (cv) | 26.0 "
		"| 102 | 34% DRAM | **1.14×** vs `sdpa` |", "L4 result row: median, its SM clock, spread, CV, n, speedup");
	HAS(md, "| `sdpa` | baseline | ✅ PASS | 47.10 |", "baseline row");
	HAS(md, "FA3 450.0 / 312.1 TFLOPS = 1.44× remaining", "gap to the FA3 reference on H100");
	HAS(md, "FA3 450.0 / 109.6 TFLOPS = 4.11× remaining", "gap per problem");
	HAS(md, "PyTorch SDPA 47.10 us (seed 001, Oct 2025, L4): ours 41.30 us, 1.14× faster",
	    "spec baseline from the seed compared on L4");
	CHECK(count(md, "PyTorch SDPA 47.10 us") == 2, "spec baseline only for L4 and its problem",
	      "count %d", count(md, "PyTorch SDPA 47.10 us"));
	HAS(md, "| `attn_wmma` | correctness | ✅ PASS | 0.00195 | 0.0078 | 0.00021 | "
		"max_abs ≤ 0.02, rel_l2 ≤ 0.01 | ✅ pass (3 trials) |", "correctness row");
	/* expectations */
	HAS(md, "| `attn_wmma` latency_us < 25 us on L4 (2x SDPA) | l4 | B1-H16-S512-D64 | 41.30 us "
		"| ❌ **missed** (1.65× off) |", "L4 latency expectation missed");
	HAS(md, "| `attn_wmma` tflops > 300 TFLOPS on H100 | h100 | B1-H8-S4096-D64 | 312.1 TFLOPS "
		"| ✅ met |", "H100 TFLOPS expectation met on the large problem");
	HAS(md, "| h100 | B1-H16-S512-D64 | 109.6 TFLOPS | ❌ **missed** (2.74× off) |",
	    "and missed on the small one");
	HAS(md, "| `attn_wmma` latency_us < 25 us on L4 (2x SDPA) | h100 | B1-H16-S512-D64 | — | "
		"➖ not applicable — the GPU is not 'L4' |", "GPU mismatch: not applicable");
	HAS(md, "⚪ not measured: no benchmark step of this program ran for this problem",
	    "expectation on a program that never ran");
	CHECK(count(md, "| ✅ met |") == 5, "five expectations met", "count %d",
	      count(md, "| ✅ met |"));
	HAS(md, "**Missed expectations**\n\n- ❌ `attn_wmma` latency_us < 25 us on l4 (B1-H16-S512-D64): "
		"measured 41.30 us\n", "missed expectations named at a glance");
	HAS(md, "**Expectations**: 5 ✅ met · 2 ❌ missed · 2 ⚪ not measured · 3 not applicable",
	    "expectation totals");
	/* ptxas */
	HAS(md, "| `attn_wmma` | `attn_wmma<64>` | sm_89 | **255** (cap) | 34.0 KiB | 16 B | "
		"⚠️ **16 B / 16 B** | 392 B | 1 | l4 |", "spills highlighted");
	HAS(md, "- ⚠️ register **spills** in `attn_wmma<64>`", "spill alert at a glance");
	/* steps and provenance */
	HAS(md, "Ship: content already on the host (reused), 0 B sent", "ship reuse");
	HAS(md, "Ship: 70.0 KiB sent", "ship bytes");
	HAS(md, "**dirty** (diff sha256 `aa11bb22cc33…`, saved as `source.diff`)", "dirty tree");
	HAS(md, "<details><summary>4 files shipped (59.2 KiB)</summary>", "files collapsed");
	HAS(md, "`GPU-5a1e4c2b-9d3f-4e6a-8b7c-0d1e2f3a4b5c` | 9.0 | 580.159.04 | 1980 / 1980 / 2619 | "
		"13.0.88 `/usr/local/cuda/bin/nvcc`", "host provenance");
	/* the kernel on the largest problem (most model FLOPs), not the first one run */
	CHECK(!strcmp(hl, "h100: attn_wmma B1-H8-S4096-D64 110.1 us, 312.1 TFLOPS, 1.14× vs sdpa; "
		      "l4: attn_wmma B1-H8-S4096-D64 420.0 us, 81.8 TFLOPS, 1.14× vs sdpa "
		      "[expectations 5/7 met]"), "headline: the largest problem's kernel", "got '%s'", hl);
	{
		/* the spec names its headline: that program on that problem */
		cJSON *sp = (cJSON *)json_path(run, "experiment.spec"), *o;
		char *hl2;
		if (sp) {
			o = cJSON_AddObjectToObject(sp, "headline");
			cJSON_AddStringToObject(o, "program", "attn_wmma");
			cJSON_AddStringToObject(o, "problem", "B1-H16-S512-D64");
			hl2 = headline(run);
			CHECK(!strncmp(hl2, "h100: attn_wmma B1-H16-S512-D64 9.80 us", 39),
			      "headline: the spec's \"headline\" wins", "got '%s'", hl2);
			free(hl2);
			cJSON_DeleteItemFromObject(sp, "headline");
		} else {
			CHECK(0, "the fixture has experiment.spec", "%s", "");
		}
	}
	free(before);
	free(after);
	free(md);
	free(md2);
	free(hl);
	cJSON_Delete(run);
}

static void test_failed(void)
{
	cJSON *run = load("failed-host.json");
	char *md = render(run), *hl = headline(run);

	save_sample("sample-report-failed.md", md);
	HAS(md, "**Outcome**: ❌ **failed** (exit 1)", "outcome failed");
	HAS(md, "| l4 | — | ❌ unreachable: cannot connect to '10.0.0.7:22'", "unreachable host at a glance");
	HAS(md, "**Steps**: 2 PASS · **2 FAIL**", "step counts");
	HAS(md, "- **h100** `attn_wmma` B1-H16-S512-D64: ❌ FAIL — exit 1: CUDA error: an illegal "
		"memory access was encountered", "failed benchmark and its reason at a glance");
	HAS(md, "⚠️ **IMPOSSIBLE timing**: 0.810 us, 1325.6 TFLOPS beats the physical bound of 1.25 us (NVIDIA H100 80GB HBM3 (cc 9.0): 132 SMs",
	    "impossible timing is a loud warning, not a result");
	HASNT(md, "2.95× ahead", "no comparison drawn from an impossible timing");
	HAS(md, "| 154% DRAM ⚠️ **IMPOSSIBLE** | not trusted |", "impossible in the table");
	HAS(md, "⚪ not measured: the timing beats the roofline floor (impossible); not counted",
	    "an impossible timing does not meet an expectation");
	HAS(md, "| h100 | B1-H16-S512-D64 | 0.53 | ❌ **missed** (26.50× off): step FAIL |",
	    "error expectation judged from the failing correctness step");
	HAS(md, "| `attn_wmma` tflops > 300 TFLOPS on H100 | h100 | B1-H16-S512-D64 | — | ⚪ not "
		"measured: step FAIL: exit 1: CUDA error", "timing expectation: crashed benchmark");
	HAS(md, "⚪ not measured: host unreachable", "unreachable host: not measured");
	HAS(md, "- ❌ **wrong results** on h100: `attn_wmma` B1-H16-S512-D64 max_abs 0.53",
	    "wrong results alert");
	HAS(md, "7 samples dropped for clock throttling", "dropped samples alert");
	HAS(md, "stopped by `max_samples` before the spread settled", "stop rule shown");
	HAS(md, "No results: ❌ unreachable — cannot connect", "host without results explained");
	HAS(md, "| `attn_wmma` | sm_90a | ✅ PASS | 0.0 s | reused |", "reused build");
	CHECK(strstr(hl, "l4: unreachable (cannot connect to '10.0.0.7:22'") &&
	      strstr(hl, "h100: attn_fast B1-H16-S512-D64 0.810 us IMPOSSIBLE (beats the physical "
			 "bound), 2 steps did not pass;") && !strstr(hl, "13.83"),
	      "headline names the failures", "got '%s'", hl);
	free(md);
	free(hl);
	{
		/* a result from 2026-11-27 on: judged against the device's physical
		 * bound, which the report names with how it was computed */
		const cJSON *h = cJSON_GetArrayItem(cJSON_GetObjectItem(run, "hosts"), 0), *st;
		int marked = 0;
		cJSON_ArrayForEach(st, cJSON_GetObjectItem(h, "steps")) {
			cJSON *model = (cJSON *)json_path(st, "result.model");
			if (!model || !cJSON_IsTrue(cJSON_GetObjectItem(model, "impossible")))
				continue;
			cJSON_AddNumberToObject(model, "bound_us", 1.02);
			cJSON_AddStringToObject(model, "bound_source",
						"device: 132 SMs x 4096 FP16 tensor FLOP/clk x 1980 MHz");
			marked++;
		}
		md = render(run);
		CHECK(marked >= 1 && strstr(md, "0.810 us, 1325.6 TFLOPS beats the physical bound of 1.02 us "
					      "(device: 132 SMs x 4096 FP16 tensor FLOP/clk x 1980 MHz); the "
					      "measurement is wrong, not fast"),
		      "an impossible timing names the physical bound it beat", "marked %d", marked);
		CHECK(strstr(md, "median 0.810 us is below the physical bound of 1.02 us (device: 132 SMs"),
		      "the alert names it too", "%s", "");
		CHECK(!strstr(md, "roofline floor of 1.25"), "not the measured peaks' floor", "%s", "");
		free(md);
	}
	cJSON_Delete(run);
}

static void test_incomplete(void)
{
	cJSON *run = load("incomplete.json");
	char *md = render(run), *hl = headline(run);

	save_sample("sample-report-incomplete.md", md);
	HAS(md, "**Outcome**: ⚠️ **incomplete: the run did not finish** (exit 130)",
	    "outcome says the run did not finish");
	HAS(md, "> ⚠️ **This run did not finish.** The record's status is `incomplete` (interrupted).",
	    "loud notice");
	HAS(md, "> - **h200** never completed (status `pending`); last phase build PASS; 1 of 6 "
		"planned steps recorded; never completed: correctness `attn_wmma` B1-H8-S4096-D64, "
		"benchmark `attn_wmma` B1-H16-S512-D64", "which host and which steps never completed");
	HASNT(md, "**h100** never completed", "a finished host is not listed");
	HAS(md, "| h200 | B1-H16-S512-D64 | — | ⚪ not measured: the run stopped before the benchmark "
		"step ran |", "expectation on a step that never ran");
	HAS(md, "| `attn_wmma` max_abs < 0.02 | h200 | B1-H16-S512-D64 | 0.00195 | ✅ met |",
	    "what did run is still judged");
	HAS(md, "| 1 | h100, h200 |", "one ptxas row for the same build on two hosts");
	CHECK(!strncmp(hl, "INCOMPLETE: ", 12), "headline says incomplete", "got '%s'", hl);
	free(md);
	free(hl);

	cJSON_ReplaceItemInObject(run, "status", cJSON_CreateString("running"));
	md = render(run);
	HAS(md, "The record's status is `running` (the controller was killed, or is still running)",
	    "a record still marked running is not finished either");
	free(md);
	cJSON_Delete(run);
}

static void test_wrong_types(void)
{
	cJSON *run = load("wrong-types.json");
	char *md = render(run), *hl = headline(run);
	cJSON *arr;
	HAS(md, "# gpuorch run\n", "no phase: a generic title");
	HAS(md, "h\\|1&lt;b>", "names escaped for tables and HTML");
	HAS(md, "`p\\|q`", "pipes escaped in code spans");
	CHECK(count(md, "\n### ") == 2 * 2 + 0, "non-object hosts are skipped", "host headers %d",
	      count(md, "\n### "));
	HAS(md, "⚪ not measured: unknown operator '~'", "unknown operator reported");
	HAS(md, "| `p\\|q` timing.p90_us <= 10 us | h\\|1&lt;b> | q\\`x | 3.00 us | ✅ met |",
	    "dotted metric path read from the result");
	CHECK(hl[0] != '\0', "headline of a strange record is not empty", "empty");
	free(md);
	free(hl);
	cJSON_Delete(run);

	md = render(NULL);
	hl = headline(NULL);
	CHECK(!strncmp(md, "# gpuorch run", 13) && strstr(hl, "not a run record"),
	      "NULL record renders", "%s / %s", md, hl);
	free(md);
	free(hl);
	arr = cJSON_CreateArray();
	md = render(arr);
	CHECK(strstr(md, "No hosts were recorded") != NULL, "array instead of an object renders",
	      "bad");
	free(md);
	cJSON_Delete(arr);
}

/* ---- a little fuzzing: every node of a real record replaced by a wrong type ---- */

struct slot {
	cJSON *parent, *item;
};

static void collect(cJSON *parent, struct slot **v, int *n, int *alloc)
{
	cJSON *x;
	for (x = parent->child; x; x = x->next) {
		if (*n == *alloc) {
			*alloc = *alloc ? 2 * *alloc : 256;
			*v = xrealloc(*v, (size_t)*alloc * sizeof(**v));
		}
		(*v)[*n].parent = parent;
		(*v)[*n].item = x;
		(*n)++;
		collect(x, v, n, alloc);
	}
}

static cJSON *replacement(int k)
{
	switch (k % 8) {
	case 0: return cJSON_CreateNull();
	case 1: return cJSON_CreateNumber(-1e308);
	case 2: return cJSON_CreateString("a|b<c>\n`d`");
	case 3: return cJSON_CreateArray();
	case 4: return cJSON_CreateObject();
	case 5: return cJSON_CreateTrue();
	case 6: return cJSON_CreateNumber(0);
	default: return NULL; /* delete the node */
	}
}

static void fuzz_one(const char *name, int stride)
{
	cJSON *run = load(name);
	struct slot *v = NULL;
	int n = 0, alloc = 0, i, ok = 1, renders = 0;
	char *what;

	collect(run, &v, &n, &alloc);
	free(v);
	for (i = 0; i < n; i++) {
		cJSON *copy = cJSON_Duplicate(run, 1);
		struct slot *cv = NULL;
		int cn = 0, calloc_ = 0;
		cJSON *r;
		char *md, *hl;
		collect(copy, &cv, &cn, &calloc_);
		r = replacement(i * stride + i / 8);
		if (r) {
			if (cJSON_IsArray(cv[i].parent) || !cv[i].item->string)
				cJSON_ReplaceItemViaPointer(cv[i].parent, cv[i].item, r);
			else
				cJSON_ReplaceItemInObjectCaseSensitive(cv[i].parent, cv[i].item->string, r);
		} else {
			cJSON_Delete(cJSON_DetachItemViaPointer(cv[i].parent, cv[i].item));
		}
		free(cv);
		md = render(copy);
		hl = headline(copy);
		ok = ok && !strncmp(md, "# ", 2) && strstr(md, "## Provenance");
		renders++;
		free(md);
		free(hl);
		cJSON_Delete(copy);
	}
	what = xstrfmt("%s: %d mutated records render whole", name, renders);
	CHECK(ok && renders > 100, what, "renders %d", renders);
	free(what);
	cJSON_Delete(run);
}

static void test_write(void)
{
	cJSON *run = load("pass-2host.json");
	struct strbuf err = STRBUF_INIT, back = STRBUF_INIT;
	char tmp[] = "/tmp/test_report.XXXXXX";
	char *path, *md = render(run);
	enum go_status st;

	if (!mkdtemp(tmp)) {
		CHECK(0, "mkdtemp", "failed");
		return;
	}
	path = xstrfmt("%s/report.md", tmp);
	st = report_write(run, path, &err);
	CHECK(st == GO_OK && fs_read_file(path, &back, &err) == GO_OK && !strcmp(back.buf, md),
	      "report_write writes what report_render renders", "st=%d %s", st, err.buf);
	free(path);
	path = xstrfmt("%s/no/such/dir/report.md", tmp);
	st = report_write(run, path, &err);
	CHECK(st == GO_ERR_IO && err.len, "report_write into a missing directory fails", "st=%d", st);
	free(path);
	fs_remove_tree(tmp);
	strbuf_release(&err);
	strbuf_release(&back);
	free(md);
	cJSON_Delete(run);
}

/* The "Medians per problem" charts: one per host and problem with two programs or more, linked
 * from the report and written beside it, fastest bar on top, the baseline grey and marked. */
static void test_charts(void)
{
	cJSON *run = load("pass-2host.json"), *h, *s;
	struct strbuf err = STRBUF_INIT, svg = STRBUF_INIT;
	char tmp[] = "/tmp/test_charts.XXXXXX";
	char *md = render(run), *path, *chart;
	const char *k, *b;
	double mk = 0, mb = 0;

	HAS(md, "## Medians per problem", "the charts section");
	HAS(md, "![B1-H16-S512-D64 on h100](charts/h100-B1-H16-S512-D64.svg)", "a chart linked per host and problem");
	CHECK(count(md, "](charts/") == 4, "4 charts: 2 hosts x 2 problems with a kernel and a baseline", "%d",
	      count(md, "](charts/"));
	if (!mkdtemp(tmp)) {
		CHECK(0, "mkdtemp", "failed");
		return;
	}
	path = xstrfmt("%s/report.md", tmp);
	CHECK(report_write(run, path, &err) == GO_OK, "report_write with charts", "%s", err.buf);
	chart = xstrfmt("%s/charts/h100-B1-H16-S512-D64.svg", tmp);
	CHECK(fs_read_file(chart, &svg, &err) == GO_OK, "the chart file is written beside report.md", "%s", err.buf);
	/* the two medians of that problem on h100, to know which bar comes first */
	h = cJSON_GetArrayItem(cJSON_GetObjectItem(run, "hosts"), 0);
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(h, "steps")) {
		double m = json_num(json_path(s, "result.timing"), "median_us", 0);
		if (strcmp(json_str(s, "kind"), "benchmark") || strcmp(json_str(s, "problem"), "B1-H16-S512-D64"))
			continue;
		if (!strcmp(json_str(s, "program"), "sdpa"))
			mb = m;
		else
			mk = m;
	}
	k = strstr(svg.buf, ">attn_wmma<");
	b = strstr(svg.buf, ">sdpa (baseline)<");
	CHECK(k && b && mk > 0 && mb > 0 && ((mk < mb) == (k < b)),
	      "both bars named, the baseline marked, the faster one first", "k=%p b=%p mk=%g mb=%g", (void *)k,
	      (void *)b, mk, mb);
	CHECK(strstr(svg.buf, "stroke-dasharray") && strstr(svg.buf, "#999999"),
	      "the baseline's bar grey and its median a dashed line", "%s", "");
	/* a problem where only one program was timed (the baseline's step failed) has no chart */
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(h, "steps"))
		if (!strcmp(json_str(s, "program"), "sdpa") && !strcmp(json_str(s, "problem"), "B1-H16-S512-D64"))
			cJSON_ReplaceItemInObject(s, "status", cJSON_CreateString("FAIL"));
	free(md);
	md = render(run);
	CHECK(count(md, "](charts/") == 3 && !strstr(md, "charts/h100-B1-H16-S512-D64.svg"),
	      "a failed benchmark is not drawn; one program alone makes no chart", "%d", count(md, "](charts/"));
	free(path);
	free(chart);
	fs_remove_tree(tmp);
	/* a speedup whose p10-p90 ranges overlap both ways is flagged; a tight one is not */
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(h, "steps"))
		if (!strcmp(json_str(s, "program"), "sdpa") && !strcmp(json_str(s, "problem"), "B1-H16-S512-D64"))
			cJSON_ReplaceItemInObject(s, "status", cJSON_CreateString("PASS"));
	free(md);
	md = render(run);
	HASNT(md, "inconclusive", "tight spreads: no speedup flagged");
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(h, "steps"))
		if (!strcmp(json_str(s, "program"), "sdpa") && !strcmp(json_str(s, "problem"), "B1-H16-S512-D64")) {
			cJSON *t = (cJSON *)json_path(s, "result.timing");
			double m = json_num(t, "median_us", 0);
			cJSON_ReplaceItemInObject(t, "p10_us", cJSON_CreateNumber(m * 0.3));
			cJSON_ReplaceItemInObject(t, "p90_us", cJSON_CreateNumber(m * 3));
		}
	free(md);
	md = render(run);
	CHECK(count(md, "inconclusive") >= 1 && strstr(md, "⚠️ spread "),
	      "a baseline spread over 0.3x-3x of its median: the speedup flagged inconclusive", "%d",
	      count(md, "inconclusive"));
	strbuf_release(&err);
	strbuf_release(&svg);
	free(md);
	cJSON_Delete(run);
}

/* The first kernel benchmark of the first host, turned into a program off
 * the harness (docs/byo.md): no timing, no model, the figures it printed. */
static cJSON *byo_step(cJSON *run, const char *figures_json)
{
	cJSON *h = cJSON_GetArrayItem(cJSON_GetObjectItem(run, "hosts"), 0), *s, *res;
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(h, "steps")) {
		const char *role = json_str(s, "role");
		if (!strcmp(json_str(s, "kind") ? json_str(s, "kind") : "", "benchmark") &&
		    (!role || !strcmp(role, "kernel")))
			break;
	}
	res = cJSON_GetObjectItem(s, "result");
	cJSON_DeleteItemFromObject(res, "timing");
	cJSON_DeleteItemFromObject(res, "model");
	cJSON_AddItemToObject(res, "figures", cJSON_Parse(figures_json));
	return s;
}

static void test_glance_figures(void)
{
	cJSON *run = load("pass-2host.json");
	char *md, *md2;

	/* the headline is the first higher-is-better figure, not the first one */
	byo_step(run, "{\"ms_bs256\": {\"value\": 0.0318, \"unit\": \"ms\", \"better\": \"lower\"},"
		      " \"gbps_bs256\": {\"value\": 1582.4, \"unit\": \"GB/s\", \"better\": \"higher\"},"
		      " \"blocks\": {\"value\": 96}}");
	md = render(run);
	md2 = render(run);
	CHECK(!strcmp(md, md2), "a glance with figures is deterministic", "two renders differ");
	HAS(md, "| host | kernel | problem | median | TFLOPS or figure | vs baseline (speedup) | "
		"of reference speed | correct |", "glance header names the figure column");
	HAS(md, " | — | gbps_bs256 **1582 GB/s** (+2 more) | ", "headline figure: the first higher-is-better, "
	    "the others counted");
	HAS(md, ": ms_bs256 **0.0318 ms**, gbps_bs256 **1582 GB/s**, blocks **96** — ",
	    "every figure in the words below the table");
	free(md);
	free(md2);
	cJSON_Delete(run);

	/* none is better higher: the first figure; one figure: nothing more */
	run = load("pass-2host.json");
	byo_step(run, "{\"seconds\": {\"value\": 0.0027, \"unit\": \"s\", \"better\": \"lower\"}}");
	md = render(run);
	HAS(md, " | — | seconds **0.0027 s** | ", "a lone figure is the headline");
	HASNT(md, "seconds **0.0027 s** (+", "a lone figure has no 'more'");
	free(md);
	cJSON_Delete(run);
}

/* The Cluster jobs section of a cluster whose build job ended NODE_FAIL and whose step job ended
 * PREEMPTED, each requeued once by gpuorch (docs/slurm.md "Requeue"). */
static void test_cluster_requeue(void)
{
	cJSON *run = cJSON_Parse(
		"{\"schema\": \"gpuorch.run/1\", \"run_id\": \"r\", \"status\": \"complete\", \"outcome\": \"passed\","
		" \"hosts\": [{\"name\": \"hpc\", \"status\": \"ok\","
		"  \"scheduler\": {\"kind\": \"slurm\", \"url\": \"http://login1:6820\", \"api_version\": \"v0.0.40\","
		"   \"partition\": \"gpu\", \"max_jobs\": 4, \"jobs\": [{\"name\": \"b\", \"job_id\": 1},"
		"   {\"name\": \"s\", \"job_id\": 2}, {\"name\": \"b\", \"job_id\": 3, \"attempt\": 2},"
		"   {\"name\": \"s\", \"job_id\": 4}, {\"name\": \"s\", \"job_id\": 5, \"attempt\": 2}]},"
		"  \"builds\": [{\"program\": \"attn\", \"variant\": \"BM=64\", \"status\": \"PASS\","
		"   \"slurm\": {\"job_id\": 3, \"state\": \"COMPLETED\", \"node\": \"g2\", \"requeued\": 1,"
		"    \"attempts\": [{\"job_id\": 1, \"state\": \"NODE_FAIL\", \"node\": \"g1\"},"
		"     {\"job_id\": 3, \"state\": \"COMPLETED\", \"node\": \"g2\"}]}}],"
		"  \"steps\": [{\"id\": \"benchmark.attn.small\", \"status\": \"INFRA_ERROR\","
		"   \"slurm\": {\"job_id\": 5, \"state\": \"PREEMPTED\", \"node\": \"g2\", \"requeued\": 1,"
		"    \"attempts\": [{\"job_id\": 4, \"state\": \"PREEMPTED\", \"node\": \"g2\"},"
		"     {\"job_id\": 5, \"state\": \"PREEMPTED\", \"node\": \"g2\"}]}},"
		"   {\"id\": \"check.attn.small\", \"status\": \"PASS\","
		"    \"slurm\": {\"job_id\": 6, \"state\": \"COMPLETED\", \"node\": \"g2\", \"requeued\": 0}}]}]}");
	char *md = render(run);
	HAS(md, "5 jobs (1 builds, 2 steps, 2 requeued)", "cluster: the requeued jobs counted, not the one never requeued");
	HAS(md, "Requeued by gpuorch (Slurm ended the job PREEMPTED or NODE_FAIL): build `attn` `BM=64` job 1 "
		"NODE_FAIL on g1, then job 3 COMPLETED; `benchmark.attn.small` job 4 PREEMPTED on g2, then job 5 "
		"PREEMPTED.\n", "cluster: each requeued build and step with its attempts");
	HASNT(md, "`check.attn.small` job", "cluster: a step never requeued is not listed");
	free(md);
	cJSON_Delete(run);
}

/* An expectation on "speedup" reads the figure the gates read: the
 * baseline's median over the kernel's (11.2 / 9.8 = 1.143 on the H100 host),
 * not a "speedup" field of the result, which no result has */
static void test_expected_speedup(void)
{
	cJSON *run = load("pass-2host.json");
	cJSON *exp = cJSON_GetObjectItem(run, "expected");
	char *md;
	cJSON_AddItemToArray(exp, cJSON_Parse("{\"program\": \"attn_wmma\", \"problem\": \"B1-H16-S512-D64\", "
					       "\"gpu\": \"H100\", \"metric\": \"speedup\", \"op\": \">=\", "
					       "\"value\": 1.14, \"note\": \"exp-met\"}"));
	cJSON_AddItemToArray(exp, cJSON_Parse("{\"program\": \"attn_wmma\", \"problem\": \"B1-H16-S512-D64\", "
					       "\"gpu\": \"H100\", \"metric\": \"speedup\", \"op\": \">=\", "
					       "\"value\": 1.15, \"note\": \"exp-missed\"}"));
	md = render(run);
	{
		const char *a = strstr(md, "(exp-met)"), *b = strstr(md, "(exp-missed)");
		const char *ea = a ? strchr(a, '\n') : NULL, *eb = b ? strchr(b, '\n') : NULL;
		char la[512] = "", lb[512] = "";
		if (a && ea)
			snprintf(la, sizeof(la), "%.*s", (int)(ea - a), a);
		if (b && eb)
			snprintf(lb, sizeof(lb), "%.*s", (int)(eb - b), b);
		CHECK(strstr(la, "| 1.14") && strstr(la, "✅ met"),
		      "an expected speedup of 1.14 is met by 11.2 / 9.8", "%s", la);
		CHECK(strstr(lb, "| 1.14") && strstr(lb, "❌ **missed**"),
		      "an expected speedup of 1.15 is missed by it (measured, not 'not measured')", "%s", lb);
	}
	free(md);
	cJSON_Delete(run);
}

/* issue 30 item 2: an all-NaN output shows its count, never an error of 0 */
static void test_nan_outputs(void)
{
	cJSON *run = load("failed-host.json");
	cJSON *h = cJSON_GetArrayItem(cJSON_GetObjectItem(run, "hosts"), 0), *s;
	char *md;
	int n = 0;
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(h, "steps")) {
		cJSON *corr = (cJSON *)json_path(s, "result.correctness");
		if (!corr || cJSON_IsTrue(cJSON_GetObjectItem(corr, "pass")))
			continue;
		cJSON_ReplaceItemInObject(corr, "max_abs", cJSON_CreateNull());
		cJSON_ReplaceItemInObject(corr, "rel_l2", cJSON_CreateNull());
		cJSON_AddNumberToObject(corr, "nonfinite", 1048576);
		cJSON_AddNumberToObject(corr, "nan", 1048576);
		cJSON_AddNumberToObject(corr, "unwritten", 0);
		cJSON_AddNumberToObject(corr, "outputs", 1048576);
		n++;
	}
	md = render(run);
	CHECK(n >= 1, "the fixture has a failed check", "n=%d", n);
	HAS(md, "| ❌ NaN in 1,048,576 of 1,048,576 outputs |", "the correctness table shows the count");
	HAS(md, "- ❌ **wrong results** on h100: `attn_wmma` B1-H16-S512-D64 NaN in 1,048,576 of "
		"1,048,576 outputs", "the alert shows the count");
	HASNT(md, "B1-H16-S512-D64 max_abs", "no error beside it in the alert");
	HAS(md, "| h100 | B1-H16-S512-D64 | — | ❌ **missed**: NaN in 1,048,576 of 1,048,576 outputs |",
	    "an error expectation on it is missed with the count, not judged on an error");
	free(md);
	cJSON_Delete(run);
}

/* issue 30 item 10: each timed row's SM clock beside its latency; a row far from its host's others flagged */
static void set_clock(cJSON *h, int nth, double mhz, const char *reasons)
{
	cJSON *s;
	int i = 0;
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(h, "steps")) {
		cJSON *t = (cJSON *)json_path(s, "result.timing");
		if (!t || strcmp(json_str(s, "kind"), "benchmark") || i++ != nth)
			continue;
		cJSON_ReplaceItemInObject(t, "sm_clock_mhz_median", cJSON_CreateNumber(mhz));
		cJSON_DeleteItemFromObject(t, "throttle_reasons");
		if (reasons)
			cJSON_AddItemToObject(t, "throttle_reasons", cJSON_Parse(reasons));
	}
}

static void test_row_clock(void)
{
	cJSON *run = load("pass-2host.json");
	cJSON *h = cJSON_GetArrayItem(cJSON_GetObjectItem(run, "hosts"), 0);
	char *md;
	/* four timed rows at 1980 MHz; one of them at 1605 */
	set_clock(h, 0, 1605, "[\"sw_power_cap\", \"hw_slowdown\"]");
	md = render(run);
	save_sample("sample-report-clock.md", md);
	HAS(md, "| median (us) | SM clock (MHz) | p10–p90 (us) |", "the results table has a clock column");
	HAS(md, "| ⚠️ 1605 (-19% vs 1980) sw_power_cap, hw_slowdown | ",
	    "a row timed far from the others is flagged, with its throttle reasons");
	HAS(md, "was timed at a median SM clock of 1605 MHz, 19% below the 1980 MHz median of this "
		"host's timed rows: its latency is not comparable with theirs", "and said under the table");
	free(md);
	set_clock(h, 0, 1881, NULL);   /* exactly 5 % under 1980: not flagged */
	md = render(run);
	HAS(md, "| **9.80** | 1881 | ", "exactly 5 % off is not flagged");
	HASNT(md, "timed at a median SM clock of 1881", "nor said");
	free(md);
	set_clock(h, 0, 2080, NULL);   /* 5.05 % over: flagged */
	md = render(run);
	HAS(md, "| ⚠️ 2080 (+5% vs 1980) | ", "just over 5 % is");
	free(md);
	cJSON_Delete(run);
}

/* issue 30 item 11: a cloud cost names its currency, and its time is what
 * gpuorch observed (start requested to stop confirmed), not the bill */
static void test_cloud_cost_labels(void)
{
	cJSON *run = load("pass-2host.json");
	char *md;
	cJSON_AddItemToObject(cJSON_GetObjectItem(run, "provenance"), "instances",
			      cJSON_Parse("{\"box\":{\"provider\":\"aws\",\"state_before\":\"stopped\","
					  "\"started_by_gpuorch\":true,\"after_run\":\"stop\",\"price_per_hour\":3.6,"
					  "\"currency\":\"USD\",\"billing_minimum_s\":60,\"observed_s\":10,"
					  "\"billed_s\":10,\"cost\":0.06}}"));
	md = render(run);
	HAS(md, "| Observed (start to stop) |", "the column says observed, not billed");
	HAS(md, "| 10 s observed (billed at least 60 s) | 3.6 USD | 0.0600 USD |",
	    "observed time, the provider's minimum, the currency");
	HAS(md, "**Cost of the instances gpuorch started**: 0.0600 USD, estimated", "the total names its currency");
	HASNT(md, "| Billed |", "no column claims to be the bill");
	free(md);
	cJSON_Delete(run);
}

/* issue 30 items 7, 11, 15: "% of peak" is of the GPU's physical peak for the
 * datatype the program declares (and of DRAM), labelled, on every GPU --
 * never the FP16 tensor peak of an FP32 kernel, never an unlabelled "speed
 * of light", and an H200 has one too. */
static void test_pct_of_peak(void)
{
	cJSON *run = load("pass-2host.json"), *progs, *h, *info;
	char *md;
	progs = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(run, "experiment"), "spec"), "programs");
	cJSON_AddStringToObject(cJSON_GetObjectItem(progs, "attn_wmma"), "datatype", "fp16");
	md = render(run);
	save_sample("sample-report-peaks.md", md);
	HASNT(md, "speed of light", "no unlabelled speed of light");
	HAS(md, "**109.6 TFLOPS** (10 % of the FP16/BF16 peak), 428 GB/s (13 % of the DRAM peak)",
	    "the key line labels each %: the declared datatype's peak and DRAM's");
	HAS(md, "| 109.6 | 428 | 10% FP16/BF16 · 13% DRAM |", "the table cell says which peak");
	HAS(md, "| 95.9 | 374 | 11% DRAM |", "a program declaring no datatype: no compute % of peak");
	free(md);
	/* FP32 declared: held to the FP32 peak (30.3 TFLOPS on an L4, 66.9 on an H100), not FP16's */
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(progs, "attn_wmma"), "datatype", cJSON_CreateString("fp32"));
	md = render(run);
	HAS(md, "**26.0 TFLOPS** (86 % of the FP32 peak)", "an FP32 program against the FP32 peak, not FP16's");
	HAS(md, "- **h100** `attn_wmma` B1-H16-S512-D64: ⚠️ **IMPOSSIBLE timing**: 9.80 us, 109.6 TFLOPS beats the physical bound",
	    "109.6 TFLOPS declared FP32 on an H100 is over its 66.9-TFLOPS FP32 peak: impossible");
	free(md);
	/* a reference names its problems: FA3 on the S=4k problem only is no yardstick for S=512 */
	{
		cJSON *ref = cJSON_GetArrayItem(cJSON_GetObjectItem(run, "references"), 0);
		cJSON_ReplaceItemInObject(cJSON_GetObjectItem(progs, "attn_wmma"), "datatype", cJSON_CreateString("fp16"));
		cJSON_ReplaceItemInObject(ref, "problems", cJSON_Parse("[\"B1-H8-S4096-D64\"]"));
		md = render(run);
		HAS(md, "FA3 450.0 / 312.1 TFLOPS = 1.44× remaining", "the reference beside the problem it names");
		HASNT(md, "FA3 450.0 / 109.6 TFLOPS", "not beside a problem it does not name");
		free(md);
		cJSON_DeleteItemFromObject(ref, "program");
		md = render(run);
		HASNT(md, "FA3 450.0 /", "a reference naming no program (an older record) applies to none");
		free(md);
	}
	/* which baseline ran: the SDPA backend PyTorch chose and the library versions, per row */
	{
		cJSON *s0;
		cJSON_ArrayForEach(s0, cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(run, "hosts"), 0), "steps")) {
			cJSON *res = cJSON_GetObjectItem(s0, "result");
			if (!res || strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(s0, "program")), "sdpa") ||
			    strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(s0, "kind")), "benchmark"))
				continue;
			cJSON_AddItemToObject(res, "sdpa_backend", cJSON_Parse("{\"requested\":\"default\",\"chosen\":\"cudnn\"}"));
			cJSON_AddItemToObject(res, "libraries", cJSON_Parse("{\"torch\":\"2.11.0+cu130\",\"cuda\":\"13.0\","
									  "\"cudnn\":\"9.14.0\",\"cublas\":\"13.1.0\"}"));
		}
		md = render(run);
		HAS(md, "- `sdpa`: SDPA backend **cudnn** (requested default); torch 2.11.0+cu130, CUDA 13.0, cuDNN 9.14.0, "
			"cuBLAS 13.1.0\n", "the baseline's chosen backend and library versions under its table");
		free(md);
	}
	/* the L4 host as an H200: it gets its own peaks (no measured-peak table row needed) */
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(progs, "attn_wmma"), "datatype", cJSON_CreateString("fp16"));
	h = cJSON_GetArrayItem(cJSON_GetObjectItem(run, "hosts"), 1);
	info = cJSON_GetObjectItem(h, "info");
	cJSON_ReplaceItemInObject(info, "gpu_name", cJSON_CreateString("NVIDIA H200"));
	cJSON_ReplaceItemInObject(info, "compute_cap", cJSON_CreateString("9.0"));
	cJSON_ReplaceItemInObject(info, "max_sm_clock_mhz", cJSON_CreateNumber(1980));
	cJSON_ReplaceItemInObject(info, "mem_clock_mhz", cJSON_CreateNumber(3201));
	{
		cJSON *s;
		cJSON_ArrayForEach(s, cJSON_GetObjectItem(h, "steps")) {
			cJSON *d = cJSON_GetObjectItem(cJSON_GetObjectItem(s, "result"), "device");
			if (d)
				cJSON_ReplaceItemInObject(d, "name", cJSON_CreateString("NVIDIA H200"));
		}
	}
	md = render(run);
	HAS(md, "**26.0 TFLOPS** (2 % of the FP16/BF16 peak), 102 GB/s (2 % of the DRAM peak)",
	    "an H200 host gets its % of peak from its own properties");
	HASNT(md, " via ", "a record without a host runner (before 2026-11-29) names none");
	free(md);
	/* what ran the run on the host, beside its name in the hosts table */
	cJSON_AddItemToObject(h, "runner", cJSON_CreateString("gpuorch-agent"));
	md = render(run);
	HAS(md, " via gpuorch-agent | NVIDIA H200 |", "the host runner beside the host's name");
	free(md);
	cJSON_Delete(run);
}

/* run --spread: a sweep dealt over two hosts of one pool is one section,
 * ranked across the pool (b's V=2 wins), never a "Winner" per host */
static void test_spread_sweep(void)
{
	cJSON *run = cJSON_Parse(
		"{\"schema\": \"gpuorch.run/1\", \"run_id\": \"20260101-000000-pool01\", \"status\": \"complete\","
		" \"outcome\": \"passed\", \"experiment\": {\"name\": \"pool\"}, \"hosts\": ["
		"  {\"name\": \"a\", \"status\": \"ok\", \"spread\": {\"pool\": \"H100\", \"pool_hosts\": 2, \"pool_gpus\": 2, \"units\": 2, \"units_here\": 1},"
		"   \"steps\": [{\"kind\": \"sweep\", \"mode\": \"bench\", \"variant\": \"V=1\", \"program\": \"sw\", \"problem\": \"P\","
		"    \"status\": \"PASS\", \"gpus\": [{\"uuid\": \"GPU-a\"}], \"result\": {\"timing\": {\"median_us\": 300}}}]},"
		"  {\"name\": \"b\", \"status\": \"ok\", \"spread\": {\"pool\": \"H100\", \"pool_hosts\": 2, \"pool_gpus\": 2, \"units\": 2, \"units_here\": 1},"
		"   \"steps\": [{\"kind\": \"sweep\", \"mode\": \"bench\", \"variant\": \"V=2\", \"program\": \"sw\", \"problem\": \"P\","
		"    \"status\": \"PASS\", \"gpus\": [{\"uuid\": \"GPU-b\"}], \"result\": {\"timing\": {\"median_us\": 100}}}]}]}");
	char *md = render(run);
	HAS(md, "on the pool H100 (--spread: a, b)", "a spread sweep is one section, on the pool, naming its hosts");
	/* no samples recorded: too few to tell, so the lowest median is not a
	 * clear winner; it is still the pool's fastest, b's V=2 */
	CHECK(count(md, "**No clear winner**") == 1 && strstr(md, "**No clear winner**: `V=2` has the lowest median") &&
	      !strstr(md, "**Winner**"), "one verdict: the pool's fastest (b's V=2) first",
	      "%d verdicts", count(md, "**No clear winner**"));
	HASNT(md, "· P on a\n", "no sweep section on host a (its share is in the pool's)");
	CHECK(count(md, "· P on ") == 1, "no section on a host of the pool", "%d", count(md, "· P on "));
	free(md);
	cJSON_Delete(run);
}

int main(void)
{
	test_row_clock();
	test_nan_outputs();
	test_cloud_cost_labels();
	test_pct_of_peak();
	test_expected_speedup();
	test_pass();
	test_failed();
	test_incomplete();
	test_wrong_types();
	test_glance_figures();
	test_write();
	test_charts();
	test_cluster_requeue();
	test_spread_sweep();
	fuzz_one("pass-2host.json", 1);
	fuzz_one("failed-host.json", 3);
	return check_summary();
}
