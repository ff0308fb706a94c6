/* test_samples.c -- unit tests of store/samples.c: packing every timing sample into run.json and reading either form. */
#include "store/samples.h"
#include "core/jsonutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/banned.h"

int main(void)
{
	enum { N = 10000 };
	double *v = calloc(N, sizeof(double));
	struct samples s;
	struct strbuf err = STRBUF_INIT;
	cJSON *t, *arr, *packed;
	char *text;
	int i, same = 1, rc;

	/* 10,000 samples with 3 decimals, a drift and a long tail, as a kernel gives */
	for (i = 0; i < N; i++)
		v[i] = floor((50.0 + 0.0001 * i + (i % 97 == 0 ? 30.0 : 0.0) + 0.37 * ((i * 7919) % 13)) *
			     1000.0 + 0.5) / 1000.0;
	v[5] = 0.001;     /* the smallest step */
	v[6] = 123456.789;
	t = cJSON_CreateObject();
	cJSON_AddNumberToObject(t, "n", N);
	arr = cJSON_AddArrayToObject(t, "samples_us");
	for (i = 0; i < N; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateNumber(v[i]));
	samples_pack_timing(t);
	packed = cJSON_GetObjectItem(t, "samples");
	text = cJSON_PrintUnformatted(t);
	CHECK(!cJSON_GetObjectItem(t, "samples_us") && packed &&
	      !strcmp(cJSON_GetObjectItem(packed, "encoding")->valuestring, SAMPLES_ENCODING) &&
	      cJSON_GetObjectItem(packed, "n")->valuedouble == N,
	      "samples_us is replaced by the packed samples", "%.80s", text);
	CHECK(strlen(text) < 40000, "10,000 samples take under 40 KB of run.json", "%zu bytes",
	      strlen(text));
	free(text);
	rc = samples_read_timing(t, &s, &err);
	for (i = 0; rc == 1 && i < N && i < s.n; i++)
		same &= fabs(s.v[i] - v[i]) < 1e-9;
	CHECK(rc == 1 && s.n == N && s.total == N && same && !samples_is_subset(&s),
	      "every sample reads back, in order, to the nanosecond", "rc=%d n=%d err=%s", rc, s.n, err.buf);
	samples_release(&s);

	/* damaged: a changed character, a wrong count */
	{
		cJSON *d = cJSON_Duplicate(t, 1), *p = cJSON_GetObjectItem(d, "samples");
		char *data = xstrdup(cJSON_GetObjectItem(p, "data")->valuestring);
		data[10] = data[10] == 'A' ? 'B' : 'A';
		cJSON_ReplaceItemInObject(p, "data", cJSON_CreateString(data));
		strbuf_reset(&err);
		CHECK(samples_read_timing(d, &s, &err) == -1 && s.n == 0 && !s.v &&
		      strstr(err.buf, "timing.samples cannot be read"),
		      "damaged data is an error, never other samples", "'%s'", err.buf);
		free(data);
		cJSON_Delete(d);
		d = cJSON_Duplicate(t, 1);
		p = cJSON_GetObjectItem(d, "samples");
		cJSON_ReplaceItemInObject(p, "n", cJSON_CreateNumber(N - 1));
		strbuf_reset(&err);
		CHECK(samples_read_timing(d, &s, &err) == -1 && strstr(err.buf, "exactly n samples"),
		      "a count that is not the data's is an error", "'%s'", err.buf);
		cJSON_ReplaceItemInObject(p, "encoding", cJSON_CreateString("float32"));
		strbuf_reset(&err);
		CHECK(samples_read_timing(d, &s, &err) == -1 && strstr(err.buf, "unknown encoding"),
		      "an unknown encoding is an error", "'%s'", err.buf);
		cJSON_Delete(d);
	}
	cJSON_Delete(t);

	/* an old record: 3 of 9876 samples, plain */
	t = cJSON_Parse("{\"n\": 9876, \"samples_total\": 9876, \"samples_us\": [1.5, \"x\", 2.5, 3.5]}");
	CHECK(samples_read_timing(t, &s, NULL) == 1 && s.n == 3 && s.total == 9876 &&
	      samples_is_subset(&s) && s.v[1] == 2.5 && !s.kept,
	      "an old record's samples_us: a subset of the n the program timed", "n=%d total=%d", s.n,
	      s.total);
	samples_release(&s);
	cJSON_Delete(t);
	t = cJSON_Parse("{\"samples_total\": 2, \"samples_kept\": \"all\", \"samples_us\": [1, 2, 3]}");
	CHECK(samples_read_timing(t, &s, NULL) == 1 && s.n == 3 && s.total == 3 &&
	      !samples_is_subset(&s) && !strcmp(s.kept, "all"),
	      "a count below the samples stored is not believed", "total=%d", s.total);
	samples_release(&s);
	cJSON_Delete(t);
	t = cJSON_Parse("{\"n\": 5}");
	CHECK(samples_read_timing(t, &s, NULL) == 0 && s.n == 0 && !s.v, "no samples: 0", "n=%d", s.n);
	cJSON_Delete(t);
	/* the empty set packs and reads as none */
	t = cJSON_Parse("{\"samples_us\": []}");
	samples_pack_timing(t);
	CHECK(cJSON_GetObjectItem(t, "samples") && samples_read_timing(t, &s, NULL) == 0,
	      "no samples pack to an empty set", "%d", s.n);
	cJSON_Delete(t);
	free(v);
	strbuf_release(&err);
	return check_summary();
}
