/* report-figures.c -- the report's "Figures from the programs' output"
 * section: every figure that a program off the harness printed and gpuorch
 * read (result.figures, docs/byo.md), or that a program on the harness put
 * in its result (a collective's bus bandwidth, beside the link's peak), one
 * row per step and figure. */
#include "report/report-int.h"

#include <string.h>
#include "core/banned.h"

void rpt_section_figures(struct rpt_ctx *c)
{
	struct strbuf *md = c->md;
	const cJSON *h, *s, *f;
	int any = 0;

	FOR_EACH_OBJ(h, c->hosts) {
		FOR_EACH_OBJ(s, rr_arr(h, "steps")) {
			const cJSON *figs = rr_obj(rr_result(s), "figures");
			const char *missing = rr_str(rr_result(s), "figures_missing");
			const cJSON *cut = rr_obj(rr_result(s), "output_cut");
			if ((!figs || !figs->child) && !missing)
				continue;
			if (!any) {
				strbuf_addstr(md, "## Figures from the programs' output\n\n"
						  "Read from what each program printed (docs/byo.md: "
						  "its exit status is its verdict), or put in its result "
						  "(docs/result-contract.md).\n\n"
						  "| host | step | figure | value | unit | better | read from |\n"
						  "|---|---|---|---:|---|---|---|\n");
				any = 1;
			}
			FOR_EACH_OBJ(f, figs) {
				double v = 0, pk = 0;
				const char *from = rr_str(f, "line") ? rr_str(f, "line") : rr_str(f, "source");
				strbuf_addstr(md, "| ");
				rpt_md_cell_n(md, rpt_host_name(h), 40);
				strbuf_addstr(md, " | ");
				rpt_md_cell_n(md, rr_str(s, "id"), 80);
				strbuf_addstr(md, " | ");
				rpt_md_cell_n(md, f->string, 60);
				strbuf_addstr(md, " | ");
				if (rr_num(f, "value", &v))
					metric_fmt_g(md, v);
				else
					strbuf_addstr(md, DASH);
				if (rr_true(f, "impossible"))   /* over the GPU's physical peak (store/peaks.h) */
					strbuf_addstr(md, " ⚠️ **IMPOSSIBLE** (over the physical peak)");
				else if (rr_num(f, "pct_of_peak", &v) && rr_num(f, "peak", &pk))
					strbuf_addf(md, " (%.1f%% of the link's %.6g %s)", v, pk,
						    rr_str(f, "unit") ? rr_str(f, "unit") : "");
				else if (rr_num(f, "pct_of_peak", &v))
					strbuf_addf(md, " (%.0f%% of peak)", v);
				strbuf_addstr(md, " | ");
				rpt_md_cell_n(md, rr_str(f, "unit"), 30);
				strbuf_addstr(md, " | ");
				rpt_md_cell_n(md, rr_str(f, "better"), 10);
				strbuf_addstr(md, " | ");
				if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, "truncated")))
					strbuf_addstr(md, "⚠ truncated output: a later line that was "
							  "not read may match; ");
				if (!from && rr_str(f, "bound"))   /* a result's figure held to the link */
					from = rr_str(rr_obj(rr_result(s), "roofline"), "link_source");
				rpt_md_cell_n(md, from ? from : "the program's result", from ? 240 : 80);
				strbuf_addstr(md, " |\n");
			}
			if (missing) {
				strbuf_addstr(md, "| ");
				rpt_md_cell_n(md, rpt_host_name(h), 40);
				strbuf_addstr(md, " | ");
				rpt_md_cell_n(md, rr_str(s, "id"), 80);
				strbuf_addstr(md, " | (not found) | " DASH " | " DASH " | " DASH " | ");
				rpt_md_cell_n(md, missing, 300);
				strbuf_addstr(md, " |\n");
			}
			if (cut) {
				double d = 0;
				strbuf_addstr(md, "| ");
				rpt_md_cell_n(md, rpt_host_name(h), 40);
				strbuf_addstr(md, " | ");
				rpt_md_cell_n(md, rr_str(s, "id"), 80);
				strbuf_addstr(md, " | ⚠ (output cut) | " DASH " | " DASH " | " DASH " | ");
				if (rr_num(cut, "dropped_bytes", &d))
					strbuf_addf(md, "%.0f bytes of stdout were not read for figures; ", d);
				else
					strbuf_addstr(md, "part of stdout was not read for figures; ");
				strbuf_addstr(md, "figures read before that part may not be the last "
						  "matching line |\n");
			}
		}
	}
	if (any)
		strbuf_addch(md, '\n');
}
