/* shipledger.c -- what the controller knows a host holds (shipledger.h). */
#include "remote/shipledger.h"
#include "remote/probecache.h"
#include "core/fsutil.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/banned.h"

/* A ledger past this many hashes starts again from the latest content: it
 * is a shortcut, not an archive. */
#define LEDGER_MAX 65536

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_sha256(const char *s, size_t n)
{
	size_t i;
	if (n != SHA256_HEX_LEN)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* room grows by doubling: a ledger near its cap loads in linear time, not
 * with one reallocation (a copy, under ASan and valgrind) per hash */
static void push(struct shipledger *l, const char *s, size_t n)
{
	if (l->n == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 64;
		l->hashes = xrealloc(l->hashes, sizeof(*l->hashes) * (size_t)l->alloc);
	}
	l->hashes[l->n++] = xstrfmt("%.*s", (int)n, s);
}

/* sort, drop repeats */
static void tidy(struct shipledger *l)
{
	int i, k = 0;
	if (l->n)
		qsort(l->hashes, (size_t)l->n, sizeof(*l->hashes), cmp_str);
	for (i = 0; i < l->n; i++) {
		if (k && !strcmp(l->hashes[k - 1], l->hashes[i]))
			free(l->hashes[i]);
		else
			l->hashes[k++] = l->hashes[i];
	}
	l->n = k;
}

void shipledger_load(const struct host *h, struct shipledger *l)
{
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	char *path = host_cache_path(h, "ledger");
	const char *p, *nl;

	memset(l, 0, sizeof(*l));
	if (path && access(path, R_OK) == 0 && fs_read_file(path, &text, &err) == GO_OK) {
		for (p = text.buf; *p; p = *nl ? nl + 1 : nl) {
			nl = strchr(p, '\n');
			if (!nl)
				nl = p + strlen(p);
			if (is_sha256(p, (size_t)(nl - p)))   /* anything else: not ours, ignored */
				push(l, p, (size_t)(nl - p));
		}
		tidy(l);
	}
	free(path);
	strbuf_release(&text);
	strbuf_release(&err);
}

int shipledger_has(const struct shipledger *l, const char *sha256)
{
	return l->n && bsearch(&sha256, l->hashes, (size_t)l->n, sizeof(*l->hashes), cmp_str) != NULL;
}

void shipledger_add_pack(const struct host *h, struct shipledger *l, const struct pack *p)
{
	struct strbuf text = STRBUF_INIT;
	int i;

	if (l->n + p->nfiles > LEDGER_MAX) {
		for (i = 0; i < l->n; i++)
			free(l->hashes[i]);
		l->n = 0;
	}
	for (i = 0; i < p->nfiles; i++)
		if (!shipledger_has(l, p->files[i].sha256))
			push(l, p->files[i].sha256, SHA256_HEX_LEN);
	tidy(l);
	for (i = 0; i < l->n; i++)
		strbuf_addf(&text, "%s\n", l->hashes[i]);
	host_cache_write(h, "ledger", text.buf, text.len);
	strbuf_release(&text);
}

void shipledger_release(struct shipledger *l)
{
	int i;
	for (i = 0; i < l->n; i++)
		free(l->hashes[i]);
	free(l->hashes);
	memset(l, 0, sizeof(*l));
}
