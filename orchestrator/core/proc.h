/* proc.h -- start a local program, without a shell, and capture what it prints. */
#ifndef GPUORCH_PROC_H
#define GPUORCH_PROC_H

#include "core/error.h"

/* The cap of each captured stream when the caller sets no ->max (64 MiB). */
#define PROC_OUTPUT_CAP ((size_t)64 << 20)

/* Run argv (no shell) in dir, capture stdout (capped) and the exit code.
 * The one place gpuorch starts a local program. dir NULL: the current one;
 * out/errout may be NULL (discarded). Each stream is capped at its ->max,
 * or 64 MiB, with ->truncated set. GO_ERR_NOT_FOUND: no such program;
 * GO_ERR_TIMEOUT: still running after 10 minutes (killed). With exit_code
 * NULL a non-zero exit is an error quoting stderr's first line. */
enum go_status proc_run(const char *dir, const char *const *argv, struct strbuf *out,
			struct strbuf *errout, int *exit_code, struct strbuf *err);

/* proc_run with a bound of timeout_ms: the program runs in a process group
 * of its own and the whole group is killed at the bound (GO_ERR_TIMEOUT).
 * For programs that may hang, such as a cloud provider's CLI. */
enum go_status proc_run_timed(const char *dir, const char *const *argv, struct strbuf *out,
			      struct strbuf *errout, int *exit_code, int timeout_ms,
			      struct strbuf *err);

#endif
