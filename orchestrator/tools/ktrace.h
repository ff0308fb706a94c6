/* ktrace.h -- per-kernel times from the CUPTI injection library's trace
 * (kernels/ktrace/gpuorch_ktrace.c, format "gpuorch.ktrace/1": one JSON
 * object a line, a header, one line per kernel launch with its GPU start and
 * end in ns, an end line). */
#ifndef GPUORCH_KTRACE_H
#define GPUORCH_KTRACE_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "core/error.h"
#include "core/strbuf.h"

/* Summarize a trace: {"complete": bool (the end line was there),
 * "dropped": N, "launches": N, "gpu_time_us": sum, "kernels": [{"name",
 * "demangled", "launches", "total_us", "median_us", "min_us", "max_us",
 * "share_pct" (of gpu_time_us), "grid", "block", "registers"}]} with the
 * kernels sorted by total time, longest first. GO_ERR_REMOTE with "line N:
 * what is wrong" for a file that is not such a trace. */
enum go_status ktrace_summarize(const char *text, size_t len, cJSON **out, struct strbuf *err);

#endif
