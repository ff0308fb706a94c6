/* jsonutil.c -- the one place gpuorch reads and writes JSON files (via cJSON). */
#include "core/jsonutil.h"
#include "core/fsutil.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

static void locate(const char *text, const char *at, int *line, int *col)
{
	const char *p;
	*line = 1;
	*col = 1;
	for (p = text; p < at && *p; p++) {
		if (*p == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

/* What is wrong at `at`, in words that quote none of the text. */
static const char *what_is_wrong(const char *text, size_t len, const char *at, int trailing)
{
	const char *p = text, *stop = text + len;
	if (trailing)
		return "more text follows the JSON value";
	while (p < stop && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	if (p >= stop || !*p)
		return "no JSON value at all (empty or only white space)";
	for (p = at; p < stop && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'); p++)
		;
	if (p >= stop || !*p)
		return "the text ends before the JSON value does (cut short?)";
	if (at == text && *at != '{' && *at != '[' && *at != '"')
		return "this is not JSON";
	return "not valid JSON here";
}

static enum go_status parse(const char *text, size_t len, const char *label, cJSON **out,
			    struct strbuf *err, int quote)
{
	const char *end = NULL;
	int trailing = 0;
	cJSON *j = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (j && end) {
		/* Only whitespace may follow the value (cJSON's own check needs a NUL
		 * inside len). */
		const char *p = end, *stop = text + len;
		while (p < stop && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
			p++;
		if (p < stop && *p) {
			cJSON_Delete(j);
			j = NULL;
			end = p;
			trailing = 1;
		}
	}
	if (!j) {
		int line, col;
		const char *at = end ? end : text;
		locate(text, at, &line, &col);
		if (quote)
			return go_fail(err, GO_ERR_IO, "%s:%d:%d: invalid JSON near '%.20s'", label,
				       line, col, at);
		return go_fail(err, GO_ERR_IO, "%s:%d:%d: invalid JSON: %s", label, line, col,
			       what_is_wrong(text, len, at, trailing));
	}
	*out = j;
	return GO_OK;
}

enum go_status json_parse(const char *text, size_t len, const char *label, cJSON **out,
			  struct strbuf *err)
{
	return parse(text, len, label, out, err, 1);
}

enum go_status json_parse_unquoted(const char *text, size_t len, const char *label, cJSON **out,
				   struct strbuf *err)
{
	return parse(text, len, label, out, err, 0);
}

/* buf with its comments (// to the end of the line, slash-star to
 * star-slash) outside strings turned into blanks, newlines kept: every
 * other byte stays where it was, so an error's line and column are the
 * file's. NULL, with *open_at the comment's start, when a block comment is
 * not closed. (cJSON_Minify drops comments too, but with every blank and
 * newline: the positions would be lost. It is the reference: see
 * json_parse_commented.) */
static char *blank_comments(const char *text, size_t len, const char **open_at)
{
	char *b = xmalloc(len + 1), *p, *end = b + len;
	memcpy(b, text, len);
	b[len] = '\0';
	for (p = b; p < end; p++) {
		if (*p == '"') {
			for (p++; p < end && *p != '"'; p++)
				if (*p == '\\' && p + 1 < end)
					p++;
		} else if (*p == '/' && p + 1 < end && p[1] == '/') {
			for (; p < end && *p != '\n'; p++)
				*p = ' ';
		} else if (*p == '/' && p + 1 < end && p[1] == '*') {
			char *start = p;
			for (; p + 1 < end && !(p[0] == '*' && p[1] == '/'); p++)
				if (*p != '\n')
					*p = ' ';
			if (p + 1 >= end) {
				*open_at = text + (start - b);
				free(b);
				return NULL;
			}
			p[0] = p[1] = ' ';
			p++;
		}
	}
	return b;
}

enum go_status json_parse_commented(const char *text, size_t len, const char *label, cJSON **out,
				    struct strbuf *err)
{
	const char *open_at = NULL;
	char *b, *m1, *m2;
	enum go_status st;
	int line, col, same;
	if (memchr(text, '\0', len) || !memchr(text, '/', len))
		return json_parse(text, len, label, out, err);
	if (!(b = blank_comments(text, len, &open_at))) {
		locate(text, open_at, &line, &col);
		return go_fail(err, GO_ERR_IO, "%s:%d:%d: a /* comment is not closed (no */ after it)",
			       label, line, col);
	}
	/* the blanked text must mean what cJSON_Minify makes of the original */
	m1 = xstrfmt("%.*s", (int)len, text);
	m2 = xstrdup(b);
	cJSON_Minify(m1);
	cJSON_Minify(m2);
	same = !strcmp(m1, m2);
	free(m1);
	free(m2);
	st = same ? json_parse(b, len, label, out, err)
		  : go_fail(err, GO_ERR_IO, "%s: its comments cannot be told apart from its JSON "
				"(cJSON_Minify reads them otherwise); remove them", label);
	free(b);
	return st;
}

enum go_status json_load_file(const char *path, cJSON **out, enum go_status kind,
			      struct strbuf *err)
{
	struct strbuf sb = STRBUF_INIT;
	enum go_status st = fs_read_file(path, &sb, err);
	if (st == GO_OK) {
		st = json_parse(sb.buf, sb.len, path, out, err);
		if (st != GO_OK)
			st = kind;
	}
	strbuf_release(&sb);
	return st;
}

void json_array_insert(cJSON *arr, int pos, cJSON *item)
{
	/* Debian 12's cJSON 1.7.15 drops an item cJSON_InsertItemInArray puts in
	 * the middle of an array: move the tail out and back instead. */
	int n = cJSON_GetArraySize(arr), k, ntail = n > pos ? n - (pos > 0 ? pos : 0) : 0;
	cJSON **tail = xcalloc((size_t)ntail + 1, sizeof(*tail));
	for (k = 0; k < ntail; k++)
		tail[k] = cJSON_DetachItemFromArray(arr, n - ntail);
	cJSON_AddItemToArray(arr, item);
	for (k = 0; k < ntail; k++)
		cJSON_AddItemToArray(arr, tail[k]);
	free(tail);
}

static enum go_status json_write(const char *path, const cJSON *j, int derived,
				 struct strbuf *err)
{
	char *text = cJSON_Print(j);
	enum go_status st;
	struct strbuf sb = STRBUF_INIT;
	if (!text)
		return go_fail(err, GO_ERR_INTERNAL, "cannot serialise JSON for '%s'", path);
	strbuf_addstr(&sb, text);
	strbuf_addch(&sb, '\n');
	free(text);
	st = derived ? fs_write_derived(path, sb.buf, sb.len, err)
		     : fs_write_atomic(path, sb.buf, sb.len, err);
	strbuf_release(&sb);
	return st;
}

enum go_status json_write_atomic(const char *path, const cJSON *j, struct strbuf *err)
{
	return json_write(path, j, 0, err);
}

enum go_status json_write_derived(const char *path, const cJSON *j, struct strbuf *err)
{
	return json_write(path, j, 1, err);
}

const char *json_str(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

double json_num(const cJSON *obj, const char *key, double fallback)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsNumber(v) ? v->valuedouble : fallback;
}

int json_has_num(const cJSON *obj, const char *key)
{
	return cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(obj, key));
}

const cJSON *json_path(const cJSON *root, const char *dotted)
{
	const cJSON *cur = root;
	const char *p = dotted;
	char key[128];
	while (cur && *p) {
		size_t n = strcspn(p, ".");
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, p, n);
		key[n] = '\0';
		if (cJSON_IsArray(cur)) {
			char *endp;
			long idx = strtol(key, &endp, 10);
			cur = (*endp || idx < 0) ? NULL : cJSON_GetArrayItem(cur, (int)idx);
		} else {
			cur = cJSON_GetObjectItemCaseSensitive(cur, key);
		}
		p += n;
		if (*p == '.')
			p++;
	}
	return cur;
}

static void *must(void *p)
{
	if (!p)
		xmalloc((size_t)-1 / 2); /* dies with an out-of-memory message */
	return p;
}

cJSON *json_add_obj(cJSON *parent, const char *key)
{
	return must(cJSON_AddObjectToObject(parent, key));
}

cJSON *json_add_arr(cJSON *parent, const char *key)
{
	return must(cJSON_AddArrayToObject(parent, key));
}

void json_add_str(cJSON *parent, const char *key, const char *val)
{
	if (val)
		must(cJSON_AddStringToObject(parent, key, val));
	else
		must(cJSON_AddNullToObject(parent, key));
}

void json_add_num(cJSON *parent, const char *key, double val)
{
	must(cJSON_AddNumberToObject(parent, key, val));
}

void json_add_bool(cJSON *parent, const char *key, int val)
{
	must(cJSON_AddBoolToObject(parent, key, val));
}

const char *json_type_name(const cJSON *v)
{
	if (cJSON_IsString(v))
		return "a string";
	if (cJSON_IsNumber(v))
		return "a number";
	if (cJSON_IsObject(v))
		return "an object";
	if (cJSON_IsArray(v))
		return "an array";
	if (cJSON_IsBool(v))
		return cJSON_IsTrue(v) ? "true" : "false";
	if (cJSON_IsNull(v))
		return "null";
	return "an invalid value";
}

void json_verror(struct strbuf *err, const char *label, const char *path, const char *fmt,
		 va_list ap)
{
	strbuf_reset(err);
	if (path && *path)
		strbuf_addf(err, "%s: '%s': ", label, path);
	else
		strbuf_addf(err, "%s: ", label);
	strbuf_vaddf(err, fmt, ap);
}
