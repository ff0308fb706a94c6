/* metric.h -- the one metric vocabulary: what a spec's metric name means.
 *
 * A gate, an expectation, the report, compare, history and find all name a
 * figure the way docs/spec.md does ("latency_us", "tflops", "max_abs", ...)
 * or as a dotted path into a step's result ("timing.p90_us"). This table says,
 * once, where each name lives in run.json, its unit, which direction is
 * better and how its numbers print; the operators of gates and expectations
 * (<, <=, >, >=, ==) are judged here too. Reading the value out of a record
 * is runread.h's job. */
#ifndef GPUORCH_METRIC_H
#define GPUORCH_METRIC_H

#include "core/strbuf.h"

/* The two result paths every consumer reads by name: the benchmark's median
 * (the figure of latency_us) and the roofline check's verdict. */
#define METRIC_MEDIAN_PATH "timing.median_us"
#define METRIC_IMPOSSIBLE_PATH "model.impossible"

enum metric_better { METRIC_BETTER_NONE, METRIC_LOWER_BETTER, METRIC_HIGHER_BETTER };

struct metric_def {
	const char *name;                  /* as the spec says it: "latency_us" */
	const char *path;                  /* in a step's result: "timing.median_us" */
	const char *unit;                  /* "us", "TFLOPS", "GB/s"; NULL: a bare number */
	enum metric_better better;
	void (*fmt)(struct strbuf *, double);   /* the number alone, without the unit */
};

/* The vocabulary entry of a spec name ("latency_us") or of its result path
 * ("timing.median_us"); NULL for any other name. */
const struct metric_def *metric_find(const char *name);
/* Every entry, NULL-terminated by a zero entry (for docs and tests). */
extern const struct metric_def metric_table[];

/* Where a metric lives in a step's result: the table's path, else the name
 * itself (a dotted path). */
const char *metric_result_path(const char *metric);
/* An error metric (max_abs, max_rel, rel_l2, correctness.*) is read from the
 * correctness step first, every other from the benchmark step first. */
int metric_is_error(const char *metric);
/* The "impossible timing" rule applies to it: its result path is under
 * timing. or model. (a timing that beats the roofline floor is no measure
 * of either). */
int metric_is_timing(const char *metric);
/* A kernel's figure from a kernel_timing step: "kernel:KEY.median_us"
 * (docs/byo.md), read from that step first. */
int metric_is_kernel(const char *metric);
/* The unit of a metric: the table's, "us" for any other timing.*_us path,
 * else NULL. */
const char *metric_unit(const char *metric);

/* Which way a metric is better: the table's; lower for a kernel's times
 * (kernel:KEY.median_us, .min_us, .max_us, .total_us), none for its other
 * fields (.launches, .share_pct) and for any other name. A figure read from a
 * program's output has the direction its spec declares: metric_better_parse
 * of its "better". */
enum metric_better metric_better_of(const char *metric);
/* "higher" and "lower" as a spec writes them; anything else: none. */
enum metric_better metric_better_parse(const char *s);
/* "higher", "lower", or NULL for none. */
const char *metric_better_name(enum metric_better b);

/* A named figure as compare, history and find see it: an output figure
 * (result.figures.NAME) keeps the unit and direction its spec declared, a
 * kernel's figure (kernel:KEY.FIELD) takes the vocabulary's. */
void metric_named(const char *name, const char *declared_unit, const char *declared_better,
		  const char **unit, enum metric_better *better);

/* A measured value with its unit: "41.30 us", "312.4 TFLOPS", "0.0123". */
void metric_fmt(struct strbuf *sb, const char *metric, double v);
/* A value as an author wrote it (%g) with the unit: "25 us". */
void metric_fmt_target(struct strbuf *sb, const char *metric, double v);

/* The formatters (NaN prints "-"). Microseconds keep three or four
 * significant digits: 0.810, 5.50, 110.1, 4120. */
void metric_fmt_us(struct strbuf *sb, double v);
void metric_fmt_tflops(struct strbuf *sb, double v);
void metric_fmt_gbps(struct strbuf *sb, double v);
void metric_fmt_g(struct strbuf *sb, double v);

/* The one judge of an operator: *holds receives whether `a OP b`; returns 0
 * (and leaves *holds alone) for an operator that is not <, <=, >, >=, ==. */
int metric_op_holds(const char *op, double a, double b, int *holds);

/* A kernel's name in a figure per kernel, NAME[KERNEL] (docs/byo.md): 1 when
 * the n bytes at s are 1..METRIC_KERNEL_NAME_MAX letters, digits, '_', '-'
 * or '+' (no '.', which a gate would read as a path). The one rule of the
 * output reader and of spec check. */
#define METRIC_KERNEL_NAME_MAX 64
int metric_kernel_name_ok(const char *s, size_t n);

#endif
