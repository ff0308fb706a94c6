/* samples.h -- every timing sample of a benchmark step, stored compactly in run.json.
 *
 * A program prints its timing samples as timing.samples_us (a JSON array,
 * docs/result-contract.md). When the step is recorded, samples_pack_timing
 * replaces that array with timing.samples:
 *   {"encoding": "ns-delta-zigzag-varint/zlib/base64", "n": N, "data": "..."}
 * each sample rounded to a whole nanosecond (the harness prints 3 decimals of
 * a microsecond: nothing is lost), in the order taken; the differences from
 * the previous sample as zigzag varints, deflated by zlib, in base64. 10,000
 * samples of a steady kernel take ~15 KB instead of ~90 KB of text, so a
 * record keeps every sample, never a subset.
 * samples_read_timing reads either form (and a listing's lean tree, where
 * samples_us is one block: core/jsonlean.h), and says how many samples the
 * program timed (timing.n, else timing.samples_total) beside how many are
 * stored: records written before 2026-11-28 keep 2,000 of them (evenly spaced
 * across the run by the harness, the first 2,000 by _bench.py and older
 * harnesses), and every verdict on such a record says so. */
#ifndef GPUORCH_SAMPLES_H
#define GPUORCH_SAMPLES_H

#include <cjson/cJSON.h>
#include "core/strbuf.h"

#define SAMPLES_ENCODING "ns-delta-zigzag-varint/zlib/base64"

struct samples {
	double *v;         /* the stored samples in microseconds, in the order taken (malloc'd) */
	int n;             /* how many are stored */
	int total;         /* how many the program timed; n when the record does not say */
	const char *kept;  /* timing.samples_kept when the record says which were kept, else NULL */
};

/* The codec alone (also samples.txt's packed lines, report/samplesline.h):
 * n samples (microseconds) as the encoding's base64 text appended to out
 * (-1: zlib ran out of memory, out unchanged); and back, exactly n samples
 * from NUL-terminated base64 into a new array *v (-1 with err: damaged). */
int samples_pack_b64(const double *v, int n, struct strbuf *out);
int samples_unpack_b64(const char *data, int n, double **v, struct strbuf *err);
/* Whether the codec gives back every one of the n samples as the same double
 * (each a whole nanosecond, |x| < 9e12 us, and -0 is not 0). */
int samples_exact(const double *v, int n);
/* Encode n samples (microseconds) into a new timing.samples object (NULL:
 * zlib ran out of memory). */
cJSON *samples_encode(const double *v, int n);
/* Replace timing.samples_us of a step's result with timing.samples (no-op
 * without such an array; it stays when zlib fails). Non-finite entries are
 * dropped. */
void samples_pack_timing(cJSON *timing);
/* The samples of a timing object (either form). Returns 1 with samples, 0
 * when it has none, -1 when timing.samples cannot be decoded (err says why);
 * out is always initialised. */
int samples_read_timing(const cJSON *timing, struct samples *out, struct strbuf *err);
/* Whether the record holds fewer samples than the program timed. */
int samples_is_subset(const struct samples *s);
void samples_release(struct samples *s);

#endif
