/* test_jsonlean.c -- unit tests for core/jsonlean.c and the lean load of a run record:
 * the lean tree is cJSON's tree (each samples_us block the same numbers), the summary and
 * samples.txt built from it are byte for byte those of the full parse, every text the two
 * parsers could read differently falls back to cJSON, and a cut run.json is an error naming
 * the file. */
#include "core/jsonlean.h"
#include "core/strbuf.h"
#include "core/fsutil.h"
#include "core/jsonutil.h"
#include "report/runsum.h"
#include "store/samples.h"
#include "store/store.h"
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* one host; samples 0 / 1 / all equal / tied; non-ASCII and escaped strings */
static const char run_text[] =
	"{\"run_id\":\"20260101-000000-aaaaaa\",\"started_at\":\"2026-01-01T00:00:00Z\","
	"\"status\":\"complete\",\"outcome\":\"passed\",\"exit_code\":0,\"dry_run\":false,"
	"\"experiment\":{\"name\":\"na\\u00efve \\\"x\\\" \\/ \\\\ \\t\\n\",\"slug\":\"x\","
	" \"spec\":{\"headline\":{\"program\":\"p\"}}},"
	"\"provenance\":{\"git\":{\"commit\":\"abc\",\"dirty\":null},\"source\":\"H100 – naïve € \\u20ac\\u0000cut\"},"
	"\"hosts\":[{\"name\":\"h\",\"status\":\"ok\",\"info\":{\"gpu_name\":\"NVIDIA H100 \\u00b5\","
	" \"max_sm_clock_mhz\":1980,\"nvcc\":{\"version\":\"12.4\"}},\"steps\":["
	"{\"id\":\"b.none\",\"kind\":\"benchmark\",\"program\":\"p\",\"problem\":\"none\",\"status\":\"PASS\","
	" \"result\":{\"status\":\"pass\",\"timing\":{\"median_us\":1,\"samples_us\":[]}}},"
	"{\"id\":\"b.one\",\"kind\":\"benchmark\",\"program\":\"p\",\"problem\":\"one\",\"status\":\"PASS\","
	" \"result\":{\"status\":\"pass\",\"timing\":{\"median_us\":5,\"n\":3,\"samples_us\":[ 5.25 ]}}},"
	"{\"id\":\"b.equal\",\"kind\":\"benchmark\",\"program\":\"p\",\"problem\":\"equal\",\"status\":\"PASS\","
	" \"result\":{\"status\":\"pass\",\"timing\":{\"median_us\":2,\"samples_us\":[2,2,2,2,2,2,2,2,2,2]}}},"
	"{\"id\":\"b.ties\",\"kind\":\"benchmark\",\"program\":\"p\",\"problem\":\"ties\",\"status\":\"PASS\","
	" \"result\":{\"status\":\"pass\",\"timing\":{\"median_us\":2,\"p90_us\":3.0e0,"
	"  \"samples_us\":[3,1,\n2,2,0.1,3,2,1,2,243.552,2,1e-3,-0,12345678901234567,1E400]},"
	"  \"model\":{\"tflops\":70.8,\"impossible\":false}}},"
	"{\"id\":\"c\",\"kind\":\"correctness\",\"program\":\"p\",\"problem\":\"ties\",\"status\":\"FAIL\","
	" \"result\":{\"status\":\"fail\",\"samples_us\":[1,2],\"figures\":{\"gbps\":{\"value\":1.5}}}}"
	"]}]}";

/* a and b the same tree, a block of b standing for a's array of the same numbers */
static int same_tree(const cJSON *a, const cJSON *b)
{
	const cJSON *x, *y;
	if (cJSON_IsRaw(b) && cJSON_IsArray(a)) {
		int n, i = 0, ok;
		double *v = json_lean_numbers(b, &n);
		ok = v && n == cJSON_GetArraySize(a);
		cJSON_ArrayForEach(x, a)
			ok = ok && cJSON_IsNumber(x) && (x->valuedouble == v[i] ||
				   (isnan(x->valuedouble) && isnan(v[i]))) &&
			     signbit(x->valuedouble) == signbit(v[i]), i++;
		free(v);
		return ok;
	}
	if (a->type != b->type || !a->string != !b->string ||
	    (a->string && strcmp(a->string, b->string)))
		return 0;
	if (cJSON_IsString(a))
		return !strcmp(a->valuestring, b->valuestring);
	if (cJSON_IsNumber(a))
		return a->valuedouble == b->valuedouble && a->valueint == b->valueint &&
		       signbit(a->valuedouble) == signbit(b->valuedouble);
	for (x = a->child, y = b->child; x && y; x = x->next, y = y->next)
		if (!same_tree(x, y))
			return 0;
	return !x && !y;
}

/* text parsed both ways gives the same tree, summary and samples.txt; blocks: how many */
static int same_summary(const char *text, size_t len, int *blocks, char *why, size_t wl)
{
	struct strbuf err = STRBUF_INIT, sa = STRBUF_INIT, sb = STRBUF_INIT;
	struct json_lean lean;
	cJSON *full = NULL, *a = NULL, *b = NULL, *ma = NULL, *mb = NULL;
	char *pa = NULL, *pb = NULL, *qa = NULL, *qb = NULL;
	int ok = 0;

	snprintf(why, wl, "%s", "parse");
	if (json_parse_unquoted(text, len, "t", &full, &err) != GO_OK ||
	    !json_lean_parse(text, len, "samples_us", "timing", &lean))
		goto out;
	*blocks = lean.nblocks;
	json_lean_open(&lean);
	a = runsum_build(full, &sa);
	b = runsum_build(lean.tree, &sb);
	ma = runsum_build(full, NULL);
	mb = runsum_build(lean.tree, NULL);
	json_lean_close();
	pa = cJSON_Print(a), pb = cJSON_Print(b), qa = cJSON_Print(ma), qb = cJSON_Print(mb);
	ok = same_tree(full, lean.tree) && !strcmp(pa, pb) && !strcmp(qa, qb) &&
	     sa.len == sb.len && !memcmp(sa.buf, sb.buf, sa.len);
	snprintf(why, wl, "tree %d summary %d in-memory %d samples.txt %d",
		 same_tree(full, lean.tree), !strcmp(pa, pb), !strcmp(qa, qb),
		 sa.len == sb.len && !memcmp(sa.buf, sb.buf, sa.len));
	json_lean_release(&lean);
out:
	free(pa), free(pb), free(qa), free(qb);
	cJSON_Delete(a), cJSON_Delete(b), cJSON_Delete(ma), cJSON_Delete(mb), cJSON_Delete(full);
	strbuf_release(&err), strbuf_release(&sa), strbuf_release(&sb);
	return ok;
}

/* json_lean_parse leaves text to cJSON (0, nothing kept) */
static int falls_back(const char *text)
{
	struct json_lean l;
	int r = json_lean_parse(text, strlen(text), "samples_us", "timing", &l);
	int empty = !l.tree && !l.blocks;
	json_lean_release(&l);
	return !r && empty;
}

static int committed(const char *path, int *blocks, char *why, size_t wl)
{
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	int ok = fs_read_file(path, &text, &err) == GO_OK &&
		 same_summary(text.buf, text.len, blocks, why, wl);
	strbuf_release(&text);
	strbuf_release(&err);
	return ok;
}

/* nesting: depth containers, innermost {} */
static char *nested(int depth)
{
	struct strbuf sb = STRBUF_INIT;
	int i;
	for (i = 0; i < depth - 1; i++)
		strbuf_addstr(&sb, "[");
	strbuf_addstr(&sb, "{}");
	for (i = 0; i < depth - 1; i++)
		strbuf_addstr(&sb, "]");
	return strbuf_detach(&sb, NULL);
}

static void numbers(void)
{
	static const char *const texts[] = {
		"0", "-0", "1", "243.552", "0.001", "1e-3", "123456789012345", "1234567890123456",
		"12345678901234567890", "0.1", "0.30000000000000004", "999999999.999", "-1.5",
		"1E400", "-1e-400", "2.5e+3", "17179869184", "0.000000000000001", "5e-324",
		"9007199254740993", "1.7976931348623157e308", "-0.000"
	};
	char buf[64], bad[200] = "";
	unsigned long long r = 88172645463325252ull;
	int i, ok = 1;
	for (i = 0; i < (int)(sizeof(texts) / sizeof(texts[0])) && ok; i++) {
		double v, w = strtod(texts[i], NULL);
		ok = json_lean_number(texts[i], strlen(texts[i]), &v) &&
		     memcmp(&v, &w, sizeof(v)) == 0;
		if (!ok)
			snprintf(bad, sizeof(bad), "%s: %.17g, strtod %.17g", texts[i], v, w);
	}
	for (i = 0; i < 300000 && ok; i++) {
		double v, w;
		int len;
		r ^= r << 13, r ^= r >> 7, r ^= r << 17;
		/* whole ns in us, up to 15 and 16 digits, and up to 6 decimals */
		if (i % 3 == 0)
			len = snprintf(buf, sizeof(buf), "%llu.%03llu", (r >> 20) % 1000000000000ull,
				       r % 1000);
		else if (i % 3 == 1)
			len = snprintf(buf, sizeof(buf), "-%llu.%06llu", r % 100000000000ull,
				       (r >> 30) % 1000000);
		else
			len = snprintf(buf, sizeof(buf), "%llu", r % 10000000000000000ull);
		w = strtod(buf, NULL);
		ok = json_lean_number(buf, (size_t)len, &v) && memcmp(&v, &w, sizeof(v)) == 0;
		if (!ok)
			snprintf(bad, sizeof(bad), "%s: %.17g, strtod %.17g", buf, v, w);
	}
	CHECK(ok, "json_lean_number: strtod's double for edges and 300,000 decimals", "%s", bad);
	memset(buf, '1', 64);
	CHECK(!json_lean_number(buf, 64, &(double){ 0 }) && json_lean_number(buf, 63, &(double){ 0 }),
	      "json_lean_number: 63 characters read (cJSON's limit), 64 not", "%s", "differ");
}

static void fallbacks(void)
{
	char *deep = nested(1000), *deeper = nested(1001), why[128];
	int blocks = -1;
	CHECK(falls_back("{\"a\":[1,2"), "cut text: left to cJSON", "%s", "parsed");
	CHECK(falls_back(""), "empty text: left to cJSON", "%s", "parsed");
	CHECK(falls_back("{\"a\":1} x"), "text after the value: left to cJSON", "%s", "parsed");
	CHECK(falls_back("\xef\xbb\xbf{\"a\":1}"), "a UTF-8 byte order mark: left to cJSON", "%s",
	      "parsed");
	CHECK(falls_back("{\"a\":\"\\ud83d\\ude00\"}") && falls_back("{\"a\":\"\\uDC00\"}") &&
	      falls_back("{\"\\ud800\":1}"),
	      "surrogate escapes (pair, lone low, in a key): left to cJSON", "%s", "parsed");
	CHECK(falls_back("{\"a\":\"\xff\xfe\"}"), "invalid UTF-8: left to cJSON", "%s", "parsed");
	CHECK(falls_back("{\"a\":1234567890123456789012345678901234567890123456789012345678901234}"),
	      "a number over 63 characters: left to cJSON", "%s", "parsed");
	CHECK(falls_back("{\"timing\":{\"samples_us\":[1,\"x\"]}}") &&
	      falls_back("{\"timing\":{\"samples_us\":[1,[2]]}}") &&
	      falls_back("{\"timing\":{\"samples_us\":[null]}}"),
	      "a block with a string, an array, a null: left to cJSON", "%s", "parsed");
	{
		/* 998 objects, then timing and its block: 1,000 open, one more than
		 * cJSON's limit counting the block's array: left to cJSON (which fails) */
		struct strbuf t = STRBUF_INIT;
		int d;
		for (d = 0; d < 998; d++)
			strbuf_addstr(&t, "{\"k\":");
		strbuf_addstr(&t, "{\"timing\":{\"samples_us\":[1]}}");
		for (d = 0; d < 998; d++)
			strbuf_addch(&t, '}');
		CHECK(falls_back(t.buf), "a block one level past cJSON's nesting limit: left to cJSON",
		      "%s", "parsed");
		strbuf_release(&t);
	}
	CHECK(falls_back("{\"a\":01}") && falls_back("{\"a\":1.}") && falls_back("// c\n{}"),
	      "what yajl refuses (leading zero, bare point, comment): left to cJSON", "%s",
	      "parsed");
	CHECK(!falls_back(deep) && same_summary(deep, strlen(deep), &blocks, why, sizeof(why)),
	      "1,000 nested containers (cJSON's limit): read, the same tree", "%s", why);
	CHECK(falls_back(deeper), "1,001 nested containers: left to cJSON (which refuses them)",
	      "%s", "parsed");
	CHECK(!falls_back("{\"samples_us\":[1,2],\"x\":{\"samples_us\":[\"a\"]},\"timing\":[]}"),
	      "samples_us outside a timing object: an ordinary array", "%s", "fell back");
	CHECK(!falls_back("\"top\"") && !falls_back("[]") && !falls_back(" 1 "),
	      "a string, an array, a number alone: read (the loader refuses them)", "%s",
	      "fell back");
	free(deep);
	free(deeper);
}

static void blocks_read_back(void)
{
	struct json_lean l;
	const char *t = "{\"timing\":{\"samples_us\":[3, 1.5,\n 2]},\"x\":{\"timing\":{\"samples_us\":[]}}}";
	const cJSON *raw;
	cJSON *copy;
	double *v;
	int n = -1;
	char *p;
	CHECK(json_lean_parse(t, strlen(t), "samples_us", "timing", &l) && l.nblocks == 2,
	      "two blocks, the empty one too", "%d", l.nblocks);
	raw = json_path(l.tree, "timing.samples_us");
	CHECK(cJSON_IsRaw(raw) && !strcmp(raw->valuestring, "[3, 1.5,\n 2]"),
	      "a block prints as its text in the file", "%s", raw ? raw->valuestring : "none");
	copy = cJSON_Duplicate(raw, 1);
	v = json_lean_numbers(copy, &n);
	CHECK(n == 3 && v[0] == 3 && v[1] == 1.5 && v[2] == 2,
	      "a copy of a block (no lean tree open): its numbers read from its text", "%d", n);
	free(v);
	json_lean_open(&l);
	v = json_lean_numbers(raw, &n);
	CHECK(n == 3 && v[1] == 1.5, "an open tree's block: its numbers", "%d", n);
	free(v);
	v = json_lean_numbers(json_path(l.tree, "x.timing.samples_us"), &n);
	CHECK(v && n == 0, "an empty block: no numbers", "%d", n);
	free(v);
	json_lean_close();
	p = cJSON_PrintUnformatted(l.tree);
	CHECK(!strcmp(p, "{\"timing\":{\"samples_us\":[3, 1.5,\n 2]},\"x\":{\"timing\":{\"samples_us\":[]}}}"),
	      "the lean tree prints as JSON", "%s", p);
	free(p);
	cJSON_Delete(copy);
	json_lean_release(&l);
}

static void cut_record(void)
{
	char tmpl[] = "/tmp/test_jsonlean.XXXXXX", *dir = mkdtemp(tmpl), *rj;
	struct strbuf err = STRBUF_INIT;
	struct store_record_file of;
	struct json_lean l;
	enum go_status st;
	if (!dir)
		return;
	rj = xstrfmt("%s/run.json", dir);
	fs_write_derived(rj, run_text, 200, &err);
	st = store_load_record_lean(dir, &l, &of, &err);
	CHECK(st != GO_OK && !l.tree && strstr(err.buf, rj) && strstr(err.buf, "invalid JSON"),
	      "a cut run.json: an error naming the file, no tree", "%s", err.buf);
	strbuf_reset(&err);
	fs_write_derived(rj, "[1]", 3, &err);
	st = store_load_record_lean(dir, &l, &of, &err);
	CHECK(st != GO_OK && !l.tree && strstr(err.buf, "not a JSON object"),
	      "an array for a record: refused", "%s", err.buf);
	strbuf_reset(&err);
	fs_write_derived(rj, run_text, strlen(run_text), &err);
	st = store_load_record_lean(dir, &l, &of, &err);
	CHECK(st == GO_OK && l.tree && l.nblocks == 4 && of.size == (double)strlen(run_text),
	      "a whole record: its tree, four blocks, its size", "%d", l.nblocks);
	json_lean_release(&l);
	unlink(rj);
	rmdir(dir);
	free(rj);
	strbuf_release(&err);
}

int main(void)
{
	char why[128] = "";
	int blocks = -1;
	CHECK(same_summary(run_text, strlen(run_text), &blocks, why, sizeof(why)) && blocks == 4,
	      "0 / 1 / equal / tied samples, escapes, non-ASCII: the same tree, summary, samples.txt",
	      "%s, %d blocks", why, blocks);
	blocks = -1;
	CHECK(committed("tests/fixtures/reports/attention-tools/20261122-080919-e482d1/run.json",
			&blocks, why,
			sizeof(why)) && blocks == 13,
	      "a committed record with 13 samples_us arrays: the same summary", "%s, %d",
	      why, blocks);
	blocks = -1;
	CHECK(committed("tests/fixtures/records/packed-samples.run.json", &blocks, why,
			sizeof(why)) && blocks == 0,
	      "a committed record with packed samples: the same summary, no block", "%s, %d", why,
	      blocks);
	numbers();
	fallbacks();
	blocks_read_back();
	cut_record();
	return check_summary();
}
