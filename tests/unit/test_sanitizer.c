/* test_sanitizer.c -- unit tests of sanitizer.c over real H100 compute-sanitizer
 * output (tests/fixtures/gpu-tools) and documented-format / truncated variants
 * (tests/fixtures/tool-output). */
#include "tools/sanitizer.h"
#include "core/fsutil.h"
#include "core/jsonutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/banned.h"


#define REAL "tests/fixtures/gpu-tools/"
#define DOC "tests/fixtures/tool-output/"

static enum go_status parse(const char *path, const char *tool, cJSON **out, struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT, e = STRBUF_INIT;
	enum go_status st;
	if (fs_read_file(path, &text, &e) != GO_OK)
		printf("# cannot read %s: %s\n", path, e.buf);
	st = sanitizer_parse(text.buf, text.len, tool, out, err);
	strbuf_release(&text);
	strbuf_release(&e);
	return st;
}

static const char *first(const cJSON *o, int i, const char *key)
{
	const char *s = json_str(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "first_errors"), i), key);
	return s ? s : "(null)";
}

static void test_clean(void)
{
	static const char *const files[][2] = {
		{ REAL "memcheck-oob0.txt", "memcheck" }, { REAL "initcheck-clean.txt", "initcheck" },
		{ REAL "synccheck-clean.txt", "synccheck" }, { REAL "racecheck-race0.txt", "racecheck" },
	};
	size_t i;
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct strbuf err = STRBUF_INIT;
		cJSON *o = NULL;
		char what[200];
		enum go_status st = parse(files[i][0], files[i][1], &o, &err);
		snprintf(what, sizeof(what), "clean %s: 0 errors, no reports", files[i][1]);
		CHECK(st == GO_OK && json_num(o, "errors", -1) == 0 &&
		      cJSON_GetArraySize(cJSON_GetObjectItem(o, "first_errors")) == 0 &&
		      !strcmp(json_str(o, "tool"), files[i][1]),
		      what, "st=%d err=%s", st, err.buf);
		cJSON_Delete(o);
		strbuf_release(&err);
	}
}

static void test_errors(void)
{
	struct strbuf err = STRBUF_INIT, d = STRBUF_INIT;
	cJSON *o = NULL;
	enum go_status st;

	st = parse(REAL "memcheck-oob1.txt", "memcheck", &o, &err);
	CHECK(st == GO_OK && json_num(o, "errors", -1) == 3, "memcheck: the planted OOB write gives 3 errors",
	      "st=%d errors=%g", st, json_num(o, "errors", -1));
	CHECK(!strcmp(first(o, 0, "what"), "Invalid __global__ write of size 4 bytes") &&
	      !strcmp(first(o, 0, "kernel"), "fill_kernel(float *, int)") &&
	      !strcmp(first(o, 0, "location"), "oob.cu:13") &&
	      !strcmp(first(o, 0, "thread"), "(232,0,0)") && !strcmp(first(o, 0, "block"), "(3,0,0)") &&
	      !strcmp(first(o, 0, "address"), "0x7f279e800fa0"),
	      "memcheck: the first error names kernel, source line, thread, block, address",
	      "%s %s %s %s %s", first(o, 0, "kernel"), first(o, 0, "location"), first(o, 0, "thread"),
	      first(o, 0, "block"), first(o, 0, "address"));
	CHECK(!strncmp(first(o, 1, "what"), "Program hit cudaErrorLaunchFailure", 34),
	      "memcheck: the API error after it is a report too", "%s", first(o, 1, "what"));
	sanitizer_describe(o, &d);
	CHECK(strstr(d.buf, "memcheck: 3 errors; first: Invalid __global__ write of size 4 bytes in fill_kernel(float *, int) at oob.cu:13, thread (232,0,0) block (3,0,0)") != NULL,
	      "describe: one line with the first error", "%s", d.buf);
	cJSON_Delete(o);

	st = parse(REAL "racecheck-race1.txt", "racecheck", &o, &err);
	CHECK(st == GO_OK && json_num(o, "errors", -1) == 8193 && json_num(o, "warnings", -1) == 253952 &&
	      json_num(o, "hazards_displayed", -1) == 10,
	      "racecheck: the summary's hazards, errors and warnings", "st=%d %s", st, err.buf);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(o, "first_errors")) == SANITIZER_MAX_REPORTS &&
	      json_num(o, "reports_seen", 0) >= 10,
	      "racecheck: the first reports are kept, capped", "%d",
	      cJSON_GetArraySize(cJSON_GetObjectItem(o, "first_errors")));
	CHECK(!strcmp(first(o, 0, "address"), "0x784") && !strcmp(first(o, 0, "block"), "(8,0,0)") &&
	      !strcmp(first(o, 0, "thread"), "(225,0,0)") &&
	      !strcmp(first(o, 0, "kernel"), "shift_kernel(const float *, float *, int)") &&
	      !strcmp(first(o, 0, "location"), "race.cu:14"),
	      "racecheck: a hazard names the shared address, block, writing thread and line",
	      "%s %s %s %s %s", first(o, 0, "address"), first(o, 0, "block"), first(o, 0, "thread"),
	      first(o, 0, "kernel"), first(o, 0, "location"));
	cJSON_Delete(o);

	st = parse(DOC "initcheck-doc.txt", "initcheck", &o, &err);
	CHECK(st == GO_OK && json_num(o, "errors", -1) == 48 && json_num(o, "not_printed", -1) == 46 &&
	      !strcmp(first(o, 0, "kernel"), "vectorAdd(int*)") &&
	      !strcmp(first(o, 0, "location"), "/home/user/initcheck_demo.cu:8") &&
	      !strcmp(first(o, 1, "address"), "0x7f8cd6000004"),
	      "initcheck (documented older form): count, not printed, kernel and line", "%s %s",
	      first(o, 0, "kernel"), first(o, 0, "location"));
	cJSON_Delete(o);

	st = parse(DOC "synccheck-doc.txt", "synccheck", &o, &err);
	CHECK(st == GO_OK && json_num(o, "errors", -1) == 2 &&
	      !strcmp(first(o, 0, "what"), "Barrier error detected. Divergent thread(s) in warp") &&
	      !strcmp(first(o, 0, "thread"), "(37,0,0)") &&
	      !strcmp(first(o, 0, "location"), "/home/user/divergent_threads.cu:12"),
	      "synccheck (documented): barrier errors with thread and line", "%s", first(o, 0, "thread"));
	cJSON_Delete(o);

	st = parse(DOC "racecheck-analysis-doc.txt", "racecheck", &o, &err);
	CHECK(st == GO_OK && json_num(o, "errors", -1) == 1 && json_num(o, "warnings", -1) == 0 &&
	      !strcmp(first(o, 0, "kernel"), "sumKernel(int*, int*)") &&
	      !strcmp(first(o, 0, "location"), "/home/user/raceGroupBasic.cu:13"),
	      "racecheck analysis mode (documented): race between write and read", "%s %s",
	      first(o, 0, "kernel"), first(o, 0, "location"));
	cJSON_Delete(o);
	strbuf_release(&err);
	strbuf_release(&d);
}

static void test_bad(void)
{
	struct strbuf err = STRBUF_INIT, text = STRBUF_INIT;
	cJSON *o = NULL;
	enum go_status st;
	size_t n, passed = 0;

	st = parse(DOC "memcheck-truncated.txt", "memcheck", &o, &err);
	CHECK(st == GO_ERR_REMOTE && strstr(err.buf, "no ERROR SUMMARY") &&
	      cJSON_IsNull(cJSON_GetObjectItem(o, "errors")) &&
	      cJSON_GetArraySize(cJSON_GetObjectItem(o, "first_errors")) >= 1 &&
	      !strcmp(first(o, 0, "location"), "oob.cu:13"),
	      "a log cut short is an error; what was read is kept", "st=%d %s", st, err.buf);
	cJSON_Delete(o);
	st = sanitizer_parse("", 0, "memcheck", &o, &err);
	CHECK(st == GO_ERR_REMOTE && o, "an empty log is an error", "st=%d", st);
	cJSON_Delete(o);
	st = sanitizer_parse("=========", 9, "memcheck", &o, &err);
	CHECK(st == GO_ERR_REMOTE, "a lone prefix is an error", "st=%d", st);
	cJSON_Delete(o);
	st = sanitizer_parse("========= ERROR SUMMARY: lots of errors\n", 40, "memcheck", &o, &err);
	CHECK(st == GO_ERR_REMOTE, "a summary without a count is not a summary", "st=%d", st);
	cJSON_Delete(o);
	fs_read_file(REAL "racecheck-race1.txt", &text, &err);
	for (n = 0; n + 100 < text.len; n += 61) {   /* the summary is the last 80 bytes */
		if (sanitizer_parse(text.buf, n, "racecheck", &o, &err) == GO_OK)
			passed++;
		cJSON_Delete(o);
	}
	CHECK(!passed, "every truncation of a real racecheck log is an error, never a pass", "%zu", passed);
	strbuf_release(&text);
	strbuf_release(&err);
}

int main(void)
{
	test_clean();
	test_errors();
	test_bad();
	return check_summary();
}
