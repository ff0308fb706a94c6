/* test_kernel_figures.c -- unit tests of output-figures.c's figures per kernel
 * (docs/byo.md): a figure whose kernel is named by a line before its value
 * (name_regex) or by a group of its own regex (name_group) gives
 * NAME[KERNEL] for each kernel; an empty or odd name, a value with no name and
 * a kernel printed with two values are errors. */
#include "tools/output-figures.h"
#include "core/jsonutil.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/banned.h"

/* what a multi-kernel SGEMM benchmark prints (siboehm's SGEMM_CUDA style) */
static const char blocks[] =
	"Running kernel v01_naive on device 0.\n"
	"dimensions(m=n=k) 4096, alpha: 0.5, beta: 3\n"
	"Average elapsed time: (0.250000) s, performance: (  549.7) GFLOPS. size: (4096).\n"
	"Running kernel v05_blocktile on device 0.\n"
	"Average elapsed time: (0.013000) s, performance: (10572.0) GFLOPS. size: (4096).\n"
	"Running kernel v07_vectorized on device 0.\n"
	"Average elapsed time: (0.009000) s, performance: (15271.4) GFLOPS. size: (4096).\n"
	"Average elapsed time: (0.009000) s, performance: (15271.4) GFLOPS. size: (4096).\n";

static const struct figure_rule by_line = {
	"gflops", "performance: \\( *([0-9.]+)\\) GFLOPS", NULL, "GFLOP/s", "higher",
	"^Running kernel ([^ ]*) on", 0
};

/* one value per line, its kernel named on the same line */
static const char table[] =
	"kernel        ms      TFLOPS\n"
	"cublas      0.210    654.5 TFLOPS\n"
	"v07_vec     0.250    549.0 TFLOPS\n"
	"v08_wmma    0.230    597.1 TFLOPS\n";

static const struct figure_rule by_group = {
	"tf", "^([A-Za-z0-9_]+) +[0-9.]+ +([0-9.]+) TFLOPS$", NULL, "TFLOP/s", "higher", NULL, 1
};

static double val(const cJSON *f, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(f, name);
	v = v ? cJSON_GetObjectItem(v, "value") : NULL;
	return v && cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static cJSON *read1(const struct figure_rule *r, const char *out, struct strbuf *missing)
{
	strbuf_reset(missing);
	return figures_read(r, 1, out, strlen(out), missing);
}

int main(void)
{
	struct strbuf missing = STRBUF_INIT;
	struct figure_rule r;
	struct figure_scan *s;
	const cJSON *k;
	cJSON *f;
	size_t i;

	f = read1(&by_line, blocks, &missing);
	CHECK(cJSON_GetArraySize(f) == 3 && val(f, "gflops[v01_naive]") == 549.7 &&
	      val(f, "gflops[v05_blocktile]") == 10572.0 && val(f, "gflops[v07_vectorized]") == 15271.4,
	      "name_regex: a figure per block, named by the line before its value",
	      "n=%d missing=%s", cJSON_GetArraySize(f), missing.buf);
	CHECK(f->child && !strcmp(f->child->string, "gflops[v01_naive]") &&
	      f->child->next && !strcmp(f->child->next->string, "gflops[v05_blocktile]"),
	      "kernels in the order they first appear", "first=%s",
	      f->child ? f->child->string : "none");
	k = cJSON_GetObjectItemCaseSensitive(f, "gflops[v05_blocktile]");
	CHECK(k && !strcmp(json_str(k, "figure"), "gflops") &&
	      !strcmp(json_str(k, "kernel"), "v05_blocktile") &&
	      !strcmp(json_str(k, "unit"), "GFLOP/s") && !strcmp(json_str(k, "better"), "higher") &&
	      strstr(json_str(k, "line"), "(10572.0) GFLOPS"),
	      "figure, kernel, unit, direction and the value's line are kept", "%s",
	      k ? json_str(k, "line") : "none");
	CHECK(missing.len == 0, "a kernel repeated with the same value is one figure", "missing=%s",
	      missing.buf);
	cJSON_Delete(f);

	/* the same, fed a byte at a time */
	s = figures_scan_new(&by_line, 1);
	for (i = 0; blocks[i]; i++)
		figures_scan_feed(s, blocks + i, 1);
	strbuf_reset(&missing);
	f = figures_scan_finish(s, &missing);
	figures_scan_free(s);
	CHECK(cJSON_GetArraySize(f) == 3 && val(f, "gflops[v07_vectorized]") == 15271.4,
	      "the same figures from the output fed a byte at a time", "n=%d",
	      cJSON_GetArraySize(f));
	cJSON_Delete(f);

	f = read1(&by_group, table, &missing);
	CHECK(cJSON_GetArraySize(f) == 3 && val(f, "tf[cublas]") == 654.5 &&
	      val(f, "tf[v07_vec]") == 549.0 && val(f, "tf[v08_wmma]") == 597.1,
	      "name_group: the kernel named on the value's own line", "n=%d missing=%s",
	      cJSON_GetArraySize(f), missing.buf);
	cJSON_Delete(f);

	r = by_group;
	r.regex = "^ *([0-9.]+) ms +(([a-z]+)_[0-9]+)$";   /* the value first, the name in group 2 */
	r.name_group = 2;
	f = read1(&r, "0.5 ms sgemm_1\n 0.25 ms sgemm_2\n", &missing);
	CHECK(cJSON_GetArraySize(f) == 2 && val(f, "tf[sgemm_1]") == 0.5 &&
	      val(f, "tf[sgemm_2]") == 0.25,
	      "name_group 2: the value in group 1, the name in group 2", "n=%d missing=%s",
	      cJSON_GetArraySize(f), missing.buf);
	cJSON_Delete(f);

	f = read1(&by_group, "v07 1 2 TFLOPS\nv08 1 3 TFLOPS\nv07 1 2.5 TFLOPS\n", &missing);
	CHECK(cJSON_GetArraySize(f) == 0 &&
	      strstr(missing.buf, "'tf': kernel 'v07' is printed with two values, 2 (\"v07 1 2 TFLOPS\") "
				  "and 2.5 (\"v07 1 2.5 TFLOPS\")"),
	      "a kernel printed with two values is an error naming both; no figure of it is kept",
	      "n=%d missing=%s", cJSON_GetArraySize(f), missing.buf);
	cJSON_Delete(f);

	f = read1(&by_line, "performance: (1.0) GFLOPS\nRunning kernel a on\n", &missing);
	CHECK(cJSON_GetArraySize(f) == 0 &&
	      strstr(missing.buf, "'gflops': the line \"performance: (1.0) GFLOPS\" matches "
				  "/performance: \\( *([0-9.]+)\\) GFLOPS/ before any line names its kernel"),
	      "a value before any name line is an error", "missing=%s", missing.buf);
	cJSON_Delete(f);

	f = read1(&by_line, "Running kernel  on device 0.\nperformance: (1.0) GFLOPS\n", &missing);
	CHECK(cJSON_GetArraySize(f) == 0 &&
	      strstr(missing.buf, "'gflops': the kernel's name group 1 of 'name_regex' in the line "
				  "\"Running kernel  on device 0.\" is empty"),
	      "an empty kernel name is an error naming the line", "missing=%s", missing.buf);
	cJSON_Delete(f);

	f = read1(&by_line, "Running kernel a.b on device 0.\nperformance: (1.0) GFLOPS\n", &missing);
	CHECK(cJSON_GetArraySize(f) == 0 && strstr(missing.buf, "is not a plain name"),
	      "a name with a '.' is refused (it would read as a path in gates)", "missing=%s",
	      missing.buf);
	cJSON_Delete(f);

	r = by_group;
	r.regex = "^([0-9.]+) TFLOPS( [a-z]+)?$";
	r.name_group = 2;
	f = read1(&r, "1.5 TFLOPS\n", &missing);
	CHECK(cJSON_GetArraySize(f) == 0 && strstr(missing.buf, "group 2 of /^([0-9.]+) TFLOPS( "
							   "[a-z]+)?$/ took no part in the line"),
	      "a name group that did not match is an error", "missing=%s", missing.buf);
	cJSON_Delete(f);

	f = read1(&by_line, "Running kernel a on device 0.\nnothing else\n", &missing);
	CHECK(cJSON_GetArraySize(f) == 0 &&
	      strstr(missing.buf, "'gflops': no line of the output matches /performance"),
	      "no value at all is said as for any regex", "missing=%s", missing.buf);
	cJSON_Delete(f);

	/* a gap: figures before it are marked, values after it with their
	 * name line possibly in it cannot be attributed */
	s = figures_scan_new(&by_line, 1);
	figures_scan_feed(s, blocks, strlen(blocks));
	figures_scan_gap(s, 1000);
	figures_scan_feed(s, "x\nperformance: (7.0) GFLOPS\n", 27);
	strbuf_reset(&missing);
	f = figures_scan_finish(s, &missing);
	figures_scan_free(s);
	CHECK(cJSON_GetArraySize(f) == 0 &&
	      strstr(missing.buf, "1 line matching /performance: \\( *([0-9.]+)\\) GFLOPS/ came after "
				  "the part of the output that was not read") &&
	      strstr(missing.buf, "1000 bytes of the output were not read"),
	      "a value after a gap, before a name line, is not given to the kernel before the gap",
	      "missing=%s", missing.buf);
	cJSON_Delete(f);

	s = figures_scan_new(&by_line, 1);
	figures_scan_feed(s, blocks, strlen(blocks));
	figures_scan_gap(s, 1000);
	figures_scan_feed(s, "x\nRunning kernel v09 on device 0.\nperformance: (7.0) GFLOPS\n", 61);
	strbuf_reset(&missing);
	f = figures_scan_finish(s, &missing);
	figures_scan_free(s);
	CHECK(cJSON_GetArraySize(f) == 4 && val(f, "gflops[v09]") == 7.0 &&
	      cJSON_IsTrue(json_path(cJSON_GetObjectItem(f, "gflops[v01_naive]"), "truncated")) &&
	      !cJSON_GetObjectItem(cJSON_GetObjectItem(f, "gflops[v09]"), "truncated") &&
	      missing.len == 0,
	      "kernels read before a gap are marked truncated, the one after it is not",
	      "n=%d missing=%s", cJSON_GetArraySize(f), missing.buf);
	cJSON_Delete(f);

	{
		/* the one rule of a kernel's name, at its edges (core/metric.c) */
		char n64[65], n65[66];
		memset(n64, 'k', 64);
		n64[64] = '\0';
		memset(n65, 'k', 65);
		n65[65] = '\0';
		CHECK(metric_kernel_name_ok(n64, 64) && !metric_kernel_name_ok(n65, 65) &&
		      !metric_kernel_name_ok("", 0) && metric_kernel_name_ok("a", 1) &&
		      metric_kernel_name_ok("v07_x-y+z", 9) && !metric_kernel_name_ok("v0.7", 4) &&
		      !metric_kernel_name_ok("a b", 3),
		      "a kernel's name: 1-64 of letters, digits, _ - +; 64 is in, 65 out", "%s", "");
	}

	strbuf_release(&missing);
	return check_summary();
}
