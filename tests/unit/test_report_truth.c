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
	snprintf(want, sizeof(want), "\n<!-- gpuorch report %s renderer %s -->\n", GPUORCH_RELEASE,
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

/* Item 13: two variant builds of one program; the harness kernel hx_k is the
 * same in both (200 registers), the swept kernel is not (64 and 96). */
#define BUILDS \
	"\"builds\": [" \
	"{\"program\": \"k\", \"variant\": \"A=1\", \"arch\": \"sm_90a\", \"status\": \"PASS\", \"build_key\": \"b1\"," \
	" \"resources\": [{\"kernel\": \"_Z4kernILi1EE\", \"demangled\": \"kern<1>\", \"entry\": true, \"registers\": 64," \
	"  \"stack_bytes\": 0, \"spill_store_bytes\": 0, \"spill_load_bytes\": 0, \"barriers\": 1}," \
	" {\"kernel\": \"_Z4hx_k\", \"demangled\": \"hx_k\", \"entry\": true, \"registers\": 200, \"stack_bytes\": 0," \
	"  \"spill_store_bytes\": 0, \"spill_load_bytes\": 0, \"barriers\": 0}]}," \
	"{\"program\": \"k\", \"variant\": \"A=2\", \"arch\": \"sm_90a\", \"status\": \"PASS\", \"build_key\": \"b2\"," \
	" \"resources\": [{\"kernel\": \"_Z4kernILi2EE\", \"demangled\": \"kern<2>\", \"entry\": true, \"registers\": 96," \
	"  \"stack_bytes\": 0, \"spill_store_bytes\": 0, \"spill_load_bytes\": 0, \"barriers\": 1}," \
	" {\"kernel\": \"_Z4hx_k\", \"demangled\": \"hx_k\", \"entry\": true, \"registers\": 200, \"stack_bytes\": 0," \
	"  \"spill_store_bytes\": 0, \"spill_load_bytes\": 0, \"barriers\": 0}]}]"

#define SWEEP_STEP(v, mode, extra) \
	"{\"id\": \"sweep.k[" v "].p." mode "\", \"kind\": \"sweep\", \"program\": \"k\", \"problem\": \"p\"," \
	" \"variant\": \"" v "\", \"arch\": \"sm_90a\", \"mode\": \"" mode "\", \"status\": \"PASS\"," \
	" \"result\": {\"status\": \"pass\", \"config\": {\"smem_bytes\": 230656}" extra "}}"

static void test_variants(void)
{
	char *md = render_text(
		"{\"run_id\": \"r\", \"status\": \"complete\", \"hosts\": [{\"name\": \"h\", \"status\": \"ok\", "
		BUILDS ", \"steps\": ["
		SWEEP_STEP("A=1", "check", "") ","
		SWEEP_STEP("A=1", "bench", ", \"timing\": {\"median_us\": 10, \"stop_rule\": \"time_cap\", \"n\": 5}") ","
		SWEEP_STEP("A=2", "check", "") ","
		SWEEP_STEP("A=2", "bench", ", \"timing\": {\"median_us\": 20, \"stop_rule\": \"cv\", \"dropped_throttled\": 3, \"n\": 5}") ","
		"{\"id\": \"sanitize.k.q\", \"kind\": \"sanitize\", \"program\": \"k\", \"problem\": \"q\", \"tool\": \"memcheck\","
		" \"status\": \"PASS\"}]}]}");
	HAS(md, "- `k` [`A=1`] timing: stopped by `time_cap`", "a time_cap stop names its variant");
	HAS(md, "- `k` [`A=2`] timing: 3 throttled samples dropped", "throttled samples name their variant");
	HAS(md, "- ⚠️ 3 samples dropped for clock throttling on h: `k` [`A=2`] p", "the alert names the variant");
	/* the sweep table: the variant's own kernel, not the harness's 200 registers */
	HAS(md, "| `A=1` | 10.00 | 1.00× | 64 | 0 / 0 | 225.2 KiB dynamic |",
	    "a variant's registers are its own kernel's, with the dynamic shared memory of its result");
	HAS(md, "| `A=2` | 20.00 | 2.00× (insufficient data) | 96 | 0 / 0 | 225.2 KiB dynamic |",
	    "the other variant's own kernel");
	HASNT(md, "| 200 | 0 / 0 | 225", "the harness kernel's registers are not a variant's");
	/* ptxas: one row per distinct kernel and build */
	HAS(md, "| program | kernel | arch | variant | registers | smem (static) |", "the ptxas table has a variant column");
	HAS(md, "| `k` | `hx_k` | sm_90a | every build (2) | 200 |", "a kernel the same in every build is one row");
	HAS(md, "| `k` | `kern<1>` | sm_90a | `A=1` | 64 |", "a swept kernel names its variant");
	HAS(md, "| `k` | `kern<2>` | sm_90a | `A=2` | 96 |", "each variant's kernel");
	CHECK(strstr(md, "`hx_k`") && !strstr(strstr(md, "`hx_k`") + 1, "`hx_k`"),
	      "the harness kernel appears once", "twice");
	/* a problem run only by a sanitize step */
	HAS(md, "No benchmark or correctness step ran for this problem on this host; it was run by 1 sanitize step",
	    "a sanitize-only problem says what ran it");
	HASNT(md, "No step was recorded", "never 'No step was recorded' when a step ran");
	free(md);
}

/* Item 13: a program off the harness has no timing; its rows would be all "—". */
static void test_no_dash_tables(void)
{
	char *md = render_text(
		"{\"run_id\": \"r\", \"status\": \"complete\", \"hosts\": [{\"name\": \"h\", \"status\": \"ok\", \"steps\": ["
		"{\"id\": \"benchmark.b.p\", \"kind\": \"benchmark\", \"program\": \"b\", \"problem\": \"p\", \"status\": \"PASS\","
		" \"result\": {\"status\": \"pass\", \"correctness\": {\"pass\": true, \"verdict\": \"the program's exit status (0 = pass)\"},"
		" \"gflops\": 5, \"figures\": {\"gflops\": {\"value\": 5}}}}]}]}");
	HASNT(md, "| program | role | status | median (us)", "no benchmark table of only dashes");
	HASNT(md, "| program | checked by | status | max_abs", "no correctness table of only dashes");
	HAS(md, "- `b` benchmark ✅ PASS (✅ pass: the program's exit status (0 = pass)): no timing in its result; "
		"its figures are under \"Figures from the programs' output\"", "one line says what the step did");
	free(md);
}

/* Item 13: a name cut at 240 characters is cut visibly, with a key that
 * tells two such names apart. */
static void test_cut_names(void)
{
	char a[400], b[400], run[2048];
	char *md;
	const char *p, *q;
	memset(a, 'x', 300);
	a[300] = '\0';
	memcpy(b, a, 301);
	a[299] = '1';
	b[299] = '2';
	snprintf(run, sizeof(run), "{\"run_id\": \"r\", \"status\": \"complete\", \"hosts\": [{\"name\": \"h\", \"status\": \"ok\","
		 " \"builds\": [{\"program\": \"k\", \"arch\": \"sm_90a\", \"status\": \"PASS\", \"resources\": ["
		 "{\"kernel\": \"%s\", \"entry\": true, \"registers\": 1}, {\"kernel\": \"%s\", \"entry\": true, \"registers\": 2}]}]}]}",
		 a, b);
	md = render_text(run);
	p = strstr(md, "xxxxxxxxxx…#");
	q = p ? strstr(p + 1, "xxxxxxxxxx…#") : NULL;
	CHECK(p && q, "both long names are cut with an ellipsis and a key", "%s", p ? p : "(none)");
	CHECK(p && q && strncmp(p + strlen("xxxxxxxxxx…#"), q + strlen("xxxxxxxxxx…#"), 8),
	      "two names equal in their first 240 characters get different keys", "same key");
	free(md);
}

int main(void)
{
	test_variants();
	test_no_dash_tables();
	test_cut_names();
	test_no_clear_winner();
	test_generator();
	return check_summary();
}
