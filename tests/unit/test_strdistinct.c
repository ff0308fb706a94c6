/* test_strdistinct.c -- unit tests for strdistinct.c: distinct strings in first-seen order. */
#include "core/strdistinct.h"
#include "check.h"

#include <string.h>

/* names (n of them) distinct are exactly want (m of them), in order */
static int is(const char **names, int n, const char *const *want, int m)
{
	int k = str_distinct(names, n), i;
	if (k != m)
		return 0;
	for (i = 0; i < m; i++)
		if (strcmp(names[i], want[i]))
			return 0;
	return 1;
}

int main(void)
{
	const char *none[1] = { "x" };
	const char *one[] = { "p" };
	const char *same[] = { "p", "p", "p", "p" };
	const char *mixed[] = { "q", "p", "q", "r", "p", "a", "r" };
	const char *sorted_desc[] = { "z", "y", "x", "y", "z" };
	const char *copies[4];
	char b1[] = "dup", b2[] = "dup";   /* equal strings at different addresses */
	static const char *const w_one[] = { "p" };
	static const char *const w_mixed[] = { "q", "p", "r", "a" };
	static const char *const w_desc[] = { "z", "y", "x" };
	static const char *const w_dup[] = { "dup", "other" };
	int i;

	CHECK(str_distinct(none, 0) == 0, "no names: none", "%s", "differs");
	CHECK(is(one, 1, w_one, 1), "one name: itself", "%s", "differs");
	CHECK(is(same, 4, w_one, 1), "all equal: one, the first", "%s", "differs");
	CHECK(is(mixed, 7, w_mixed, 4), "first occurrences, in the order first seen (not sorted)", "%s %s",
	      mixed[0], mixed[1]);
	CHECK(is(sorted_desc, 5, w_desc, 3), "a list sorted the other way keeps its order", "%s", "differs");
	copies[0] = b1, copies[1] = "other", copies[2] = b2, copies[3] = "other";
	CHECK(is(copies, 4, w_dup, 2) && copies[0] == b1, "equal contents are one name; the first pointer is kept",
	      "%p", (const void *)copies[0]);
	{
		static const char *many[2000];
		char buf[2000][8];
		int k;
		for (i = 0; i < 2000; i++) {
			snprintf(buf[i], sizeof(buf[i]), "n%d", (i * 7) % 1000);
			many[i] = buf[i];
		}
		k = str_distinct(many, 2000);
		for (i = 0; i < k && !strcmp(many[i], buf[i]); i++)
			;
		CHECK(k == 1000 && i == 1000, "2,000 names with each of 1,000 twice: the first 1,000, in order",
		      "%d distinct, %d in place", k, i);
	}
	return check_summary();
}
