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

/* Summarize a trace, or several one after another (one per run of the
 * program): {"runs": N (header lines), "complete": bool (every run's end
 * line was there), "dropped": N (summed), "launches": N, "gpu_time_us": sum, "kernels": [{"name",
 * "demangled", "launches", "total_us", "median_us", "min_us", "max_us",
 * "share_pct" (of gpu_time_us), "grid", "block", "registers"}]} with the
 * kernels sorted by total time, longest first. GO_ERR_REMOTE with "line N:
 * what is wrong" for a file that is not such a trace. */
enum go_status ktrace_summarize(const char *text, size_t len, cJSON **out, struct strbuf *err);
/* The figure key of a kernel (docs/byo.md): each summarized kernel carries
 * it as "key"; gates and compare name it as "kernel:KEY.median_us". */
char *ktrace_key(const char *demangled, int full);

#endif
