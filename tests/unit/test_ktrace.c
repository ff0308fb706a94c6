/* test_ktrace.c -- unit tests of ktrace.c against a trace that the CUPTI
 * injection library (kernels/ktrace/gpuorch_ktrace.c) wrote on an H100:
 * tests/fixtures/ktrace/h100-demo.jsonl (kernels/ktrace/ktrace_demo.cu, one
 * warm-up and 50 saxpy launches, then 50 scale_sq). Run from the repository root. */
#include "tools/ktrace.h"
#include "core/fsutil.h"
#include "core/jsonutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/banned.h"

#define FIX "tests/fixtures/ktrace/h100-demo.jsonl"

static double num(const cJSON *o, const char *path)
{
	const cJSON *v = json_path(o, path);
	return v && cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* A trace of launches "MANGLED START END GX BX;..." (grid and block x; y, z = 1). */
static cJSON *trace(const char *spec)
{
	struct strbuf t = STRBUF_INIT, err = STRBUF_INIT;
	char name[128];
	double a, b;
	int gx, bx, used;
	cJSON *s = NULL;
	strbuf_addstr(&t, "{\"schema\": \"gpuorch.ktrace/1\", \"t0_ns\": \"0\"}\n");
	while (sscanf(spec, " %127s %lf %lf %d %d;%n", name, &a, &b, &gx, &bx, &used) == 5) {
		strbuf_addf(&t, "{\"name\": \"%s\", \"start_ns\": %.0f, \"end_ns\": %.0f, "
			    "\"grid\": [%d, 1, 1], \"block\": [%d, 1, 1], \"registers\": 32}\n",
			    name, a, b, gx, bx);
		spec += used;
	}
	strbuf_addstr(&t, "{\"end\": true, \"kernels\": 0, \"dropped\": 0}\n");
	if (ktrace_summarize(t.buf, t.len, &s, &err) != GO_OK)
		printf("# trace: %s\n", err.buf);
	strbuf_release(&t);
	strbuf_release(&err);
	return s;
}

/* the kernel entry of mangled name (and grid x, 0: any) */
static const cJSON *kernel_of(const cJSON *s, const char *name, int gx)
{
	const cJSON *k;
	cJSON_ArrayForEach(k, cJSON_GetObjectItem(s, "kernels"))
		if (!strcmp(json_str(k, "name"), name) && (!gx || num(k, "grid.0") == gx))
			return k;
	return NULL;
}

/* issue 30 item 6: keys from the names alone, launches grouped by name, grid and block */
static void test_keys_and_groups(void)
{
	cJSON *a, *b;
	char *k;
	const cJSON *x;

	k = ktrace_key("void at::native::(anonymous namespace)::fill<float, 4>(int, float*)", 0);
	CHECK(!strcmp(k, "at::native::(anonymousnamespace)::fill"),
	      "a '(' outside template arguments does not end the key", "key=%s", k);
	free(k);
	k = ktrace_key("(anonymous namespace)::kernel(float*)", 1);
	CHECK(!strcmp(k, "(anonymousnamespace)::kernel"), "an anonymous namespace kernel", "key=%s", k);
	free(k);
	k = ktrace_key("void f<(int)3>(void (*)(int))", 1);
	CHECK(!strcmp(k, "f<(int)3>"), "parentheses in template and parameter lists", "key=%s", k);
	free(k);
	k = ktrace_key("saxpy", 0);
	CHECK(!strcmp(k, "saxpy"), "a C name is its key", "key=%s", k);
	free(k);

	/* kernel<1> longer in a, kernel<2> longer in b: the keys do not move */
	a = trace("_Z6kernelILi1EEvPf 0 7000 8 256; _Z6kernelILi2EEvPf 10000 15000 8 256;");
	b = trace("_Z6kernelILi1EEvPf 0 5000 8 256; _Z6kernelILi2EEvPf 10000 17000 8 256;");
	CHECK(a && b && !strcmp(json_str(kernel_of(a, "_Z6kernelILi1EEvPf", 0), "key"), "kernel<1>") &&
	      !strcmp(json_str(kernel_of(b, "_Z6kernelILi1EEvPf", 0), "key"), "kernel<1>") &&
	      !strcmp(json_str(kernel_of(a, "_Z6kernelILi2EEvPf", 0), "key"), "kernel<2>") &&
	      !strcmp(json_str(kernel_of(b, "_Z6kernelILi2EEvPf", 0), "key"), "kernel<2>"),
	      "two instantiations keep their own keys whichever takes longer", "a=%s b=%s",
	      a ? json_str(kernel_of(a, "_Z6kernelILi1EEvPf", 0), "key") : "-",
	      b ? json_str(kernel_of(b, "_Z6kernelILi1EEvPf", 0), "key") : "-");
	cJSON_Delete(a);
	cJSON_Delete(b);

	/* same template key, different parameters: a stable hash of the mangled name */
	a = trace("_Z6kernelILi1EEvPf 0 7000 8 256; _Z6kernelILi1EEvPi 10000 15000 8 256;");
	x = a ? kernel_of(a, "_Z6kernelILi1EEvPi", 0) : NULL;
	CHECK(x && !strncmp(json_str(x, "key"), "kernel<1>~", 10) && strlen(json_str(x, "key")) == 18 &&
	      strcmp(json_str(x, "key"), json_str(kernel_of(a, "_Z6kernelILi1EEvPf", 0), "key")),
	      "overloads that share every other key get a hash of their mangled name", "key=%s",
	      x ? json_str(x, "key") : "-");
	cJSON_Delete(a);

	/* one kernel at two grid sizes: two groups, each its own median and grid */
	a = trace("_Z5saxpyifPKfPf 0 10000 64 128; _Z5saxpyifPKfPf 20000 20100 2 128;"
		  "_Z5saxpyifPKfPf 30000 40000 64 128; _Z5saxpyifPKfPf 50000 50300 2 128;"
		  "_Z5saxpyifPKfPf 60000 70000 64 128;");
	CHECK(a && num(a, "launches") == 5 && cJSON_GetArraySize(cJSON_GetObjectItem(a, "kernels")) == 2,
	      "launches of one kernel at two grids are two groups", "n=%d",
	      a ? cJSON_GetArraySize(cJSON_GetObjectItem(a, "kernels")) : -1);
	x = a ? kernel_of(a, "_Z5saxpyifPKfPf", 64) : NULL;
	CHECK(x && num(x, "median_us") == 10 && num(x, "launches") == 3 &&
	      !strcmp(json_str(x, "key"), "saxpy@g64_1_1-b128_1_1"),
	      "the big grid: its own median and key", "median=%g key=%s", x ? num(x, "median_us") : -1,
	      x ? json_str(x, "key") : "-");
	x = a ? kernel_of(a, "_Z5saxpyifPKfPf", 2) : NULL;
	CHECK(x && num(x, "median_us") == 0.2 && num(x, "grid.0") == 2 &&
	      !strcmp(json_str(x, "key"), "saxpy@g2_1_1-b128_1_1"),
	      "the small grid: its own median, grid and key", "median=%g key=%s",
	      x ? num(x, "median_us") : -1, x ? json_str(x, "key") : "-");
	cJSON_Delete(a);
}

int main(void)
{
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT, cut = STRBUF_INIT;
	cJSON *s = NULL;
	enum go_status st;
	const char *p;

	if (fs_read_file(FIX, &text, &err) != GO_OK) {
		printf("# cannot read fixture: %s\n", err.buf);
		return 1;
	}
	st = ktrace_summarize(text.buf, text.len, &s, &err);
	CHECK(st == GO_OK && s, "the H100 trace is read", "st=%d err=%s", st, err.buf);
	if (s) {
		CHECK(cJSON_IsTrue(cJSON_GetObjectItem(s, "complete")) && num(s, "dropped") == 0,
		      "a trace with its end line is complete, nothing dropped", "complete=%d",
		      cJSON_IsTrue(cJSON_GetObjectItem(s, "complete")));
		CHECK(num(s, "launches") == 101, "every launch is counted", "launches=%g",
		      num(s, "launches"));
		CHECK(!strcmp(json_str(json_path(s, "kernels.0"), "name"), "_Z5saxpyifPKfPf") &&
		      !strcmp(json_str(json_path(s, "kernels.0"), "demangled"), "saxpy") &&
		      !strcmp(json_str(json_path(s, "kernels.1"), "demangled"), "scale_sq"),
		      "kernels sorted by total time, demangled", "first=%s",
		      json_str(json_path(s, "kernels.0"), "name"));
		CHECK(num(s, "kernels.0.launches") == 51 && num(s, "kernels.1.launches") == 50,
		      "launches per kernel (the warm-up counts)", "%g %g",
		      num(s, "kernels.0.launches"), num(s, "kernels.1.launches"));
		/* the values computed from the file independently (python): */
		CHECK(fabs(num(s, "kernels.0.median_us") - 76.513) < 1e-6 &&
		      fabs(num(s, "kernels.0.min_us") - 75.362) < 1e-6 &&
		      fabs(num(s, "kernels.0.max_us") - 77.601) < 1e-6 &&
		      fabs(num(s, "kernels.0.total_us") - 3893.193) < 1e-6,
		      "saxpy's median, min, max and total GPU time", "median=%.6f min=%.6f max=%.6f total=%.6f",
		      num(s, "kernels.0.median_us"), num(s, "kernels.0.min_us"),
		      num(s, "kernels.0.max_us"), num(s, "kernels.0.total_us"));
		CHECK(fabs(num(s, "kernels.1.median_us") - 61.0095) < 1e-6,
		      "scale_sq's median", "median=%.6f", num(s, "kernels.1.median_us"));
		CHECK(fabs(num(s, "kernels.0.share_pct") + num(s, "kernels.1.share_pct") - 100) < 1e-9 &&
		      fabs(num(s, "kernels.0.share_pct") - 100 * 3893.193 / (3893.193 + 3040.411)) < 1e-6,
		      "shares of the program's GPU time", "share=%.6f", num(s, "kernels.0.share_pct"));
		CHECK(num(s, "kernels.0.grid.0") == 65536 && num(s, "kernels.0.block.0") == 256 &&
		      num(s, "kernels.0.registers") == 16, "grid, block and registers", "grid=%g",
		      num(s, "kernels.0.grid.0"));
	}
	cJSON_Delete(s);
	s = NULL;

	/* cut in the middle of a line, before the end line: incomplete, not an error */
	p = strstr(text.buf, "_Z8scale_sqiPf");
	strbuf_add(&cut, text.buf, (size_t)(p - text.buf));
	st = ktrace_summarize(cut.buf, cut.len, &s, &err);
	CHECK(st == GO_OK && s && !cJSON_IsTrue(cJSON_GetObjectItem(s, "complete")) &&
	      num(s, "kernels.0.launches") == 51 && !json_path(s, "kernels.1"),
	      "a trace cut short is read up to the cut and says it is not complete", "st=%d", st);
	cJSON_Delete(s);
	s = NULL;

	strbuf_reset(&err);
	st = ktrace_summarize("{\"name\": \"k\", \"start_ns\": 1, \"end_ns\": 2}\n", 41, &s, &err);
	CHECK(st == GO_ERR_REMOTE && strstr(err.buf, "line 1: a kernel before the header"),
	      "a kernel line before the header is an error", "err=%s", err.buf);
	strbuf_reset(&err);
	st = ktrace_summarize("{\"schema\": \"gpuorch.ktrace/1\"}\nnot json\n{\"end\": true}\n", 52, &s, &err);
	CHECK(st == GO_ERR_REMOTE && strstr(err.buf, "line 2: not a JSON object"),
	      "a line that is not JSON is named", "err=%s", err.buf);
	strbuf_reset(&err);
	st = ktrace_summarize("{\"schema\": \"gpuorch.ktrace/1\"}\n{\"name\": \"k\", \"start_ns\": 5, \"end_ns\": 2}\n",
			      72, &s, &err);
	CHECK(st == GO_ERR_REMOTE && strstr(err.buf, "line 2: kernel 'k' has no valid start_ns/end_ns"),
	      "an end before the start is an error", "err=%s", err.buf);
	strbuf_reset(&err);
	st = ktrace_summarize("{\"schema\": \"gpuorch.ktrace/1\"}\n{\"name\": \"k\", \"start_ns\": 1795417476973099288, \"end_ns\": 1795417476973176121}\n",
			      109, &s, &err);
	CHECK(st == GO_ERR_REMOTE && strstr(err.buf, "line 2: kernel 'k': times over 2^53 ns"),
	      "absolute timestamps (not exact as doubles) are refused", "err=%s", err.buf);
	strbuf_reset(&err);
	st = ktrace_summarize("hello\n", 6, &s, &err);
	CHECK(st == GO_ERR_REMOTE && s == NULL, "not a trace", "err=%s", err.buf);

	strbuf_release(&text);
	strbuf_release(&cut);
	strbuf_release(&err);
	test_keys_and_groups();
	return check_summary();
}
