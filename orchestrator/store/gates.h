/* gates.h -- pass/fail gates judged on the run record, and sweep rankings.
 *
 * Gates (docs/spec.md, "gates") are evaluated after a host's steps, on
 * that host's object of the record alone, so the same code serves the
 * runner (which stores the result in run.json and fails the run on a FAIL)
 * and the report (which shows the stored results, or judges a record that
 * has none). A gate on a figure that was not measured FAILS and says why. */
#ifndef GPUORCH_GATES_H
#define GPUORCH_GATES_H

#include <cjson/cJSON.h>
#include "core/strbuf.h"

/* Judge every gate of `gates` (the spec's array) on host object h of a run
 * record. Returns a new array, one object per gate and problem:
 *   {"name", "program", "problem" (or null), "gpu" (or null), "metric", "op",
 *    "threshold", "measured" (number or null), "unit", "verdict":
 *    "PASS" | "FAIL" | "N/A", "reason" (why it failed, was not measured or
 *    does not apply; null when it passed), "step" (id of the step read), "arch"}
 * *nfailed (may be NULL) receives the number of FAIL verdicts. */
cJSON *gates_evaluate_host(const cJSON *gates, const cJSON *h, int *nfailed);

/* A run --spread: h of gates_evaluate_host is one host of a pool (its
 * "spread".pool), and a gate x problem whose rows it does not hold (the
 * program's step for the problem, a speedup's baseline, a ptxas gate's
 * build) is left out there. Those whose rows no host of the pool holds are
 * judged here, once per pool, on every step of its hosts: a new array of
 * {"pool", "hosts": [names], "gates": [gates_evaluate_host's objects, each
 * with "rows": [{"host", "step", "gpus"}], the steps it read]}, one per
 * pool that has such a gate; empty without --spread. */
cJSON *gates_evaluate_pools(const cJSON *gates, const cJSON *hosts, int *nfailed);

/* A figure of a program (and problem) on host object h, read as gates read
 * it: a result metric (latency_us, tflops, rel_l2, ...), speedup (the
 * baseline benchmark's median over the program's), profile.*, sanitizer.*,
 * ptxas.*. Expectations read the derived ones through it: one reader.
 * f->why (initialised by the caller, who releases it) says why there is no
 * value; an impossible timing has none. */
struct gate_figure {
	double value;
	int has_value;
	const char *unit;
	const cJSON *step;     /* the step it came from (or the one that has no value) */
	struct strbuf why;
};
void gates_measure(const cJSON *h, const char *program, const char *problem, const char *metric,
		   struct gate_figure *f);
/* 1 for a figure gates derive rather than read from a result (speedup,
 * profile.*, sanitizer.*, ptxas.*) */
int gates_metric_derived(const char *metric);

/* One line for a gate result: "✅ tensor pipe >= 40: measured 52.1 % (attn_wmma, B16)". */
void gates_describe(const cJSON *g, struct strbuf *sb);

/* One line for a sweep of sweep_rank_host: "sweep P Q: fastest correct
 * variant V", and when it is not a clear winner, the variants compare's rule
 * cannot tell from it. */
void sweep_describe(const cJSON *sw, struct strbuf *sb);

/* Rank the variants of every sweep on host object h: a new array of
 *   {"program", "problem", "winner" (variant label or null), "winner_median_us",
 *    "winner_clear" (every other ranked variant slower than the winner by
 *    compare's rule, core/stats.c; null without a winner),
 *    "variants": [{"variant", "rank" (1 = fastest; null when not ranked),
 *                  "median_us", "relative" (median / winner's), "ranked": bool,
 *                  "vs_winner" ("same", "slower", "insufficient data"; null
 *                  for the winner and unranked ones), "p_vs_winner",
 *                  "reason" (why not ranked), "check_status", "bench_status",
 *                  "build_status", and sweep_variant_resources' fields}]}
 * ranked first (fastest first), then the others in spec order. A variant is
 * ranked only when it built, its correctness run (when there is one) and its
 * benchmark passed: a wrong variant never wins. */
cJSON *sweep_rank_host(const cJSON *h);

/* A run --spread dealt a sweep's variants over the hosts of one pool (a GPU
 * model: each host's "spread".pool), so no host holds them all: a host
 * object of every step and build of the pool's hosts (references into
 * hosts: it must not outlive them; cJSON_Delete frees only it) and its
 * hosts' names in "pool_hosts", for sweep_rank_host and the report. */
cJSON *sweep_pool_host(const cJSON *hosts, const char *pool);

/* Every pool's sweeps ranked across the pool: a new array of
 * {"pool", "hosts": [names], "sweeps": sweep_rank_host's array}, one per
 * pool that ran a sweep; empty without --spread. Rows that ran on two GPU
 * instances are told apart beyond STATS_INSTANCE_FACTOR (each variant's
 * "factor_vs_winner"), as compare does. */
cJSON *sweep_rank_pools(const cJSON *hosts);

/* The ptxas resources of a sweep variant's own kernels into o: the largest
 * "registers" (and "registers_min"), "spill_store_bytes", "spill_load_bytes",
 * "smem_bytes" (static) over the entry kernels of its build, leaving out a
 * kernel compiled the same in every variant's build of the program (the
 * harness's: issue 30, 168 registers shown where the swept kernel had 128),
 * "kernels" (how many were left), and "dynamic_smem_bytes": the largest
 * config.smem_bytes of its sweep steps' results (problem's, when not NULL),
 * which no ptxas report has. Each is null when unknown. */
void sweep_variant_resources(const cJSON *h, const char *program, const char *variant,
			     const char *problem, cJSON *o);

#endif
