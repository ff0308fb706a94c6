/* output-figures.c -- figures read from a program's own output (output-figures.h): POSIX
 * regular expressions (regex.h) over its lines, or cJSON over its last line,
 * as a stream (figures_scan_*: fed as the bytes arrive, so the whole output is
 * read though only its head and tail are kept) with the gaps it was not given
 * (figures_scan_gap) said in what it finds. */
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

struct scan_rule {
	const struct figure_rule *r;
	regex_t re;
	int compiled;       /* 1: re holds the expression; -1: it did not compile */
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
	}
	return s;
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
	for (i = 0; i < s->n; i++)
		if (s->rules[i].found || s->rules[i].bad)
			s->rules[i].stale = 1;
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
		if (s->rules[i].compiled == 1)
			regfree(&s->rules[i].re);
		free(s->rules[i].line);
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
