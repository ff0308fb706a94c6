/* output-figures.h -- figures read from a program's own output (docs/byo.md): a
 * number captured by a regular expression from a line of its stdout, or
 * found at a dotted path in the JSON object on its last line. */
#ifndef GPUORCH_FIGURES_H
#define GPUORCH_FIGURES_H

#define FIGURES_KERNEL_MAX 256   /* kernels per figure */
#define FIGURES_KERNEL_NAME_MAX METRIC_KERNEL_NAME_MAX   /* core/metric.h */

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "core/strbuf.h"
#include "core/metric.h"

struct figure_rule {
	const char *name;
	const char *regex;   /* POSIX ERE; group 1 is the number; the last matching line wins */
	const char *json;    /* or a dotted path into the last line's JSON object */
	const char *unit;    /* may be NULL */
	const char *better;  /* "higher" | "lower" | NULL */
	/* a figure per kernel (at most one of the two; regex figures only): */
	const char *name_regex; /* a line naming the block the following values belong to
				 * (its group 1 is the kernel's name) */
	int name_group;         /* or the group of regex that names the kernel (0: none); the
				 * value is group 1, or group 2 when the name is group 1 */
};

/* Read every rule's figure from len bytes of output. Returns a new object
 * NAME -> {"value", "unit", "better", "source": "regex"|"json", "line": the
 * matched line (at most 200 bytes)}. A figure not found is left out and
 * named in missing ("'gflops': no line matches /GFLOPS: ([0-9.]+)/; ..."). A
 * rule with a kernel name (name_regex or name_group) gives one figure per
 * kernel, NAME[KERNEL], in the order the kernels first appear, with
 * "figure": NAME and "kernel": KERNEL beside the value. A kernel's name is
 * its group with blanks trimmed: letters, digits, '_', '-', '+', ':' only,
 * 1-64 bytes. A value with no name (empty, other bytes, a value line before
 * any name line) or a kernel printed twice with different values is an
 * error said in missing, and that rule's figures are all left out. */
cJSON *figures_read(const struct figure_rule *rules, int n, const char *out, size_t len,
		    struct strbuf *missing);

/* The same, as a stream: feed the output in pieces of any size as it
 * arrives (only the line being read and the last non-empty one are held),
 * then finish. figures_scan_gap says that `dropped` bytes here were not
 * given (0: an unknown number): the lines cut by it are not read; a figure
 * whose last matching line came before a gap gets "truncated": true (a later
 * line in the gap may have matched); a regex that matched nowhere names the
 * gap in missing ("it could only be in the part that was not read"); a JSON
 * figure needs the last line after the last gap. figures_scan_cut: the
 * number of gaps and the bytes they dropped (0 when one was unknown). The
 * rules must outlive the scan. */
struct figure_scan;
struct figure_scan *figures_scan_new(const struct figure_rule *rules, int n);
void figures_scan_feed(struct figure_scan *s, const char *data, size_t len);
void figures_scan_gap(struct figure_scan *s, uint64_t dropped);
cJSON *figures_scan_finish(struct figure_scan *s, struct strbuf *missing);
int figures_scan_cut(const struct figure_scan *s, uint64_t *dropped);
void figures_scan_free(struct figure_scan *s);   /* NULL-safe */

#endif
