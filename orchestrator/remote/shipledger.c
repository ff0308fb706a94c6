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
static void push(char ***v, int *n, int *alloc, const char *s, size_t len)
{
	if (*n == *alloc) {
		*alloc = *alloc ? 2 * *alloc : 64;
		*v = xrealloc(*v, sizeof(**v) * (size_t)*alloc);
	}
	(*v)[(*n)++] = xstrfmt("%.*s", (int)len, s);
}

/* sort, drop repeats */
static void tidy(char **v, int *n)
{
	int i, k = 0;
	if (*n)
		qsort(v, (size_t)*n, sizeof(*v), cmp_str);
	for (i = 0; i < *n; i++) {
		if (k && !strcmp(v[k - 1], v[i]))
			free(v[i]);
		else
			v[k++] = v[i];
	}
	*n = k;
}

static int find(char *const *v, int n, const char *sha256)
{
	return n && bsearch(&sha256, v, (size_t)n, sizeof(*v), cmp_str) != NULL;
}

/* The list of this kind kept for h, into v (sorted). */
static void load(const struct host *h, const char *kind, char ***v, int *n, int *alloc)
{
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	char *path = host_cache_path(h, kind);
	const char *p, *nl;

	if (path && access(path, R_OK) == 0 && fs_read_file(path, &text, &err) == GO_OK) {
		for (p = text.buf; *p; p = *nl ? nl + 1 : nl) {
			nl = strchr(p, '\n');
			if (!nl)
				nl = p + strlen(p);
			if (is_sha256(p, (size_t)(nl - p)))   /* anything else: not ours, ignored */
				push(v, n, alloc, p, (size_t)(nl - p));
		}
		tidy(*v, n);
	}
	free(path);
	strbuf_release(&text);
	strbuf_release(&err);
}

static void save(const struct host *h, const char *kind, char *const *v, int n)
{
	struct strbuf text = STRBUF_INIT;
	int i;
	for (i = 0; i < n; i++)
		strbuf_addf(&text, "%s\n", v[i]);
	host_cache_write(h, kind, text.buf, text.len);
	strbuf_release(&text);
}

void shipledger_load(const struct host *h, struct shipledger *l)
{
	memset(l, 0, sizeof(*l));
	load(h, "ledger", &l->hashes, &l->n, &l->alloc);
	load(h, "sent", &l->sent, &l->nsent, &l->sent_alloc);
}

int shipledger_has(const struct shipledger *l, const char *sha256)
{
	return find(l->hashes, l->n, sha256);
}

int shipledger_was_sent(const struct shipledger *l, const char *sha256)
{
	return find(l->sent, l->nsent, sha256);
}

void shipledger_sending(const struct host *h, struct shipledger *l, char *const *hashes, int n)
{
	int i, k = l->nsent;
	if (l->nsent + n > LEDGER_MAX) {
		for (i = 0; i < l->nsent; i++)
			free(l->sent[i]);
		l->nsent = k = 0;
	}
	for (i = 0; i < n; i++)
		if (!find(l->sent, k, hashes[i]))
			push(&l->sent, &l->nsent, &l->sent_alloc, hashes[i], strlen(hashes[i]));
	tidy(l->sent, &l->nsent);
	save(h, "sent", l->sent, l->nsent);
}

void shipledger_add_pack(const struct host *h, struct shipledger *l, const struct pack *p)
{
	int i, k = 0, n;

	if (l->n + p->nfiles > LEDGER_MAX) {
		for (i = 0; i < l->n; i++)
			free(l->hashes[i]);
		l->n = 0;
	}
	n = l->n;
	for (i = 0; i < p->nfiles; i++)
		if (!find(l->hashes, n, p->files[i].sha256))
			push(&l->hashes, &l->n, &l->alloc, p->files[i].sha256, SHA256_HEX_LEN);
	tidy(l->hashes, &l->n);
	save(h, "ledger", l->hashes, l->n);
	if (!l->nsent)
		return;
	/* what was sent and is held now is sent no more */
	for (i = 0; i < l->nsent; i++) {
		if (find(l->hashes, l->n, l->sent[i]))
			free(l->sent[i]);
		else
			l->sent[k++] = l->sent[i];
	}
	l->nsent = k;
	save(h, "sent", l->sent, l->nsent);
}

void shipledger_release(struct shipledger *l)
{
	int i;
	for (i = 0; i < l->n; i++)
		free(l->hashes[i]);
	free(l->hashes);
	for (i = 0; i < l->nsent; i++)
		free(l->sent[i]);
	free(l->sent);
	memset(l, 0, sizeof(*l));
}

int shipledger_agent_held(const struct host *h, const char *path)
{
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	char *cpath = host_cache_path(h, "agent");
	int held = path && cpath && access(cpath, R_OK) == 0 &&
		   fs_read_file(cpath, &text, &err) == GO_OK && !strcmp(text.buf, path);
	free(cpath);
	strbuf_release(&text);
	strbuf_release(&err);
	return held;
}

void shipledger_agent_seen(const struct host *h, const char *path)
{
	char *cpath;
	if (path) {
		host_cache_write(h, "agent", path, strlen(path));
		return;
	}
	cpath = host_cache_path(h, "agent");
	if (cpath)
		unlink(cpath);
	free(cpath);
}
