/* ledger.h -- what this machine's gpuorch remembers about instances it
 * started: when the start was requested and at what price, so that `gpuorch
 * hosts status` can show the cost accrued so far, across commands. One JSON
 * file per host under $GPUORCH_STATE_DIR (default
 * $XDG_STATE_HOME/gpuorch or ~/.local/state/gpuorch), instances/NAME.json;
 * removed when the stop is confirmed. */
#ifndef GPUORCH_CLOUD_LEDGER_H
#define GPUORCH_CLOUD_LEDGER_H

#include <time.h>
#include "core/error.h"

/* instance_id: of an instance gpuorch launched (so that a later command
 * finds it, to use or terminate it), else NULL. */
enum go_status ledger_note_start(const char *host, const char *provider, double price_per_hour,
				 time_t start_requested, const char *instance_id, struct strbuf *err);
/* keep_id: a launched instance that was stopped, not terminated (it is still
 * gpuorch's to use or end), else NULL. */
enum go_status ledger_note_stop(const char *host, const char *keep_id, struct strbuf *err);
/* 1 and the fields when gpuorch started host's instance and has not seen it stop; else 0. */
int ledger_read(const char *host, time_t *start_requested, double *price_per_hour);
/* The id of the instance gpuorch launched for host and has not seen end, or NULL (free it). */
char *ledger_launched_id(const char *host);

#endif
