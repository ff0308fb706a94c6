/* slurm-http.c -- one REST request to slurmrestd (transport/http.c), and what its reply says.
 *
 * A request that cannot connect (daemon down, restarting) is retried with
 * exponential backoff (0.2 s doubling to 5 s) until retry_ms has passed; a
 * reply that arrived is never retried here (slurm.c decides). The reply is
 * parsed with cJSON; slurmrestd answers HTTP 500 with errors[] for a bad job
 * id and for a token slurmctld refuses, and a bare "Authentication failure"
 * (HTTP 401) for a missing or malformed one, so every reply goes through
 * slurm_reply_check(). The token is sent in a header and never put in a
 * message. */
#include "sched/slurm-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/jsonutil.h"
#include "core/timeutil.h"
#include "transport/http.h"
#include "core/banned.h"

#define REPLY_MAX (64u << 20)   /* a 200-task /jobs answer is far below this */

enum go_status slurm_http_init(struct slurm_http *hc, const char *url, struct strbuf *err)
{
	size_t n;
	memset(hc, 0, sizeof(*hc));
	hc->label = xstrdup(url);
	hc->retry_ms = 30000;
	hc->timeout_s = 30;
	if (!strncmp(url, "unix:", 5)) {
		hc->unix_path = xstrdup(url + 5);
		hc->base = xstrdup("http://localhost");
		return GO_OK;
	}
	hc->base = xstrdup(url);
	n = strlen(hc->base);
	while (n && hc->base[n - 1] == '/')
		hc->base[--n] = '\0';
	(void)err;
	return GO_OK;
}

void slurm_http_release(struct slurm_http *hc)
{
	free(hc->label);
	free(hc->base);
	free(hc->unix_path);
	memset(hc, 0, sizeof(*hc));
}

/* Connection-level failures worth another try: the daemon may come back. A
 * reply that began to arrive is not tried again (a POST may have been done). */
static int retryable(enum http_failure f)
{
	return f == HTTP_NO_CONNECT || f == HTTP_TIMED_OUT || f == HTTP_RECV_ERROR ||
	       f == HTTP_SEND_ERROR || f == HTTP_GOT_NOTHING;
}

enum go_status slurm_http_request(struct slurm_http *hc, const char *method, const char *path,
				  const char *user, const char *token, const char *body,
				  cJSON **json, long *http, struct strbuf *err)
{
	struct strbuf url = STRBUF_INIT, hu = STRBUF_INIT, ht = STRBUF_INIT;
	struct http_answer a = {.body = STRBUF_INIT};
	int64_t start = time_mono_ms(), deadline = start + hc->retry_ms, backoff = 200;
	enum go_status st = GO_OK;
	int tries = 0;
	const char *headers[5];
	int nh = 0;

	*json = NULL;
	*http = 0;
	strbuf_addf(&url, "%s%s", hc->base, path);
	headers[nh++] = "Accept: application/json";
	if (body)
		headers[nh++] = "Content-Type: application/json";
	if (token) {
		strbuf_addf(&hu, "X-SLURM-USER-NAME: %s", user);
		strbuf_addf(&ht, "X-SLURM-USER-TOKEN: %s", token);
		headers[nh++] = hu.buf;
		headers[nh++] = ht.buf;
	}
	headers[nh] = NULL;
	for (;;) {
		struct http_request rq = {.method = method, .url = url.buf, .unix_path = hc->unix_path,
					  .headers = headers, .body = body, .body_len = body ? strlen(body) : 0,
					  .timeout_s = hc->timeout_s, .max_answer = REPLY_MAX};
		if ((st = http_do(&rq, &a, err)) != GO_OK)
			break;
		hc->nrequests++;
		tries++;
		*http = a.status;
		if (!a.failure)
			break;
		if (!retryable(a.failure) || time_mono_ms() >= deadline) {
			st = go_fail(err, GO_ERR_CONNECT,
				     "slurmrestd %s: %s %s: %s (%d tr%s in %.0f s); is slurmrestd running and is \"url\" right?",
				     hc->label, method, path, a.why, tries, tries == 1 ? "y" : "ies",
				     (double)(time_mono_ms() - start) / 1000.0);
			break;
		}
		/* the last try falls on the deadline */
		time_sleep_ms(deadline - time_mono_ms() < backoff ? deadline - time_mono_ms() : backoff);
		backoff = backoff * 2 > 5000 ? 5000 : backoff * 2;
	}
	/* the header text holds the token: wipe it */
	if (ht.len)
		memset(ht.buf, 0, ht.len);
	if (st == GO_OK && a.body.len)
		*json = cJSON_ParseWithLength(a.body.buf, a.body.len);
	if (st == GO_OK && !*json) {
		/* keep the first line of a non-JSON answer for the message */
		char first[120];
		size_t n = strcspn(a.body.buf ? a.body.buf : "", "\r\n");
		if (n >= sizeof(first))
			n = sizeof(first) - 1;
		memcpy(first, a.body.len ? a.body.buf : "", n);
		first[n] = '\0';
		if (*http == 401)
			st = go_fail(err, GO_ERR_AUTH,
				     "slurmrestd %s: %s %s: HTTP 401 '%s': no or a malformed token was accepted; set SLURM_JWT, a \"token_file\", or let gpuorch mint one over SSH",
				     hc->label, method, path, first);
		else
			st = go_fail(err, GO_ERR_REMOTE,
				     "slurmrestd %s: %s %s: the reply is not JSON (HTTP %ld, %zu bytes%s%s%s); is \"url\" a slurmrestd?",
				     hc->label, method, path, *http, a.body.len, n ? ": '" : "", first,
				     n ? "'" : "");
	}
	strbuf_release(&url);
	strbuf_release(&a.body);
	strbuf_release(&hu);
	strbuf_release(&ht);
	return st;
}

int slurm_reply_errno(const cJSON *json)
{
	const cJSON *e = json ? cJSON_GetObjectItemCaseSensitive(json, "errors") : NULL;
	const cJSON *first = cJSON_IsArray(e) ? cJSON_GetArrayItem(e, 0) : NULL;
	const cJSON *num;
	if (!first)
		return 0;
	/* v0.0.38 names it error_number, error_code or errno, depending on the request */
	num = cJSON_GetObjectItemCaseSensitive(first, "error_number");
	if (!num)
		num = cJSON_GetObjectItemCaseSensitive(first, "error_code");
	if (!num)
		num = cJSON_GetObjectItemCaseSensitive(first, "errno");
	return cJSON_IsNumber(num) ? (int)num->valuedouble : -1;
}

enum go_status slurm_reply_check(const struct slurm_http *hc, const char *method,
				 const char *path, long http, const cJSON *json, struct strbuf *err)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(json, "errors"), *it;
	struct strbuf what = STRBUF_INIT;
	int n = 0, num = 0, unspecified = 0;
	enum go_status st;

	if (!cJSON_IsObject(json))
		return go_fail(err, GO_ERR_REMOTE, "slurmrestd %s: %s %s: the reply is JSON but not an object (HTTP %ld)",
			       hc->label, method, path, http);
	if (!cJSON_IsArray(e))
		e = NULL;
	cJSON_ArrayForEach(it, e) {
		const char *desc = json_str(it, "description"), *msg = json_str(it, "error");
		const char *src = json_str(it, "source");
		num = slurm_reply_errno(json);
		if (n++)
			strbuf_addstr(&what, "; ");
		strbuf_addf(&what, "%s", msg && *msg ? msg : "error");
		if (desc && *desc)
			strbuf_addf(&what, ": %s", desc);
		if (src && *src)
			strbuf_addf(&what, " (%s)", src);
		if (msg && !strcmp(msg, "Unspecified error"))
			unspecified = 1;
	}
	if (!n && http >= 200 && http < 300) {
		strbuf_release(&what);
		return GO_OK;
	}
	if (!n)
		strbuf_addf(&what, "HTTP %ld with no errors[] in the reply", http);
	if (unspecified)
		/* slurmrestd passes the token through; slurmctld refusing it
		 * comes back as an "Unspecified error" on any request */
		st = go_fail(err, GO_ERR_AUTH,
			     "slurmrestd %s: %s %s: %s; slurmctld refused the request: the token is probably invalid or expired (get one with `scontrol token` on the login node, or drop SLURM_JWT/token_file to let gpuorch mint one over SSH)",
			     hc->label, method, path, what.buf);
	else
		st = go_fail(err, GO_ERR_REMOTE, "slurmrestd %s: %s %s: %s (HTTP %ld, error %d)",
			     hc->label, method, path, what.buf, http, num);
	strbuf_release(&what);
	return st;
}
