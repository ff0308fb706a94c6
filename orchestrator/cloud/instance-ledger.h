/* instance-ledger.h -- what this machine's gpuorch remembers about instances it
 * started: when the start was requested and at what price, so that `gpuorch
 * hosts status` can show the cost accrued so far, across commands. One JSON
 * file per host under $GPUORCH_STATE_DIR (default
 * $XDG_STATE_HOME/gpuorch or ~/.local/state/gpuorch), instances/NAME.json;
 * removed when the stop is confirmed. */
#ifndef GPUORCH_CLOUD_LEDGER_H
#define GPUORCH_CLOUD_LEDGER_H

#include <time.h>
#include <cjson/cJSON.h>
#include "core/error.h"

/* instance_id: of an instance gpuorch launched (so that a later command
 * finds it, to use or terminate it), else NULL. run: the run it is for (or
 * NULL); token: the launch's idempotency token (or NULL). Written before a
 * launch is asked for with instance_id NULL and the token: a reply that
 * never comes (a crash, a lost answer) leaves the token to look it up by. */
enum go_status ledger_note_start(const char *host, const char *provider, double price_per_hour,
				 time_t start_requested, const char *instance_id, const char *run,
				 const char *token, struct strbuf *err);
/* keep_id: a launched instance that was stopped, not terminated (it is still
 * gpuorch's to use or end), else NULL. */
enum go_status ledger_note_stop(const char *host, const char *keep_id, struct strbuf *err);
/* 1 and the fields when gpuorch started host's instance and has not seen it stop; else 0. */
int ledger_read(const char *host, time_t *start_requested, double *price_per_hour);
/* The id of the instance gpuorch launched for host and has not seen end, or NULL (free it). */
char *ledger_launched_id(const char *host);
/* The token of a launch whose answer never came (no id yet), or NULL (free it). */
char *ledger_pending_token(const char *host);
/* The run the host's instance was started for, or NULL (free it). */
char *ledger_run(const char *host);

/* What each run used: instances/runs/RUN.json, one entry per instance start
 * (host, start_requested_epoch, instance_id, price_per_hour, end_epoch and
 * how the end is known: "confirmed" or "seen"). A resumed run records every
 * instance the run used, not only its own controller's. */
enum go_status ledger_run_note(const char *run, const char *host, time_t start_requested,
			       const char *instance_id, double price_per_hour, time_t end,
			       const char *end_how, struct strbuf *err);
/* The entries of run for host (a new array; empty when none). */
cJSON *ledger_run_list(const char *run, const char *host);

#endif
