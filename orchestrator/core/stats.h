/* stats.h -- order statistics and the Mann-Whitney U test for timing samples.
 *
 * gpuorch calls one timing faster or slower than another only when the raw
 * samples of both say so: the two-sided Mann-Whitney U test (no assumption
 * about the shape of the distributions; robust to the long right tail of
 * GPU timings) at p < alpha (default 0.002, as asv does) AND a ratio of the
 * medians beyond a factor (default 1.05). Fewer than 2 samples on a side, or
 * so few that even a complete separation could not reach alpha, is
 * "insufficient data", never a verdict. See docs/reproduce.md. */
#ifndef GPUORCH_STATS_H
#define GPUORCH_STATS_H

#define STATS_DEFAULT_ALPHA 0.002
#define STATS_DEFAULT_FACTOR 1.05
/* two samples from different GPU instances of one model (issue 14's
 * cross-instance rule): the same within this factor */
#define STATS_INSTANCE_FACTOR 1.08

/* Linear-interpolation quantile (q in [0,1]) of n values (n >= 1; the
 * input is not modified). NaN when n < 1. */
/* Sort samples in place (ascending). Every function here gives the same
 * answer on sorted input, only faster: no copy, a merge instead of a sort. */
void stats_sort(double *v, int n);
double stats_quantile(const double *v, int n, double q);
double stats_median(const double *v, int n);

struct stats_mwu {
	double u1;      /* U of sample a: pairs (a_i, b_j) with a_i > b_j, a tie counts 1/2 */
	double u2;      /* na * nb - u1 */
	double z;       /* the normal score (asymptotic method), 0 for the exact method */
	double p;       /* two-sided p-value */
	int exact;      /* 1: exact distribution; 0: normal approximation */
	int ties;       /* 1 when some values are tied */
};

/* The two-sided Mann-Whitney U test, computed as scipy.stats.mannwhitneyu
 * (method "auto", use_continuity=True) does: the exact distribution of U
 * when a sample has at most 8 values and nothing is tied, else the normal
 * approximation with the tie correction and a continuity correction of 1/2.
 * p = 2 * P(U >= max(u1, u2)), capped at 1. Returns -1 when na or nb < 1. */
int stats_mann_whitney(const double *a, int na, const double *b, int nb, struct stats_mwu *out);

/* The smallest two-sided p-value the test can give for na and nb samples
 * (complete separation, no ties): with alpha 0.002 it takes 7 per side. */
double stats_mwu_min_p(int na, int nb);

enum stats_verdict {
	STATS_SAME,          /* not significant, or within the factor */
	STATS_FASTER,        /* b is faster (smaller) than a */
	STATS_SLOWER,        /* b is slower (larger) than a */
	STATS_INSUFFICIENT   /* too few samples to tell */
};

struct stats_cmp {
	enum stats_verdict verdict;
	double median_a, median_b;
	double ratio;         /* median_b / median_a (NaN when a's median is 0 or missing) */
	double p;             /* NaN when not computed */
	int significant;      /* p < alpha */
	int na, nb;
	const char *why;      /* for STATS_INSUFFICIENT and for "significant but within the factor" */
};

/* Whether ratio = b / a is beyond factor: 1 above factor, -1 below
 * 1 / factor, 0 within (NaN: 0). "Exactly at the factor" is within, and it
 * stays within when the division of two decimals lands an ulp or so past it
 * (1.1865 / 1.13 is 1.0500000000000003 in doubles): a ratio within a
 * relative 1e-9 of the bound counts as at it. The one rule of compare,
 * history and find, for timings and for named figures alike. */
int stats_beyond_factor(double ratio, double factor);

/* Compare samples b against a (smaller is better: latencies). */
void stats_compare(const double *a, int na, const double *b, int nb, double alpha,
		   double factor, struct stats_cmp *out);
/* stats_compare, the ratio taken from medians the caller holds: a program's
 * own median over all its timed runs, of which the samples it kept are a
 * subset (the harness keeps 2,000 of ~10,000). The test runs on the samples;
 * the ratio, and so the factor rule and what is printed, on med_a and med_b.
 * A NaN or non-positive median on either side: the samples' medians. */
void stats_compare_medians(const double *a, int na, const double *b, int nb, double med_a,
			   double med_b, double alpha, double factor, struct stats_cmp *out);
const char *stats_verdict_name(enum stats_verdict v);

#endif
