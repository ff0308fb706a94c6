/* figures.c -- figures read from a program's own output (figures.h): POSIX
 * regular expressions (regex.h) over its lines, or cJSON over its last line. */
#include "tools/figures.h"
#include "core/jsonutil.h"

#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

#define LINE_KEEP 200

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

static void add_figure(cJSON *obj, const struct figure_rule *r, double v, const char *src,
		       const char *line, size_t linelen)
{
	cJSON *f = json_add_obj(obj, r->name);
	char *l = NULL;
	json_add_num(f, "value", v);
	json_add_str(f, "unit", r->unit);
	json_add_str(f, "better", r->better);
	json_add_str(f, "source", src);
	if (line) {
		l = xstrfmt("%.*s", (int)(linelen > LINE_KEEP ? LINE_KEEP : linelen), line);
		json_add_str(f, "line", l);
		free(l);
	}
}

static void read_regex(cJSON *obj, const struct figure_rule *r, const char *out, size_t len,
		       struct strbuf *missing)
{
	regex_t re;
	regmatch_t m[2];
	const char *p = out, *end = out + len;
	const char *best = NULL;
	size_t bestlen = 0;
	double bestv = 0;
	int bad = 0;
	char *line = NULL;
	size_t cap = 0;

	if (regcomp(&re, r->regex, REG_EXTENDED) != 0) {
		strbuf_addf(missing, "%s'%s': not a regular expression /%s/", missing->len ? "; " : "",
			    r->name, r->regex);
		return;
	}
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((eol ? eol : end) - p);
		if (n && p[n - 1] == '\r')
			n--;
		if (n + 1 > cap) {
			cap = n + 1;
			line = xrealloc(line, cap);
		}
		memcpy(line, p, n);
		line[n] = '\0';
		if (regexec(&re, line, 2, m, 0) == 0 && m[1].rm_so >= 0) {
			double v;
			if (to_number(line + m[1].rm_so, (size_t)(m[1].rm_eo - m[1].rm_so), &v)) {
				best = p;
				bestlen = n;
				bestv = v;
				bad = 0;
			} else {
				bad = 1;    /* the last matching line says no number */
			}
		}
		p = eol ? eol + 1 : end;
	}
	regfree(&re);
	free(line);
	if (best && !bad)
		add_figure(obj, r, bestv, "regex", best, bestlen);
	else
		strbuf_addf(missing, "%s'%s': %s /%s/", missing->len ? "; " : "", r->name,
			    bad ? "the last line that matches has no number in group 1 of"
				: "no line of the output matches", r->regex);
}

/* The JSON object on the last non-empty line, or NULL. */
static cJSON *last_json(const char *out, size_t len)
{
	const char *end = out + len, *bol;
	struct strbuf err = STRBUF_INIT;
	cJSON *j = NULL;
	while (end > out && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		end--;
	bol = end;
	while (bol > out && bol[-1] != '\n')
		bol--;
	if (end > bol && *bol == '{' &&
	    json_parse(bol, (size_t)(end - bol), "output", &j, &err) == GO_OK && !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		j = NULL;
	}
	strbuf_release(&err);
	return j;
}

cJSON *figures_read(const struct figure_rule *rules, int n, const char *out, size_t len,
		    struct strbuf *missing)
{
	cJSON *obj = cJSON_CreateObject(), *js = NULL;
	int i, tried = 0;
	if (!obj)
		xmalloc((size_t)-1 / 2);   /* dies with an out-of-memory message */
	for (i = 0; i < n; i++) {
		const struct figure_rule *r = &rules[i];
		if (r->regex) {
			read_regex(obj, r, out, len, missing);
			continue;
		}
		if (!tried) {
			js = last_json(out, len);
			tried = 1;
		}
		{
			const cJSON *v = js ? json_path(js, r->json) : NULL;
			if (v && cJSON_IsNumber(v) && isfinite(v->valuedouble))
				add_figure(obj, r, v->valuedouble, "json", NULL, 0);
			else
				strbuf_addf(missing, "%s'%s': %s", missing->len ? "; " : "", r->name,
					    !js ? "the last line of the output is not a JSON object"
						: "no number at that path of the last line's JSON");
		}
	}
	cJSON_Delete(js);
	return obj;
}
