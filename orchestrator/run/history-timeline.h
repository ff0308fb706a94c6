/* history-timeline.h -- `gpuorch history`'s engine: one experiment's figure over commits.
 *
 * timeline_run takes every complete run of the experiment (from a set the
 * caller filled, run/history-runs.h, or from a pass over the store of its
 * own), orders them by commit, writes REPORTS/<slug>/history.md and
 * history.svg (report/history-chart.h draws it) and prints the table, or
 * the points as JSON. */
#ifndef GPUORCH_TIMELINE_H
#define GPUORCH_TIMELINE_H

#include "report/compare.h"
#include "core/metric.h"

struct strbuf;
struct hruns;

struct timeline_opts {
	const char *experiment;          /* name or slug */
	const char *program, *problem;   /* the figure; NULL: the newest run's first kernel benchmark */
	const struct metric_def *metric; /* latency_us (NULL), tflops or gbps */
	const char *figure;              /* instead of metric: a named figure (compare.h),
					  * "gflops" or "kernel:KEY.median_us" */
	double factor;                   /* smallest ratio called a step; 0: the default */
	const char *root;                /* the git repository that orders commits; NULL: "." */
	int json;                        /* print the points as JSON */
	cJSON **json_out;                /* instead: the points' JSON (as --json prints them)
					  * here, history.md/svg not written, nothing printed */
	struct strbuf *why;              /* non-NULL: errors and warnings go here, not stderr */
	struct hruns *runs;              /* the runs already read (run/history-runs.h: its
					  * commit order is read into it once); NULL: a pass
					  * over the store reads them. With figure, a set
					  * that keeps named figures */
};

/* The figure plotted for metric m of figure f (NAN: not measured); with f
 * NULL, not NAN when history can plot m at all. */
double timeline_value(const struct metric_def *m, const struct figure *f);
/* Returns the exit code: 0, 1 when the newest point is a regression against
 * the one before, 2 no run or figure; errors are printed on stderr. */
int timeline_run(const struct timeline_opts *o);
/* The figure history follows by default for an experiment (its newest
 * run's first kernel benchmark): timeline_run with o->json_out set gives
 * its points; each point has "p10"/"p90" (the spread of its samples, in the
 * figure's unit) when it has two samples or more. */

#endif
