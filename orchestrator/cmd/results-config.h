/* results-config.h -- which results store gpuorch uses, and the fetch of a raw record from it. */
#ifndef GPUORCH_RESULTS_CONFIG_H
#define GPUORCH_RESULTS_CONFIG_H

#include "store/results.h"

/* The results store named by where (a --store value), else by
 * $GPUORCH_RESULTS_STORE, else the default directory
 * ($GPUORCH_CACHE_DIR/results, $XDG_CACHE_HOME/gpuorch/results or
 * ~/.cache/gpuorch/results). A name is "s3://BUCKET[/PREFIX]" (endpoint:
 * $GPUORCH_RESULTS_S3_ENDPOINT) or a directory; "none" is no store:
 * GO_ERR_USAGE saying how to configure one. */
enum go_status results_configured(const char *where, struct results_store **out,
				  struct strbuf *err);

/* Restore run SLUG/RUN-ID (slug NULL: found by its id) into
 * REPORTS/SLUG/RUN-ID from the store named by where (results_configured's
 * rules; "git": none), else, where that store lacks it or none is
 * configured, from the history of the git repository that holds REPORTS
 * (results-git.h: only files missing here). *slug_out and *from (what it
 * came from, for messages) are new strings on success. */
enum go_status results_restore(const char *where, const char *slug, const char *run_id,
			       enum results_clash clash, char **slug_out, char **from,
			       struct results_counts *n, struct strbuf *err);

/* The raw record (run.json) of run SLUG/RUN-ID read into out without
 * writing anything: from the configured store, else from git history;
 * *from says which (new string). */
enum go_status results_read_record(const char *slug, const char *run_id, struct strbuf *out,
				   char **from, struct strbuf *err);

/* Make store_load_record fetch a missing run.json (and the run's other
 * missing files) from the configured store where the run directory has a
 * summary.json, else from git history (results_restore); says on stderr
 * what it fetched. */
void results_fetch_on_demand(void);

#endif
