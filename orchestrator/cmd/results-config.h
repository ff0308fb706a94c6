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

/* Make store_load_record fetch a missing run.json (and the run's other
 * missing files) from the configured store where the run directory has a
 * summary.json; says on stderr what it fetched. */
void results_fetch_on_demand(void);

#endif
