/* report-tools.c -- the report's gates at a glance, sweeps, profiles and sanitizers. */
#include "report/report-int.h"
#include "store/runkeys.h"
#include "core/stats.h"
#include "store/gates.h"

#include <math.h>
#include "core/banned.h"

/* ==== gates, sweeps, profiles, sanitizers ==== */

/* A number as measured: microseconds for "us", else three significant digits. */
static void fmt_measured(struct strbuf *md, double v, const char *unit)
{
	if (rr_streq(unit, "us"))
		metric_fmt_us(md, v);
	else if (fabs(v) >= 1e4 && fabs(v) < 1e15 && v == floor(v))
		strbuf_addf(md, "%.0f", v);
	else
		metric_fmt_g(md, v);
	if (unit && *unit && !rr_streq(unit, "×")) {
		strbuf_addch(md, ' ');
		rpt_md_cell_n(md, unit, 40);
	} else if (rr_streq(unit, "×")) {
		strbuf_addstr(md, "×");
	}
}

/* The host's stored gates, or (a record written before gates were stored,
 * or cut short) the gates judged now from the record; *owned is set then. */
static const cJSON *host_gates(const struct rpt_ctx *c, const cJSON *h, cJSON **owned)
{
	const cJSON *g = rr_arr(h, "gates");
	const cJSON *spec_gates = rr_arr(c->spec, "gates");
	*owned = NULL;
	if (g)
		return g;
	if (!spec_gates || !cJSON_GetArraySize(spec_gates))
		return NULL;
	*owned = gates_evaluate_host(spec_gates, h, NULL);
	return *owned;
}

struct gate_counts {
	int npass, nfail, nna;
};

/* A pool gate's rows: "read benchmark.s.p2 on b, benchmark.base.p2 on a" */
static void add_rows(struct strbuf *rows, const cJSON *g)
{
	const cJSON *row;
	const char *sep = "read ";
	FOR_EACH_OBJ(row, rr_arr(g, "rows")) {
		strbuf_addstr(rows, sep);
		rpt_md_code(rows, rr_str(row, "step"));
		strbuf_addstr(rows, " on ");
		rpt_md_cell(rows, rr_str(row, "host"));
		sep = ", ";
	}
}

/* One gate result's row; where: its host's name, or its pool's */
static void gate_row(struct strbuf *rows, const struct rpt_ctx *c, const char *where, const cJSON *g,
		     struct gate_counts *n)
{
	const char *v = rr_str(g, "verdict");
	double m, t;
	if (gate_verdict_is(v, VERDICT_PASS))
		n->npass++;
	else if (gate_verdict_is(v, VERDICT_NA))
		n->nna++;
	else
		n->nfail++;
	strbuf_addf(rows, "| %s | ", gate_verdict_is(v, VERDICT_PASS) ? "✅ pass"
				      : gate_verdict_is(v, VERDICT_NA) ? "➖ n/a"
				      : "❌ **FAIL**");
	rpt_md_cell(rows, rr_str(g, "name") ? rr_str(g, "name") : rr_str(g, "metric"));
	strbuf_addstr(rows, " | ");
	rpt_md_cell(rows, where);
	strbuf_addstr(rows, " | ");
	rpt_md_code(rows, rr_str(g, "program"));
	if (rr_str(g, "problem")) {
		strbuf_addstr(rows, " · ");
		rpt_md_cell(rows, rr_str(g, "problem"));
	}
	strbuf_addstr(rows, " | ");
	rpt_md_code(rows, rr_str(g, "metric"));
	strbuf_addstr(rows, " | ");
	if (rr_num(g, "measured", &m))   /* a record from before: the figure's declared unit */
		fmt_measured(rows, m, rr_str(g, "unit") ? rr_str(g, "unit")
				       : rr_str(rr_obj(rr_obj(rr_obj(rr_obj(c->spec, "programs"),
					rr_str(g, "program")), "figures"), rr_str(g, "metric")), "unit"));
	else
		strbuf_addstr(rows, "not measured");
	strbuf_addstr(rows, " | ");
	rpt_md_cell_n(rows, rr_str(g, "op") ? rr_str(g, "op") : "?", 4);
	strbuf_addch(rows, ' ');
	if (rr_num(g, "threshold", &t))
		metric_fmt_g(rows, t);
	strbuf_addstr(rows, " | ");
	if (!rr_arr(g, "rows") || !gate_verdict_is(v, VERDICT_PASS))
		rpt_md_cell(rows, gate_verdict_is(v, VERDICT_PASS) ? NULL : rr_str(g, "reason"));
	if (rr_arr(g, "rows")) {   /* a pool's gate: the rows it read */
		strbuf_addstr(rows, gate_verdict_is(v, VERDICT_PASS) ? "" : "; ");
		add_rows(rows, g);
	}
	strbuf_addstr(rows, " |\n");
}

void rpt_section_gates(struct rpt_ctx *c)
{
	struct strbuf *md = c->md;
	const cJSON *h, *g, *p;
	struct gate_counts n = { 0, 0, 0 };
	int judged_now = 0;
	struct strbuf rows = STRBUF_INIT, where = STRBUF_INIT;

	FOR_EACH_OBJ(h, c->hosts) {
		cJSON *owned;
		const cJSON *gs = host_gates(c, h, &owned);
		judged_now |= owned != NULL;
		FOR_EACH_OBJ(g, gs)
			gate_row(&rows, c, rpt_host_name(h), g, &n);
		cJSON_Delete(owned);
	}
	/* run --spread: the gates whose rows ran on several hosts of a pool */
	FOR_EACH_OBJ(p, rr_arr(c->run, "pool_gates")) {
		const cJSON *x;
		const char *sep = " (";
		strbuf_reset(&where);
		strbuf_addf(&where, "pool %s", rr_str(p, "pool") ? rr_str(p, "pool") : "?");
		cJSON_ArrayForEach(x, rr_arr(p, "hosts")) {
			strbuf_addf(&where, "%s%s", sep, cJSON_IsString(x) ? x->valuestring : "?");
			sep = ", ";
		}
		strbuf_addstr(&where, *sep == ',' ? ")" : "");
		FOR_EACH_OBJ(g, rr_arr(p, "gates"))
			gate_row(&rows, c, where.buf, g, &n);
	}
	strbuf_release(&where);
	if (!rows.len) {
		strbuf_release(&rows);
		return;
	}
	strbuf_addstr(md, "## Gates at a glance\n\n");
	strbuf_addf(md, "**%d gate result%s: ", n.npass + n.nfail + n.nna,
		    n.npass + n.nfail + n.nna == 1 ? "" : "s");
	strbuf_addf(md, "%d ✅ passed · %d ❌ failed", n.npass, n.nfail);
	if (n.nna)
		strbuf_addf(md, " · %d ➖ not applicable", n.nna);
	strbuf_addstr(md, "**");
	if (n.nfail)
		strbuf_addstr(md, " — a failed gate fails the run (exit 1); a gate on a figure that "
				  "was not measured fails");
	strbuf_addstr(md, "\n\n");
	if (judged_now)
		strbuf_addstr(md, "> The record holds no stored gate results for some hosts; those "
				  "were judged from the record by the report.\n\n");
	strbuf_addstr(md, "| verdict | gate | host | program · problem | metric | measured | needs | why |\n"
			  "|---|---|---|---|---|---|---|---|\n");
	strbuf_add(md, rows.buf, rows.len);
	strbuf_addstr(md, "\n");
	strbuf_release(&rows);
}

/* A variant's registers, spills and shared memory, read from the record now
 * (sweep_variant_resources: its own kernels, not the harness's; dynamic
 * shared memory from its results), not the stored ranking's binary-wide
 * maximum: "128–168 (3 kernels) | 0 / 0 | 225.3 KiB dynamic". */
static void add_variant_resources(struct strbuf *md, const cJSON *h, const cJSON *sw,
				  const cJSON *v)
{
	cJSON *r = cJSON_CreateObject();
	double lo, hi, n, st, dyn;
	sweep_variant_resources(h, rr_str(sw, "program"), rr_str(v, "variant"), rr_str(sw, "problem"), r);
	if (rr_num(r, "registers_min", &lo) && rr_num(r, "registers", &hi) && lo != hi) {
		strbuf_addf(md, "%.0f–%.0f", lo, hi);
		if (rr_num(r, "kernels", &n))
			strbuf_addf(md, " (%.0f kernels)", n);
	} else {
		rpt_cell_num(md, r, "registers", rpt_fmt_int);
	}
	strbuf_addstr(md, " | ");
	rpt_cell_num(md, r, "spill_store_bytes", rpt_fmt_int);
	strbuf_addstr(md, " / ");
	rpt_cell_num(md, r, "spill_load_bytes", rpt_fmt_int);
	strbuf_addstr(md, " | ");
	if (rr_num(r, "smem_bytes", &st) && st > 0) {
		rpt_fmt_bytes(md, st);
		strbuf_addstr(md, " static");
	}
	if (rr_num(r, "dynamic_smem_bytes", &dyn)) {
		strbuf_addstr(md, rr_num(r, "smem_bytes", &st) && st > 0 ? " + " : "");
		rpt_fmt_bytes(md, dyn);
		strbuf_addstr(md, " dynamic");
	} else if (!(rr_num(r, "smem_bytes", &st) && st > 0)) {
		rpt_cell_num(md, r, "smem_bytes", rpt_fmt_bytes);
	}
	cJSON_Delete(r);
}

/* A sweep's heading (the section's first, once): on host h, or on a pool */
static void sweep_title(struct strbuf *md, const cJSON *h, const cJSON *sw, const cJSON *pool, int *any)
{
	if (!(*any)++)
		strbuf_addstr(md, "## Sweeps\n\nEach variant was built with its defines "
				  "and run one at a time; only a variant whose build, "
				  "correctness run and benchmark all passed is ranked, so a "
				  "wrong variant never wins.\n\n");
	strbuf_addstr(md, "### ");
	rpt_md_code(md, rr_str(sw, "program"));
	strbuf_addstr(md, " · ");
	rpt_md_cell(md, rr_str(sw, "problem"));
	if (pool) {
		const cJSON *n;
		int k = 0;
		strbuf_addstr(md, " on the pool ");
		rpt_md_cell(md, rpt_host_name(h));
		strbuf_addstr(md, " (--spread: ");
		cJSON_ArrayForEach(n, rr_arr(pool, "hosts")) {
			strbuf_addstr(md, k++ ? ", " : "");
			rpt_md_cell(md, cJSON_IsString(n) ? n->valuestring : "?");
		}
		strbuf_addstr(md, ")\n\nThe variants were dealt over the pool's GPUs and are ranked "
				  "across them; two variants that ran on different GPU instances are "
				  "told apart only beyond the cross-instance factor (`factor_vs_winner`).");
	} else {
		strbuf_addstr(md, " on ");
		rpt_md_cell(md, rpt_host_name(h));
	}
	strbuf_addstr(md, "\n\n");
}

/* One sweep's section: on host h, or (pool: its entry of "pool_sweeps") on
 * a pool of a --spread run, h then the pool's steps and builds */
static void sweep_block(struct strbuf *md, const cJSON *h, const cJSON *sw, const cJSON *pool, int *any)
{
	const cJSON *v;
	double wm;
	/* no clear winner: nothing is crowned; the lowest median and the
	 * variants compare cannot tell from it share first place */
	int tied = rr_str(sw, "winner") && cJSON_IsFalse(cJSON_GetObjectItem(sw, "winner_clear"));
	sweep_title(md, h, sw, pool, any);
	if (tied) {
		/* the lowest median, but not told apart from another by compare's rule */
		int k = 0;
		strbuf_addstr(md, "🤝 **No clear winner**: ");
		rpt_md_code(md, rr_str(sw, "winner"));
		if (rr_num(sw, "winner_median_us", &wm)) {
			strbuf_addstr(md, " has the lowest median (");
			metric_fmt_us(md, wm);
			strbuf_addstr(md, " us), but ");
		}
		FOR_EACH_OBJ(v, rr_arr(sw, "variants"))
			if (rr_str(v, "vs_winner") && !rr_streq(rr_str(v, "vs_winner"), "slower")) {
				strbuf_addstr(md, k++ ? ", " : "");
				rpt_md_code(md, rr_str(v, "variant"));
			}
		strbuf_addf(md, " %s not slower by `gpuorch compare`'s rule (Mann-Whitney p < %g on "
			    "the samples and the medians more than x%.2f apart).\n\n", k == 1 ? "is" : "are",
			    STATS_DEFAULT_ALPHA, STATS_DEFAULT_FACTOR);
	} else if (rr_str(sw, "winner")) {
		strbuf_addstr(md, "🏆 **Winner**: ");
		rpt_md_code(md, rr_str(sw, "winner"));
		if (rr_num(sw, "winner_median_us", &wm)) {
			strbuf_addstr(md, " — ");
			metric_fmt_us(md, wm);
			strbuf_addstr(md, " us median");
		}
		if (cJSON_IsTrue(cJSON_GetObjectItem(sw, "winner_clear")))
			strbuf_addstr(md, "; every other ranked variant is slower by `gpuorch compare`'s rule");
		strbuf_addstr(md, "\n\n");
	} else {
		strbuf_addstr(md, "❌ **No variant passed**: nothing is ranked.\n\n");
	}
	strbuf_addf(md, "| rank | variant | median (us) | %s | registers | spill st / ld | smem | status |\n"
			"|---|---|---|---|---|---|---|---|\n", tied ? "vs lowest median" : "vs winner");
	FOR_EACH_OBJ(v, rr_arr(sw, "variants")) {
		double r;
		if (rr_num(v, "rank", &r) && tied &&
		    (r == 1 || (rr_str(v, "vs_winner") && !rr_streq(rr_str(v, "vs_winner"), "slower"))))
			strbuf_addstr(md, "| tied 1st | ");
		else if (rr_num(v, "rank", &r))
			strbuf_addf(md, "| %s%.0f | ", r == 1 ? "🏆 " : "", r);
		else
			strbuf_addstr(md, "| — | ");
		rpt_md_code(md, rr_str(v, "variant"));
		strbuf_addstr(md, " | ");
		rpt_cell_num(md, v, "median_us", metric_fmt_us);
		strbuf_addstr(md, " | ");
		if (rr_num(v, "relative", &r))
			strbuf_addf(md, "%.2f×", r);
		else
			strbuf_addstr(md, DASH);
		if (rr_str(v, "vs_winner")) {
			strbuf_addstr(md, " (");
			rpt_md_cell_n(md, rr_str(v, "vs_winner"), 20);
			strbuf_addch(md, ')');
		}
		strbuf_addstr(md, " | ");
		add_variant_resources(md, h, sw, v);
		strbuf_addstr(md, " | ");
		if (rr_true(v, "ranked"))
			strbuf_addstr(md, "✅ ranked");
		else {
			strbuf_addstr(md, "❌ ");
			rpt_md_cell(md, rr_str(v, "reason"));
		}
		strbuf_addstr(md, " |\n");
	}
	strbuf_addstr(md, "\n");
}

void rpt_section_sweeps(struct rpt_ctx *c)
{
	const cJSON *h, *sw, *p, *each;
	cJSON *pools;
	int any = 0;

	FOR_EACH_OBJ(h, c->hosts) {
		cJSON *owned;
		const cJSON *sweeps;
		if (rr_obj(h, "spread"))
			continue;   /* its share: ranked with the pool's below */
		owned = rr_arr(h, "sweeps") ? NULL : sweep_rank_host(h);
		sweeps = owned ? owned : rr_arr(h, "sweeps");
		FOR_EACH_OBJ(sw, sweeps)
			sweep_block(c->md, h, sw, NULL, &any);
		cJSON_Delete(owned);
	}
	/* a --spread run: each pool's sweeps, ranked across its hosts */
	pools = rr_arr(c->run, RK_POOL_SWEEPS) ? NULL : sweep_rank_pools(c->hosts);
	each = pools ? pools : rr_arr(c->run, RK_POOL_SWEEPS);
	FOR_EACH_OBJ(p, each) {
		cJSON *ph = sweep_pool_host(c->hosts, rr_str(p, "pool"));
		FOR_EACH_OBJ(sw, rr_arr(p, "sweeps"))
			sweep_block(c->md, ph, sw, p, &any);
		cJSON_Delete(ph);
	}
	cJSON_Delete(pools);
}

void rpt_section_profiles(struct rpt_ctx *c)
{
	struct strbuf *md = c->md;
	const cJSON *h, *s, *m, *k, *x;
	int any = 0;

	FOR_EACH_OBJ(h, c->hosts) {
		FOR_EACH_OBJ(s, rr_arr(h, "steps")) {
			const cJSON *t = rr_obj(s, "tool_settings");
			const cJSON *prof = rr_obj(rr_result(s), "profile");
			double v;
			int nk = 0;
			if (!rr_is_kind(s, STEP_PROFILE))
				continue;
			if (!any++)
				strbuf_addstr(md, "## Profiles (Nsight Compute)\n\nCounters from `ncu` on "
						  "a few launches of the kernel, kept apart from the timed "
						  "benchmarks (profiling serialises and replays kernels; its "
						  "times are not comparable).\n\n");
			strbuf_addstr(md, "### ");
			rpt_md_code(md, rr_str(s, "program"));
			strbuf_addstr(md, " · ");
			rpt_md_cell(md, rr_str(s, "problem"));
			strbuf_addstr(md, " on ");
			rpt_md_cell(md, rpt_host_name(h));
			strbuf_addstr(md, " — ");
			rpt_cell_status(md, rr_str(s, "status"));
			strbuf_addstr(md, "\n\n");
			if (rr_str(s, "reason")) {
				strbuf_addstr(md, "- ");
				rpt_md_cell_n(md, rr_str(s, "reason"), 600);
				strbuf_addstr(md, "\n");
			}
			strbuf_addstr(md, "- ncu ");
			rpt_md_cell(md, rr_str(t, "version") ? rr_str(t, "version") : "(version unknown)");
			strbuf_addstr(md, ", kernel `regex:");
			rpt_md_cell_n(md, rr_str(t, "kernel_regex"), 120);
			strbuf_addstr(md, "`");
			if (rr_num(t, "launch_skip", &v))
				strbuf_addf(md, ", skip %.0f", v);
			if (rr_num(t, "launch_count", &v))
				strbuf_addf(md, ", %.0f launch%s", v, v == 1 ? "" : "es");
			strbuf_addstr(md, ", clock control ");
			rpt_md_cell_n(md, rr_str(t, "clock_control"), 20);
			strbuf_addstr(md, ", cache control ");
			rpt_md_cell_n(md, rr_str(t, "cache_control"), 20);
			strbuf_addstr(md, ", program mode ");
			rpt_md_cell_n(md, rr_str(t, "program_mode"), 20);
			strbuf_addstr(md, "\n");
			if (rr_str(s, "profile_report")) {
				strbuf_addstr(md, "- report: `");
				rpt_md_cell(md, rr_str(s, "profile_report"));
				strbuf_addstr(md, "` (open in Nsight Compute)\n");
			}
			FOR_EACH_OBJ(k, rr_arr(prof, "kernels")) {
				if (nk++ >= 4)
					break;
				strbuf_addstr(md, "- launch ");
				if (rr_num(k, "id", &v))
					strbuf_addf(md, "%.0f", v);
				strbuf_addstr(md, ": ");
				rpt_md_code(md, rr_str(k, "name"));
				strbuf_addstr(md, " grid ");
				rpt_md_cell_n(md, rr_str(k, "grid"), 40);
				strbuf_addstr(md, " block ");
				rpt_md_cell_n(md, rr_str(k, "block"), 40);
				strbuf_addstr(md, "\n");
			}
			if (cJSON_GetArraySize(rr_arr(prof, "missing"))) {
				strbuf_addstr(md, "- ❌ **not measured** (missing, n/a or NaN): ");
				cJSON_ArrayForEach(x, rr_arr(prof, "missing")) {
					if (cJSON_IsString(x)) {
						rpt_md_code(md, x->valuestring);
						strbuf_addstr(md, x->next ? ", " : "");
					}
				}
				strbuf_addstr(md, "\n");
			}
			strbuf_addstr(md, "\n");
			if (!rr_obj(prof, "metrics") || !rr_obj(prof, "metrics")->child)
				continue;
			strbuf_addstr(md, "| metric | value (mean) | min – max | launches |\n"
					  "|---|---|---|---|\n");
			cJSON_ArrayForEach(m, rr_obj(prof, "metrics")) {
				double lo, hi;
				if (!cJSON_IsObject(m))
					continue;
				strbuf_addstr(md, "| ");
				rpt_md_code(md, m->string);
				strbuf_addstr(md, " | ");
				if (rr_num(m, "value", &v))
					fmt_measured(md, v, rr_str(m, "unit"));
				else
					strbuf_addstr(md, DASH);
				strbuf_addstr(md, " | ");
				if (rr_num(m, "min", &lo) && rr_num(m, "max", &hi)) {
					metric_fmt_g(md, lo);
					strbuf_addstr(md, " – ");
					metric_fmt_g(md, hi);
				} else {
					strbuf_addstr(md, DASH);
				}
				strbuf_addstr(md, " | ");
				rpt_cell_num(md, m, "n", rpt_fmt_int);
				strbuf_addstr(md, " |\n");
			}
			strbuf_addstr(md, "\n");
		}
	}
}

void rpt_section_sanitizers(struct rpt_ctx *c)
{
	struct strbuf *md = c->md;
	const cJSON *h, *s, *f;
	int any = 0;
	struct strbuf details = STRBUF_INIT;

	FOR_EACH_OBJ(h, c->hosts) {
		FOR_EACH_OBJ(s, rr_arr(h, "steps")) {
			const cJSON *san = rr_obj(rr_result(s), "sanitizer");
			double v;
			int nf = 0;
			if (!rr_is_kind(s, STEP_SANITIZE))
				continue;
			if (!any++)
				strbuf_addstr(md, "## Sanitizer (compute-sanitizer)\n\n"
						  "| host | program · problem | tool | status | errors | warnings | first error |\n"
						  "|---|---|---|---|---|---|---|\n");
			strbuf_addstr(md, "| ");
			rpt_md_cell(md, rpt_host_name(h));
			strbuf_addstr(md, " | ");
			rpt_md_code(md, rr_str(s, "program"));
			strbuf_addstr(md, " · ");
			rpt_md_cell(md, rr_str(s, "problem"));
			strbuf_addstr(md, " | ");
			rpt_md_cell(md, rr_str(s, "tool"));
			strbuf_addstr(md, " | ");
			rpt_cell_status(md, rr_str(s, "status"));
			strbuf_addstr(md, " | ");
			if (rr_num(san, "errors", &v))
				strbuf_addf(md, v > 0 ? "**%.0f**" : "%.0f", v);
			else
				strbuf_addstr(md, DASH);
			strbuf_addstr(md, " | ");
			rpt_cell_num(md, san, "warnings", rpt_fmt_int);
			strbuf_addstr(md, " | ");
			f = cJSON_GetArrayItem(rr_arr(san, "first_errors"), 0);
			if (f) {
				rpt_md_cell_n(md, rr_str(f, "what"), 120);
				if (rr_str(f, "location")) {
					strbuf_addstr(md, " at ");
					rpt_md_code(md, rr_str(f, "location"));
				}
			} else {
				rpt_md_cell(md, item_status_is(rr_str(s, "status"), ST_PASS) ? NULL : rr_str(s, "reason"));
			}
			strbuf_addstr(md, " |\n");
			FOR_EACH_OBJ(f, rr_arr(san, "first_errors")) {
				if (!nf++) {
					strbuf_addstr(&details, "**");
					rpt_md_cell(&details, rpt_host_name(h));
					strbuf_addstr(&details, " · ");
					rpt_md_cell(&details, rr_str(s, "program"));
					strbuf_addstr(&details, " · ");
					rpt_md_cell(&details, rr_str(s, "problem"));
					strbuf_addstr(&details, " · ");
					rpt_md_cell(&details, rr_str(s, "tool"));
					strbuf_addstr(&details, "** (first reports)\n\n");
				}
				if (nf > 5)
					break;
				strbuf_addstr(&details, "- ");
				rpt_md_cell_n(&details, rr_str(f, "what"), 200);
				if (rr_str(f, "kernel")) {
					strbuf_addstr(&details, " in ");
					rpt_md_code(&details, rr_str(f, "kernel"));
				}
				if (rr_str(f, "location")) {
					strbuf_addstr(&details, " at ");
					rpt_md_code(&details, rr_str(f, "location"));
				}
				if (rr_str(f, "thread")) {
					strbuf_addstr(&details, ", thread ");
					rpt_md_cell_n(&details, rr_str(f, "thread"), 40);
				}
				if (rr_str(f, "block")) {
					strbuf_addstr(&details, " block ");
					rpt_md_cell_n(&details, rr_str(f, "block"), 40);
				}
				if (rr_str(f, "address")) {
					strbuf_addstr(&details, ", address ");
					rpt_md_cell_n(&details, rr_str(f, "address"), 40);
				}
				strbuf_addstr(&details, "\n");
			}
			if (nf)
				strbuf_addstr(&details, "\n");
		}
	}
	if (any) {
		strbuf_addstr(md, "\n");
		strbuf_add(md, details.buf, details.len);
		strbuf_addstr(md, "Errors need a program built with `-lineinfo` to name source lines.\n\n");
	}
	strbuf_release(&details);
}
