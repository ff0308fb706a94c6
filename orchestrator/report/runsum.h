/* runsum.h -- a run's small summary, written beside run.json, read instead of it.
 *
 * `gpuorch runs`, `history` and the like need a handful of fields of every
 * run, not every sample: run.json (every timing sample, every log path,
 * every ptxas line) costs a parse of ~0.3 MiB and ~1.6 MiB of memory per
 * run. At the end of a run the runner writes
 *   summary.json  the run's identity and outcome, its headline, and per host
 *                 the benchmark and correctness steps with their figures
 *                 ("schema": "gpuorch.summary/1"), and where each
 *                 benchmark's samples are in
 *   samples.txt   one line per benchmark step: its samples (store/samples.h)
 *                 in ascending order, plain or packed (report/samplesline.h:
 *                 the same doubles either way; summaries written before
 *                 2026-11-29 have them in the order taken; readers sort
 *                 what is not sorted), read only for the figures a
 *                 command looks at (history's points).
 * The summary records run.json's size and mtime: when run.json changed after
 * it (or there is no summary: every run recorded before, or a controller
 * killed mid-run), the reader parses run.json, builds the same summary and
 * writes it (in memory, samples inline, where it cannot write), so every
 * run still loads and the next reader parses the small file. */
#ifndef GPUORCH_RUNSUM_H
#define GPUORCH_RUNSUM_H

#include <cjson/cJSON.h>
#include "core/error.h"
#include "store/store.h"

#define RUNSUM_SCHEMA "gpuorch.summary/5"   /* 2: output figures, kernel medians; 3: samples
					       * n (timed), samples_kept, clocks, GPU uuid; 4: per host
					       * "counts" (gates failed, builds failed, steps skipped/failed);
					       * 5: sweep steps (variant, mode) and each step's "gpus";
					       * samples.txt lines may be packed (samplesline.h) */
#define RUNSUM_SCHEMA_4 "gpuorch.summary/4"   /* read as current by listings (no sweep steps,
					       * every samples.txt line plain); rebuilt as 5 by
					       * runsum_refresh where run.json is here */

/* The summary of run record `run`. With samples non-NULL each benchmark's
 * samples go there (one line each) and the step says where
 * ("samples_at": [offset, length]); with NULL they stay inline
 * ("samples_us"). */
cJSON *runsum_build(const cJSON *run, struct strbuf *samples);
/* Write dir/samples.txt and dir/summary.json for run (dir/run.json must be
 * written already: its size and mtime go into the summary). */
enum go_status runsum_write(const char *dir, const cJSON *run, struct strbuf *err);
/* The summary of the run in dir: summary.json when it is current, else one
 * built from run.json and written (summary.json and samples.txt: the next
 * reader parses those), or kept in memory with its samples inline when the
 * store cannot be written (a store_loader). A gpuorch.summary/4 summary is
 * current here (/5 adds the sweep steps, each step's "gpus" and packed
 * samples lines): a store of them lists, and a summary-only run is not
 * fetched, as before; its steps are taken to have run on the host's GPU. */
enum go_status runsum_load(const char *dir, cJSON **out, struct strbuf *err);
/* runsum_load that also writes the summary when it is missing or stale, or
 * of an older schema while run.json is here (`gpuorch summarize`; a
 * store_loader). */
enum go_status runsum_refresh(const char *dir, cJSON **out, struct strbuf *err);
/* The summary of the run in dir and nothing else (`compare --summary`; a
 * store_loader): never the raw record fetched: one of the current schema,
 * else one built from run.json when it is here (and written), else an error
 * saying what is missing and how to get it -- a gpuorch.summary/4 one too,
 * which lacks what compare's rules need (each step's GPU, a sweep's steps). */
enum go_status runsum_load_here(const char *dir, cJSON **out, struct strbuf *err);
/* Every run under REPORTS as summaries, newest first (store_list's rules). */
enum go_status runsum_list(struct store_entry **out, int *n, struct strbuf *warnings,
			   struct strbuf *err);
/* The samples a summary's step points at ("samples_at" under dir/samples.txt):
 * a new array in *v and its length in *n; 0 when there are none to read. */
int runsum_read_samples(const char *dir, const cJSON *samples_at, double **v, int *n);
/* A step's "samples_at" as [offset, length] in at: 1 when it is an array of
 * two numbers, else 0 (at unchanged): the one check of its shape. */
int runsum_samples_at(const cJSON *samples_at, double at[2]);
/* The same for a samples_at's two numbers (offset and length), kept beyond
 * the summary (run/history-runs.c). */
int runsum_read_samples_at(const char *dir, double off, double len, double **v, int *n);
/* With a trace open (core/trace.h) each runsum_load is a "load" span and each
 * read of samples.txt a "samples" span, the run's folder their detail. */

#endif
