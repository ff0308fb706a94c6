/* hostjournal.h -- the controller's reader of a host runner's journal: JSON
 * lines (docs/runner.md) fed in as they arrive over one channel, parsed with
 * cJSON one line at a time, resumable from a byte offset after a reconnect. */
#ifndef GPUORCH_JOURNAL_H
#define GPUORCH_JOURNAL_H

#include <stdint.h>
#include <cjson/cJSON.h>
#include "core/error.h"

struct journal_event {
	const char *ev;          /* "runner_started", "build_end", "step_end", ... */
	const char *id;          /* the build or step id; NULL for runner/phase events */
	double t;                /* the host's clock when it was written (unix s) */
	const cJSON *json;       /* the whole line (valid during the callback) */
	uint64_t offset;         /* journal offset of the line's first byte */
	uint64_t next;           /* journal offset just past its newline */
};

/* Return non-zero to stop feeding (journal_feed returns GO_OK; the lines
 * after the one that stopped it are left for the next feed). */
typedef int (*journal_cb)(const struct journal_event *e, void *ctx);

struct journal {
	uint64_t offset;         /* bytes of complete lines consumed: resume here */
	struct strbuf pending;   /* bytes after offset received so far, no newline yet */
	int nbad;                /* complete lines that were not an event (a torn write) */
	int ndup;                /* repeated end events dropped (a restarted runner) */
	int ended;               /* runner_ended was seen */
	char *end_status;        /* its status: "done", "killed", "error" */
	char *last_bad;          /* a short description of the last bad line */
	void *seen;              /* "kind\nid" of the end events delivered (a tsearch
				  * tree: 20,000 steps must not compare every pair) */
};

#define JOURNAL_MAX_LINE (64u << 20)

void journal_init(struct journal *j, uint64_t offset);
void journal_release(struct journal *j);

/* Bytes of the journal from j->offset + j->pending.len on. Every complete
 * line is parsed and handed to cb (end events at most once per item); a
 * torn last line waits in pending. A line longer than JOURNAL_MAX_LINE is an
 * error (GO_ERR_REMOTE). */
enum go_status journal_feed(struct journal *j, const char *data, size_t len, journal_cb cb,
			    void *ctx, struct strbuf *err);

/* The link dropped: forget the partial line; read again from j->offset. */
void journal_resync(struct journal *j);

/* Feeds a local journal file from j->offset to its end. */
enum go_status journal_read_file(struct journal *j, const char *path, journal_cb cb, void *ctx,
				 struct strbuf *err);

#endif
