/* slurm-int.h -- what the files of the Slurm client share (not for outside sched/).
 *
 * slurm.c (the client) -> slurm-http.c (one REST request: libcurl, retries,
 * the reply's errors[]), slurm-token.c (the JWT: where from, when to mint
 * again), slurm-v0038.c (the v0.0.38 request and reply shapes). */
#ifndef GPUORCH_SLURM_INT_H
#define GPUORCH_SLURM_INT_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include "sched/slurm.h"

/* ---- slurm-http.c */
struct slurm_http {
	char *label;        /* the entry's url, for messages */
	char *base;         /* "http://h:p" or "http://localhost" (unix socket) */
	char *unix_path;    /* the socket, or NULL */
	long nrequests;
	int64_t retry_ms;   /* keep retrying a failed connection this long */
	int timeout_s;      /* one request */
};
enum go_status slurm_http_init(struct slurm_http *hc, const char *url, struct strbuf *err);
void slurm_http_release(struct slurm_http *hc);
/* One request: user/token are sent as X-SLURM-USER-NAME/-TOKEN unless
 * token is NULL. *json is the parsed reply (NULL when it was not JSON);
 * *http the status. A connection that fails is retried with backoff for
 * hc->retry_ms; a reply that came is returned as it is. */
enum go_status slurm_http_request(struct slurm_http *hc, const char *method, const char *path,
				  const char *user, const char *token, const char *body,
				  cJSON **json, long *http, struct strbuf *err);
/* The reply's verdict: GO_OK when HTTP 2xx, JSON and errors[] empty; else
 * a message "slurmrestd URL: METHOD PATH: what Slurm said (hint)". */
enum go_status slurm_reply_check(const struct slurm_http *hc, const char *method,
				 const char *path, long http, const cJSON *json, struct strbuf *err);
/* The first errors[] entry's error_number (0: none). */
int slurm_reply_errno(const cJSON *json);

/* ---- slurm-token.c */
enum slurm_token_src { TOKEN_NONE, TOKEN_ENV, TOKEN_FILE, TOKEN_SSH };
struct slurm_token {
	enum slurm_token_src src;
	const struct host *h;
	char *jwt;
	int64_t exp;          /* epoch seconds from the token's "exp" claim; 0 unknown */
	int64_t minted_at;    /* epoch seconds */
	int mints;            /* how many times it was minted over SSH */
};
/* Chooses the source (unix socket: none) and loads the first token. */
enum go_status slurm_token_init(struct slurm_token *t, const struct host *h, struct strbuf *err);
/* The token to send now; minted or read again when it expires within a
 * margin (a fifth of its life, at least 60 s). */
enum go_status slurm_token_current(struct slurm_token *t, const char **jwt, struct strbuf *err);
/* Get a new one now (the daemon refused the current one); GO_ERR_AUTH
 * with how to get one when the source cannot renew. */
enum go_status slurm_token_renew(struct slurm_token *t, struct strbuf *err);
void slurm_token_release(struct slurm_token *t);
const char *slurm_token_src_name(enum slurm_token_src s);
/* The "exp" claim of a JWT (0 when it has none or is not a JWT). */
int64_t slurm_jwt_exp(const char *jwt);

/* ---- slurm-v0038.c */
cJSON *slurm_v0038_submit_body(const struct host_slurm *s, const struct slurm_job_req *r);
void slurm_v0038_job(const cJSON *job, struct slurm_job *j);
void slurm_v0038_node(const cJSON *node, const char *partition, struct slurm_node *n);

#endif
