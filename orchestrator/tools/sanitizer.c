/* sanitizer.c -- compute-sanitizer's report read into the record (sanitizer.h).
 *
 * Every line the sanitizer prints starts with "=========". A report starts
 * at a line with no further indentation ("Invalid __global__ write of size
 * 4 bytes", "Warning: ... Potential RAW hazard detected at __shared__ 0x784
 * in block (8,0,0) :", "Error: Race reported between Write access at 0x50
 * in race.cu:13:k(int*)", "Barrier error detected...", "Program hit
 * cudaErrorLaunchFailure ...") and goes on with indented lines: "at K+0xd0
 * in F:L" or the older "at 0x70 in F:L:K", "by thread (x,y,z) in block
 * (x,y,z)", "Write Thread (t) at K in F:L", "Access to 0x... is out of
 * bounds" / "Address 0x...". Host backtraces are skipped. The summary is
 * "ERROR SUMMARY: N errors" or, for racecheck, "RACECHECK SUMMARY: H hazards
 * displayed (E errors, W warnings)". */
#include "tools/sanitizer.h"
#include "core/jsonutil.h"
#include "core/strbuf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

#define PREFIX "========="

static int starts(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* "(232,0,0)" starting at s into a new string; NULL when none. */
static char *paren(const char *s)
{
	const char *e;
	s = strchr(s, '(');
	if (!s)
		return NULL;
	e = strchr(s, ')');
	return e ? xstrfmt("%.*s", (int)(e - s + 1), s) : NULL;
}

static void set_once(cJSON *o, const char *key, const char *val, size_t n)
{
	if (cJSON_GetObjectItem(o, key) || !n)
		return;
	{
		char *v = xstrfmt("%.*s", (int)(n > 300 ? 300 : n), val);
		json_add_str(o, key, v);
		free(v);
	}
}

/* "K+0xd0 in F:L" or "0x70 in F:L:K": the kernel and the location. */
static void parse_at(cJSON *rep, const char *s)
{
	const char *in = strstr(s, " in ");
	const char *plus;
	if (!in)
		return;
	plus = strstr(s, "+0x");
	if (!strncmp(s, "0x", 2)) {
		/* older form: at 0x70 in /path/file.cu:8:kernel(int*) */
		const char *loc = in + 4, *c1 = strchr(loc, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (c2) {
			const char *k = c2 + 1, *br = strstr(k, " [");
			set_once(rep, "location", loc, (size_t)(c2 - loc));
			set_once(rep, "kernel", k, br ? (size_t)(br - k) : strcspn(k, "\n"));
		} else {
			set_once(rep, "location", loc, strcspn(loc, " \n"));
		}
		return;
	}
	set_once(rep, "kernel", s, (size_t)((plus && plus < in ? plus : in) - s));
	set_once(rep, "location", in + 4, strcspn(in + 4, " \n"));
}

static void parse_sub(cJSON *rep, const char *s)
{
	const char *p;
	if (starts(s, "at ")) {
		parse_at(rep, s + 3);
	} else if (starts(s, "by thread")) {
		char *t = paren(s), *b = NULL;
		p = strstr(s, "block");
		if (p)
			b = paren(p);
		if (t)
			set_once(rep, "thread", t, strlen(t));
		if (b)
			set_once(rep, "block", b, strlen(b));
		free(t);
		free(b);
	} else if ((p = strstr(s, "Thread (")) && (starts(s, "Write") || starts(s, "Read"))) {
		char *t = paren(p);
		const char *at = strstr(p, " at ");
		if (t)
			set_once(rep, "thread", t, strlen(t));
		free(t);
		if (at)
			parse_at(rep, at + 4);
	} else if (starts(s, "and ") && (p = strstr(s, " at "))) {
		parse_at(rep, p + 4);
	} else if (starts(s, "Access to ") || starts(s, "Address ")) {
		p = strstr(s, "0x");
		if (p)
			set_once(rep, "address", p, strcspn(p, " \n"));
		set_once(rep, "detail", s, strcspn(s, "\n"));
	}
}

static int is_report_start(const char *s)
{
	if (!*s || isspace((unsigned char)*s))
		return 0;
	if (starts(s, "COMPUTE-SANITIZER") || starts(s, "ERROR SUMMARY") ||
	    starts(s, "RACECHECK SUMMARY") || starts(s, "LEAK SUMMARY") ||
	    starts(s, "Target application returned") || starts(s, "This tool is deprecated"))
		return 0;
	return 1;
}

/* "N error(s)" at s: 1 and *n when it is; "errors were not printed" too. */
static int read_count(const char *s, long long *n, int *not_printed)
{
	char *end;
	long long v = strtoll(s, &end, 10);
	if (end == s)
		return 0;
	while (*end == ' ')
		end++;
	if (strncmp(end, "error", 5))
		return 0;
	*not_printed = strstr(end, "not printed") != NULL;
	*n = v;
	return 1;
}

enum go_status sanitizer_parse(const char *text, size_t len, const char *tool, cJSON **out,
			       struct strbuf *err)
{
	cJSON *o = cJSON_CreateObject(), *first, *rep = NULL;
	const char *p = text, *end = text + len;
	long long errors = -1, warnings = -1, hazards = -1, not_printed = -1;
	int nreports = 0, have_summary = 0;
	char *summary = NULL;

	*out = o;
	json_add_str(o, "tool", tool);
	first = cJSON_CreateArray();
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t n = eol ? (size_t)(eol - p) : (size_t)(end - p);
		char *line = xstrfmt("%.*s", (int)n, p), *s;
		p += n + (eol ? 1 : 0);
		if (!starts(line, PREFIX)) {
			free(line);
			continue;
		}
		for (s = line + strlen(PREFIX); *s == '='; s++)
			;
		if (*s == ' ')
			s++;
		while (*s && (s[strlen(s) - 1] == '\r' || s[strlen(s) - 1] == ' '))
			s[strlen(s) - 1] = '\0';
		if (starts(s, "ERROR SUMMARY:")) {
			long long v;
			int np;
			if (read_count(s + 14 + strspn(s + 14, " "), &v, &np)) {
				if (np) {
					not_printed = v;
				} else if (errors < 0 || !have_summary) {
					errors = v;
					have_summary = 1;
					free(summary);
					summary = xstrdup(s);
				}
			}
		} else if (starts(s, "RACECHECK SUMMARY:")) {
			long long h = 0, e = 0, w = 0;
			const char *q = s + 18;
			if (sscanf(q, " %lld hazard", &h) == 1)
				hazards = h;
			q = strchr(q, '(');
			if (q && sscanf(q, "(%lld error", &e) == 1 && (q = strchr(q, ',')) &&
			    sscanf(q, ", %lld warning", &w) == 1) {
				errors = e;
				warnings = w;
				have_summary = 1;
				free(summary);
				summary = xstrdup(s);
			}
		} else if (is_report_start(s)) {
			nreports++;
			rep = NULL;
			if (cJSON_GetArraySize(first) < SANITIZER_MAX_REPORTS) {
				const char *at;
				rep = cJSON_CreateObject();
				json_add_str(rep, "what", s);
				/* racecheck heads carry the address and block on the first line */
				if ((at = strstr(s, "detected at ")) && strstr(at, "0x")) {
					const char *a = strstr(at, "0x");
					set_once(rep, "address", a, strcspn(a, " \n"));
				}
				if ((at = strstr(s, " in block "))) {
					char *b = paren(at);
					if (b)
						set_once(rep, "block", b, strlen(b));
					free(b);
				}
				if (starts(s, "Error: Race reported between") &&
				    (at = strstr(s, " access at ")))
					parse_at(rep, at + 11);
				cJSON_AddItemToArray(first, rep);
			}
		} else if (rep && *s == ' ') {
			while (*s == ' ')
				s++;
			if (!starts(s, "Saved host backtrace") && !starts(s, "Host Frame"))
				parse_sub(rep, s);
		}
		free(line);
	}
#define NUM_OR_NULL(key, v) do { if ((v) >= 0) json_add_num(o, key, (double)(v)); \
				 else cJSON_AddNullToObject(o, key); } while (0)
	NUM_OR_NULL("errors", errors);
	NUM_OR_NULL("warnings", warnings);
	NUM_OR_NULL("hazards_displayed", hazards);
	NUM_OR_NULL("not_printed", not_printed);
#undef NUM_OR_NULL
	json_add_str(o, "summary", summary);
	json_add_num(o, "reports_seen", nreports);
	cJSON_AddItemToObject(o, "first_errors", first);
	free(summary);
	if (!have_summary)
		return go_fail(err, GO_ERR_REMOTE, "compute-sanitizer printed no ERROR SUMMARY line: "
			       "its output is cut short (the step was killed or timed out) or the "
			       "tool did not start; see the sanitizer log");
	return GO_OK;
}

void sanitizer_describe(const cJSON *san, struct strbuf *sb)
{
	const cJSON *f = cJSON_GetArrayItem(cJSON_GetObjectItem(san, "first_errors"), 0);
	const char *s;
	strbuf_addf(sb, "%s: ", json_str(san, "tool") ? json_str(san, "tool") : "sanitizer");
	if (json_has_num(san, "errors"))
		strbuf_addf(sb, "%.0f error%s", json_num(san, "errors", 0),
			    json_num(san, "errors", 0) == 1 ? "" : "s");
	else
		strbuf_addstr(sb, "no error count");
	if (!f)
		return;
	strbuf_addstr(sb, "; first: ");
	strbuf_addstr(sb, json_str(f, "what") ? json_str(f, "what") : "?");
	if ((s = json_str(f, "kernel")))
		strbuf_addf(sb, " in %s", s);
	if ((s = json_str(f, "location")))
		strbuf_addf(sb, " at %s", s);
	if ((s = json_str(f, "thread")))
		strbuf_addf(sb, ", thread %s", s);
	if ((s = json_str(f, "block")))
		strbuf_addf(sb, " block %s", s);
}
