/* test_strpool.c -- unit tests for strpool.c: each string kept once, NULL and
 * the empty string, a string longer than a chunk, many strings. */
#include "core/strpool.h"
#include "core/strbuf.h"
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	struct strpool p = STRPOOL_INIT;
	char buf[32], *big;
	const char *a, *b, *e, *first[3000];
	int i, ok;

	CHECK(strpool_get(&p, NULL) == NULL && p.n == 0, "NULL: NULL, nothing kept", "%d", p.n);
	strcpy(buf, "NVIDIA H100");
	a = strpool_get(&p, buf);
	strcpy(buf, "changed");
	CHECK(a != buf && !strcmp(a, "NVIDIA H100"), "a copy, not the caller's buffer", "%s", a);
	b = strpool_get(&p, "NVIDIA H100");
	CHECK(a == b && p.n == 1, "the same string twice: one copy", "%d", p.n);
	e = strpool_get(&p, "");
	CHECK(e && !*e && e == strpool_get(&p, "") && p.n == 2, "the empty string is kept once",
	      "%d", p.n);
	CHECK(strpool_get(&p, "NVIDIA H10") != a && p.n == 3, "a prefix is a string of its own",
	      "%d", p.n);

	/* longer than a chunk (64 KiB): a chunk of its own, strings after it still kept */
	big = xmalloc(200000);
	memset(big, 'x', 199999);
	big[199999] = '\0';
	a = strpool_get(&p, big);
	CHECK(a != big && strlen(a) == 199999 && a == strpool_get(&p, big),
	      "a string of 199,999 bytes: kept once", "%zu", strlen(a));
	b = strpool_get(&p, "after the big one");
	CHECK(!strcmp(b, "after the big one") && !strcmp(strpool_get(&p, "NVIDIA H100"), "NVIDIA H100"),
	      "strings after it are kept and found", "%s", b);
	free(big);

	/* 3,000 strings over several chunks, each asked for twice */
	for (i = 0; i < 3000; i++) {
		snprintf(buf, sizeof(buf), "run-%05d-%s", i, i % 2 ? "odd" : "even");
		first[i] = strpool_get(&p, buf);
	}
	for (i = 0, ok = 1; i < 3000; i++) {
		snprintf(buf, sizeof(buf), "run-%05d-%s", i, i % 2 ? "odd" : "even");
		ok &= strpool_get(&p, buf) == first[i] && !strcmp(first[i], buf);
	}
	CHECK(ok && p.n == 3000 + 5, "3,000 strings: each found again at its first copy", "%d", p.n);
	CHECK(p.bytes > 3000 * 14 && p.bytes < 3000 * 20 + 200000 + 200 * 1024,
	      "the bytes kept: the strings and the chunks' heads", "%zu", p.bytes);
	strpool_release(&p);
	CHECK(p.tree == NULL && p.chunks == NULL && p.n == 0 && p.bytes == 0,
	      "release empties the pool", "%d", p.n);
	a = strpool_get(&p, "again");
	CHECK(!strcmp(a, "again") && p.n == 1, "a released pool can be used again", "%d", p.n);
	strpool_release(&p);
	return check_summary();
}
