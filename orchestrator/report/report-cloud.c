/* report-cloud.c -- the "Cloud instances" section: each instance gpuorch
 * brought up for the run, what it did with it afterwards and what it cost
 * (run.json provenance.instances, docs/cloud.md). Nothing when the run had
 * no instance. */
#include "report/report-int.h"
#include "store/runkeys.h"

#include <string.h>

#include "core/banned.h"

/* The instances the run used before a --resume: one row each. */
static void rpt_earlier_instances(struct strbuf *md, const cJSON *x, double *total)
{
	const cJSON *e;
	double v;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(x, "earlier_instances")) {
		strbuf_addstr(md, "| ");
		rpt_md_cell_n(md, x->string, 64);
		strbuf_addstr(md, " (earlier) | ");
		rpt_md_cell_n(md, rr_str(x, "provider"), 20);
		strbuf_addstr(md, " | ");
		if (rr_str(e, "instance_id"))
			rpt_md_code(md, rr_str(e, "instance_id"));
		else
			strbuf_addstr(md, DASH);
		strbuf_addstr(md, " | yes | " DASH);
		if (rr_num(e, "billed_s", &v))
			strbuf_addf(md, " | %.0f s", v);
		else
			strbuf_addstr(md, " | " DASH);
		if (rr_num(e, "price_per_hour", &v) && v > 0)
			strbuf_addf(md, " | %.4g", v);
		else
			strbuf_addstr(md, " | " DASH);
		if (rr_num(e, "cost", &v)) {
			strbuf_addf(md, " | %.4f", v);
			*total += v;
		} else {
			strbuf_addstr(md, " | " DASH);
		}
		strbuf_addstr(md, rr_str(e, "end") && !strcmp(rr_str(e, "end"), "seen")
			      ? " | used before a --resume; its end seen, not confirmed (an upper bound) |\n"
			      : " | used before a --resume |\n");
	}
}

void rpt_section_instances(struct rpt_ctx *c)
{
	const cJSON *prov = rr_obj(c->run, RK_PROVENANCE);
	const cJSON *insts = rr_obj(prov, "instances"), *x;
	struct strbuf *md = c->md;
	double total = 0, v;
	const char *cur = "USD";   /* price_per_hour is in USD (docs/cloud.md) */

	if (!insts || !insts->child)
		return;
	strbuf_addstr(md, "## Cloud instances\n\n");
	strbuf_addstr(md, "| Host | Provider | Found | Started by gpuorch | After run | Observed (start to stop) | "
			  "Price/h | Cost | Note |\n|---|---|---|---|---|---|---|---|---|\n");
	FOR_EACH_OBJ(x, insts)
		if (rr_str(x, "currency"))
			cur = rr_str(x, "currency");
	FOR_EACH_OBJ(x, insts) {
		const cJSON *sb = cJSON_GetObjectItemCaseSensitive(x, "started_by_gpuorch");
		int started = cJSON_IsTrue(sb);
		strbuf_addstr(md, "| ");
		rpt_md_cell_n(md, x->string, 64);
		strbuf_addstr(md, " | ");
		rpt_md_cell_n(md, rr_str(x, "provider"), 20);
		strbuf_addstr(md, " | ");
		if (rr_true(x, "launched_by_gpuorch")) {
			strbuf_addstr(md, "none: launched ");
			rpt_md_code(md, rr_str(x, "instance_id"));
			strbuf_addstr(md, " | yes (launched) | ");
		} else {
			rpt_md_cell_n(md, rr_str(x, "state_before"), 20);
			strbuf_addf(md, " | %s | ", started ? "yes" : "no");
		}
		rpt_md_cell_n(md, rr_str(x, "after_run"), 20);
		if (started && (rr_num(x, "observed_s", &v) || rr_num(x, "billed_s", &v))) {
			strbuf_addf(md, " | %.0f s observed", v);
			if (rr_num(x, "billing_minimum_s", &v) && v > 0)
				strbuf_addf(md, " (billed at least %.0f s)", v);
		} else {
			strbuf_addstr(md, " | " DASH);
		}
		if (rr_num(x, "price_per_hour", &v) && v > 0)
			strbuf_addf(md, " | %.4g %s", v, cur);
		else
			strbuf_addstr(md, " | " DASH);
		if (started && rr_num(x, "cost", &v)) {
			strbuf_addf(md, " | %.4f %s", v, cur);
			total += v;
		} else {
			strbuf_addstr(md, " | not counted");
		}
		strbuf_addstr(md, " | ");
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(x, "stop_failed")))
			strbuf_addstr(md, "**stop failed: may still be billing** ");
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(x, "preempted")))
			strbuf_addstr(md, "**preempted** ");
		if (rr_str(x, "error"))
			rpt_md_cell_n(md, rr_str(x, "error"), 200);
		strbuf_addstr(md, " |\n");
		rpt_earlier_instances(md, x, &total);
	}
	strbuf_addf(md, "\n**Cost of the instances gpuorch started**: %.4f %s, estimated: price_per_hour × the "
		    "time gpuorch observed from start requested to stop confirmed, at least the provider's "
		    "billing minimum (EC2: 60 s); the provider's bill is the authority\n\n", total, cur);
}
