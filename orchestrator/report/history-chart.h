/* history-chart.h -- a figure over commits: the SVG chart of `gpuorch history`.
 *
 * The chart is hand-written SVG 1.1 (no scripts, no external fonts): one
 * slot per run on the x axis in commit order (labelled with the short
 * commit), the figure on the y axis with ticks and units, one coloured
 * series per GPU model joined by lines, whiskers for the spread of the
 * samples, and step changes (significant by stats_compare against the
 * previous point of the same series) marked with a triangle and a ratio. */
#ifndef GPUORCH_HISTORY_H
#define GPUORCH_HISTORY_H

#include "core/strbuf.h"

struct history_point {
	int x;                 /* slot, 0 .. nslots-1 */
	int series;            /* index into series[] */
	double y, lo, hi;      /* value and whisker ends (NAN: no whisker) */
	int step;              /* 0, +1: worse than the previous point, -1: better */
	double ratio;          /* for a step: value / previous value */
};

struct history_chart {
	const char *title;
	const char *y_label;          /* "median latency (us)" */
	int higher_is_better;         /* 1 for TFLOPS */
	int one_value;                /* a named figure: steps by the ratio alone, no samples */
	const char *const *slots;     /* x labels, nslots of them */
	int nslots;
	const char *const *series;    /* series names (GPU models) */
	int nseries;
	const struct history_point *pts;
	int npts;
};

void history_svg(const struct history_chart *c, struct strbuf *svg);
/* "Nice" axis ticks covering [lo, hi]: first tick, step, count. */
void history_ticks(double lo, double hi, int want, double *first, double *step, int *n);
/* s escaped for SVG/XML text and attribute values (control characters dropped). */
void svg_text(struct strbuf *sb, const char *s);

#endif
