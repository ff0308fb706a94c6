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
};

static void key_clear(struct hostdelta_key *k)
{
	free(k->items);
	free(k->text);
	k->items = NULL;
	k->text = NULL;
	k->n = k->alloc = 0;
	k->is_arr = 0;
}

static struct hostdelta_key *key_get(struct hostdelta *d, const char *key)
{
	int i;
	for (i = 0; i < d->n; i++)
		if (!strcmp(d->k[i].key, key))
			return &d->k[i];
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
	if (list) {
		cJSON_AddItemToObject(part(ins, 0), k->key, list);
		free(k->items);
		k->items = now;
		k->n = pos;
		k->alloc = cap;
	}
	return 1;
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
