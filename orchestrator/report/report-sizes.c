/* report-sizes.c -- the report's "Bus bandwidth by size" section: a
 * collective's result.sizes (kernels/nccl/allreduce_nccl: one row a message
 * size), each size's median with its spread, algbw and busbw, and busbw as
 * a share of the link's peak the controller judged it by (result.roofline,
 * store/linkpeak.h). */
#include "report/report-int.h"

#include "core/banned.h"

static void size_row(struct strbuf *md, const cJSON *h, const cJSON *s, const cJSON *z, double link)
{
	double v, bus;
	strbuf_addstr(md, "| ");
	rpt_md_cell_n(md, rpt_host_name(h), 40);
	strbuf_addstr(md, " | ");
	rpt_md_cell_n(md, rr_str(s, "id"), 80);
	strbuf_addstr(md, " | ");
	if (rr_num(z, "bytes", &v))
		rpt_fmt_bytes(md, v);
	strbuf_addstr(md, " | ");
	if (rr_num(z, "median_us", &v))
		metric_fmt_us(md, v);
	strbuf_addstr(md, " | ");
	rpt_cell_us_range(md, z, "p10_us", "p90_us");
	strbuf_addstr(md, " | ");
	if (rr_num(z, "algbw_gbps", &v))
		strbuf_addf(md, "%.4g", v);
	strbuf_addstr(md, " | ");
	if (rr_num(z, "busbw_gbps", &bus))
		strbuf_addf(md, "%.4g", bus);
	strbuf_addstr(md, " | ");
	if (link > 0 && rr_num(z, "busbw_gbps", &bus))
		strbuf_addf(md, "%.1f %%%s", 100.0 * bus / link, bus > link * (1 + 1e-9) ? " ⚠️ **IMPOSSIBLE**" : "");
	else
		strbuf_addstr(md, DASH);
	strbuf_addstr(md, " | ");
	if (rr_num(z, "wrong", &v))
		strbuf_addstr(md, v > 0 ? "❌ wrong sums" : "✅");
	strbuf_addstr(md, " |\n");
}

void rpt_section_sizes(struct rpt_ctx *c)
{
	struct strbuf *md = c->md;
	const cJSON *h, *s, *z;
	int any = 0;

	FOR_EACH_OBJ(h, c->hosts) {
		FOR_EACH_OBJ(s, rr_arr(h, "steps")) {
			const cJSON *res = rr_result(s), *roof = rr_obj(res, "roofline");
			double link = 0;
			if (!rr_is_kind(s, STEP_BENCHMARK) || !cJSON_GetArraySize(rr_arr(res, "sizes")))
				continue;
			if (!any) {
				strbuf_addstr(md, "## Bus bandwidth by size\n\n"
						  "Each size: the median of its repetitions (the slowest GPU's "
						  "time), algbw = bytes / median, busbw = algbw × 2(n−1)/n "
						  "(nccl-tests), against the link's peak.\n\n");
				any = 1;
			}
			rr_num(roof, "peaks.link_gbps", &link);
			rpt_md_cell_n(md, rr_str(roof, "link_source") ? rr_str(roof, "link_source")
					  : "link: not known (the result reports none)", 300);
			strbuf_addstr(md, "\n\n| host | step | size | median (us) | p10–p90 (us) | algbw GB/s | busbw GB/s "
					  "| of the link's peak | sums |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n");
			FOR_EACH_OBJ(z, rr_arr(res, "sizes"))
				size_row(md, h, s, z, link);
			strbuf_addch(md, '\n');
		}
	}
}
