/* test_runsum.c -- unit tests for runsum.c's samples.txt: each line ascending, read back
 * as the same doubles, and the same comparison as the samples in the order taken. */
#include "report/runsum.h"
#include "core/fsutil.h"
#include "core/jsonutil.h"
#include "core/stats.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* a run of one host whose benchmark steps have these samples_us arrays */
static const char run_text[] =
	"{\"run_id\":\"20260101-000000-aaaaaa\",\"started_at\":\"2026-01-01T00:00:00Z\","
	"\"status\":\"complete\",\"outcome\":\"passed\",\"experiment\":{\"name\":\"x\",\"slug\":\"x\"},"
	"\"hosts\":[{\"name\":\"h\",\"status\":\"ok\",\"steps\":["
	"{\"id\":\"b.none\",\"kind\":\"benchmark\",\"program\":\"p\",\"problem\":\"none\",\"status\":\"PASS\","
	" \"result\":{\"status\":\"pass\",\"timing\":{\"median_us\":1,\"samples_us\":[]}}},"
	"{\"id\":\"b.one\",\"kind\":\"benchmark\",\"program\":\"p\",\"problem\":\"one\",\"status\":\"PASS\","
	" \"result\":{\"status\":\"pass\",\"timing\":{\"median_us\":5,\"samples_us\":[5.25]}}},"
	"{\"id\":\"b.equal\",\"kind\":\"benchmark\",\"program\":\"p\",\"problem\":\"equal\",\"status\":\"PASS\","
	" \"result\":{\"status\":\"pass\",\"timing\":{\"median_us\":2,\"samples_us\":[2,2,2,2,2,2,2,2,2,2]}}},"
	"{\"id\":\"b.ties\",\"kind\":\"benchmark\",\"program\":\"p\",\"problem\":\"ties\",\"status\":\"PASS\","
	" \"result\":{\"status\":\"pass\",\"timing\":{\"median_us\":2,"
	"  \"samples_us\":[3,1,2,2,0.1,3,2,1,2,243.552,2,1e-3]}}}"
	"]}]}";

/* the samples of step j of the summary, as runsum_read_samples reads them from dir */
static int read_step(const char *dir, const cJSON *sum, int j, double **v, int *n)
{
	const cJSON *s = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(
		cJSON_GetObjectItem(sum, "hosts"), 0), "steps"), j);
	return runsum_read_samples(dir, json_path(s, "result.timing.samples_at"), v, n);
}

static int same_cmp(const double *a, int na, const double *b, int nb, const double *sa,
		    const double *sb)
{
	struct stats_cmp x, y;
	stats_compare(a, na, b, nb, STATS_DEFAULT_ALPHA, STATS_DEFAULT_FACTOR, &x);
	stats_compare(sa, na, sb, nb, STATS_DEFAULT_ALPHA, STATS_DEFAULT_FACTOR, &y);
	return x.verdict == y.verdict && x.ratio == y.ratio && x.median_a == y.median_a &&
	       (x.p == y.p || (x.p != x.p && y.p != y.p));
}

/* strbuf_add_double's text the slow way: the fewest of 15, 16, 17 digits read back */
static void shortest(double x, char *buf, size_t len)
{
	int prec;
	for (prec = 15; prec < 17; prec++) {
		snprintf(buf, len, "%.*g", prec, x);
		if (strtod(buf, NULL) == x)
			return;
	}
	snprintf(buf, len, "%.17g", x);
}

/* every x: strbuf_add_double's text is the slow way's (its fast path for
 * whole thousandths included), and reads back as x */
static int same_text(const double *v, int n, char *bad, size_t len)
{
	struct strbuf sb = STRBUF_INIT;
	char want[40];
	int i, ok = 1;
	for (i = 0; i < n && ok; i++) {
		strbuf_reset(&sb);
		strbuf_add_double(&sb, v[i]);
		shortest(v[i], want, sizeof(want));
		ok = !strcmp(sb.buf, want) && strtod(sb.buf, NULL) == v[i];
		if (!ok)
			snprintf(bad, len, "%.17g: '%s', want '%s'", v[i], sb.buf, want);
	}
	strbuf_release(&sb);
	return ok;
}

/* A run with no timed sample: its summary says samples_size 0, it writes no
 * samples.txt and removes a stale (empty) one, and that summary is current. */
static void no_samples(void)
{
	static const char text[] =
		"{\"run_id\":\"20260101-000000-bbbbbb\",\"started_at\":\"2026-01-01T00:00:00Z\","
		"\"status\":\"complete\",\"outcome\":\"passed\",\"experiment\":{\"name\":\"x\",\"slug\":\"x\"},"
		"\"hosts\":[{\"name\":\"h\",\"status\":\"ok\",\"steps\":["
		"{\"id\":\"c\",\"kind\":\"correctness\",\"program\":\"p\",\"problem\":\"q\",\"status\":\"PASS\"}]}]}";
	char tmpl[] = "/tmp/test_runsum.XXXXXX", *dir = mkdtemp(tmpl), *rj, *sp, *sum;
	struct strbuf err = STRBUF_INIT;
	cJSON *run = NULL, *loaded = NULL;
	struct stat before, after;
	int wrote;
	if (!dir || json_parse(text, strlen(text), "run", &run, &err) != GO_OK)
		return;
	rj = xstrfmt("%s/run.json", dir);
	sp = xstrfmt("%s/samples.txt", dir);
	sum = xstrfmt("%s/summary.json", dir);
	fs_write_derived(rj, text, strlen(text), &err);
	fs_write_derived(sp, "", 0, &err);   /* an empty one, as older gpuorch wrote */
	wrote = runsum_write(dir, run, &err) == GO_OK;
	CHECK(wrote && access(sp, F_OK) < 0 && access(sum, F_OK) == 0,
	      "no timed sample: summary.json written, no samples.txt (the empty one removed)", "%s",
	      err.buf);
	stat(sum, &before);
	CHECK(runsum_load(dir, &loaded, &err) == GO_OK && loaded && stat(sum, &after) == 0 &&
		      before.st_ino == after.st_ino && before.st_mtim.tv_nsec == after.st_mtim.tv_nsec &&
		      before.st_mtime == after.st_mtime && access(sp, F_OK) < 0,
	      "no timed sample: that summary is current without a samples.txt (not rewritten)",
	      "%s", err.buf);
	cJSON_Delete(loaded);
	cJSON_Delete(run);
	unlink(sum);
	unlink(rj);
	rmdir(dir);
	free(rj);
	free(sp);
	free(sum);
	strbuf_release(&err);
}

int main(void)
{
	char tmpl[] = "/tmp/test_runsum.XXXXXX", *dir = mkdtemp(tmpl), *path;
	struct strbuf samples = STRBUF_INIT, err = STRBUF_INIT;
	cJSON *run = NULL, *sum;
	double *v = NULL, *w = NULL;
	int n = 0, m = 0, i, sorted;
	static const double ties[] = { 3, 1, 2, 2, 0.1, 3, 2, 1, 2, 243.552, 2, 1e-3 };
	static const double ties_b[] = { 2, 2, 3, 1, 2, 2, 2, 2, 4, 2, 1, 2 };

	if (!dir || json_parse(run_text, strlen(run_text), "run", &run, &err) != GO_OK) {
		printf("not ok 1 - setup (%s)\n", err.buf);
		return 1;
	}
	sum = runsum_build(run, &samples);
	CHECK(!strcmp(samples.buf, "5.25\n2 2 2 2 2 2 2 2 2 2\n0.001 0.1 1 1 2 2 2 2 2 3 3 243.552\n"),
	      "samples.txt: no line for no samples, one sample, all equal, ties: ascending",
	      "%s", samples.buf);
	path = xstrfmt("%s/samples.txt", dir);
	fs_write_derived(path, samples.buf, samples.len, &err);

	CHECK(!read_step(dir, sum, 0, &v, &n) && n == 0 && !v, "0 samples: none to read", "%d", n);
	{
		/* a damaged samples_at: a length under one byte reads nothing (under
		 * ASan: no read before the buffer), an object of two members is no pair */
		cJSON *half = cJSON_Parse("[0, 0.5]"), *obj = cJSON_Parse("{\"a\": 0, \"b\": 5}");
		CHECK(!runsum_read_samples(dir, half, &v, &n) && n == 0 && !v &&
		      !runsum_read_samples(dir, obj, &v, &n) && n == 0 && !v,
		      "samples_at [0, 0.5] or an object: none read", "%d", n);
		cJSON_Delete(half);
		cJSON_Delete(obj);
	}
	CHECK(read_step(dir, sum, 1, &v, &n) && n == 1 && v[0] == 5.25, "1 sample: read back", "%d", n);
	stats_sort(v, n);
	CHECK(n == 1 && v[0] == 5.25, "1 sample: sorting leaves it", "%g", v[0]);
	free(v);
	CHECK(read_step(dir, sum, 2, &v, &n) && n == 10 && v[0] == 2 && v[9] == 2,
	      "all equal: read back, ten 2s", "%d", n);
	CHECK(read_step(dir, sum, 2, &w, &m) && same_cmp(v, n, w, m, v, w),
	      "all equal against all equal: the same comparison", "%d", m);
	free(v);
	free(w);
	CHECK(read_step(dir, sum, 3, &v, &n) && n == 12, "ties: twelve read back", "%d", n);
	for (sorted = 1, i = 1; i < n; i++)
		sorted &= v[i - 1] <= v[i];
	CHECK(sorted && v[0] == 1e-3 && v[11] == 243.552, "ties: read back ascending, the same doubles",
	      "%g..%g", v[0], v[n - 1]);
	{
		double sb[12];
		memcpy(sb, ties_b, sizeof(sb));
		stats_sort(sb, 12);
		CHECK(same_cmp(ties, 12, ties_b, 12, v, sb) && same_cmp(ties_b, 12, ties, 12, sb, v),
		      "ties: the stored order and the sorted line give the same verdict, ratio and p",
		      "%s", "differ");
		CHECK(stats_quantile(ties, 12, 0.1) == stats_quantile(v, 12, 0.1) &&
		      stats_quantile(ties, 12, 0.9) == stats_quantile(v, 12, 0.9),
		      "ties: the same 10th and 90th percentiles", "%s", "differ");
	}
	free(v);
	{
		static const double edge[] = { 0.001, 0.0005, 0.0015, 1e-4, 0, 1, 1.5, 2.25, 243.552, 1e9,
					       999999999.999, 1e9 + 0.001, 1.0 / 3, 0.1 + 0.2, 12345.678,
					       1e15, 123456789012.345, -1.5, -0.001, 880.608, 5e-324 };
		static double many[200000];
		char bad[160] = "";
		unsigned long long r = 88172645463325252ull;
		int k;
		for (k = 0; k < 200000; k++) {
			r ^= r << 13, r ^= r >> 7, r ^= r << 17;
			/* whole nanoseconds up to ~1e12 ns, and as many doubles that are not */
			many[k] = k % 2 ? (double)(r % 1000000000000ull) / 1000.0
					: (double)(r >> 11) / (double)(1ull << 53) * 1e6;
		}
		CHECK(same_text(edge, (int)(sizeof(edge) / sizeof(edge[0])), bad, sizeof(bad)),
		      "strbuf_add_double: edges of the whole-thousandths path give the shortest text", "%s",
		      bad);
		CHECK(same_text(many, 200000, bad, sizeof(bad)),
		      "strbuf_add_double: 200,000 samples (whole ns and not) give the shortest text", "%s",
		      bad);
	}
	unlink(path);
	rmdir(dir);
	free(path);
	no_samples();
	cJSON_Delete(sum);
	cJSON_Delete(run);
	strbuf_release(&samples);
	strbuf_release(&err);
	return check_summary();
}
