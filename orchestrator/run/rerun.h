/* rerun.h -- run an experiment again as it was at a commit, and find runs already recorded.
 *
 * Shared by `gpuorch reproduce` and `gpuorch find`. A rerun goes through
 * runner_run() like `gpuorch run --commit REV --host NAME`: the sources and
 * the spec are read from the commit, the work tree is never touched. A
 * recorded run made from a dirty tree is rerun in a scratch `git worktree`
 * at its commit with its recorded source.diff applied (removed afterwards). */
#ifndef GPUORCH_RERUN_H
#define GPUORCH_RERUN_H

#include "core/error.h"
#include "core/hash.h"
#include "store/store.h"
#include "run/run-engine.h"

struct rerun_opts {
	const char *root;           /* repository root (--root), default "." */
	const char *hosts_path;
	const char *host;           /* the one host to run on */
	struct run_step_opts step;  /* host keys, progress, reconnects, GPU wait */
	const char *command_line;   /* recorded in the new run */
};

/* Run the spec at spec_path (relative to the repository root) as it is at
 * commit. *run_dir_out gets the new run's directory, NULL when the run
 * stopped before making one. Returns the runner's exit code. */
int rerun_at_commit(const struct rerun_opts *o, const char *spec_path, const char *commit,
		    char **run_dir_out);
/* The same, with the patch diff_path applied on top of commit in a scratch
 * worktree. When the worktree or the patch cannot be made, returns
 * GO_EXIT_LOCAL with the reason in msg and makes no run. */
int rerun_with_diff(const struct rerun_opts *o, const char *spec_path, const char *commit,
		    const char *diff_path, char **run_dir_out, struct strbuf *msg);

/* sha256 of the bytes of path at commit (the spec hash a run at that
 * commit records). GO_ERR_NOT_FOUND when the commit has no such file. */
enum go_status rerun_spec_hash_at(const char *root, const char *commit, const char *path,
				  char out[SHA256_HEX_LEN + 1], struct strbuf *err);

/* The spec's path in the repository as a run recorded it (new string, or
 * NULL): a run made with --commit records "PATH@<12 hex>", which is cut. */
char *rerun_spec_path_of(const cJSON *run);
/* 1 when the record is a complete run of experiment (name or slug). */
int rerun_is_run_of(const cJSON *run, const char *experiment);
/* 1 when the record is a complete run (not a dry run) of any experiment. */
int rerun_is_complete(const cJSON *run);
/* Index of the newest entry of v (newest first, as store_list gives) that
 * is a complete run of experiment from commit with a clean tree, and
 * whose spec hash is spec_hash (NULL: any); -1 when none. */
int rerun_find_recorded(const struct store_entry *v, int n, const char *experiment,
			const char *commit, const char *spec_hash);

/* Lines of `git ARGS...` run in root (argv[0] must be "git"). */
enum go_status rerun_git_lines(const char *root, const char *const *argv, char ***lines, int *n,
			       struct strbuf *err);
void rerun_free_lines(char **lines, int n);

#endif
