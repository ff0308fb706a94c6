/* test_stats.c -- unit tests for stats.c: quantiles, the Mann-Whitney U test, verdicts.
 *
 * Expected p-values are scipy.stats.mannwhitneyu's (two-sided, method "auto",
 * use_continuity=True): the "scipy doc" case is the example in scipy's own
 * documentation (U=17, exact p=0.1111111111111111, asymptotic
 * p=0.11134688653314041); the others were computed with an independent
 * Python re-implementation (exact p by enumerating every arrangement of the
 * ranks; asymptotic by the tie-corrected normal formula) and checked by
 * hand where short: complete separation of 5 vs 6 values gives
 * p = 2 / C(11,5) = 0.004329. */
#include "core/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

static int nfail, ncheck;
#define CHECK(cond, ...) do { \
	ncheck++; \
	if (cond) { printf("ok %d - ", ncheck); printf(__VA_ARGS__); printf("\n"); } \
	else { nfail++; printf("not ok %d - ", ncheck); printf(__VA_ARGS__); printf(" (%s:%d)\n", __FILE__, __LINE__); } \
} while (0)
#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int close_rel(double x, double want, double tol)
{
	return fabs(x - want) <= tol * fabs(want);
}

static void mwu_case(const char *name, const double *a, int na, const double *b, int nb,
		     double want_u1, double want_p, int want_exact)
{
	struct stats_mwu t;
	int rc = stats_mann_whitney(a, na, b, nb, &t);
	CHECK(rc == 0 && t.u1 == want_u1 && t.u1 + t.u2 == (double)na * nb,
	      "%s: U1 = %g (got %g)", name, want_u1, t.u1);
	CHECK(close_rel(t.p, want_p, 1e-9), "%s: p = %.17g (got %.17g)", name, want_p, t.p);
	CHECK(t.exact == want_exact, "%s: %s method", name, want_exact ? "exact" : "asymptotic");
}

/* The one ratio rule: beyond the factor, exactly at it (also an ulp past
 * it after a division of decimals) is within. */
static void beyond_factor(void)
{
	CHECK(stats_beyond_factor(1.25, 1.25) == 0 && stats_beyond_factor(0.8, 1.25) == 0 &&
	      stats_beyond_factor(1.0, 1.05) == 0, "exactly at the factor, its inverse, a tie: within");
	CHECK(1.1865 / 1.13 > 1.05 && stats_beyond_factor(1.1865 / 1.13, 1.05) == 0,
	      "1.1865 / 1.13 = %.17g lands an ulp past 1.05 and is still at it", 1.1865 / 1.13);
	CHECK(1.13 / 1.1865 < 1 / 1.05 && stats_beyond_factor(1.13 / 1.1865, 1.05) == 0,
	      "1.13 / 1.1865 = %.17g lands an ulp below 1 / 1.05 and is still at it", 1.13 / 1.1865);
	CHECK(stats_beyond_factor(1.1866 / 1.13, 1.05) == 1 && stats_beyond_factor(1.13 / 1.1866, 1.05) == -1,
	      "1.1866 against 1.13 is beyond, both ways");
	CHECK(stats_beyond_factor(NAN, 1.05) == 0, "no ratio is no change");
}

static int cmp_ref(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

/* stats_sort gives qsort's array bit for bit (glibc's qsort: a stable merge
 * sort): sizes around its runs and merges, ties, -0 among 0s, a NaN */
static void sort_like_qsort(void)
{
	static const int sizes[] = { 0, 1, 2, 15, 16, 17, 33, 2000, 100003 };
	unsigned long long r = 88172645463325252ull;
	double *a = malloc(100003 * sizeof(double)), *b = malloc(100003 * sizeof(double));
	int k, i, same = 1;
	for (k = 0; k < (int)(sizeof(sizes) / sizeof(sizes[0])); k++) {
		int n = sizes[k], mode;
		for (mode = 0; mode < 3; mode++) {
			for (i = 0; i < n; i++) {
				r ^= r << 13, r ^= r >> 7, r ^= r << 17;
				/* whole ns; many ties; -0 and 0 */
				a[i] = mode == 0 ? (double)(r % 100000000) / 1000.0
				     : mode == 1 ? (double)(r % 7)
				     : (r & 1 ? -0.0 : 0.0) + (double)(r % 3);
			}
			if (n > 5 && mode == 2)
				a[n / 2] = NAN;   /* not an order: qsort's own sort */
			memcpy(b, a, (size_t)n * sizeof(double));
			stats_sort(a, n);
			qsort(b, (size_t)n, sizeof(double), cmp_ref);
			same &= n == 0 || memcmp(a, b, (size_t)n * sizeof(double)) == 0;
		}
	}
	CHECK(same, "stats_sort: qsort's array bit for bit (sizes 0 to 100,003; ties, -0, NaN)");
	free(a);
	free(b);
}

int main(void)
{
	static const double odd[] = { 5, 1, 3, 2, 4 };
	static const double even[] = { 4, 1, 3, 2 };
	static const double male[] = { 19, 22, 16, 29, 24 }, female[] = { 20, 11, 17, 12 };
	static const double s1[] = { 1.1, 2.2, 3.3, 4.4, 5.5 },
			    s2[] = { 6.6, 7.7, 8.8, 9.9, 10.1, 11.2 };
	static const double o1[] = { 3, 5, 7, 9, 11, 13, 15 }, o2[] = { 4, 6, 8, 10, 20, 22, 24, 26 };
	static const double t1[] = { 1, 2, 2, 3, 3, 3, 4, 5, 6, 7 },
			    t2[] = { 2, 3, 4, 4, 5, 6, 6, 7, 8, 9, 10 };
	static const double m1[] = { 10.2, 10.5, 10.1, 10.9, 11.3, 10.4, 10.8, 10.0, 10.6, 10.7,
				     10.3, 11.0 },
			    m2[] = { 10.6, 11.1, 11.4, 10.9, 11.8, 11.2, 11.6, 10.8, 12.0, 11.5,
				     11.7, 11.3, 11.9 };
	static const double ta[] = { 10, 11, 11, 12, 13 }, tb[] = { 12, 13, 13, 14, 15 };
	static const double tied[] = { 5, 5, 5, 5, 5, 5, 5, 5, 5 };
	double lo[15], hi[15], near[15], one[1] = { 1 };
	struct stats_mwu t;
	struct stats_cmp c;
	int i;

	/* quantiles */
	CHECK(stats_median(odd, N(odd)) == 3, "median of 5 values is the middle one");
	CHECK(stats_median(even, N(even)) == 2.5, "median of 4 values interpolates");
	CHECK(stats_quantile(odd, N(odd), 0.1) == 1.4, "p10 interpolates linearly");
	CHECK(odd[0] == 5, "quantile does not reorder its input");
	CHECK(isnan(stats_median(odd, 0)), "median of nothing is NaN");

	/* Mann-Whitney U */
	mwu_case("scipy doc (exact)", male, N(male), female, N(female), 17, 0.1111111111111111, 1);
	mwu_case("complete separation 5 vs 6 (exact)", s1, N(s1), s2, N(s2), 0,
		 0.004329004329004329, 1);
	mwu_case("overlap 7 vs 8 (exact)", o1, N(o1), o2, N(o2), 18, 0.28096348096348095, 1);
	mwu_case("ties 10 vs 11 (asymptotic, tie correction)", t1, N(t1), t2, N(t2), 26.5,
		 0.046895092039616934, 0);
	/* Small tied samples, 5 vs 5: scipy's "auto" (and stats.c) leaves the
	 * exact method when there are ties. Reference, derived by hand and
	 * checked in python3 (stdlib only: math.erfc, statistics.NormalDist):
	 *   pooled sorted 10 11 11 12 12 13 13 13 14 15; average ranks
	 *   10:1 11:2.5 12:4.5 13:7 14:9 15:10; R1 = 1+2.5+2.5+4.5+7 = 17.5,
	 *   U1 = 17.5 - 15 = 2.5, U2 = 22.5, U = max = 22.5, mu = 12.5;
	 *   tie groups 2,2,3: T = 6+6+24 = 36;
	 *   var = 5*5/12 * ((10+1) - 36/(10*9)) = 22.0833...;
	 *   z = (22.5 - 12.5 - 0.5) / sqrt(var) = 2.0215816710759396;
	 *   p = 2 * (1 - Phi(z)) = erfc(z / sqrt 2) = 0.043219587173790895.
	 * (The exact no-ties distribution would give 2 * 4/252 = 0.0317: wrong.) */
	mwu_case("ties 5 vs 5 (asymptotic with tie correction, not exact)", ta, N(ta), tb, N(tb),
		 2.5, 0.043219587173790895, 0);
	mwu_case("overlap 12 vs 13 (asymptotic)", m1, N(m1), m2, N(m2), 14,
		 0.0005470268344670494, 0);
	for (i = 0; i < 15; i++) {
		lo[i] = 100 + i;
		hi[i] = 200 + i;
		near[i] = 100.5 + i;
	}
	mwu_case("complete separation 15 vs 15 (asymptotic)", lo, 15, hi, 15, 0,
		 3.391821390825104e-06, 0);
	mwu_case("swapped samples give the same p", hi, 15, lo, 15, 225, 3.391821390825104e-06, 0);
	CHECK(stats_mann_whitney(tied, N(tied), tied, N(tied), &t) == 0 && t.p == 1,
	      "every value tied: p = 1 (no evidence), not NaN");
	CHECK(stats_mann_whitney(odd, 0, odd, 3, &t) == -1, "an empty sample is refused");
	CHECK(close_rel(stats_mwu_min_p(7, 7), 2.0 / 3432, 1e-12), "min p for 7 vs 7 is 2/C(14,7)");
	CHECK(stats_mwu_min_p(6, 6) > STATS_DEFAULT_ALPHA, "6 vs 6 can never reach p < 0.002");

	/* verdicts */
	stats_compare(lo, 15, hi, 15, STATS_DEFAULT_ALPHA, STATS_DEFAULT_FACTOR, &c);
	CHECK(c.verdict == STATS_SLOWER && c.significant && close_rel(c.ratio, 207.0 / 107, 1e-12),
	      "b clearly larger: slower, ratio %.3f", c.ratio);
	stats_compare(hi, 15, lo, 15, STATS_DEFAULT_ALPHA, STATS_DEFAULT_FACTOR, &c);
	CHECK(c.verdict == STATS_FASTER, "b clearly smaller: faster");
	stats_compare(lo, 15, near, 15, STATS_DEFAULT_ALPHA, STATS_DEFAULT_FACTOR, &c);
	CHECK(c.verdict == STATS_SAME && !c.significant, "interleaved samples: same (p=%.3f)", c.p);
	stats_compare(lo, 15, hi, 15, STATS_DEFAULT_ALPHA, 3.0, &c);
	CHECK(c.verdict == STATS_SAME && c.significant && c.why,
	      "significant but within --factor 3: same, and says why");
	stats_compare(one, 1, hi, 15, STATS_DEFAULT_ALPHA, STATS_DEFAULT_FACTOR, &c);
	CHECK(c.verdict == STATS_INSUFFICIENT && isnan(c.p), "one sample: insufficient data");
	stats_compare(s1, 5, s2, 6, STATS_DEFAULT_ALPHA, STATS_DEFAULT_FACTOR, &c);
	CHECK(c.verdict == STATS_INSUFFICIENT,
	      "5 vs 6 samples cannot reach p < 0.002: insufficient data, never 'same'");

	beyond_factor();
	sort_like_qsort();
	printf("# %d checks, %d failed\n", ncheck, nfail);
	return nfail ? 1 : 0;
}
