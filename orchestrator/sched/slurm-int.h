/* slurm-int.h -- what the files of the Slurm client share (not for outside sched/).
 *
 * slurm.c (the client) -> slurm-http.c (one REST request: transport/http.c, retries,
 * the reply's errors[]), slurm-token.c (the JWT: where from, when to mint
 * again), slurm-api.c (the versions and their adapters) -> slurm-v0038.c,
 * slurm-v0039.c and slurm-v0041.c (the request and reply shapes of v0.0.38,
 * of v0.0.39's jobs, and of v0.0.40-v0.0.44) -> slurm-fields.c (the fields
 * they write and read alike, no_val structs, wait statuses, GRES strings). */
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

/* ---- slurm-api.c */
struct slurm_adapter {
	const char *version;   /* "v0.0.42" */
	cJSON *(*submit_body)(const struct host_slurm *, const struct slurm_job_req *);
	void (*job)(const cJSON *job, struct slurm_job *out);
	void (*node)(const cJSON *node, const char *partition, struct slurm_node *out);
	void (*partition)(const cJSON *part, const char *name, struct slurm_partition *out);
};
/* Every version gpuorch speaks, newest first, ending with a NULL version. */
const struct slurm_adapter *slurm_adapters(void);
const struct slurm_adapter *slurm_adapter_for(const char *version);   /* NULL: none */
/* The newest version with an adapter among the /slurm/vX/job/submit paths of an
 * OpenAPI document (NULL: none); every version it lists is added to offered. */
const struct slurm_adapter *slurm_pick_adapter(const cJSON *doc, struct strbuf *offered);

/* ---- slurm-v0038.c */
cJSON *slurm_v0038_submit_body(const struct host_slurm *s, const struct slurm_job_req *r);
void slurm_v0038_job(const cJSON *job, struct slurm_job *j);
void slurm_v0038_node(const cJSON *node, const char *partition, struct slurm_node *n);
void slurm_v0038_partition(const cJSON *part, const char *name, struct slurm_partition *p);

/* ---- slurm-v0039.c (v0.0.39's jobs; the rest of v0.0.39 is v0.0.40's) */
void slurm_v0039_job(const cJSON *job, struct slurm_job *j);

/* ---- slurm-v0041.c (v0.0.40, v0.0.41, v0.0.42, v0.0.43, v0.0.44; v0.0.39 but its jobs) */
cJSON *slurm_v0041_submit_body(const struct host_slurm *s, const struct slurm_job_req *r);
void slurm_v0041_job(const cJSON *job, struct slurm_job *j);
void slurm_v0041_node(const cJSON *node, const char *partition, struct slurm_node *n);
void slurm_v0041_partition(const cJSON *part, const char *name, struct slurm_partition *p);

/* ---- slurm-fields.c */
/* The job fields every version names alike: name, partition, account, qos,
 * constraints, cpus_per_task, tasks, minimum_nodes, the working directory,
 * stdout/stderr, dependency. */
void slurm_job_fields(cJSON *job, const struct host_slurm *s, const struct slurm_job_req *r);
/* The job fields every version reads alike (job_id, state_reason, batch_host
 * or nodes, dependency): *j cleared first, found = 1, no exit status yet. */
void slurm_job_common(const cJSON *job, struct slurm_job *j);
/* A raw wait status (v0.0.38, v0.0.39) as exit_status / term_signal; -1: none. */
void slurm_wait_status(int raw, struct slurm_job *j);
/* {"set": true, "infinite": false, "number": N} */
void slurm_add_no_val(cJSON *parent, const char *key, double n);
/* Such a struct's number (fallback when unset or infinite); a plain number is read too. */
double slurm_no_val(const cJSON *parent, const char *key, double fallback);
/* s (NULL: "") into dst, cut to n - 1 bytes */
void slurm_copy(char *dst, size_t n, const char *s);
/* The GPUs a gres string holds: "gpu:h100:4(S:0-1),shard:8" -> 4. */
int slurm_gres_gpus(const char *gres);
/* "gpu:h100:1,shard:2" -> "gres/gpu:h100:1,gres/shard:2" (malloc'd). */
char *slurm_gres_as_tres(const char *gres);

#endif
