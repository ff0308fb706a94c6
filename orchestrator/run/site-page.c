/* site-page.c -- `gpuorch site`'s pages and files: writing them under the
 * new site's folder, the frame every page shares, Markdown as HTML (site-int.h). */
#include "run/site-int.h"
#include "core/fsutil.h"
#include "report/history-chart.h"

#include <cmark-gfm.h>
#include <cmark-gfm-core-extensions.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

enum go_status site_put(struct site *s, const char *rel, const char *data, size_t len)
{
	char *path = xstrfmt("%s/%s", s->tmp, rel), *dir = fs_dirname(path);
	enum go_status st = fs_mkdir_p(dir, 0755, &s->err);
	/* the folder is new and nobody reads it until it is renamed into place:
	 * no fsync per file (site.c syncs nothing either; a lost site is written again) */
	if (st == GO_OK)
		st = fs_write_derived(path, data, len, &s->err);
	free(dir);
	free(path);
	return st;
}

enum go_status site_put_data(struct site *s, const char *rel, const char *fn, const cJSON *data)
{
	char *json = cJSON_PrintUnformatted(data);
	struct strbuf sb = STRBUF_INIT;
	enum go_status st;
	if (!json)
		return go_fail(&s->err, GO_ERR_INTERNAL, "out of memory writing %s", rel);
	strbuf_addf(&sb, "%s(%s);\n", fn, json);
	st = site_put(s, rel, sb.buf, sb.len);
	strbuf_release(&sb);
	free(json);
	return st;
}

void site_text(struct strbuf *sb, const char *s)
{
	svg_text(sb, s ? s : "");
}

void site_page_head(struct strbuf *sb, const char *title, const char *page, const char *up)
{
	strbuf_addstr(sb, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		      "<link rel=\"icon\" href=\"data:,\">\n<title>");
	site_text(sb, title);
	strbuf_addf(sb, " - gpuorch</title>\n<link rel=\"stylesheet\" href=\"%ssite.css\">\n</head>\n"
		    "<body data-page=\"%s\" data-root=\"%s\">\n<nav><a href=\"%sindex.html\">runs</a>"
		    "<a href=\"%shistory/index.html\">history</a><a href=\"%scompare.html\">compare</a>"
		    "</nav>\n<main>\n", up, page, up, up, up, up);
}

void site_page_foot(struct strbuf *sb, const char *data_src, const char *up)
{
	strbuf_addstr(sb, "</main>\n");
	strbuf_addf(sb, "<script src=\"%ssite.js\"></script>\n", up);
	if (data_src)
		strbuf_addf(sb, "<script src=\"%s\"></script>\n", data_src);
	strbuf_addstr(sb, "</body>\n</html>\n");
}

enum go_status site_markdown(const char *md, size_t len, struct strbuf *html, struct strbuf *err)
{
	static const char *const exts[] = { "table", "strikethrough", "autolink", NULL };
	cmark_parser *p;
	cmark_node *doc;
	char *out;
	int i;

	cmark_gfm_core_extensions_ensure_registered();
	p = cmark_parser_new(CMARK_OPT_DEFAULT);
	if (!p)
		return go_fail(err, GO_ERR_INTERNAL, "out of memory rendering Markdown");
	for (i = 0; exts[i]; i++) {
		cmark_syntax_extension *x = cmark_find_syntax_extension(exts[i]);
		if (x)
			cmark_parser_attach_syntax_extension(p, x);
	}
	cmark_parser_feed(p, md, len);
	doc = cmark_parser_finish(p);
	out = doc ? cmark_render_html(doc, CMARK_OPT_DEFAULT, cmark_parser_get_syntax_extensions(p))
		  : NULL;
	if (out)
		strbuf_addstr(html, out);
	free(out);
	if (doc)
		cmark_node_free(doc);
	cmark_parser_free(p);
	return out || !doc ? GO_OK : go_fail(err, GO_ERR_INTERNAL, "out of memory rendering Markdown");
}

int site_name_ok(const char *name)
{
	const char *c;
	if (!name || !*name || *name == '.')
		return 0;
	for (c = name; *c; c++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *c))
			return 0;
	return 1;
}
