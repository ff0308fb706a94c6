/* trace.h -- a timed event trace of what the controller does (--trace FILE,
 * GPUORCH_TRACE=FILE; docs/trace.md).
 *
 * One place records events: the SSH layer and the executors call
 * trace_span()/trace_instant(); any thread may (one mutex around each
 * line's write). The file holds JSON lines, each a Chrome trace event
 * ("ph": "X" a span with "dur", "i" an instant, "M" a host's name), so
 * `jq -s '{traceEvents: .}'` makes a file chrome://tracing and Perfetto
 * open. Zero cost when off: callers test trace_on() (one load) first. */
#ifndef GPUORCH_TRACE_H
#define GPUORCH_TRACE_H

#include <stdint.h>
#include "core/strbuf.h"

/* set while a trace is open; read through trace_on() */
extern volatile int trace_active;
static inline int trace_on(void) { return trace_active; }

/* What the next remote command of this thread is for ("probe", "fetch"...;
 * a string literal): its exec span carries it as args.what. */
extern _Thread_local const char *trace_what;
static inline void trace_label(const char *what) { if (trace_active) trace_what = what; }

/* Open (truncate) path for the trace; a second open replaces the first.
 * -1 with the reason in err (the path and errno's text). */
int trace_open(const char *path, struct strbuf *err);
/* Flush and close the trace; nothing when none is open. */
void trace_close(void);

/* Microseconds since the trace opened (monotonic): a span's start. */
int64_t trace_now_us(void);

/* The details of an event: NULL / -1 for what it lacks. */
struct trace_args {
	const char *detail;    /* e.g. the command, the remote path (cut to 300 bytes) */
	const char *status;    /* "ok" or the failure's text */
	int exit_code;         /* TRACE_NO_EXIT: none */
	const char *signal;    /* the remote command's signal, "" or NULL: none */
	int64_t bytes;         /* -1: none */
	const char *via;       /* how: "channel", "execd", "keeper", "sftp" */
	const char *what;      /* what it is for (trace_label) */
};
#define TRACE_NO_EXIT (-999)
#define TRACE_ARGS_INIT { NULL, NULL, TRACE_NO_EXIT, NULL, -1, NULL, NULL }

/* A span of host's (NULL: the controller) from start_us (trace_now_us) to now. */
void trace_span(const char *host, const char *name, int64_t start_us,
		const struct trace_args *a);
/* An instant event of host's. */
void trace_instant(const char *host, const char *name, const struct trace_args *a);

/* Sleep ms milliseconds (time_sleep_ms), a "wait" span of host's with why. */
void trace_wait(const char *host, const char *why, int64_t ms);

#endif
