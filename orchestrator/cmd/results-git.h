/* results-git.h -- a run's raw record read back from the repository's git history.
 *
 * A repository that committed its runs' raw records and then moved them to
 * the results store (`gpuorch push --prune`, docs/results-store.md) still
 * has their bytes in its history. Where the reports directory is inside a
 * git work tree, the last commit that held REPORTS/SLUG/RUN-ID/run.json
 * (the commit that removed it: its parent) gives the run directory back,
 * through `git archive` of that directory (libarchive reads it). Only the
 * files missing here are written: the ones here are what the repository
 * has now (a report re-rendered since, a summary), newer than that commit. */
#ifndef GPUORCH_RESULTS_GIT_H
#define GPUORCH_RESULTS_GIT_H

#include "store/results.h"

/* The experiment of run RUN-ID in the history of the repository holding
 * reports (the reports directory): GO_ERR_NOT_FOUND when no commit has
 * REPORTS/EXPERIMENT/RUN-ID/run.json for any EXPERIMENT (or reports is in no git work tree),
 * GO_ERR_USAGE when two experiments have it. */
enum go_status results_git_find(const char *reports, const char *run_id, char **slug,
				struct strbuf *err);

/* Write the files of REPORTS/SLUG/RUN-ID that dir lacks from the last
 * commit that held its run.json; *commit (new string) names that commit.
 * GO_ERR_NOT_FOUND when no commit has it. */
enum go_status results_git_pull(const char *reports, const char *slug, const char *run_id,
				const char *dir, char **commit, struct results_counts *n,
				struct strbuf *err);

/* The bytes of REPORTS/SLUG/RUN-ID/REL at the last commit that held it,
 * into out (appended), writing nothing; *commit names it. */
enum go_status results_git_show(const char *reports, const char *slug, const char *run_id,
				const char *rel, struct strbuf *out, char **commit,
				struct strbuf *err);

#endif
