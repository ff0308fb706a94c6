/* report-clock.c -- the SM clock each timed row ran at (issue 30 item 10):
 * the median NVML SM clock of its kept samples (timing.sm_clock_mhz_median)
 * and the clock event reasons seen (timing.throttle_reasons), shown beside
 * its latency, and a flag on a row timed at a clock far from the other timed
 * rows of its host (their median): its latency is not comparable with theirs. */
#include "report/report-int.h"
#include "core/stats.h"

#include <math.h>
#include <stdlib.h>
#include "core/banned.h"

/* The median of the SM clocks of host h's timed benchmark rows, or 0. */
static double host_clock(const cJSON *h)
{
	const cJSON *s;
	double *v = NULL, m = 0, c;
	int n = 0;
	FOR_EACH_OBJ(s, rr_arr(h, "steps")) {
		if (!rr_is_kind(s, STEP_BENCHMARK) ||
		    !rr_num(rr_result(s), RPT_CLOCK_PATH, &c) || c <= 0)
			continue;
		v = xrealloc(v, (size_t)(n + 1) * sizeof(*v));
		v[n++] = c;
	}
	if (n)
		m = stats_median(v, n);
	free(v);
	return m;
}

int rpt_clock_far(struct rpt_ctx *c, const cJSON *h, const cJSON *s, double *clock, double *host)
{
	if (c->clock_host != h) {   /* once a host, not once a row */
		c->clock_host = h;
		c->clock_median = host_clock(h);
	}
	*host = c->clock_median;
	if (!rr_num(rr_result(s), RPT_CLOCK_PATH, clock) || *clock <= 0 || *host <= 0)
		return 0;
	/* |c - m| / m > 5 % without a division: exact for whole MHz */
	return fabs(*clock - *host) * 100 > RPT_CLOCK_FAR_PCT * *host;
}

void rpt_add_row_clock(struct rpt_ctx *c, struct strbuf *md, const cJSON *h, const cJSON *s)
{
	const cJSON *reasons = rr_arr(rr_obj(rr_result(s), "timing"), "throttle_reasons"), *r;
	double v, m;
	int far = rpt_clock_far(c, h, s, &v, &m), n = 0;
	if (!rr_num(rr_result(s), RPT_CLOCK_PATH, &v) || v <= 0) {
		strbuf_addstr(md, DASH);
		return;
	}
	if (far)
		strbuf_addstr(md, "⚠️ ");
	strbuf_addf(md, "%.0f", v);
	if (far)
		strbuf_addf(md, " (%+.0f%% vs %.0f)", 100 * (v / m - 1), m);
	cJSON_ArrayForEach(r, reasons) {
		if (!cJSON_IsString(r))
			continue;
		strbuf_addstr(md, n++ ? ", " : " ");
		rpt_md_cell_n(md, r->valuestring, 40);
	}
}

int rpt_add_clock_note(struct rpt_ctx *ctx, struct strbuf *md, const cJSON *h, const cJSON *s)
{
	double c, m;
	if (!rpt_clock_far(ctx, h, s, &c, &m))
		return 0;
	strbuf_addstr(md, "- ⚠️ ");
	rpt_md_code(md, rr_str(s, "program"));
	strbuf_addf(md, " was timed at a median SM clock of %.0f MHz, %.0f%% %s the %.0f MHz median "
		    "of this host's timed rows: its latency is not comparable with theirs\n", c,
		    fabs(100 * (c / m - 1)), c < m ? "below" : "above", m);
	return 1;
}
