/* notify.h -- tell a webhook (Slack, Mattermost, a CI bot) how a run ended.
 *
 * `gpuorch run --notify URL` (or GPUORCH_NOTIFY_URL) POSTs a JSON summary of
 * the finished run record (transport/http.c): a one-line "text" that chat webhooks
 * show as is, and the structured outcome (hosts, steps, gates, report path)
 * for bots. A notification that cannot be delivered is a warning, recorded in
 * run.json, never a change to the run's outcome. docs/notify.md. */
#ifndef GPUORCH_NOTIFY_H
#define GPUORCH_NOTIFY_H

#include "core/error.h"

#include <cjson/cJSON.h>

/* Checks URL before anything runs: http:// or https:// with a host, no
 * spaces or control characters. GO_ERR_USAGE with a message otherwise. */
enum go_status notify_check_url(const char *url, struct strbuf *err);

/* The URL with its path, query and credentials left out ("https://host:port"):
 * webhook URLs carry their secret in the path, so only this is printed or
 * recorded. Caller frees. */
char *notify_url_origin(const char *url);

/* The JSON body for a finished run record (caller cJSON_Delete()s it). */
cJSON *notify_payload(const cJSON *run, const char *report_path);

/* POSTs body to url, waiting at most timeout_s in all. Sets *http_status to
 * the server's answer (0 when there was none). GO_OK only for a 2xx answer;
 * otherwise GO_ERR_REMOTE (a non-2xx answer) or GO_ERR_CONNECT (no answer),
 * with the reason in err. */
enum go_status notify_post(const char *url, const cJSON *body, int timeout_s,
			   long *http_status, struct strbuf *err);

/* Everything above for one finished run: POSTs, prints one line on stderr
 * ("notify: ... HTTP 200" or "warning: notify: ..."), and returns the
 * record's "notify" object (origin, http_status, ok, error, at; to free, or
 * to hand to store/runwrite.h's runw_notify). */
cJSON *notify_run(const char *url, const cJSON *run, const char *report_path);

#endif
