/* runjournal.h -- the run's local event journal (journal.jsonl in the run directory).
 *
 * DESIGN: while a run goes on, run.json is written whole only at its start and
 * its end (and on interrupt). In between, every change of a host's part of the
 * record is one appended JSON line holding only what changed since that
 * host's last line (store/hostdelta.h):
 *   {"ev":"host","host":I,"at":T,"set":{...},"del":[...],"ins":{"steps":[[POS,{...}]]}}
 * so a step costs one step's record and the journal grows linearly with the
 * steps (docs/run-record.md has the numbers). Each line is one write() and
 * fdatasync'd, so a controller killed at any instant leaves run.json plus
 * whole lines (a torn last line is ignored on read; a failed append is cut
 * off again).
 * The first line after a whole save is {"ev":"base","format":2,
 * "run_json_sha256":H}: the deltas apply to the run.json whose bytes hash to
 * H. A whole save writes run.json, then empties the journal; a controller
 * killed between the two leaves a journal whose base is not the new run.json,
 * and it is ignored (everything in it is in run.json). A finished run has no
 * journal. A journal without a base line is of the earlier format (each line
 * a host's whole object, "record"): its last line per host wins.
 * Reading never holds the journal whole: it is read a line at a time, and a
 * line over RUNJOURNAL_LINE_MAX bytes is an error (the run is unreadable,
 * said so), not an allocation of its size. */
#ifndef GPUORCH_RUNJOURNAL_H
#define GPUORCH_RUNJOURNAL_H

#include <cjson/cJSON.h>
#include "core/error.h"

#define RUNJOURNAL_NAME "journal.jsonl"
#define RUNJOURNAL_LINE_MAX ((size_t)64 << 20)

/* Open DIR/journal.jsonl for appending (created when missing); -1 with err. */
int runjournal_open(const char *dir, struct strbuf *err);
/* Append text (whole lines, each ending in '\n') with one write, then
 * fdatasync; on failure the file is cut back to its size before. */
enum go_status runjournal_append(int fd, const char *text, size_t len, struct strbuf *err);
/* The base line for a run.json whose bytes hash to run_sha256 (hex). */
void runjournal_base_line(struct strbuf *sb, const char *run_sha256);
/* One host's delta line (delta: hostdelta_diff's object). */
void runjournal_host_line(struct strbuf *sb, int index, const cJSON *delta);
/* Empty the journal (its events are all in a run.json just written). */
enum go_status runjournal_clear(int fd, struct strbuf *err);
/* Apply DIR/journal.jsonl, when there is one, to a loaded run record whose
 * run.json bytes hash to run_sha256; returns the number of events applied
 * (0 when there is no journal, or it belongs to an earlier run.json), or -1
 * with err when it cannot be read. */
int runjournal_apply(const char *dir, cJSON *run, const char *run_sha256, struct strbuf *err);

#endif
