/* hostrun-steps.c -- a host's step phase, from the host runner's events: each
 * step's end (its output comes in the event), tool logs pulled back,
 * classified (hostrun_step_outcome, hostrun_step_record: the Slurm runner's
 * steps too) and recorded in plan order. */
#include "remote/hostrun-int.h"
#include "remote/gpuslots.h"
#include "remote/diskspace.h"
#include "core/jsonutil.h"
#include "store/runwrite.h"
#include "tools/ncu.h"
#include "remote/remote.h"
#include "tools/sanitizer.h"
#include "tools/output-figures.h"
#include "tools/ktrace.h"
#include "core/timeutil.h"
#include "store/peaks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/banned.h"

#define NCU_REP_CAP (64u << 20)     /* largest .ncu-rep pulled back */
#define TOOL_LOG_CAP (8u << 20)     /* ncu / compute-sanitizer logs, ncu CSV */
#define DOWNLOAD_TIMEOUT_MS 300000

/* ---------------------------------------------------------------- steps */

/* The program's JSON result: the last non-empty line of its stdout. */
static cJSON *parse_result(const struct strbuf *out)
{
	const char *end = out->buf + out->len, *bol;
	cJSON *j = NULL;
	struct strbuf err = STRBUF_INIT;
	while (end > out->buf && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		end--;
	bol = end;
	while (bol > out->buf && bol[-1] != '\n')
		bol--;
	if (end > bol && *bol == '{' &&
	    json_parse(bol, (size_t)(end - bol), "result", &j, &err) == GO_OK &&
	    !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		j = NULL;
	}
	strbuf_release(&err);
	return j;
}

/* The figure rules of a program off the harness, or NULL when it has none. */
static struct figure_rule *byo_rules(const struct spec_program *prog)
{
	struct figure_rule *rules;
	int i;
	if (!prog->run || !prog->nfigures)
		return NULL;
	rules = xcalloc((size_t)prog->nfigures + 1, sizeof(*rules));
	for (i = 0; i < prog->nfigures; i++) {
		rules[i].name = prog->figures[i].name;
		rules[i].regex = prog->figures[i].regex;
		rules[i].json = prog->figures[i].json;
		rules[i].unit = prog->figures[i].unit;
		rules[i].better = prog->figures[i].better;
		rules[i].name_regex = prog->figures[i].name_regex;
		rules[i].name_group = prog->figures[i].name_group;
	}
	return rules;
}

/* The result of a program off the harness (docs/byo.md): its exit status
 * is its verdict, its figures are read from its whole stdout as it came
 * (scan, NULL when it declares none); a benchmark step fails when a figure
 * is not found. Output the scan did not see is said in output_cut. */
static cJSON *byo_result(const struct plan_step *ps, const struct remote_status *rs,
			 struct figure_scan *scan)
{
	const struct spec_program *prog = ps->step->prog;
	struct strbuf missing = STRBUF_INIT;
	cJSON *r = cJSON_CreateObject(), *figs, *it, *c;
	int ok = rs->end == REMOTE_EXITED && rs->exit_code == 0;
	uint64_t dropped = 0;

	figs = scan ? figures_scan_finish(scan, &missing) : cJSON_CreateObject();
	json_add_num(r, "schema", 1);
	json_add_str(r, "program", prog->name);
	json_add_str(r, "mode", ps->step->kind == STEP_CORRECTNESS && prog->check ? "check" : "run");
	json_add_str(r, "problem", ps->problem->name);
	if (ok && missing.len && ps->step->kind == STEP_BENCHMARK) {
		char *why = xstrfmt("figures not found in the output: %s", missing.buf);
		json_add_str(r, "status", "fail");
		json_add_str(r, "reason", why);
		free(why);
	} else {
		json_add_str(r, "status", ok ? "pass" : "fail");
		cJSON_AddNullToObject(r, "reason");
	}
	if (missing.len)
		json_add_str(r, "figures_missing", missing.buf);
	if (scan && figures_scan_cut(scan, &dropped)) {
		cJSON *cut = json_add_obj(r, "output_cut");
		if (dropped)
			json_add_num(cut, "dropped_bytes", (double)dropped);
		else
			cJSON_AddNullToObject(cut, "dropped_bytes");
		json_add_str(cut, "note", "part of stdout was not read for figures (over "
					  "GPUORCH_OUTPUT_SCAN_MIB, or not fetched): a figure "
					  "marked truncated may not be its last matching line");
	}
	c = json_add_obj(r, "correctness");
	json_add_bool(c, "pass", ok);
	json_add_str(c, "verdict", "the program's exit status (0 = pass)");
	cJSON_ArrayForEach(it, figs)
		json_add_num(r, it->string, json_num(it, "value", 0));
	cJSON_AddItemToObject(r, "figures", figs);
	strbuf_release(&missing);
	return r;
}

/* Every result's figures against the physical peaks of the GPU it ran on
 * (store/peaks.h): the device the program printed, else the host's probe.
 * An impossible figure fails the step, whatever program printed it. */
static enum item_status judge_peaks(struct hostrun *hr, const struct plan_step *ps,
				     enum item_status status, cJSON *result,
				     struct strbuf *reason)
{
	struct gpu_props p;
	struct gpu_peaks pk;
	struct strbuf why = STRBUF_INIT;
	cJSON *info;
	if (!cJSON_IsObject(result) || (!cJSON_GetObjectItemCaseSensitive(result, "model") &&
					!cJSON_GetObjectItemCaseSensitive(result, "figures") &&
					!ps->step->nwork))
		return status;
	info = hr->have_info ? probe_to_json(&hr->info) : NULL;
	if (peaks_props(cJSON_GetObjectItemCaseSensitive(result, "device"), info, &p)) {
		peaks_compute(&p, &pk);
		if (peaks_judge(result, &pk, ps->step->prog->datatype, &why) && status == ST_PASS) {
			strbuf_reset(reason);
			strbuf_addstr(reason, why.buf);
			status = ST_FAIL;
		} else if (why.len) {
			strbuf_addstr(reason, reason->len ? "; " : "");
			strbuf_addstr(reason, why.buf);
		}
	}
	cJSON_Delete(info);
	strbuf_release(&why);
	return status;
}

static enum item_status classify(struct hostrun *hr, const struct remote_status *rs,
				 const cJSON *result, int lock_wait_s, struct strbuf *reason)
{
	enum item_status st = hr_end_status(hr, rs, lock_wait_s, reason);
	const char *rstatus, *rreason;
	if (st != ST_PASS)
		return st;
	if (!result) {
		strbuf_addstr(reason, "the program printed no JSON result on its last line "
				      "(docs/result-contract.md)");
		return ST_FAIL;
	}
	rstatus = json_str(result, "status");
	rreason = json_str(result, "reason");
	if (rreason)
		strbuf_addstr(reason, rreason);
	if (rstatus && !strcmp(rstatus, "pass"))
		return ST_PASS;
	if (rstatus && !strcmp(rstatus, "skipped"))
		return ST_SKIPPED;
	if (!reason->len)
		strbuf_addf(reason, "the program reported status \"%s\"",
			    rstatus ? rstatus : "(missing)");
	return ST_FAIL;
}

/* The tool settings of a profile or sanitize step, for its record. */
static cJSON *tool_json(struct hostrun *hr, const struct plan_step *ps)
{
	const struct spec_step *st = ps->step;
	cJSON *t = cJSON_CreateObject(), *m;
	int i;
	if (st->kind == STEP_PROFILE) {
		json_add_str(t, "name", "ncu");
		json_add_str(t, "path", hr->info.ncu.path);
		json_add_str(t, "version", hr->info.ncu.version);
		json_add_str(t, "kernel_regex", st->kernel);
		json_add_num(t, "launch_skip", st->launch_skip);
		json_add_num(t, "launch_count", st->launch_count);
		json_add_str(t, "clock_control", st->clock_control);
		json_add_str(t, "cache_control", st->cache_control);
		json_add_str(t, "program_mode", st->mode);
		m = json_add_arr(t, "metrics");
		for (i = 0; st->metrics[i]; i++)
			cJSON_AddItemToArray(m, cJSON_CreateString(st->metrics[i]));
	} else {
		json_add_str(t, "name", "compute-sanitizer");
		json_add_str(t, "path", hr->info.sanitizer.path);
		json_add_str(t, "version", hr->info.sanitizer.version);
		json_add_str(t, "tool", ps->tool);
		json_add_num(t, "print_limit", st->print_limit);
		json_add_num(t, "error_exitcode", 99);
	}
	return t;
}

/* t_start, t_end: the step's span on the host's clock (unix s), 0 when it
 * did not run. */
void hostrun_step_record(struct hostrun *hr, const struct plan_step *ps, enum item_status status,
			 const char *reason, const struct remote_status *rs, double t_start,
			 double t_end, const char *out_rel, const char *err_rel, cJSON *result,
			 cJSON *files, cJSON *slurm, int pos)
{
	const struct spec_variant *v = ps->variant;
	int slot = hr->step_slot ? hr->step_slot[ps - hr->plan.steps] : -1, i;
	struct runw_step s = {
		.id = ps->id, .kind = ps->step->kind, .program = ps->step->prog->name,
		.problem = ps->problem->name, .mode = ps->mode, .tool = ps->tool,
		.variant = v ? v->label : NULL, .arch = ps->arch, .baseline = ps->step->is_baseline,
		.status = status, .reason = reason,
		.exited = rs && rs->end == REMOTE_EXITED, .exit_code = rs ? rs->exit_code : 0,
		.signaled = rs && rs->end == REMOTE_SIGNALED, .signal = rs ? rs->signal : 0,
		.t_start = t_start, .t_end = t_end, .ran_from = hr->ran_from, .ran_to = hr->ran_to,
		.timeout_s = ps->step->timeout_s, .command = ps->command, .stdout_log = out_rel,
		.stderr_log = err_rel, .result = result, .files = files, .slurm = slurm,
	};
	struct runw_define *d = v ? xcalloc((size_t)v->ndefines + 1, sizeof(*d)) : NULL;

	for (i = 0; v && i < v->ndefines; i++) {
		d[i].key = v->defines[i].key;
		d[i].value = v->defines[i].value;
	}
	s.defines = d;
	s.ndefines = v ? v->ndefines : 0;
	if (ps->step->kind == STEP_PROFILE || ps->step->kind == STEP_SANITIZE)
		s.tool_settings = tool_json(hr, ps);
	if (slot >= 0)
		s.gpus = gpuslots_json(hr->slots, slot, ps->step->gpus > 0 ? ps->step->gpus : 1);
	hr->ran_from = hr->ran_to = 0;
	if (pos < 0)
		runw_step_end(hr->ctx->rec, hr->index, &s);
	else
		runw_step_end_at(hr->ctx->rec, hr->index, pos, &s);
	free(d);
}

/* Record step ps in the host's entry (plan order: the steps before it are
 * in) and say how it went. */
static void record_step(struct hostrun *hr, const struct plan_step *ps, enum item_status status,
			const char *reason, const struct remote_status *rs, double t_start,
			double t_end, const char *out_rel, const char *err_rel, cJSON *result,
			cJSON *files)
{
	hostrun_step_record(hr, ps, status, reason, rs, t_start, t_end, out_rel, err_rel, result,
			    files, NULL, -1);
	hostrun_save(hr);
	strbuf_addf(&hr->out, "  %s: %s%s%s\n", ps->id, item_status_name(status),
		    reason && *reason ? ": " : "", reason && *reason ? reason : "");
	if (status != ST_PASS && status != ST_SKIPPED)
		hr->nfailed_steps++;
}

static void prefix(struct strbuf *sb, const char *p)
{
	char *old = strbuf_detach(sb, NULL);
	strbuf_addstr(sb, p);
	strbuf_addstr(sb, old);
	free(old);
}

/* Pull a remote file back into the run directory as rel; its path goes
 * into files[key]. Returns 1 when it came back; data keeps the bytes. */
static int pull_file_kept(struct hostrun *hr, const char *remote, size_t cap, size_t keep,
			  const char *rel, const char *key, cJSON *files, struct strbuf *data,
			  struct strbuf *note);

static int pull_file(struct hostrun *hr, const char *remote, size_t cap, const char *rel,
		     const char *key, cJSON *files, struct strbuf *data, struct strbuf *note)
{
	return pull_file_kept(hr, remote, cap, cap, rel, key, files, data, note);
}

/* The same, keeping the file beside the run only when it is at most `keep`
 * bytes (data has it whole either way); a larger one is named with its
 * size and where it stays on the host: files[key] = "host:PATH (N bytes)". */
static int pull_file_kept(struct hostrun *hr, const char *remote, size_t cap, size_t keep,
			  const char *rel, const char *key, cJSON *files, struct strbuf *data,
			  struct strbuf *note)
{
	struct strbuf err = STRBUF_INIT;
	enum go_status st;
	strbuf_reset(data);
	if (!hr->conn) {
		if (note)
			strbuf_addf(note, "%s not fetched: no connection to the host; ", key);
		return 0;
	}
	st = ssh_download(hr->conn, remote, data, cap, DOWNLOAD_TIMEOUT_MS, &err);
	if (st != GO_OK) {
		if (note)
			strbuf_addf(note, "%s not fetched: %s; ", key, err.buf);
		strbuf_release(&err);
		return 0;
	}
	if (data->len <= keep) {
		hostrun_add_log(hr, rel, data->buf, data->len);
		json_add_str(files, key, rel);
	} else {
		char *where = xstrfmt("host:%s (%zu bytes, over the %zu kept in the run)", remote,
				      data->len, keep);
		json_add_str(files, key, where);
		free(where);
	}
	strbuf_release(&err);
	return 1;
}

/* A profile step ended: fetch ncu's log, CSV and report; parse the CSV into
 * result.profile. A metric that is missing, n/a or NaN fails the step. */
static enum item_status finish_profile(struct hostrun *hr, const struct plan_step *ps,
				       const struct remote_status *rs, enum item_status status,
				  struct strbuf *reason, cJSON *result, cJSON *files,
				  const struct strbuf *errout)
{
	struct strbuf log = STRBUF_INIT, csv = STRBUF_INIT, rep = STRBUF_INIT;
	struct strbuf err = STRBUF_INIT, note = STRBUF_INIT, why = STRBUF_INIT;
	char *rel;
	cJSON *profile = NULL;
	enum go_status st;
	int have_csv;

	rel = hostrun_log_rel(hr, ps->id, "ncu.log");
	pull_file(hr, ps->tool_log, TOOL_LOG_CAP, rel, "tool_log", files, &log, NULL);
	free(rel);
	rel = hostrun_log_rel(hr, ps->id, "ncu.csv");
	have_csv = pull_file(hr, ps->profile_csv, TOOL_LOG_CAP, rel, "profile_csv", files, &csv,
			     NULL);
	free(rel);
	rel = hostrun_log_rel(hr, ps->id, "ncu-rep");
	pull_file(hr, ps->profile_rep, NCU_REP_CAP, rel, "profile_report", files, &rep, &note);
	free(rel);
	strbuf_release(&rep);

	st = ncu_parse_csv(csv.buf, have_csv ? csv.len : 0, ps->step->metrics, &profile, &err);
	cJSON_DeleteItemFromObject(result, "profile");
	cJSON_AddItemToObject(result, "profile", profile);
	if (note.len)
		json_add_str(profile, "note", note.buf);
	if (!ncu_diagnose(log.buf, log.len, &why))
		ncu_diagnose(errout->buf, errout->len, &why);
	if (status != ST_PASS && status != ST_FAIL) {
		/* TIMEOUT, KILLED, INFRA_ERROR, SKIPPED: keep what classify() said */
	} else if (st != GO_OK) {
		strbuf_reset(reason);
		strbuf_addf(reason, "profile: %s", why.len ? why.buf : err.buf);
		if (why.len && rs->end == REMOTE_EXITED && rs->exit_code)
			strbuf_addf(reason, " (ncu exit code %d)", rs->exit_code);
		status = ST_FAIL;
	} else if (status == ST_FAIL) {
		prefix(reason, "profiled, but the program failed: ");
	}
	strbuf_release(&log);
	strbuf_release(&csv);
	strbuf_release(&err);
	strbuf_release(&note);
	strbuf_release(&why);
	return status;
}

/* A sanitize step ended: fetch the sanitizer's log and count its errors.
 * Any error fails the step (the program's exit status is 99 then). */
static enum item_status finish_sanitize(struct hostrun *hr, const struct plan_step *ps,
					const struct remote_status *rs, enum item_status status,
				   struct strbuf *reason, cJSON *result, cJSON *files)
{
	struct strbuf log = STRBUF_INIT, err = STRBUF_INIT, d = STRBUF_INIT;
	char *rel = hostrun_log_rel(hr, ps->id, "sanitizer.log");
	cJSON *san = NULL;
	enum go_status st;
	int have = pull_file(hr, ps->tool_log, TOOL_LOG_CAP, rel, "tool_log", files, &log, NULL);

	free(rel);
	st = sanitizer_parse(log.buf, have ? log.len : 0, ps->tool, &san, &err);
	cJSON_DeleteItemFromObject(result, "sanitizer");
	cJSON_AddItemToObject(result, "sanitizer", san);
	sanitizer_describe(san, &d);
	if (status != ST_PASS && status != ST_FAIL) {
		/* TIMEOUT, KILLED, INFRA_ERROR: keep what classify() said */
	} else if (st != GO_OK) {
		strbuf_reset(reason);
		strbuf_addf(reason, "%s: %s", ps->tool, err.buf);
		status = ST_FAIL;
	} else if (json_num(san, "errors", 0) > 0 ||
		   (rs->end == REMOTE_EXITED && rs->exit_code == 99)) {
		strbuf_reset(reason);
		strbuf_add(reason, d.buf, d.len);
		status = ST_FAIL;
	} else if (status == ST_FAIL) {
		prefix(reason, "no sanitizer errors, but the program failed: ");
	}
	strbuf_release(&log);
	strbuf_release(&err);
	strbuf_release(&d);
	return status;
}

/* The work the step declares for kernel KEY (its "work"), into the
 * kernel's figure object f: judge_peaks holds its times to it. */
static void add_work(const struct spec_step *st, const char *key, cJSON *f)
{
	int i;
	for (i = 0; key && i < st->nwork; i++) {
		if (strcmp(st->work[i].key, key))
			continue;
		if (st->work[i].flops > 0)
			json_add_num(f, "flops", st->work[i].flops);
		if (st->work[i].bytes > 0)
			json_add_num(f, "bytes", st->work[i].bytes);
	}
}

/* A declared work whose key no kernel of the trace has (a typo, or a key
 * that changed) would hold nothing to the peaks: the step fails, naming the
 * keys the trace has. */
static enum item_status work_keys_found(const struct spec_step *st, const cJSON *sum,
					enum item_status status, struct strbuf *reason)
{
	struct strbuf keys = STRBUF_INIT, missing = STRBUF_INIT;
	const cJSON *k;
	int i, n = 0;
	for (i = 0; i < st->nwork; i++) {
		int found = 0;
		cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(sum, "kernels"))
			found |= !strcmp(json_str(k, "key"), st->work[i].key);
		if (!found) {
			strbuf_addf(&missing, "%s'%s'", n ? ", " : "", st->work[i].key);
			n++;
		}
	}
	if (n) {
		cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(sum, "kernels"))
			strbuf_addf(&keys, "%s%s", keys.len ? ", " : "", json_str(k, "key"));
		if (status == ST_PASS)
			strbuf_reset(reason);
		else if (reason->len)
			strbuf_addstr(reason, "; ");
		strbuf_addf(reason, "the step's work names %s kernel%s %s, which the trace has not "
				    "(its kernels: %s): fix the key in \"work\" (docs/byo.md)",
			    n == 1 ? "a" : "the", n == 1 ? "" : "s", missing.buf,
			    keys.len ? keys.buf : "none");
		status = ST_FAIL;
	}
	strbuf_release(&keys);
	strbuf_release(&missing);
	return status;
}

#define KTRACE_CAP (64u << 20)   /* one run's kernel trace (~200 bytes a launch) */
#define KTRACE_KEEP (1u << 20)   /* kept beside the run; run.json has the summary */

/* A kernel_timing step ended: fetch each run's trace, summarize them
 * together (tools/ktrace.c) into result.kernel_timing, and give every kernel
 * a figure object result["kernel:KEY"] {median_us, min_us, max_us,
 * launches and total_us per run, share_pct} that gates, expectations,
 * compare and history read as "kernel:KEY.median_us" (docs/byo.md). */
static enum item_status finish_ktrace(struct hostrun *hr, const struct plan_step *ps,
				      const struct remote_status *rs, enum item_status status,
				 struct strbuf *reason, cJSON *result, cJSON *files,
				 const struct strbuf *errout)
{
	struct strbuf all = STRBUF_INIT, one = STRBUF_INIT, note = STRBUF_INIT, err = STRBUF_INIT;
	const cJSON *k;
	cJSON *sum = NULL;
	int i, got = 0, runs = ps->step->repeat;

	if (rs->end == REMOTE_EXITED && rs->exit_code == 97) {
		/* the library's build failed (no CUPTI): its log says why */
		strbuf_reset(reason);
		strbuf_addstr(reason, "the CUPTI injection library could not be built on this host "
				      "(see the build of gpuorch_ktrace: CUPTI ships with the CUDA "
				      "Toolkit, in extras/CUPTI)");
		(void)errout;
		return ST_SKIPPED;
	}
	for (i = 1; i <= runs; i++) {
		char *remote = xstrfmt("%s.%d.jsonl", ps->tool_log, i);
		char *ext = xstrfmt("ktrace.%d.jsonl", i), *rel = hostrun_log_rel(hr, ps->id, ext);
		char *key = xstrfmt("ktrace_%d", i);
		if (pull_file_kept(hr, remote, KTRACE_CAP, KTRACE_KEEP, rel, key, files, &one, &note)) {
			strbuf_add(&all, one.buf, one.len);
			if (one.len && one.buf[one.len - 1] != '\n')
				strbuf_addch(&all, '\n');
			got++;
		}
		free(remote);
		free(ext);
		free(rel);
		free(key);
	}
	if (!got) {
		if (status == ST_PASS) {
			strbuf_reset(reason);
			strbuf_addf(reason, "no kernel trace came back (%s): did the program use the "
				    "GPU through the CUDA runtime or driver?", note.len ? note.buf : "none written");
			status = ST_FAIL;
		}
		goto out;
	}
	if (ktrace_summarize(all.buf, all.len, &sum, &err) != GO_OK) {
		strbuf_reset(reason);
		strbuf_addf(reason, "kernel trace: %s", err.buf);
		status = ST_FAIL;
		goto out;
	}
	json_add_num(sum, "repeat", runs);
	cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(sum, "kernels")) {
		char *name = xstrfmt("kernel:%s", json_str(k, "key"));
		cJSON *f = cJSON_CreateObject();
		json_add_num(f, "median_us", json_num(k, "median_us", 0));
		json_add_num(f, "min_us", json_num(k, "min_us", 0));
		json_add_num(f, "max_us", json_num(k, "max_us", 0));
		json_add_num(f, "launches", json_num(k, "launches", 0) / got);
		json_add_num(f, "total_us", json_num(k, "total_us", 0) / got);
		json_add_num(f, "share_pct", json_num(k, "share_pct", 0));
		add_work(ps->step, json_str(k, "key"), f);
		cJSON_AddItemToObject(result, name, f);
		free(name);
	}
	status = work_keys_found(ps->step, sum, status, reason);
	if (json_num(sum, "launches", 0) == 0 && status == ST_PASS) {
		strbuf_reset(reason);
		strbuf_addstr(reason, "the program ran, but CUPTI recorded no kernel launch");
		status = ST_FAIL;
	} else if (json_num(sum, "dropped", 0) > 0 || !cJSON_IsTrue(cJSON_GetObjectItem(sum, "complete"))) {
		if (reason->len)
			strbuf_addstr(reason, "; ");
		strbuf_addf(reason, "trace %s%s%.0f CUPTI records dropped",
			    cJSON_IsTrue(cJSON_GetObjectItem(sum, "complete")) ? "" : "cut short (a run "
			    "ended before the library wrote its end line); ",
			    "", json_num(sum, "dropped", 0));
	}
	if (got < runs) {
		if (reason->len)
			strbuf_addstr(reason, "; ");
		strbuf_addf(reason, "%d of %d traces came back (%s)", got, runs, note.buf);
	}
	cJSON_AddItemToObject(result, "kernel_timing", sum);
out:
	strbuf_release(&all);
	strbuf_release(&one);
	strbuf_release(&note);
	strbuf_release(&err);
	return status;
}

int hr_step_runs(const struct hostrun *hr, int i, char **why)
{
	const struct plan_step *ps = &hr->plan.steps[i];
	*why = NULL;
	if (ps->skip_reason) {
		*why = xstrdup(ps->skip_reason);
		return 0;
	}
	if (ps->build && ps->build->skip_reason) {
		*why = xstrfmt("the build of '%s' for %s did not pass", ps->build->prog->name,
			       ps->build->arch);
		return 0;
	}
	return 1;
}

/* The steps before `upto` that have no record yet: plan skips with their
 * reason; steps given to the runner with no end: the one in progress is
 * why_current (INFRA_ERROR), the others why_rest (SKIPPED). */
static void flush_upto(struct hostrun *hr, int upto, const char *why_current,
		       const char *why_rest)
{
	hostrun_hold_saves(hr);   /* every unrun step in one journal line */
	for (; hr->next_step < upto; hr->next_step++) {
		int i = hr->next_step;
		const struct plan_step *ps = &hr->plan.steps[i];
		char *why;
		if (!hr_step_runs(hr, i, &why))
			record_step(hr, ps, ST_SKIPPED, why, NULL, 0, 0, NULL, NULL, NULL, NULL);
		else if (i == hr->cur_step)
			record_step(hr, ps, ST_INFRA_ERROR, why_current, NULL, hr->cur_started_t,
				    hr->cur_started_t, NULL, NULL, NULL, NULL);
		else
			record_step(hr, ps, ST_SKIPPED, why_rest, NULL, 0, 0, NULL, NULL, NULL, NULL);
		free(why);
	}
	hostrun_release_saves(hr);
}

void hr_steps_flush(struct hostrun *hr, const char *why_current, const char *why_rest)
{
	if (hr->have_plan)
		flush_upto(hr, hr->plan.nsteps, why_current, why_rest);
}

/* The bytes of a step's stdout streamed from the host: all of them go to
 * the figure scan; its first and last OUTPUT_CAP/2 are kept for the log and
 * the result (remote_fetch_kept's shape). */
struct out_keep {
	struct figure_scan *scan;
	struct strbuf head, tail;
	size_t half;
	uint64_t size, seen;
};

static void keep_size(uint64_t size, void *ctx)
{
	((struct out_keep *)ctx)->size = size;
}

static void keep_data(const char *data, size_t len, void *ctx)
{
	struct out_keep *k = ctx;
	if (k->scan)
		figures_scan_feed(k->scan, data, len);
	k->seen += len;
	if (k->head.len < k->half) {
		size_t n = k->half - k->head.len < len ? k->half - k->head.len : len;
		strbuf_add(&k->head, data, n);
		data += n;
		len -= n;
	}
	strbuf_add(&k->tail, data, len);
	if (k->tail.len > 2 * k->half) {
		memmove(k->tail.buf, k->tail.buf + k->tail.len - k->half, k->half);
		strbuf_setlen(&k->tail, k->half);
	}
}

static void keep_gap(uint64_t dropped, void *ctx)
{
	struct out_keep *k = ctx;
	if (k->scan)
		figures_scan_gap(k->scan, dropped);
}

/* The output of GPUORCH_OUTPUT_SCAN_MIB (16..1048576, default 1024) MiB
 * that figures are read from: over it, the middle is not read. */
static uint64_t scan_cap(void)
{
	const char *v = getenv("GPUORCH_OUTPUT_SCAN_MIB");
	char *end = NULL;
	long long mib = v && *v ? strtoll(v, &end, 10) : 0;
	if (!v || !*v || *end || mib < (long long)(OUTPUT_CAP >> 20) || mib > (1LL << 20))
		mib = 1024;
	return (uint64_t)mib << 20;
}

/* The whole stdout, through the scan, kept as head and tail in text. */
static enum go_status fetch_scanned(struct hostrun *hr, const char *path,
				    struct figure_scan *scan, struct strbuf *text,
				    struct strbuf *err)
{
	struct out_keep k;
	struct remote_stream_sink sink = { keep_size, keep_data, keep_gap, &k };
	enum go_status st;
	memset(&k, 0, sizeof(k));
	k.scan = scan;
	k.half = OUTPUT_CAP / 2;
	strbuf_init(&k.head, 0);
	strbuf_init(&k.tail, 0);
	st = remote_fetch_stream(hr->conn, path, scan_cap(), DOWNLOAD_TIMEOUT_MS, &sink, err);
	if (st == GO_OK) {
		strbuf_add(text, k.head.buf, k.head.len);
		if (k.size <= OUTPUT_CAP) {
			strbuf_add(text, k.tail.buf, k.tail.len);
		} else {
			size_t t = k.tail.len > k.half ? k.half : k.tail.len;
			remote_dropped_line(text, k.size - 2 * (uint64_t)k.half, k.size, k.half);
			strbuf_add(text, k.tail.buf + k.tail.len - t, t);
		}
	}
	strbuf_release(&k.head);
	strbuf_release(&k.tail);
	return st;
}

/* A step's stdout or stderr: the event's text, or the file pulled back when
 * the event's copy was cut at the runner's text_cap (over OUTPUT_CAP: its
 * head and its tail, so the program's last line, its result, is read).
 * Given a figure scan (*scan), all of stdout goes through it as it comes,
 * with what it could not see said as a gap. */
static void step_text(struct hostrun *hr, const struct plan_step *ps, const cJSON *ev,
		      const char *name, struct strbuf *text, struct strbuf *note,
		      struct figure_scan **scan, const struct figure_rule *rules)
{
	char key[32];
	const char *t;
	int cut;
	snprintf(key, sizeof(key), "%s_truncated", name);
	cut = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ev, key));
	if (cut && hr->conn) {
		struct strbuf err = STRBUF_INIT;
		char *path = xstrfmt("%s/%s", ps->dir, name);
		int64_t f0 = time_mono_ms();
		enum go_status st = scan && *scan
				    ? fetch_scanned(hr, path, *scan, text, &err)
				    : remote_fetch_kept(hr->conn, path, OUTPUT_CAP, DOWNLOAD_TIMEOUT_MS,
							text, &err);
		if (st == GO_OK) {
			hr->fetch_s += hr_secs_since(f0);
			free(path);
			strbuf_release(&err);
			return;
		}
		strbuf_reset(text);
		strbuf_addf(note, "(whole %s not fetched: %s) ", name, err.buf);
		hr->fetch_s += hr_secs_since(f0);
		free(path);
		strbuf_release(&err);
		if (scan && *scan) {
			/* start again on the event's copy */
			figures_scan_free(*scan);
			*scan = figures_scan_new(rules, ps->step->prog->nfigures);
		}
	}
	snprintf(key, sizeof(key), "%s_text", name);
	t = hr_ev_str(ev, key);
	if (t)
		strbuf_addstr(text, t);
	if (scan && *scan) {
		figures_scan_feed(*scan, text->buf, text->len);
		if (cut)
			figures_scan_gap(*scan, 0);   /* the rest is on the host, unread */
	}
}

enum item_status hostrun_step_outcome(struct hostrun *hr, const struct plan_step *ps,
				      const cJSON *ev, enum item_status status_in,
				      struct remote_status *rs, struct strbuf *reason,
				      cJSON **result, cJSON **files, char **out_rel,
				      char **err_rel)
{
	struct strbuf out = STRBUF_INIT, errout = STRBUF_INIT;
	enum item_status status;
	struct figure_rule *rules = byo_rules(ps->step->prog);
	struct figure_scan *scan = rules ? figures_scan_new(rules, ps->step->prog->nfigures) : NULL;

	*result = *files = NULL;
	remote_end_from_event(ev, rs);
	step_text(hr, ps, ev, "stdout", &out, reason, &scan, rules);
	step_text(hr, ps, ev, "stderr", &errout, reason, NULL, NULL);
	*out_rel = hostrun_log_rel(hr, ps->id, "stdout");
	*err_rel = hostrun_log_rel(hr, ps->id, "stderr");
	hostrun_add_log(hr, *out_rel, out.buf, out.len);
	hostrun_add_log(hr, *err_rel, errout.buf, errout.len);
	hr->ran_from = json_num(ev, "t_run", 0);
	hr->ran_to = json_num(ev, "t_end", 0);
	if (!(hr->ran_from > 0 && hr->ran_to >= hr->ran_from))
		hr->ran_from = hr->ran_to = 0;
	if (status_in != ST_NONE) {
		status = status_in;
		goto out;
	}
	if (ps->step->kind == STEP_KERNEL_TIMING) {
		/* the verdict is the program's exit status; the figures are the traces' */
		int64_t f0 = time_mono_ms();
		*result = cJSON_CreateObject();
		*files = cJSON_CreateObject();
		status = hr_end_status(hr, rs, hr->ctx->lock_wait_s, reason);
		status = finish_ktrace(hr, ps, rs, status, reason, *result, *files, &errout);
		status = judge_peaks(hr, ps, status, *result, reason);
		hr->fetch_s += hr_secs_since(f0);
		goto out;
	}
	*result = parse_result(&out);
	if (ps->step->prog->run) {
		cJSON_Delete(*result);
		*result = byo_result(ps, rs, scan);
	}
	status = classify(hr, rs, *result, hr->ctx->lock_wait_s, reason);
	status = judge_peaks(hr, ps, status, *result, reason);
	if (ps->step->kind == STEP_PROFILE || ps->step->kind == STEP_SANITIZE) {
		int64_t f0 = time_mono_ms();
		*files = cJSON_CreateObject();
		if (!*result)
			*result = cJSON_CreateObject();
		status = ps->step->kind == STEP_PROFILE
			 ? finish_profile(hr, ps, rs, status, reason, *result, *files, &errout)
			 : finish_sanitize(hr, ps, rs, status, reason, *result, *files);
		hr->fetch_s += hr_secs_since(f0);
	}
out:
	if (status_in == ST_NONE && status != ST_PASS)
		disk_full_reason(reason, errout.buf, out.buf,   /* the cause, not its symptom */
				 (long long)json_num(ev, "disk_free_kib", -1));
	figures_scan_free(scan);
	free(rules);
	strbuf_release(&out);
	strbuf_release(&errout);
	return status;
}

void hr_step_ended(struct hostrun *hr, int i, const struct journal_event *e)
{
	const struct plan_step *ps = &hr->plan.steps[i];
	struct strbuf reason = STRBUF_INIT;
	struct remote_status rs;
	char *out_rel, *err_rel;
	enum item_status status;
	double t_start = hr->cur_step == i ? hr->cur_started_t : 0;
	cJSON *result, *files;

	if (i < hr->next_step)
		return;   /* recorded already */
	flush_upto(hr, i, "no end in the host runner's journal", "not run by the host runner");
	hr->next_step = i + 1;
	if (!strcmp(e->ev, "step_skipped")) {
		char *why = xstrfmt("the build of '%s' for %s did not pass",
				    ps->build ? ps->build->prog->name : "?",
				    ps->build ? ps->build->arch : "?");
		record_step(hr, ps, ST_SKIPPED, why, NULL, 0, 0, NULL, NULL, NULL, NULL);
		free(why);
		return;
	}
	status = hostrun_step_outcome(hr, ps, e->json, ST_NONE, &rs, &reason, &result, &files,
				      &out_rel, &err_rel);
	if (t_start <= 0)
		t_start = hr->ran_from > 0 ? hr->ran_from : e->t;
	record_step(hr, ps, status, reason.buf, &rs, t_start, e->t, out_rel, err_rel, result,
		    files);
	if (hr->cur_step == i)
		hr->cur_step = -1;
	free(out_rel);
	free(err_rel);
	strbuf_release(&reason);
}

void hr_run_done(struct hostrun *hr, int64_t t0, enum item_status status_override,
		 const char *detail)
{
	hostrun_phase(hr, "run", status_override != ST_NONE ? status_override
		      : hr->nfailed_steps > hr->nfailed_before_run ? ST_FAIL : ST_PASS, t0, detail);
	/* fetch: pulling outputs and tool files back, timed separately */
	runw_host_phase(hr->ctx->rec, hr->index, "fetch", ST_PASS, hr->fetch_s,
			"step outputs come in the runner's journal; tool files and "
			"outputs past its text cap pulled back over SFTP");
}

void hr_skip_all(struct hostrun *hr, const char *why)
{
	int i;
	if (!hr->have_plan)
		return;
	hostrun_hold_saves(hr);   /* one journal line */
	for (i = hr->next_step; i < hr->plan.nsteps; i++)
		record_step(hr, &hr->plan.steps[i], ST_SKIPPED, why, NULL, 0, 0, NULL, NULL, NULL, NULL);
	hr->next_step = hr->plan.nsteps;
	hostrun_release_saves(hr);
}
