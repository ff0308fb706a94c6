/* test_strindex.c -- unit tests for strindex.c: a string's lowest position in a fixed list. */
#include "core/strindex.h"
#include "check.h"

#include <stdio.h>
#include <string.h>

int main(void)
{
	struct strindex x;
	const char *names[] = { "step.b", "step.a", NULL, "step.c", "step.a", "" };
	static const char *many[2000];
	static char buf[2000][16];
	int i, ok;

	strindex_build(&x, names, 0);
	CHECK(strindex_find(&x, "step.a") == -1 && strindex_find(&x, NULL) == -1,
	      "an empty index finds nothing", "%s", "found");
	strindex_release(&x);

	strindex_build(&x, names, 6);
	CHECK(strindex_find(&x, "step.b") == 0, "the first name: 0", "%d", strindex_find(&x, "step.b"));
	CHECK(strindex_find(&x, "step.c") == 3, "a name after a NULL keeps its position", "%d",
	      strindex_find(&x, "step.c"));
	CHECK(strindex_find(&x, "step.a") == 1, "a name listed twice: its lowest position", "%d",
	      strindex_find(&x, "step.a"));
	CHECK(strindex_find(&x, "") == 5, "the empty string is a name like any other (the last)", "%d",
	      strindex_find(&x, ""));
	CHECK(strindex_find(&x, "step.") == -1 && strindex_find(&x, "step.a.") == -1 &&
	      strindex_find(&x, "step.d") == -1 && strindex_find(&x, "a") == -1,
	      "a prefix, an extension, a name past the last and before the first: none", "%s", "found");
	CHECK(strindex_find(&x, NULL) == -1, "NULL: none", "%s", "found");
	strindex_release(&x);

	for (i = 0; i < 2000; i++) {
		snprintf(buf[i], sizeof(buf[i]), "s%d", (i * 7) % 1000);   /* each twice */
		many[i] = buf[i];
	}
	strindex_build(&x, many, 2000);
	for (i = 0, ok = 0; i < 1000; i++)
		ok += strindex_find(&x, buf[i]) == i;
	CHECK(ok == 1000, "2,000 names with each of 1,000 twice: each found at its first position",
	      "%d of 1000", ok);
	CHECK(strindex_find(&x, "s1000") == -1, "a name not listed among 2,000: none", "%d",
	      strindex_find(&x, "s1000"));
	strindex_release(&x);
	return check_summary();
}
