/* store.h -- where run records live: REPORTS/<experiment-slug>/<run-id>/.
 *
 * REPORTS is ./reports unless --reports DIR or $GPUORCH_REPORTS says
 * otherwise. A run directory holds run.json, report.md, logs/ and, for a
 * dirty tree, source.diff. */
#ifndef GPUORCH_STORE_H
#define GPUORCH_STORE_H

#include <cjson/cJSON.h>
#include "core/error.h"
#include "core/jsonlean.h"

const char *store_root(void);            /* the reports directory in use */
void store_set_root(const char *dir);

/* A new run id: "YYYYMMDD-HHMMSS-xxxxxx" (UTC, 6 random hex digits). */
void store_new_run_id(char out[32]);
/* Create REPORTS/slug/run_id (and logs/); returns its path. */
enum go_status store_create_run_dir(const char *slug, const char *run_id, char **dir_out,
				    struct strbuf *err);

struct store_entry {
	char *run_id;
	char *dir;       /* run directory */
	cJSON *run;      /* parsed run.json */
};
/* Every run under REPORTS, newest first. Unreadable records are skipped with
 * a warning in warnings (one line each). */
enum go_status store_list(struct store_entry **out, int *n, struct strbuf *warnings,
			  struct strbuf *err);
void store_list_free(struct store_entry *v, int n);
/* How a run directory becomes an entry's tree: store_load_record reads
 * dir/run.json (GO_OK only for a JSON object); another loader may read a
 * smaller file beside it (report/runsum.h). */
typedef enum go_status (*store_loader)(const char *dir, cJSON **out, struct strbuf *err);
enum go_status store_load_record(const char *dir, cJSON **out, struct strbuf *err);
/* Where a run directory has no run.json, store_load_record first calls the
 * fetch set here (the results store's, cmd/results-config.c): GO_OK when
 * it put run.json there (or had nothing to do), else its error, which
 * store_load_record returns. NULL (the default): no fetching. */
typedef enum go_status (*store_fetch)(const char *dir, struct strbuf *err);
void store_set_fetch(store_fetch fetch);
/* What a record was read from: run.json's size and modification time (the
 * fstat of the file read) and the SHA-256 of the bytes parsed. */
struct store_record_file {
	double size, mtime_s, mtime_ns;
	char sha256[65];
};
/* store_load_record that also says, in *of, what it read (one read, one hash). */
enum go_status store_load_record_of(const char *dir, cJSON **out, struct store_record_file *of,
				    struct strbuf *err);
/* store_load_record_of for a listing (report/runsum.c): the same tree, with
 * each timing.samples_us array one block (core/jsonlean.h: a cJSON_Raw
 * node, its numbers beside the tree; samples_read_timing reads either), or,
 * for a record json_lean_parse does not read, cJSON's tree without blocks.
 * The tree is out->root; json_lean_release frees it. */
enum go_status store_load_record_lean(const char *dir, struct json_lean *out,
				      struct store_record_file *of, struct strbuf *err);
/* store_list with the tree of each run read by load. */
enum go_status store_list_with(store_loader load, struct store_entry **out, int *n,
			       struct strbuf *warnings, struct strbuf *err);
/* Every run, newest first (store_list's order), each loaded by load and
 * handed to visit alone, its tree freed after: memory is one tree plus a
 * start time per run, whatever the store holds. visit returns nonzero to
 * stop. Each tree is read twice (its start time, then its visit), so only
 * for loaders of small files (runsum_load). */
typedef int (*store_visit)(const struct store_entry *e, void *ctx);
enum go_status store_each_newest(store_loader load, store_visit visit, void *ctx,
				 struct strbuf *warnings, struct strbuf *err);
/* Every run in the store's order (by directory), each loaded by load and
 * handed to visit alone, its tree freed after (one pass: memory is one tree,
 * whatever the store holds). Unreadable runs are skipped with a warning,
 * as store_list does. visit returns nonzero to stop. */
enum go_status store_each(store_loader load, store_visit visit, void *ctx,
			  struct strbuf *warnings, struct strbuf *err);
/* The controller lock of a run directory (dir/controller.lock, flock held for
 * the life of the gpuorch process that runs it; the kernel drops it when that
 * process dies, even by SIGKILL). store_lock_run takes it without waiting:
 * GO_ERR_USAGE naming the holder's pid when another process has it; *fd is
 * kept open by the caller until the run ends (close() releases it).
 * store_run_live: 1 when some process holds it now. */
enum go_status store_lock_run(const char *dir, int *fd, struct strbuf *err);
int store_run_live(const char *dir);
/* The run directories (holding run.json) at or under dir: a run directory,
 * an experiment's directory or a reports tree; sorted by path. */
char **store_run_dirs_under(const char *dir, int *n);
void store_run_dirs_free(char **v, int n);
/* Find a run by id (or unique prefix), or by EXPERIMENT/RUN-ID (the
 * experiment's folder under REPORTS). An id that two runs have (a run
 * directory copied under another experiment) is an error naming both
 * directories and the EXPERIMENT/RUN-ID form, never a silent pick. */
enum go_status store_find(const char *run_id, struct store_entry *out, struct strbuf *err);
/* store_find with the run's tree read by load (store_find: store_load_record). */
enum go_status store_find_with(const char *run_id, store_loader load, struct store_entry *out,
			       struct strbuf *err);
void store_entry_release(struct store_entry *e);
/* "EXPERIMENT/RUN-ID" of a run directory: what store_find finds it by alone. */
char *store_qualified_id(const char *dir);

#endif
