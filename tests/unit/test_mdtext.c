/* test_mdtext.c -- the report's one escaping of text (report/report-format.c):
 * a name in a code span that no backtick in it can close, free text in
 * which nothing becomes markup (issue 31 item 11). What a real renderer
 * makes of it is t3050's (cmark). */
#include "report/report-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/banned.h"

static char *code(const char *s)
{
	struct strbuf md = STRBUF_INIT;
	rpt_md_code(&md, s);
	return strbuf_detach(&md, NULL);
}

static char *cell(const char *s)
{
	struct strbuf md = STRBUF_INIT;
	rpt_md_cell(&md, s);
	return strbuf_detach(&md, NULL);
}

#define SAME(got, want, what) CHECK(!strcmp((got), (want)), what, "got [%s] want [%s]", got, want)

static void test_code(void)
{
	char *s;
	s = code("gemm_v5");
	SAME(s, "`gemm_v5`", "a plain name: one backtick each side");
	free(s);
	s = code("p``<img src=x onerror=alert(1)>``q");
	SAME(s, "```p``<img src=x onerror=alert(1)>``q```",
	     "a run of two backticks: a fence of three, which the name cannot close");
	free(s);
	s = code("a`b```c");
	SAME(s, "````a`b```c````", "the fence is one longer than the LONGEST run, not the first");
	free(s);
	s = code("`x");
	SAME(s, "`` `x ``", "a name that starts with a backtick is padded with a space each side");
	free(s);
	s = code("x`");
	SAME(s, "`` x` ``", "a name that ends with a backtick is padded");
	free(s);
	s = code("`");
	SAME(s, "`` ` ``", "a name that is one backtick");
	free(s);
	s = code(" x ");
	SAME(s, "`  x  `", "a name that starts and ends with a space keeps them (padded)");
	free(s);
	s = code(" x");
	SAME(s, "` x`", "one space at one end only: no padding (CommonMark strips none)");
	free(s);
	s = code("a|b\nc");
	SAME(s, "`a\\|b c`", "pipes escaped for tables, a line break is a space");
	free(s);
	s = code(NULL);
	SAME(s, DASH, "no name: a dash");
	free(s);
	s = code("");
	SAME(s, DASH, "an empty name: a dash");
	free(s);
	{
		/* 240 bytes are kept; the backtick past them does not count */
		char big[400];
		memset(big, 'a', sizeof(big));
		big[300] = '`';
		big[301] = '`';
		big[sizeof(big) - 1] = '\0';
		s = code(big);
		CHECK(!strncmp(s, "`a", 2) && strlen(s) == 1 + 240 + strlen("…#") + 8 + 1 &&
			      !strncmp(s + strlen(s) - 13, "…#", 4) && s[strlen(s) - 1] == '`',
		      "a long name is cut at 240 bytes with an ellipsis and a short hash key, inside its span", "got %zu bytes",
		      strlen(s));
		free(s);
		big[239] = '`';
		s = code(big);
		CHECK(!strncmp(s, "`` a", 4) && !strncmp(s + strlen(s) - strlen("…#12345678 ``"), "…#", 4) &&
			      !strcmp(s + strlen(s) - 3, " ``"),
		      "a backtick at the 240th byte counts for the fence and the padding", "got %s",
		      s + strlen(s) - 10);
		free(s);
	}
}

static void test_cell(void)
{
	char *s;
	s = cell("![t](http://evil.example/t.png)");
	SAME(s, "!\\[t\\](http://evil.example/t.png)", "no image: its brackets are escaped");
	free(s);
	s = cell("<img src=x onerror=alert(1)>");
	SAME(s, "&lt;img src=x onerror=alert(1)>", "no raw HTML: < is an entity");
	free(s);
	s = cell("a < b");
	SAME(s, "a < b", "a < that opens nothing is as written (a < 25 us)");
	free(s);
	s = cell("<http://evil.example/t.png> </b> <!-- <?x");
	SAME(s, "&lt;http://evil.example/t.png> &lt;/b> &lt;!-- &lt;?x", "no autolink, closing tag, comment or processing instruction");
	free(s);
	s = cell("x`y");
	SAME(s, "x\\`y", "a backtick never opens a code span that swallows the next name");
	free(s);
	s = cell("&lt; & &#60; R&D");
	SAME(s, "&amp;lt; & &amp;#60; R&amp;D", "& before a name or # shows as written");
	free(s);
	s = cell("a\\[b|c");
	SAME(s, "a\\\\\\[b\\|c", "a backslash is escaped, so it cannot undo the next escape");
	free(s);
	s = cell("tab\there\nnew\x01");
	SAME(s, "tab here new", "one line; control characters dropped");
	free(s);
	s = cell("~*_>#!()ok 3.0 × 2 (x)");
	SAME(s, "~*_>#!()ok 3.0 × 2 (x)", "what cannot make HTML, a link or a code span is as written");
	free(s);
}

static void test_kv(void)
{
	struct strbuf md = STRBUF_INIT;
	cJSON *o = cJSON_Parse("{\"N\": 4096, \"name\": \"x``<b>\", \"on\": true}");
	rpt_add_kv(&md, o, "=");
	SAME(md.buf, "`N=4096` ```name=x``<b>``` `on=true`",
	     "each key=value pair is one code span, its fence longer than its backticks");
	cJSON_Delete(o);
	strbuf_release(&md);
}

int main(void)
{
	test_code();
	test_cell();
	test_kv();
	return check_summary();
}
