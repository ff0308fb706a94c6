/* report-peaks.c -- "% of peak" as the report says it: of the physical peak
 * of the program's declared datatype (FP32, TF32, FP16/BF16, FP8) and of the
 * DRAM, each labelled, from the step's roofline (store/peaks.h; judged now
 * from the result's device and the host's probe for a record from before
 * it), never an unlabelled "% of speed of light". */
#include "report/report-int.h"
#include "store/peaks.h"

#include <string.h>
#include "core/banned.h"

cJSON *rpt_roofline(const struct rpt_ctx *c, const cJSON *h, const cJSON *s)
{
	return peaks_roofline_of(c->run, h, s);
}

static const char *dtype_label(const cJSON *roof)
{
	int dt = peaks_dtype_parse(rr_str(roof, "datatype"));
	return dt >= 0 ? peaks_dtype_label((enum peak_dtype)dt) : NULL;
}

void rpt_add_pct_compute(struct strbuf *md, const cJSON *roof)
{
	double v;
	if (rr_num(roof, "pct_of_peak", &v) && dtype_label(roof))
		strbuf_addf(md, " (%.0f %% of the %s peak)", v, dtype_label(roof));
}

void rpt_add_pct_dram(struct strbuf *md, const cJSON *roof)
{
	double v;
	if (rr_num(roof, "pct_of_dram", &v))
		strbuf_addf(md, " (%.0f %% of the DRAM peak)", v);
}

void rpt_cell_pct_of_peak(struct strbuf *md, const cJSON *roof)
{
	double v;
	int n = 0;
	if (rr_num(roof, "pct_of_peak", &v) && dtype_label(roof)) {
		strbuf_addf(md, "%.0f%% %s", v, dtype_label(roof));
		n++;
	}
	if (rr_num(roof, "pct_of_dram", &v)) {
		strbuf_addf(md, "%s%.0f%% DRAM", n ? " · " : "", v);
		n++;
	}
	if (!n)
		strbuf_addstr(md, DASH);
}
