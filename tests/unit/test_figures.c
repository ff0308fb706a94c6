/* test_figures.c -- unit tests of output-figures.c: figures read from a program's
 * own output by regex (the last matching line wins) or by a JSON path into
 * its last line. */
#include "tools/output-figures.h"
#include "core/jsonutil.h"

#include <math.h>
#include <stdint.h>
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
		{ "gflops", "GFLOPS: ([0-9.]+)", NULL, "GFLOP/s", "higher", NULL, 0 },
		{ "max_error", "max_error: ([-0-9.e+]+)", NULL, NULL, "lower", NULL, 0 },
		{ "median", NULL, "timing.median_us", "us", "lower", NULL, 0 },
		{ "n", NULL, "n", NULL, NULL, NULL, 0 },
	};
	struct figure_rule bad[] = {
		{ "absent", "TFLOPS: ([0-9.]+)", NULL, NULL, NULL, NULL, 0 },
		{ "word", "mode: ([a-z]+)", NULL, NULL, NULL, NULL, 0 },
		{ "p90", NULL, "timing.p90_us", NULL, NULL, NULL, 0 },
		{ "time", "time: (.*)", NULL, NULL, NULL, NULL, 0 },
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
		struct figure_rule any = { "gflops", "GFLOPS: ([^ ]+)", NULL, NULL, NULL, NULL, 0 };
		f = figures_read(&any, 1, "GFLOPS: 1.5\nGFLOPS: oops\n", 25, &missing);
	}
	CHECK(cJSON_GetArraySize(f) == 0 && strstr(missing.buf, "'gflops': the last line that matches"),
	      "a later line that matches without a number is not hidden by an earlier one",
	      "missing=%s", missing.buf);
	cJSON_Delete(f);

	/* the stream: fed a byte at a time it reads what figures_read reads */
	{
		struct figure_scan *sc = figures_scan_new(rules, 4);
		size_t i;
		strbuf_reset(&missing);
		for (i = 0; i < strlen(out); i++)
			figures_scan_feed(sc, out + i, 1);
		f = figures_scan_finish(sc, &missing);
		CHECK(val(f, "gflops") == 12.25 && val(f, "median") == 41.5 && !missing.len &&
		      !figures_scan_cut(sc, NULL) &&
		      !cJSON_GetObjectItem(cJSON_GetObjectItem(f, "gflops"), "truncated"),
		      "a stream fed byte by byte reads the same figures, nothing cut", "gflops=%g missing=%s",
		      val(f, "gflops"), missing.buf);
		cJSON_Delete(f);
		figures_scan_free(sc);
	}
	/* issue 30 item 1: the real figure in the part that was not read */
	{
		struct figure_rule g = { "gflops", "^GFLOPS: ([0-9.]+)$", NULL, NULL, NULL, NULL, 0 };
		struct figure_scan *sc = figures_scan_new(&g, 1);
		const char head[] = "GFLOPS: 1\nprogress GFL", tail[] = "OPS: 5\ndone\n";
		uint64_t dropped = 0;
		strbuf_reset(&missing);
		figures_scan_feed(sc, head, strlen(head));
		figures_scan_gap(sc, 1000);
		figures_scan_feed(sc, tail, strlen(tail));
		f = figures_scan_finish(sc, &missing);
		CHECK(val(f, "gflops") == 1 &&
		      cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(f, "gflops"), "truncated")) &&
		      figures_scan_cut(sc, &dropped) == 1 && dropped == 1000,
		      "a figure whose last match came before the gap is marked truncated; the lines "
		      "cut by the gap are not read", "gflops=%g dropped=%llu", val(f, "gflops"),
		      (unsigned long long)dropped);
		cJSON_Delete(f);
		figures_scan_free(sc);

		sc = figures_scan_new(&g, 1);
		strbuf_reset(&missing);
		figures_scan_feed(sc, "start\n", 6);
		figures_scan_gap(sc, 7);
		figures_scan_feed(sc, "x\nGFLOPS: 999\nend\n", 19);
		f = figures_scan_finish(sc, &missing);
		CHECK(val(f, "gflops") == 999 && !cJSON_GetObjectItem(cJSON_GetObjectItem(f, "gflops"),
								       "truncated") && !missing.len,
		      "a match after the gap is the last one: not marked", "gflops=%g", val(f, "gflops"));
		cJSON_Delete(f);
		figures_scan_free(sc);

		sc = figures_scan_new(&g, 1);
		strbuf_reset(&missing);
		figures_scan_feed(sc, "start\n", 6);
		figures_scan_gap(sc, 20971520);
		figures_scan_feed(sc, "end\n", 4);
		f = figures_scan_finish(sc, &missing);
		CHECK(cJSON_GetArraySize(f) == 0 &&
		      strstr(missing.buf, "'gflops': no line of the output that was read matches") &&
		      strstr(missing.buf, "could only be in the part that was not read (20971520 bytes"),
		      "a regex that could only match in the gap says so", "missing=%s", missing.buf);
		cJSON_Delete(f);
		figures_scan_free(sc);

		/* the JSON figure needs the true last line */
		sc = figures_scan_new(rules + 2, 1);
		strbuf_reset(&missing);
		figures_scan_feed(sc, "{\"timing\": {\"median_us\": 3}}\n", 30);
		figures_scan_gap(sc, 0);
		f = figures_scan_finish(sc, &missing);
		CHECK(cJSON_GetArraySize(f) == 0 &&
		      strstr(missing.buf, "'median': the last line of the output was not read "
					  "(part of the output was not read)"),
		      "a JSON figure is not read from a line before a gap at the end", "missing=%s",
		      missing.buf);
		cJSON_Delete(f);
		figures_scan_free(sc);
	}
	strbuf_release(&missing);
	return check_summary();
}
