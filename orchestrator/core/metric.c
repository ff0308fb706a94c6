/* metric.c -- the metric vocabulary, its formatters and the operators (metric.h). */
#include "core/metric.h"

#include <math.h>
#include <stddef.h>
#include <string.h>
#include "core/banned.h"

const struct metric_def metric_table[] = {
	{ "latency_us", METRIC_MEDIAN_PATH, "us", METRIC_LOWER_BETTER, metric_fmt_us },
	{ "min_us", "timing.min_us", "us", METRIC_LOWER_BETTER, metric_fmt_us },
	{ "max_us", "timing.max_us", "us", METRIC_LOWER_BETTER, metric_fmt_us },
	{ "tflops", "model.tflops", "TFLOPS", METRIC_HIGHER_BETTER, metric_fmt_tflops },
	{ "gbps", "model.gbps", "GB/s", METRIC_HIGHER_BETTER, metric_fmt_gbps },
	{ "max_abs", "correctness.max_abs", NULL, METRIC_LOWER_BETTER, metric_fmt_g },
	{ "max_rel", "correctness.max_rel", NULL, METRIC_LOWER_BETTER, metric_fmt_g },
	{ "rel_l2", "correctness.rel_l2", NULL, METRIC_LOWER_BETTER, metric_fmt_g },
	{ NULL, NULL, NULL, METRIC_BETTER_NONE, NULL },
};

const struct metric_def *metric_find(const char *name)
{
	const struct metric_def *d;
	if (!name)
		return NULL;
	for (d = metric_table; d->name; d++)
		if (!strcmp(d->name, name) || !strcmp(d->path, name))
			return d;
	return NULL;
}

const char *metric_result_path(const char *metric)
{
	const struct metric_def *d = metric_find(metric);
	return d ? d->path : metric;
}

int metric_is_error(const char *metric)
{
	return metric && !strncmp(metric_result_path(metric), "correctness.", 12);
}

int metric_is_timing(const char *metric)
{
	const char *p = metric ? metric_result_path(metric) : NULL;
	return p && (!strncmp(p, "timing.", 7) || !strncmp(p, "model.", 6));
}

static int is_us_path(const char *p)
{
	size_t n = p ? strlen(p) : 0;
	return n > 10 && (!strncmp(p, "timing.", 7) || metric_is_kernel(p)) &&
	       !strcmp(p + n - 3, "_us");
}

int metric_is_kernel(const char *metric)
{
	return metric && !strncmp(metric, "kernel:", 7);
}

/* The vocabulary's entry of a metric: kernel:KEY.tflops and kernel:KEY.gbps
 * (the rate of a kernel's declared work) read as tflops and gbps do */
static const struct metric_def *def_of(const char *metric)
{
	const char *dot = metric_is_kernel(metric) ? strrchr(metric, '.') : NULL;
	if (dot && (!strcmp(dot + 1, "tflops") || !strcmp(dot + 1, "gbps")))
		return metric_find(dot + 1);
	return metric_find(metric);
}

const char *metric_unit(const char *metric)
{
	const struct metric_def *d = def_of(metric);
	if (d)
		return d->unit;
	return is_us_path(metric) ? "us" : NULL;
}

enum metric_better metric_better_of(const char *metric)
{
	const struct metric_def *d = def_of(metric);
	if (d)
		return d->better;
	return metric_is_kernel(metric) && is_us_path(metric) ? METRIC_LOWER_BETTER : METRIC_BETTER_NONE;
}

enum metric_better metric_better_parse(const char *s)
{
	if (s && !strcmp(s, "higher"))
		return METRIC_HIGHER_BETTER;
	if (s && !strcmp(s, "lower"))
		return METRIC_LOWER_BETTER;
	return METRIC_BETTER_NONE;
}

const char *metric_better_name(enum metric_better b)
{
	return b == METRIC_HIGHER_BETTER ? "higher" : b == METRIC_LOWER_BETTER ? "lower" : NULL;
}

void metric_named(const char *name, const char *declared_unit, const char *declared_better,
		  const char **unit, enum metric_better *better)
{
	if (metric_is_kernel(name)) {
		*unit = metric_unit(name);
		*better = metric_better_of(name);
		return;
	}
	*unit = declared_unit;
	*better = metric_better_parse(declared_better);
}

static void (*fmt_of(const char *metric))(struct strbuf *, double)
{
	const struct metric_def *d = def_of(metric);
	if (d)
		return d->fmt;
	return is_us_path(metric) ? metric_fmt_us : metric_fmt_g;
}

void metric_fmt(struct strbuf *sb, const char *metric, double v)
{
	const char *unit = metric_unit(metric);
	fmt_of(metric)(sb, v);
	if (unit)
		strbuf_addf(sb, " %s", unit);
}

void metric_fmt_target(struct strbuf *sb, const char *metric, double v)
{
	const char *unit = metric_unit(metric);
	strbuf_addf(sb, "%g", v);
	if (unit)
		strbuf_addf(sb, " %s", unit);
}

void metric_fmt_us(struct strbuf *sb, double v)
{
	double a = fabs(v);
	if (isnan(v))
		strbuf_addstr(sb, "-");
	else if (a >= 1e9)
		strbuf_addf(sb, "%.3g", v);
	else if (a >= 1000)
		strbuf_addf(sb, "%.0f", v);
	else if (a >= 100)
		strbuf_addf(sb, "%.1f", v);
	else if (a >= 1)
		strbuf_addf(sb, "%.2f", v);
	else
		strbuf_addf(sb, "%.3f", v);
}

void metric_fmt_tflops(struct strbuf *sb, double v)
{
	double a = fabs(v);
	if (isnan(v))
		strbuf_addstr(sb, "-");
	else if (a >= 1e9)
		strbuf_addf(sb, "%.3g", v);
	else if (a >= 10 || a == 0)
		strbuf_addf(sb, "%.1f", v);
	else if (a >= 1)
		strbuf_addf(sb, "%.2f", v);
	else
		strbuf_addf(sb, "%.3f", v);
}

void metric_fmt_gbps(struct strbuf *sb, double v)
{
	double a = fabs(v);
	if (isnan(v))
		strbuf_addstr(sb, "-");
	else if (a >= 1e9)
		strbuf_addf(sb, "%.3g", v);
	else if (a >= 100)
		strbuf_addf(sb, "%.0f", v);
	else
		strbuf_addf(sb, "%.1f", v);
}

/* Three significant digits, but never an exponent between 1000 and 1e9:
 * 1832.82 is "1833", not "1.83e+03". */
void metric_fmt_g(struct strbuf *sb, double v)
{
	double a = fabs(v);
	if (isnan(v))
		strbuf_addstr(sb, "-");
	else if (a >= 1000 && a < 1e9)
		strbuf_addf(sb, "%.0f", v);
	else
		strbuf_addf(sb, "%.3g", v);
}

int metric_op_holds(const char *op, double a, double b, int *holds)
{
	if (!op)
		return 0;
	if (!strcmp(op, "<"))
		*holds = a < b;
	else if (!strcmp(op, "<="))
		*holds = a <= b;
	else if (!strcmp(op, ">"))
		*holds = a > b;
	else if (!strcmp(op, ">="))
		*holds = a >= b;
	else if (!strcmp(op, "=="))
		*holds = a == b;
	else
		return 0;
	return 1;
}

int metric_kernel_name_ok(const char *s, size_t n)
{
	size_t i;
	if (!n || n > METRIC_KERNEL_NAME_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-' || s[i] == '+'))
			return 0;
	return 1;
}
