/* report-id.h -- which renderer wrote a report.md.
 *
 * gpuorch_report_id is generated at build time (scripts/report-id.sh) from
 * the sources the report is rendered by (report/, store/, core/): it changes
 * whenever the renderer may have. report.md ends with it in a comment line,
 * and `gpuorch report --check` names it for a stale report. */
#ifndef GPUORCH_REPORT_ID_H
#define GPUORCH_REPORT_ID_H

extern const char gpuorch_report_id[];

#endif
