/* report.c -- the Markdown phase report of a run, rendered from run.json alone.
 *
 * DESIGN
 *   report_render() is a pure function of the record (docs/run-record.md,
 *   docs/report.md): no clock, no file system, no environment. Every value
 *   is read through the typed getters (rr_obj, rr_str, rr_num... in
 *   report-format.c), so a record with missing or wrong-typed fields
 *   renders "—" where the value would be, never crashes. Text that came
 *   from the record goes through rpt_md_cell()/rpt_md_code() before it
 *   reaches the page (table pipes, newlines, HTML, length).
 *
 *   Expectations are judged once (rpt_judge_all) into an array of verdicts
 *   that the at-a-glance counts, the expectations section and the headline
 *   share.
 *
 *   Sections, in order: title + outcome line (and a loud notice for a run
 *   that did not finish), gates at a glance, at a glance, configuration,
 *   results per host and problem, sweeps, profiles, sanitizers, ptxas
 *   resources, expectations, steps, provenance. Gates and sweep rankings
 *   come from gates.c (stored in the record by the run; judged here only
 *   for a record that has none).
 *
 *   Files: this one holds the entry points and the order of the sections;
 *   report-format.c the typed reads and the formatting of text, numbers
 *   and statuses; report-summary.c title, at a glance and configuration;
 *   report-results.c results, baselines, references and expectations;
 *   report-tools.c gates, sweeps, profiles and sanitizers; report-steps.c
 *   ptxas resources, steps and provenance. What they share is declared in
 *   report-int.h, with an rpt_ prefix.
 */
#include "report/report.h"
#include "report/report-int.h"
#include "report/report-id.h"
#include "core/fsutil.h"
#include "core/vocab.h"
#include "store/peaks.h"

#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

/* ==== entry points ==== */

static void ctx_init(struct rpt_ctx *c, const cJSON *run, struct strbuf *md)
{
	memset(c, 0, sizeof(*c));
	c->run = cJSON_IsObject(run) ? run : NULL;
	c->exp = rr_obj(c->run, "experiment");
	c->spec = rr_obj(c->exp, "spec");
	c->hosts = rr_arr(c->run, "hosts");
	/* the record's copies first; the spec's when the record has none */
	c->expected = rr_arr(c->run, "expected") ? rr_arr(c->run, "expected") : rr_arr(c->spec, "expected");
	c->references = rr_arr(c->run, "references") ? rr_arr(c->run, "references")
						   : rr_arr(c->spec, "references");
	c->baselines = rr_arr(c->run, "baselines") ? rr_arr(c->run, "baselines")
						 : rr_arr(c->spec, "baselines");
	c->md = md;
	strbuf_init(&c->scratch, 0);
	rr_index_begin(c->run);   /* the record does not change while it is rendered */
	rpt_judge_all(c);
}

static void ctx_release(struct rpt_ctx *c)
{
	int i;
	for (i = 0; i < c->nv; i++)
		strbuf_release(&c->v[i].why);
	free(c->v);
	strbuf_release(&c->scratch);
	rr_index_end();
}

void report_render(const cJSON *run_in, struct strbuf *md)
{
	struct rpt_ctx c;
	cJSON *judged = peaks_judged_copy(run_in);   /* an older record's figures against the peaks */
	const cJSON *run = judged ? judged : run_in;
	ctx_init(&c, run, md);
	rpt_section_title(&c);
	rpt_section_unfinished(&c);
	rpt_section_gates(&c);
	rpt_section_glance(&c);
	rpt_section_charts(&c);
	rpt_section_config(&c);
	rpt_section_instances(&c);
	rpt_section_cluster(&c);
	rpt_section_results(&c);
	rpt_section_figures(&c);
	rpt_section_sizes(&c);
	rpt_section_kernels(&c);
	rpt_section_sweeps(&c);
	rpt_section_profiles(&c);
	rpt_section_sanitizers(&c);
	rpt_section_ptxas(&c);
	rpt_section_expectations(&c);
	rpt_section_steps(&c);
	rpt_section_provenance(&c);
	strbuf_addstr(md, "---\n\n*Written by gpuorch from `run.json` alone; "
			  "`gpuorch report ");
	rpt_md_cell_n(md, rr_str(c.run, "run_id"), 40);
	strbuf_addstr(md, "` writes it again. Raw output of every build and step is under "
			  "`logs/`.*\n");
	report_generator_line(md);
	ctx_release(&c);
	cJSON_Delete(judged);
}

void report_generator_line(struct strbuf *sb)
{
	strbuf_addf(sb, "\n%s%s renderer %s -->\n", REPORT_GENERATOR_MARK, GPUORCH_RELEASE,
		    gpuorch_report_id);
}

/* The generator line of a report's text ("" when it has none). */
static void generator_of(const char *text, size_t len, struct strbuf *out)
{
	const char *p = text, *end = text + len, *nl;
	size_t n = strlen(REPORT_GENERATOR_MARK);
	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if ((size_t)(nl - p) >= n && !memcmp(p, REPORT_GENERATOR_MARK, n)) {
			strbuf_add(out, p, (size_t)(nl - p));
			return;
		}
	}
}

int report_check_text(const cJSON *run, const char *text, size_t len, struct strbuf *why)
{
	struct strbuf md = STRBUF_INIT, had = STRBUF_INIT, now = STRBUF_INIT;
	size_t i, line = 1;
	int current;
	report_render(run, &md);
	current = md.len == len && !memcmp(md.buf, text, len);
	if (!current) {
		for (i = 0; i < md.len && i < len && md.buf[i] == text[i]; i++)
			if (text[i] == '\n')
				line++;
		generator_of(text, len, &had);
		generator_of(md.buf, md.len, &now);
		if (!had.len)
			strbuf_addf(why, "line %zu differs; written by a renderer that recorded no "
					 "version", line);
		else if (strcmp(had.buf, now.buf))
			strbuf_addf(why, "line %zu differs; written by %.*s", line,
				    (int)(had.len - strlen(REPORT_GENERATOR_MARK) - 4),
				    had.buf + strlen(REPORT_GENERATOR_MARK));
		else
			strbuf_addf(why, "line %zu differs (same renderer: edited by hand?)", line);
	}
	strbuf_release(&md);
	strbuf_release(&had);
	strbuf_release(&now);
	return current;
}

enum go_status report_write(const cJSON *run, const char *path, struct strbuf *err)
{
	struct strbuf md = STRBUF_INIT;
	enum go_status st;
	const char *slash = strrchr(path, '/');
	char *dir = slash ? xstrfmt("%.*s", (int)(slash - path), path) : xstrfmt(".");
	report_render(run, &md);
	/* the charts first: a report never links a chart that is not there */
	st = report_write_charts(run, dir, err);
	if (st == GO_OK)
		st = fs_write_atomic(path, md.buf, md.len, err);
	strbuf_release(&md);
	free(dir);
	return st;
}

void report_headline(const cJSON *run_in, struct strbuf *sb)
{
	struct rpt_ctx c;
	struct strbuf md = STRBUF_INIT;
	const cJSON *h, *s;
	int nh = 0, cnt[4];
	cJSON *judged = peaks_judged_copy(run_in);
	const cJSON *run = judged ? judged : run_in;

	ctx_init(&c, run, &md);
	if (c.run && !run_status_is(rr_str(c.run, "status"), RUN_COMPLETE))
		strbuf_addstr(sb, "INCOMPLETE: ");
	FOR_EACH_OBJ(h, c.hosts) {
		const cJSON *first = NULL, *impossible = NULL, *figs = NULL;
		struct counts k = { 0 };
		double v;
		if (nh++ >= 3) {
			strbuf_addf(sb, "; +%d more host%s", cJSON_GetArraySize(c.hosts) - 3,
				    cJSON_GetArraySize(c.hosts) - 3 == 1 ? "" : "s");
			break;
		}
		strbuf_addstr(sb, nh > 1 ? "; " : "");
		strbuf_addstr(sb, rpt_host_name(h));
		strbuf_addstr(sb, ": ");
		FOR_EACH_OBJ(s, rr_arr(h, "steps")) {
			rpt_count_status(&k, rr_str(s, "status"));
			if (!figs && rr_is_kind(s, STEP_BENCHMARK) &&
			    rr_obj(rr_result(s), "figures") && rr_obj(rr_result(s), "figures")->child)
				figs = s;   /* a program off the harness: its own figures */
			if (!rr_is_kind(s, STEP_BENCHMARK) || rpt_is_baseline(s) ||
			    !rr_num(rr_result(s), METRIC_MEDIAN_PATH, &v))
				continue;
			if (rr_true(rr_result(s), METRIC_IMPOSSIBLE_PATH) && !impossible)
				impossible = s;
		}
		first = rr_headline_step(c.run, h);
		if (!first)
			first = impossible;   /* reported, but as what it is */
		if (first) {
			const cJSON *res = rr_result(first);
			strbuf_addstr(sb, rr_str(first, "program") ? rr_str(first, "program") : "?");
			strbuf_addch(sb, ' ');
			strbuf_addstr(sb, rr_str(first, "problem") ? rr_str(first, "problem") : "?");
			strbuf_addstr(sb, " ");
			rr_num(res, METRIC_MEDIAN_PATH, &v);
			metric_fmt_us(sb, v);
			strbuf_addstr(sb, " us");
			if (rr_true(res, METRIC_IMPOSSIBLE_PATH)) {
				strbuf_addstr(sb, " IMPOSSIBLE (beats the physical bound)");
			} else if (rr_num(res, "model.tflops", &v) && v > 0) {
				strbuf_addstr(sb, ", ");
				metric_fmt_tflops(sb, v);
				strbuf_addstr(sb, " TFLOPS");
			}
			if (!rr_true(res, METRIC_IMPOSSIBLE_PATH)) {
				struct strbuf sp = STRBUF_INIT;
				if (rpt_add_speedup(&c, &sp, h, first, 0)) {
					strbuf_addstr(sb, ", ");
					strbuf_addstr(sb, sp.buf);
				}
				strbuf_release(&sp);
			}
			if (k.fail + k.timeout + k.killed + k.infra)
				strbuf_addf(sb, ", %d step%s did not pass", k.fail + k.timeout +
					    k.killed + k.infra,
					    k.fail + k.timeout + k.killed + k.infra == 1 ? "" : "s");
		} else if (figs) {
			const cJSON *f = rr_obj(rr_result(figs), "figures")->child;
			strbuf_addf(sb, "%s %s %s ", rr_str(figs, "program") ? rr_str(figs, "program") : "?",
				    rr_str(figs, "problem") ? rr_str(figs, "problem") : "?", f->string);
			if (rr_num(f, "value", &v))
				metric_fmt_g(sb, v);
			if (rr_str(f, "unit"))
				strbuf_addf(sb, " %s", rr_str(f, "unit"));
			strbuf_addstr(sb, ", ");
			rpt_add_counts(sb, &k, 0);
		} else if (!host_status_is(rr_str(h, "status"), HOST_OK) && rr_str(h, "error")) {
			strbuf_addstr(sb, rr_str(h, "status") ? rr_str(h, "status") : host_status_name(HOST_FAILED));
			strbuf_addstr(sb, " (");
			strbuf_add(sb, rr_str(h, "error"), strcspn(rr_str(h, "error"), "\n") > 80
				   ? 80 : strcspn(rr_str(h, "error"), "\n"));
			strbuf_addch(sb, ')');
		} else if (k.pass + k.fail + k.timeout + k.killed + k.infra + k.skipped + k.other) {
			rpt_add_counts(sb, &k, 0);
		} else {
			strbuf_addstr(sb, rr_str(h, "status") ? rr_str(h, "status") : "no result");
		}
	}
	if (!nh)
		strbuf_addstr(sb, c.run ? "no hosts" : "not a run record");
	rpt_count_verdicts(&c, NULL, cnt);
	if (cnt[V_MET] + cnt[V_MISSED])
		strbuf_addf(sb, " [expectations %d/%d met]", cnt[V_MET], cnt[V_MET] + cnt[V_MISSED]);
	strbuf_release(&md);
	ctx_release(&c);
	cJSON_Delete(judged);
}
