/* ncu.h -- Nsight Compute output read into the run record.
 *
 * A profile step runs `ncu ... -o DIR/profile PROGRAM` and then
 * `ncu --import DIR/profile.ncu-rep --csv --page raw --print-units base`.
 * ncu_parse_csv() turns that CSV (a header row of metric names, a row of
 * units, one row per profiled kernel launch) into result.profile of the
 * step (docs/run-record.md). ncu_diagnose() reads ncu's own log for the
 * reasons a profile fails (no counter permission, no kernel matched). */
#ifndef GPUORCH_NCU_H
#define GPUORCH_NCU_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "core/error.h"

/* Parse len bytes of CSV. metrics (NULL-terminated) are the metrics the step
 * asked for. *profile is always set to a new object (never NULL):
 *   {"kernels": [{"id", "name", "block", "grid", "metrics": {M: {"value", "unit"}}}],
 *    "metrics": {M: {"value": mean over launches, "unit", "min", "max", "n"}},
 *    "missing": ["metric named but absent, n/a or NaN", ...]}
 * Returns GO_OK when every asked metric has a finite value for every
 * profiled launch; otherwise GO_ERR_REMOTE and err says the first problem
 * (no kernel profiled, a metric missing / "n/a" / NaN, a row cut short, no
 * header). Lines ncu prefixes with "==" (==PROF==, ==WARNING==) are skipped.
 * Numbers may carry thousands separators ("33,600"). */
enum go_status ncu_parse_csv(const char *text, size_t len, char *const *metrics,
			     cJSON **profile, struct strbuf *err);

/* Why a profile produced nothing, from ncu's log (and the program's
 * stderr): a message naming the fix for ERR_NVGPUCTRPERM, ncu's first
 * ==ERROR== line, or "no kernel matched" for ==WARNING== No kernels were
 * profiled. Appends to why; returns 1 when it found something. */
int ncu_diagnose(const char *log, size_t len, struct strbuf *why);

#endif
