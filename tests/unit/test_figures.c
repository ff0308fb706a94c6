/* test_figures.c -- unit tests of figures.c: figures read from a program's
 * own output by regex (the last matching line wins) or by a JSON path into
 * its last line. */
#include "tools/figures.h"
#include "core/jsonutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/banned.h"

static const char out[] =
	"warming up\n"
	"GFLOPS: 10.5\n"
	"GFLOPS: 12.25\r\n"
	"max_error: 3e-05\n"
	"mode: fast\n"
	"time: n/a\n"
	"{\"timing\": {\"median_us\": 41.5, \"p90_us\": \"slow\"}, \"n\": 7}\n";

static double val(const cJSON *f, const char *name)
{
	const cJSON *v = json_path(f, name);
	v = v ? cJSON_GetObjectItem(v, "value") : NULL;
	return v && cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

int main(void)
{
	struct figure_rule rules[] = {
		{ "gflops", "GFLOPS: ([0-9.]+)", NULL, "GFLOP/s", "higher" },
		{ "max_error", "max_error: ([-0-9.e+]+)", NULL, NULL, "lower" },
		{ "median", NULL, "timing.median_us", "us", "lower" },
		{ "n", NULL, "n", NULL, NULL },
	};
	struct figure_rule bad[] = {
		{ "absent", "TFLOPS: ([0-9.]+)", NULL, NULL, NULL },
		{ "word", "mode: ([a-z]+)", NULL, NULL, NULL },
		{ "p90", NULL, "timing.p90_us", NULL, NULL },
		{ "time", "time: (.*)", NULL, NULL, NULL },
	};
	struct strbuf missing = STRBUF_INIT;
	cJSON *f;

	f = figures_read(rules, 4, out, strlen(out), &missing);
	CHECK(val(f, "gflops") == 12.25, "the last matching line wins (a CR is dropped)",
	      "gflops=%g", val(f, "gflops"));
	CHECK(val(f, "max_error") == 3e-05, "an exponent is a number", "max_error=%g",
	      val(f, "max_error"));
	CHECK(val(f, "median") == 41.5 && val(f, "n") == 7, "a JSON path into the last line",
	      "median=%g n=%g", val(f, "median"), val(f, "n"));
	CHECK(!strcmp(json_str(cJSON_GetObjectItem(f, "gflops"), "unit"), "GFLOP/s") &&
	      !strcmp(json_str(cJSON_GetObjectItem(f, "gflops"), "better"), "higher") &&
	      !strcmp(json_str(cJSON_GetObjectItem(f, "gflops"), "line"), "GFLOPS: 12.25") &&
	      !strcmp(json_str(cJSON_GetObjectItem(f, "median"), "source"), "json"),
	      "unit, direction, the matched line and the source are kept", "%s",
	      json_str(cJSON_GetObjectItem(f, "gflops"), "line"));
	CHECK(missing.len == 0, "nothing missing", "missing=%s", missing.buf);
	cJSON_Delete(f);

	f = figures_read(bad, 4, out, strlen(out), &missing);
	CHECK(cJSON_GetArraySize(f) == 0, "no figure from what is not a number", "n=%d",
	      cJSON_GetArraySize(f));
	CHECK(strstr(missing.buf, "'absent': no line of the output matches /TFLOPS: ([0-9.]+)/") &&
	      strstr(missing.buf, "'word': the last line that matches has no number") &&
	      strstr(missing.buf, "'p90': no number at that path") &&
	      strstr(missing.buf, "'time': the last line that matches has no number"),
	      "each missing figure is named with why", "missing=%s", missing.buf);
	cJSON_Delete(f);

	strbuf_reset(&missing);
	f = figures_read(rules + 2, 1, "no json here\n", 13, &missing);
	CHECK(strstr(missing.buf, "'median': the last line of the output is not a JSON object"),
	      "no JSON on the last line", "missing=%s", missing.buf);
	cJSON_Delete(f);

	strbuf_reset(&missing);
	{
		struct figure_rule any = { "gflops", "GFLOPS: ([^ ]+)", NULL, NULL, NULL };
		f = figures_read(&any, 1, "GFLOPS: 1.5\nGFLOPS: oops\n", 25, &missing);
	}
	CHECK(cJSON_GetArraySize(f) == 0 && strstr(missing.buf, "'gflops': the last line that matches"),
	      "a later line that matches without a number is not hidden by an earlier one",
	      "missing=%s", missing.buf);
	cJSON_Delete(f);
	strbuf_release(&missing);
	return check_summary();
}
