/* spec-check.c -- the spec validator's generic helpers: messages that carry the
 * JSON path, and checks of keys, types, strings, integers, arches, paths and
 * what reaches nvcc's command line. Internal to orchestrator/spec/spec*.c. */
#include "spec/spec-int.h"

#include <ctype.h>
#include <math.h> /* isfinite only: no -lm needed */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/jsonutil.h"
#include "core/banned.h"

/* ---------------------------------------------------------------- messages */

enum go_status spec_bad(struct spec_ctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	json_verror(c->err, c->label, c->path.buf, fmt, ap);
	va_end(ap);
	return GO_ERR_SPEC;
}

size_t spec_push_key(struct spec_ctx *c, const char *key)
{
	size_t mark = c->path.len;
	if (mark)
		strbuf_addch(&c->path, '.');
	strbuf_addstr(&c->path, key);
	return mark;
}

size_t spec_push_index(struct spec_ctx *c, int i)
{
	size_t mark = c->path.len;
	strbuf_addf(&c->path, "[%d]", i);
	return mark;
}

void spec_pop(struct spec_ctx *c, size_t mark)
{
	strbuf_setlen(&c->path, mark);
}

static void add_choices(struct strbuf *sb, const char *const *choices)
{
	int i;
	for (i = 0; choices[i]; i++)
		strbuf_addf(sb, "%s'%s'", i ? (choices[i + 1] ? ", " : " or ") : "", choices[i]);
}

/* ---------------------------------------------------------------- checks */

int spec_has_ctrl(const char *s, int allow_newlines)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (allow_newlines && (ch == '\n' || ch == '\t'))
			continue;
		if (ch < 0x20 || ch == 0x7f)
			return 1;
	}
	return 0;
}

/* Unknown and duplicate keys of obj. */
enum go_status spec_check_keys(struct spec_ctx *c, const cJSON *obj, const char *const *allowed)
{
	const cJSON *it, *prev;
	for (it = obj->child; it; it = it->next) {
		const char *const *a;
		for (prev = obj->child; prev != it; prev = prev->next)
			if (!strcmp(prev->string, it->string))
				return spec_bad(c, "key '%s' appears twice", it->string);
		for (a = allowed; *a; a++)
			if (!strcmp(*a, it->string))
				break;
		if (!*a) {
			const char *s = str_suggest(it->string, allowed);
			struct strbuf sb = STRBUF_INIT;
			enum go_status st;
			if (s) {
				strbuf_addf(&sb, "did you mean '%s'?", s);
			} else {
				strbuf_addstr(&sb, "expected ");
				add_choices(&sb, allowed);
			}
			st = spec_bad(c, "unknown key '%s' (%s)", it->string, sb.buf);
			strbuf_release(&sb);
			return st;
		}
	}
	return GO_OK;
}

enum go_status spec_need_type(struct spec_ctx *c, const cJSON *v, int ok, const char *want)
{
	if (!ok)
		return spec_bad(c, "expected %s, found %s", want, json_type_name(v));
	return GO_OK;
}

/* A string member; *out stays NULL when absent and not required. */
enum go_status spec_get_string(struct spec_ctx *c, const cJSON *obj, const char *key,
			       int required, int allow_empty, char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	size_t mark;
	if (!v) {
		if (required)
			return spec_bad(c, "missing required key '%s'", key);
		return GO_OK;
	}
	mark = spec_push_key(c, key);
	TRY(spec_need_type(c, v, cJSON_IsString(v), "a string"));
	if (!allow_empty && !*v->valuestring)
		return spec_bad(c, "must not be empty");
	if (spec_has_ctrl(v->valuestring, !strcmp(key, "description")))
		return spec_bad(c, "must not contain control characters");
	spec_pop(c, mark);
	*out = xstrdup(v->valuestring);
	return GO_OK;
}

/* A whole number small enough to print exactly (no libm needed). */
static int is_integral(double v)
{
	return v >= -9e15 && v <= 9e15 && v == (double)(long long)v;
}

/* An integer member in [lo, hi]; *out keeps its default when absent. */
enum go_status spec_get_int(struct spec_ctx *c, const cJSON *obj, const char *key, int lo,
			    int hi, int required, int *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	size_t mark;
	if (!v) {
		if (required)
			return spec_bad(c, "missing required key '%s'", key);
		return GO_OK;
	}
	mark = spec_push_key(c, key);
	if (!cJSON_IsNumber(v) || !is_integral(v->valuedouble) ||
	    v->valuedouble < lo || v->valuedouble > hi) {
		if (cJSON_IsNumber(v))
			return spec_bad(c, "expected an integer from %d to %d, found %.17g", lo, hi,
				   v->valuedouble);
		return spec_bad(c, "expected an integer from %d to %d, found %s", lo, hi,
			   json_type_name(v));
	}
	spec_pop(c, mark);
	*out = (int)v->valuedouble;
	return GO_OK;
}

enum go_status spec_get_positive(struct spec_ctx *c, const cJSON *v)
{
	if (!cJSON_IsNumber(v))
		return spec_bad(c, "expected a positive number, found %s", json_type_name(v));
	if (!(v->valuedouble > 0) || !isfinite(v->valuedouble))
		return spec_bad(c, "expected a positive number, found %.17g", v->valuedouble);
	return GO_OK;
}

int spec_arch_parse(const char *s, int *num, int *specific)
{
	int n = 0, digits = 0;
	if (!s || strncmp(s, "sm_", 3))
		return 0;
	s += 3;
	if (*s == '0')
		return 0;
	while (isdigit((unsigned char)*s) && digits < 4) {
		n = n * 10 + (*s++ - '0');
		digits++;
	}
	if (digits < 2 || digits > 3)
		return 0;
	*specific = 0;
	if (*s == 'a') {
		*specific = 1;
		s++;
	}
	if (*s)
		return 0;
	*num = n;
	return 1;
}

enum go_status spec_check_arch(struct spec_ctx *c, const cJSON *v)
{
	int n, a;
	TRY(spec_need_type(c, v, cJSON_IsString(v), "a string like \"sm_90a\""));
	if (!spec_arch_parse(v->valuestring, &n, &a))
		return spec_bad(c, "'%s' is not an arch; expected a string like \"sm_89\" or \"sm_90a\"",
			   v->valuestring);
	return GO_OK;
}

int spec_is_c_identifier(const char *s)
{
	if (!*s || !(isalpha((unsigned char)*s) || *s == '_'))
		return 0;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return 0;
	return 1;
}

/* Names that become parts of file names and step ids. */
int spec_is_safe_name(const char *s, const char *extra)
{
	if (!*s || !isalnum((unsigned char)*s))
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr(extra, *s))
			return 0;
	return 1;
}

enum go_status spec_check_rel_path(struct spec_ctx *c, const char *p)
{
	const char *s = p;
	if (!*p)
		return spec_bad(c, "empty path");
	if (*p == '/')
		return spec_bad(c, "'%s' is absolute; give a path relative to the repository root", p);
	while (*s) {
		size_t n = strcspn(s, "/");
		if (n == 2 && !strncmp(s, "..", 2))
			return spec_bad(c, "'%s' leaves the repository ('..' is not allowed)", p);
		if (n == 0 || (n == 1 && *s == '.'))
			return spec_bad(c, "'%s' is not a plain relative path (no '.', empty or trailing components)",
				   p);
		s += n;
		if (*s == '/') {
			s++;
			if (!*s)
				return spec_bad(c, "'%s' is not a plain relative path (no '.', empty or trailing components)",
					   p);
		}
	}
	if (spec_has_ctrl(p, 0))
		return spec_bad(c, "'%s' contains control characters", p);
	return GO_OK;
}

/* Render a number as written: integers without ".0", others with the
 * fewest digits that read back as the same double. */
char *spec_render_num(double v)
{
	char buf[64];
	int prec;
	if (is_integral(v)) {
		snprintf(buf, sizeof(buf), "%.0f", v);
		return xstrdup(strcmp(buf, "-0") ? buf : "0");
	}
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return xstrdup(buf);
}

int spec_strv_has(char *const *v, const char *s)
{
	for (; v && *v; v++)
		if (!strcmp(*v, s))
			return 1;
	return 0;
}

/* An array of non-empty strings (NULL-terminated copy). */
/* nvcc runs its sub-commands through a shell and does not quote what it was
 * given (seen with nvcc 13.0: a source named 'x$(touch F).c' or a flag
 * '-DX=$(touch F)' runs touch). So whatever reaches nvcc's command line is
 * limited to characters no shell interprets. Returns the first bad one, or 0. */
static int nvcc_unsafe_char(const char *s, int allow_space)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (isalnum(ch) || strchr("_./+-=,:@%", ch) || (allow_space && ch == ' '))
			continue;
		return ch;
	}
	return 0;
}

enum go_status spec_check_nvcc_arg(struct spec_ctx *c, const char *what, const char *s,
				   int allow_space)
{
	int ch = nvcc_unsafe_char(s, allow_space);
	if (!ch)
		return GO_OK;
	return spec_bad(c, "%s '%s' contains '%c': nvcc passes its arguments through a shell "
		      "without quoting them, so they may only use letters, digits%s and _ . / + - = , : @ %%",
		   what, s, ch, allow_space ? ", spaces" : "");
}

enum go_status spec_get_str_array(struct spec_ctx *c, const cJSON *v, int allow_empty_array,
				  char ***out)
{
	int n, i = 0;
	const cJSON *it;
	TRY(spec_need_type(c, v, cJSON_IsArray(v), "an array of strings"));
	n = cJSON_GetArraySize(v);
	if (!n && !allow_empty_array)
		return spec_bad(c, "must not be empty");
	*out = xcalloc((size_t)n + 1, sizeof(char *));
	cJSON_ArrayForEach(it, v) {
		size_t mark = spec_push_index(c, i);
		TRY(spec_need_type(c, it, cJSON_IsString(it), "a string"));
		if (!*it->valuestring)
			return spec_bad(c, "must not be empty");
		if (spec_has_ctrl(it->valuestring, 0))
			return spec_bad(c, "must not contain control characters");
		spec_pop(c, mark);
		(*out)[i++] = xstrdup(it->valuestring);
	}
	return GO_OK;
}

/* An object of KEY -> number|string, rendered into kv pairs. */
enum go_status spec_get_kv(struct spec_ctx *c, const cJSON *v, int c_ident_keys,
			   struct spec_kv **out, int *nout)
{
	const cJSON *it, *prev;
	int i = 0;
	TRY(spec_need_type(c, v, cJSON_IsObject(v), "an object"));
	*out = xcalloc((size_t)cJSON_GetArraySize(v) + 1, sizeof(**out));
	cJSON_ArrayForEach(it, v) {
		size_t mark = spec_push_key(c, it->string);
		for (prev = v->child; prev != it; prev = prev->next)
			if (!strcmp(prev->string, it->string))
				return spec_bad(c, "key appears twice");
		if (c_ident_keys && !spec_is_c_identifier(it->string))
			return spec_bad(c, "'%s' is not a C identifier (letters, digits, '_'; not starting with a digit)",
				   it->string);
		if (!c_ident_keys && !spec_is_safe_name(it->string, "_-."))
			return spec_bad(c, "'%s' is not a valid parameter name (letters, digits, '_', '-', '.'; starting with a letter or digit)",
				   it->string);
		if (cJSON_IsNumber(it)) {
			if (!isfinite(it->valuedouble))
				return spec_bad(c, "expected a finite number");
			(*out)[i].value = spec_render_num(it->valuedouble);
		} else if (cJSON_IsString(it)) {
			if (spec_has_ctrl(it->valuestring, 0))
				return spec_bad(c, "must not contain control characters");
			(*out)[i].value = xstrdup(it->valuestring);
		} else {
			return spec_bad(c, "expected a number or a string, found %s", json_type_name(it));
		}
		(*out)[i].key = xstrdup(it->string);
		*nout = ++i;
		spec_pop(c, mark);
	}
	return GO_OK;
}

enum go_status spec_check_enum(struct spec_ctx *c, const char *val, const char *const *choices,
			       const char *what)
{
	const char *const *ch;
	const char *s;
	struct strbuf sb = STRBUF_INIT;
	enum go_status st;
	for (ch = choices; *ch; ch++)
		if (!strcmp(*ch, val))
			return GO_OK;
	s = str_suggest(val, choices);
	if (s) {
		strbuf_addf(&sb, "did you mean '%s'?", s);
	} else {
		strbuf_addstr(&sb, "expected ");
		add_choices(&sb, choices);
	}
	st = spec_bad(c, "unknown %s '%s' (%s)", what, val, sb.buf);
	strbuf_release(&sb);
	return st;
}

struct named {
	const char *s;
	int i;
};

static int by_name_then_index(const void *pa, const void *pb)
{
	const struct named *a = pa, *b = pb;
	int c = strcmp(a->s, b->s);
	return c ? c : (a->i > b->i) - (a->i < b->i);
}

int spec_first_repeat(const char *const *v, int n, int *first)
{
	struct named *w = xcalloc((size_t)(n > 0 ? n : 1), sizeof(*w));
	int i, k = 0, best = -1;
	for (i = 0; i < n; i++)
		if (v[i]) {
			w[k].s = v[i];
			w[k++].i = i;
		}
	qsort(w, (size_t)k, sizeof(*w), by_name_then_index);
	/* in a run of equal names the first is the earliest: the second repeats
	 * it (a third, later still, never wins over it) */
	for (i = 1; i < k; i++)
		if (!strcmp(w[i].s, w[i - 1].s) && (best < 0 || w[i].i < best)) {
			best = w[i].i;
			*first = w[i - 1].i;
		}
	free(w);
	return best;
}
