/* report-kernels.c -- the report's "Kernels timed by gpuorch" section: for
 * every kernel_timing step, each kernel its program launched, as the CUPTI
 * injection library recorded it (docs/byo.md), longest total first. */
#include "report/report-int.h"

#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

#define MAX_ROWS 40   /* per step; the rest are counted */

/* "64,32,1" from [64, 32, 1], or a dash */
static void add_dims(struct strbuf *md, const cJSON *a)
{
	const cJSON *v;
	int n = 0;
	if (!a || !cJSON_GetArraySize(a)) {
		strbuf_addstr(md, DASH);
		return;
	}
	cJSON_ArrayForEach(v, a)
		strbuf_addf(md, "%s%.0f", n++ ? "," : "", cJSON_IsNumber(v) ? v->valuedouble : 0);
}

/* whether any kernel of the step has declared work (result["kernel:KEY"]
 * with flops or bytes: the step's "work", docs/byo.md) */
static int has_work(const cJSON *res)
{
	const cJSON *x;
	cJSON_ArrayForEach(x, res)
		if (x->string && metric_is_kernel(x->string) &&
		    (cJSON_GetObjectItemCaseSensitive(x, "flops") || cJSON_GetObjectItemCaseSensitive(x, "bytes")))
			return 1;
	return 0;
}

/* The work column of kernel k: its rate at the median launch and the % of
 * the peak it is held to, or IMPOSSIBLE with the bound its fastest launch
 * beat; a dash for a kernel with no declared work. */
static void add_work_cell(struct strbuf *md, const cJSON *res, const cJSON *k)
{
	char *name = xstrfmt("kernel:%s", rr_str(k, "key") ? rr_str(k, "key") : "");
	const cJSON *f = rr_obj(res, name);
	double v, b;
	int n = 0;
	free(name);
	if (!f || (!cJSON_GetObjectItemCaseSensitive(f, "flops") &&
		   !cJSON_GetObjectItemCaseSensitive(f, "bytes"))) {
		strbuf_addstr(md, DASH);
		return;
	}
	if (rr_true(f, "impossible")) {
		strbuf_addstr(md, "⚠️ **IMPOSSIBLE**: fastest ");
		metric_fmt_us(md, rr_num(f, "min_us", &v) ? v : 0);
		strbuf_addstr(md, " us < bound ");
		metric_fmt_us(md, rr_num(f, "bound_us", &b) ? b : 0);
		strbuf_addstr(md, " us");
		return;
	}
	if (rr_num(f, "tflops", &v)) {
		metric_fmt_tflops(md, v);
		strbuf_addstr(md, " TFLOPS");
		if (rr_num(f, "pct_of_peak", &v))
			strbuf_addf(md, " (%.1f%% of peak)", v);
		n++;
	}
	if (rr_num(f, "gbps", &v)) {
		strbuf_addstr(md, n ? ", " : "");
		metric_fmt_gbps(md, v);
		strbuf_addstr(md, " GB/s");
		if (rr_num(f, "pct_of_dram", &v))
			strbuf_addf(md, " (%.1f%% of DRAM)", v);
	}
}

void rpt_section_kernels(struct rpt_ctx *c)
{
	struct strbuf *md = c->md;
	const cJSON *h, *s, *k;
	int any = 0;

	FOR_EACH_OBJ(h, c->hosts) {
		FOR_EACH_OBJ(s, rr_arr(h, "steps")) {
			const cJSON *kt = rr_obj(rr_result(s), "kernel_timing");
			double v, runs = 0, dropped = 0;
			int n = 0, work = has_work(rr_result(s));
			if (!rr_is_kind(s, STEP_KERNEL_TIMING))
				continue;
			if (!any) {
				strbuf_addstr(md, "## Kernels timed by gpuorch\n\n"
						  "Every kernel the program launched, from CUDA's own "
						  "activity records (a CUPTI injection library; the "
						  "program unchanged). Per launch: median, min and max GPU "
						  "time over all runs; launches and total per run; share of "
						  "the program's GPU time. Figure names: `kernel:KEY.median_us`.\n\n");
				any = 1;
			}
			strbuf_addstr(md, "### ");
			rpt_md_cell_n(md, rpt_host_name(h), 40);
			strbuf_addstr(md, " — ");
			rpt_md_code(md, rr_str(s, "program"));
			strbuf_addch(md, ' ');
			rpt_md_cell_n(md, rr_str(s, "problem"), 80);
			strbuf_addstr(md, "\n\n");
			if (!kt) {
				rpt_cell_status(md, rr_str(s, "status"));
				if (rr_str(s, "reason")) {
					strbuf_addstr(md, " — ");
					rpt_md_cell_n(md, rr_str(s, "reason"), 400);
				}
				strbuf_addstr(md, "\n\n");
				continue;
			}
			rr_num(kt, "runs", &runs);
			rr_num(kt, "dropped", &dropped);
			strbuf_addf(md, "%.0f run%s, %.0f launches in all, ", runs, runs == 1 ? "" : "s",
				    rr_num(kt, "launches", &v) ? v : 0);
			rr_num(kt, "gpu_time_us", &v);
			metric_fmt_us(md, runs > 0 ? v / runs : v);
			strbuf_addstr(md, " us of GPU time per run");
			if (dropped > 0)
				strbuf_addf(md, "; **%.0f records dropped** by CUPTI", dropped);
			if (!rr_true(kt, "complete"))
				strbuf_addstr(md, "; **a trace was cut short**");
			strbuf_addstr(md, ".\n\n| kernel | key | grid × block | launches/run | median us | min us | "
					  "max us | total us/run | share |");
			strbuf_addstr(md, work ? " declared work, at the median |\n" : "\n");
			strbuf_addstr(md, "|---|---|---|---:|---:|---:|---:|---:|---:|");
			strbuf_addstr(md, work ? "---|\n" : "\n");
			FOR_EACH_OBJ(k, rr_arr(kt, "kernels")) {
				if (n++ == MAX_ROWS) {
					strbuf_addf(md, "| … %d more kernels (run.json has them all) | | | | | | | | |%s\n",
						    cJSON_GetArraySize(rr_arr(kt, "kernels")) - MAX_ROWS,
						    work ? " |" : "");
					break;
				}
				strbuf_addstr(md, "| ");
				rpt_md_code(md, rr_str(k, "demangled"));
				strbuf_addstr(md, " | ");
				rpt_md_code(md, rr_str(k, "key"));
				strbuf_addstr(md, " | ");
				add_dims(md, rr_arr(k, "grid"));
				strbuf_addstr(md, " × ");
				add_dims(md, rr_arr(k, "block"));
				strbuf_addstr(md, " | ");
				metric_fmt_g(md, rr_num(k, "launches", &v) && runs > 0 ? v / runs : 0);
				strbuf_addstr(md, " | ");
				rpt_cell_num(md, k, "median_us", metric_fmt_us);
				strbuf_addstr(md, " | ");
				rpt_cell_num(md, k, "min_us", metric_fmt_us);
				strbuf_addstr(md, " | ");
				rpt_cell_num(md, k, "max_us", metric_fmt_us);
				strbuf_addstr(md, " | ");
				metric_fmt_us(md, rr_num(k, "total_us", &v) && runs > 0 ? v / runs : 0);
				strbuf_addstr(md, " | ");
				strbuf_addf(md, "%.1f%%", rr_num(k, "share_pct", &v) ? v : 0);
				if (work) {
					strbuf_addstr(md, " | ");
					add_work_cell(md, rr_result(s), k);
				}
				strbuf_addstr(md, " |\n");
			}
			strbuf_addch(md, '\n');
		}
	}
}
