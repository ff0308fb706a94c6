/* test_ncu.c -- unit tests of ncu.c over real H100 output (tests/fixtures/gpu-tools)
 * and malformed / truncated variants (tests/fixtures/tool-output). */
#include "tools/ncu.h"
#include "core/fsutil.h"
#include "core/jsonutil.h"
#include "spec/spec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/banned.h"


#define REAL "tests/fixtures/gpu-tools/"
#define BAD "tests/fixtures/tool-output/"

static char *const seven[] = {
	"sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active",
	"dram__throughput.avg.pct_of_peak_sustained_elapsed",
	"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
	"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
	"sm__warps_active.avg.pct_of_peak_sustained_active",
	"launch__registers_per_thread",
	"launch__occupancy_limit_registers",
	NULL
};

static enum go_status parse_file(const char *path, char *const *metrics, cJSON **prof,
				 struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT, e = STRBUF_INIT;
	enum go_status st;
	if (fs_read_file(path, &text, &e) != GO_OK)
		printf("# cannot read %s: %s\n", path, e.buf);
	st = ncu_parse_csv(text.buf, text.len, metrics, prof, err);
	strbuf_release(&text);
	strbuf_release(&e);
	return st;
}

static double metric(const cJSON *prof, const char *path)
{
	const cJSON *v = json_path(prof, path);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void test_real(void)
{
	struct strbuf err = STRBUF_INIT;
	cJSON *p = NULL;
	const cJSON *m;
	enum go_status st = parse_file(REAL "ncu-raw.csv", seven, &p, &err);
	CHECK(st == GO_OK, "the real --log-file CSV (2 launches, ==PROF== lines) parses", "%s", err.buf);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(p, "kernels")) == 2, "two launches", "-");
	CHECK(!strcmp(json_str(cJSON_GetArrayItem(cJSON_GetObjectItem(p, "kernels"), 0), "name"),
		      "void attn_wmma_kernel<64, 64, 2>(const __half *, const __half *, const __half *, __half *, int, int, float)"),
	      "the kernel name keeps its commas", "-");
	CHECK(!strcmp(json_str(cJSON_GetArrayItem(cJSON_GetObjectItem(p, "kernels"), 1), "grid"), "(8, 8, 1)"),
	      "grid and block are kept", "-");
	m = cJSON_GetObjectItem(cJSON_GetObjectItem(p, "metrics"),
				"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum");
	CHECK(m && json_num(m, "min", 0) == 338101 && json_num(m, "max", 0) == 338315 &&
	      json_num(m, "value", 0) == 338208 && json_num(m, "n", 0) == 2,
	      "thousands separators are read: 338,315 and 338,101, mean 338208", "%s",
	      m ? cJSON_PrintUnformatted(m) : "missing");
	m = cJSON_GetObjectItem(cJSON_GetObjectItem(p, "metrics"),
				"sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active");
	CHECK(m && fabs(json_num(m, "value", 0) - 2.425) < 1e-9 && !strcmp(json_str(m, "unit"), "%"),
	      "a percentage with its unit: mean of 2.39 and 2.46", "-");
	m = cJSON_GetObjectItem(cJSON_GetObjectItem(p, "metrics"), "launch__registers_per_thread");
	CHECK(m && json_num(m, "value", 0) == 80 && !strcmp(json_str(m, "unit"), "register/thread"),
	      "registers per thread: 80 register/thread", "-");
	CHECK(metric(p, "kernels.0.metrics.launch__occupancy_limit_registers.value") == 6,
	      "per-launch values are kept", "-");
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(p, "missing")) == 0, "nothing missing", "-");
	cJSON_Delete(p);

	st = parse_file(REAL "ncu-import.csv", seven, &p, &err);
	CHECK(st == GO_OK && cJSON_GetArraySize(cJSON_GetObjectItem(p, "kernels")) == 1 &&
	      metric(p, "kernels.0.metrics.launch__registers_per_thread.value") == 80,
	      "the real --import CSV of the .ncu-rep parses", "%s", err.buf);
	cJSON_Delete(p);

	st = parse_file(REAL "ncu-import.csv", (char *const *)spec_default_metrics, &p, &err);
	CHECK(st == GO_OK && json_num(cJSON_GetObjectItem(cJSON_GetObjectItem(p, "metrics"),
							  "gpu__time_duration.sum"), "value", 0) == 33472,
	      "the default metric set is all present in a real capture (gpu__time_duration 33,472 ns)",
	      "%s", err.buf);
	cJSON_Delete(p);
	strbuf_release(&err);
}

static void expect_fail(const char *file, char *const *metrics, const char *want, const char *what)
{
	struct strbuf err = STRBUF_INIT;
	cJSON *p = NULL;
	enum go_status st = parse_file(file, metrics, &p, &err);
	CHECK(st != GO_OK && p && strstr(err.buf, want), what, "st=%d err=%s", st, err.buf);
	cJSON_Delete(p);
	strbuf_release(&err);
}

static void test_bad(void)
{
	static char *const bad_metric[] = { "no__such_metric.sum", NULL };
	struct strbuf err = STRBUF_INIT, why = STRBUF_INIT, log = STRBUF_INIT;
	cJSON *p = NULL;
	enum go_status st;

	expect_fail(REAL "ncu-badmetric.csv", bad_metric,
		    "metric 'no__such_metric.sum' is missing from ncu's output",
		    "a metric ncu did not collect (ncu exits 0!) is an error");
	st = parse_file(REAL "ncu-badmetric.csv", bad_metric, &p, &err);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(p, "missing")) == 1 &&
	      cJSON_GetArraySize(cJSON_GetObjectItem(p, "kernels")) == 1,
	      "the missing metric is listed, the launch kept", "st=%d", st);
	cJSON_Delete(p);
	expect_fail(BAD "ncu-truncated.csv", seven, "cut short",
		    "a CSV cut in the middle of a row is an error");
	expect_fail(BAD "ncu-na-nan.csv", seven,
		    "metric 'sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active' of kernel launch 0 is 'n/a'",
		    "an n/a metric is an error, never a pass");
	st = parse_file(BAD "ncu-na-nan.csv", seven, &p, &err);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(p, "missing")) == 2 &&
	      cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(
		      cJSON_GetObjectItem(p, "kernels"), 1), "metrics"),
		      "dram__throughput.avg.pct_of_peak_sustained_elapsed")
		      ? cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(
		      cJSON_GetObjectItem(p, "kernels"), 1), "metrics"),
		      "dram__throughput.avg.pct_of_peak_sustained_elapsed"), "value") : NULL),
	      "n/a and nan are both listed as missing", "%s", cJSON_PrintUnformatted(cJSON_GetObjectItem(p, "missing")));
	cJSON_Delete(p);
	expect_fail(BAD "ncu-nokernel.csv", seven, "no kernel launch was profiled",
		    "no kernel profiled is an error");
	expect_fail(BAD "ncu-badquote.csv", seven, "a quoted field is not closed",
		    "an unterminated quote is an error");
	expect_fail(REAL "ncu-stderr.txt", seven, "ncu printed no CSV header",
		    "text that is not ncu CSV is an error");
	expect_fail("/dev/null", seven, "ncu printed no CSV header", "empty output is an error");

	/* every prefix of a real file: an error or a parse, never a crash */
	{
		struct strbuf text = STRBUF_INIT;
		size_t n, bad = 0;
		fs_read_file(REAL "ncu-import.csv", &text, &err);
		for (n = 0; n < text.len; n += 97) {
			st = ncu_parse_csv(text.buf, n, seven, &p, &err);
			if (st == GO_OK && n < text.len - 2)
				bad++;
			cJSON_Delete(p);
		}
		CHECK(!bad, "every truncation of a real CSV is reported as an error", "%zu passed", bad);
		strbuf_release(&text);
	}

	fs_read_file(BAD "ncu-perm.log", &log, &err);
	CHECK(ncu_diagnose(log.buf, log.len, &why) && strstr(why.buf, "ERR_NVGPUCTRPERM") &&
	      strstr(why.buf, "NVreg_RestrictProfilingToAdminUsers=0") && strstr(why.buf, "root"),
	      "ERR_NVGPUCTRPERM names the fix", "%s", why.buf);
	strbuf_reset(&log);
	strbuf_reset(&why);
	fs_read_file(BAD "ncu-nokernel.log", &log, &err);
	CHECK(ncu_diagnose(log.buf, log.len, &why) && strstr(why.buf, "matched no launch"),
	      "no kernel profiled is explained", "%s", why.buf);
	strbuf_reset(&why);
	CHECK(!ncu_diagnose("==PROF== Disconnected\n", 22, &why) && !why.len,
	      "a clean log has nothing to say", "%s", why.buf);
	strbuf_release(&err);
	strbuf_release(&why);
	strbuf_release(&log);
}

/* Three launches (tests/gpu/capture-ncu-units.sh on the H100): the mean is
 * over all of them, not a running pairwise average, and the export without
 * --print-units base reads in other units (us, Mbyte, Ghz), so gpuorch's
 * export command must ask for base units (test_plan.c checks it does). */
static void test_three_launches(void)
{
	static char *const m3[] = { "gpu__time_duration.sum", "dram__bytes_read.sum",
				    "sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active",
				    NULL };
	struct strbuf err = STRBUF_INIT;
	cJSON *p = NULL, *q = NULL;
	const cJSON *m;
	enum go_status st = parse_file(REAL "ncu-3launch-base.csv", m3, &p, &err);

	CHECK(st == GO_OK && cJSON_GetArraySize(cJSON_GetObjectItem(p, "kernels")) == 3,
	      "3 launches exported with base units parse", "%s", err.buf);
	m = cJSON_GetObjectItem(cJSON_GetObjectItem(p, "metrics"), "gpu__time_duration.sum");
	/* (32672 + 32480 + 32064) / 3 = 32405.333...; a pairwise running
	 * average ((32672 + 32480) / 2 + 32064) / 2 would give 32320 */
	CHECK(m && fabs(json_num(m, "value", 0) - 97216.0 / 3) < 1e-6 && json_num(m, "n", 0) == 3 &&
	      json_num(m, "min", 0) == 32064 && json_num(m, "max", 0) == 32672 &&
	      !strcmp(json_str(m, "unit"), "ns"),
	      "mean over 3 launches: (32672 + 32480 + 32064) / 3 ns, min, max, n",
	      "%s", m ? cJSON_PrintUnformatted(m) : "missing");
	m = cJSON_GetObjectItem(cJSON_GetObjectItem(p, "metrics"), "dram__bytes_read.sum");
	CHECK(m && fabs(json_num(m, "value", 0) - (1598976.0 * 2 + 1598720) / 3) < 1e-6 &&
	      !strcmp(json_str(m, "unit"), "byte"),
	      "the last launch counts as much as the others: DRAM bytes mean", "%s",
	      m ? cJSON_PrintUnformatted(m) : "missing");

	st = parse_file(REAL "ncu-3launch-nobase.csv", m3, &q, &err);
	m = cJSON_GetObjectItem(cJSON_GetObjectItem(q, "metrics"), "gpu__time_duration.sum");
	CHECK(st == GO_OK && m && !strcmp(json_str(m, "unit"), "us") &&
	      fabs(json_num(m, "value", 0) - 32.405333) < 1e-5,
	      "without --print-units base the same report reads 32.4 us, not 32405 ns", "%s",
	      m ? cJSON_PrintUnformatted(m) : err.buf);
	m = cJSON_GetObjectItem(cJSON_GetObjectItem(q, "metrics"), "dram__bytes_read.sum");
	CHECK(m && !strcmp(json_str(m, "unit"), "Mbyte") && json_num(m, "value", 0) < 2,
	      "... and DRAM bytes in Mbyte: a gate on the figure would read a number 10^6 smaller",
	      "%s", m ? cJSON_PrintUnformatted(m) : "missing");
	cJSON_Delete(p);
	cJSON_Delete(q);
	strbuf_release(&err);
}

int main(void)
{
	test_real();
	test_three_launches();
	test_bad();
	return check_summary();
}
