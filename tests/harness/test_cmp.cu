/* test_cmp.cu -- the harness's comparison of outputs with their reference
 * (kernels/harness/harness.cu: cmp_elem, cmp_errors, cmp_bad_words), run on
 * the CPU: built by nvcc in tests/t2081 on a machine with no GPU. An output
 * that is NaN, Inf or never written where the reference is finite must be
 * counted and make the errors infinite (issue 30 item 2), never error 0.
 * Also the timing's JSON: its clock and throttle reasons (item 10). */
#include "../../kernels/harness/harness.cu"

static int failed, checks;

static void check(int ok, const char *what, const char *got)
{
	checks++;
	if (!ok) {
		failed++;
		printf("FAIL %s: %s\n", what, got);
	} else {
		printf("ok   %s\n", what);
	}
}

/* compare n outputs o[i % no] against r[i % nr] as the kernel does */
static void compare(const float *o, int no, const int *poison, const float *r, int nr, size_t n,
		    struct cmp_acc *h, double *mabs, double *mrel, double *l2)
{
	struct cmp_part p = {0, 0, 0, 0, 0, 0, 0};
	memset(h, 0, sizeof *h);
	for (size_t i = 0; i < n; i++) {
		float ri = r[i % nr];
		if (isfinite(ri))
			h->sum_r2 += (double)ri * ri;
		else
			h->ref_nonfinite++;
		cmp_elem(&p, o[i % no], poison ? poison[i % no] : 0, ri, o[0], 1e-6);
	}
	h->sum_d2 = p.d2;
	h->unwritten = p.unwr;
	h->nonfinite = p.nonf;
	h->nan = p.nan;
	h->differs = p.diff;
	cmp_errors(h, p.mabs, p.mrel, mabs, mrel, l2);
}

int main(void)
{
	struct cmp_acc h;
	double a, rl, l2;
	char buf[256];
	const float nan1[] = {NAN}, one[] = {1.0f}, refs[] = {1.0f, 2.0f, 3.0f, 4.0f};

	/* all NaN: 1,048,576 outputs */
	compare(nan1, 1, NULL, one, 1, 1048576, &h, &a, &rl, &l2);
	cmp_bad_words(buf, sizeof buf, &h, 1048576);
	check(h.nonfinite == 1048576 && h.nan == 1048576, "every NaN output is counted", buf);
	check(isinf(a) && isinf(rl) && isinf(l2), "an all-NaN output has infinite errors, never 0", buf);
	check(!strcmp(buf, "NaN in 1,048,576 of 1,048,576 outputs"), "the count is said with separators",
	      buf);

	/* one Inf among finite outputs */
	{
		const float o[] = {1.0f, 2.0f, INFINITY, 4.5f};
		compare(o, 4, NULL, refs, 4, 4, &h, &a, &rl, &l2);
		cmp_bad_words(buf, sizeof buf, &h, 4);
		check(h.nonfinite == 1 && h.nan == 0 && isinf(l2) && !strcmp(buf, "Inf in 1 of 4 outputs"),
		      "one Inf fails the whole comparison", buf);
	}
	/* finite outputs: the errors as before */
	{
		const float o[] = {1.0f, 2.0f, 3.0f, 4.5f};
		compare(o, 4, NULL, refs, 4, 4, &h, &a, &rl, &l2);
		cmp_bad_words(buf, sizeof buf, &h, 4);
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "max_abs=%g rel_l2=%g", a, l2);
		check(a == 0.5 && fabs(l2 - 0.5 / sqrt(30.0)) < 1e-12 && h.nonfinite == 0 &&
		      !strncmp(buf, "max_abs", 7), "finite outputs: max_abs and rel_l2, nothing said", buf);
	}
	/* never written (the poison pattern) */
	{
		const float o[] = {1.0f, 2.0f, 3.0f, 4.0f};
		const int poison[] = {0, 1, 1, 0};
		compare(o, 4, poison, refs, 4, 1000, &h, &a, &rl, &l2);
		cmp_bad_words(buf, sizeof buf, &h, 1000);
		check(h.unwritten == 500 && isinf(a) && !strcmp(buf, "500 of 1,000 outputs never written"),
		      "outputs never written are counted and fail", buf);
	}
	/* NaN and Inf together; a NaN where the reference is not finite is the reference's fault */
	{
		const float o[] = {NAN, INFINITY, -INFINITY, NAN};
		const float r[] = {1.0f, 1.0f, 1.0f, NAN};
		compare(o, 4, NULL, r, 4, 4, &h, &a, &rl, &l2);
		cmp_bad_words(buf, sizeof buf, &h, 4);
		check(h.nan == 1 && h.nonfinite == 3 && h.ref_nonfinite == 1 &&
		      !strcmp(buf, "NaN in 1 of 4 outputs; Inf in 2 of 4 outputs"),
		      "NaN and Inf counted apart, only where the reference is finite", buf);
	}
	{
		char c[32];
		cmp_count(c, sizeof c, 0);
		check(!strcmp(c, "0"), "0 has no separator", c);
		cmp_count(c, sizeof c, 999);
		check(!strcmp(c, "999"), "999 has none", c);
		cmp_count(c, sizeof c, 1000);
		check(!strcmp(c, "1,000"), "1000 has one", c);
	}
	/* issue 30 item 10: the clock event reasons seen while timing are recorded */
	{
		struct hx_timing t;
		struct hx_json j = {NULL, 0, 0, 0};
		float one = 1.5f;
		memset(&t, 0, sizeof t);
		t.n = 1;
		t.samples_us = &one;
		t.stop_rule = "cv";
		t.clock_known = 1;
		t.clock_mhz_median = 1605;
		t.reasons_known = 1;
		t.throttle_reasons = 0x1 | 0x4 | 0x40;
		hx_json_open(&j, NULL, '{');
		hx_json_timing(&j, &t);
		hx_json_close(&j, '}');
		check(strstr(j.buf, "\"sm_clock_mhz_median\":1605") &&
		      strstr(j.buf, "\"throttle_reasons\":[\"sw_power_cap\",\"hw_thermal_slowdown\"]"),
		      "the timing records its clock and the throttle reasons seen (gpu_idle left out)", j.buf);
		free(j.buf);
		memset(&j, 0, sizeof j);
		t.reasons_known = 0;
		hx_json_open(&j, NULL, '{');
		hx_json_timing(&j, &t);
		hx_json_close(&j, '}');
		check(strstr(j.buf, "\"throttle_reasons\":null") != NULL,
		      "reasons NVML could not give are null", j.buf);
		free(j.buf);
	}
	printf("%d checks, %d failed\n", checks, failed);
	return failed != 0;
}
