/* runjournal.h -- the run's local event journal (journal.jsonl in the run directory).
 *
 * DESIGN: while a run goes on, run.json is written whole only at its start and
 * its end (and on interrupt). In between, every change of a host's part of the
 * record is one appended JSON line, {"ev": "host", "host": I, "at": T,
 * "record": {...}}: the host's whole object as it stands, written with one
 * write() and fdatasync'd, so a controller killed at any instant leaves
 * run.json (the start) plus whole lines (a torn last line is ignored on read).
 * Reading a run applies the journal to run.json: the last line of each host
 * wins. A whole save of run.json makes the journal redundant, so it is emptied
 * then; a finished run has none. The cost of a host's save is that host's
 * record, not the run's: 16 hosts no longer rewrite one another's samples. */
#ifndef GPUORCH_RUNJOURNAL_H
#define GPUORCH_RUNJOURNAL_H

#include <cjson/cJSON.h>
#include "core/error.h"

#define RUNJOURNAL_NAME "journal.jsonl"

/* Open DIR/journal.jsonl for appending (created when missing); -1 with err. */
int runjournal_open(const char *dir, struct strbuf *err);
/* Append one host event (line serialised by the caller's rules above). */
enum go_status runjournal_append_host(int fd, int index, const char *host_json,
				      struct strbuf *err);
/* Empty the journal (its events are all in a run.json just written). */
enum go_status runjournal_clear(int fd, struct strbuf *err);
/* Apply DIR/journal.jsonl, when there is one, to a loaded run record; returns
 * the number of events applied (0 when there is no journal). */
int runjournal_apply(const char *dir, cJSON *run);

#endif
