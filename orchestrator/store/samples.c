/* samples.c -- timing samples stored compactly in run.json, and read back in either form (samples.h). */
#include "store/samples.h"
#include "store/runread.h"
#include "core/jsonlean.h"
#include "core/jsonutil.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include <zlib.h>
#include "core/banned.h"

#define SAMPLES_MAX_N 10000000   /* more than any program times (the harness stops at 100,000) */
#define SAMPLES_NS_LIMIT 9000000000000000LL   /* |ns| of a sample: 9e12 us (samples_exact) */

static void put_varint(unsigned char *buf, size_t *len, uint64_t u)
{
	while (u >= 0x80) {
		buf[(*len)++] = (unsigned char)(u | 0x80);
		u >>= 7;
	}
	buf[(*len)++] = (unsigned char)u;
}

int samples_pack_b64(const double *v, int n, struct strbuf *out)
{
	unsigned char *raw = xmalloc((size_t)n * 10 + 1), *z, *b64;
	size_t len = 0;
	uLongf zlen;
	int64_t prev = 0;
	int i, blen;

	for (i = 0; i < n; i++) {
		int64_t ns = (int64_t)llround(v[i] * 1000.0), d = ns - prev;
		put_varint(raw, &len, d >= 0 ? (uint64_t)d << 1 : ((uint64_t)(-(d + 1)) << 1) | 1);
		prev = ns;
	}
	zlen = compressBound((uLong)len);
	z = xmalloc(zlen);
	if (compress2(z, &zlen, raw, (uLong)len, Z_BEST_COMPRESSION) != Z_OK) {
		/* out of memory inside zlib: the caller keeps the plain form */
		free(raw);
		free(z);
		return -1;
	}
	b64 = xmalloc(4 * ((zlen + 2) / 3) + 1);
	blen = EVP_EncodeBlock(b64, z, (int)zlen);
	if (blen >= 0)
		strbuf_add(out, (const char *)b64, (size_t)blen);
	free(raw);
	free(z);
	free(b64);
	return blen >= 0 ? 0 : -1;
}

int samples_exact(const double *v, int n)
{
	int i;
	for (i = 0; i < n; i++) {
		double back;
		/* |ns| below 2^53: a whole number a double holds, deltas an int64 holds */
		if (!isfinite(v[i]) || fabs(v[i]) >= (double)SAMPLES_NS_LIMIT / 1000.0)
			return 0;
		back = (double)llround(v[i] * 1000.0) / 1000.0;
		if (back != v[i] || signbit(back) != signbit(v[i]))
			return 0;
	}
	return 1;
}

cJSON *samples_encode(const double *v, int n)
{
	struct strbuf data = STRBUF_INIT;
	cJSON *o;
	if (samples_pack_b64(v, n, &data) < 0) {
		strbuf_release(&data);
		return NULL;
	}
	o = cJSON_CreateObject();
	json_add_str(o, "encoding", SAMPLES_ENCODING);
	json_add_num(o, "n", n);
	json_add_str(o, "data", data.len ? data.buf : "");
	strbuf_release(&data);
	return o;
}

void samples_pack_timing(cJSON *timing)
{
	cJSON *arr = cJSON_IsObject(timing) ? cJSON_GetObjectItemCaseSensitive(timing, "samples_us")
					     : NULL, *x;
	double *v;
	cJSON *packed;
	int n = 0;
	if (!cJSON_IsArray(arr))
		return;
	v = xcalloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof(double));
	cJSON_ArrayForEach(x, arr)
		if (cJSON_IsNumber(x) && isfinite(x->valuedouble))
			v[n++] = x->valuedouble;
	packed = samples_encode(v, n);
	free(v);
	if (!packed)
		return;
	cJSON_DeleteItemFromObjectCaseSensitive(timing, "samples_us");
	cJSON_AddItemToObject(timing, "samples", packed);
}

static int fail(struct strbuf *err, const char *why)
{
	if (err)
		strbuf_addf(err, "timing.samples cannot be read: %s (the record was edited or "
			    "damaged; its step's verdicts have no samples)", why);
	return -1;
}

int samples_unpack_b64(const char *data, int n, double **v, struct strbuf *err)
{
	size_t dlen = strlen(data), k;
	unsigned char *z, *raw;
	uLongf rawlen;
	int zlen, pad = 0, i, shift = 0;
	uint64_t u = 0;
	int64_t prev = 0;

	*v = NULL;
	if (n < 0 || n > SAMPLES_MAX_N)
		return fail(err, "a count of samples out of range");
	if (dlen % 4)
		return fail(err, "the base64 data is not a multiple of 4 characters");
	if (dlen && data[dlen - 1] == '=')
		pad = dlen > 1 && data[dlen - 2] == '=' ? 2 : 1;
	z = xmalloc(dlen / 4 * 3 + 1);
	zlen = EVP_DecodeBlock(z, (const unsigned char *)data, (int)dlen);
	if (zlen < 0) {
		free(z);
		return fail(err, "bad base64");
	}
	zlen -= pad;
	rawlen = (uLongf)n * 10 + 1;
	raw = xmalloc(rawlen);
	if (uncompress(raw, &rawlen, z, (uLong)zlen) != Z_OK) {
		free(z);
		free(raw);
		return fail(err, "the zlib stream is damaged or longer than n samples");
	}
	free(z);
	*v = xcalloc((size_t)n + 1, sizeof(double));
	for (k = 0, i = 0; k < rawlen; k++) {
		u |= (uint64_t)(raw[k] & 0x7f) << shift;
		shift += 7;
		if (raw[k] & 0x80) {
			if (shift > 63)
				break;
			continue;
		}
		if (i == n)
			break;
		/* a delta past what the writer makes (|ns| < 9e15: samples_exact)
		 * is damage, never a sample: stop before int64 arithmetic overflows */
		if ((u >> 1) >= (uint64_t)SAMPLES_NS_LIMIT * 2)
			break;
		prev += (u & 1) ? -(int64_t)(u >> 1) - 1 : (int64_t)(u >> 1);
		if (prev >= SAMPLES_NS_LIMIT || prev <= -SAMPLES_NS_LIMIT)
			break;
		(*v)[i++] = (double)prev / 1000.0;
		u = 0;
		shift = 0;
	}
	free(raw);
	if (i != n || k != rawlen) {
		free(*v);
		*v = NULL;
		return fail(err, "the data does not hold exactly n samples");
	}
	return 0;
}

/* timing.samples -> out->v, out->n */
static int decode(const cJSON *o, struct samples *out, struct strbuf *err)
{
	const char *data = rr_str(o, "data");
	double dn;

	if (!rr_streq(rr_str(o, "encoding"), SAMPLES_ENCODING))
		return fail(err, "unknown encoding (this gpuorch reads \"" SAMPLES_ENCODING "\")");
	if (!rr_num(o, "n", &dn) || dn < 0 || dn > SAMPLES_MAX_N || dn != floor(dn) || !data)
		return fail(err, "no count \"n\" or no \"data\"");
	if (samples_unpack_b64(data, (int)dn, &out->v, err) < 0)
		return -1;
	out->n = (int)dn;
	return 0;
}

int samples_read_timing(const cJSON *timing, struct samples *out, struct strbuf *err)
{
	const cJSON *packed = rr_obj(timing, "samples"), *arr = rr_arr(timing, "samples_us"), *x;
	const cJSON *block = cJSON_IsObject(timing) ?
			     cJSON_GetObjectItemCaseSensitive(timing, "samples_us") : NULL;
	double total;
	memset(out, 0, sizeof(*out));
	if (packed) {
		if (decode(packed, out, err) < 0)
			return -1;
	} else if (cJSON_IsRaw(block)) {
		/* a listing's lean tree (store_load_record_lean): the array as one block */
		int i, n;
		double *v = json_lean_numbers(block, &n);
		for (i = 0; i < n; i++)
			if (isfinite(v[i]))
				v[out->n++] = v[i];
		out->v = v;
	} else if (arr && cJSON_GetArraySize(arr) > 0) {
		out->v = xcalloc((size_t)cJSON_GetArraySize(arr), sizeof(double));
		cJSON_ArrayForEach(x, arr)
			if (cJSON_IsNumber(x) && isfinite(x->valuedouble))
				out->v[out->n++] = x->valuedouble;
	}
	if (!out->n) {
		free(out->v);
		out->v = NULL;
		return 0;
	}
	out->total = out->n;
	/* how many the program timed: its own count, when it is one the samples fit */
	if ((rr_num(timing, "n", &total) || rr_num(timing, "samples_total", &total)) &&
	    total > out->n && total <= SAMPLES_MAX_N)
		out->total = (int)total;
	out->kept = rr_str(timing, "samples_kept");
	return 1;
}

int samples_is_subset(const struct samples *s)
{
	return s->total > s->n;
}

void samples_release(struct samples *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}
