/* test_samplesline.c -- a samples.txt line (report/samplesline.h): the shorter form,
 * packed only when every sample comes back as the same double, read back exactly. */
#include "report/samplesline.h"
#include "store/samples.h"
#include "check.h"

#include <math.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <zlib.h>
#include <stdlib.h>
#include <string.h>

#define PREFIX SAMPLES_ENCODING " "

/* line (with its '\n') read back: the same n doubles as want (sorted), bit for bit */
static int reads_back(const char *line, const double *want, int n)
{
	char *text = strdup(line);
	double *v;
	int got, i, ok;
	text[strcspn(text, "\n")] = '\0';
	ok = samplesline_parse(text, &v, &got) == (n > 0) && got == n;
	for (i = 0; ok && i < n; i++)
		ok = !memcmp(&v[i], &want[i], sizeof(double));
	free(v);
	free(text);
	return ok;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* n samples of a steady kernel: ticks of 32 ns around base us, a few outliers */
static double *steady(int n, double base)
{
	double *v = malloc((size_t)n * sizeof(*v));
	uint32_t x = 12345;
	int i;
	for (i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		v[i] = (double)(llround(base * 1000) + 32 * (int64_t)((x >> 16) % 64) +
				(i % 97 == 0 ? 130000 : 0)) / 1000.0;
	}
	return v;
}

/* a packed line of two raw zigzag varints (what no writer makes): its text in out */
static void crafted(uint64_t u1, uint64_t u2, char *out, size_t len)
{
	unsigned char raw[32], z[128], b64[256];
	uint64_t us[2] = { u1, u2 };
	uLongf zlen = sizeof(z);
	size_t k = 0;
	int i;
	for (i = 0; i < 2; i++) {
		uint64_t u = us[i];
		while (u >= 0x80) {
			raw[k++] = (unsigned char)(u | 0x80);
			u >>= 7;
		}
		raw[k++] = (unsigned char)u;
	}
	compress2(z, &zlen, raw, (uLong)k, 9);
	EVP_EncodeBlock(b64, z, (int)zlen);
	snprintf(out, len, PREFIX "2 %s", (char *)b64);
}

int main(void)
{
	struct strbuf sb = STRBUF_INIT, plain = STRBUF_INIT;
	double *v = steady(2000, 834.528), *sorted = malloc(2000 * sizeof(double));
	double one[] = { 2.5 }, ten[10], neg0[40], odd[40], big[40];
	int i;

	memcpy(sorted, v, 2000 * sizeof(double));
	qsort(sorted, 2000, sizeof(double), cmp_double);
	for (i = 0; i < 2000; i++) {
		if (i)
			strbuf_addch(&plain, ' ');
		strbuf_add_double(&plain, sorted[i]);
	}
	samplesline_add(&sb, v, 2000);
	CHECK(!strncmp(sb.buf, PREFIX "2000 ", strlen(PREFIX) + 5) && sb.buf[sb.len - 1] == '\n' &&
	      !strchr(sb.buf, '\n')[1],
	      "2,000 samples of whole nanoseconds: one packed line, its count first", "%.60s", sb.buf);
	CHECK(sb.len * 10 < plain.len, "packed is a tenth of the plain text or less",
	      "%zu vs %zu bytes", sb.len, plain.len);
	CHECK(reads_back(sb.buf, sorted, 2000), "read back: the very same doubles, ascending", "%s",
	      "differs");
	CHECK(!memcmp(v, sorted, 2000 * sizeof(double)), "the caller's array is left sorted", "%s",
	      "not sorted");

	/* one sample whose text is shorter plain; ten equal ones too */
	strbuf_reset(&sb);
	samplesline_add(&sb, one, 1);
	CHECK(!strcmp(sb.buf, "2.5\n") && reads_back(sb.buf, one, 1), "1 sample: plain, the shorter",
	      "'%s'", sb.buf);
	for (i = 0; i < 10; i++)
		ten[i] = 2;
	strbuf_reset(&sb);
	samplesline_add(&sb, ten, 10);
	CHECK(!strcmp(sb.buf, "2 2 2 2 2 2 2 2 2 2\n"), "10 equal samples: plain, the shorter", "'%s'",
	      sb.buf);

	/* 2,000 tied samples: packed, every one back */
	for (i = 0; i < 2000; i++)
		v[i] = 943.424;
	memcpy(sorted, v, 2000 * sizeof(double));
	strbuf_reset(&sb);
	samplesline_add(&sb, v, 2000);
	CHECK(!strncmp(sb.buf, PREFIX, strlen(PREFIX)) && sb.len < 100 && reads_back(sb.buf, sorted, 2000),
	      "2,000 tied samples: packed in a few bytes, all back", "%zu bytes", sb.len);

	/* a sample the codec would change: the whole line plain */
	for (i = 0; i < 40; i++)
		odd[i] = neg0[i] = big[i] = 100.0 + i;
	odd[7] = 0.30000000000000004;
	neg0[3] = -0.0;
	big[5] = 1e17;   /* past what a nanosecond count in a double holds */
	{
		double *cases[] = { odd, neg0, big };
		const char *names[] = { "0.30000000000000004 (not a whole ns)", "-0 (the codec gives 0)",
					"1e17 us (beyond 2^53 ns)" };
		int c;
		for (c = 0; c < 3; c++) {
			double want[40];
			char what[120];
			memcpy(want, cases[c], sizeof(want));
			qsort(want, 40, sizeof(double), cmp_double);
			strbuf_reset(&sb);
			samplesline_add(&sb, cases[c], 40);
			snprintf(what, sizeof(what), "40 samples with %s: plain, each read back exactly",
				 names[c]);
			CHECK(strncmp(sb.buf, PREFIX, strlen(PREFIX)) && reads_back(sb.buf, want, 40), what,
			      "%.80s", sb.buf);
		}
	}
	{
		const double fine[] = { 0.001, 834.528, 8.9e12, -3.5 }, huge[] = { 9.0e12 },
			     notns[] = { 0.30000000000000004 }, minus0[] = { -0.0 }, inf[] = { INFINITY };
		CHECK(samples_exact(fine, 4) && !samples_exact(huge, 1) && !samples_exact(notns, 1) &&
		      !samples_exact(minus0, 1) && !samples_exact(inf, 1) && samples_exact(fine, 0),
		      "samples_exact: whole ns below 9e12 us yes; 9e12, 0.30000000000000004, -0, inf no",
		      "%s", "wrong");
	}

	/* damaged or foreign lines: no samples, never a guess */
	strbuf_reset(&sb);
	free(v);
	v = steady(500, 10.0);
	samplesline_add(&sb, v, 500);
	{
		char *bad = strdup(sb.buf), *count = bad + strlen(PREFIX);
		double *w;
		int n;
		bad[strcspn(bad, "\n")] = '\0';
		bad[strlen(bad) - 5] ^= 0x01;   /* a flipped bit in the data */
		CHECK(!samplesline_parse(bad, &w, &n) && n == 0 && !w, "a damaged packed line: none", "%d", n);
		free(bad);
		bad = strdup(sb.buf);
		bad[strcspn(bad, "\n")] = '\0';
		count = bad + strlen(PREFIX);
		memcpy(count, "499", 3);   /* a count the data does not hold */
		CHECK(!samplesline_parse(bad, &w, &n) && n == 0 && !w, "a count that is not the data's: none",
		      "%d", n);
		free(bad);
		CHECK(!samplesline_parse("zstd/v9 3 AAAA", &w, &n) && n == 0,
		      "an encoding this gpuorch does not know: none", "%d", n);
		CHECK(!samplesline_parse("", &w, &n) && n == 0 && !w, "an empty line: none", "%d", n);
		CHECK(!samplesline_parse("1.5 2.5\n3.5 4.5", &w, &n) && n == 0 && !w,
		      "two lines read as one (a samples_at spanning them): none", "%d", n);
	}
	{
		char line[512];
		double *w;
		int n;
		/* deltas of 2^63-2 ns twice: int64 would overflow (UBSan) and give -0.004 */
		crafted(UINT64_MAX - 3, UINT64_MAX - 3, line, sizeof(line));
		CHECK(!samplesline_parse(line, &w, &n) && n == 0 && !w,
		      "a packed line whose deltas overflow: none, no arithmetic past int64", "%d", n);
		/* the largest the writer makes, 9e12 us - 1 ns, then back to 1 ns: read back */
		crafted((uint64_t)(9000000000000000LL - 1) << 1,
			(((uint64_t)(9000000000000000LL - 2) - 1) << 1) | 1, line, sizeof(line));
		CHECK(samplesline_parse(line, &w, &n) && n == 2 && w[0] == 8999999999999.999 &&
		      w[1] == 0.001,
		      "deltas within the limit: read back", "n=%d", n);
		free(w);
		crafted((uint64_t)9000000000000000LL << 1, 0, line, sizeof(line));
		CHECK(!samplesline_parse(line, &w, &n) && n == 0,
		      "a sample of 9e12 us exactly (the limit): none", "n=%d", n);
	}
	free(v);
	free(sorted);
	strbuf_release(&sb);
	strbuf_release(&plain);
	return check_summary();
}
