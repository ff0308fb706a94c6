/* results-prune.h -- a run directory's raw record removed once the results store holds it.
 *
 * `gpuorch push --prune` (docs/results-store.md, "Migrating"): after a push,
 * every raw file of the run directory (run.json, logs/, source.diff, the
 * journal, profiles: all but what a reader reads) is checked against the
 * store -- its path and SHA-256 in the store's manifest of the run, the
 * store's object read back and hashed -- and only then removed, run.json
 * first. A prune cut at any point leaves a directory whose remaining raw
 * files are all in the store (run.json gone first, so no later push can
 * replace the whole run's manifest with the part left), and a second prune
 * finishes it; a run the store does not hold loses nothing. */
#ifndef GPUORCH_RESULTS_PRUNE_H
#define GPUORCH_RESULTS_PRUNE_H

#include <cjson/cJSON.h>
#include "store/results.h"

/* 1 when rel (a path in a run directory) is a file a reader reads and git
 * keeps: report.md, summary.json, samples.txt, charts/..., and the Markdown
 * and text that commands wrote there for people (reproduction.md,
 * compare-*.md, compare-*.txt). Everything else is the raw record. */
int results_reader_file(const char *rel);

/* What a prune did. */
struct results_pruned {
	int removed;          /* raw files removed */
	int kept;             /* reader's files kept */
	long long bytes;      /* bytes removed */
};

/* Remove the raw files of the run directory dir (REPORTS/SLUG/RUN-ID),
 * each once checked as stored in rs; an empty reader's file goes too (it
 * is in the store, and git need not keep it). dir must have a summary.json
 * (what runs and history read once run.json is gone). GO_ERR_NOT_FOUND
 * when the store does not hold the run, GO_ERR_IO when a raw file is not
 * stored as it is here: nothing is removed then. */
enum go_status results_prune_run(struct results_store *rs, const char *dir,
				 struct results_pruned *p, struct strbuf *err);

/* The store's manifest of run SLUG/RUN-ID as an object mapping each path
 * of the run directory to its content's SHA-256 (*map, freed by the caller).
 * GO_ERR_NOT_FOUND when the store has no such run. */
enum go_status results_stored_files(struct results_store *rs, const char *slug,
				    const char *run_id, cJSON **map, struct strbuf *err);

/* The run directories at or under dir (a run's, an experiment's or a
 * reports tree) that hold a run.json or a summary.json (a run whose raw
 * record is in the store), sorted by path; freed with store_run_dirs_free. */
char **results_run_dirs(const char *dir, int *n);

#endif
