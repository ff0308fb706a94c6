/* hostdelta.c -- a host object's change since it was last journaled (hostdelta.h). */
#include "store/hostdelta.h"
#include "core/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

struct hostdelta_key {
	char *key;
	int is_arr;
	const cJSON **items;   /* is_arr: the array's items as journaled, in order */
	int n, alloc;
	char *text;            /* !is_arr: the value as journaled */
	int seen;
	const cJSON **told;    /* is_arr: appends told since (hostdelta_appended), in order */
	int ntold, atold;
	int tracked;           /* appends are told: the ends show a change (no walk) */
};

static void key_clear(struct hostdelta_key *k)
{
	free(k->items);
	free(k->text);
	free(k->told);
	k->items = NULL;
	k->text = NULL;
	k->told = NULL;
	k->n = k->alloc = k->ntold = k->atold = 0;
	k->is_arr = k->tracked = 0;
}

static struct hostdelta_key *key_find(struct hostdelta *d, const char *key)
{
	int i;
	for (i = 0; i < d->n; i++)
		if (!strcmp(d->k[i].key, key))
			return &d->k[i];
	return NULL;
}

static struct hostdelta_key *key_get(struct hostdelta *d, const char *key)
{
	struct hostdelta_key *k = key_find(d, key);
	if (k)
		return k;
	if (d->n == d->alloc) {
		d->alloc = d->alloc ? 2 * d->alloc : 16;
		d->k = xrealloc(d->k, (size_t)d->alloc * sizeof(*d->k));
	}
	memset(&d->k[d->n], 0, sizeof(d->k[d->n]));
	d->k[d->n].key = xstrdup(key);
	return &d->k[d->n++];
}

/* The shadow of an array: its items now. */
static void take_items(struct hostdelta_key *k, const cJSON *arr)
{
	const cJSON *c;
	free(k->text);
	k->text = NULL;
	k->is_arr = 1;
	k->n = 0;
	k->ntold = 0;   /* the walk saw them */
	for (c = arr->child; c; c = c->next) {
		if (k->n == k->alloc) {
			k->alloc = k->alloc ? 2 * k->alloc : 16;
			k->items = xrealloc(k->items, (size_t)k->alloc * sizeof(*k->items));
		}
		k->items[k->n++] = c;
	}
}

static void take_text(struct hostdelta_key *k, char *text)
{
	key_clear(k);
	k->text = text;
}

static char *print(const cJSON *v)
{
	char *t = cJSON_PrintUnformatted(v);
	if (!t) {
		fprintf(stderr, "fatal: out of memory serialising the run record\n");
		abort();
	}
	return t;
}

void hostdelta_reset(struct hostdelta *d, const cJSON *host)
{
	const cJSON *it;
	hostdelta_forget(d);
	cJSON_ArrayForEach(it, host) {
		struct hostdelta_key *k;
		if (!it->string)
			continue;
		k = key_get(d, it->string);
		if (cJSON_IsArray(it))
			take_items(k, it);
		else
			take_text(k, print(it));
	}
}

void hostdelta_forget(struct hostdelta *d)
{
	int i;
	for (i = 0; i < d->n; i++) {
		key_clear(&d->k[i]);
		free(d->k[i].key);
	}
	d->n = 0;
}

void hostdelta_release(struct hostdelta *d)
{
	hostdelta_forget(d);
	free(d->k);
	memset(d, 0, sizeof(*d));
}

static cJSON *part(cJSON **slot, int array)
{
	if (!*slot)
		*slot = array ? cJSON_CreateArray() : cJSON_CreateObject();
	return *slot;
}

/* The items of arr that the shadow k lacks, into ins[key]; 0 when an item
 * the shadow holds is gone from arr (the caller then sets it whole). One
 * walk over arr: the new shadow is gathered on the way (a second walk per
 * step was a third of the controller's time at 3,000 steps). */
static int array_inserts(struct hostdelta_key *k, const cJSON *arr, cJSON **ins)
{
	const cJSON *c;
	cJSON *list = NULL;
	const cJSON **now = NULL;
	int j = 0, pos = 0, cap = 0;
	for (c = arr->child; c; c = c->next, pos++) {
		cJSON *pair;
		if (!list && j < k->n && c == k->items[j]) {
			j++;
			continue;
		}
		if (!list) {   /* the first new item: the shadow's first pos items are arr's */
			list = cJSON_CreateArray();
			cap = 2 * (pos + 1) + 16;
			now = xmalloc((size_t)cap * sizeof(*now));
			if (pos)
				memcpy(now, k->items, (size_t)pos * sizeof(*now));
		}
		if (pos == cap) {
			cap *= 2;
			now = xrealloc(now, (size_t)cap * sizeof(*now));
		}
		now[pos] = c;
		if (j < k->n && c == k->items[j]) {
			j++;
			continue;
		}
		pair = cJSON_CreateArray();
		cJSON_AddItemToArray(pair, cJSON_CreateNumber(pos));
		cJSON_AddItemReferenceToArray(pair, (cJSON *)c);
		cJSON_AddItemToArray(list, pair);
	}
	if (j < k->n) {
		cJSON_Delete(list);
		free(now);
		return 0;
	}
	k->ntold = 0;   /* the walk saw them */
	if (list) {
		cJSON_AddItemToObject(part(ins, 0), k->key, list);
		free(k->items);
		k->items = now;
		k->n = pos;
		k->alloc = cap;
	}
	return 1;
}

/* The told appends of a tracked array into ins[key], without a walk: 1 when
 * the array's ends are what the shadow and the appends say (its first item
 * the shadow's first, each told item after the one before it, the last told
 * item -- or the shadow's last -- the array's last), else 0 (walk). */
static int told_inserts(struct hostdelta_key *k, const cJSON *arr, cJSON **ins)
{
	const cJSON *first = arr->child, *last = first ? first->prev : NULL, *before;
	cJSON *list;
	int i;
	if (!k->tracked || first != (k->n ? k->items[0] : k->ntold ? k->told[0] : NULL) ||
	    last != (k->ntold ? k->told[k->ntold - 1] : k->n ? k->items[k->n - 1] : NULL))
		return 0;
	before = k->n ? k->items[k->n - 1] : NULL;
	for (i = 0; i < k->ntold; before = k->told[i++])
		if (before ? k->told[i]->prev != before : k->told[i] != first)
			return 0;
	if (!k->ntold)
		return 1;
	list = cJSON_CreateArray();
	if (k->n + k->ntold > k->alloc) {
		k->alloc = 2 * (k->n + k->ntold) + 16;
		k->items = xrealloc(k->items, (size_t)k->alloc * sizeof(*k->items));
	}
	for (i = 0; i < k->ntold; i++) {
		cJSON *pair = cJSON_CreateArray();
		cJSON_AddItemToArray(pair, cJSON_CreateNumber(k->n));
		cJSON_AddItemReferenceToArray(pair, (cJSON *)k->told[i]);
		cJSON_AddItemToArray(list, pair);
		k->items[k->n++] = k->told[i];
	}
	k->ntold = 0;
	cJSON_AddItemToObject(part(ins, 0), k->key, list);
	return 1;
}

/* GPUORCH_CHECK_DELTA: the shadow after told_inserts is the array, item by
 * item (what the ends cannot show); else the process ends, naming the key. */
static void check_told(const struct hostdelta_key *k, const cJSON *arr)
{
	static int on = -1;
	const cJSON *c;
	int j = 0;
	if (on < 0)
		on = getenv("GPUORCH_CHECK_DELTA") != NULL;
	if (!on)
		return;
	for (c = arr->child; c && j < k->n && c == k->items[j]; c = c->next)
		j++;
	if (c || j != k->n) {
		fprintf(stderr, "fatal: the run record's \"%s\" changed in the middle without the "
			"journal being told (item %d of %d; GPUORCH_CHECK_DELTA)\n", k->key, j, k->n);
		abort();
	}
}

void hostdelta_appended(struct hostdelta *d, const char *key, const cJSON *item)
{
	struct hostdelta_key *k = key_find(d, key);
	if (!k || !k->is_arr)
		return;
	if (k->ntold == k->atold) {
		k->atold = k->atold ? 2 * k->atold : 16;
		k->told = xrealloc(k->told, (size_t)k->atold * sizeof(*k->told));
	}
	k->told[k->ntold++] = item;
	k->tracked = 1;
}

cJSON *hostdelta_diff(struct hostdelta *d, const cJSON *host)
{
	cJSON *set = NULL, *del = NULL, *ins = NULL, *out;
	const cJSON *it;
	int i;

	for (i = 0; i < d->n; i++)
		d->k[i].seen = 0;
	cJSON_ArrayForEach(it, host) {
		struct hostdelta_key *k;
		if (!it->string)
			continue;
		k = key_get(d, it->string);
		k->seen = 1;
		if (cJSON_IsArray(it)) {
			if (k->is_arr && told_inserts(k, it, &ins)) {
				check_told(k, it);
				continue;
			}
			if (k->is_arr && array_inserts(k, it, &ins))
				continue;
			cJSON_AddItemReferenceToObject(part(&set, 0), it->string, (cJSON *)it);
			take_items(k, it);
		} else {
			char *text = print(it);
			if (!k->is_arr && k->text && !strcmp(text, k->text)) {
				free(text);
				continue;
			}
			cJSON_AddItemReferenceToObject(part(&set, 0), it->string, (cJSON *)it);
			take_text(k, text);
		}
	}
	for (i = 0; i < d->n; i++)
		if (!d->k[i].seen) {
			cJSON_AddItemToArray(part(&del, 1), cJSON_CreateString(d->k[i].key));
			key_clear(&d->k[i]);
			free(d->k[i].key);
			d->k[i--] = d->k[--d->n];
		}
	if (!set && !del && !ins)
		return NULL;
	out = cJSON_CreateObject();
	if (set)
		cJSON_AddItemToObject(out, "set", set);
	if (del)
		cJSON_AddItemToObject(out, "del", del);
	if (ins)
		cJSON_AddItemToObject(out, "ins", ins);
	return out;
}
