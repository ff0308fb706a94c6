/* output-figures.c -- figures read from a program's own output (output-figures.h): POSIX
 * regular expressions (regex.h) over its lines, or cJSON over its last line,
 * as a stream (figures_scan_*: fed as the bytes arrive, so the whole output is
 * read though only its head and tail are kept) with the gaps it was not given
 * (figures_scan_gap) said in what it finds. A rule may name the kernel each
 * value belongs to (name_regex, name_group): then it gives a figure per
 * kernel, NAME[KERNEL]. */
#include "tools/output-figures.h"
#include "core/jsonutil.h"

#include <math.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

#define LINE_KEEP 200
#define LINE_SCAN_MAX (16u << 20)   /* a longer line is matched on its head; the rest is a gap */

/* one kernel's figure of a rule with a kernel name */
struct kernel_fig {
	char *name;
	double v;
	char *line;         /* at most LINE_KEEP bytes */
	int stale;          /* a gap came after its last line */
};

struct scan_rule {
	const struct figure_rule *r;
	regex_t re;
	int compiled;       /* 1: re holds the expression; -1: it did not compile */
	regmatch_t *m;      /* re_nsub + 1 of them */
	regex_t name_re;    /* r->name_regex */
	int name_compiled;  /* as compiled */
	char *block;        /* the kernel the last name line named; NULL: none yet (or lost in a gap) */
	int block_lost;     /* a gap came after the last name line */
	int orphans;        /* value lines after a gap before the next name line */
	struct kernel_fig *k;
	int nk;
	char *err;          /* the first error of a named rule: its figures are left out */
	int found;          /* a matching line with a number was seen */
	int bad;            /* the last matching line has no number */
	int stale;          /* a gap came after the last matching line */
	double v;
	char *line;         /* the matched line, at most LINE_KEEP bytes */
};

struct figure_scan {
	struct scan_rule *rules;
	int n;
	struct strbuf cur;         /* the line being read */
	int skip_line;             /* the line being read began in a gap: dropped */
	struct strbuf last;        /* the last non-empty whole line (for JSON) */
	int last_stale;            /* a gap came after it */
	int gaps;
	uint64_t dropped;          /* bytes of the gaps that said their size */
	int dropped_unknown;       /* a gap did not */
};

/* text is a number (surrounding blanks allowed) that is finite */
static int to_number(const char *text, size_t n, double *v)
{
	char buf[64], *end;
	while (n && (*text == ' ' || *text == '\t')) {
		text++;
		n--;
	}
	while (n && (text[n - 1] == ' ' || text[n - 1] == '\t'))
		n--;
	if (!n || n >= sizeof(buf))
		return 0;
	memcpy(buf, text, n);
	buf[n] = '\0';
	*v = strtod(buf, &end);
	return *end == '\0' && isfinite(*v);
}

struct figure_scan *figures_scan_new(const struct figure_rule *rules, int n)
{
	struct figure_scan *s = xcalloc(1, sizeof(*s));
	int i;
	s->rules = xcalloc((size_t)n + 1, sizeof(*s->rules));
	s->n = n;
	strbuf_init(&s->cur, 0);
	strbuf_init(&s->last, 0);
	for (i = 0; i < n; i++) {
		s->rules[i].r = &rules[i];
		if (rules[i].regex)
			s->rules[i].compiled = regcomp(&s->rules[i].re, rules[i].regex, REG_EXTENDED)
						       ? -1 : 1;
		s->rules[i].m = xcalloc(s->rules[i].compiled == 1 ? s->rules[i].re.re_nsub + 2 : 2,
					sizeof(regmatch_t));
		if (rules[i].name_regex)
			s->rules[i].name_compiled = regcomp(&s->rules[i].name_re, rules[i].name_regex,
							    REG_EXTENDED) ? -1 : 1;
	}
	return s;
}

static int is_named(const struct figure_rule *r)
{
	return r->name_regex || r->name_group > 0;
}

static char *keep_line(const char *line, size_t n)
{
	return xstrfmt("%.*s", (int)(n > LINE_KEEP ? LINE_KEEP : n), line);
}

/* The kernel's name in line[so, eo) with blanks trimmed, or NULL with the
 * rule's error said. */
static char *kernel_name(struct scan_rule *sr, const char *line, size_t n, regoff_t so, regoff_t eo,
			 const char *where)
{
	const char *t;
	size_t len;
	char *kept;
	if (so < 0) {
		kept = keep_line(line, n);
		sr->err = xstrfmt("'%s': group %d of /%s/ took no part in the line \"%s\": every "
				  "value needs its kernel's name", sr->r->name, sr->r->name_group,
				  sr->r->regex, kept);
		free(kept);
		return NULL;
	}
	t = line + so;
	len = (size_t)(eo - so);
	while (len && (*t == ' ' || *t == '\t')) {
		t++;
		len--;
	}
	while (len && (t[len - 1] == ' ' || t[len - 1] == '\t'))
		len--;
	if (!metric_kernel_name_ok(t, len)) {
		kept = keep_line(line, n);
		sr->err = xstrfmt("'%s': the kernel's name %s in the line \"%s\" is %s; a kernel's "
				  "name is 1-%d letters, digits, '_', '-' or '+' (fix %s to capture "
				  "only the name)", sr->r->name, where, kept,
				  !len ? "empty" : len > FIGURES_KERNEL_NAME_MAX ? "too long"
				  : "not a plain name",
				  FIGURES_KERNEL_NAME_MAX, where);
		free(kept);
		return NULL;
	}
	return xstrfmt("%.*s", (int)len, t);
}

/* A value v of kernel `name` (taken) read from line. */
static void kernel_value(struct scan_rule *sr, char *name, double v, const char *line, size_t n)
{
	struct kernel_fig *k = NULL;
	int i;
	for (i = 0; i < sr->nk; i++)
		if (!strcmp(sr->k[i].name, name))
			k = &sr->k[i];
	if (k && k->v != v) {
		char *kept = keep_line(line, n);
		sr->err = xstrfmt("'%s': kernel '%s' is printed with two values, %.17g (\"%s\") and "
				  "%.17g (\"%s\"); a figure is one number a run: make /%s/ match one "
				  "line per kernel, or name the blocks apart", sr->r->name, name, k->v,
				  k->line, v, kept, sr->r->regex);
		free(kept);
		free(name);
		return;
	}
	if (!k) {
		if (sr->nk == FIGURES_KERNEL_MAX) {
			sr->err = xstrfmt("'%s': more than %d kernels", sr->r->name,
					  FIGURES_KERNEL_MAX);
			free(name);
			return;
		}
		sr->k = xrealloc(sr->k, ((size_t)sr->nk + 1) * sizeof(*sr->k));
		k = &sr->k[sr->nk++];
		k->name = name;
		k->line = NULL;
	} else {
		free(name);
	}
	free(k->line);
	k->line = keep_line(line, n);
	k->v = v;
	k->stale = 0;
}

/* One line for a rule with a kernel name: a name line first, then a value. */
static void scan_named(struct scan_rule *sr, const char *line, size_t n)
{
	const struct figure_rule *r = sr->r;
	regmatch_t nm[2];
	regmatch_t *m = sr->m;
	int vg = r->name_group == 1 ? 2 : 1;   /* the value's group */
	char *name;
	double v;
	if (sr->err)
		return;
	if (sr->name_compiled == 1 && regexec(&sr->name_re, line, 2, nm, 0) == 0) {
		name = kernel_name(sr, line, n, nm[1].rm_so, nm[1].rm_eo, "group 1 of 'name_regex'");
		if (!name)
			return;
		free(sr->block);
		sr->block = name;
		sr->block_lost = 0;
	}
	if (regexec(&sr->re, line, sr->re.re_nsub + 1, m, 0) != 0 || (size_t)vg > sr->re.re_nsub ||
	    m[vg].rm_so < 0)
		return;
	if (!to_number(line + m[vg].rm_so, (size_t)(m[vg].rm_eo - m[vg].rm_so), &v)) {
		char *kept = keep_line(line, n);
		sr->err = xstrfmt("'%s': the line \"%s\" matches /%s/ but has no number in group %d",
				  r->name, kept, r->regex, vg);
		free(kept);
		return;
	}
	if (r->name_group > 0) {
		name = (size_t)r->name_group <= sr->re.re_nsub
			       ? kernel_name(sr, line, n, m[r->name_group].rm_so,
					     m[r->name_group].rm_eo, "the name group of 'regex'")
			       : NULL;
		if (!name && !sr->err)
			sr->err = xstrfmt("'%s': /%s/ has no group %d", r->name, r->regex,
					  r->name_group);
	} else if (sr->block) {
		name = xstrdup(sr->block);
	} else {
		char *kept;
		if (sr->block_lost) {
			sr->orphans++;
			return;
		}
		kept = keep_line(line, n);
		sr->err = xstrfmt("'%s': the line \"%s\" matches /%s/ before any line names its "
				  "kernel (/%s/)", r->name, kept, r->regex, r->name_regex);
		free(kept);
		return;
	}
	if (name)
		kernel_value(sr, name, v, line, n);
}

/* One whole line (no newline; a CR before it dropped). */
static void scan_line(struct figure_scan *s, char *line, size_t n)
{
	regmatch_t m[2];
	size_t t = n;
	int i;
	for (i = 0; i < s->n; i++) {
		struct scan_rule *sr = &s->rules[i];
		double v;
		if (sr->compiled == 1 && is_named(sr->r)) {
			scan_named(sr, line, n);
			continue;
		}
		if (sr->compiled != 1 || regexec(&sr->re, line, 2, m, 0) != 0 || m[1].rm_so < 0)
			continue;
		if (to_number(line + m[1].rm_so, (size_t)(m[1].rm_eo - m[1].rm_so), &v)) {
			free(sr->line);
			sr->line = xstrfmt("%.*s", (int)(n > LINE_KEEP ? LINE_KEEP : n), line);
			sr->v = v;
			sr->found = 1;
			sr->bad = 0;
		} else {
			sr->bad = 1;    /* the last matching line says no number */
		}
		sr->stale = 0;
	}
	while (t && (line[t - 1] == ' ' || line[t - 1] == '\r'))
		t--;
	if (t) {
		struct strbuf tmp = s->last;
		s->last = s->cur;
		s->cur = tmp;
		strbuf_setlen(&s->last, t);
		s->last_stale = 0;
	}
}

static void end_line(struct figure_scan *s)
{
	size_t n = s->cur.len;
	if (s->skip_line) {
		s->skip_line = 0;
	} else {
		if (n && s->cur.buf[n - 1] == '\r')
			strbuf_setlen(&s->cur, n - 1);
		scan_line(s, s->cur.buf, s->cur.len);
	}
	strbuf_reset(&s->cur);
}

void figures_scan_gap(struct figure_scan *s, uint64_t dropped)
{
	int i;
	/* the line cut by the gap and the one it resumes in are not whole */
	strbuf_reset(&s->cur);
	s->skip_line = 1;
	s->gaps++;
	if (dropped)
		s->dropped += dropped;
	else
		s->dropped_unknown = 1;
	for (i = 0; i < s->n; i++) {
		struct scan_rule *sr = &s->rules[i];
		int k;
		if (sr->found || sr->bad)
			sr->stale = 1;
		for (k = 0; k < sr->nk; k++)
			sr->k[k].stale = 1;
		if (sr->r->name_regex) {
			/* the next value's name line may be in the gap */
			free(sr->block);
			sr->block = NULL;
			sr->block_lost = 1;
		}
	}
	s->last_stale = 1;
}

void figures_scan_feed(struct figure_scan *s, const char *data, size_t len)
{
	while (len) {
		const char *eol = memchr(data, '\n', len);
		size_t n = eol ? (size_t)(eol - data) : len;
		if (!s->skip_line) {
			if (s->cur.len + n > LINE_SCAN_MAX) {
				/* match the head of an endless line; the rest is not read */
				size_t keep = LINE_SCAN_MAX - s->cur.len;
				strbuf_add(&s->cur, data, keep);
				end_line(s);
				figures_scan_gap(s, (uint64_t)(n - keep));
			} else {
				strbuf_add(&s->cur, data, n);
			}
		}
		if (!eol)
			return;
		end_line(s);
		data = eol + 1;
		len -= n + 1;
	}
}

static void add_figure(cJSON *obj, const struct figure_rule *r, double v, const char *src,
		       const char *line, int stale)
{
	cJSON *f = json_add_obj(obj, r->name);
	json_add_num(f, "value", v);
	json_add_str(f, "unit", r->unit);
	json_add_str(f, "better", r->better);
	json_add_str(f, "source", src);
	if (line)
		json_add_str(f, "line", line);
	if (stale)
		json_add_bool(f, "truncated", 1);
}

static void gap_words(const struct figure_scan *s, struct strbuf *sb)
{
	if (s->dropped_unknown)
		strbuf_addstr(sb, "part of the output was not read");
	else
		strbuf_addf(sb, "%llu bytes of the output were not read",
			    (unsigned long long)s->dropped);
}

/* A rule with a kernel name: NAME[KERNEL] each, or why none in missing
 * (returns 0 when it said nothing). */
static int finish_named(const struct figure_scan *s, const struct scan_rule *sr, cJSON *obj,
			struct strbuf *missing)
{
	const struct figure_rule *r = sr->r;
	const char *sep = missing->len ? "; " : "";
	int k;
	if (r->name_regex && sr->name_compiled != 1) {
		strbuf_addf(missing, "%s'%s': 'name_regex' is not a regular expression /%s/", sep,
			    r->name, r->name_regex);
	} else if (sr->err) {
		strbuf_addf(missing, "%s%s", sep, sr->err);
	} else if (sr->orphans) {
		strbuf_addf(missing, "%s'%s': %d line%s matching /%s/ came after the part of the "
			    "output that was not read and before the next line naming a kernel "
			    "(/%s/): whose they are is in that part (", sep, r->name, sr->orphans,
			    sr->orphans == 1 ? "" : "s", r->regex, r->name_regex);
		gap_words(s, missing);
		strbuf_addch(missing, ')');
	} else if (!sr->nk) {
		return 0;   /* said as for any regex */
	} else {
		for (k = 0; k < sr->nk; k++) {
			char *key = xstrfmt("%s[%s]", r->name, sr->k[k].name);
			cJSON *f = json_add_obj(obj, key);
			json_add_num(f, "value", sr->k[k].v);
			json_add_str(f, "unit", r->unit);
			json_add_str(f, "better", r->better);
			json_add_str(f, "source", "regex");
			json_add_str(f, "line", sr->k[k].line);
			json_add_str(f, "figure", r->name);
			json_add_str(f, "kernel", sr->k[k].name);
			if (sr->k[k].stale)
				json_add_bool(f, "truncated", 1);
			free(key);
		}
	}
	return 1;
}

/* The JSON object on the last non-empty line, or NULL. */
static cJSON *last_json(const struct figure_scan *s)
{
	struct strbuf err = STRBUF_INIT;
	cJSON *j = NULL;
	if (s->last.len && s->last.buf[0] == '{' &&
	    json_parse(s->last.buf, s->last.len, "output", &j, &err) == GO_OK && !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		j = NULL;
	}
	strbuf_release(&err);
	return j;
}

cJSON *figures_scan_finish(struct figure_scan *s, struct strbuf *missing)
{
	cJSON *obj = cJSON_CreateObject(), *js = NULL;
	int i, tried = 0;
	if (!obj)
		xmalloc((size_t)-1 / 2);   /* dies with an out-of-memory message */
	if (s->cur.len || s->skip_line)
		end_line(s);    /* the last line has no newline */
	for (i = 0; i < s->n; i++) {
		struct scan_rule *sr = &s->rules[i];
		const struct figure_rule *r = sr->r;
		const char *sep = missing->len ? "; " : "";
		if (r->regex) {
			if (sr->compiled == 1 && is_named(r) && finish_named(s, sr, obj, missing))
				continue;
			if (sr->compiled != 1) {
				strbuf_addf(missing, "%s'%s': not a regular expression /%s/", sep, r->name,
					    r->regex);
			} else if (sr->found && !sr->bad) {
				add_figure(obj, r, sr->v, "regex", sr->line, sr->stale);
			} else if (sr->bad) {
				strbuf_addf(missing, "%s'%s': the last line that matches has no number in "
					    "group 1 of /%s/", sep, r->name, r->regex);
			} else if (s->gaps) {
				strbuf_addf(missing, "%s'%s': no line of the output that was read matches "
					    "/%s/; it could only be in the part that was not read (", sep,
					    r->name, r->regex);
				gap_words(s, missing);
				strbuf_addch(missing, ')');
			} else {
				strbuf_addf(missing, "%s'%s': no line of the output matches /%s/", sep,
					    r->name, r->regex);
			}
			continue;
		}
		if (!tried) {
			js = s->last_stale ? NULL : last_json(s);
			tried = 1;
		}
		{
			const cJSON *v = js ? json_path(js, r->json) : NULL;
			if (v && cJSON_IsNumber(v) && isfinite(v->valuedouble))
				add_figure(obj, r, v->valuedouble, "json", NULL, 0);
			else if (s->last_stale) {
				strbuf_addf(missing, "%s'%s': the last line of the output was not read (",
					    sep, r->name);
				gap_words(s, missing);
				strbuf_addch(missing, ')');
			} else
				strbuf_addf(missing, "%s'%s': %s", sep, r->name,
					    !js ? "the last line of the output is not a JSON object"
						: "no number at that path of the last line's JSON");
		}
	}
	cJSON_Delete(js);
	return obj;
}

int figures_scan_cut(const struct figure_scan *s, uint64_t *dropped)
{
	if (dropped)
		*dropped = s->dropped_unknown ? 0 : s->dropped;
	return s->gaps;
}

void figures_scan_free(struct figure_scan *s)
{
	int i;
	if (!s)
		return;
	for (i = 0; i < s->n; i++) {
		struct scan_rule *sr = &s->rules[i];
		int k;
		if (sr->compiled == 1)
			regfree(&sr->re);
		if (sr->name_compiled == 1)
			regfree(&sr->name_re);
		free(sr->line);
		free(sr->m);
		free(sr->block);
		free(sr->err);
		for (k = 0; k < sr->nk; k++) {
			free(sr->k[k].name);
			free(sr->k[k].line);
		}
		free(sr->k);
	}
	free(s->rules);
	strbuf_release(&s->cur);
	strbuf_release(&s->last);
	free(s);
}

cJSON *figures_read(const struct figure_rule *rules, int n, const char *out, size_t len,
		    struct strbuf *missing)
{
	struct figure_scan *s = figures_scan_new(rules, n);
	cJSON *obj;
	figures_scan_feed(s, out, len);
	obj = figures_scan_finish(s, missing);
	figures_scan_free(s);
	return obj;
}
