/* report-int.h -- what report*.c share: the render context, verdicts, rpt_ helpers.
 *
 * Internal to orchestrator/report/report*.c; report.h stays the public contract. */
#ifndef GPUORCH_REPORT_INT_H
#define GPUORCH_REPORT_INT_H

#include <cjson/cJSON.h>
#include "core/strbuf.h"
#include "core/jsonutil.h"
#include "core/metric.h"
#include "store/runread.h"

#define DASH "—"

struct verdict {
	const cJSON *exp;
	const cJSON *host;
	const char *problem;     /* NULL: no problem applies */
	enum { V_MET, V_MISSED, V_NOT_MEASURED, V_NOT_APPLICABLE } kind;
	double value;
	int has_value;
	const cJSON *step;
	struct strbuf why;
};

struct rpt_ctx {
	const cJSON *run, *exp, *spec, *hosts, *expected, *references, *baselines;
	struct strbuf *md;
	struct strbuf scratch;   /* text collected for later in a section */
	struct verdict *v;
	int nv, av;
	const cJSON *clock_host;  /* rpt_clock_far's host, and its median clock */
	double clock_median;
};

/* Totals of statuses over steps (and builds) of host h, or of all hosts. */
struct counts {
	int pass, fail, timeout, killed, infra, skipped, other;
};

/* report-format.c: typed access, Markdown text, numbers, statuses */
/* Object o as `k=v` pairs separated by sep, or a dash when empty. */
void rpt_add_kv(struct strbuf *md, const cJSON *o, const char *sep);
void rpt_cell_host_status(struct strbuf *md, const cJSON *h);
void rpt_cell_num(struct strbuf *md, const cJSON *o, const char *path,
		  void (*fn)(struct strbuf *, double));
/* "the physical bound of X us (how)" that an impossible result beat, or in an
 * older record "the roofline floor of X us" (with the peaks when peaks) */
void rpt_impossible_bound(struct strbuf *md, const cJSON *res, int peaks);
void rpt_cell_status(struct strbuf *md, const char *st);
void rpt_cell_us_range(struct strbuf *md, const cJSON *o, const char *lo_path, const char *hi_path);
void rpt_fmt_bytes(struct strbuf *sb, double v);
void rpt_fmt_int(struct strbuf *sb, double v);
void rpt_fmt_ratio(struct strbuf *sb, double v);
void rpt_fmt_secs(struct strbuf *sb, double v);
void rpt_fmt_time(struct strbuf *md, const char *iso);
void rpt_fmt_value(struct strbuf *sb, const cJSON *v);
int rpt_host_finished(const char *st);
void rpt_md_cell(struct strbuf *md, const char *s);
void rpt_md_cell_n(struct strbuf *md, const char *s, size_t max);
void rpt_md_code(struct strbuf *md, const char *s);
/* A step's program in a code span, and its sweep variant when it has one:
 * "`attn` [`BM=64`]" (a note under the program name alone hid which variant) */
void rpt_md_step_program(struct strbuf *md, const cJSON *s);

/* report-clock.c: the SM clock of each timed row. A row is flagged when its
 * clock is more than RPT_CLOCK_FAR_PCT % from the median of its host's timed
 * rows (exactly at it: not flagged). */
#define RPT_CLOCK_PATH "timing.sm_clock_mhz_median"
#define RPT_CLOCK_FAR_PCT 5.0
/* Distinct problem names, first seen first: the spec's (spec non-NULL),
 * then those of h's steps (of that kind; NULL: any); at most max into out. */
int rpt_problems(const cJSON *spec, const cJSON *h, enum step_kind kind, const char **out, int max);
int rpt_clock_far(struct rpt_ctx *c, const cJSON *h, const cJSON *s, double *clock, double *host);
void rpt_add_row_clock(struct rpt_ctx *c, struct strbuf *md, const cJSON *h, const cJSON *s);
int rpt_add_clock_note(struct rpt_ctx *c, struct strbuf *md, const cJSON *h, const cJSON *s);

/* report-results.c: the run's parts, expectations, comparisons, results */
void rpt_add_correctness_short(struct strbuf *md, const cJSON *s);
int rpt_add_reference_gap(struct strbuf *md, const cJSON *ref, const cJSON *step);
int rpt_add_spec_baseline(struct strbuf *md, const cJSON *b, const cJSON *step);
int rpt_add_speedup(const struct rpt_ctx *c, struct strbuf *md, const cJSON *h, const cJSON *step,
		    int markdown);
void rpt_add_verdict_counts(struct strbuf *md, const int cnt[4], int with_na);
/* b names the step's program and problem, and the host's GPU (when it names one) */
int rpt_baseline_applies(const cJSON *b, const cJSON *h, const cJSON *step);
const cJSON *rpt_correctness_step(const cJSON *h, const char *program, const char *problem);
void rpt_count_verdicts(const struct rpt_ctx *c, const cJSON *h, int cnt[4]);
const char *rpt_gpu_name(const cJSON *h);
const char *rpt_host_name(const cJSON *h);
int rpt_is_baseline(const cJSON *step);
void rpt_judge_all(struct rpt_ctx *c);
int rpt_ref_applies(const cJSON *ref, const cJSON *h, const cJSON *step);
void rpt_section_expectations(struct rpt_ctx *c);
void rpt_section_results(struct rpt_ctx *c);

/* report-peaks.c: "% of peak", labelled by datatype and DRAM (store/peaks.h) */
/* The step's roofline (recorded, or judged now for an older record); a new
 * object or NULL. */
cJSON *rpt_roofline(const struct rpt_ctx *c, const cJSON *h, const cJSON *s);
void rpt_add_pct_compute(struct strbuf *md, const cJSON *roof);   /* " (81 % of the FP16/BF16 peak)" */
void rpt_add_pct_dram(struct strbuf *md, const cJSON *roof);      /* " (45 % of the DRAM peak)" */
void rpt_cell_pct_of_peak(struct strbuf *md, const cJSON *roof);  /* "81% FP16/BF16 · 45% DRAM" */

/* report-libs.c: "- `sdpa`: SDPA backend **cudnn** (requested default); torch 2.11.0, ..." per
 * benchmark of problem that recorded its backend or library versions */
void rpt_add_libraries(struct strbuf *md, const cJSON *h, const char *problem);

/* report-figures.c: figures read from the programs' own output (docs/byo.md) */
void rpt_section_figures(struct rpt_ctx *c);
/* report-sizes.c: a collective's bus bandwidth by message size (result.sizes) */
void rpt_section_sizes(struct rpt_ctx *c);
void rpt_section_kernels(struct rpt_ctx *c);

/* report-summary.c: title, at a glance, configuration */
void rpt_add_counts(struct strbuf *md, const struct counts *k, int bold);
void rpt_count_status(struct counts *k, const char *st);
void rpt_section_config(struct rpt_ctx *c);
void rpt_section_glance(struct rpt_ctx *c);
void rpt_section_title(struct rpt_ctx *c);
void rpt_section_unfinished(struct rpt_ctx *c);

/* report-tools.c: gates, sweeps, profiles, sanitizers */
void rpt_section_gates(struct rpt_ctx *c);
void rpt_section_profiles(struct rpt_ctx *c);
void rpt_section_sanitizers(struct rpt_ctx *c);
void rpt_section_sweeps(struct rpt_ctx *c);

/* report-steps.c: ptxas resources, steps, provenance */
void rpt_section_provenance(struct rpt_ctx *c);
/* report-cloud.c */
void rpt_section_instances(struct rpt_ctx *c);
/* report-chart.c: the "Medians per problem" charts (their files: report_write_charts) */
void rpt_section_charts(struct rpt_ctx *c);
enum go_status report_write_charts(const cJSON *run, const char *dir, struct strbuf *err);
/* report-cluster.c */
void rpt_section_cluster(struct rpt_ctx *c);
void rpt_section_ptxas(struct rpt_ctx *c);
void rpt_section_steps(struct rpt_ctx *c);

#endif
