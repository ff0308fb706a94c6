/* compare.h -- the measured figures of a run record, and verdicts between two runs.
 *
 * A figure is one benchmark step of one host: program, problem, the raw
 * timing samples, its status, the status of the matching correctness step,
 * the ptxas resources of its build and the toolchain/driver it ran with.
 * A named figure is one number a step recorded besides: a figure read from
 * the program's own output (result.figures.NAME: value, unit, better) or a
 * kernel's median from a kernel_timing step ("kernel:KEY.median_us"); it has
 * no samples, so its verdict is the ratio rule alone (beyond the factor, in
 * the figure's better direction: "better" or "worse").
 * compare_runs() pairs the figures of two runs (same program, problem and
 * sweep variant, or PROG_A in one run against PROG_B in the other) and gives each pair a
 * verdict: same (or "reproduced"), faster, slower, different (correctness,
 * resources, toolchain or driver changed: named), insufficient data, or
 * missing, not comparable (another GPU model). Timing verdicts come from
 * compare_timing(): stats_compare() on the stored samples. */
#ifndef GPUORCH_COMPARE_H
#define GPUORCH_COMPARE_H

#include <cjson/cJSON.h>
#include "core/stats.h"
#include "core/strbuf.h"
#include "core/metric.h"
struct strpool;

struct figure {
	const char *run_id;
	const char *commit;        /* provenance.git.commit, may be NULL */
	const char *host;
	const char *gpu;           /* info.gpu_name; NULL: a host without a GPU */
	const char *compute_cap;
	const char *program, *problem, *arch, *role;
	const char *variant;       /* a sweep variant's "TILE_M=64,TILE_N=128" (the step's
				      "variant"); NULL: not a sweep's */
	const char *status;        /* the step's status: PASS, FAIL, ... */
	const char *result_status; /* the program's own status: pass, fail, ... (may be NULL) */
	const char *check_status;  /* status of the correctness step of the same program and
				      problem on that host, NULL when there is none */
	double median_us, min_us, max_us, tflops;  /* NAN when absent */
	double *samples;           /* the stored samples (store/samples.h; NULL until read, for a summary) */
	int nsamples;
	int ntotal;                /* how many the program timed (timing.n); 0 unknown. More than
				      nsamples: the record stores a subset */
	const char *samples_kept;  /* timing.samples_kept: "all", or which ones; may be NULL */
	const char *samples_error; /* why timing.samples could not be read, else NULL (static text) */
	double clock_mhz;          /* timing.sm_clock_mhz_median, NAN unknown */
	const char *gpu_uuid;      /* info.gpu_uuid: which GPU instance, may be NULL */
	double max_clock_mhz;      /* info.max_sm_clock_mhz: the clock cap, NAN unknown */
	const cJSON *samples_at;   /* a summary's pointer into samples.txt (runsum.h), or NULL */
	double gbps;               /* model.gbps, NAN when absent */
	int registers;             /* most registers of any kernel of the build, -1 unknown */
	int spill_bytes;           /* spill stores + loads over the build's kernels, -1 unknown */
	int smem_bytes;            /* largest static shared memory, -1 unknown */
	const char *nvcc_version;
	const char *driver;
	/* a named figure (NULL name: the step's timing, above) */
	const char *name;          /* "gflops_4096", "kernel:sgemmWarptiling" */
	const char *field;         /* a kernel's: "median_us" (its name is NAME.FIELD), else NULL */
	double value;
	const char *unit;          /* may be NULL */
	enum metric_better better;
};

struct figures {
	struct figure *v;
	int n;
};

/* Every benchmark step of every host of a run, then every named figure of
 * every step (the strings point into run, which must outlive the figures).
 * run is a run record or its summary (report/runsum.h). */
void figures_of_run(const cJSON *run, struct figures *out);
/* figures_of_run with each sweep variant's benchmark ("kind": "sweep",
 * "mode": "bench") among the benchmarks, in record order (the sweep's
 * order), its variant set and its correctness the variant's check step:
 * what compare pairs. A history or a bisection follows one program and
 * problem, not a variant: they read figures_of_run. */
void figures_of_run_sweeps(const cJSON *run, struct figures *out);
void figures_release(struct figures *f);
/* A copy of f that owns its strings and f's samples (f keeps none), to
 * outlive the record f points into; its samples_at is NULL (read them
 * first). Free with figure_free_kept. */
struct figure *figure_keep(struct figure *f);
void figure_free_kept(struct figure *k);
/* f's strings replaced by pool's copies (core/strpool.h), so f outlives the
 * record it points into at the cost of its struct alone; its samples_at is
 * NULL (note it first). */
void figure_intern(struct figure *f, struct strpool *pool);
/* "NVIDIA H100 80GB HBM3", or "no GPU" */
const char *figure_gpu_label(const struct figure *f);

enum cmp_verdict {
	CMP_SAME,
	CMP_FASTER,
	CMP_SLOWER,
	CMP_DIFFERENT,
	CMP_INSUFFICIENT,
	CMP_MISSING,       /* the figure is in only one of the runs */
	CMP_NOT_COMPARABLE /* different GPU models or clock caps (without cross_gpu) */
};
#define CMP_NVERDICTS (CMP_NOT_COMPARABLE + 1)

/* Across two GPU instances of one model (different GPU UUIDs) a timing is
 * "the same" within this factor (or --factor when larger): own kernels of
 * the committed H100 runs moved up to x1.056 (99th percentile of 357 pairs
 * of one source tree on two instances; x1.072 for bsr_wgmma), while a
 * slowdown of x1.1 is still called (docs/reproduce.md, "Across GPU
 * instances"). */
#define CMP_INSTANCE_FACTOR STATS_INSTANCE_FACTOR

struct cmp_opts {
	double alpha;          /* STATS_DEFAULT_ALPHA */
	double factor;         /* STATS_DEFAULT_FACTOR */
	const char *pair_a;    /* --pair PROG_A:PROG_B, else NULL */
	const char *pair_b;
	int reproduce;         /* name CMP_SAME "reproduced" */
	int cross_gpu;         /* judge timings of different GPU models (--cross-gpu) */
	double instance_factor;/* across GPU instances of one model; 0: CMP_INSTANCE_FACTOR */
};

struct cmp_row {
	const struct figure *a, *b;   /* either may be NULL (CMP_MISSING) */
	struct stats_cmp t;           /* the timing comparison */
	enum cmp_verdict verdict;
	struct strbuf changes;        /* "registers 10 -> 32; nvcc 13.0.48 -> 13.0.88" */
	struct strbuf notes;          /* not verdicts: "GPU differs: ..." */
	int regression;               /* b slower beyond the threshold, or its correctness worse */
};

struct cmp_result {
	struct cmp_row *rows;
	int nrows;
	int count[CMP_NVERDICTS];
	int nregressions;
};

/* Whether timings of a and b can be compared at all: the same GPU model,
 * compute capability and SM clock cap (or o->cross_gpu). 0 with the reason
 * in why. */
int compare_comparable(const struct figure *a, const struct figure *b, const struct cmp_opts *o,
		       struct strbuf *why);
/* Both GPU instances are known and differ (same model, other GPU UUIDs). */
int compare_instances_differ(const struct figure *a, const struct figure *b);
/* The one timing rule of compare, history, reproduce and find: the
 * Mann-Whitney test, the ratio and so the verdict all from the stored
 * samples (stats_compare), at o->factor, or at the instance factor across
 * GPU instances. A subset (old records keep 2,000 samples) is said in notes;
 * when the recorded medians' ratio falls on the other side of the factor
 * than the samples' (a record whose samples do not represent its medians)
 * the verdict is "insufficient data", and the return is 1 when either
 * ratio says slower: a regression that cannot be ruled out. Notes also
 * name two GPU instances. */
int compare_timing(const struct figure *a, const struct figure *b, const struct cmp_opts *o,
		   struct stats_cmp *t, struct strbuf *notes);
void compare_runs(const struct figures *a, const struct figures *b, const struct cmp_opts *o,
		  struct cmp_result *out);
void compare_result_release(struct cmp_result *r);
const char *compare_verdict_name(enum cmp_verdict v, int reproduce);
/* The comparison as JSON (`gpuorch compare --json`): {"rule": {"alpha",
 * "factor"}, "rows": [{"program", "problem", "variant" (a sweep's rows only), "host_a", "host_b", "gpu_a",
 * "gpu_b", "gpu_uuid_a", "gpu_uuid_b", "median_a_us", "median_b_us", "n_a",
 * "n_b" (the samples timed), "stored_a", "stored_b" (those the record keeps),
 * "clock_a_mhz", "clock_b_mhz", "ratio", "p", "verdict", "changes", "notes",
 * "regression"}], "counts": {verdict: n}, "regressions"}; absent figures and
 * numbers are null. */
cJSON *compare_result_json(const struct cmp_result *r, const struct cmp_opts *o);
/* Named figures a (reference) and b: t->verdict FASTER means better and
 * SLOWER worse, by the ratio beyond factor in a's better direction (exactly
 * at the factor: SAME; t->p is NAN). Returns 1 when a figure with no better
 * direction moved beyond the factor (t->verdict stays SAME). */
int compare_named(const struct figure *a, const struct figure *b, double factor, struct stats_cmp *t);
/* Figure f is the named figure NAME ("gflops", or "kernel:KEY.median_us";
 * "kernel:KEY" alone is taken too). */
int figure_is_named(const struct figure *f, const char *name);
/* Appends to the list "gflops, kernel:saxpy.median_us" in sb the names of
 * the named figures of fs for program and problem (NULL: any) that it does
 * not hold yet, in order; returns how many it added. For "no such figure;
 * the run has ..." messages. */
int figures_list_names(const struct figures *fs, const char *program, const char *problem,
		       struct strbuf *sb);
/* The verdict of a row as it reads: a named figure is "better" / "worse"
 * where a timing is "faster" / "slower". */
const char *compare_row_verdict(const struct cmp_row *r, int reproduce);
/* One figure as "41.2 us [40.9-43.0, n=25] at 1980 MHz" (n: the samples the
 * program timed; "n=9876, 2000 stored" for a subset), a named one
 * "36342 GFLOP/s" (or "-"). */
void compare_fmt_figure(struct strbuf *sb, const struct figure *f);
/* A Markdown table with one row per pair; labels name the two columns. */
void compare_render_table(struct strbuf *md, const struct cmp_result *r, const struct cmp_opts *o,
			  const char *label_a, const char *label_b);
/* "RUN_ID (experiment, commit 1234567890ab, 2026-11-22T05:10:00Z)" */
void compare_describe_run(struct strbuf *sb, const cJSON *run);

#endif
