/* strdistinct.c -- the distinct strings of a list, in first-seen order (strdistinct.h). */
#include "core/strdistinct.h"
#include "core/strbuf.h"

#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

struct ent {
	const char *s;
	int pos;
};

static int by_string_then_pos(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;
	int c = strcmp(x->s, y->s);
	return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

int str_distinct(const char **names, int n)
{
	struct ent *e;
	unsigned char *keep;
	int i, k = 0;

	if (n <= 1)
		return n < 0 ? 0 : n;
	e = xmalloc(sizeof(*e) * (size_t)n);
	keep = xcalloc((size_t)n, 1);
	for (i = 0; i < n; i++) {
		e[i].s = names[i];
		e[i].pos = i;
	}
	qsort(e, (size_t)n, sizeof(*e), by_string_then_pos);
	for (i = 0; i < n; i++)
		if (!i || strcmp(e[i].s, e[i - 1].s))
			keep[e[i].pos] = 1;   /* the first of its run: the first seen */
	for (i = 0; i < n; i++)
		if (keep[i])
			names[k++] = names[i];
	free(e);
	free(keep);
	return k;
}
