/* test_compare.c -- unit tests of report/compare.c: figures of a record, pairing and verdicts, the figure's text. */
#include "report/compare.h"
#include "core/jsonutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/banned.h"

/* A run with one host: kernel k on problem P timed by `n` samples around
 * `base` (base, base*1.01, base*0.99, ...), its correctness step `check`,
 * its build with `regs` registers, and nvcc `nvcc`. */
static cJSON *make_run(const char *id, double base, int n, const char *check, int regs,
		       const char *nvcc)
{
	struct strbuf sb = STRBUF_INIT;
	cJSON *run;
	int i;
	strbuf_addf(&sb, "{\"run_id\": \"%s\", \"provenance\": {\"git\": {\"commit\": \"c0ffee\"}},"
		    "\"hosts\": [{\"name\": \"h1\", \"info\": {\"gpu_name\": \"NVIDIA H100\","
		    " \"driver\": \"580\", \"nvcc\": {\"version\": \"%s\"}},"
		    " \"builds\": [{\"program\": \"k\", \"arch\": \"sm_90a\", \"status\": \"PASS\","
		    "   \"resources\": [{\"kernel\": \"k1\", \"registers\": %d, \"spill_store_bytes\": 0,"
		    "                    \"spill_load_bytes\": 0, \"smem_bytes\": 1024}]}],"
		    " \"steps\": ["
		    "  {\"kind\": \"correctness\", \"program\": \"k\", \"problem\": \"P\", \"status\": \"%s\"},"
		    "  {\"kind\": \"benchmark\", \"program\": \"k\", \"problem\": \"P\", \"arch\": \"sm_90a\","
		    "   \"status\": \"PASS\", \"result\": {\"status\": \"pass\", \"timing\": {\"median_us\": %.17g,"
		    "   \"min_us\": %.17g, \"max_us\": %.17g, \"samples_us\": [", id, nvcc, regs, check,
		    base, base * 0.98, base * 1.02);
	for (i = 0; i < n; i++)
		strbuf_addf(&sb, "%s%.17g", i ? "," : "", base * (1 + 0.01 * ((i % 5) - 2) / 2));
	strbuf_addstr(&sb, "]}, \"model\": {\"tflops\": 1.5}}},"
		      "  {\"kind\": \"benchmark\", \"program\": \"other\", \"problem\": \"P\", \"status\": \"PASS\","
		      "   \"result\": {\"timing\": {\"median_us\": 3}}}]}]}");
	run = cJSON_Parse(sb.buf);
	strbuf_release(&sb);
	return run;
}

/* host 0's info of run, writable */
static cJSON *info_of(cJSON *run)
{
	return cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(run, "hosts"), 0), "info");
}

static const struct cmp_row *row_of(const struct cmp_result *r, const char *program)
{
	int i;
	for (i = 0; i < r->nrows; i++) {
		const struct figure *f = r->rows[i].a ? r->rows[i].a : r->rows[i].b;
		if (!strcmp(f->program, program))
			return &r->rows[i];
	}
	return NULL;
}

static enum cmp_verdict verdict(cJSON *a, cJSON *b, const struct cmp_opts *o, char *changes,
				size_t cap)
{
	struct figures fa, fb;
	struct cmp_result r;
	const struct cmp_row *row;
	enum cmp_verdict v;
	figures_of_run(a, &fa);
	figures_of_run(b, &fb);
	compare_runs(&fa, &fb, o, &r);
	row = row_of(&r, "k");
	v = row ? row->verdict : CMP_MISSING;
	if (changes)
		snprintf(changes, cap, "%s", row ? row->changes.buf : "");
	compare_result_release(&r);
	figures_release(&fa);
	figures_release(&fb);
	return v;
}

/* A run of program k: its plain build (`plain` registers) and benchmark on
 * P, then a sweep of T=1 and T=2, each variant's build with its own
 * registers, a check step (T=2's `check2`) and a benchmark (T=2's samples
 * around `base2`). */
static cJSON *make_sweep_run(const char *id, int plain, int regs2, const char *check2, double base2)
{
	struct strbuf sb = STRBUF_INIT;
	cJSON *run;
	int i, v;
	strbuf_addf(&sb, "{\"run_id\": \"%s\", \"hosts\": [{\"name\": \"h1\", \"info\": {\"gpu_name\": "
		    "\"NVIDIA H100\"}, \"builds\": ["
		    " {\"program\": \"k\", \"variant\": \"T=1\", \"arch\": \"sm_90a\", \"resources\": [{\"registers\": 40}]},"
		    " {\"program\": \"k\", \"variant\": \"T=2\", \"arch\": \"sm_90a\", \"resources\": [{\"registers\": %d}]},"
		    " {\"program\": \"k\", \"arch\": \"sm_90a\", \"resources\": [{\"registers\": %d}]}],"
		    " \"steps\": [", id, regs2, plain);
	for (v = 0; v <= 2; v++) {
		double base = v == 2 ? base2 : 10 * (v + 1);
		if (v)
			strbuf_addf(&sb, "{\"kind\": \"sweep\", \"mode\": \"check\", \"program\": \"k\", "
				    "\"problem\": \"P\", \"variant\": \"T=%d\", \"status\": \"%s\"},",
				    v, v == 2 ? check2 : "PASS");
		if (v)
			strbuf_addf(&sb, "{\"kind\": \"sweep\", \"mode\": \"bench\", \"variant\": \"T=%d\", ", v);
		else
			strbuf_addstr(&sb, "{\"kind\": \"benchmark\", ");
		strbuf_addf(&sb, "\"program\": \"k\", \"problem\": \"P\", \"arch\": \"sm_90a\", \"status\": "
			    "\"PASS\", \"result\": {\"status\": \"pass\", \"timing\": {\"median_us\": %.17g, "
			    "\"samples_us\": [", base);
		for (i = 0; i < 40; i++)
			strbuf_addf(&sb, "%s%.17g", i ? "," : "", base * (1 + 0.01 * ((i % 5) - 2) / 2));
		strbuf_addf(&sb, "]}}}%s", v < 2 ? "," : "");
	}
	strbuf_addstr(&sb, "]}]}");
	run = cJSON_Parse(sb.buf);
	strbuf_release(&sb);
	return run;
}

/* Sweep variants: figures of their own only for compare, each paired with
 * its variant, with its own build's resources and its own check step; the
 * plain benchmark keeps the plain build's resources. */
static void test_sweep_variants(void)
{
	struct cmp_opts o = { STATS_DEFAULT_ALPHA, STATS_DEFAULT_FACTOR, NULL, NULL, 0, 0, 0 };
	cJSON *a = make_sweep_run("A", 32, 48, "PASS", 20);
	cJSON *b = make_sweep_run("B", 32, 64, "FAIL", 20);
	cJSON *c = make_sweep_run("C", 32, 48, "PASS", 30);
	struct figures fa, fb;
	struct cmp_result r;
	int i;

	figures_of_run(a, &fa);
	CHECK(fa.n == 1 && !fa.v[0].variant && fa.v[0].registers == 32,
	      "figures_of_run: the plain benchmark alone, with the plain build's registers",
	      "n=%d regs=%d", fa.n, fa.n ? fa.v[0].registers : -1);
	figures_release(&fa);
	figures_of_run_sweeps(a, &fa);
	CHECK(fa.n == 3 && !fa.v[0].variant && !strcmp(fa.v[1].variant, "T=1") &&
	      !strcmp(fa.v[2].variant, "T=2") && fa.v[0].registers == 32 && fa.v[1].registers == 40 &&
	      fa.v[2].registers == 48 && !strcmp(fa.v[2].check_status, "PASS") && fa.v[2].nsamples == 40,
	      "figures_of_run_sweeps: each variant in record order, its build's registers, its check",
	      "n=%d", fa.n);
	figures_of_run_sweeps(b, &fb);
	compare_runs(&fa, &fb, &o, &r);
	CHECK(r.nrows == 3 && r.rows[0].verdict == CMP_SAME && r.rows[1].verdict == CMP_SAME &&
	      r.rows[2].verdict == CMP_DIFFERENT && !strcmp(r.rows[2].a->variant, "T=2") &&
	      !strcmp(r.rows[2].b->variant, "T=2") &&
	      strstr(r.rows[2].changes.buf, "correctness PASS -> FAIL") &&
	      strstr(r.rows[2].changes.buf, "registers 48 -> 64") && r.rows[2].regression,
	      "a variant's check and registers changed: that variant different, named, a regression",
	      "nrows=%d changes='%s'", r.nrows, r.nrows == 3 ? r.rows[2].changes.buf : "");
	compare_result_release(&r);
	figures_release(&fb);
	/* B without T=1: T=1 missing, T=2 still T=2 (30 vs 20: slower) */
	cJSON_DeleteItemFromArray(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(c, "hosts"), 0),
						      "steps"), 2);
	figures_of_run_sweeps(c, &fb);
	compare_runs(&fa, &fb, &o, &r);
	for (i = 0; i < r.nrows && !(r.rows[i].a && r.rows[i].a->variant && !strcmp(r.rows[i].a->variant, "T=2")); i++)
		;
	CHECK(r.nrows == 3 && r.rows[1].verdict == CMP_MISSING && !r.rows[1].b &&
	      !strcmp(r.rows[1].a->variant, "T=1") && i < r.nrows && r.rows[i].verdict == CMP_SLOWER &&
	      r.count[CMP_MISSING] == 1,
	      "a variant of one run only is missing; the others keep their own partner",
	      "nrows=%d", r.nrows);
	compare_result_release(&r);
	figures_release(&fb);
	figures_release(&fa);
	cJSON_Delete(a);
	cJSON_Delete(b);
	cJSON_Delete(c);
}

int main(void)
{
	struct cmp_opts o = { STATS_DEFAULT_ALPHA, STATS_DEFAULT_FACTOR, NULL, NULL, 0, 0, 0 };
	cJSON *a = make_run("A", 5.5, 40, "PASS", 32, "13.0.88");
	cJSON *same = make_run("B", 5.5, 40, "PASS", 32, "13.0.88");
	cJSON *slow = make_run("C", 7.0, 40, "PASS", 32, "13.0.88");
	cJSON *wrong = make_run("D", 5.5, 40, "FAIL", 32, "13.0.88");
	cJSON *regs = make_run("E", 5.5, 40, "PASS", 64, "13.0.90");
	cJSON *few = make_run("F", 7.0, 3, "PASS", 32, "13.0.88");
	cJSON *few2 = make_run("G", 5.5, 3, "PASS", 32, "13.0.88");
	struct figures f;
	struct strbuf sb = STRBUF_INIT;
	char changes[256];

	figures_of_run(a, &f);
	CHECK(f.n == 2, "figures: one per benchmark step", "n=%d", f.n);
	CHECK(f.n == 2 && f.v[0].nsamples == 40 && f.v[0].median_us == 5.5 && f.v[0].tflops == 1.5 &&
	      !strcmp(f.v[0].check_status, "PASS") && f.v[0].registers == 32 &&
	      f.v[0].spill_bytes == 0 && f.v[0].smem_bytes == 1024 &&
	      !strcmp(f.v[0].nvcc_version, "13.0.88") && !strcmp(f.v[0].commit, "c0ffee"),
	      "a figure carries samples, median, TFLOPS, its check, resources and toolchain",
	      "nsamples=%d check=%s regs=%d", f.n ? f.v[0].nsamples : -1,
	      f.n ? f.v[0].check_status : "", f.n ? f.v[0].registers : -1);
	CHECK(f.n == 2 && f.v[1].nsamples == 0 && isnan(f.v[1].tflops) && !f.v[1].check_status &&
	      f.v[1].registers == -1, "a figure without samples, model, check or build", "regs=%d",
	      f.n > 1 ? f.v[1].registers : 0);
	compare_fmt_figure(&sb, &f.v[0]);
	CHECK(!strcmp(sb.buf, "5.50 us [5.39-5.61, n=40]"),
	      "the figure prints as report.md prints microseconds", "'%s'", sb.buf);
	strbuf_reset(&sb);
	compare_fmt_figure(&sb, &f.v[1]);
	CHECK(!strcmp(sb.buf, "3.00 us [---, no samples]"), "no samples, no range", "'%s'", sb.buf);
	figures_release(&f);
	strbuf_reset(&sb);

	CHECK(verdict(a, same, &o, NULL, 0) == CMP_SAME, "the same samples: same", "%s",
	      compare_verdict_name(verdict(a, same, &o, NULL, 0), 0));
	CHECK(verdict(a, slow, &o, NULL, 0) == CMP_SLOWER, "27% slower on 40 samples: slower", "%s",
	      compare_verdict_name(verdict(a, slow, &o, NULL, 0), 0));
	CHECK(verdict(slow, a, &o, NULL, 0) == CMP_FASTER, "the reverse: faster", "%s",
	      compare_verdict_name(verdict(slow, a, &o, NULL, 0), 0));
	o.factor = 1.5;
	CHECK(verdict(a, slow, &o, NULL, 0) == CMP_SAME, "within --factor 1.5: same", "%s",
	      compare_verdict_name(verdict(a, slow, &o, NULL, 0), 0));
	o.factor = STATS_DEFAULT_FACTOR;
	CHECK(verdict(few2, few, &o, NULL, 0) == CMP_INSUFFICIENT, "3 samples a side cannot decide",
	      "%s", compare_verdict_name(verdict(few2, few, &o, NULL, 0), 0));
	CHECK(verdict(a, wrong, &o, changes, sizeof(changes)) == CMP_DIFFERENT &&
	      strstr(changes, "correctness PASS -> FAIL"), "a correctness change is a difference, named",
	      "'%s'", changes);
	CHECK(verdict(a, regs, &o, changes, sizeof(changes)) == CMP_DIFFERENT &&
	      strstr(changes, "registers 32 -> 64") && strstr(changes, "nvcc 13.0.88 -> 13.0.90"),
	      "registers and nvcc changes are named", "'%s'", changes);
	o.reproduce = 1;
	CHECK(!strcmp(compare_verdict_name(CMP_SAME, 1), "reproduced"), "reproduce names same 'reproduced'",
	      "%s", compare_verdict_name(CMP_SAME, 1));
	{
		struct figures fa, fb;
		struct cmp_result r;
		cJSON_DeleteItemFromArray(cJSON_GetObjectItem(cJSON_GetArrayItem(
			cJSON_GetObjectItem(same, "hosts"), 0), "steps"), 2);
		figures_of_run(a, &fa);
		figures_of_run(same, &fb);
		compare_runs(&fa, &fb, &o, &r);
		CHECK(row_of(&r, "other") && row_of(&r, "other")->verdict == CMP_MISSING &&
		      r.count[CMP_MISSING] == 1 && r.count[CMP_SAME] == 1,
		      "a figure in one run only is missing", "missing=%d same=%d", r.count[CMP_MISSING],
		      r.count[CMP_SAME]);
		compare_result_release(&r);
		figures_release(&fa);
		figures_release(&fb);
	}
	{
		/* One rule: the test, the ratio and the verdict come from the stored
		 * samples. B's samples are A's x1.10 (significant) while B's
		 * recorded median is 5.6 (x1.018, within x1.05): the record does
		 * not agree with itself, so no "same" -- insufficient data, and a
		 * regression that cannot be ruled out. */
		cJSON *b = make_run("H", 5.5 * 1.10, 40, "PASS", 32, "13.0.88");
		struct figures fa, fb;
		struct cmp_result r;
		const struct cmp_row *k;
		cJSON_ReplaceItemInObject(cJSON_GetObjectItem(json_path(b, "hosts.0.steps.1.result"), "timing"),
					  "median_us", cJSON_CreateNumber(5.6));
		figures_of_run(a, &fa);
		figures_of_run(b, &fb);
		compare_runs(&fa, &fb, &o, &r);
		k = row_of(&r, "k");
		CHECK(k && k->verdict == CMP_INSUFFICIENT && k->regression &&
		      fabs(k->t.ratio - 1.10) < 1e-9 && strstr(k->notes.buf, "recorded medians give x1.018") &&
		      strstr(k->notes.buf, "stored samples x1.100"),
		      "samples x1.10, recorded medians x1.018: insufficient data, the ratio of the samples, a regression",
		      "verdict %s ratio %g notes '%s'", k ? compare_verdict_name(k->verdict, 0) : "-",
		      k ? k->t.ratio : NAN, k ? k->notes.buf : "");
		compare_result_release(&r);
		figures_release(&fb);
		cJSON_ReplaceItemInObject(cJSON_GetObjectItem(json_path(b, "hosts.0.steps.1.result"), "timing"),
					  "median_us", cJSON_CreateNumber(5.5 * 1.10));
		figures_of_run(b, &fb);
		compare_runs(&fa, &fb, &o, &r);
		CHECK(row_of(&r, "k") && row_of(&r, "k")->verdict == CMP_SLOWER,
		      "the same samples with their own median (x1.10): slower", "%s",
		      row_of(&r, "k") ? compare_verdict_name(row_of(&r, "k")->verdict, 0) : "-");
		compare_result_release(&r);
		figures_release(&fa);
		figures_release(&fb);
		cJSON_Delete(b);
	}
	{
		/* issue 30: B's median 1.30x A's with identical stored samples was
		 * "x1.300 | p 1.0000 | same", exit 0 */
		cJSON *b = make_run("H", 5.5, 40, "PASS", 32, "13.0.88");
		const struct cmp_row *k;
		struct figures fa, fb;
		struct cmp_result r;
		cJSON_ReplaceItemInObject(cJSON_GetObjectItem(json_path(b, "hosts.0.steps.1.result"), "timing"),
					  "median_us", cJSON_CreateNumber(5.5 * 1.3));
		figures_of_run(a, &fa);
		figures_of_run(b, &fb);
		compare_runs(&fa, &fb, &o, &r);
		k = row_of(&r, "k");
		CHECK(k && k->verdict != CMP_SAME && k->verdict == CMP_INSUFFICIENT && k->regression &&
		      r.nregressions == 1 && fabs(k->t.ratio - 1.0) < 1e-12 && k->t.p == 1.0,
		      "median x1.30 over identical stored samples: not same, a regression that cannot be ruled out",
		      "verdict %s regression %d ratio %g", k ? compare_verdict_name(k->verdict, 0) : "-",
		      k ? k->regression : -1, k ? k->t.ratio : NAN);
		compare_result_release(&r);
		figures_release(&fa);
		figures_release(&fb);
		cJSON_Delete(b);
	}
	{
		/* A record keeping 40 of 9876 samples: n= shows the 9876, the
		 * verdict says the samples are a subset and uses them. */
		cJSON *b = make_run("S", 5.5, 40, "PASS", 32, "13.0.88");
		cJSON *t = cJSON_GetObjectItem(json_path(b, "hosts.0.steps.1.result"), "timing");
		const struct cmp_row *k;
		struct figures fa, fb;
		struct cmp_result r;
		cJSON_AddNumberToObject(t, "n", 9876);
		cJSON_AddNumberToObject(t, "sm_clock_mhz_median", 1980);
		figures_of_run(a, &fa);
		figures_of_run(b, &fb);
		strbuf_reset(&sb);
		compare_fmt_figure(&sb, &fb.v[0]);
		CHECK(!strcmp(sb.buf, "5.50 us [5.39-5.61, n=9876, 40 stored] at 1980 MHz"),
		      "n= is the samples timed, the stored count beside it, and the clock", "'%s'", sb.buf);
		compare_runs(&fa, &fb, &o, &r);
		k = row_of(&r, "k");
		CHECK(k && k->verdict == CMP_SAME && k->t.na == 40 && k->t.nb == 40 &&
		      strstr(k->notes.buf, "the stored samples are a subset (B 40 of 9876"),
		      "a subset is named in the verdict", "'%s'", k ? k->notes.buf : "");
		compare_result_release(&r);
		figures_release(&fa);
		figures_release(&fb);
		strbuf_release(&sb);
		cJSON_Delete(b);
	}
	{
		/* Different GPU models: not comparable (never a regression) unless
		 * cross_gpu; a clock cap too; two instances of one model: the
		 * instance factor (x1.08), its edge "same", x1.1 slower. */
		static const struct { const char *gpu, *uuid; double cap, base; int cross;
				      enum cmp_verdict want; int regression; const char *what; } cases[] = {
			{ "NVIDIA H200", NULL, 0, 7.0, 0, CMP_NOT_COMPARABLE, 0, "H100 vs H200: not comparable" },
			{ "NVIDIA H200", NULL, 0, 7.0, 1, CMP_SLOWER, 1, "H100 vs H200 with cross_gpu: slower" },
			{ "NVIDIA H100", NULL, 1755, 7.0, 0, CMP_NOT_COMPARABLE, 0, "clock cap 1980 vs 1755: not comparable" },
			{ "NVIDIA H100", "GPU-bbbb", 0, 5.5 * 1.072, 0, CMP_SAME, 0, "another instance, x1.072: same" },
			{ "NVIDIA H100", "GPU-bbbb", 0, 5.5 * 1.08, 0, CMP_SAME, 0, "another instance, exactly x1.08: same" },
			{ "NVIDIA H100", "GPU-bbbb", 0, 5.5 * 1.1, 0, CMP_SLOWER, 1, "another instance, x1.1: slower" },
			{ "NVIDIA H100", "GPU-aaaa", 0, 5.5 * 1.072, 0, CMP_SLOWER, 1, "the same instance, x1.072: slower" },
		};
		size_t c;
		cJSON_AddStringToObject(info_of(a), "gpu_uuid", "GPU-aaaa");
		cJSON_AddNumberToObject(info_of(a), "max_sm_clock_mhz", 1980);
		for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			cJSON *b = make_run("X", cases[c].base, 40, "PASS", 32, "13.0.88");
			cJSON *info = info_of(b);
			const struct cmp_row *k;
			struct figures fa, fb;
			struct cmp_result r;
			cJSON_ReplaceItemInObject(info, "gpu_name", cJSON_CreateString(cases[c].gpu));
			cJSON_AddStringToObject(info, "gpu_uuid", cases[c].uuid ? cases[c].uuid : "GPU-aaaa");
			cJSON_AddNumberToObject(info, "max_sm_clock_mhz", cases[c].cap ? cases[c].cap : 1980);
			o.cross_gpu = cases[c].cross;
			figures_of_run(a, &fa);
			figures_of_run(b, &fb);
			compare_runs(&fa, &fb, &o, &r);
			k = row_of(&r, "k");
			CHECK(k && k->verdict == cases[c].want && k->regression == cases[c].regression &&
			      (cases[c].want != CMP_NOT_COMPARABLE ||
			       (strstr(k->notes.buf, "--cross-gpu") && r.nregressions == 0)) &&
			      (!cases[c].uuid || strcmp(cases[c].uuid, "GPU-bbbb") ||
			       strstr(k->notes.buf, "GPU instances differ (GPU-aaaa vs GPU-bbbb)")),
			      cases[c].what, "verdict %s regression %d notes '%s'",
			      k ? compare_verdict_name(k->verdict, 0) : "-", k ? k->regression : -1,
			      k ? k->notes.buf : "");
			compare_result_release(&r);
			figures_release(&fa);
			figures_release(&fb);
			cJSON_Delete(b);
		}
		o.cross_gpu = 0;
	}
	{
		/* another driver: "different", named; its slower timing is no
		 * regression of the code */
		cJSON *b = make_run("D2", 7.0, 40, "PASS", 32, "13.0.88");
		struct figures fa, fb;
		struct cmp_result r;
		cJSON_ReplaceItemInObject(info_of(b), "driver", cJSON_CreateString("590"));
		cJSON_DeleteItemFromObject(info_of(a), "max_sm_clock_mhz");
		figures_of_run(a, &fa);
		figures_of_run(b, &fb);
		compare_runs(&fa, &fb, &o, &r);
		CHECK(row_of(&r, "k") && row_of(&r, "k")->verdict == CMP_DIFFERENT &&
		      !row_of(&r, "k")->regression && strstr(row_of(&r, "k")->changes.buf, "driver 580 -> 590"),
		      "a driver change: different, not a regression", "'%s'",
		      row_of(&r, "k") ? row_of(&r, "k")->changes.buf : "");
		compare_result_release(&r);
		figures_release(&fa);
		figures_release(&fb);
		cJSON_Delete(b);
	}
	cJSON_Delete(a);
	cJSON_Delete(same);
	cJSON_Delete(slow);
	cJSON_Delete(wrong);
	cJSON_Delete(regs);
	cJSON_Delete(few);
	cJSON_Delete(few2);
	test_sweep_variants();
	return check_summary();
}
