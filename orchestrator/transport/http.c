/* http.c -- gpuorch's one HTTP client over libcurl, loaded at the first
 * request (http.h). */
#include "transport/http.h"
#include "core/version.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

#define HTTP_ANSWER_MAX ((size_t)4 << 20)
#define LIBCURL_SONAME "libcurl.so.4"

/* the libcurl functions gpuorch calls, from the loaded library */
static struct {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *c, CURLoption opt, ...);
	CURLcode (*easy_perform)(CURL *c);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *c);
	const char *(*easy_strerror)(CURLcode cc);
	char *(*easy_escape)(CURL *c, const char *s, int len);
	void (*free)(void *p);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
} cu;
static pthread_once_t cu_once = PTHREAD_ONCE_INIT;
static char cu_error[512] = "libcurl was not loaded";   /* empty once loaded */

/* a symbol of the library into *slot (a function pointer's address);
 * 0 when it is missing */
static int take(void *so, const char *name, void *slot)
{
	void *f = dlsym(so, name);
	if (!f) {
		snprintf(cu_error, sizeof(cu_error), "%s has no %s (libcurl older than 7.82?): install "
			 "libcurl4 from Debian 12 or later", LIBCURL_SONAME, name);
		return 0;
	}
	memcpy(slot, &f, sizeof(f));   /* object pointer to function pointer, as POSIX dlsym allows */
	return 1;
}

/* Once per process: load libcurl and initialise it (curl_global_init is
 * called once, before any thread makes a request through here, and the
 * library stays loaded until the process ends). */
static void cu_load(void)
{
	/* GPUORCH_LIBCURL: another file to load (tests: one that is not there) */
	const char *name = getenv("GPUORCH_LIBCURL") ? getenv("GPUORCH_LIBCURL") : LIBCURL_SONAME;
	const char *e;
	void *so = dlopen(name, RTLD_NOW | RTLD_LOCAL);

	if (!so) {
		e = dlerror();
		snprintf(cu_error, sizeof(cu_error), "cannot load %s (%s): install libcurl4 "
			 "(apt-get install libcurl4)", name, e ? e : "not found");
		return;
	}
	if (!take(so, "curl_global_init", &cu.global_init) || !take(so, "curl_easy_init", &cu.easy_init) ||
	    !take(so, "curl_easy_setopt", &cu.easy_setopt) || !take(so, "curl_easy_perform", &cu.easy_perform) ||
	    !take(so, "curl_easy_getinfo", &cu.easy_getinfo) ||
	    !take(so, "curl_easy_cleanup", &cu.easy_cleanup) ||
	    !take(so, "curl_easy_strerror", &cu.easy_strerror) ||
	    !take(so, "curl_easy_escape", &cu.easy_escape) || !take(so, "curl_free", &cu.free) ||
	    !take(so, "curl_slist_append", &cu.slist_append) ||
	    !take(so, "curl_slist_free_all", &cu.slist_free_all))
		return;
	if (cu.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(cu_error, sizeof(cu_error), "libcurl could not be initialised (curl_global_init)");
		return;
	}
	cu_error[0] = '\0';
}

static enum go_status loaded(struct strbuf *err)
{
	pthread_once(&cu_once, cu_load);
	return cu_error[0] ? go_fail(err, GO_ERR_INTERNAL, "HTTP: %s", cu_error) : GO_OK;
}

struct sink {
	struct strbuf *sb;
	size_t max;
	int clip;
};

static size_t keep(char *data, size_t size, size_t n, void *arg)
{
	struct sink *k = arg;
	size_t len = size * n;

	if (k->sb->len + len > k->max) {
		if (!k->clip)
			return 0;   /* libcurl stops with a write error */
		if (k->sb->len < k->max)
			strbuf_add(k->sb, data, k->max - k->sb->len);
		return len;
	}
	strbuf_add(k->sb, data, len);
	return len;
}

static enum http_failure failure_of(CURLcode cc)
{
	switch (cc) {
	case CURLE_OK: return HTTP_ANSWERED;
	case CURLE_COULDNT_CONNECT: case CURLE_COULDNT_RESOLVE_HOST: case CURLE_COULDNT_RESOLVE_PROXY:
		return HTTP_NO_CONNECT;
	case CURLE_OPERATION_TIMEDOUT: return HTTP_TIMED_OUT;
	case CURLE_SEND_ERROR: return HTTP_SEND_ERROR;
	case CURLE_RECV_ERROR: return HTTP_RECV_ERROR;
	case CURLE_GOT_NOTHING: return HTTP_GOT_NOTHING;
	case CURLE_PARTIAL_FILE: return HTTP_PARTIAL;
	case CURLE_WRITE_ERROR: return HTTP_TOO_LONG;   /* keep() refused the rest */
	default: return HTTP_OTHER;
	}
}

enum go_status http_do(const struct http_request *r, struct http_answer *a, struct strbuf *err)
{
	char errbuf[CURL_ERROR_SIZE] = "", agent[128];
	struct curl_slist *hdr = NULL;
	struct sink k = {&a->body, r->max_answer ? r->max_answer : HTTP_ANSWER_MAX, r->clip_answer};
	long connect_s = r->connect_timeout_s ? r->connect_timeout_s : 10;
	const char *method = r->method ? r->method : r->body ? "POST" : "GET";
	enum go_status st;
	CURLcode cc;
	CURL *c;
	size_t i;

	a->status = 0;
	a->failure = HTTP_ANSWERED;
	a->why[0] = '\0';
	strbuf_reset(&a->body);
	if ((st = loaded(err)) != GO_OK)
		return st;
	if (!(c = cu.easy_init()))
		return go_fail(err, GO_ERR_INTERNAL, "HTTP: libcurl gave no handle (out of memory?)");
	for (i = 0; r->headers && r->headers[i]; i++)
		hdr = cu.slist_append(hdr, r->headers[i]);
	hdr = cu.slist_append(hdr, "Expect:");   /* no 100-continue round trip */
	cu.easy_setopt(c, CURLOPT_URL, r->url);
	cu.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	if (r->unix_path)
		cu.easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, r->unix_path);
	if (!strcmp(method, "HEAD"))
		cu.easy_setopt(c, CURLOPT_NOBODY, 1L);   /* a HEAD answer has no body to wait for */
	else
		cu.easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (r->body) {
		cu.easy_setopt(c, CURLOPT_POSTFIELDS, r->body);
		cu.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
	}
	if (r->aws_sigv4) {
		cu.easy_setopt(c, CURLOPT_AWS_SIGV4, r->aws_sigv4);
		cu.easy_setopt(c, CURLOPT_USERNAME, r->user);
		cu.easy_setopt(c, CURLOPT_PASSWORD, r->password);
	}
	cu.easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);   /* a redirected request is a mistake here */
	cu.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);         /* threads: no SIGALRM for DNS timeouts */
	cu.easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	snprintf(agent, sizeof(agent), "gpuorch/%s", gpuorch_version);
	cu.easy_setopt(c, CURLOPT_USERAGENT, agent);
	cu.easy_setopt(c, CURLOPT_CONNECTTIMEOUT, r->timeout_s < connect_s ? r->timeout_s : connect_s);
	cu.easy_setopt(c, CURLOPT_TIMEOUT, r->timeout_s);
	cu.easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	cu.easy_setopt(c, CURLOPT_WRITEFUNCTION, keep);
	cu.easy_setopt(c, CURLOPT_WRITEDATA, &k);
	cc = cu.easy_perform(c);
	if (cc == CURLE_OK) {
		cu.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &a->status);
	} else {
		a->failure = failure_of(cc);
		if (a->failure == HTTP_TOO_LONG)
			snprintf(a->why, sizeof(a->why), "the answer is longer than %zu bytes", k.max);
		else
			snprintf(a->why, sizeof(a->why), "%s", *errbuf ? errbuf : cu.easy_strerror(cc));
	}
	cu.slist_free_all(hdr);
	cu.easy_cleanup(c);
	return GO_OK;
}

enum go_status http_escape(struct strbuf *sb, const char *s, struct strbuf *err)
{
	enum go_status st;
	char *e;

	if ((st = loaded(err)) != GO_OK)
		return st;
	if (!(e = cu.easy_escape(NULL, s, 0)))
		return go_fail(err, GO_ERR_INTERNAL, "HTTP: libcurl could not escape a value (out of memory?)");
	strbuf_addstr(sb, e);
	cu.free(e);
	return GO_OK;
}
