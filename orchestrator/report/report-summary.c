/* report-summary.c -- the report's title, unfinished notice, at a glance, configuration. */
#include "report/report-int.h"
#include "store/runkeys.h"
#include "core/banned.h"

/* ==== 1. title ==== */

static void outcome_text(const struct rpt_ctx *c, struct strbuf *md)
{
	const char *status = rr_str(c->run, "status");
	const char *outcome = rr_str(c->run, RK_OUTCOME);
	if (!run_status_is(status, RUN_COMPLETE))
		strbuf_addstr(md, "⚠️ **incomplete: the run did not finish**");
	else if (run_outcome_is(outcome, OUTCOME_PASSED))
		strbuf_addstr(md, "✅ **passed**");
	else if (run_outcome_is(outcome, OUTCOME_FAILED))
		strbuf_addstr(md, "❌ **failed**");
	else if (run_outcome_is(outcome, OUTCOME_INFRA_ERROR))
		strbuf_addstr(md, "❌ **infrastructure error: no host could be used**");
	else
		strbuf_addstr(md, "⚠️ **outcome unknown**");
}

void rpt_section_title(struct rpt_ctx *c)
{
	struct strbuf *md = c->md;
	const char *phase = rr_str(c->exp, "phase");
	const char *name = rr_str(c->exp, "name");
	const char *desc = rr_str(c->exp, "description");
	double v;
	int cnt[4];

	strbuf_addstr(md, "# ");
	rpt_md_cell_n(md, phase ? phase : name ? name : "gpuorch run", 400);
	strbuf_addstr(md, "\n\n");
	strbuf_addstr(md, "**Experiment** ");
	rpt_md_cell(md, name);
	strbuf_addstr(md, " · **Started** ");
	rpt_fmt_time(md, rr_str(c->run, RK_STARTED_AT));
	if (rr_num(c->run, "duration_s", &v)) {
		strbuf_addstr(md, " · **Took** ");
		rpt_fmt_secs(md, v);
	}
	strbuf_addstr(md, " · **Run** ");
	rpt_md_code(md, rr_str(c->run, "run_id"));
	strbuf_addstr(md, "  \n**Outcome**: ");
	outcome_text(c, md);
	if (rr_num(c->run, "exit_code", &v))
		strbuf_addf(md, " (exit %.0f)", v);
	rpt_count_verdicts(c, NULL, cnt);
	if (cnt[V_MET] + cnt[V_MISSED] + cnt[V_NOT_MEASURED]) {
		strbuf_addstr(md, " · expectations: ");
		rpt_add_verdict_counts(md, cnt, 0);
	}
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c->run, "dry_run")))
		strbuf_addstr(md, " · dry run");
	strbuf_addstr(md, "\n\n");
	if (desc) {
		rpt_md_cell_n(md, desc, 2000);
		strbuf_addstr(md, "\n\n");
	}
}

/* Planned (kind, program, problem) steps from the spec that host h has not recorded. */
static void add_missing_steps(const struct rpt_ctx *c, const cJSON *h, struct strbuf *md)
{
	const cJSON *st;
	int planned = 0, missing = 0, shown = 0;
	struct strbuf list = STRBUF_INIT;

	FOR_EACH_OBJ(st, rr_arr(c->spec, "steps")) {
		const char *kind = rr_str(st, "kind"), *program = rr_str(st, "program");
		const cJSON *probs = rr_arr(st, "problems") ? rr_arr(st, "problems")
							 : rr_arr(c->spec, "problems");
		const cJSON *p;
		enum step_kind k = STEP_ANY;
		int known = !kind || step_kind_parse(kind, &k);   /* an unknown kind: none recorded */
		cJSON_ArrayForEach(p, probs) {
			const char *pname = cJSON_IsString(p) ? p->valuestring : rr_str(p, "name");
			planned++;
			if (known && rr_find_step(h, k, program, pname, NULL, NULL))
				continue;
			missing++;
			if (shown++ < 8) {
				strbuf_addstr(&list, shown > 1 ? ", " : "");
				rpt_md_cell_n(&list, kind, 20);
				strbuf_addch(&list, ' ');
				rpt_md_code(&list, program);
				strbuf_addch(&list, ' ');
				rpt_md_cell_n(&list, pname, 60);
			}
		}
	}
	if (planned) {
		strbuf_addf(md, "; %d of %d planned steps recorded", planned - missing, planned);
		if (missing)
			strbuf_addf(md, "; never completed: %s%s", list.buf,
				    missing > 8 ? ", …" : "");
	}
	strbuf_release(&list);
}

void rpt_section_unfinished(struct rpt_ctx *c)
{
	struct strbuf *md = c->md;
	const char *status = rr_str(c->run, "status");
	const cJSON *h;
	int complete = run_status_is(status, RUN_COMPLETE), any = 0;

	FOR_EACH_OBJ(h, c->hosts)
		if (!rpt_host_finished(rr_str(h, "status")))
			any = 1;
	if (complete && !any)
		return;
	strbuf_addstr(md, "> ⚠️ **This run did not finish.** ");
	if (!complete && status) {
		strbuf_addstr(md, "The record's status is ");
		rpt_md_code(md, status);
		strbuf_addstr(md, run_status_is(status, RUN_RUNNING)
			      ? " (the controller was killed, or is still running)"
			      : run_status_is(status, RUN_INCOMPLETE) ? " (interrupted)" : "");
		strbuf_addstr(md, ". ");
	} else if (!complete) {
		strbuf_addstr(md, "The record has no status. ");
	}
	strbuf_addstr(md, "What follows is only what was recorded before it stopped.\n");
	FOR_EACH_OBJ(h, c->hosts) {
		const cJSON *ph, *last = NULL;
		if (rpt_host_finished(rr_str(h, "status")))
			continue;
		strbuf_addstr(md, "> - **");
		rpt_md_cell(md, rpt_host_name(h));
		strbuf_addstr(md, "** never completed (status ");
		rpt_md_code(md, rr_str(h, "status") ? rr_str(h, "status") : "missing");
		strbuf_addstr(md, ")");
		FOR_EACH_OBJ(ph, rr_arr(h, RK_PHASES))
			last = ph;
		if (last) {
			strbuf_addstr(md, "; last phase ");
			rpt_md_cell_n(md, rr_str(last, "name"), 20);
			strbuf_addch(md, ' ');
			rpt_md_cell_n(md, rr_str(last, "status"), 20);
		} else {
			strbuf_addstr(md, "; no phase recorded");
		}
		add_missing_steps(c, h, md);
		strbuf_addstr(md, "\n");
	}
	strbuf_addstr(md, "\n");
}

/* ==== 2. at a glance ==== */

void rpt_count_status(struct counts *k, const char *st)
{
	enum item_status s = ST_NONE;
	item_status_parse(st, &s);
	switch (s) {
	case ST_PASS: k->pass++; break;
	case ST_FAIL: k->fail++; break;
	case ST_TIMEOUT: k->timeout++; break;
	case ST_KILLED: k->killed++; break;
	case ST_INFRA_ERROR: k->infra++; break;
	case ST_SKIPPED: k->skipped++; break;
	case ST_NONE: case ITEM_STATUS_COUNT: k->other++; break;
	}
}

/* "3 PASS · 1 FAIL"; failures in bold when bold. */
void rpt_add_counts(struct strbuf *md, const struct counts *k, int bold)
{
	const char *b = bold ? "**" : "";
	int any = 0;
	if (k->pass)
		strbuf_addf(md, "%s%d PASS", any++ ? " · " : "", k->pass);
	if (k->fail)
		strbuf_addf(md, "%s%s%d FAIL%s", any++ ? " · " : "", b, k->fail, b);
	if (k->timeout)
		strbuf_addf(md, "%s%s%d TIMEOUT%s", any++ ? " · " : "", b, k->timeout, b);
	if (k->killed)
		strbuf_addf(md, "%s%s%d KILLED%s", any++ ? " · " : "", b, k->killed, b);
	if (k->infra)
		strbuf_addf(md, "%s%s%d INFRA_ERROR%s", any++ ? " · " : "", b, k->infra, b);
	if (k->skipped)
		strbuf_addf(md, "%s%d SKIPPED", any++ ? " · " : "", k->skipped);
	if (k->other)
		strbuf_addf(md, "%s%d unknown", any++ ? " · " : "", k->other);
	if (!any)
		strbuf_addstr(md, "none");
}

/* A program off the harness (docs/byo.md): the figures read from its output
 * stand where the timing would, at most four; 0 when it has none. */
static int add_output_figures(struct strbuf *md, const cJSON *res)
{
	const cJSON *f;
	int n = 0;
	double v;
	FOR_EACH_OBJ(f, rr_obj(res, "figures")) {
		if (!rr_num(f, "value", &v))
			continue;
		if (n == 4) {
			strbuf_addstr(md, ", …");
			break;
		}
		strbuf_addstr(md, n++ ? ", " : "");
		rpt_md_cell_n(md, f->string, 40);
		strbuf_addstr(md, " **");
		metric_fmt_g(md, v);
		if (rr_str(f, "unit")) {
			strbuf_addch(md, ' ');
			rpt_md_cell_n(md, rr_str(f, "unit"), 20);
		}
		strbuf_addstr(md, "**");
	}
	return n;
}

/* The key line for one kernel benchmark: figures, comparisons, correctness. */
static void add_key_result(const struct rpt_ctx *c, struct strbuf *md, const cJSON *h,
			   const cJSON *s)
{
	const cJSON *res = rr_result(s);
	const cJSON *ref, *b;
	cJSON *roof;
	double v;
	int n = 0;

	strbuf_addstr(md, "- **");
	rpt_md_cell(md, rpt_host_name(h));
	strbuf_addstr(md, "** ");
	rpt_md_code(md, rr_str(s, "program"));
	strbuf_addch(md, ' ');
	rpt_md_cell(md, rr_str(s, "problem"));
	strbuf_addstr(md, ": ");
	if (!item_status_is(rr_str(s, "status"), ST_PASS) && !rr_num(res, METRIC_MEDIAN_PATH, &v)) {
		rpt_cell_status(md, rr_str(s, "status"));
		if (rr_str(s, "reason")) {
			strbuf_addstr(md, " — ");
			rpt_md_cell(md, rr_str(s, "reason"));
		}
		strbuf_addstr(md, "\n");
		return;
	}
	if (rr_true(res, METRIC_IMPOSSIBLE_PATH)) {
		/* not a result: say so first, and compare it with nothing */
		strbuf_addstr(md, "⚠️ **IMPOSSIBLE timing**: ");
		rpt_cell_num(md, res, METRIC_MEDIAN_PATH, metric_fmt_us);
		strbuf_addstr(md, " us");
		if (rr_num(res, "model.tflops", &v) && v > 0) {
			strbuf_addstr(md, ", ");
			metric_fmt_tflops(md, v);
			strbuf_addstr(md, " TFLOPS");
		}
		strbuf_addstr(md, " beats ");
		rpt_impossible_bound(md, res, 0);
		strbuf_addstr(md, "; the measurement is wrong, not fast");
		strbuf_addstr(md, "\n");
		return;
	}
	if (rr_num(res, METRIC_MEDIAN_PATH, &v)) {
		strbuf_addstr(md, "**");
		metric_fmt_us(md, v);
		strbuf_addstr(md, " us**");
	} else if (!add_output_figures(md, res)) {
		strbuf_addstr(md, "no timing");
	}
	roof = rpt_roofline(c, h, s);
	if (rr_num(res, "model.tflops", &v) && v > 0) {
		strbuf_addstr(md, ", **");
		metric_fmt_tflops(md, v);
		strbuf_addstr(md, " TFLOPS**");
		rpt_add_pct_compute(md, roof);
	}
	if (rr_num(res, "model.gbps", &v) && v > 0) {
		strbuf_addstr(md, ", ");
		metric_fmt_gbps(md, v);
		strbuf_addstr(md, " GB/s");
		rpt_add_pct_dram(md, roof);
	}
	cJSON_Delete(roof);
	strbuf_addstr(md, " — ");
	if (rpt_add_speedup(c, md, h, s, 1))
		strbuf_addstr(md, " (measured)");
	else
		strbuf_addstr(md, "no measured baseline");
	FOR_EACH_OBJ(ref, c->references) {
		struct strbuf one = STRBUF_INIT;
		if (rpt_ref_applies(ref, h, s) && rpt_add_reference_gap(&one, ref, s)) {
			strbuf_addstr(md, "; ");
			strbuf_addstr(md, one.buf);
			n++;
		}
		strbuf_release(&one);
	}
	FOR_EACH_OBJ(b, c->baselines) {
		if (n < 4 && rpt_baseline_applies(b, h, s)) {
			strbuf_addstr(md, "; vs ");
			rpt_add_spec_baseline(md, b, s);
			n++;
		}
	}
	strbuf_addstr(md, "; ");
	rpt_add_correctness_short(md, rpt_correctness_step(h, rr_str(s, "program"), rr_str(s, "problem")));
	strbuf_addstr(md, "\n");
}

/* "FA3 paper: 0.85×": the kernel's speed as a fraction of a reference's (TFLOPS
 * or latency, whichever the reference gives); 0 when it does not apply */
static int add_reference_short(struct strbuf *md, const cJSON *ref, const cJSON *s)
{
	const cJSON *res = rr_result(s);
	double r, k;
	if (rr_num(ref, "tflops", &r) && rr_num(res, "model.tflops", &k) && k > 0 && r > 0) {
		r = k / r;
	} else if (rr_num(ref, "latency_us", &r) && rr_num(res, METRIC_MEDIAN_PATH, &k) && k > 0 && r > 0) {
		r = r / k;
	} else {
		return 0;
	}
	rpt_md_cell_n(md, rr_str(ref, "name") ? rr_str(ref, "name") : "reference", 40);
	strbuf_addstr(md, ": ");
	rpt_fmt_ratio(md, r);
	return 1;
}

/* The headline figure of a program off the harness, for the glance table's
 * TFLOPS column: the first figure it declares that is better higher (a
 * throughput, as TFLOPS is), else its first figure; "+N more" counts the
 * others (all of them are in the words below and in the figures section).
 * 0 when it has none. */
static int add_headline_figure(struct strbuf *md, const cJSON *res)
{
	const cJSON *f, *pick = NULL;
	double v;
	int n = 0;
	FOR_EACH_OBJ(f, rr_obj(res, "figures")) {
		if (!rr_num(f, "value", &v))
			continue;
		n++;
		if (!pick || (metric_better_parse(rr_str(pick, "better")) != METRIC_HIGHER_BETTER &&
			      metric_better_parse(rr_str(f, "better")) == METRIC_HIGHER_BETTER))
			pick = f;
	}
	if (!pick)
		return 0;
	rpt_md_cell_n(md, pick->string, 40);
	strbuf_addstr(md, " **");
	rr_num(pick, "value", &v);
	metric_fmt_g(md, v);
	if (rr_str(pick, "unit")) {
		strbuf_addch(md, ' ');
		rpt_md_cell_n(md, rr_str(pick, "unit"), 20);
	}
	strbuf_addstr(md, "**");
	if (n > 1)
		strbuf_addf(md, " (+%d more)", n - 1);
	return 1;
}

/* One row of the glance table: a kernel benchmark in a line. */
static void add_glance_row(const struct rpt_ctx *c, struct strbuf *md, const cJSON *h, const cJSON *s)
{
	const cJSON *res = rr_result(s), *ref, *corr;
	double v;
	int n = 0;

	strbuf_addstr(md, "| ");
	rpt_md_cell(md, rpt_host_name(h));
	strbuf_addstr(md, " | ");
	rpt_md_code(md, rr_str(s, "program"));
	strbuf_addstr(md, " | ");
	rpt_md_cell(md, rr_str(s, "problem"));
	strbuf_addstr(md, " | ");
	if (rr_true(res, METRIC_IMPOSSIBLE_PATH)) {
		strbuf_addstr(md, "⚠️ IMPOSSIBLE (");
		rpt_cell_num(md, res, METRIC_MEDIAN_PATH, metric_fmt_us);
		strbuf_addstr(md, rr_obj(rr_obj(res, "model"), "bound_us") || rr_true(res, "roofline.impossible")
				  ? " us beats the physical bound)" :
								       " us beats the floor)");
	} else if (rr_num(res, METRIC_MEDIAN_PATH, &v)) {
		strbuf_addstr(md, "**");
		metric_fmt_us(md, v);
		strbuf_addstr(md, " us**");
	} else if (!item_status_is(rr_str(s, "status"), ST_PASS)) {
		rpt_cell_status(md, rr_str(s, "status"));
	} else {
		strbuf_addstr(md, "—");   /* no timing: a program off the harness */
	}
	strbuf_addstr(md, " | ");
	if (!rr_true(res, METRIC_IMPOSSIBLE_PATH) && rr_num(res, "model.tflops", &v) && v > 0)
		metric_fmt_tflops(md, v);
	else if (rr_true(res, METRIC_IMPOSSIBLE_PATH) || rr_num(res, METRIC_MEDIAN_PATH, &v) ||
		 !add_headline_figure(md, res))
		strbuf_addstr(md, "—");
	strbuf_addstr(md, " | ");
	if (rr_true(res, METRIC_IMPOSSIBLE_PATH) || !rpt_add_speedup(c, md, h, s, 1))
		strbuf_addstr(md, "—");
	strbuf_addstr(md, " | ");
	FOR_EACH_OBJ(ref, c->references) {
		struct strbuf one = STRBUF_INIT;
		if (n < 3 && !rr_true(res, METRIC_IMPOSSIBLE_PATH) && rpt_ref_applies(ref, h, s) &&
		    add_reference_short(&one, ref, s)) {
			strbuf_addstr(md, n++ ? "; " : "");
			strbuf_addstr(md, one.buf);
		}
		strbuf_release(&one);
	}
	if (!n)
		strbuf_addstr(md, "—");
	strbuf_addstr(md, " | ");
	corr = rr_obj(rr_result(rpt_correctness_step(h, rr_str(s, "program"), rr_str(s, "problem"))),
		      "correctness");
	if (corr)
		strbuf_addstr(md, rr_true(corr, "pass") ? "✅" : "**❌**");
	else
		strbuf_addstr(md, "not checked");
	strbuf_addstr(md, " |\n");
}

void rpt_section_glance(struct rpt_ctx *c)
{
	struct strbuf *md = c->md;
	const cJSON *h, *s, *b;
	struct counts all_steps = { 0 }, all_builds = { 0 };
	int cnt[4], any = 0, alerts = 0;

	strbuf_addstr(md, "## At a glance\n\n");

	/* the figures first: every kernel benchmark, a line each, then in words */
	FOR_EACH_OBJ(h, c->hosts) {
		FOR_EACH_OBJ(s, rr_arr(h, "steps")) {
			if (!rr_is_kind(s, STEP_BENCHMARK) || rpt_is_baseline(s))
				continue;
			if (!any)
				strbuf_addstr(md, "| host | kernel | problem | median | TFLOPS or figure | vs baseline "
						  "(speedup) | of reference speed | correct |\n"
						  "|---|---|---|---|---|---|---|---|\n");
			add_glance_row(c, md, h, s);
			any = 1;
		}
	}
	if (any)
		strbuf_addstr(md, "\n");
	any = 0;
	FOR_EACH_OBJ(h, c->hosts) {
		FOR_EACH_OBJ(s, rr_arr(h, "steps")) {
			if (!rr_is_kind(s, STEP_BENCHMARK) || rpt_is_baseline(s))
				continue;
			add_key_result(c, md, h, s);
			any = 1;
		}
	}
	if (!any)
		strbuf_addstr(md, "- No kernel benchmark was recorded.\n");
	strbuf_addstr(md, "\n");

	strbuf_addstr(md, "| host | GPU | status | builds | steps | expectations |\n"
			  "|---|---|---|---|---|---|\n");
	FOR_EACH_OBJ(h, c->hosts) {
		struct counts ks = { 0 }, kb = { 0 };
		FOR_EACH_OBJ(s, rr_arr(h, "steps")) {
			rpt_count_status(&ks, rr_str(s, "status"));
			rpt_count_status(&all_steps, rr_str(s, "status"));
		}
		FOR_EACH_OBJ(b, rr_arr(h, "builds")) {
			rpt_count_status(&kb, rr_str(b, "status"));
			rpt_count_status(&all_builds, rr_str(b, "status"));
		}
		strbuf_addstr(md, "| ");
		rpt_md_cell(md, rpt_host_name(h));
		strbuf_addstr(md, " | ");
		rpt_md_cell(md, rpt_gpu_name(h));
		if (rr_str(rr_obj(h, "info"), "arch")) {
			strbuf_addstr(md, " (");
			rpt_md_cell_n(md, rr_str(rr_obj(h, "info"), "arch"), 20);
			strbuf_addch(md, ')');
		}
		strbuf_addstr(md, " | ");
		rpt_cell_host_status(md, h);
		if (rr_str(h, "error")) {
			strbuf_addstr(md, ": ");
			rpt_md_cell_n(md, rr_str(h, "error"), 120);
		}
		strbuf_addstr(md, " | ");
		rpt_add_counts(md, &kb, 1);
		strbuf_addstr(md, " | ");
		rpt_add_counts(md, &ks, 1);
		strbuf_addstr(md, " | ");
		rpt_count_verdicts(c, h, cnt);
		rpt_add_verdict_counts(md, cnt, 0);
		strbuf_addstr(md, " |\n");
	}
	if (!cJSON_GetArraySize(c->hosts))
		strbuf_addstr(md, "| " DASH " | " DASH " | no hosts recorded | | | |\n");
	strbuf_addstr(md, "\n**Builds**: ");
	rpt_add_counts(md, &all_builds, 1);
	strbuf_addstr(md, "  \n**Steps**: ");
	rpt_add_counts(md, &all_steps, 1);
	strbuf_addstr(md, "  \n**Expectations**: ");
	rpt_count_verdicts(c, NULL, cnt);
	rpt_add_verdict_counts(md, cnt, 1);
	strbuf_addstr(md, "\n\n");

	/* the expectations that were missed, by name */
	{
		int i, shown = 0;
		for (i = 0; i < c->nv; i++) {
			const struct verdict *v = &c->v[i];
			double target;
			if (v->kind != V_MISSED)
				continue;
			if (shown++ >= 8)
				continue;
			strbuf_addstr(md, shown == 1 ? "**Missed expectations**\n\n" : "");
			strbuf_addstr(md, "- ❌ ");
			rpt_md_code(md, rr_str(v->exp, "program"));
			strbuf_addch(md, ' ');
			rpt_md_cell_n(md, rr_str(v->exp, "metric"), 60);
			strbuf_addch(md, ' ');
			rpt_md_cell_n(md, rr_str(v->exp, "op"), 4);
			strbuf_addch(md, ' ');
			if (rr_num(v->exp, "value", &target))
				metric_fmt_target(md, rr_str(v->exp, "metric"), target);
			strbuf_addstr(md, " on ");
			rpt_md_cell(md, rpt_host_name(v->host));
			if (v->problem) {
				strbuf_addstr(md, " (");
				rpt_md_cell(md, v->problem);
				strbuf_addch(md, ')');
			}
			if (v->has_value) {
				strbuf_addstr(md, ": measured ");
				metric_fmt(md, rr_str(v->exp, "metric"), v->value);
			} else {
				strbuf_addstr(md, ": ");
				rpt_md_cell_n(md, v->why.buf, 200);
			}
			strbuf_addstr(md, "\n");
		}
		if (shown > 8)
			strbuf_addf(md, "- … and %d more (see Expectations)\n", shown - 8);
		if (shown)
			strbuf_addstr(md, "\n");
	}

	/* alerts a kernel engineer must not miss */
	FOR_EACH_OBJ(h, c->hosts) {
		FOR_EACH_OBJ(s, rr_arr(h, "steps")) {
			const cJSON *res = rr_result(s);
			double v;
			if (rr_true(res, METRIC_IMPOSSIBLE_PATH)) {
				strbuf_addstr(md, alerts++ ? "" : "**Alerts**\n\n");
				strbuf_addstr(md, "- ⚠️ **IMPOSSIBLE** on ");
				rpt_md_cell(md, rpt_host_name(h));
				strbuf_addstr(md, ": ");
				rpt_md_step_program(md, s);
				strbuf_addch(md, ' ');
				rpt_md_cell(md, rr_str(s, "problem"));
				strbuf_addstr(md, " median ");
				rpt_cell_num(md, res, METRIC_MEDIAN_PATH, metric_fmt_us);
				strbuf_addstr(md, " us is below ");
				rpt_impossible_bound(md, res, 0);
				strbuf_addstr(md, ": the measurement is wrong (no work done? wrong FLOP "
						  "count? asynchronous work not timed?)\n");
			}
			if (rr_obj(res, "correctness") && !rr_true(res, "correctness.pass")) {
				strbuf_addstr(md, alerts++ ? "" : "**Alerts**\n\n");
				strbuf_addstr(md, "- ❌ **wrong results** on ");
				rpt_md_cell(md, rpt_host_name(h));
				strbuf_addstr(md, ": ");
				rpt_md_step_program(md, s);
				strbuf_addch(md, ' ');
				rpt_md_cell(md, rr_str(s, "problem"));
				if (rr_bad_outputs(res, NULL)) {
					struct strbuf bad = STRBUF_INIT;
					rr_bad_outputs(res, &bad);
					strbuf_addch(md, ' ');
					rpt_md_cell(md, bad.buf);
					strbuf_release(&bad);
				} else {
					strbuf_addstr(md, " max_abs ");
					rpt_cell_num(md, res, "correctness.max_abs", metric_fmt_g);
					strbuf_addstr(md, ", rel_l2 ");
					rpt_cell_num(md, res, "correctness.rel_l2", metric_fmt_g);
				}
				strbuf_addstr(md, "\n");
			}
			if (rr_num(res, "timing.dropped_throttled", &v) && v > 0) {
				strbuf_addstr(md, alerts++ ? "" : "**Alerts**\n\n");
				strbuf_addf(md, "- ⚠️ %.0f sample%s dropped for clock throttling on ", v,
					    v == 1 ? "" : "s");
				rpt_md_cell(md, rpt_host_name(h));
				strbuf_addstr(md, ": ");
				rpt_md_step_program(md, s);
				strbuf_addch(md, ' ');
				rpt_md_cell(md, rr_str(s, "problem"));
				strbuf_addstr(md, "\n");
			}
		}
		FOR_EACH_OBJ(b, rr_arr(h, "builds")) {
			const cJSON *k;
			FOR_EACH_OBJ(k, rr_arr(b, "resources")) {
				double st = 0, ld = 0;
				rr_num(k, "spill_store_bytes", &st);
				rr_num(k, "spill_load_bytes", &ld);
				if (st > 0 || ld > 0) {
					strbuf_addstr(md, alerts++ ? "" : "**Alerts**\n\n");
					strbuf_addstr(md, "- ⚠️ register **spills** in ");
					rpt_md_code(md, rr_str(k, "demangled") ? rr_str(k, "demangled")
										 : rr_str(k, "kernel"));
					strbuf_addstr(md, " (");
					rpt_md_cell(md, rr_str(b, "program"));
					strbuf_addstr(md, ", ");
					rpt_md_cell(md, rr_str(k, "arch") ? rr_str(k, "arch") : rr_str(b, "arch"));
					strbuf_addstr(md, " on ");
					rpt_md_cell(md, rpt_host_name(h));
					strbuf_addf(md, "): %.0f B stores, %.0f B loads\n", st, ld);
				}
			}
		}
	}
	if (alerts)
		strbuf_addstr(md, "\n");
}

/* ==== 3. configuration ==== */

static void add_string_list(struct strbuf *md, const cJSON *a)
{
	const cJSON *x;
	int n = 0;
	cJSON_ArrayForEach(x, a) {
		if (!cJSON_IsString(x))
			continue;
		strbuf_addstr(md, n++ ? " " : "");
		rpt_md_code(md, x->valuestring);
	}
	if (!n)
		strbuf_addstr(md, DASH);
}

void rpt_section_config(struct rpt_ctx *c)
{
	struct strbuf *md = c->md;
	const cJSON *spec = c->spec, *build = rr_obj(spec, "build");
	const cJSON *x, *st;
	const char *sha = rr_str(c->exp, "spec_sha256");
	double v;

	strbuf_addstr(md, "## Configuration\n\n");
	strbuf_addstr(md, "- **Spec**: ");
	rpt_md_code(md, rr_str(c->exp, "spec_path"));
	strbuf_addstr(md, " (sha256 ");
	if (sha)
		strbuf_addf(md, "`%.12s…`", sha);
	else
		strbuf_addstr(md, DASH);
	strbuf_addstr(md, ")\n- **Build flags**: ");
	add_string_list(md, rr_arr(build, "flags"));
	strbuf_addstr(md, "; **defines**: ");
	rpt_add_kv(md, rr_obj(build, "defines"), "=");
	if (rr_num(build, "timeout_s", &v))
		strbuf_addf(md, "; build timeout %.0f s", v);
	strbuf_addstr(md, "\n- **Targets**: ");
	{
		int n = 0;
		cJSON_ArrayForEach(x, rr_obj(spec, "targets")) {
			strbuf_addstr(md, n++ ? ", " : "");
			rpt_md_cell_n(md, x->string, 60);
			strbuf_addstr(md, " → ");
			rpt_md_cell_n(md, cJSON_IsString(x) ? x->valuestring : NULL, 20);
		}
		if (!n)
			strbuf_addstr(md, DASH);
	}
	strbuf_addstr(md, "\n- **Tolerance**: ");
	rpt_add_kv(md, rr_obj(spec, "tolerance"), " ≤ ");
	strbuf_addstr(md, "\n\n");

	if (cJSON_GetArraySize(rr_obj(spec, "programs"))) {
		strbuf_addstr(md, "| program | built from | libs | min arch | needs GPU |\n"
				  "|---|---|---|---|---|\n");
		cJSON_ArrayForEach(x, rr_obj(spec, "programs")) {
			const cJSON *ng = cJSON_GetObjectItemCaseSensitive(x, "needs_gpu");
			strbuf_addstr(md, "| ");
			rpt_md_code(md, x->string);
			strbuf_addstr(md, " | ");
			if (rr_str(x, "script")) {
				strbuf_addstr(md, "script ");
				rpt_md_code(md, rr_str(x, "script"));
			} else {
				add_string_list(md, rr_arr(x, "sources"));
			}
			strbuf_addstr(md, " | ");
			add_string_list(md, rr_arr(x, "libs"));
			strbuf_addstr(md, " | ");
			rpt_md_cell_n(md, rr_str(x, "min_arch"), 20);
			strbuf_addstr(md, cJSON_IsFalse(ng) ? " | no |\n" : " | yes |\n");
		}
		strbuf_addstr(md, "\n");
	}
	if (cJSON_GetArraySize(rr_arr(spec, "problems"))) {
		strbuf_addstr(md, "| problem | parameters |\n|---|---|\n");
		FOR_EACH_OBJ(x, rr_arr(spec, "problems")) {
			strbuf_addstr(md, "| ");
			rpt_md_cell(md, rr_str(x, "name"));
			strbuf_addstr(md, " | ");
			rpt_add_kv(md, rr_obj(x, "params"), "=");
			strbuf_addstr(md, " |\n");
		}
		strbuf_addstr(md, "\n");
	}
	if (cJSON_GetArraySize(rr_arr(spec, "steps"))) {
		int n = 0;
		strbuf_addstr(md, "**Planned steps**: ");
		FOR_EACH_OBJ(st, rr_arr(spec, "steps")) {
			strbuf_addstr(md, n++ ? "; " : "");
			rpt_md_cell_n(md, rr_str(st, "kind"), 20);
			strbuf_addch(md, ' ');
			rpt_md_code(md, rr_str(st, "program"));
			if (rr_streq(rr_str(st, "role"), "baseline"))
				strbuf_addstr(md, " (baseline)");
			if (rr_num(st, "timeout_s", &v))
				strbuf_addf(md, ", timeout %.0f s", v);
		}
		strbuf_addstr(md, "\n\n");
	}
	if (!spec)
		strbuf_addstr(md, "The record holds no copy of the spec.\n\n");
}
