/* stats.c -- order statistics and the Mann-Whitney U test (see stats.h).
 *
 * Ranks: the pooled samples are sorted once (indices, O(N log N)); tied
 * values get their average rank and each tie group of size t adds t^3 - t
 * to the tie term. Exact p-values come from the distribution of U under
 * H0, whose counts are the coefficients of the Gaussian binomial
 * [m+n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i), computed in
 * doubles; it is used only when those counts stay below 2^53 (exact in a
 * double), else the normal approximation is used. */
#include "core/stats.h"
#include "core/strbuf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

#define EXACT_MAX_SMALL 8          /* scipy's "auto": exact when a side has <= 8 values */
#define EXACT_MAX_COUNT 9.0e15     /* C(m+n, m) below 2^53 */

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

static int is_sorted(const double *v, int n)
{
	int i;
	for (i = 1; i < n; i++)
		if (v[i - 1] > v[i])
			return 0;
	return 1;
}

/* ---- sorting doubles: the order qsort with cmp_double gives ----
 * glibc's qsort is a stable merge sort; so is this one, without a call
 * through a pointer for each comparison (a run's 30,000 samples sorted for
 * its summary: ~8% of a listing's time). Two stable sorts of finite doubles
 * (or of any without a NaN, for which cmp_double is no order) give the same
 * array, -0 and 0 in the order they came. */
#define SORT_RUN 16

static void insertion_sort(double *v, int n)
{
	int i, j;
	for (i = 1; i < n; i++) {
		double x = v[i];
		for (j = i; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* a[0..na) and b[0..nb), each ascending, into out; a's first among equals */
static void merge(const double *a, int na, const double *b, int nb, double *out)
{
	int i = 0, j = 0, k = 0;
	while (i < na && j < nb)
		out[k++] = b[j] < a[i] ? b[j++] : a[i++];
	while (i < na)
		out[k++] = a[i++];
	while (j < nb)
		out[k++] = b[j++];
}

static void merge_sort(double *v, int n)
{
	double *tmp, *from = v, *to, *t;
	int w, i;
	for (i = 0; i < n; i += SORT_RUN)
		insertion_sort(v + i, n - i < SORT_RUN ? n - i : SORT_RUN);
	if (n <= SORT_RUN)
		return;
	to = tmp = xmalloc((size_t)n * sizeof(double));
	for (w = SORT_RUN; w < n; w *= 2) {
		for (i = 0; i < n; i += 2 * w) {
			int na = n - i < w ? n - i : w, nb = n - i - na < w ? n - i - na : w;
			merge(from + i, na, from + i + na, nb, to + i);
		}
		t = from, from = to, to = t;
	}
	if (from != v)
		memcpy(v, from, (size_t)n * sizeof(double));
	free(tmp);
}

static int has_nan(const double *v, int n)
{
	int i;
	for (i = 0; i < n; i++)
		if (isnan(v[i]))
			return 1;
	return 0;
}

void stats_sort(double *v, int n)
{
	if (n < 2 || is_sorted(v, n))
		return;
	if (has_nan(v, n))
		qsort(v, (size_t)n, sizeof(double), cmp_double);
	else
		merge_sort(v, n);
}

double stats_quantile(const double *v, int n, double q)
{
	double *s = NULL, pos, r;
	const double *x = v;
	int lo;
	if (n < 1)
		return NAN;
	if (!is_sorted(v, n)) {   /* sorted input (stats_sort) needs no copy */
		s = xmalloc((size_t)n * sizeof(double));
		memcpy(s, v, (size_t)n * sizeof(double));
		qsort(s, (size_t)n, sizeof(double), cmp_double);
		x = s;
	}
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	pos = q * (n - 1);
	lo = (int)pos;
	if (lo >= n - 1)
		r = x[n - 1];
	else
		r = x[lo] + (pos - lo) * (x[lo + 1] - x[lo]);
	free(s);
	return r;
}

double stats_median(const double *v, int n)
{
	return stats_quantile(v, n, 0.5);
}

/* ---- the U statistic ---- */

struct item {
	double v;
	int from_a;
};

static int cmp_item(const void *x, const void *y)
{
	return cmp_double(&((const struct item *)x)->v, &((const struct item *)y)->v);
}

/* Rank sum of a, and the tie term sum(t^3 - t). */
static void rank_sum(const double *a, int na, const double *b, int nb, double *r1,
		     double *tie_term)
{
	int n = na + nb, i, j, k;
	struct item *it = xmalloc((size_t)n * sizeof(*it));
	if (is_sorted(a, na) && is_sorted(b, nb)) {
		/* both sorted (stats_sort): merge; ties stay together either way */
		for (i = j = k = 0; k < n; k++) {
			int take_a = j >= nb || (i < na && a[i] <= b[j]);
			it[k].v = take_a ? a[i++] : b[j++];
			it[k].from_a = take_a;
		}
	} else {
		for (i = 0; i < na; i++) {
			it[i].v = a[i];
			it[i].from_a = 1;
		}
		for (i = 0; i < nb; i++) {
			it[na + i].v = b[i];
			it[na + i].from_a = 0;
		}
		qsort(it, (size_t)n, sizeof(*it), cmp_item);
	}
	*r1 = 0;
	*tie_term = 0;
	for (i = 0; i < n; i = j) {
		double avg, t;
		for (j = i + 1; j < n && it[j].v == it[i].v; j++)
			;
		avg = (i + 1 + j) / 2.0;      /* ranks i+1 .. j */
		t = j - i;
		if (t > 1)
			*tie_term += t * t * t - t;
		for (k = i; k < j; k++)
			if (it[k].from_a)
				*r1 += avg;
	}
	free(it);
}

static double binom(int n, int k)
{
	double r = 1;
	int i;
	if (k > n - k)
		k = n - k;
	for (i = 1; i <= k; i++)
		r = r * (n - k + i) / i;
	return r;
}

/* P(U >= k) for sample sizes m (small) and n under H0, exactly. */
static double exact_sf(int m, int n, double k)
{
	int max = m * n, i, d;
	double *c = xcalloc((size_t)max + 1, sizeof(double));
	double total = 0, tail = 0;
	c[0] = 1;
	for (i = 1; i <= m; i++) {
		int s = n + i;
		for (d = max; d >= s; d--)
			c[d] -= c[d - s];
		for (d = i; d <= max; d++)
			c[d] += c[d - i];
	}
	for (d = 0; d <= max; d++) {
		total += c[d];
		if (d >= k)
			tail += c[d];
	}
	free(c);
	return total > 0 ? tail / total : 1;
}

static int use_exact(int na, int nb, int ties)
{
	int m = na < nb ? na : nb;
	if (ties || (na > EXACT_MAX_SMALL && nb > EXACT_MAX_SMALL))
		return 0;
	return binom(na + nb, m) < EXACT_MAX_COUNT;
}

static double asymptotic_p(double u, int na, int nb, double tie_term, double *z_out)
{
	double n = (double)na + nb, mu = (double)na * nb / 2.0;
	double var = (double)na * nb / 12.0 * ((n + 1) - tie_term / (n * (n - 1)));
	double z, p;
	if (!(var > 0)) {
		*z_out = 0;
		return 1;     /* every value tied: no evidence of any difference */
	}
	z = (u - mu - 0.5) / sqrt(var);
	*z_out = z;
	p = erfc(z / sqrt(2.0));    /* 2 * normal sf(z) */
	return p > 1 ? 1 : p;
}

int stats_mann_whitney(const double *a, int na, const double *b, int nb, struct stats_mwu *out)
{
	double r1, tie_term, u;
	memset(out, 0, sizeof(*out));
	if (na < 1 || nb < 1) {
		out->p = NAN;
		return -1;
	}
	rank_sum(a, na, b, nb, &r1, &tie_term);
	out->u1 = r1 - (double)na * (na + 1) / 2.0;
	out->u2 = (double)na * nb - out->u1;
	out->ties = tie_term > 0;
	u = out->u1 > out->u2 ? out->u1 : out->u2;
	if (use_exact(na, nb, out->ties)) {
		out->exact = 1;
		out->p = 2 * exact_sf(na < nb ? na : nb, na < nb ? nb : na, u);
		if (out->p > 1)
			out->p = 1;
	} else {
		out->p = asymptotic_p(u, na, nb, tie_term, &out->z);
	}
	return 0;
}

double stats_mwu_min_p(int na, int nb)
{
	double z, p;
	if (na < 1 || nb < 1)
		return 1;
	if (use_exact(na, nb, 0)) {
		p = 2 / binom(na + nb, na < nb ? na : nb);
		return p > 1 ? 1 : p;
	}
	return asymptotic_p((double)na * nb, na, nb, 0, &z);
}

/* ---- verdicts ---- */

const char *stats_verdict_name(enum stats_verdict v)
{
	switch (v) {
	case STATS_SAME: return "same";
	case STATS_FASTER: return "faster";
	case STATS_SLOWER: return "slower";
	case STATS_INSUFFICIENT: return "insufficient data";
	}
	return "?";
}

void stats_compare(const double *a, int na, const double *b, int nb, double alpha,
		   double factor, struct stats_cmp *out)
{
	stats_compare_medians(a, na, b, nb, NAN, NAN, alpha, factor, out);
}

void stats_compare_medians(const double *a, int na, const double *b, int nb, double med_a,
			   double med_b, double alpha, double factor, struct stats_cmp *out)
{
	struct stats_mwu t;
	int given = med_a > 0 && med_b > 0;   /* false for NaN */
	memset(out, 0, sizeof(*out));
	out->na = na;
	out->nb = nb;
	out->p = NAN;
	out->ratio = NAN;
	out->median_a = given ? med_a : na > 0 ? stats_median(a, na) : NAN;
	out->median_b = given ? med_b : nb > 0 ? stats_median(b, nb) : NAN;
	if ((given || (na > 0 && nb > 0)) && out->median_a > 0)
		out->ratio = out->median_b / out->median_a;
	out->verdict = STATS_INSUFFICIENT;
	if (na < 2 || nb < 2) {
		out->why = "fewer than 2 samples on a side";
		return;
	}
	if (stats_mwu_min_p(na, nb) >= alpha) {
		out->why = "too few samples for the test to reach its threshold";
		return;
	}
	stats_mann_whitney(a, na, b, nb, &t);
	out->p = t.p;
	out->significant = t.p < alpha;
	out->verdict = STATS_SAME;
	if (!out->significant || isnan(out->ratio))
		return;
	switch (stats_beyond_factor(out->ratio, factor)) {
	case 1: out->verdict = STATS_SLOWER; break;
	case -1: out->verdict = STATS_FASTER; break;
	default: out->why = "significant, but within the factor";
	}
}

#define STATS_RATIO_ROUNDING 1e-9

int stats_beyond_factor(double ratio, double factor)
{
	if (isnan(ratio) || isnan(factor))
		return 0;
	if (ratio > factor * (1 + STATS_RATIO_ROUNDING))
		return 1;
	if (ratio < (1 - STATS_RATIO_ROUNDING) / factor)
		return -1;
	return 0;
}
