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

enum go_status ledger_note_start(const char *host, const char *provider, double price_per_hour,
				 time_t start_requested, struct strbuf *err);
enum go_status ledger_note_stop(const char *host, struct strbuf *err);
/* 1 and the fields when gpuorch started host's instance and has not seen it stop; else 0. */
int ledger_read(const char *host, time_t *start_requested, double *price_per_hour);

#endif
