/* strindex.c -- a string's position in a fixed list, by binary search (strindex.h). */
#include "core/strindex.h"
#include "core/strbuf.h"

#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

struct strindex_ent {
	const char *s;
	int pos;
};

static int by_string_then_pos(const void *a, const void *b)
{
	const struct strindex_ent *x = a, *y = b;
	int c = strcmp(x->s, y->s);
	return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

void strindex_build(struct strindex *x, const char *const *names, int n)
{
	int i;
	x->n = 0;
	x->e = n > 0 ? xmalloc(sizeof(*x->e) * (size_t)n) : NULL;
	for (i = 0; i < n; i++)
		if (names[i]) {
			x->e[x->n].s = names[i];
			x->e[x->n++].pos = i;
		}
	if (x->n > 1)
		qsort(x->e, (size_t)x->n, sizeof(*x->e), by_string_then_pos);
}

int strindex_find(const struct strindex *x, const char *s)
{
	int lo = 0, hi = x->n;   /* the first entry not below s, in [lo, hi] */
	if (!s)
		return -1;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (strcmp(x->e[mid].s, s) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < x->n && !strcmp(x->e[lo].s, s) ? x->e[lo].pos : -1;
}

void strindex_release(struct strindex *x)
{
	free(x->e);
	x->e = NULL;
	x->n = 0;
}
