/* sanitizer.h -- compute-sanitizer output read into the run record.
 *
 * A sanitize step runs `compute-sanitizer --tool T --print-limit N
 * --error-exitcode 99 --log-file DIR/sanitizer.log PROGRAM --mode=check`.
 * sanitizer_parse() reads that log (or any text where the sanitizer's lines
 * start with "=========", mixed with the program's own output) into the
 * step's result.sanitizer (docs/run-record.md). */
#ifndef GPUORCH_SANITIZER_H
#define GPUORCH_SANITIZER_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "core/error.h"

#define SANITIZER_MAX_REPORTS 10   /* first errors kept in the record */

/* *out is always set to a new object:
 *   {"tool": T, "errors": N or null, "warnings": N or null,
 *    "hazards_displayed": N (racecheck) or null, "not_printed": N or null,
 *    "summary": "ERROR SUMMARY: 3 errors", "reports_seen": N,
 *    "first_errors": [{"what", "kernel", "location" ("file.cu:13"), "thread",
 *                      "block", "address", "detail"} ...]}
 * Returns GO_OK when a summary line was found; GO_ERR_REMOTE (err says so)
 * when the output has none (cut short, the tool did not start). */
enum go_status sanitizer_parse(const char *text, size_t len, const char *tool, cJSON **out,
			       struct strbuf *err);

/* "memcheck: 3 errors; first: Invalid __global__ write of size 4 bytes in
 * fill_kernel(float *, int) at oob.cu:13, thread (232,0,0) block (3,0,0)". */
void sanitizer_describe(const cJSON *san, struct strbuf *sb);

#endif
