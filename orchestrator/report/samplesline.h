/* samplesline.h -- one line of samples.txt: a benchmark step's stored samples, ascending.
 *
 * A line is written in the shorter of two forms (docs/run-record.md):
 *   plain   the samples space-separated, each in the fewest digits (15 to 17)
 *           that read back as the same double (strbuf_add_double);
 *   packed  "ns-delta-zigzag-varint/zlib/base64 N DATA": run.json's codec
 *           (store/samples.h) over the ascending samples, whose differences
 *           are mostly 0 or one tick of the event clock: 2,000 samples of a
 *           steady kernel take a few hundred bytes instead of ~16 KB.
 * Packed only when the codec gives back every sample exactly (whole
 * nanoseconds: what the harness prints); else plain. Either form reads back
 * as the very same doubles, ascending. */
#ifndef GPUORCH_SAMPLESLINE_H
#define GPUORCH_SAMPLESLINE_H

#include <stddef.h>
#include "core/strbuf.h"

/* Sort v (n samples, n >= 1) ascending and append its line, '\n' included. */
void samplesline_add(struct strbuf *out, double *v, int n);
/* The samples of one line (NUL-terminated, without its '\n'), in the order
 * written, into a new array *v of *n: 1 when there are any, 0 when the line
 * holds none or cannot be read (an unknown or damaged packed form). */
int samplesline_parse(const char *line, double **v, int *n);

#endif
