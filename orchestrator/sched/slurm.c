/* slurm.c -- the Slurm client (slurm.h): versions, auth, and the few requests gpuorch makes.
 *
 * Every request goes through call(): the current token (minted again when
 * it is near its end), the REST request (slurm-http.c retries a dropped
 * connection), the reply's errors[]; a reply that says the token was
 * refused gets one more try with a renewed token. The version is chosen
 * from the paths the daemon's /openapi document lists (slurm-api.c). */
#include "sched/slurm-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/jsonutil.h"
#include "core/banned.h"

struct slurm_client {
	const struct host *h;
	struct slurm_http http;
	struct slurm_token tok;
	const struct slurm_adapter *ad;
	char *release;
};

enum go_status slurm_open(const struct host *h, struct slurm_client **out, struct strbuf *err)
{
	struct slurm_client *c;
	enum go_status st;

	*out = NULL;
	if (!h->slurm)
		return go_fail(err, GO_ERR_INTERNAL, "host '%s' is not a Slurm cluster entry", h->name);
	c = xcalloc(1, sizeof(*c));
	c->h = h;
	st = slurm_http_init(&c->http, h->slurm->url, err);
	if (st == GO_OK)
		st = slurm_token_init(&c->tok, h, err);
	if (st != GO_OK) {
		slurm_close(c);
		return st;
	}
	*out = c;
	return GO_OK;
}

void slurm_close(struct slurm_client *c)
{
	if (!c)
		return;
	slurm_http_release(&c->http);
	slurm_token_release(&c->tok);
	free(c->release);
	free(c);
}

const char *slurm_api_version(const struct slurm_client *c)
{
	return c->ad ? c->ad->version : NULL;
}

const char *slurm_release(const struct slurm_client *c)
{
	return c->release;
}

const char *slurm_token_source(const struct slurm_client *c)
{
	return slurm_token_src_name(c->tok.src);
}

long slurm_token_ttl_s(const struct slurm_client *c)
{
	if (!c->tok.exp)
		return -1;
	return (long)(c->tok.exp - (int64_t)time(NULL));
}

int slurm_token_mints(const struct slurm_client *c)
{
	return c->tok.mints;
}

long slurm_requests(const struct slurm_client *c)
{
	return c->http.nrequests;
}

void slurm_set_retry_ms(struct slurm_client *c, int64_t ms)
{
	c->http.retry_ms = ms;
}

/* One request with the reply checked; *json (may be NULL) gets the reply. */
static enum go_status call(struct slurm_client *c, const char *method, const char *path,
			   const char *body, cJSON **json, struct strbuf *err)
{
	enum go_status st;
	int attempt;
	cJSON *reply = NULL;
	long http = 0;

	if (json)
		*json = NULL;
	for (attempt = 0; attempt < 2; attempt++) {
		const char *jwt;
		st = slurm_token_current(&c->tok, &jwt, err);
		if (st != GO_OK)
			return st;
		st = slurm_http_request(&c->http, method, path, c->h->slurm->user, jwt, body, &reply,
					&http, err);
		if (st == GO_OK)
			st = slurm_reply_check(&c->http, method, path, http, reply, err);
		if (st != GO_ERR_AUTH || attempt || c->tok.src == TOKEN_ENV ||
		    c->tok.src == TOKEN_NONE)
			break;
		/* refused: a token from a file or SSH can be renewed once */
		cJSON_Delete(reply);
		reply = NULL;
		if (slurm_token_renew(&c->tok, err) != GO_OK)
			return GO_ERR_AUTH;
	}
	if (json && reply)
		*json = reply;
	else
		cJSON_Delete(reply);
	return st;
}

enum go_status slurm_discover(struct slurm_client *c, struct strbuf *err)
{
	cJSON *doc = NULL;
	struct strbuf offered = STRBUF_INIT;
	enum go_status st;
	long http = 0;
	const char *jwt;

	st = slurm_token_current(&c->tok, &jwt, err);
	if (st != GO_OK)
		return st;
	st = slurm_http_request(&c->http, "GET", "/openapi", c->h->slurm->user, jwt, NULL, &doc,
				&http, err);
	if (st == GO_OK && http == 404) {
		/* a daemon that serves the document only at its OpenAPI 3 path */
		cJSON_Delete(doc);
		doc = NULL;
		st = slurm_http_request(&c->http, "GET", "/openapi/v3", c->h->slurm->user, jwt, NULL,
					&doc, &http, err);
	}
	if (st == GO_OK && (http < 200 || http >= 300))
		st = go_fail(err, http == 401 ? GO_ERR_AUTH : GO_ERR_REMOTE,
			     "slurmrestd %s: GET /openapi: HTTP %ld; cannot tell which API versions it serves",
			     c->http.label, http);
	if (st != GO_OK) {
		cJSON_Delete(doc);
		return st;
	}
	c->ad = slurm_pick_adapter(doc, &offered);
	cJSON_Delete(doc);
	if (!c->ad) {
		struct strbuf ours = STRBUF_INIT;
		const struct slurm_adapter *a;
		for (a = slurm_adapters(); a->version; a++)
			strbuf_addf(&ours, "%s%s", ours.len ? ", " : "", a->version);
		st = go_fail(err, GO_ERR_REMOTE, "slurmrestd %s serves Slurm API %s; gpuorch speaks %s (start slurmrestd with "
			     "-s openapi/vX for one its Slurm release serves: v0.0.38 is Slurm 22.05's, v0.0.39 "
			     "23.02's, v0.0.40 23.11's, v0.0.41 24.05's, v0.0.42 24.11's, v0.0.43 25.05's, "
			     "v0.0.44 25.11's)",
			     c->http.label, offered.len ? offered.buf : "no version at all (no /slurm/vX/job/submit in /openapi)",
			     ours.buf);
		strbuf_release(&ours);
	}
	strbuf_release(&offered);
	return st;
}

static enum go_status need_version(struct slurm_client *c, struct strbuf *err)
{
	return c->ad ? GO_OK : slurm_discover(c, err);
}

/* "/slurm/VERSION/WHAT[/ARG]" */
static char *vpath(const struct slurm_client *c, const char *what, const char *arg)
{
	return xstrfmt("/slurm/%s/%s%s%s", c->ad->version, what, arg ? "/" : "", arg ? arg : "");
}

enum go_status slurm_ping(struct slurm_client *c, struct strbuf *err)
{
	cJSON *j = NULL;
	const cJSON *rel;
	char *path;
	enum go_status st = need_version(c, err);
	if (st != GO_OK)
		return st;
	path = vpath(c, "ping", NULL);
	st = call(c, "GET", path, NULL, &j, err);
	rel = json_path(j, "meta.Slurm.release");   /* v0.0.38 */
	if (!cJSON_IsString(rel))
		rel = json_path(j, "meta.slurm.release");   /* v0.0.41+ */
	if (st == GO_OK && cJSON_IsString(rel)) {
		free(c->release);
		c->release = xstrdup(rel->valuestring);
	}
	cJSON_Delete(j);
	free(path);
	return st;
}

enum go_status slurm_get_partition(struct slurm_client *c, const char *name,
				   struct slurm_partition *p, struct strbuf *err)
{
	cJSON *j = NULL;
	const cJSON *arr, *it;
	char *path;
	enum go_status st = need_version(c, err);

	memset(p, 0, sizeof(*p));
	if (st != GO_OK)
		return st;
	path = vpath(c, "partition", name);
	st = call(c, "GET", path, NULL, &j, err);
	if (st == GO_ERR_REMOTE && slurm_reply_errno(j) == 2000) /* ESLURM_INVALID_PARTITION_NAME */
		st = go_fail(err, GO_ERR_HOSTS, "cluster '%s': partition '%s' does not exist on %s; fix \"partition\" (sinfo lists them)",
			     c->h->name, name, c->http.label);
	arr = cJSON_GetObjectItemCaseSensitive(j, "partitions");
	it = cJSON_IsArray(arr) ? cJSON_GetArrayItem(arr, 0) : NULL;
	if (st == GO_OK && !it)
		st = go_fail(err, GO_ERR_HOSTS, "cluster '%s': partition '%s' does not exist on %s; fix \"partition\"",
			     c->h->name, name, c->http.label);
	if (st == GO_OK)
		c->ad->partition(it, name, p);
	cJSON_Delete(j);
	free(path);
	return st;
}

void slurm_partition_release(struct slurm_partition *p)
{
	free(p->name);
	free(p->nodes);
	free(p->state);
	memset(p, 0, sizeof(*p));
}

enum go_status slurm_get_nodes(struct slurm_client *c, struct slurm_node **out, int *n,
			       struct strbuf *err)
{
	cJSON *j = NULL;
	const cJSON *arr, *it;
	char *path;
	int i = 0;
	enum go_status st = need_version(c, err);

	*out = NULL;
	*n = 0;
	if (st != GO_OK)
		return st;
	path = vpath(c, "nodes", NULL);
	st = call(c, "GET", path, NULL, &j, err);
	arr = cJSON_GetObjectItemCaseSensitive(j, "nodes");
	if (st == GO_OK && !cJSON_IsArray(arr))
		st = go_fail(err, GO_ERR_REMOTE, "slurmrestd %s: GET %s: the reply has no nodes[]",
			     c->http.label, path);
	if (st == GO_OK) {
		*out = xcalloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof(**out));
		cJSON_ArrayForEach(it, arr)
			c->ad->node(it, c->h->slurm->partition, &(*out)[i++]);
		*n = i;
	}
	cJSON_Delete(j);
	free(path);
	return st;
}

void slurm_nodes_release(struct slurm_node *v, int n)
{
	int i;
	for (i = 0; v && i < n; i++) {
		free(v[i].name);
		free(v[i].state);
		free(v[i].gres);
		free(v[i].gres_used);
		free(v[i].reason);
	}
	free(v);
}

/* Does gres item "gpu:h100:4(S:0-1)" name GPU type TYPE? ("gpu:4" has none) */
static int gres_item_has_type(const char *item, size_t len, const char *type)
{
	const char *p = item + 4, *end = item + len, *colon;
	size_t tl = strlen(type);
	if (len < 4 || strncmp(item, "gpu:", 4))
		return 0;
	colon = memchr(p, ':', (size_t)(end - p));
	return colon && (size_t)(colon - p) == tl && !strncmp(p, type, tl);
}

enum go_status slurm_check_gpus(const char *gpus, const char *partition,
				const struct slurm_node *nodes, int n, struct strbuf *err)
{
	const char *colon = gpus ? strrchr(gpus, ':') : NULL;
	struct strbuf have = STRBUF_INIT;
	char *type;
	int i, found = 0;
	enum go_status st = GO_OK;

	if (!colon)
		return GO_OK;        /* "N": any type */
	type = xstrfmt("%.*s", (int)(colon - gpus), gpus);
	for (i = 0; i < n && !found; i++) {
		const char *p = nodes[i].gres;
		if (!nodes[i].in_partition)
			continue;
		strbuf_addf(&have, "%s%s %s", have.len ? ", " : "", nodes[i].name,
			    *p ? p : "(no gres)");
		while (p && *p && !found) {
			size_t len = strcspn(p, ",");
			found = gres_item_has_type(p, len, type);
			p += len + (p[len] == ',');
		}
	}
	if (!found)
		st = go_fail(err, GO_ERR_HOSTS,
			     "\"gpus\": \"%s\" asks for GPUs of type '%s', and no node of partition "
			     "%s has that type (%s); Slurm would refuse every GPU job with "
			     "\"Requested node configuration is not available\". Fix: \"gpus\": \"%s\" "
			     "for GPUs of any type, or a type the nodes list (\"gpu:TYPE:N\" in their gres)",
			     gpus, type, partition, have.len ? have.buf : "no nodes", colon + 1);
	free(type);
	strbuf_release(&have);
	return st;
}

enum go_status slurm_submit(struct slurm_client *c, const struct slurm_job_req *r,
			    long *job_id, struct strbuf *warn, struct strbuf *err)
{
	cJSON *body, *j = NULL;
	char *text, *path;
	enum go_status st = need_version(c, err);

	*job_id = 0;
	if (st != GO_OK)
		return st;
	body = c->ad->submit_body(c->h->slurm, r);
	text = cJSON_PrintUnformatted(body);
	cJSON_Delete(body);
	path = vpath(c, "job/submit", NULL);
	st = call(c, "POST", path, text, &j, err);
	if (st == GO_ERR_REMOTE && json_num(j, "job_id", 0) > 0) {
		/* accepted, with a warning in errors[] */
		if (warn)
			strbuf_addstr(warn, err->buf);
		strbuf_reset(err);
		st = GO_OK;
	}
	if (st == GO_OK) {
		*job_id = (long)json_num(j, "job_id", 0);
		if (*job_id <= 0)
			st = go_fail(err, GO_ERR_REMOTE, "slurmrestd %s: POST %s: the reply has no job_id",
				     c->http.label, path);
	}
	if (st != GO_OK && st != GO_ERR_AUTH && st != GO_ERR_CONNECT) {
		/* name the job in the message */
		struct strbuf why = STRBUF_INIT;
		strbuf_addstr(&why, err->buf);
		go_fail(err, st, "cannot submit job '%s': %s", r->name, why.buf);
		strbuf_release(&why);
	}
	cJSON_Delete(j);
	free(text);
	free(path);
	return st;
}

enum go_status slurm_get_job(struct slurm_client *c, long id, struct slurm_job *jb,
			     struct strbuf *err)
{
	cJSON *j = NULL;
	const cJSON *arr, *it;
	char idbuf[32], *path;
	enum go_status st = need_version(c, err);

	memset(jb, 0, sizeof(*jb));
	jb->id = id;
	if (st != GO_OK)
		return st;
	snprintf(idbuf, sizeof(idbuf), "%ld", id);
	path = vpath(c, "job", idbuf);
	st = call(c, "GET", path, NULL, &j, err);
	if (st == GO_ERR_REMOTE && slurm_reply_errno(j) == 2017) {
		/* ESLURM_INVALID_JOB_ID: finished longer ago than MinJobAge */
		st = GO_OK;
		jb->found = 0;
	} else if (st == GO_OK) {
		arr = cJSON_GetObjectItemCaseSensitive(j, "jobs");
		it = cJSON_IsArray(arr) ? cJSON_GetArrayItem(arr, 0) : NULL;
		if (it)
			c->ad->job(it, jb);
		if (!it || !jb->state[0]) {
			memset(jb, 0, sizeof(*jb));
			jb->id = id;
			st = go_fail(err, GO_ERR_REMOTE, "slurmrestd %s: GET %s: the reply has no job in jobs[]",
				     c->http.label, path);
		}
	}
	cJSON_Delete(j);
	free(path);
	return st;
}

/* GET /jobs: every job Slurm lists now, for fn to read one by one */
static enum go_status each_job(struct slurm_client *c, void (*fn)(const cJSON *job, void *arg),
			       void *arg, struct strbuf *err)
{
	cJSON *j = NULL;
	const cJSON *arr, *it;
	char *path;
	enum go_status st = need_version(c, err);

	if (st != GO_OK)
		return st;
	path = vpath(c, "jobs", NULL);
	st = call(c, "GET", path, NULL, &j, err);
	arr = cJSON_GetObjectItemCaseSensitive(j, "jobs");
	if (st == GO_OK && !cJSON_IsArray(arr))
		st = go_fail(err, GO_ERR_REMOTE, "slurmrestd %s: GET %s: the reply has no jobs[]",
			     c->http.label, path);
	if (st == GO_OK)
		cJSON_ArrayForEach(it, arr)
			fn(it, arg);
	cJSON_Delete(j);
	free(path);
	return st;
}

struct by_id {
	struct slurm_client *c;
	const long *ids;
	int n;
	struct slurm_job *out;
};

static void take_by_id(const cJSON *job, void *arg)
{
	struct by_id *b = arg;
	long id = (long)json_num(job, "job_id", 0);
	int i;
	for (i = 0; i < b->n; i++)
		if (b->ids[i] == id) {
			b->c->ad->job(job, &b->out[i]);
			break;
		}
}

enum go_status slurm_get_jobs(struct slurm_client *c, const long *ids, int n,
			      struct slurm_job *out, struct strbuf *err)
{
	struct by_id b = { c, ids, n, out };
	int i;
	for (i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		out[i].id = ids[i];
	}
	return each_job(c, take_by_id, &b, err);
}

struct by_name {
	char *const *names;
	int n;
	long *ids;
};

static void take_by_name(const cJSON *job, void *arg)
{
	struct by_name *b = arg;
	const char *name = json_str(job, "name");
	long id = (long)json_num(job, "job_id", 0);
	int i;
	for (i = 0; name && id > 0 && i < b->n; i++)
		if (b->names[i] && !strcmp(b->names[i], name) && id > b->ids[i])
			b->ids[i] = id;   /* the newest of that name */
}

enum go_status slurm_find_jobs(struct slurm_client *c, char *const *names, int n, long *ids,
			       struct strbuf *err)
{
	struct by_name b = { names, n, ids };
	int i;
	for (i = 0; i < n; i++)
		ids[i] = 0;
	return each_job(c, take_by_name, &b, err);
}

enum go_status slurm_cancel(struct slurm_client *c, long id, struct strbuf *err)
{
	cJSON *j = NULL;
	char idbuf[32], *path;
	enum go_status st = need_version(c, err);
	int num;

	if (st != GO_OK)
		return st;
	snprintf(idbuf, sizeof(idbuf), "%ld", id);
	path = vpath(c, "job", idbuf);
	st = call(c, "DELETE", path, NULL, &j, err);
	num = slurm_reply_errno(j);
	/* 2017 invalid job id (gone), 2021 already completing/completed */
	if (st == GO_ERR_REMOTE && (num == 2017 || num == 2021))
		st = GO_OK;
	cJSON_Delete(j);
	free(path);
	return st;
}

int slurm_state_final(const char *s)
{
	static const char *const live[] = { "PENDING", "RUNNING", "CONFIGURING", "COMPLETING",
					    "SUSPENDED", "REQUEUED", "RESIZING", "SIGNALING",
					    "STAGE_OUT", "REQUEUE_HOLD", "REQUEUE_FED", NULL };
	const char *const *p;
	if (!*s)
		return 0;
	for (p = live; *p; p++)
		if (!strcmp(*p, s))
			return 0;
	return 1;
}

enum slurm_retry slurm_retry_decision(const struct slurm_job *j, int attempt)
{
	if (!j->found || (strcmp(j->state, "NODE_FAIL") && strcmp(j->state, "PREEMPTED")))
		return SLURM_RETRY_NO;
	return attempt <= 1 ? SLURM_RETRY_REQUEUE : SLURM_RETRY_GIVE_UP;
}
