/* test_notify.c -- webhook URL checks, the secret-free origin, and the JSON
 * summary built from a run record (notify.c). The POST itself is tested
 * against a real HTTP server on loopback in t2120-run-notify.sh. */
#include "check.h"
#include "core/jsonutil.h"
#include "report/notify.h"

#include <stdlib.h>
#include <string.h>

static void origin_is(const char *url, const char *want)
{
	char *got = notify_url_origin(url);
	CHECK(!strcmp(got, want), url, "got '%s', want '%s'", got, want);
	free(got);
}

static void url_ok(const char *url, int ok)
{
	struct strbuf err = STRBUF_INIT;
	enum go_status st = notify_check_url(url, &err);
	CHECK((st == GO_OK) == ok, ok ? "accepted" : "refused", "'%s': %s", url, err.buf);
	CHECK(ok || (st == GO_ERR_USAGE && err.len > 0), "refusal has a message", "'%s'", url);
	strbuf_release(&err);
}

static const char run_record[] =
	"{\"schema\":\"gpuorch.run/1\",\"run_id\":\"20261122-010203-abcdef\","
	"\"status\":\"complete\",\"outcome\":\"failed\",\"exit_code\":1,"
	"\"started_at\":\"2026-11-22T01:02:03Z\",\"ended_at\":\"2026-11-22T01:03:00Z\","
	"\"experiment\":{\"name\":\"attn\",\"phase\":\"Phase 2\"},"
	"\"provenance\":{\"git\":{\"commit\":\"0123456789abcdef0123456789abcdef01234567\","
	"\"dirty\":true}},"
	"\"hosts\":[{\"name\":\"h100\",\"status\":\"ok\",\"info\":{\"gpu_name\":\"NVIDIA H100\"},"
	"\"steps\":[{\"status\":\"PASS\"},{\"status\":\"FAIL\"},{\"status\":\"SKIPPED\"}],"
	"\"gates\":[{\"name\":\"p50 < 25 us\",\"verdict\":\"FAIL\"},"
	"{\"name\":\"no spills\",\"verdict\":\"PASS\"}]},"
	"{\"name\":\"l4\",\"status\":\"failed\",\"error\":\"connect refused\",\"steps\":[]}]}";

int main(void)
{
	struct strbuf err = STRBUF_INIT;
	cJSON *run = NULL, *body;
	const char *text;

	origin_is("https://hooks.slack.com/services/T0/B0/SECRET", "https://hooks.slack.com");
	origin_is("http://127.0.0.1:8080/hook?token=SECRET", "http://127.0.0.1:8080");
	origin_is("HTTPS://user:SECRET@example.com:8443/x", "HTTPS://example.com:8443");
	origin_is("http://example.com#frag", "http://example.com");
	origin_is("mailto:x", "(not a URL)");

	url_ok("https://hooks.slack.com/services/T0/B0/X", 1);
	url_ok("http://127.0.0.1:9/", 1);
	url_ok("HTTP://example.com", 1);
	url_ok("ftp://example.com/", 0);
	url_ok("example.com/hook", 0);
	url_ok("http://", 0);
	url_ok("http:///path", 0);
	url_ok("http://a b", 0);
	url_ok("http://a\nb", 0);
	url_ok("", 0);

	CHECK(json_parse(run_record, strlen(run_record), "record", &run, &err) == GO_OK,
	      "fixture parses", "%s", err.buf);
	body = notify_payload(run, "reports/attn/20261122-010203-abcdef/report.md");
	text = json_str(body, "text");
	CHECK(text != NULL, "text line", "none");
	if (!text)
		text = "";
	CHECK(strstr(text, "attn run 20261122-010203-abcdef FAILED on 2 hosts (1 failed)"),
	      "text: experiment, run, verdict, hosts", "'%s'", text);
	CHECK(strstr(text, "1 of 3 steps passed, 1 skipped"), "text: steps", "'%s'", text);
	CHECK(strstr(text, "1 of 2 gates passed (failed: h100: p50 < 25 us)"),
	      "text: failed gate named with its host", "'%s'", text);
	CHECK(strstr(text, "commit 0123456789ab (dirty)"), "text: commit", "'%s'", text);
	CHECK(json_num(body, "gates_failed", -1) == 1, "gates_failed", "%g",
	      json_num(body, "gates_failed", -1));
	CHECK(json_num(body, "exit_code", -1) == 1, "exit_code", "%g", json_num(body, "exit_code", -1));
	CHECK(!strcmp(json_str(json_path(body, "hosts.0"), "gpu"), "NVIDIA H100"), "host gpu", "?");
	CHECK(!strcmp(json_str(json_path(body, "hosts.1"), "error"), "connect refused"),
	      "failed host's error", "?");
	CHECK(!strcmp(json_str(body, "schema"), "gpuorch.notify/1"), "schema", "?");
	cJSON_Delete(body);

	/* an interrupted run says so */
	cJSON_ReplaceItemInObject(run, "status", cJSON_CreateString("incomplete"));
	body = notify_payload(run, NULL);
	text = json_str(body, "text");
	if (!text)
		text = "";
	CHECK(strstr(text, "INCOMPLETE") && !strstr(text, "report:"),
	      "incomplete run, no report", "'%s'", text);
	cJSON_Delete(body);
	cJSON_Delete(run);
	strbuf_release(&err);
	return check_summary();
}
