/* notify.c -- POST a finished run's summary to a webhook (notify.h), through transport/http.c. */
#include "report/notify.h"
#include "store/runkeys.h"
#include "core/jsonutil.h"
#include "core/strbuf.h"
#include "core/timeutil.h"
#include "core/vocab.h"
#include "transport/http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include "core/banned.h"

#define NOTIFY_SCHEMA "gpuorch.notify/1"
#define NOTIFY_MAX_FAILED_GATES 10   /* names listed in the text line */

static const char *scheme_end(const char *url)
{
	if (!strncasecmp(url, "http://", 7))
		return url + 7;
	if (!strncasecmp(url, "https://", 8))
		return url + 8;
	return NULL;
}

enum go_status notify_check_url(const char *url, struct strbuf *err)
{
	const char *host, *p;

	if (!url || !*url)
		return go_fail(err, GO_ERR_USAGE, "--notify: empty URL; give an http:// or "
			       "https:// webhook URL");
	for (p = url; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return go_fail(err, GO_ERR_USAGE, "--notify: the URL has a space or a "
				       "control character at offset %d; percent-encode it",
				       (int)(p - url));
	host = scheme_end(url);
	if (!host)
		return go_fail(err, GO_ERR_USAGE, "--notify: the URL must start with http:// or "
			       "https:// (it starts with '%.*s')", (int)strcspn(url, ":/?#@"), url);
	if (!*host || *host == '/' || *host == '?' || *host == '#' || *host == ':')
		return go_fail(err, GO_ERR_USAGE, "--notify: the URL has no host name after "
			       "its scheme");
	return GO_OK;
}

char *notify_url_origin(const char *url)
{
	const char *host = scheme_end(url), *end, *at;
	size_t n;

	if (!host)
		return xstrdup("(not a URL)");
	end = host + strcspn(host, "/?#");
	/* user:password@ is a secret too */
	at = memchr(host, '@', (size_t)(end - host));
	if (at)
		host = at + 1;
	n = (size_t)(scheme_end(url) - url);
	return xstrfmt("%.*s%.*s", (int)n, url, (int)(end - host), host);
}

struct tally {
	int hosts, hosts_failed;
	int steps, steps_pass, steps_skipped;
	int gates, gates_failed;
	struct strbuf failed_gates;   /* "host: gate, ..." for the text line */
};

static void tally_host(struct tally *t, const cJSON *h, cJSON *out_hosts)
{
	const cJSON *s, *g;
	const char *name = json_str(h, "name"), *status = json_str(h, "status");
	const cJSON *info = cJSON_GetObjectItemCaseSensitive(h, "info");
	cJSON *oh = cJSON_CreateObject(), *failed = cJSON_CreateArray();
	int steps = 0, pass = 0, skipped = 0, gates = 0, gfail = 0;

	t->hosts++;
	if (!host_status_is(status, HOST_OK))
		t->hosts_failed++;
	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(h, "steps")) {
		const char *st = json_str(s, "status");
		steps++;
		if (item_status_is(st, ST_PASS))
			pass++;
		else if (item_status_is(st, ST_SKIPPED))
			skipped++;
	}
	cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(h, "gates")) {
		const char *v = json_str(g, "verdict");
		gates++;
		if (gate_verdict_is(v, VERDICT_PASS))
			continue;
		gfail++;
		cJSON_AddItemToArray(failed, cJSON_CreateString(json_str(g, "name") ?
								json_str(g, "name") : "?"));
		if (t->gates_failed + gfail <= NOTIFY_MAX_FAILED_GATES)
			strbuf_addf(&t->failed_gates, "%s%s: %s", t->failed_gates.len ? ", " : "",
				    name ? name : "?", json_str(g, "name") ? json_str(g, "name") : "?");
	}
	t->steps += steps;
	t->steps_pass += pass;
	t->steps_skipped += skipped;
	t->gates += gates;
	t->gates_failed += gfail;

	json_add_str(oh, "name", name);
	json_add_str(oh, "status", status);
	json_add_str(oh, "error", json_str(h, "error"));
	json_add_str(oh, "gpu", info ? json_str(info, "gpu_name") : NULL);
	json_add_num(oh, "steps", steps);
	json_add_num(oh, "steps_passed", pass);
	json_add_num(oh, "steps_skipped", skipped);
	json_add_num(oh, "gates", gates);
	cJSON_AddItemToObject(oh, "gates_failed", failed);
	cJSON_AddItemToArray(out_hosts, oh);
}

static const char *headline(const cJSON *run)
{
	const char *status = json_str(run, "status"), *outcome = json_str(run, RK_OUTCOME);

	if (!run_status_is(status, RUN_COMPLETE))
		return "INCOMPLETE";
	if (!outcome)
		return "?";
	if (run_outcome_is(outcome, OUTCOME_PASSED))
		return run_outcome_name(OUTCOME_PASSED);
	if (run_outcome_is(outcome, OUTCOME_INFRA_ERROR))
		return "FAILED: no host could be used";
	return "FAILED";
}

cJSON *notify_payload(const cJSON *run, const char *report_path)
{
	const cJSON *exp = cJSON_GetObjectItemCaseSensitive(run, "experiment");
	const cJSON *git = json_path(run, "provenance.git");
	const cJSON *h;
	const char *name = exp ? json_str(exp, "name") : NULL;
	const char *commit = git ? json_str(git, "commit") : NULL;
	cJSON *body = cJSON_CreateObject(), *hosts;
	struct tally t;
	struct strbuf text = STRBUF_INIT;

	memset(&t, 0, sizeof(t));
	strbuf_init(&t.failed_gates, 64);
	json_add_str(body, "schema", NOTIFY_SCHEMA);
	hosts = cJSON_CreateArray();
	cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(run, "hosts"))
		tally_host(&t, h, hosts);

	strbuf_addf(&text, "gpuorch: %s run %s %s on %d host%s (%d failed): %d of %d steps "
		    "passed, %d skipped", name ? name : "?", json_str(run, "run_id") ?
		    json_str(run, "run_id") : "?", headline(run), t.hosts, t.hosts == 1 ? "" : "s",
		    t.hosts_failed, t.steps_pass, t.steps, t.steps_skipped);
	if (t.gates)
		strbuf_addf(&text, "; %d of %d gates passed", t.gates - t.gates_failed, t.gates);
	if (t.gates_failed)
		strbuf_addf(&text, " (failed: %s%s)", t.failed_gates.buf,
			    t.gates_failed > NOTIFY_MAX_FAILED_GATES ? ", ..." : "");
	if (commit)
		strbuf_addf(&text, "; commit %.12s%s", commit,
			    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(git, "dirty")) ?
			    " (dirty)" : "");
	if (report_path)
		strbuf_addf(&text, "; report: %s", report_path);

	json_add_str(body, "text", text.buf);
	json_add_str(body, "experiment", name);
	json_add_str(body, "phase", exp ? json_str(exp, "phase") : NULL);
	json_add_str(body, "run_id", json_str(run, "run_id"));
	json_add_str(body, "status", json_str(run, "status"));
	json_add_str(body, "outcome", json_str(run, RK_OUTCOME));
	json_add_num(body, "exit_code", json_num(run, "exit_code", -1));
	json_add_str(body, "started_at", json_str(run, RK_STARTED_AT));
	json_add_str(body, "ended_at", json_str(run, RK_ENDED_AT));
	json_add_str(body, "commit", commit);
	json_add_bool(body, "dirty", git && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(git,
										       "dirty")));
	json_add_str(body, "report", report_path);
	json_add_num(body, "steps", t.steps);
	json_add_num(body, "steps_passed", t.steps_pass);
	json_add_num(body, "steps_skipped", t.steps_skipped);
	json_add_num(body, "gates", t.gates);
	json_add_num(body, "gates_failed", t.gates_failed);
	cJSON_AddItemToObject(body, "hosts", hosts);
	strbuf_release(&text);
	strbuf_release(&t.failed_gates);
	return body;
}

static void oneline(struct strbuf *sb)
{
	size_t i;

	for (i = 0; i < sb->len; i++)
		if (sb->buf[i] == '\n' || sb->buf[i] == '\r' || sb->buf[i] == '\t')
			sb->buf[i] = ' ';
	strbuf_trim(sb);
}

enum go_status notify_post(const char *url, const cJSON *body, int timeout_s,
			   long *http_status, struct strbuf *err)
{
	static const char *const headers[] = {"Content-Type: application/json", NULL};
	char *json = cJSON_PrintUnformatted(body);
	char *origin = notify_url_origin(url);
	/* the server's answer is not used: a little of it is kept for the error message */
	struct http_request rq = {.url = url, .headers = headers, .body = json, .body_len = strlen(json),
				  .timeout_s = timeout_s, .max_answer = 200, .clip_answer = 1};
	struct http_answer a = {.body = STRBUF_INIT};
	enum go_status st = http_do(&rq, &a, err);

	*http_status = a.status;
	if (st == GO_OK && a.failure) {
		st = go_fail(err, GO_ERR_CONNECT, "POST to %s failed: %s", origin, a.why);
	} else if (st == GO_OK && (a.status < 200 || a.status > 299)) {
		oneline(&a.body);
		st = go_fail(err, GO_ERR_REMOTE, "%s answered HTTP %ld%s%s", origin, a.status,
			     a.body.len ? ": " : "", a.body.buf);
	}
	strbuf_release(&a.body);
	free(origin);
	cJSON_free(json);
	return st;
}

cJSON *notify_run(const char *url, const cJSON *run, const char *report_path)
{
	struct strbuf err = STRBUF_INIT;
	char *origin = notify_url_origin(url);
	cJSON *body = notify_payload(run, report_path), *rec;
	char ts[32];
	long http = 0;
	enum go_status st = notify_post(url, body, 20, &http, &err);

	time_iso8601(time(NULL), ts);
	if (st == GO_OK)
		fprintf(stderr, "notify: posted the summary to %s (HTTP %ld)\n", origin, http);
	else
		fprintf(stderr, "warning: notify: %s; the run's outcome is unchanged\n", err.buf);
	rec = cJSON_CreateObject();
	json_add_str(rec, "url", origin);
	json_add_bool(rec, "ok", st == GO_OK);
	json_add_num(rec, "http_status", (double)http);
	json_add_str(rec, "error", st == GO_OK ? NULL : err.buf);
	json_add_str(rec, "at", ts);
	cJSON_Delete(body);
	free(origin);
	strbuf_release(&err);
	return rec;
}
