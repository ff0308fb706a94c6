/* figures.h -- figures read from a program's own output (docs/byo.md): a
 * number captured by a regular expression from a line of its stdout, or
 * found at a dotted path in the JSON object on its last line. */
#ifndef GPUORCH_FIGURES_H
#define GPUORCH_FIGURES_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "core/strbuf.h"

struct figure_rule {
	const char *name;
	const char *regex;   /* POSIX ERE; group 1 is the number; the last matching line wins */
	const char *json;    /* or a dotted path into the last line's JSON object */
	const char *unit;    /* may be NULL */
	const char *better;  /* "higher" | "lower" | NULL */
};

/* Read every rule's figure from len bytes of output. Returns a new object
 * NAME -> {"value", "unit", "better", "source": "regex"|"json", "line": the
 * matched line (at most 200 bytes)}. A figure not found is left out and
 * named in missing ("'gflops': no line matches /GFLOPS: ([0-9.]+)/; ..."). */
cJSON *figures_read(const struct figure_rule *rules, int n, const char *out, size_t len,
		    struct strbuf *missing);

#endif
