/* strbuf.c -- growable string buffer and the allocation wrappers. */
#include "core/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>
#include <stdint.h>
#include "core/banned.h"

char strbuf_slopbuf[1];

static void die_oom(size_t n)
{
	fprintf(stderr, "fatal: out of memory allocating %zu bytes\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die_oom(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		die_oom(n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		die_oom(n);
	return q;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = xmalloc(n);
	memcpy(p, s, n);
	return p;
}

char *xstrfmt(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	return strbuf_detach(&sb, NULL);
}

void strbuf_init(struct strbuf *sb, size_t hint)
{
	sb->alloc = sb->len = sb->max = 0;
	sb->truncated = 0;
	sb->buf = strbuf_slopbuf;
	if (hint)
		strbuf_grow(sb, hint);
}

void strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	sb->alloc = sb->len = 0;
	sb->truncated = 0;
	sb->buf = strbuf_slopbuf;
}

char *strbuf_detach(struct strbuf *sb, size_t *len)
{
	char *res;
	strbuf_grow(sb, 0);
	res = sb->buf;
	if (len)
		*len = sb->len;
	sb->alloc = sb->len = 0;
	sb->truncated = 0;
	sb->buf = strbuf_slopbuf;
	return res;
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
	int new_buf = !sb->alloc;
	size_t want = sb->len + extra + 1;
	if (want < sb->len)
		die_oom(SIZE_MAX);
	if (new_buf)
		sb->buf = NULL;
	if (want > sb->alloc) {
		size_t n = sb->alloc ? sb->alloc : 64;
		while (n < want)
			n = n * 3 / 2 + 16;
		sb->buf = xrealloc(sb->buf, n);
		sb->alloc = n;
	}
	if (new_buf)
		sb->buf[0] = '\0';
}

void strbuf_reset(struct strbuf *sb)
{
	strbuf_setlen(sb, 0);
	sb->truncated = 0;
}

void strbuf_setlen(struct strbuf *sb, size_t len)
{
	if (!sb->alloc && len == 0)
		return;
	sb->len = len;
	sb->buf[len] = '\0';
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	if (sb->max && sb->len + len > sb->max) {
		len = sb->max > sb->len ? sb->max - sb->len : 0;
		sb->truncated = 1;
	}
	strbuf_grow(sb, len);
	if (len)
		memcpy(sb->buf + sb->len, data, len);
	strbuf_setlen(sb, sb->len + len);
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, int c)
{
	char ch = (char)c;
	strbuf_add(sb, &ch, 1);
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
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
		strbuf_add(sb, small, (size_t)n);
		return;
	}
	{
		char *big = xmalloc((size_t)n + 1);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		strbuf_add(sb, big, (size_t)n);
		free(big);
	}
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void strbuf_trim(struct strbuf *sb)
{
	size_t b = 0, e = sb->len;
	while (e > 0 && isspace((unsigned char)sb->buf[e - 1]))
		e--;
	while (b < e && isspace((unsigned char)sb->buf[b]))
		b++;
	if (b)
		memmove(sb->buf, sb->buf + b, e - b);
	strbuf_setlen(sb, e - b);
}

/* x as strbuf_add_double writes it when x is a whole number of thousandths
 * from 0.001 to 1e9 (a timing sample: whole nanoseconds in microseconds, as
 * store/samples.h keeps them): the decimal ns/1000 reads back as x (x is
 * that quotient correctly rounded) and is what "%.15g" prints of x, so the
 * same text without a printf and a strtod per sample (most of a summary's
 * build). 0 when x is not such a number. */
static int add_thousandths(struct strbuf *sb, double x)
{
	char buf[24];
	long long ns, ip;
	int n = 0, frac, k;
	if (!(x >= 0.001 && x < 1e9))
		return 0;
	ns = (long long)(x * 1000.0 + 0.5);
	if ((double)ns / 1000.0 != x)
		return 0;
	ip = ns / 1000;
	frac = (int)(ns % 1000);
	n = snprintf(buf, sizeof(buf), "%lld", ip);
	if (frac) {
		buf[n++] = '.';
		for (k = 100; k && frac; k /= 10) {
			buf[n++] = (char)('0' + frac / k);
			frac %= k;
		}
	}
	strbuf_add(sb, buf, (size_t)n);
	return 1;
}

void strbuf_add_double(struct strbuf *sb, double x)
{
	char buf[40];
	int prec;
	if (add_thousandths(sb, x))
		return;
	for (prec = 15; prec < 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	if (prec == 17)
		snprintf(buf, sizeof(buf), "%.17g", x);
	strbuf_addstr(sb, buf);
}

void strbuf_add_shell_quoted(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			strbuf_addstr(sb, "'\\''");
		else
			strbuf_addch(sb, *s);
	}
	strbuf_addch(sb, '\'');
}

/* ---- small string helpers shared by the validators and the report ---- */

/* Levenshtein distance, case-insensitive, bounded to short words (else SIZE_MAX). */
size_t str_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t row[64];
	if (la >= 63 || lb >= 63)
		return SIZE_MAX;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost = tolower((unsigned char)a[i - 1]) !=
				      tolower((unsigned char)b[j - 1]);
			size_t best = diag + cost;
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* The choice closest to word: a clipped word ("base" for "baseline"), or within
 * an edit distance of 1 (words of 3 letters or less) or 2. NULL when none is close. */
const char *str_suggest(const char *word, const char *const *choices)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1, limit = strlen(word) <= 3 ? 1 : 2;
	const char *const *ch;
	/* a clipped word ("base" for "baseline") */
	for (ch = choices; strlen(word) >= 3 && *ch; ch++)
		if (!strncmp(*ch, word, strlen(word)))
			return *ch;
	for (; *choices; choices++) {
		size_t d = str_edit_distance(word, *choices);
		if (d < best_d) {
			best_d = d;
			best = *choices;
		}
	}
	return best_d <= limit ? best : NULL;
}

/* Case-insensitive substring; an empty needle matches, a NULL never does. */
int str_contains_ci(const char *hay, const char *needle)
{
	size_t n;
	if (!hay || !needle)
		return 0;
	n = strlen(needle);
	for (; *hay; hay++)
		if (!strncasecmp(hay, needle, n))
			return 1;
	return n == 0;
}

/* memmem(3) is a GNU extension: a small portable one. */
const void *mem_find(const void *hay, size_t hlen, const void *needle, size_t nlen)
{
	const char *h = hay;
	size_t i;

	if (!nlen || nlen > hlen)
		return NULL;
	for (i = 0; i + nlen <= hlen; i++)
		if (h[i] == *(const char *)needle && !memcmp(h + i, needle, nlen))
			return h + i;
	return NULL;
}
