/* spec.c -- load an experiment spec (docs/spec.md) and validate all of it.
 *
 * Design: one pass over the parsed cJSON tree that validates and fills
 * struct spec at the same time, stopping at the first problem. A struct
 * ctx carries the label (the file name in messages) and the JSON path of
 * the value being looked at, pushed and popped as the walk goes down
 * ("steps[2].program"), so every message reads
 * "FILE: 'steps[2].program': what is wrong". Every object's keys are checked
 * against the keys it may have before its values are read, so a typo is
 * reported as a typo (with a suggestion) rather than as a missing field.
 * The struct is allocated zeroed, so spec_free() can free a half-built one. */
#include "spec.h"

#include <ctype.h>
#include <math.h> /* isfinite only: no -lm needed */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include "fsutil.h"
#include "jsonutil.h"
#include "banned.h"

#define TIMEOUT_MAX 86400
#define DEFAULT_TIMEOUT_S 600
#define NAME_MAX_LEN 100
#define SLUG_MAX_LEN 60

struct ctx {
	const char *label;
	const char *root;
	int check_files;
	struct strbuf *err;
	struct strbuf path;     /* JSON path of the current value */
	struct spec *s;
};

#define TRY(x) do { enum go_status try_st_ = (x); if (try_st_ != GO_OK) return try_st_; } while (0)

/* ---------------------------------------------------------------- messages */

static enum go_status bad(struct ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static enum go_status bad(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	json_verror(c->err, c->label, c->path.buf, fmt, ap);
	va_end(ap);
	return GO_ERR_SPEC;
}

static size_t push_key(struct ctx *c, const char *key)
{
	size_t mark = c->path.len;
	if (mark)
		strbuf_addch(&c->path, '.');
	strbuf_addstr(&c->path, key);
	return mark;
}

static size_t push_index(struct ctx *c, int i)
{
	size_t mark = c->path.len;
	strbuf_addf(&c->path, "[%d]", i);
	return mark;
}

static void pop(struct ctx *c, size_t mark)
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

static int has_ctrl(const char *s, int allow_newlines)
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
static enum go_status check_keys(struct ctx *c, const cJSON *obj, const char *const *allowed)
{
	const cJSON *it, *prev;
	for (it = obj->child; it; it = it->next) {
		const char *const *a;
		for (prev = obj->child; prev != it; prev = prev->next)
			if (!strcmp(prev->string, it->string))
				return bad(c, "key '%s' appears twice", it->string);
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
			st = bad(c, "unknown key '%s' (%s)", it->string, sb.buf);
			strbuf_release(&sb);
			return st;
		}
	}
	return GO_OK;
}

static enum go_status need_type(struct ctx *c, const cJSON *v, int ok, const char *want)
{
	if (!ok)
		return bad(c, "expected %s, found %s", want, json_type_name(v));
	return GO_OK;
}

/* A string member; *out stays NULL when absent and not required. */
static enum go_status get_string(struct ctx *c, const cJSON *obj, const char *key,
				 int required, int allow_empty, char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	size_t mark;
	if (!v) {
		if (required)
			return bad(c, "missing required key '%s'", key);
		return GO_OK;
	}
	mark = push_key(c, key);
	TRY(need_type(c, v, cJSON_IsString(v), "a string"));
	if (!allow_empty && !*v->valuestring)
		return bad(c, "must not be empty");
	if (has_ctrl(v->valuestring, !strcmp(key, "description")))
		return bad(c, "must not contain control characters");
	pop(c, mark);
	*out = xstrdup(v->valuestring);
	return GO_OK;
}

/* A whole number small enough to print exactly (no libm needed). */
static int is_integral(double v)
{
	return v >= -9e15 && v <= 9e15 && v == (double)(long long)v;
}

/* An integer member in [lo, hi]; *out keeps its default when absent. */
static enum go_status get_int(struct ctx *c, const cJSON *obj, const char *key, int lo,
			      int hi, int required, int *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	size_t mark;
	if (!v) {
		if (required)
			return bad(c, "missing required key '%s'", key);
		return GO_OK;
	}
	mark = push_key(c, key);
	if (!cJSON_IsNumber(v) || !is_integral(v->valuedouble) ||
	    v->valuedouble < lo || v->valuedouble > hi) {
		if (cJSON_IsNumber(v))
			return bad(c, "expected an integer from %d to %d, found %.17g", lo, hi,
				   v->valuedouble);
		return bad(c, "expected an integer from %d to %d, found %s", lo, hi,
			   json_type_name(v));
	}
	pop(c, mark);
	*out = (int)v->valuedouble;
	return GO_OK;
}

static enum go_status get_positive(struct ctx *c, const cJSON *v)
{
	if (!cJSON_IsNumber(v))
		return bad(c, "expected a positive number, found %s", json_type_name(v));
	if (!(v->valuedouble > 0) || !isfinite(v->valuedouble))
		return bad(c, "expected a positive number, found %.17g", v->valuedouble);
	return GO_OK;
}

static int arch_parse(const char *s, int *num, int *specific)
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

static enum go_status check_arch(struct ctx *c, const cJSON *v)
{
	int n, a;
	TRY(need_type(c, v, cJSON_IsString(v), "a string like \"sm_90a\""));
	if (!arch_parse(v->valuestring, &n, &a))
		return bad(c, "'%s' is not an arch; expected a string like \"sm_89\" or \"sm_90a\"",
			   v->valuestring);
	return GO_OK;
}

static int is_c_identifier(const char *s)
{
	if (!*s || !(isalpha((unsigned char)*s) || *s == '_'))
		return 0;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return 0;
	return 1;
}

/* Names that become parts of file names and step ids. */
static int is_safe_name(const char *s, const char *extra)
{
	if (!*s || !isalnum((unsigned char)*s))
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr(extra, *s))
			return 0;
	return 1;
}

static enum go_status check_rel_path(struct ctx *c, const char *p)
{
	const char *s = p;
	if (!*p)
		return bad(c, "empty path");
	if (*p == '/')
		return bad(c, "'%s' is absolute; give a path relative to the repository root", p);
	while (*s) {
		size_t n = strcspn(s, "/");
		if (n == 2 && !strncmp(s, "..", 2))
			return bad(c, "'%s' leaves the repository ('..' is not allowed)", p);
		if (n == 0 || (n == 1 && *s == '.'))
			return bad(c, "'%s' is not a plain relative path (no '.', empty or trailing components)",
				   p);
		s += n;
		if (*s == '/') {
			s++;
			if (!*s)
				return bad(c, "'%s' is not a plain relative path (no '.', empty or trailing components)",
					   p);
		}
	}
	if (has_ctrl(p, 0))
		return bad(c, "'%s' contains control characters", p);
	return GO_OK;
}

/* Render a number as written: integers without ".0", others with the
 * fewest digits that read back as the same double. */
static char *render_num(double v)
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

static void free_strv(char **v)
{
	char **p;
	if (!v)
		return;
	for (p = v; *p; p++)
		free(*p);
	free(v);
}

static void free_kv(struct spec_kv *kv, int n)
{
	int i;
	for (i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

static int strv_has(char *const *v, const char *s)
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

static enum go_status check_nvcc_arg(struct ctx *c, const char *what, const char *s,
				     int allow_space)
{
	int ch = nvcc_unsafe_char(s, allow_space);
	if (!ch)
		return GO_OK;
	return bad(c, "%s '%s' contains '%c': nvcc passes its arguments through a shell "
		      "without quoting them, so they may only use letters, digits%s and _ . / + - = , : @ %%",
		   what, s, ch, allow_space ? ", spaces" : "");
}

static enum go_status get_str_array(struct ctx *c, const cJSON *v, int allow_empty_array,
				    char ***out)
{
	int n, i = 0;
	const cJSON *it;
	TRY(need_type(c, v, cJSON_IsArray(v), "an array of strings"));
	n = cJSON_GetArraySize(v);
	if (!n && !allow_empty_array)
		return bad(c, "must not be empty");
	*out = xcalloc((size_t)n + 1, sizeof(char *));
	cJSON_ArrayForEach(it, v) {
		size_t mark = push_index(c, i);
		TRY(need_type(c, it, cJSON_IsString(it), "a string"));
		if (!*it->valuestring)
			return bad(c, "must not be empty");
		if (has_ctrl(it->valuestring, 0))
			return bad(c, "must not contain control characters");
		pop(c, mark);
		(*out)[i++] = xstrdup(it->valuestring);
	}
	return GO_OK;
}

/* An object of KEY -> number|string, rendered into kv pairs. */
static enum go_status get_kv(struct ctx *c, const cJSON *v, int c_ident_keys,
			     struct spec_kv **out, int *nout)
{
	const cJSON *it, *prev;
	int i = 0;
	TRY(need_type(c, v, cJSON_IsObject(v), "an object"));
	*out = xcalloc((size_t)cJSON_GetArraySize(v) + 1, sizeof(**out));
	cJSON_ArrayForEach(it, v) {
		size_t mark = push_key(c, it->string);
		for (prev = v->child; prev != it; prev = prev->next)
			if (!strcmp(prev->string, it->string))
				return bad(c, "key appears twice");
		if (c_ident_keys && !is_c_identifier(it->string))
			return bad(c, "'%s' is not a C identifier (letters, digits, '_'; not starting with a digit)",
				   it->string);
		if (!c_ident_keys && !is_safe_name(it->string, "_-."))
			return bad(c, "'%s' is not a valid parameter name (letters, digits, '_', '-', '.'; starting with a letter or digit)",
				   it->string);
		if (cJSON_IsNumber(it)) {
			if (!isfinite(it->valuedouble))
				return bad(c, "expected a finite number");
			(*out)[i].value = render_num(it->valuedouble);
		} else if (cJSON_IsString(it)) {
			if (has_ctrl(it->valuestring, 0))
				return bad(c, "must not contain control characters");
			(*out)[i].value = xstrdup(it->valuestring);
		} else {
			return bad(c, "expected a number or a string, found %s", json_type_name(it));
		}
		(*out)[i].key = xstrdup(it->string);
		*nout = ++i;
		pop(c, mark);
	}
	return GO_OK;
}

/* ---------------------------------------------------------------- sections */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static enum go_status parse_sources(struct ctx *c, const cJSON *root)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "sources");
	size_t mark;
	int j, n;
	if (!v)
		return bad(c, "missing required key 'sources' (the files that ship)");
	mark = push_key(c, "sources");
	TRY(get_str_array(c, v, 0, &c->s->sources));
	for (n = 0; c->s->sources[n]; n++) {
		const char *p = c->s->sources[n];
		size_t m2 = push_index(c, n);
		TRY(check_rel_path(c, p));
		for (j = 0; j < n; j++)
			if (!strcmp(c->s->sources[j], p))
				return bad(c, "'%s' is listed twice (also 'sources[%d]')", p, j);
		if (c->check_files) {
			char *full = xstrfmt("%s/%s", c->root, p);
			struct stat sbuf;
			int rc = stat(full, &sbuf);
			free(full);
			if (rc < 0)
				return bad(c, "no such file '%s' under '%s'", p, c->root);
			if (!S_ISREG(sbuf.st_mode))
				return bad(c, "'%s' is not a regular file", p);
		}
		pop(c, m2);
	}
	qsort(c->s->sources, (size_t)n, sizeof(char *), cmp_str);
	pop(c, mark);
	return GO_OK;
}

static enum go_status parse_build(struct ctx *c, const cJSON *root)
{
	static const char *const keys[] = { "flags", "defines", "timeout_s", NULL };
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(root, "build");
	const cJSON *v;
	size_t mark, m2;
	int i;

	c->s->build_timeout_s = DEFAULT_TIMEOUT_S;
	if (!b) {
		c->s->build_flags = xcalloc(1, sizeof(char *));
		return GO_OK;
	}
	mark = push_key(c, "build");
	TRY(need_type(c, b, cJSON_IsObject(b), "an object"));
	TRY(check_keys(c, b, keys));
	v = cJSON_GetObjectItemCaseSensitive(b, "flags");
	if (v) {
		m2 = push_key(c, "flags");
		TRY(get_str_array(c, v, 1, &c->s->build_flags));
		for (i = 0; c->s->build_flags[i]; i++) {
			size_t m3 = push_index(c, i);
			TRY(check_nvcc_arg(c, "flag", c->s->build_flags[i], 0));
			pop(c, m3);
		}
		pop(c, m2);
	} else {
		c->s->build_flags = xcalloc(1, sizeof(char *));
	}
	v = cJSON_GetObjectItemCaseSensitive(b, "defines");
	if (v) {
		m2 = push_key(c, "defines");
		TRY(get_kv(c, v, 1, &c->s->defines, &c->s->ndefines));
		for (i = 0; i < c->s->ndefines; i++) {
			size_t m3 = push_key(c, c->s->defines[i].key);
			TRY(check_nvcc_arg(c, "define value", c->s->defines[i].value, 0));
			pop(c, m3);
		}
		pop(c, m2);
	}
	TRY(get_int(c, b, "timeout_s", 1, TIMEOUT_MAX, 0, &c->s->build_timeout_s));
	pop(c, mark);
	return GO_OK;
}

static enum go_status parse_targets(struct ctx *c, const cJSON *root)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "targets");
	const cJSON *it, *prev;
	size_t mark;
	int i = 0;
	if (!t)
		return GO_OK;
	mark = push_key(c, "targets");
	TRY(need_type(c, t, cJSON_IsObject(t), "an object of GPU name -> arch"));
	c->s->targets = xcalloc((size_t)cJSON_GetArraySize(t) + 1, sizeof(*c->s->targets));
	cJSON_ArrayForEach(it, t) {
		size_t m2 = push_key(c, it->string);
		for (prev = t->child; prev != it; prev = prev->next)
			if (!strcmp(prev->string, it->string))
				return bad(c, "key appears twice");
		if (!*it->string)
			return bad(c, "empty GPU name");
		TRY(check_arch(c, it));
		c->s->targets[i].gpu = xstrdup(it->string);
		c->s->targets[i].arch = xstrdup(it->valuestring);
		c->s->ntargets = ++i;
		pop(c, m2);
	}
	pop(c, mark);
	return GO_OK;
}

static int has_compiled_ext(const char *p)
{
	static const char *const exts[] = { ".cu", ".cpp", ".cc", ".cxx", ".c", NULL };
	const char *dot = strrchr(p, '.');
	const char *const *e;
	if (!dot || strchr(dot, '/'))
		return 0;
	for (e = exts; *e; e++)
		if (!strcmp(dot, *e))
			return 1;
	return 0;
}

static enum go_status parse_program(struct ctx *c, const cJSON *v, struct spec_program *p)
{
	static const char *const keys[] = { "sources", "script", "libs", "min_arch",
					    "needs_gpu", NULL };
	const cJSON *src, *scr, *x;
	size_t mark;
	int i;

	p->needs_gpu = 1;
	TRY(need_type(c, v, cJSON_IsObject(v), "an object"));
	if (!*p->name || strlen(p->name) > NAME_MAX_LEN || has_ctrl(p->name, 0))
		return bad(c, "not a valid program name (1-%d characters, no control characters)",
			   NAME_MAX_LEN);
	TRY(check_keys(c, v, keys));
	src = cJSON_GetObjectItemCaseSensitive(v, "sources");
	scr = cJSON_GetObjectItemCaseSensitive(v, "script");
	if (src && scr)
		return bad(c, "has both 'sources' and 'script'; give one");
	if (!src && !scr)
		return bad(c, "has neither 'sources' (a compiled program) nor 'script' (a Python script)");
	if (src) {
		mark = push_key(c, "sources");
		TRY(get_str_array(c, src, 0, &p->sources));
		for (i = 0; p->sources[i]; i++) {
			size_t m2 = push_index(c, i);
			int j;
			if (!strv_has(c->s->sources, p->sources[i]))
				return bad(c, "'%s' is not listed in the top-level 'sources'",
					   p->sources[i]);
			TRY(check_nvcc_arg(c, "compiled source", p->sources[i], 1));
			if (!has_compiled_ext(p->sources[i]))
				return bad(c, "'%s' is not a .cu, .cpp, .cc, .cxx or .c file (headers belong in the top-level 'sources' only)",
					   p->sources[i]);
			for (j = 0; j < i; j++)
				if (!strcmp(p->sources[j], p->sources[i]))
					return bad(c, "'%s' is listed twice", p->sources[i]);
			pop(c, m2);
		}
		pop(c, mark);
	} else {
		TRY(get_string(c, v, "script", 1, 0, &p->script));
		mark = push_key(c, "script");
		TRY(check_rel_path(c, p->script));
		if (!strv_has(c->s->sources, p->script))
			return bad(c, "'%s' is not listed in the top-level 'sources'", p->script);
		pop(c, mark);
	}
	x = cJSON_GetObjectItemCaseSensitive(v, "libs");
	if (x) {
		mark = push_key(c, "libs");
		TRY(get_str_array(c, x, 1, &p->libs));
		for (i = 0; p->libs[i]; i++) {
			size_t m3 = push_index(c, i);
			TRY(check_nvcc_arg(c, "library flag", p->libs[i], 0));
			pop(c, m3);
		}
		pop(c, mark);
	} else {
		p->libs = xcalloc(1, sizeof(char *));
	}
	x = cJSON_GetObjectItemCaseSensitive(v, "min_arch");
	if (x) {
		mark = push_key(c, "min_arch");
		TRY(check_arch(c, x));
		p->min_arch = xstrdup(x->valuestring);
		pop(c, mark);
	}
	x = cJSON_GetObjectItemCaseSensitive(v, "needs_gpu");
	if (x) {
		mark = push_key(c, "needs_gpu");
		TRY(need_type(c, x, cJSON_IsBool(x), "true or false"));
		p->needs_gpu = cJSON_IsTrue(x);
		pop(c, mark);
	}
	return GO_OK;
}

static enum go_status parse_programs(struct ctx *c, const cJSON *root)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "programs");
	const cJSON *it, *prev;
	size_t mark;
	int n;
	if (!v)
		return bad(c, "missing required key 'programs'");
	mark = push_key(c, "programs");
	TRY(need_type(c, v, cJSON_IsObject(v), "an object of program name -> program"));
	n = cJSON_GetArraySize(v);
	if (!n)
		return bad(c, "must name at least one program");
	c->s->programs = xcalloc((size_t)n, sizeof(*c->s->programs));
	cJSON_ArrayForEach(it, v) {
		size_t m2 = push_key(c, it->string);
		struct spec_program *p = &c->s->programs[c->s->nprograms++];
		for (prev = v->child; prev != it; prev = prev->next)
			if (!strcmp(prev->string, it->string))
				return bad(c, "program named twice");
		p->name = xstrdup(it->string);
		TRY(parse_program(c, it, p));
		pop(c, m2);
	}
	pop(c, mark);
	return GO_OK;
}

static enum go_status parse_problems(struct ctx *c, const cJSON *root)
{
	static const char *const keys[] = { "name", "params", NULL };
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "problems");
	const cJSON *it;
	size_t mark;
	int i = 0, n, j;
	if (!v)
		return bad(c, "missing required key 'problems' (a program without parameters takes one problem with no 'params')");
	mark = push_key(c, "problems");
	TRY(need_type(c, v, cJSON_IsArray(v), "an array of problems"));
	n = cJSON_GetArraySize(v);
	if (!n)
		return bad(c, "must list at least one problem");
	c->s->problems = xcalloc((size_t)n, sizeof(*c->s->problems));
	cJSON_ArrayForEach(it, v) {
		size_t m2 = push_index(c, i);
		struct spec_problem *p = &c->s->problems[c->s->nproblems++];
		const cJSON *params;
		TRY(need_type(c, it, cJSON_IsObject(it), "an object"));
		TRY(check_keys(c, it, keys));
		TRY(get_string(c, it, "name", 1, 0, &p->name));
		if (strlen(p->name) > NAME_MAX_LEN) {
			push_key(c, "name");
			return bad(c, "is %zu characters long; at most %d", strlen(p->name),
				   NAME_MAX_LEN);
		}
		for (j = 0; j < i; j++)
			if (!strcmp(c->s->problems[j].name, p->name)) {
				push_key(c, "name");
				return bad(c, "problem \"%s\" is defined twice (also 'problems[%d]')",
					   p->name, j);
			}
		params = cJSON_GetObjectItemCaseSensitive(it, "params");
		if (params) {
			size_t m3 = push_key(c, "params");
			TRY(get_kv(c, params, 0, &p->params, &p->nparams));
			pop(c, m3);
		}
		pop(c, m2);
		i++;
	}
	pop(c, mark);
	return GO_OK;
}

static enum go_status parse_tolerance(struct ctx *c, const cJSON *root)
{
	static const char *const keys[] = { "max_abs", "max_rel", "rel_l2", NULL };
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "tolerance");
	const cJSON *it;
	size_t mark;
	if (!v)
		return GO_OK;
	mark = push_key(c, "tolerance");
	TRY(need_type(c, v, cJSON_IsObject(v), "an object"));
	TRY(check_keys(c, v, keys));
	c->s->tolerance = xcalloc((size_t)cJSON_GetArraySize(v) + 1, sizeof(*c->s->tolerance));
	cJSON_ArrayForEach(it, v) {
		size_t m2 = push_key(c, it->string);
		struct spec_kv *kv = &c->s->tolerance[c->s->ntolerance];
		TRY(get_positive(c, it));
		kv->key = xstrdup(it->string);
		kv->value = render_num(it->valuedouble);
		c->s->ntolerance++;
		pop(c, m2);
	}
	pop(c, mark);
	return GO_OK;
}

static enum go_status check_enum(struct ctx *c, const char *val, const char *const *choices,
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
	st = bad(c, "unknown %s '%s' (%s)", what, val, sb.buf);
	strbuf_release(&sb);
	return st;
}

const char *const spec_default_metrics[] = {
	"sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active",
	"dram__throughput.avg.pct_of_peak_sustained_elapsed",
	"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
	"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
	"sm__warps_active.avg.pct_of_peak_sustained_active",
	"launch__registers_per_thread",
	"launch__occupancy_limit_registers",
	"gpu__time_duration.sum",
	NULL
};

static const char *const sanitizer_tools[] = { "memcheck", "racecheck", "synccheck",
					       "initcheck", NULL };

#define MAX_VARIANTS 256
#define MAX_METRICS 64

/* A string member that must be one of choices; *out keeps dflt when absent. */
static enum go_status get_choice(struct ctx *c, const cJSON *obj, const char *key,
				 const char *const *choices, const char *dflt, char **out)
{
	size_t mark;
	TRY(get_string(c, obj, key, 0, 0, out));
	if (!*out) {
		*out = xstrdup(dflt);
		return GO_OK;
	}
	mark = push_key(c, key);
	TRY(check_enum(c, *out, choices, key));
	pop(c, mark);
	return GO_OK;
}

/* profile: metrics, kernel, launches, clock and cache control. */
static enum go_status parse_profile(struct ctx *c, const cJSON *v, struct spec_step *st)
{
	static const char *const clocks[] = { "base", "none", NULL };
	static const char *const caches[] = { "all", "none", NULL };
	static const char *const modes[] = { "check", "profile", NULL };
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(v, "metrics");
	size_t mark;
	int i, j;

	if (m) {
		mark = push_key(c, "metrics");
		TRY(get_str_array(c, m, 0, &st->metrics));
		for (i = 0; st->metrics[i]; i++) {
			size_t m2 = push_index(c, i);
			if (i >= MAX_METRICS)
				return bad(c, "at most %d metrics per profile step", MAX_METRICS);
			if (!is_safe_name(st->metrics[i], "_."))
				return bad(c, "'%s' is not a Nsight Compute metric name (letters, digits, '_' and '.', such as 'dram__throughput.avg.pct_of_peak_sustained_elapsed')",
					   st->metrics[i]);
			for (j = 0; j < i; j++)
				if (!strcmp(st->metrics[j], st->metrics[i]))
					return bad(c, "metric '%s' is listed twice", st->metrics[i]);
			pop(c, m2);
		}
		pop(c, mark);
	} else {
		for (i = 0; spec_default_metrics[i]; i++)
			;
		st->metrics = xcalloc((size_t)i + 1, sizeof(char *));
		for (i = 0; spec_default_metrics[i]; i++)
			st->metrics[i] = xstrdup(spec_default_metrics[i]);
	}
	TRY(get_string(c, v, "kernel", 0, 0, &st->kernel));
	if (!st->kernel) {
		/* the program name as a regex: escape what a regex would read */
		struct strbuf sb = STRBUF_INIT;
		const char *p;
		for (p = st->prog->name; *p; p++) {
			if (!isalnum((unsigned char)*p) && *p != '_')
				strbuf_addch(&sb, '\\');
			strbuf_addch(&sb, *p);
		}
		st->kernel = strbuf_detach(&sb, NULL);
	}
	st->launch_count = 1;
	TRY(get_int(c, v, "launch_skip", 0, 1000000, 0, &st->launch_skip));
	TRY(get_int(c, v, "launch_count", 1, 100, 0, &st->launch_count));
	TRY(get_choice(c, v, "clock_control", clocks, "base", &st->clock_control));
	TRY(get_choice(c, v, "cache_control", caches, "all", &st->cache_control));
	TRY(get_choice(c, v, "mode", modes, "check", &st->mode));
	return GO_OK;
}

static enum go_status parse_sanitize(struct ctx *c, const cJSON *v, struct spec_step *st)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(v, "tools");
	int i, j;
	if (t) {
		size_t mark = push_key(c, "tools");
		TRY(get_str_array(c, t, 0, &st->tools));
		for (i = 0; st->tools[i]; i++) {
			size_t m2 = push_index(c, i);
			TRY(check_enum(c, st->tools[i], sanitizer_tools, "compute-sanitizer tool"));
			for (j = 0; j < i; j++)
				if (!strcmp(st->tools[j], st->tools[i]))
					return bad(c, "tool '%s' is listed twice", st->tools[i]);
			pop(c, m2);
		}
		pop(c, mark);
	} else {
		st->tools = xcalloc(5, sizeof(char *));
		for (i = 0; sanitizer_tools[i]; i++)
			st->tools[i] = xstrdup(sanitizer_tools[i]);
	}
	st->print_limit = 10;
	TRY(get_int(c, v, "print_limit", 1, 10000, 0, &st->print_limit));
	st->mode = xstrdup("check");
	return GO_OK;
}

/* sweep: "defines": {"KEY": [v1, v2], ...} -> the cartesian product, the
 * first key varying slowest. */
static enum go_status parse_sweep(struct ctx *c, const cJSON *v, struct spec_step *st)
{
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(v, "defines");
	const cJSON *k, *prev, *x;
	struct spec_kv **vals = NULL;
	int *nvals = NULL, nkeys, total = 1, i, j;
	char **keys = NULL;
	size_t mark;
	enum go_status rc = GO_OK;

	if (st->prog->script) {
		push_key(c, "program");
		return bad(c, "'%s' is a script; a sweep varies compile-time defines of a compiled program",
			   st->prog->name);
	}
	if (!d)
		return bad(c, "missing required key 'defines' (an object KEY -> [values], such as {\"TILE_M\": [64, 128]})");
	mark = push_key(c, "defines");
	TRY(need_type(c, d, cJSON_IsObject(d), "an object KEY -> [values]"));
	nkeys = cJSON_GetArraySize(d);
	if (!nkeys)
		return bad(c, "must name at least one define");
	keys = xcalloc((size_t)nkeys, sizeof(char *));
	vals = xcalloc((size_t)nkeys, sizeof(*vals));
	nvals = xcalloc((size_t)nkeys, sizeof(int));
	i = 0;
	cJSON_ArrayForEach(k, d) {
		size_t m2 = push_key(c, k->string);
		int n = cJSON_IsArray(k) ? cJSON_GetArraySize(k) : 1;
		keys[i] = k->string;
		for (prev = d->child; prev != k; prev = prev->next)
			if (!strcmp(prev->string, k->string)) {
				rc = bad(c, "key appears twice");
				goto out;
			}
		if (!is_c_identifier(k->string)) {
			rc = bad(c, "'%s' is not a C identifier (letters, digits, '_'; not starting with a digit)",
				 k->string);
			goto out;
		}
		if (!n) {
			rc = bad(c, "give at least one value");
			goto out;
		}
		vals[i] = xcalloc((size_t)n, sizeof(**vals));
		for (j = 0; j < n; j++) {
			size_t m3 = cJSON_IsArray(k) ? push_index(c, j) : c->path.len;
			x = cJSON_IsArray(k) ? cJSON_GetArrayItem(k, j) : k;
			if (cJSON_IsNumber(x) && isfinite(x->valuedouble)) {
				vals[i][j].value = render_num(x->valuedouble);
			} else if (cJSON_IsString(x) && *x->valuestring) {
				vals[i][j].value = xstrdup(x->valuestring);
			} else {
				rc = bad(c, "expected a number or a non-empty string, found %s",
					 json_type_name(x));
				goto out;
			}
			nvals[i] = j + 1;
			rc = check_nvcc_arg(c, "define value", vals[i][j].value, 0);
			if (rc != GO_OK)
				goto out;
			pop(c, m3);
		}
		if ((long long)total * n > MAX_VARIANTS) {
			rc = bad(c, "the sweep has more than %d variants; sweep fewer values",
				 MAX_VARIANTS);
			goto out;
		}
		total *= n;
		pop(c, m2);
		i++;
	}
	pop(c, mark);
	st->variants = xcalloc((size_t)total, sizeof(*st->variants));
	for (i = 0; i < total; i++) {
		struct spec_variant *var = &st->variants[st->nvariants++];
		struct strbuf label = STRBUF_INIT;
		int rest = i;
		var->defines = xcalloc((size_t)nkeys, sizeof(*var->defines));
		for (j = nkeys - 1; j >= 0; j--) {
			int idx = rest % nvals[j];
			rest /= nvals[j];
			var->defines[j].key = xstrdup(keys[j]);
			var->defines[j].value = xstrdup(vals[j][idx].value);
		}
		var->ndefines = nkeys;
		for (j = 0; j < nkeys; j++)
			strbuf_addf(&label, "%s%s=%s", j ? "," : "", var->defines[j].key,
				    var->defines[j].value);
		var->label = strbuf_detach(&label, NULL);
	}
	st->sweep_check = 1;
	x = cJSON_GetObjectItemCaseSensitive(v, "check");
	if (x) {
		size_t m4 = push_key(c, "check");
		if (!cJSON_IsBool(x)) {
			rc = bad(c, "expected true or false, found %s", json_type_name(x));
			goto out;
		}
		st->sweep_check = cJSON_IsTrue(x);
		pop(c, m4);
	}
out:
	for (i = 0; i < nkeys; i++) {
		for (j = 0; j < nvals[i]; j++)
			free(vals[i][j].value);
		free(vals[i]);
	}
	free(vals);
	free(nvals);
	free(keys);
	return rc;
}

static enum go_status parse_step(struct ctx *c, const cJSON *v, struct spec_step *st)
{
	static const char *const keys_run[] = { "kind", "program", "problems", "timeout_s", "role",
						NULL };
	static const char *const keys_profile[] = { "kind", "program", "problems", "timeout_s",
						    "metrics", "kernel", "launch_skip",
						    "launch_count", "clock_control",
						    "cache_control", "mode", NULL };
	static const char *const keys_sanitize[] = { "kind", "program", "problems", "timeout_s",
						     "tools", "print_limit", NULL };
	static const char *const keys_sweep[] = { "kind", "program", "problems", "timeout_s",
						  "defines", "check", NULL };
	static const char *const kinds[] = { "correctness", "benchmark", "profile", "sanitize",
					     "sweep", NULL };
	static const char *const roles[] = { "kernel", "baseline", NULL };
	const char *const *keys;
	char *kind = NULL, *role = NULL;
	const cJSON *pv, *kv;
	size_t mark;
	enum go_status rc;
	int i;

	TRY(need_type(c, v, cJSON_IsObject(v), "an object"));
	kv = cJSON_GetObjectItemCaseSensitive(v, "kind");
	if (cJSON_IsString(kv) && !strcmp(kv->valuestring, "profile"))
		keys = keys_profile;
	else if (cJSON_IsString(kv) && !strcmp(kv->valuestring, "sanitize"))
		keys = keys_sanitize;
	else if (cJSON_IsString(kv) && !strcmp(kv->valuestring, "sweep"))
		keys = keys_sweep;
	else
		keys = keys_run;
	TRY(check_keys(c, v, keys));
	TRY(get_string(c, v, "kind", 1, 0, &kind));
	mark = push_key(c, "kind");
	rc = check_enum(c, kind, kinds, "step kind");
	st->kind = !strcmp(kind, "benchmark") ? STEP_BENCHMARK
		 : !strcmp(kind, "profile") ? STEP_PROFILE
		 : !strcmp(kind, "sanitize") ? STEP_SANITIZE
		 : !strcmp(kind, "sweep") ? STEP_SWEEP : STEP_CORRECTNESS;
	free(kind);
	TRY(rc);
	pop(c, mark);

	TRY(get_string(c, v, "program", 1, 0, &st->program));
	st->prog = spec_find_program(c->s, st->program);
	if (!st->prog) {
		push_key(c, "program");
		return bad(c, "no program named \"%s\" in 'programs'", st->program);
	}

	pv = cJSON_GetObjectItemCaseSensitive(v, "problems");
	if (pv) {
		mark = push_key(c, "problems");
		TRY(get_str_array(c, pv, 0, &st->problems));
		for (i = 0; st->problems[i]; i++) {
			size_t m2 = push_index(c, i);
			int j;
			if (!spec_find_problem(c->s, st->problems[i]))
				return bad(c, "no problem named \"%s\" in 'problems'", st->problems[i]);
			for (j = 0; j < i; j++)
				if (!strcmp(st->problems[j], st->problems[i]))
					return bad(c, "problem \"%s\" is listed twice", st->problems[i]);
			pop(c, m2);
		}
		pop(c, mark);
	} else {
		st->problems = xcalloc((size_t)c->s->nproblems + 1, sizeof(char *));
		for (i = 0; i < c->s->nproblems; i++)
			st->problems[i] = xstrdup(c->s->problems[i].name);
	}

	st->timeout_s = DEFAULT_TIMEOUT_S;
	TRY(get_int(c, v, "timeout_s", 1, TIMEOUT_MAX, 0, &st->timeout_s));

	if (st->kind == STEP_PROFILE || st->kind == STEP_SANITIZE) {
		if (st->prog->script) {
			push_key(c, "program");
			return bad(c, "'%s' is a script; %s steps run compiled programs",
				   st->prog->name, spec_step_kind_name(st->kind));
		}
		return st->kind == STEP_PROFILE ? parse_profile(c, v, st) : parse_sanitize(c, v, st);
	}
	if (st->kind == STEP_SWEEP)
		return parse_sweep(c, v, st);

	TRY(get_string(c, v, "role", 0, 0, &role));
	if (role) {
		mark = push_key(c, "role");
		rc = check_enum(c, role, roles, "role");
		st->is_baseline = !strcmp(role, "baseline");
		free(role);
		TRY(rc);
		pop(c, mark);
	}
	return GO_OK;
}

static enum go_status parse_steps(struct ctx *c, const cJSON *root)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "steps");
	const cJSON *it;
	size_t mark;
	int n, i = 0;
	if (!v)
		return bad(c, "missing required key 'steps'");
	mark = push_key(c, "steps");
	TRY(need_type(c, v, cJSON_IsArray(v), "an array of steps"));
	n = cJSON_GetArraySize(v);
	if (!n)
		return bad(c, "must list at least one step");
	c->s->steps = xcalloc((size_t)n, sizeof(*c->s->steps));
	cJSON_ArrayForEach(it, v) {
		size_t m2 = push_index(c, i++);
		TRY(parse_step(c, it, &c->s->steps[c->s->nsteps++]));
		pop(c, m2);
	}
	pop(c, mark);
	return GO_OK;
}

/* A string member that must name a problem (or program) of the spec. */
static enum go_status check_ref(struct ctx *c, const cJSON *obj, const char *key,
				int required)
{
	char *name = NULL;
	size_t mark;
	int found;
	TRY(get_string(c, obj, key, required, 0, &name));
	if (!name)
		return GO_OK;
	found = !strcmp(key, "program") ? spec_find_program(c->s, name) != NULL
					: spec_find_problem(c->s, name) != NULL;
	mark = push_key(c, key);
	if (!found) {
		enum go_status st = bad(c, "no %s named \"%s\" in '%ss'", key, name, key);
		free(name);
		return st;
	}
	free(name);
	pop(c, mark);
	return GO_OK;
}

static enum go_status check_opt_string(struct ctx *c, const cJSON *obj, const char *key,
				       int required)
{
	char *s = NULL;
	enum go_status st = get_string(c, obj, key, required, 0, &s);
	free(s);
	return st;
}

/* baselines[] and references[]: name, gpu, a figure, provenance. */
static enum go_status parse_figures(struct ctx *c, const cJSON *root, const char *key,
				    cJSON **out)
{
	static const char *const keys[] = { "name", "gpu", "problem", "latency_us", "tflops",
					    "source", "note", NULL };
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
	const cJSON *it;
	size_t mark;
	int i = 0;
	if (!v) {
		*out = cJSON_CreateArray();
		return GO_OK;
	}
	mark = push_key(c, key);
	TRY(need_type(c, v, cJSON_IsArray(v), "an array of objects"));
	cJSON_ArrayForEach(it, v) {
		size_t m2 = push_index(c, i++);
		const cJSON *lat, *tf;
		TRY(need_type(c, it, cJSON_IsObject(it), "an object"));
		TRY(check_keys(c, it, keys));
		TRY(check_opt_string(c, it, "name", 1));
		TRY(check_opt_string(c, it, "gpu", 1));
		TRY(check_ref(c, it, "problem", 0));
		TRY(check_opt_string(c, it, "source", 0));
		TRY(check_opt_string(c, it, "note", 0));
		lat = cJSON_GetObjectItemCaseSensitive(it, "latency_us");
		tf = cJSON_GetObjectItemCaseSensitive(it, "tflops");
		if (!lat && !tf)
			return bad(c, "give one of 'latency_us' or 'tflops'");
		if (lat && tf)
			return bad(c, "give only one of 'latency_us' or 'tflops'");
		push_key(c, lat ? "latency_us" : "tflops");
		TRY(get_positive(c, lat ? lat : tf));
		pop(c, m2);
	}
	pop(c, mark);
	*out = cJSON_Duplicate(v, 1);
	return GO_OK;
}

/* 'op' (one of < <= > >= ==) and a finite number 'value': expected[] and gates[]. */
static enum go_status check_op_value(struct ctx *c, const cJSON *it)
{
	static const char *const ops[] = { "<", "<=", ">", ">=", "==", NULL };
	const cJSON *x;
	char *s = NULL;
	size_t mark;
	enum go_status st;
	TRY(get_string(c, it, "op", 1, 0, &s));
	mark = push_key(c, "op");
	st = strv_has((char *const *)ops, s)
		? GO_OK
		: bad(c, "unknown operator '%s' (expected '<', '<=', '>', '>=' or '==')", s);
	free(s);
	TRY(st);
	pop(c, mark);
	x = cJSON_GetObjectItemCaseSensitive(it, "value");
	if (!x)
		return bad(c, "missing required key 'value'");
	mark = push_key(c, "value");
	TRY(need_type(c, x, cJSON_IsNumber(x) && isfinite(x->valuedouble), "a number"));
	pop(c, mark);
	return GO_OK;
}

static enum go_status parse_expected(struct ctx *c, const cJSON *root)
{
	static const char *const keys[] = { "program", "problem", "gpu", "metric", "op", "value",
					    "note", NULL };
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "expected");
	const cJSON *it;
	size_t mark;
	int i = 0;
	if (!v) {
		c->s->expected = cJSON_CreateArray();
		return GO_OK;
	}
	mark = push_key(c, "expected");
	TRY(need_type(c, v, cJSON_IsArray(v), "an array of objects"));
	cJSON_ArrayForEach(it, v) {
		size_t m2 = push_index(c, i++);
		char *s = NULL;
		TRY(need_type(c, it, cJSON_IsObject(it), "an object"));
		TRY(check_keys(c, it, keys));
		TRY(check_ref(c, it, "program", 1));
		TRY(check_ref(c, it, "problem", 0));
		TRY(check_opt_string(c, it, "gpu", 0));
		TRY(check_opt_string(c, it, "note", 0));
		TRY(get_string(c, it, "metric", 1, 0, &s));
		if (strchr(s, ' ')) {
			push_key(c, "metric");
			free(s);
			return bad(c, "a metric name has no spaces: 'latency_us', 'tflops', or a dotted path such as 'timing.p90_us'");
		}
		free(s);
		TRY(check_op_value(c, it));
		pop(c, m2);
	}
	pop(c, mark);
	c->s->expected = cJSON_Duplicate(v, 1);
	return GO_OK;
}

/* A gate's metric must name a figure gpuorch records: the expected[]
 * metrics, speedup, profile.<ncu metric> of a profile step of the program,
 * sanitizer.<tool>.errors|warnings of a sanitize step running that tool,
 * ptxas.<resource>, or a dotted path into the program's result. */
static enum go_status check_gate_metric(struct ctx *c, const char *program, const char *m)
{
	static const char *const ptxas[] = { "registers", "spill_store_bytes", "spill_load_bytes",
					     "smem_bytes", "stack_bytes", "cmem_bytes", "barriers",
					     NULL };
	int i, j;
	if (strchr(m, ' '))
		return bad(c, "a metric name has no spaces: 'latency_us', 'speedup', 'profile.<ncu metric>', 'sanitizer.memcheck.errors', 'ptxas.registers' or a dotted path into the result");
	if (!strncmp(m, "profile.", 8)) {
		for (i = 0; i < c->s->nsteps; i++) {
			const struct spec_step *st = &c->s->steps[i];
			if (st->kind != STEP_PROFILE || strcmp(st->program, program))
				continue;
			for (j = 0; st->metrics[j]; j++)
				if (!strcmp(st->metrics[j], m + 8))
					return GO_OK;
		}
		return bad(c, "no profile step of '%s' collects '%s' (add it to that step's 'metrics')",
			   program, m + 8);
	}
	if (!strncmp(m, "sanitizer.", 10)) {
		const char *tool = m + 10, *dot = strchr(tool, '.');
		if (!dot || (strcmp(dot, ".errors") && strcmp(dot, ".warnings")))
			return bad(c, "expected 'sanitizer.<tool>.errors' or 'sanitizer.<tool>.warnings', found '%s'",
				   m);
		for (i = 0; i < c->s->nsteps; i++) {
			const struct spec_step *st = &c->s->steps[i];
			if (st->kind != STEP_SANITIZE || strcmp(st->program, program))
				continue;
			for (j = 0; st->tools[j]; j++)
				if (strlen(st->tools[j]) == (size_t)(dot - tool) &&
				    !strncmp(st->tools[j], tool, (size_t)(dot - tool)))
					return GO_OK;
		}
		return bad(c, "no sanitize step of '%s' runs '%.*s' (add a step {\"kind\": \"sanitize\", \"program\": \"%s\", \"tools\": [\"%.*s\"]})",
			   program, (int)(dot - tool), tool, program, (int)(dot - tool), tool);
	}
	if (!strncmp(m, "ptxas.", 6)) {
		if (c->s->nprograms && spec_find_program(c->s, program)->script)
			return bad(c, "'%s' is a script: it has no ptxas resources", program);
		return check_enum(c, m + 6, ptxas, "ptxas resource");
	}
	return GO_OK;
}

static enum go_status parse_gates(struct ctx *c, const cJSON *root)
{
	static const char *const keys[] = { "name", "program", "problem", "gpu", "metric", "op",
					    "value", "note", NULL };
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "gates");
	const cJSON *it;
	size_t mark;
	int i = 0;
	if (!v) {
		c->s->gates = cJSON_CreateArray();
		return GO_OK;
	}
	mark = push_key(c, "gates");
	TRY(need_type(c, v, cJSON_IsArray(v), "an array of objects"));
	cJSON_ArrayForEach(it, v) {
		size_t m2 = push_index(c, i++), m3;
		char *s = NULL, *prog = NULL;
		enum go_status st;
		TRY(need_type(c, it, cJSON_IsObject(it), "an object"));
		TRY(check_keys(c, it, keys));
		TRY(check_opt_string(c, it, "name", 0));
		TRY(check_ref(c, it, "program", 1));
		TRY(check_ref(c, it, "problem", 0));
		TRY(check_opt_string(c, it, "gpu", 0));
		TRY(check_opt_string(c, it, "note", 0));
		TRY(get_string(c, it, "program", 1, 0, &prog));
		st = get_string(c, it, "metric", 1, 0, &s);
		if (st == GO_OK) {
			m3 = push_key(c, "metric");
			st = check_gate_metric(c, prog, s);
			if (st == GO_OK)
				pop(c, m3);
		}
		free(s);
		free(prog);
		TRY(st);
		TRY(check_op_value(c, it));
		pop(c, m2);
	}
	pop(c, mark);
	c->s->gates = cJSON_Duplicate(v, 1);
	return GO_OK;
}

/* ---------------------------------------------------------------- top level */

static char *make_slug(const char *name)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p;
	for (p = name; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		int ok = isalnum(ch) || ch == '.' || ch == '_' || ch == '-';
		if (!ok || ch == '-') {
			if (sb.len && sb.buf[sb.len - 1] != '-')
				strbuf_addch(&sb, '-');
			continue;
		}
		if (ch == '.' && !sb.len)
			continue; /* no hidden directories */
		strbuf_addch(&sb, ch);
	}
	if (sb.len > SLUG_MAX_LEN)
		strbuf_setlen(&sb, SLUG_MAX_LEN);
	while (sb.len && (sb.buf[sb.len - 1] == '-' || sb.buf[sb.len - 1] == '.'))
		strbuf_setlen(&sb, sb.len - 1);
	if (!sb.len)
		strbuf_addstr(&sb, "experiment");
	return strbuf_detach(&sb, NULL);
}

static enum go_status parse_root(struct ctx *c, const cJSON *root)
{
	static const char *const keys[] = { "schema", "name", "phase", "description", "sources",
					    "build", "targets", "programs", "problems",
					    "tolerance", "steps", "baselines", "references",
					    "expected", "gates", NULL };
	struct spec *s = c->s;
	int schema = 0;
	const cJSON *sv;

	if (!cJSON_IsObject(root))
		return bad(c, "expected a JSON object at the top level, found %s", json_type_name(root));
	TRY(check_keys(c, root, keys));
	sv = cJSON_GetObjectItemCaseSensitive(root, "schema");
	if (!sv)
		return bad(c, "missing required key 'schema' (add \"schema\": 1)");
	if (cJSON_IsNumber(sv) && sv->valuedouble != 1) {
		push_key(c, "schema");
		return bad(c, "unsupported schema %.17g (this gpuorch reads schema 1)",
			   sv->valuedouble);
	}
	TRY(get_int(c, root, "schema", 1, 1, 1, &schema));
	TRY(get_string(c, root, "name", 1, 0, &s->name));
	if (strlen(s->name) > NAME_MAX_LEN) {
		push_key(c, "name");
		return bad(c, "is %zu characters long; at most %d", strlen(s->name), NAME_MAX_LEN);
	}
	s->slug = make_slug(s->name);
	TRY(get_string(c, root, "phase", 1, 0, &s->phase));
	TRY(get_string(c, root, "description", 0, 1, &s->description));
	TRY(parse_sources(c, root));
	TRY(parse_build(c, root));
	TRY(parse_targets(c, root));
	TRY(parse_programs(c, root));
	TRY(parse_problems(c, root));
	TRY(parse_tolerance(c, root));
	TRY(parse_steps(c, root));
	TRY(parse_figures(c, root, "baselines", &s->baselines));
	TRY(parse_figures(c, root, "references", &s->references));
	TRY(parse_expected(c, root));
	TRY(parse_gates(c, root));
	return GO_OK;
}

enum go_status spec_parse(const char *label, const char *text, size_t len,
			  const char *root, int check_files, struct spec **out,
			  struct strbuf *err)
{
	struct ctx c;
	struct spec *s;
	enum go_status st;

	*out = NULL;
	s = xcalloc(1, sizeof(*s));
	s->path = xstrdup(label);
	sha256_hex(text, len, s->hash);
	st = json_parse(text, len, label, &s->json, err);
	if (st != GO_OK) {
		spec_free(s);
		return GO_ERR_SPEC;
	}
	c.label = label;
	c.root = root ? root : ".";
	c.check_files = check_files;
	c.err = err;
	c.s = s;
	strbuf_init(&c.path, 0);
	st = parse_root(&c, s->json);
	strbuf_release(&c.path);
	if (st != GO_OK) {
		spec_free(s);
		return st;
	}
	*out = s;
	return GO_OK;
}

enum go_status spec_load(const char *path, const char *root, int check_files,
			 struct spec **out, struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT;
	enum go_status st;
	*out = NULL;
	st = fs_read_file(path, &text, err);
	if (st == GO_OK)
		st = spec_parse(path, text.buf, text.len, root, check_files, out, err);
	strbuf_release(&text);
	return st;
}

void spec_free(struct spec *s)
{
	int i;
	if (!s)
		return;
	free(s->path);
	free(s->name);
	free(s->slug);
	free(s->phase);
	free(s->description);
	free_strv(s->sources);
	free_strv(s->build_flags);
	free_kv(s->defines, s->ndefines);
	for (i = 0; i < s->ntargets; i++) {
		free(s->targets[i].gpu);
		free(s->targets[i].arch);
	}
	free(s->targets);
	for (i = 0; i < s->nprograms; i++) {
		free(s->programs[i].name);
		free_strv(s->programs[i].sources);
		free(s->programs[i].script);
		free_strv(s->programs[i].libs);
		free(s->programs[i].min_arch);
	}
	free(s->programs);
	for (i = 0; i < s->nproblems; i++) {
		free(s->problems[i].name);
		free_kv(s->problems[i].params, s->problems[i].nparams);
	}
	free(s->problems);
	free_kv(s->tolerance, s->ntolerance);
	for (i = 0; i < s->nsteps; i++) {
		struct spec_step *st = &s->steps[i];
		int j;
		free(st->program);
		free_strv(st->problems);
		free_strv(st->metrics);
		free(st->kernel);
		free(st->clock_control);
		free(st->cache_control);
		free(st->mode);
		free_strv(st->tools);
		for (j = 0; j < st->nvariants; j++) {
			free(st->variants[j].label);
			free_kv(st->variants[j].defines, st->variants[j].ndefines);
		}
		free(st->variants);
	}
	free(s->steps);
	cJSON_Delete(s->baselines);
	cJSON_Delete(s->references);
	cJSON_Delete(s->expected);
	cJSON_Delete(s->gates);
	cJSON_Delete(s->json);
	free(s);
}

/* ---------------------------------------------------------------- queries */

const struct spec_program *spec_find_program(const struct spec *s, const char *name)
{
	int i;
	for (i = 0; i < s->nprograms; i++)
		if (s->programs[i].name && !strcmp(s->programs[i].name, name))
			return &s->programs[i];
	return NULL;
}

const struct spec_problem *spec_find_problem(const struct spec *s, const char *name)
{
	int i;
	for (i = 0; i < s->nproblems; i++)
		if (s->problems[i].name && !strcmp(s->problems[i].name, name))
			return &s->problems[i];
	return NULL;
}

const char *spec_arch_for_gpu(const struct spec *s, const char *gpu_name)
{
	int i;
	if (!gpu_name)
		return NULL;
	for (i = 0; i < s->ntargets; i++)
		if (str_contains_ci(gpu_name, s->targets[i].gpu))
			return s->targets[i].arch;
	return NULL;
}

int spec_arch_satisfies(const char *have, const char *need)
{
	int hn, ha, nn, na;
	if (!need)
		return 1;
	if (!arch_parse(have, &hn, &ha) || !arch_parse(need, &nn, &na))
		return 0;
	if (na) /* arch-specific features exist on that arch only */
		return ha && hn == nn;
	return hn >= nn;
}

const char *spec_step_kind_name(enum step_kind k)
{
	switch (k) {
	case STEP_CORRECTNESS:
		return "correctness";
	case STEP_BENCHMARK:
		return "benchmark";
	case STEP_PROFILE:
		return "profile";
	case STEP_SANITIZE:
		return "sanitize";
	case STEP_SWEEP:
		return "sweep";
	}
	return "unknown";
}
