/* test_specmany.c -- a spec of many problems (issue 31 item 6): a name
 * defined or listed twice is found by sorting, not by comparing each name
 * with all before it, and the error is the one the scan gave (the earliest
 * repeat, naming the first definition; with three of a name, the second);
 * spec_find_problem bisects its index and finds every problem. */
#include "spec/spec.h"
#include "core/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/banned.h"

/* n problems p00000.. with names[i] overriding some; steps_problems spliced
 * into the step (NULL: none). */
static enum go_status parse(int n, const char *const *names, const char *steps_problems,
			    struct spec **s, struct strbuf *err)
{
	struct strbuf t = STRBUF_INIT;
	enum go_status st;
	int i;
	strbuf_addstr(&t, "{\"schema\": 1, \"name\": \"many\", \"phase\": \"p\", \"sources\": [\"c.c\"],"
			  " \"targets\": {\"H100\": \"sm_90a\"},"
			  " \"programs\": {\"c\": {\"sources\": [\"c.c\"], \"needs_gpu\": false}},"
			  " \"problems\": [");
	for (i = 0; i < n; i++) {
		if (names && names[i])
			strbuf_addf(&t, "%s{\"name\": \"%s\"}", i ? "," : "", names[i]);
		else
			strbuf_addf(&t, "%s{\"name\": \"p%05d\"}", i ? "," : "", i);
	}
	strbuf_addf(&t, "], \"steps\": [{\"kind\": \"benchmark\", \"program\": \"c\"%s%s}]}",
		    steps_problems ? ", \"problems\": " : "", steps_problems ? steps_problems : "");
	*s = NULL;
	strbuf_reset(err);
	st = spec_parse("many.json", t.buf, t.len, ".", 0, s, err);
	strbuf_release(&t);
	return st;
}

int main(void)
{
	enum { N = 20000 };
	const char **names = xcalloc(N, sizeof(*names));
	struct strbuf err = STRBUF_INIT;
	struct spec *s = NULL;
	int i, all = 1;

	CHECK(parse(N, NULL, NULL, &s, &err) == GO_OK && s->nproblems == N && s->nsteps == 1,
	      "20,000 problems parse", "%s", err.buf);
	for (i = 0; s && i < N; i++) {
		char name[16];
		snprintf(name, sizeof(name), "p%05d", i);
		all &= spec_find_problem(s, name) == &s->problems[i];
	}
	CHECK(all, "spec_find_problem finds each of them", "not problem %d", i);
	CHECK(s && !spec_find_problem(s, "p20000") && !spec_find_problem(s, "") &&
	      !spec_find_problem(s, "a"), "and none that is not there (past the end, before the start)",
	      "found one");
	spec_free(s);

	names[N - 1] = "p00007";
	CHECK(parse(N, names, NULL, &s, &err) != GO_OK &&
	      strstr(err.buf, "'problems[19999].name': problem \"p00007\" is defined twice (also 'problems[7]')"),
	      "the last of 20,000 repeating the 8th: named, with the first", "%s", err.buf);
	spec_free(s);

	names[N - 1] = NULL;
	names[9] = "p00005";
	names[12] = "p00005";
	names[11] = "p00003";
	CHECK(parse(N, names, NULL, &s, &err) != GO_OK &&
	      strstr(err.buf, "'problems[9].name': problem \"p00005\" is defined twice (also 'problems[5]')"),
	      "three of a name and another pair: the earliest repeat, with the first definition",
	      "%s", err.buf);
	spec_free(s);

	CHECK(parse(30, NULL, "[\"p00001\", \"p00004\", \"p00002\", \"p00004\", \"p00001\"]", &s, &err) != GO_OK &&
	      strstr(err.buf, "'steps[0].problems[3]': problem \"p00004\" is listed twice"),
	      "a step listing a problem twice: the earliest repeat", "%s", err.buf);
	spec_free(s);
	CHECK(parse(30, NULL, "[\"p00001\", \"p00001\", \"nope\"]", &s, &err) != GO_OK &&
	      strstr(err.buf, "'steps[0].problems[1]': problem \"p00001\" is listed twice"),
	      "the repeat before an unknown name is the error, as the scan found it", "%s", err.buf);
	spec_free(s);
	CHECK(parse(30, NULL, "[\"p00001\", \"nope\", \"p00001\"]", &s, &err) != GO_OK &&
	      strstr(err.buf, "'steps[0].problems[1]': no problem named \"nope\""),
	      "an unknown name before the repeat is the error", "%s", err.buf);
	spec_free(s);

	free(names);
	strbuf_release(&err);
	return check_summary();
}
