/* jsonlean.c -- a cJSON tree from libyajl's callbacks, number arrays of one key as blocks (jsonlean.h).
 *
 * DESIGN: one yajl parse of the whole text in a single yajl_parse call, so
 * every token yajl hands over points into the text (a block's text is the
 * span from its first number to its last). The callbacks keep a stack of the
 * open containers; each value is attached to the innermost one as it comes
 * (its key as the node's `string`, as cJSON's own parser does), so a parse
 * stopped anywhere frees everything with the root. Inside a block only
 * numbers are taken; anything else stops the parse (the caller's cJSON parse
 * then reads the text). */
#include "core/jsonlean.h"
#include "core/strbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>
#include "core/banned.h"

#define NEST_MAX 1000   /* cJSON's CJSON_NESTING_LIMIT: one more open container fails there */
#define NUM_MAX 63      /* the characters of a number cJSON reads (its number_c_string) */

struct lean {
	struct json_lean *out;
	const char *text, *text_end;
	const char *block_key, *block_parent;
	cJSON **stack;      /* the open containers, innermost last */
	int depth;
	char *key;          /* the key of the next value in an object (cJSON_malloc'd) */
	int in_block;
	char *block_name;   /* the open block's key */
	double *v;          /* every block's numbers so far (out->values at the end) */
	int n, cap, at;     /* at: where the open block's start */
	const char *first, *last;   /* the open block's numbers: first start, last end */
};

static const double pow10_exact[16] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8,
					1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15 };

/* whether c is a decimal digit */
#define IS_DIGIT(c) ((unsigned)((c) - '0') < 10u)

int json_lean_number(const char *s, size_t len, double *v)
{
	char buf[NUM_MAX + 1];
	const char *p = s, *end = s + len, *q;
	uint64_t m = 0;   /* wraps past 19 digits: used only for 15 or fewer */
	int digits, frac = 0, neg = 0;

	if (!len || len > NUM_MAX)
		return 0;
	if (*p == '-') {
		neg = 1;
		p++;
	}
	for (q = p; p < end && IS_DIGIT(*p); p++)
		m = m * 10 + (uint64_t)(*p - '0');
	digits = (int)(p - q);
	if (p < end && *p == '.') {
		for (q = ++p; p < end && IS_DIGIT(*p); p++)
			m = m * 10 + (uint64_t)(*p - '0');
		frac = (int)(p - q);
		digits += frac;
	}
	if (p == end && digits && digits <= 15) {
		/* m < 10^15 and 10^frac are exact: their quotient, correctly
		 * rounded, is the double nearest the decimal, as strtod's */
		double x = frac > 0 ? (double)m / pow10_exact[frac] : (double)m;
		*v = neg ? -x : x;
		return 1;
	}
	memcpy(buf, s, len);
	buf[len] = '\0';
	*v = strtod(buf, NULL);
	return 1;
}

static char *copy_bytes(const unsigned char *s, size_t len)
{
	char *c = cJSON_malloc(len + 1);
	if (!c)
		return NULL;
	memcpy(c, s, len);
	c[len] = '\0';
	return c;
}

/* a node of type t that owns the cJSON_malloc'd text s (a string, or raw JSON) */
static cJSON *owning(int t, char *s)
{
	cJSON *item;
	if (!s)
		return NULL;
	item = cJSON_CreateNull();
	if (!item) {
		cJSON_free(s);
		return NULL;
	}
	item->type = t;
	item->valuestring = s;
	return item;
}

/* item into the innermost open container (or as the root); 0 when it cannot be */
static int attach(struct lean *l, cJSON *item)
{
	cJSON *top;
	if (!item)
		return 0;
	if (!l->depth) {
		if (l->out->tree) {
			cJSON_Delete(item);
			return 0;
		}
		l->out->tree = item;
		return 1;
	}
	top = l->stack[l->depth - 1];
	if (cJSON_IsObject(top)) {
		if (!l->key) {
			cJSON_Delete(item);
			return 0;
		}
		item->string = l->key;
		l->key = NULL;
	}
	return cJSON_AddItemToArray(top, item) ? 1 : (cJSON_Delete(item), 0);
}

static int open_container(struct lean *l, cJSON *item)
{
	if (l->depth >= NEST_MAX) {
		cJSON_Delete(item);
		return 0;
	}
	if (!attach(l, item))
		return 0;
	l->stack[l->depth++] = item;
	return 1;
}

static int on_null(void *ctx)
{
	struct lean *l = ctx;
	return !l->in_block && attach(l, cJSON_CreateNull());
}

static int on_bool(void *ctx, int b)
{
	struct lean *l = ctx;
	return !l->in_block && attach(l, cJSON_CreateBool(b));
}

static int on_number(void *ctx, const char *s, size_t len)
{
	struct lean *l = ctx;
	double v;
	if (!json_lean_number(s, len, &v))
		return 0;
	if (!l->in_block)
		return attach(l, cJSON_CreateNumber(v));
	if (s < l->text || s + len > l->text_end)
		return 0;   /* not in the text: the span would not be the block's */
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16384;
		l->v = xrealloc(l->v, (size_t)l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = v;
	if (!l->first)
		l->first = s;
	l->last = s + len;
	return 1;
}

static int on_string(void *ctx, const unsigned char *s, size_t len)
{
	struct lean *l = ctx;
	return !l->in_block && attach(l, owning(cJSON_String, copy_bytes(s, len)));
}

static int on_start_map(void *ctx)
{
	struct lean *l = ctx;
	return !l->in_block && open_container(l, cJSON_CreateObject());
}

static int on_map_key(void *ctx, const unsigned char *s, size_t len)
{
	struct lean *l = ctx;
	cJSON_free(l->key);
	l->key = copy_bytes(s, len);
	return l->key != NULL;
}

static int on_end_container(void *ctx)
{
	struct lean *l = ctx;
	if (!l->depth)
		return 0;
	l->depth--;
	return 1;
}

/* the array about to open is a block: under block_key in an object under block_parent */
static int is_block(const struct lean *l)
{
	const cJSON *top = l->depth ? l->stack[l->depth - 1] : NULL;
	return top && cJSON_IsObject(top) && l->key && top->string &&
	       !strcmp(l->key, l->block_key) && !strcmp(top->string, l->block_parent);
}

static int on_start_array(void *ctx)
{
	struct lean *l = ctx;
	if (l->in_block)
		return 0;
	if (!is_block(l))
		return open_container(l, cJSON_CreateArray());
	if (l->depth >= NEST_MAX)
		return 0;   /* a block is an array too: cJSON counts it (its fallback says why) */
	l->in_block = 1;
	l->block_name = l->key;
	l->key = NULL;
	l->at = l->n;
	l->first = l->last = NULL;
	return 1;
}

/* the block just read as a cJSON_Raw node of its text, its numbers kept beside */
static int close_block(struct lean *l)
{
	struct json_lean *o = l->out;
	size_t span = l->first ? (size_t)(l->last - l->first) : 0;
	char *raw = cJSON_malloc(span + 3);
	cJSON *item;
	if (!raw)
		return 0;
	raw[0] = '[';
	if (span)
		memcpy(raw + 1, l->first, span);
	raw[span + 1] = ']';
	raw[span + 2] = '\0';
	item = owning(cJSON_Raw, raw);
	if (!item)
		return 0;
	l->key = l->block_name;
	l->block_name = NULL;
	l->in_block = 0;
	if (!attach(l, item))
		return 0;
	if (o->nblocks == o->cap) {
		o->cap = o->cap ? 2 * o->cap : 16;
		o->blocks = xrealloc(o->blocks, (size_t)o->cap * sizeof(*o->blocks));
	}
	o->blocks[o->nblocks].text = item->valuestring;
	o->blocks[o->nblocks].at = l->at;
	o->blocks[o->nblocks++].n = l->n - l->at;
	return 1;
}

static int on_end_array(void *ctx)
{
	struct lean *l = ctx;
	return l->in_block ? close_block(l) : on_end_container(ctx);
}

static const yajl_callbacks tree_callbacks = {
	on_null, on_bool, NULL, NULL, on_number, on_string, on_start_map, on_map_key,
	on_end_container, on_start_array, on_end_array
};

/* a \u escape of a UTF-16 surrogate: yajl and cJSON decode those differently */
static int has_surrogate_escape(const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	while (p + 4 <= end && (p = memchr(p, '\\', (size_t)(end - p - 3))) != NULL) {
		if (p[1] == 'u' && (p[2] == 'd' || p[2] == 'D') && strchr("89abcdefABCDEF", p[3]))
			return 1;
		p += 2;   /* past the escape (an escaped backslash, too) */
	}
	return 0;
}

/* One yajl parse of text with callbacks cb on ctx; 1 when all of it was read. */
static int yajl_read(const yajl_callbacks *cb, void *ctx, const char *text, size_t len)
{
	yajl_handle h = yajl_alloc(cb, NULL, ctx);
	int ok;
	if (!h)
		return 0;
	ok = yajl_parse(h, (const unsigned char *)text, len) == yajl_status_ok &&
	     yajl_complete_parse(h) == yajl_status_ok;
	yajl_free(h);
	return ok;
}

int json_lean_parse(const char *text, size_t len, const char *block_key,
		    const char *block_parent, struct json_lean *out)
{
	struct lean l;
	int ok, i;

	memset(out, 0, sizeof(*out));
	if (has_surrogate_escape(text, len))
		return 0;
	memset(&l, 0, sizeof(l));
	l.out = out;
	l.text = text;
	l.text_end = text + len;
	l.block_key = block_key;
	l.block_parent = block_parent;
	l.stack = xmalloc(NEST_MAX * sizeof(*l.stack));
	ok = yajl_read(&tree_callbacks, &l, text, len) && out->tree && !l.depth && !l.in_block;
	free(l.stack);
	cJSON_free(l.key);
	cJSON_free(l.block_name);
	out->values = l.v;   /* the blocks' numbers stay where they are from here on */
	for (i = 0; i < out->nblocks; i++)
		out->blocks[i].v = out->values + out->blocks[i].at;
	if (!ok)
		json_lean_release(out);
	return ok;
}

void json_lean_release(struct json_lean *l)
{
	cJSON_Delete(l->tree);
	free(l->values);
	free(l->blocks);
	memset(l, 0, sizeof(*l));
}

/* ---- reading a block back ---- */

static _Thread_local const struct json_lean *open_lean;

void json_lean_open(const struct json_lean *l)
{
	open_lean = l;
}

void json_lean_close(void)
{
	open_lean = NULL;
}

struct numbers {
	double *v;
	int n, cap, depth;
};

static int num_number(void *ctx, const char *s, size_t len)
{
	struct numbers *x = ctx;
	double v;
	if (x->depth != 1 || !json_lean_number(s, len, &v))
		return 0;
	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 1024;
		x->v = xrealloc(x->v, (size_t)x->cap * sizeof(*x->v));
	}
	x->v[x->n++] = v;
	return 1;
}

static int num_start(void *ctx)
{
	struct numbers *x = ctx;
	return x->depth++ == 0;
}

static int num_end(void *ctx)
{
	struct numbers *x = ctx;
	x->depth--;
	return 1;
}

static const yajl_callbacks number_callbacks = {
	NULL, NULL, NULL, NULL, num_number, NULL, NULL, NULL, NULL, num_start, num_end
};

double *json_lean_numbers(const cJSON *raw, int *n)
{
	struct numbers x = { NULL, 0, 0, 0 };
	int i;
	*n = 0;
	if (!cJSON_IsRaw(raw) || !raw->valuestring)
		return NULL;
	for (i = 0; open_lean && i < open_lean->nblocks; i++)
		if (open_lean->blocks[i].text == raw->valuestring) {
			const struct json_block *b = &open_lean->blocks[i];
			double *v = xmalloc(((size_t)b->n + 1) * sizeof(*v));
			if (b->n)
				memcpy(v, b->v, (size_t)b->n * sizeof(*v));
			*n = b->n;
			return v;
		}
	/* a copy of a block (cJSON_Duplicate), or a tree no longer open: its text */
	if (!yajl_read(&number_callbacks, &x, raw->valuestring, strlen(raw->valuestring))) {
		free(x.v);
		return NULL;
	}
	*n = x.n;
	return x.v ? x.v : xcalloc(1, sizeof(double));
}
