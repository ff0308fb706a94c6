/* agent-util.c -- gpuorch-agent's small helpers: a growing string, checked
 * allocation, formatted strings and the fatal error of a bad invocation. */
#include "agent.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q) {
		fputs("gpuorch-agent: out of memory\n", stderr);
		_exit(3);
	}
	return q;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = xrealloc(NULL, n);
	memcpy(d, s, n);
	return d;
}

void sb_add(struct sb *s, const char *p, size_t n)
{
	if (s->len + n + 1 > s->cap) {
		size_t c = s->cap ? s->cap : 64;
		while (c < s->len + n + 1)
			c *= 2;
		s->buf = xrealloc(s->buf, c);
		s->cap = c;
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	s->buf[s->len] = '\0';
}

void sb_adds(struct sb *s, const char *p)
{
	sb_add(s, p, strlen(p));
}

static void sb_vaddf(struct sb *s, const char *fmt, va_list ap)
{
	va_list cp;
	int n;
	char small[256];

	va_copy(cp, ap);
	n = vsnprintf(small, sizeof(small), fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		sb_add(s, small, (size_t)n);
		return;
	}
	sb_add(s, "", 0);
	if (s->len + (size_t)n + 1 > s->cap) {
		s->buf = xrealloc(s->buf, s->len + (size_t)n + 1);
		s->cap = s->len + (size_t)n + 1;
	}
	vsnprintf(s->buf + s->len, (size_t)n + 1, fmt, ap);
	s->len += (size_t)n;
}

void sb_addf(struct sb *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(s, fmt, ap);
	va_end(ap);
}

void sb_free(struct sb *s)
{
	free(s->buf);
	s->buf = NULL;
	s->len = s->cap = 0;
}

char *xfmt(const char *fmt, ...)
{
	struct sb s = { 0 };
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(&s, fmt, ap);
	va_end(ap);
	sb_add(&s, "", 0);
	return s.buf;
}

/* die: runner.sh's die -- "runner: MESSAGE" on stderr, exit 2 (at once:
 * nothing is left to clean up, and a leak check would only see the paths
 * the caller had in hand) */
void die(const char *fmt, ...)
{
	va_list ap;
	fputs("runner: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(NULL);
	_exit(2);
}
