/* http.h -- gpuorch's one HTTP client: a request, its answer, nothing else.
 *
 * slurmrestd (sched/), EC2 (cloud/) and --notify webhooks (report/) all go
 * through http_do(). libcurl is loaded on the first request (dlopen of
 * libcurl.so.4), so the commands that never speak HTTP -- most of them, and
 * every `gpuorch run` over SSH -- do not load it and the ~25 libraries it
 * pulls in (3.5 ms of every process start on the development VM).
 * GPUORCH_LIBCURL names another file to load instead of libcurl.so.4. */
#ifndef GPUORCH_HTTP_H
#define GPUORCH_HTTP_H

#include <stddef.h>
#include "core/error.h"
#include "core/strbuf.h"

struct http_request {
	const char *method;          /* NULL: POST with a body, GET without; "HEAD": no body awaited */
	const char *url;             /* http:// or https:// (no other protocol is allowed) */
	const char *unix_path;       /* or NULL: the server's Unix socket (the URL's host is then a label) */
	const char *const *headers;  /* NULL-terminated "Name: value" lines, or NULL */
	const char *body;            /* or NULL */
	size_t body_len;
	long timeout_s;              /* the whole request */
	long connect_timeout_s;      /* 0: 10 s, or timeout_s when that is less */
	const char *aws_sigv4;       /* AWS Signature V4 provider string ("aws:amz:REGION:ec2"), or NULL */
	const char *user, *password; /* with aws_sigv4: the access key and its secret */
	size_t max_answer;           /* 0: 4 MiB; a longer answer fails the request (HTTP_TOO_LONG) */
	int clip_answer;             /* 1: keep the first max_answer bytes of a longer answer, and go on */
};

/* how a request failed: what its callers' retry rules tell apart */
enum http_failure {
	HTTP_ANSWERED = 0,   /* not failed: an answer came (any status) */
	HTTP_NO_CONNECT,     /* refused, unreachable or not resolved */
	HTTP_TIMED_OUT,      /* the timeout passed */
	HTTP_SEND_ERROR,     /* cut off while sending */
	HTTP_RECV_ERROR,     /* cut off while receiving */
	HTTP_GOT_NOTHING,    /* the server closed without a word */
	HTTP_PARTIAL,        /* part of an answer, then the connection closed */
	HTTP_TOO_LONG,       /* the answer is longer than max_answer */
	HTTP_OTHER           /* TLS, protocol, anything else */
};

struct http_answer {
	long status;                 /* the HTTP status; 0 when no answer came */
	struct strbuf body;          /* the answer's body (STRBUF_INIT before the call; the caller releases it) */
	enum http_failure failure;   /* HTTP_ANSWERED, or how it failed */
	char why[256];               /* the failure in words (libcurl's), "" when none */
};

/* One request. GO_OK when it was made: a->failure says whether an answer
 * came, a->status what it was (any status: judging it is the caller's).
 * Not GO_OK only when no request could be made at all: libcurl cannot be
 * loaded (err says which package to install) or a handle cannot be had. */
enum go_status http_do(const struct http_request *r, struct http_answer *a, struct strbuf *err);

/* s percent-encoded as a form or query value (RFC 3986 unreserved bytes
 * kept), appended to sb. */
enum go_status http_escape(struct strbuf *sb, const char *s, struct strbuf *err);

#endif
