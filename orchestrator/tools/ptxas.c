/* ptxas.c -- parse `nvcc -Xptxas -v` output into per-kernel resources.
 *
 * DESIGN
 *   One pass over the lines. ptxas prints, per arch, a "N bytes gmem" line that
 *   opens a section, then for each function a block:
 *
 *     Compiling entry function 'X' for 'sm_90a'      (kernels only)
 *     Function properties for X
 *         N bytes stack frame, N bytes spill stores, N bytes spill loads
 *     Used N registers, used N barriers, N bytes smem, N bytes cmem[0], ...
 *     Compile time = N ms
 *
 *   Device functions have only the middle two lines, and take the arch of
 *   their section (filled in afterwards when the function came before the
 *   section's first kernel). Warnings come before the section they belong
 *   to; each is attached, once parsing is done, to the first function of
 *   that name reported after it (or else the last one before it). Every
 *   field starts unknown (-1, written as null) so that a log cut short gives
 *   a partial record rather than zeros that look measured.
 */
#include "tools/ptxas.h"
#include "core/jsonutil.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

#define MAX_FUNCS 100000      /* bound on records kept from one log */
#define MAX_DEPTH 16          /* bound on nesting while demangling */

struct func {
	char *name;
	char *arch;
	int entry;
	int section;
	int has_used;             /* its "Used N registers" line was seen */
	long registers, barriers, smem, cmem, stack, cumulative_stack, spill_st, spill_ld;
	double compile_ms;
	cJSON *warnings;
};

struct warning {
	char *name;
	char *text;
	int pos;                  /* number of functions seen when it was printed */
};

struct parser {
	struct func *f;
	int nf, af;
	struct warning *w;
	int nw, aw;
	int section;
	char *section_arch;       /* arch of the current section, or NULL */
	int cur_entry;            /* index of the kernel being compiled, or -1 */
	int cur_props;            /* index of the last "Function properties for", or -1 */
	struct strbuf *notes;
};

/* ---- small text helpers ---- */

static int starts_with(const char *s, const char *end, const char *prefix)
{
	size_t n = strlen(prefix);
	return (size_t)(end - s) >= n && !memcmp(s, prefix, n);
}

static const char *skip_ws(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

/* The first needle in [s, end), or NULL: the text need not be NUL-terminated. */
static const char *find(const char *s, const char *end, const char *needle)
{
	size_t n = strlen(needle);
	for (; s && (size_t)(end - s) >= n; s++)
		if (*s == *needle && !memcmp(s, needle, n))
			return s;
	return NULL;
}

/* A decimal number at *s; advances *s. -1 when there is none. */
static long read_long(const char **s, const char *end)
{
	long v = 0;
	const char *p = *s;
	if (p >= end || !isdigit((unsigned char)*p))
		return -1;
	while (p < end && isdigit((unsigned char)*p)) {
		if (v > (LONG_MAX - 9) / 10)
			return -1;
		v = v * 10 + (*p - '0');
		p++;
	}
	*s = p;
	return v;
}

/* The text between the first pair of single quotes after s, as a new string. */
static char *quoted(const char *s, const char *end)
{
	const char *a = memchr(s, '\'', (size_t)(end - s));
	const char *b;
	if (!a)
		return NULL;
	b = memchr(a + 1, '\'', (size_t)(end - a - 1));
	if (!b || b == a + 1)
		return NULL;
	return xstrfmt("%.*s", (int)(b - a - 1), a + 1);
}

static void note(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct parser *ps, const char *fmt, ...)
{
	va_list ap;
	if (!ps->notes)
		return;
	va_start(ap, fmt);
	strbuf_vaddf(ps->notes, fmt, ap);
	va_end(ap);
	strbuf_addch(ps->notes, '\n');
}

/* ---- records ---- */

static int new_func(struct parser *ps, const char *name, int entry)
{
	struct func *f;
	if (ps->nf >= MAX_FUNCS)
		return -1;
	if (ps->nf == ps->af) {
		ps->af = ps->af ? 2 * ps->af : 16;
		ps->f = xrealloc(ps->f, (size_t)ps->af * sizeof(*ps->f));
	}
	f = &ps->f[ps->nf];
	memset(f, 0, sizeof(*f));
	f->name = xstrdup(name);
	f->arch = ps->section_arch ? xstrdup(ps->section_arch) : NULL;
	f->entry = entry;
	f->section = ps->section;
	f->registers = f->barriers = f->smem = f->cmem = -1;
	f->stack = f->cumulative_stack = f->spill_st = f->spill_ld = -1;
	f->compile_ms = -1;
	return ps->nf++;
}

static void set_section_arch(struct parser *ps, const char *arch)
{
	int i;
	if (ps->section_arch && !strcmp(ps->section_arch, arch))
		return;
	free(ps->section_arch);
	ps->section_arch = xstrdup(arch);
	/* functions reported before the section's first kernel */
	for (i = ps->nf - 1; i >= 0 && ps->f[i].section == ps->section; i--)
		if (!ps->f[i].arch)
			ps->f[i].arch = xstrdup(arch);
}

/* ---- one line each ---- */

/* "Compiling entry function 'X' for 'sm_90a'" */
static void on_compiling(struct parser *ps, const char *s, const char *end)
{
	char *name = quoted(s, end);
	const char *after;
	char *arch = NULL;
	if (!name) {
		note(ps, "ptxas line 'Compiling entry function' names no function");
		ps->cur_entry = -1;
		return;
	}
	after = find(s, end, "' for ");
	if (after)
		arch = quoted(after + 1, end);
	if (arch)
		set_section_arch(ps, arch);
	ps->cur_entry = new_func(ps, name, 1);
	ps->cur_props = -1;
	free(name);
	free(arch);
}

/* "Function properties for X" */
static void on_properties(struct parser *ps, const char *s, const char *end)
{
	char *name;
	s = skip_ws(s, end);
	if (s >= end)
		return;
	name = xstrfmt("%.*s", (int)(end - s), s);
	if (ps->cur_entry >= 0 && !strcmp(ps->f[ps->cur_entry].name, name)) {
		ps->cur_props = ps->cur_entry;
	} else {
		ps->cur_entry = -1;   /* a device function ends the kernel's block */
		ps->cur_props = new_func(ps, name, 0);
	}
	free(name);
}

/* "N bytes stack frame, N bytes spill stores, N bytes spill loads" */
static void on_frame(struct parser *ps, const char *s, const char *end)
{
	struct func *f;
	if (ps->cur_props < 0)
		return;
	f = &ps->f[ps->cur_props];
	while (s < end) {
		long v;
		const char *item_end = memchr(s, ',', (size_t)(end - s));
		if (!item_end)
			item_end = end;
		s = skip_ws(s, item_end);
		v = read_long(&s, item_end);
		if (v >= 0) {
			if (starts_with(s, item_end, " bytes stack frame"))
				f->stack = v;
			else if (starts_with(s, item_end, " bytes spill stores"))
				f->spill_st = v;
			else if (starts_with(s, item_end, " bytes spill loads"))
				f->spill_ld = v;
		}
		s = item_end < end ? item_end + 1 : end;
	}
}

/* "Used N registers, used N barriers, N bytes smem, N bytes cmem[0], ..." */
static void on_used(struct parser *ps, const char *s, const char *end)
{
	struct func *f;
	if (ps->cur_entry < 0)
		return;
	f = &ps->f[ps->cur_entry];
	f->has_used = 1;
	while (s < end) {
		long v;
		const char *item_end = memchr(s, ',', (size_t)(end - s));
		if (!item_end)
			item_end = end;
		s = skip_ws(s, item_end);
		if (starts_with(s, item_end, "Used ") || starts_with(s, item_end, "used "))
			s += 5;
		v = read_long(&s, item_end);
		if (v >= 0) {
			if (starts_with(s, item_end, " registers"))
				f->registers = v;
			else if (starts_with(s, item_end, " barriers"))
				f->barriers = v;
			else if (starts_with(s, item_end, " bytes smem"))
				f->smem = v;
			else if (starts_with(s, item_end, " bytes cmem"))
				f->cmem = (f->cmem < 0 ? 0 : f->cmem) + v;
			else if (starts_with(s, item_end, " bytes cumulative stack size"))
				f->cumulative_stack = v;
		}
		s = item_end < end ? item_end + 1 : end;
	}
}

/* "Compile time = 12.3 ms" */
static void on_compile_time(struct parser *ps, const char *s, const char *end)
{
	char buf[64];
	char *e;
	double v;
	size_t n = (size_t)(end - s);
	if (ps->cur_entry < 0 && ps->cur_props < 0)
		return;
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	v = strtod(buf, &e);
	if (e == buf || v < 0)
		return;
	ps->f[ps->cur_entry >= 0 ? ps->cur_entry : ps->cur_props].compile_ms = v;
}

static void on_warning(struct parser *ps, const char *line, const char *s, const char *end)
{
	char *name = NULL;
	const char *fn = find(s, end, "function '");
	if (fn)
		name = quoted(fn, end);
	if (!name) {
		char *text = xstrfmt("%.*s", (int)(end - line), line);
		note(ps, "%s", text);
		free(text);
		return;
	}
	if (ps->nw == ps->aw) {
		ps->aw = ps->aw ? 2 * ps->aw : 8;
		ps->w = xrealloc(ps->w, (size_t)ps->aw * sizeof(*ps->w));
	}
	ps->w[ps->nw].name = name;
	ps->w[ps->nw].text = xstrfmt("%.*s", (int)(end - s), s);
	ps->w[ps->nw].pos = ps->nf;
	ps->nw++;
}

static void parse_line(struct parser *ps, const char *line, const char *end)
{
	const char *s = line;
	const char *colon;

	while (end > line && (end[-1] == '\r' || end[-1] == ' '))
		end--;
	s = skip_ws(s, end);
	if (s < end && isdigit((unsigned char)*s)) {
		on_frame(ps, s, end);
		return;
	}
	if (!starts_with(s, end, "ptxas"))
		return;
	colon = memchr(s, ':', (size_t)(end - s));
	if (!colon)
		return;
	if (starts_with(s, end, "ptxas warning") || starts_with(s, end, "ptxas error") ||
	    starts_with(s, end, "ptxas fatal")) {
		if (starts_with(s, end, "ptxas warning")) {
			on_warning(ps, s, skip_ws(colon + 1, end), end);
		} else {
			char *text = xstrfmt("%.*s", (int)(end - s), s);
			note(ps, "%s", text);
			free(text);
		}
		return;
	}
	if (!starts_with(s, end, "ptxas info"))
		return;
	s = skip_ws(colon + 1, end);
	if (starts_with(s, end, "Compiling entry function"))
		on_compiling(ps, s, end);
	else if (starts_with(s, end, "Function properties for"))
		on_properties(ps, s + strlen("Function properties for"), end);
	else if (starts_with(s, end, "Used "))
		on_used(ps, s, end);
	else if (starts_with(s, end, "Compile time ="))
		on_compile_time(ps, skip_ws(s + strlen("Compile time ="), end), end);
	else if (s < end && isdigit((unsigned char)*s) && find(s, end, " bytes gmem")) {
		/* a new ptxas invocation (one per arch) */
		ps->section++;
		free(ps->section_arch);
		ps->section_arch = NULL;
		ps->cur_entry = ps->cur_props = -1;
	}
}

/* ---- output ---- */

static void add_num_or_null(cJSON *o, const char *key, double v)
{
	if (v < 0)
		json_add_str(o, key, NULL);
	else
		json_add_num(o, key, v);
}

static void attach_warnings(struct parser *ps)
{
	int i, k;
	for (i = 0; i < ps->nw; i++) {
		struct warning *w = &ps->w[i];
		int at = -1;
		for (k = w->pos; k < ps->nf && at < 0; k++)
			if (!strcmp(ps->f[k].name, w->name))
				at = k;
		for (k = w->pos - 1; k >= 0 && at < 0; k--)
			if (!strcmp(ps->f[k].name, w->name))
				at = k;
		if (at < 0) {
			note(ps, "ptxas warning about a function it did not report: %s", w->text);
			continue;
		}
		if (!ps->f[at].warnings)
			ps->f[at].warnings = cJSON_CreateArray();
		cJSON_AddItemToArray(ps->f[at].warnings, cJSON_CreateString(w->text));
	}
}

cJSON *ptxas_parse(const char *text, size_t len, struct strbuf *notes)
{
	struct parser ps;
	cJSON *arr = cJSON_CreateArray();
	const char *p = text, *end = text ? text + len : NULL;
	int i;

	memset(&ps, 0, sizeof(ps));
	ps.cur_entry = ps.cur_props = -1;
	ps.notes = notes;
	if (!arr)
		xmalloc((size_t)-1 / 2); /* out of memory: dies */
	while (p && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		/* a NUL inside the text ends the line there */
		const char *z = memchr(p, '\0', (size_t)(le - p));
		parse_line(&ps, p, z ? z : le);
		p = nl ? nl + 1 : end;
	}
	if (ps.nf >= MAX_FUNCS)
		note(&ps, "ptxas output lists more than %d functions; the rest are left out",
		     MAX_FUNCS);
	attach_warnings(&ps);

	for (i = 0; i < ps.nf; i++) {
		struct func *f = &ps.f[i];
		struct strbuf dm = STRBUF_INIT;
		cJSON *o = cJSON_CreateObject();
		long stack = f->cumulative_stack > f->stack ? f->cumulative_stack : f->stack;

		if (!o)
			xmalloc((size_t)-1 / 2);
		ptxas_demangle(f->name, &dm);
		json_add_str(o, "kernel", f->name);
		json_add_str(o, "demangled", dm.buf);
		json_add_bool(o, "entry", f->entry);
		json_add_str(o, "arch", f->arch);
		add_num_or_null(o, "registers", (double)f->registers);
		add_num_or_null(o, "barriers", (double)f->barriers);
		add_num_or_null(o, "smem_bytes", (double)f->smem);
		add_num_or_null(o, "cmem_bytes", (double)f->cmem);
		add_num_or_null(o, "stack_bytes", (double)stack);
		add_num_or_null(o, "spill_store_bytes", (double)f->spill_st);
		add_num_or_null(o, "spill_load_bytes", (double)f->spill_ld);
		add_num_or_null(o, "compile_ms", f->compile_ms);
		if (!f->warnings)
			f->warnings = cJSON_CreateArray();
		cJSON_AddItemToObject(o, "warnings", f->warnings);
		f->warnings = NULL;
		cJSON_AddItemToArray(arr, o);
		if (f->entry && !f->has_used)
			note(&ps, "ptxas output for '%s' ends before its 'Used N registers' line "
			     "(truncated log?)", f->name);
		else if (f->stack < 0)
			note(&ps, "ptxas output for '%s' has no stack frame line (truncated log?)",
			     f->name);
		strbuf_release(&dm);
		free(f->name);
		free(f->arch);
	}
	for (i = 0; i < ps.nw; i++) {
		free(ps.w[i].name);
		free(ps.w[i].text);
	}
	free(ps.w);
	free(ps.f);
	free(ps.section_arch);
	return arr;
}

/* ==== demangling: a small subset of the Itanium C++ ABI ==== */

struct dm {
	const char *p, *end;
	int ok;
	int depth;
};

static int dm_peek(struct dm *d, size_t ahead)
{
	return d->p + ahead < d->end ? (unsigned char)d->p[ahead] : 0;
}

/* <source-name> ::= <number> <identifier> */
static int dm_source_name(struct dm *d, struct strbuf *out)
{
	long n = read_long(&d->p, d->end);
	if (n <= 0 || n > d->end - d->p)
		return d->ok = 0;
	if (n > 10 && !memcmp(d->p, "_GLOBAL__N", 10))
		strbuf_addstr(out, "(anonymous namespace)");
	else
		strbuf_add(out, d->p, (size_t)n);
	d->p += n;
	return 1;
}

static const char *dm_builtin(int c)
{
	switch (c) {
	case 'v': return "void";
	case 'b': return "bool";
	case 'c': return "char";
	case 'a': return "signed char";
	case 'h': return "unsigned char";
	case 's': return "short";
	case 't': return "unsigned short";
	case 'i': return "int";
	case 'j': return "unsigned int";
	case 'l': return "long";
	case 'm': return "unsigned long";
	case 'x': return "long long";
	case 'y': return "unsigned long long";
	case 'n': return "__int128";
	case 'o': return "unsigned __int128";
	case 'f': return "float";
	case 'd': return "double";
	case 'e': return "long double";
	case 'w': return "wchar_t";
	default: return NULL;
	}
}

static int dm_template_args(struct dm *d, struct strbuf *out);
static int dm_nested(struct dm *d, struct strbuf *out);

static int dm_type(struct dm *d, struct strbuf *out)
{
	int c = dm_peek(d, 0);
	const char *b = dm_builtin(c);
	if (++d->depth > MAX_DEPTH)
		return d->ok = 0;
	if (b) {
		strbuf_addstr(out, b);
		d->p++;
	} else if (c == 'P' || c == 'R' || c == 'K') {
		struct strbuf inner = STRBUF_INIT;
		d->p++;
		dm_type(d, &inner);
		if (c == 'K')
			strbuf_addf(out, "%s const", inner.buf);
		else
			strbuf_addf(out, "%s%s", inner.buf, c == 'P' ? "*" : "&");
		strbuf_release(&inner);
	} else if (isdigit(c)) {
		if (dm_source_name(d, out) && dm_peek(d, 0) == 'I')
			dm_template_args(d, out);
	} else if (c == 'N') {
		dm_nested(d, out);
	} else {
		d->ok = 0;   /* substitutions, function types, ...: not read */
	}
	d->depth--;
	return d->ok;
}

/* L <type> <value> E */
static int dm_literal(struct dm *d, struct strbuf *out)
{
	int c, neg = 0;
	long v;
	d->p++; /* L */
	c = dm_peek(d, 0);
	if (!dm_builtin(c))
		return d->ok = 0;
	d->p++;
	if (dm_peek(d, 0) == 'n') {
		neg = 1;
		d->p++;
	}
	v = read_long(&d->p, d->end);
	if (v < 0 || dm_peek(d, 0) != 'E')
		return d->ok = 0;
	d->p++;
	if (c == 'b')
		strbuf_addstr(out, v ? "true" : "false");
	else
		strbuf_addf(out, "%s%ld%s", neg ? "-" : "", v,
			    c == 'j' ? "u" : c == 'l' ? "l" : c == 'm' ? "ul" : "");
	return 1;
}

/* I <arg>+ E, appended as "<a, b>"; "<...>" when an argument cannot be read */
static int dm_template_args(struct dm *d, struct strbuf *out)
{
	struct strbuf args = STRBUF_INIT;
	int n = 0;
	d->p++; /* I */
	while (d->ok && d->p < d->end && *d->p != 'E') {
		if (n++)
			strbuf_addstr(&args, ", ");
		if (*d->p == 'L')
			dm_literal(d, &args);
		else
			dm_type(d, &args);
	}
	if (d->ok && dm_peek(d, 0) == 'E') {
		d->p++;
		strbuf_addf(out, "<%s>", args.buf);
	} else {
		strbuf_addstr(out, "<...>");
	}
	strbuf_release(&args);
	return d->ok;
}

/* N [qualifiers] <prefix>+ E, components joined with "::" */
static int dm_nested(struct dm *d, struct strbuf *out)
{
	int n = 0;
	d->p++; /* N */
	while (dm_peek(d, 0) == 'r' || dm_peek(d, 0) == 'V' || dm_peek(d, 0) == 'K')
		d->p++;
	while (d->ok && d->p < d->end && *d->p != 'E') {
		if (*d->p == 'I') {
			if (!dm_template_args(d, out))
				return 0;
			continue;
		}
		if (n++)
			strbuf_addstr(out, "::");
		if (starts_with(d->p, d->end, "St")) {
			strbuf_addstr(out, "std");
			d->p += 2;
		} else if (!isdigit((unsigned char)*d->p) || !dm_source_name(d, out)) {
			return d->ok = 0;
		}
	}
	if (dm_peek(d, 0) != 'E')
		return d->ok = 0;
	d->p++;
	return 1;
}

void ptxas_demangle(const char *mangled, struct strbuf *out)
{
	struct dm d;
	size_t start = out->len;
	if (!mangled)
		return;
	if (strncmp(mangled, "_Z", 2) != 0) {
		strbuf_addstr(out, mangled);
		return;
	}
	d.p = mangled + 2;
	d.end = mangled + strlen(mangled);
	d.ok = 1;
	d.depth = 0;
	if (dm_peek(&d, 0) == 'L')      /* internal linkage */
		d.p++;
	if (dm_peek(&d, 0) == 'N') {
		dm_nested(&d, out);
	} else if (starts_with(d.p, d.end, "St")) {
		d.p += 2;
		strbuf_addstr(out, "std::");
		if (dm_source_name(&d, out) && dm_peek(&d, 0) == 'I')
			dm_template_args(&d, out);
	} else if (isdigit(dm_peek(&d, 0))) {
		if (dm_source_name(&d, out) && dm_peek(&d, 0) == 'I')
			dm_template_args(&d, out);
	} else {
		d.ok = 0;
	}
	/* a name that could not be read at all is shown as it was */
	if (out->len == start || (!d.ok && !strchr(out->buf + start, '<'))) {
		strbuf_setlen(out, start);
		strbuf_addstr(out, mangled);
	}
}
