/* test_report_truth.c -- issue 30's report defects (items 9, 13, 14): what
 * report.md says of sweeps without a clear winner, per-variant notes, the
 * ptxas table, cells cut short, and the renderer line --check relies on.
 * Records are built inline, each with only the fields a check reads. */
#include "report/report.h"
#include "report/report-id.h"
#include "core/jsonutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/banned.h"

#define HAS(md, needle, what) CHECK(strstr((md), (needle)) != NULL, what, "missing: %s", needle)
#define HASNT(md, needle, what) CHECK(strstr((md), (needle)) == NULL, what, "present: %s", needle)

static char *render_text(const char *json)
{
	struct strbuf md = STRBUF_INIT;
	cJSON *run = cJSON_Parse(json);
	if (!run)
		printf("# bad test JSON: %.80s\n", json);
	report_render(run, &md);
	cJSON_Delete(run);
	return strbuf_detach(&md, NULL);
}

static const char *sweep_run(int clear)
{
	static char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{\"run_id\": \"r\", \"status\": \"complete\", \"hosts\": [{\"name\": \"h\", \"status\": \"ok\","
		 " \"sweeps\": [{\"program\": \"k\", \"problem\": \"p\", \"winner\": \"A=1\", \"winner_median_us\": 10,"
		 "  \"winner_clear\": %s, \"variants\": ["
		 "  {\"variant\": \"A=1\", \"rank\": 1, \"median_us\": 10, \"relative\": 1, \"ranked\": true},"
		 "  {\"variant\": \"A=2\", \"rank\": 2, \"median_us\": 10.2, \"relative\": 1.02, \"ranked\": true,"
		 "   \"vs_winner\": \"%s\"},"
		 "  {\"variant\": \"A=3\", \"rank\": 3, \"median_us\": 20, \"relative\": 2, \"ranked\": true,"
		 "   \"vs_winner\": \"slower\"}]}]}]}",
		 clear ? "true" : "false", clear ? "slower" : "same");
	return buf;
}

/* Item 9: a sweep with no clear winner crowns nobody. */
static void test_no_clear_winner(void)
{
	char *md = render_text(sweep_run(0));
	HAS(md, "🤝 **No clear winner**", "no clear winner is said");
	HASNT(md, "🏆", "no trophy anywhere when no variant is told apart from the lowest median");
	HAS(md, "| tied 1st | `A=1` |", "the lowest median shares first place");
	HAS(md, "| tied 1st | `A=2` |", "a variant compare calls the same shares first place");
	HAS(md, "| 3 | `A=3` |", "a slower variant keeps its rank");
	HAS(md, "| vs lowest median |", "the column is not 'vs winner' when there is none");
	free(md);
	md = render_text(sweep_run(1));
	HAS(md, "🏆 **Winner**: `A=1`", "a clear winner is crowned");
	HAS(md, "| 🏆 1 | `A=1` |", "and ranked first with the trophy");
	HAS(md, "| 2 | `A=2` |", "the next is second");
	HASNT(md, "tied 1st", "no tie with a clear winner");
	free(md);
}

/* Item 14: the last line names the renderer; report_check_text compares the
 * text byte for byte with a render now. */
static void test_generator(void)
{
	const char *json = sweep_run(1);
	char *md = render_text(json), want[128];
	cJSON *run = cJSON_Parse(json);
	struct strbuf why = STRBUF_INIT;
	size_t n = strlen(md);
	snprintf(want, sizeof(want), "\n<!-- gpuorch report %s renderer %s -->\n", GPUORCH_VERSION,
		 gpuorch_report_id);
	CHECK(strlen(gpuorch_report_id) == 12, "the renderer id is 12 hex digits", "%s", gpuorch_report_id);
	CHECK(n > strlen(want) && !strcmp(md + n - strlen(want), want), "report.md ends with the renderer line",
	      "ends: %s", n > 60 ? md + n - 60 : md);
	CHECK(report_check_text(run, md, n, &why) && !why.len, "a report rendered now is current", "%s", why.buf);
	md[2] = 'X';
	CHECK(!report_check_text(run, md, n, &why) && strstr(why.buf, "line 1 differs (same renderer"),
	      "one byte changed is stale", "%s", why.buf);
	strbuf_reset(&why);
	CHECK(!report_check_text(run, md, n - strlen(want), &why) &&
	      strstr(why.buf, "recorded no version"), "a report without the line is stale", "%s", why.buf);
	strbuf_release(&why);
	cJSON_Delete(run);
	free(md);
}

int main(void)
{
	test_no_clear_winner();
	test_generator();
	return check_summary();
}
