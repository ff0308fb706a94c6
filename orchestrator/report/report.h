/* report.h -- the Markdown phase report, written from a run record alone.
 *
 * The report is a pure function of run.json (docs/run-record.md): `gpuorch
 * report RUN_ID` rewrites it at any time from the record. */
#ifndef GPUORCH_REPORT_H
#define GPUORCH_REPORT_H

#include <cjson/cJSON.h>
#include "core/error.h"

/* Render the report of a run record into md. */
void report_render(const cJSON *run, struct strbuf *md);
/* Render and write atomically to path, with the charts it links
 * (charts/HOST-PROBLEM.svg in path's directory). */
enum go_status report_write(const cJSON *run, const char *path, struct strbuf *err);

/* report.md's last line names the renderer that wrote it:
 * "<!-- gpuorch report 0.1.0 renderer 1a2b3c4d5e6f -->" (report/report-id.h). */
#define REPORT_GENERATOR_MARK "<!-- gpuorch report "
void report_generator_line(struct strbuf *sb);
/* 1 when text (a report.md) is what report_render writes for run now; else 0
 * and why: the first line that differs and which renderer wrote the text. */
int report_check_text(const cJSON *run, const char *text, size_t len, struct strbuf *why);

/* Helpers shared with `gpuorch runs`: the headline figure of a run
 * ("attn_wmma B16-H16-S512-D64: 41.2 us, 312 TFLOPS") into sb. */
void report_headline(const cJSON *run, struct strbuf *sb);

#endif
