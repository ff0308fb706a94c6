/* results-s3.c -- the results store in an S3 bucket, through transport/http.c (results-s3.h).
 *
 * GET, PUT and HEAD of objects and ListObjectsV2 (delimiter '/'), signed by
 * libcurl's SigV4 ("aws:amz:REGION:s3"), each payload's SHA-256 sent as
 * x-amz-content-sha256 (S3 wants it signed). A PUT is whole: S3 shows an
 * object only once all of it arrived, and two PUTs of one object key carry
 * the same bytes (store/results.c), so concurrent pushes never conflict.
 * Connection failures and 5xx answers are tried again, twice. */
#include "cloud/results-s3.h"
#include "cloud/cloud-int.h"
#include "core/hash.h"
#include "core/timeutil.h"
#include "transport/http.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

#define S3_TIMEOUT_S 600
#define S3_OBJECT_MAX ((size_t)1 << 32)

struct s3 {
	char *bucket, *prefix;    /* prefix "" or "p/" */
	char *region, *endpoint;  /* endpoint NULL: AWS */
	char *sigv4, *where;
	struct creds cr;
	int have_creds;
};

static char *key_url(const struct s3 *s, const char *key_or_query)
{
	if (s->endpoint) {
		size_t n = strlen(s->endpoint);
		return xstrfmt("%.*s/%s/%s", (int)(n && s->endpoint[n - 1] == '/' ? n - 1 : n),
			       s->endpoint, s->bucket, key_or_query);
	}
	return xstrfmt("https://%s.s3.%s.amazonaws.com/%s", s->bucket, s->region, key_or_query);
}

/* The text of the first element NAME in an XML answer (new string), or NULL. */
static char *xml_text(const struct strbuf *body, const char *name)
{
	xmlDoc *d = body->len ? xmlReadMemory(body->buf, (int)body->len, "s3.xml", NULL,
					      XML_PARSE_NONET | XML_PARSE_NOERROR |
					      XML_PARSE_NOWARNING) : NULL;
	xmlNode *stack[64];
	int top = 0;
	char *r = NULL;
	if (!d)
		return NULL;
	stack[top++] = xmlDocGetRootElement(d);
	while (top && !r) {
		xmlNode *n = stack[--top];
		for (; n && !r; n = n->next) {
			if (n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name)) {
				xmlChar *t = xmlNodeGetContent(n);
				r = xstrdup(t ? (const char *)t : "");
				xmlFree(t);
			} else if (n->children && top < 64) {
				stack[top++] = n->children;
			}
		}
	}
	xmlFreeDoc(d);
	return r;
}

/* One request; GO_OK with a->status for any answer (judged by the caller). */
static enum go_status s3_call(struct s3 *s, const char *method, const char *url,
			      const void *body, size_t len, struct http_answer *a,
			      struct strbuf *err)
{
	char sha[SHA256_HEX_LEN + 1];
	struct strbuf hsha = STRBUF_INIT, htok = STRBUF_INIT;
	const char *headers[4] = {"Content-Type: application/octet-stream", NULL, NULL, NULL};
	enum go_status st = GO_OK;
	int attempt;

	if (!s->have_creds) {
		char *who = xstrfmt("results store %s", s->where);
		st = creds_load(NULL, who, &s->cr, err);
		free(who);
		if (st != GO_OK)
			return st;
		s->have_creds = 1;
	}
	sha256_hex(body ? body : "", body ? len : 0, sha);
	strbuf_addf(&hsha, "x-amz-content-sha256: %s", sha);
	headers[1] = hsha.buf;
	if (s->cr.token) {
		strbuf_addf(&htok, "X-Amz-Security-Token: %s", s->cr.token);
		headers[2] = htok.buf;
	}
	for (attempt = 0; attempt < 3; attempt++) {
		struct http_request rq = {.method = method, .url = url, .headers = headers,
					  .body = body, .body_len = len, .timeout_s = S3_TIMEOUT_S,
					  .aws_sigv4 = s->sigv4, .user = s->cr.key_id,
					  .password = s->cr.secret, .max_answer = S3_OBJECT_MAX};
		if (attempt)
			time_sleep_ms(500LL << attempt);
		if ((st = http_do(&rq, a, err)) != GO_OK)
			break;
		if (a->failure == HTTP_ANSWERED && a->status < 500)
			break;
	}
	if (st == GO_OK && a->failure != HTTP_ANSWERED)
		st = go_fail(err, a->failure == HTTP_TIMED_OUT ? GO_ERR_TIMEOUT : GO_ERR_CONNECT,
			     "results store %s: %s %s: %s", s->where, method, url, a->why);
	if (htok.len)
		memset(htok.buf, 0, htok.len);
	strbuf_release(&htok);
	strbuf_release(&hsha);
	return st;
}

/* An error answer in words: S3's code and message. */
static enum go_status s3_refused(struct s3 *s, const char *what, const char *key,
				 const struct http_answer *a, struct strbuf *err)
{
	char *code = xml_text(&a->body, "Code"), *msg = xml_text(&a->body, "Message");
	enum go_status st = a->status == 403 || a->status == 401 ? GO_ERR_AUTH : GO_ERR_REMOTE;
	go_fail(err, st, "results store %s: %s '%s' failed: HTTP %ld %s%s%s%s", s->where, what,
		key, a->status, code ? code : "", msg ? ": " : "", msg ? msg : "",
		code && !strcmp(code, "NoSuchBucket") ? " (create the bucket first)" : "");
	free(code);
	free(msg);
	return st;
}

static enum go_status s3_get(void *ctx, const char *key, struct strbuf *out, struct strbuf *err)
{
	struct s3 *s = ctx;
	char *full = xstrfmt("%s%s", s->prefix, key), *url = key_url(s, full);
	struct http_answer a = {.body = STRBUF_INIT};
	enum go_status st = s3_call(s, "GET", url, NULL, 0, &a, err);
	if (st == GO_OK && a.status == 200)
		strbuf_add(out, a.body.buf ? a.body.buf : "", a.body.len);
	else if (st == GO_OK && a.status == 404)
		st = go_fail(err, GO_ERR_NOT_FOUND, "'%s' is not in %s", key, s->where);
	else if (st == GO_OK)
		st = s3_refused(s, "GET", full, &a, err);
	strbuf_release(&a.body);
	free(url);
	free(full);
	return st;
}

static enum go_status s3_put(void *ctx, const char *key, const void *data, size_t len,
			     struct strbuf *err)
{
	struct s3 *s = ctx;
	char *full = xstrfmt("%s%s", s->prefix, key), *url = key_url(s, full);
	struct http_answer a = {.body = STRBUF_INIT};
	enum go_status st = s3_call(s, "PUT", url, data ? data : "", len, &a, err);
	if (st == GO_OK && a.status != 200)
		st = s3_refused(s, "PUT", full, &a, err);
	strbuf_release(&a.body);
	free(url);
	free(full);
	return st;
}

static enum go_status s3_exists(void *ctx, const char *key, int *yes, struct strbuf *err)
{
	struct s3 *s = ctx;
	char *full = xstrfmt("%s%s", s->prefix, key), *url = key_url(s, full);
	struct http_answer a = {.body = STRBUF_INIT};
	enum go_status st = s3_call(s, "HEAD", url, NULL, 0, &a, err);
	*yes = 0;
	if (st == GO_OK && a.status == 200)
		*yes = 1;
	else if (st == GO_OK && a.status != 404)
		st = s3_refused(s, "HEAD", full, &a, err);
	strbuf_release(&a.body);
	free(url);
	free(full);
	return st;
}

/* The <Key>s of a ListObjectsV2 answer, each less the listed prefix. */
static void keys_of(const struct strbuf *body, size_t skip, char ***names)
{
	xmlDoc *d = xmlReadMemory(body->buf, (int)body->len, "s3.xml", NULL,
				  XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	xmlNode *root = d ? xmlDocGetRootElement(d) : NULL, *c, *k;
	int n = 0;
	for (c = root ? root->children : NULL; c; c = c->next) {
		if (c->type != XML_ELEMENT_NODE || strcmp((const char *)c->name, "Contents"))
			continue;
		for (k = c->children; k; k = k->next) {
			xmlChar *t;
			if (k->type != XML_ELEMENT_NODE || strcmp((const char *)k->name, "Key"))
				continue;
			t = xmlNodeGetContent(k);
			if (t && strlen((const char *)t) > skip) {
				*names = xrealloc(*names, (size_t)(n + 2) * sizeof(**names));
				(*names)[n++] = xstrdup((const char *)t + skip);
				(*names)[n] = NULL;
			}
			xmlFree(t);
		}
	}
	if (d)
		xmlFreeDoc(d);
}

static enum go_status s3_list(void *ctx, const char *prefix, char ***names, struct strbuf *err)
{
	struct s3 *s = ctx;
	char *full = xstrfmt("%s%s", s->prefix, prefix), *url;
	struct strbuf q = STRBUF_INIT;
	struct http_answer a = {.body = STRBUF_INIT};
	enum go_status st;
	char *trunc;

	*names = xcalloc(1, sizeof(**names));
	strbuf_addstr(&q, "?list-type=2&delimiter=%2F&max-keys=1000&prefix=");
	st = http_escape(&q, full, err);
	url = key_url(s, q.buf);
	if (st == GO_OK)
		st = s3_call(s, "GET", url, NULL, 0, &a, err);
	if (st == GO_OK && a.status != 200)
		st = s3_refused(s, "list", full, &a, err);
	if (st == GO_OK) {
		keys_of(&a.body, strlen(full), names);
		trunc = xml_text(&a.body, "IsTruncated");
		if (trunc && !strcmp(trunc, "true"))
			st = go_fail(err, GO_ERR_REMOTE, "results store %s: more than 1000 keys under "
				     "'%s': not a store gpuorch wrote", s->where, full);
		free(trunc);
	}
	strbuf_release(&a.body);
	strbuf_release(&q);
	free(url);
	free(full);
	return st;
}

static void s3_close(void *ctx)
{
	struct s3 *s = ctx;
	if (s->have_creds)
		creds_release(&s->cr);
	free(s->bucket);
	free(s->prefix);
	free(s->region);
	free(s->endpoint);
	free(s->sigv4);
	free(s->where);
	free(s);
}

static const struct results_ops s3_ops = {s3_get, s3_put, s3_exists, s3_list, s3_close};

/* A bucket name as S3 allows it: 3-63 of [a-z0-9.-]. */
static int bucket_ok(const char *b, size_t n)
{
	size_t i;
	if (n < 3 || n > 63)
		return 0;
	for (i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789.-", b[i]))
			return 0;
	return 1;
}

struct results_store *results_s3_open(const char *url, const char *endpoint, struct strbuf *err)
{
	const char *b = url + 5, *slash, *region = getenv("AWS_REGION");
	struct results_store *rs;
	struct s3 *s;
	size_t bn;

	if (strncmp(url, "s3://", 5)) {
		go_fail(err, GO_ERR_USAGE, "'%s' is not an S3 URL (s3://BUCKET[/PREFIX])", url);
		return NULL;
	}
	slash = strchr(b, '/');
	bn = slash ? (size_t)(slash - b) : strlen(b);
	if (!bucket_ok(b, bn) || (endpoint && strncmp(endpoint, "http://", 7) &&
				  strncmp(endpoint, "https://", 8))) {
		go_fail(err, GO_ERR_USAGE, "results store '%s'%s%s: %s", url,
			endpoint ? " at " : "", endpoint ? endpoint : "",
			bucket_ok(b, bn) ? "the endpoint is not an http:// or https:// URL"
					 : "the bucket name is not 3-63 of a-z, 0-9, '.' and '-'");
		return NULL;
	}
	if (!region || !*region)
		region = getenv("AWS_DEFAULT_REGION");
	if (!region || !*region)
		region = "us-east-1";
	s = xcalloc(1, sizeof(*s));
	s->bucket = xstrfmt("%.*s", (int)bn, b);
	s->prefix = slash && slash[1] ? xstrfmt("%s%s", slash + 1,
					       slash[strlen(slash) - 1] == '/' ? "" : "/")
				      : xstrdup("");
	s->region = xstrdup(region);
	s->endpoint = endpoint && *endpoint ? xstrdup(endpoint) : NULL;
	s->sigv4 = xstrfmt("aws:amz:%s:s3", region);
	s->where = xstrdup(url);
	rs = xcalloc(1, sizeof(*rs));
	rs->ops = &s3_ops;
	rs->ctx = s;
	rs->where = xstrdup(url);
	return rs;
}
