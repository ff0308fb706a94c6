/* reproduce.h -- `gpuorch reproduce`'s engine: a recorded run rebuilt at its commit, rerun, compared.
 *
 * reproduce_main finds the recorded run (by id or unique prefix, or the
 * newest complete run of an experiment at a commit: found through the
 * summaries, report/runsum.h), checks what can be checked locally, picks a
 * host with the recorded GPU model, reruns it (rerun.h) and writes
 * reproduction.md in the new run's directory (docs/reproduce.md). */
#ifndef GPUORCH_REPRODUCE_H
#define GPUORCH_REPRODUCE_H

#include "run/run-engine.h"
#include <cJSON.h>

struct reproduce_opts {
	const char *hosts_path;     /* --hosts FILE */
	const char *host;           /* --host NAME, or NULL: the first with the recorded GPU */
	const char *commit_rev;     /* --commit REV: `what` is then an experiment */
	const char *root;           /* the git repository */
	double factor;              /* smallest ratio of medians called a change */
	struct run_step_opts step;  /* host keys, progress, reconnects, GPU wait */
	const char *command_line;   /* recorded in the new run */
	cJSON **json_out;           /* --json: set to the gpuorch.cli.reproduce/1 document
				     * (docs/schema/cli-reproduce.schema.json) once the
				     * comparison is written; NULL: text only */
};

/* what: a run id (or unique prefix), or with commit_rev an experiment name.
 * Returns the exit code (docs/exit-codes.md); errors are printed on stderr. */
int reproduce_main(const struct reproduce_opts *o, const char *what);

#endif
