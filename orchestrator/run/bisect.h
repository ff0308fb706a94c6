/* bisect.h -- `gpuorch find`'s engine: bisect commits to the one where a figure changed.
 *
 * find_main resolves GOOD..BAD, reuses the runs recorded at a commit with the
 * same spec hash, runs the others on one host with the recorded GPU model
 * (rerun.h), and bisects by the rule of `gpuorch compare` (docs/reproduce.md). */
#ifndef GPUORCH_BISECT_H
#define GPUORCH_BISECT_H

#include "core/strbuf.h"
#include "run/run-engine.h"
#include <cJSON.h>

struct finder {
	const char *experiment, *spec_path, *program, *problem, *root, *host, *hosts_path;
	const char *figure;         /* a printed or kernel figure (compare.h) instead of the timing */
	const char *target_gpu;     /* set by find_main */
	double factor;
	struct run_step_opts step;
	struct strbuf cl;           /* the command line, recorded in the runs it makes */
	cJSON *json;                /* --json: find_main adds its result to this object
				     * (docs/schema/cli-find.schema.json); NULL: text only */
	int raw_missing;            /* set by find_main: a recorded run's raw record was not
				     * here nor fetched (its commit skipped, not measured again) */
};

/* range_arg is "GOOD..BAD" (checked by the caller). Returns the exit code;
 * prints its progress on stdout and errors on stderr. */
int find_main(struct finder *f, const char *range_arg);

#endif
