/* strbuf.h -- growable, always NUL-terminated string buffer (after git's strbuf).
 *
 * A strbuf is never NULL-backed once initialised with STRBUF_INIT: ->buf
 * points at a valid C string. Functions die only on out-of-memory; a size cap
 * (->max, 0 = none) protects buffers that capture remote output: appends past
 * it are dropped and ->truncated is set. */
#ifndef GPUORCH_STRBUF_H
#define GPUORCH_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
	size_t alloc;
	size_t len;
	size_t max;       /* 0: unlimited; else content is capped at max bytes */
	int truncated;    /* set when an append was cut at max */
	char *buf;
};

extern char strbuf_slopbuf[];
#define STRBUF_INIT { 0, 0, 0, 0, strbuf_slopbuf }

void strbuf_init(struct strbuf *sb, size_t hint);
void strbuf_release(struct strbuf *sb);
char *strbuf_detach(struct strbuf *sb, size_t *len);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_reset(struct strbuf *sb);
void strbuf_setlen(struct strbuf *sb, size_t len);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
void strbuf_trim(struct strbuf *sb);
/* Append a finite double in the fewest significant digits (15, 16 or 17)
 * that strtod reads back as the very same double: 880.608, not
 * 880.60799999999995. */
void strbuf_add_double(struct strbuf *sb, double x);
/* Append s quoted for a POSIX shell: the one quoting function of gpuorch. */
void strbuf_add_shell_quoted(struct strbuf *sb, const char *s);

/* Small helpers: a case-insensitive Levenshtein distance, the closest of
 * choices (NULL-terminated) to a mistyped word or NULL, and a
 * case-insensitive substring test (GPU names against spec targets). */
size_t str_edit_distance(const char *a, const char *b);
const char *str_suggest(const char *word, const char *const *choices);
int str_contains_ci(const char *hay, const char *needle);
/* memmem(3), portable: the first nlen-byte needle in hay, or NULL. */
const void *mem_find(const void *hay, size_t hlen, const void *needle, size_t nlen);

/* xmalloc & co: die with a message on out-of-memory. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
