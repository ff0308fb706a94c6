/* run-json.h -- one run as commands print it in JSON: `runs --json`'s entries
 * and `run --json`'s document (docs/schema/cli-runs.schema.json,
 * cli-run.schema.json), made from the run's summary. */
#ifndef GPUORCH_RUN_JSON_H
#define GPUORCH_RUN_JSON_H

#include <cJSON.h>

/* The counts of every host (runsum.c's "counts"), summed. */
struct run_counts { int gates, gates_failed, builds_failed, steps_skipped, steps_failed; };
void run_counts_sum(const cJSON *hosts, struct run_counts *k);

/* {run_id, dir, experiment, started_at, status, outcome, hosts, gpus,
 * counts, headline} of a run's summary (or run.json); status as shown. */
cJSON *run_entry_json(const cJSON *run, const char *run_id, const char *dir, const char *status);

/* --json on a command whose text goes on stdout as it works (run,
 * reproduce, find): stdout goes to stderr until cmd_json_stdout_end, so
 * stdout holds only the JSON document. Returns the saved descriptor (-1:
 * nothing was moved). */
int cmd_json_stdout_begin(void);
void cmd_json_stdout_end(int saved);

/* `run --json`'s document for the run in dir, ended with exit code rc:
 * {schema: "gpuorch.cli.run/1", exit_code, report, run: run_entry_json}.
 * Printed on stdout; -1 (and a message on stderr) when its summary cannot
 * be read. */
int cmd_print_run_json(const char *schema, const char *dir, int rc);

#endif
