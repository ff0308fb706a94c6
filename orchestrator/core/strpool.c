/* strpool.c -- strings kept once (strpool.h): a POSIX tsearch tree of the
 * kept strings, stored one after another in chunks of 64 KiB (a string
 * longer than a chunk gets a chunk of its own), freed all at once. */
#include "core/strpool.h"
#include "core/strbuf.h"

#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

#define CHUNK_BYTES (64 * 1024)

struct strpool_chunk {
	struct strpool_chunk *next;
	size_t used, size;
	char data[];
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* n bytes in the newest chunk, or in a new one */
static char *pool_room(struct strpool *p, size_t n)
{
	struct strpool_chunk *c = p->chunks;
	if (!c || c->size - c->used < n) {
		size_t size = n > CHUNK_BYTES ? n : CHUNK_BYTES;
		c = xmalloc(sizeof(*c) + size);
		c->used = 0;
		c->size = size;
		c->next = p->chunks;
		p->chunks = c;
		p->bytes += sizeof(*c);
	}
	c->used += n;
	p->bytes += n;
	return c->data + c->used - n;
}

const char *strpool_get(struct strpool *p, const char *s)
{
	void *at;
	char *copy;
	size_t n;
	if (!s)
		return NULL;
	at = tfind(s, &p->tree, cmp_str);
	if (at)
		return *(const char **)at;
	n = strlen(s) + 1;
	copy = pool_room(p, n);
	memcpy(copy, s, n);
	if (!tsearch(copy, &p->tree, cmp_str)) {
		fprintf(stderr, "fatal: out of memory keeping a string\n");
		abort();
	}
	p->n++;
	return copy;
}

void strpool_release(struct strpool *p)
{
	while (p->tree) {   /* POSIX has no tdestroy: the root, one at a time */
		const char *key = *(const char **)p->tree;
		tdelete(key, &p->tree, cmp_str);
	}
	while (p->chunks) {
		struct strpool_chunk *c = p->chunks;
		p->chunks = c->next;
		free(c);
	}
	p->bytes = 0;
	p->n = 0;
}
