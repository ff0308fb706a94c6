/* hostrun-steps.c -- a host's step phase: run each step, pull its output and tool
 * logs back, classify and record it. */
#include "remote/hostrun-int.h"
#include "core/jsonutil.h"
#include "tools/ncu.h"
#include "remote/remote.h"
#include "tools/sanitizer.h"
#include "tools/figures.h"
#include "core/timeutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/banned.h"

#define NCU_REP_CAP (64u << 20)     /* largest .ncu-rep pulled back */
#define TOOL_LOG_CAP (8u << 20)     /* ncu / compute-sanitizer logs, ncu CSV */
#define DOWNLOAD_TIMEOUT_MS 300000

/* ---------------------------------------------------------------- steps */

static int build_index(const struct plan *p, const struct plan_build *b)
{
	return b ? (int)(b - p->builds) : -1;
}

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

/* The result of a program off the harness (docs/byo.md): its exit status
 * is its verdict, its figures are read from its stdout; a benchmark step
 * fails when a figure is not found. */
static cJSON *byo_result(const struct plan_step *ps, const struct remote_status *rs,
			 const struct strbuf *out)
{
	const struct spec_program *prog = ps->step->prog;
	struct figure_rule *rules = xcalloc((size_t)prog->nfigures + 1, sizeof(*rules));
	struct strbuf missing = STRBUF_INIT;
	cJSON *r = cJSON_CreateObject(), *figs, *it, *c;
	int i, ok = rs->end == REMOTE_EXITED && rs->exit_code == 0;

	for (i = 0; i < prog->nfigures; i++) {
		rules[i].name = prog->figures[i].name;
		rules[i].regex = prog->figures[i].regex;
		rules[i].json = prog->figures[i].json;
		rules[i].unit = prog->figures[i].unit;
		rules[i].better = prog->figures[i].better;
	}
	figs = figures_read(rules, prog->nfigures, out->buf ? out->buf : "", out->len, &missing);
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
	c = json_add_obj(r, "correctness");
	json_add_bool(c, "pass", ok);
	json_add_str(c, "verdict", "the program's exit status (0 = pass)");
	cJSON_ArrayForEach(it, figs)
		json_add_num(r, it->string, json_num(it, "value", 0));
	cJSON_AddItemToObject(r, "figures", figs);
	strbuf_release(&missing);
	free(rules);
	return r;
}

static const char *classify(const struct remote_status *rs, const cJSON *result,
			    int lock_wait_s, struct strbuf *reason)
{
	const char *st = hr_end_status(rs, lock_wait_s, reason);
	const char *rstatus, *rreason;
	if (strcmp(st, "PASS"))
		return st;
	if (!result) {
		strbuf_addstr(reason, "the program printed no JSON result on its last line "
				      "(docs/result-contract.md)");
		return "FAIL";
	}
	rstatus = json_str(result, "status");
	rreason = json_str(result, "reason");
	if (rreason)
		strbuf_addstr(reason, rreason);
	if (rstatus && !strcmp(rstatus, "pass"))
		return "PASS";
	if (rstatus && !strcmp(rstatus, "skipped"))
		return "SKIPPED";
	if (!reason->len)
		strbuf_addf(reason, "the program reported status \"%s\"",
			    rstatus ? rstatus : "(missing)");
	return "FAIL";
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

static void record_step(struct hostrun *hr, const struct plan_step *ps, const char *status,
			const char *reason, const struct remote_status *rs, double dur,
			const char *out_rel, const char *err_rel, cJSON *result, cJSON *files)
{
	cJSON *sj;
	record_lock(hr->ctx->rec);
	sj = cJSON_CreateObject();
	json_add_str(sj, "id", ps->id);
	json_add_str(sj, "kind", spec_step_kind_name(ps->step->kind));
	json_add_str(sj, "program", ps->step->prog->name);
	json_add_str(sj, "problem", ps->problem->name);
	json_add_str(sj, "mode", ps->mode);
	if (ps->tool)
		json_add_str(sj, "tool", ps->tool);
	if (ps->variant) {
		cJSON *d;
		int i;
		json_add_str(sj, "variant", ps->variant->label);
		d = json_add_obj(sj, "defines");
		for (i = 0; i < ps->variant->ndefines; i++)
			json_add_str(d, ps->variant->defines[i].key, ps->variant->defines[i].value);
	}
	if (ps->step->kind == STEP_PROFILE || ps->step->kind == STEP_SANITIZE)
		cJSON_AddItemToObject(sj, "tool_settings", tool_json(hr, ps));
	json_add_str(sj, "arch", ps->arch);
	json_add_str(sj, "role", ps->step->is_baseline ? "baseline" : "kernel");
	json_add_str(sj, "status", status);
	json_add_str(sj, "reason", reason && *reason ? reason : NULL);
	if (rs && rs->end == REMOTE_EXITED)
		json_add_num(sj, "exit_code", rs->exit_code);
	else
		cJSON_AddNullToObject(sj, "exit_code");
	if (rs && rs->end == REMOTE_SIGNALED)
		json_add_num(sj, "signal", rs->signal);
	else
		cJSON_AddNullToObject(sj, "signal");
	json_add_num(sj, "duration_s", dur);
	if (dur > 0) {
		/* wall-clock span, to line steps of several hosts up in time */
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		json_add_num(sj, "ended_unix_s", (double)now.tv_sec + now.tv_nsec / 1e9);
		json_add_num(sj, "started_unix_s", (double)now.tv_sec + now.tv_nsec / 1e9 - dur);
	}
	if (hr->ran_to > 0) {
		/* when the program itself ran on the host (after its GPU lock) */
		json_add_num(sj, "ran_from_unix_s", hr->ran_from);
		json_add_num(sj, "ran_to_unix_s", hr->ran_to);
	}
	hr->ran_from = hr->ran_to = 0;
	json_add_num(sj, "timeout_s", ps->step->timeout_s);
	json_add_str(sj, "command", ps->command);
	json_add_str(sj, "stdout_log", out_rel);
	json_add_str(sj, "stderr_log", err_rel);
	if (result)
		cJSON_AddItemToObject(sj, "result", result);
	else
		cJSON_AddNullToObject(sj, "result");
	if (files) {   /* tool logs and reports pulled back beside the run */
		cJSON *f;
		while ((f = files->child)) {
			char *key = xstrdup(f->string);
			cJSON_DetachItemViaPointer(files, f);
			cJSON_AddItemToObject(sj, key, f);
			free(key);
		}
		cJSON_Delete(files);
	}
	cJSON_AddItemToArray(cJSON_GetObjectItem(hr->hj, "steps"), sj);
	record_unlock(hr->ctx->rec);
	hr_save(hr);
	strbuf_addf(&hr->out, "  %s: %s%s%s\n", ps->id, status, reason && *reason ? ": " : "",
		    reason && *reason ? reason : "");
	if (strcmp(status, "PASS") && strcmp(status, "SKIPPED"))
		hr->nfailed_steps++;
}

static char *gpu_lock_path(struct hostrun *hr)
{
	return xstrfmt("/tmp/gpuorch-gpu%d.lock", hr->h->gpu_index);
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
static int pull_file(struct hostrun *hr, const char *remote, size_t cap, const char *rel,
		     const char *key, cJSON *files, struct strbuf *data, struct strbuf *note)
{
	struct strbuf err = STRBUF_INIT;
	enum go_status st;
	strbuf_reset(data);
	st = ssh_download(hr->conn, remote, data, cap, DOWNLOAD_TIMEOUT_MS, &err);
	if (st != GO_OK) {
		if (note)
			strbuf_addf(note, "%s not fetched: %s; ", key, err.buf);
		strbuf_release(&err);
		return 0;
	}
	hr_add_log(hr, rel, data);
	json_add_str(files, key, rel);
	strbuf_release(&err);
	return 1;
}

/* A profile step ended: fetch ncu's log, CSV and report; parse the CSV into
 * result.profile. A metric that is missing, n/a or NaN fails the step. */
static const char *finish_profile(struct hostrun *hr, const struct plan_step *ps,
				  const struct remote_status *rs, const char *status,
				  struct strbuf *reason, cJSON *result, cJSON *files,
				  const struct strbuf *errout)
{
	struct strbuf log = STRBUF_INIT, csv = STRBUF_INIT, rep = STRBUF_INIT;
	struct strbuf err = STRBUF_INIT, note = STRBUF_INIT, why = STRBUF_INIT;
	char *rel;
	cJSON *profile = NULL;
	enum go_status st;
	int have_csv;

	rel = hr_log_rel(hr, ps->id, "ncu.log");
	pull_file(hr, ps->tool_log, TOOL_LOG_CAP, rel, "tool_log", files, &log, NULL);
	free(rel);
	rel = hr_log_rel(hr, ps->id, "ncu.csv");
	have_csv = pull_file(hr, ps->profile_csv, TOOL_LOG_CAP, rel, "profile_csv", files, &csv,
			     NULL);
	free(rel);
	rel = hr_log_rel(hr, ps->id, "ncu-rep");
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
	if (strcmp(status, "PASS") && strcmp(status, "FAIL")) {
		/* TIMEOUT, KILLED, INFRA_ERROR, SKIPPED: keep what classify() said */
	} else if (st != GO_OK) {
		strbuf_reset(reason);
		strbuf_addf(reason, "profile: %s", why.len ? why.buf : err.buf);
		if (why.len && rs->end == REMOTE_EXITED && rs->exit_code)
			strbuf_addf(reason, " (ncu exit code %d)", rs->exit_code);
		status = "FAIL";
	} else if (!strcmp(status, "FAIL")) {
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
static const char *finish_sanitize(struct hostrun *hr, const struct plan_step *ps,
				   const struct remote_status *rs, const char *status,
				   struct strbuf *reason, cJSON *result, cJSON *files)
{
	struct strbuf log = STRBUF_INIT, err = STRBUF_INIT, d = STRBUF_INIT;
	char *rel = hr_log_rel(hr, ps->id, "sanitizer.log");
	cJSON *san = NULL;
	enum go_status st;
	int have = pull_file(hr, ps->tool_log, TOOL_LOG_CAP, rel, "tool_log", files, &log, NULL);

	free(rel);
	st = sanitizer_parse(log.buf, have ? log.len : 0, ps->tool, &san, &err);
	cJSON_DeleteItemFromObject(result, "sanitizer");
	cJSON_AddItemToObject(result, "sanitizer", san);
	sanitizer_describe(san, &d);
	if (strcmp(status, "PASS") && strcmp(status, "FAIL")) {
		/* TIMEOUT, KILLED, INFRA_ERROR: keep what classify() said */
	} else if (st != GO_OK) {
		strbuf_reset(reason);
		strbuf_addf(reason, "%s: %s", ps->tool, err.buf);
		status = "FAIL";
	} else if (json_num(san, "errors", 0) > 0 ||
		   (rs->end == REMOTE_EXITED && rs->exit_code == 99)) {
		strbuf_reset(reason);
		strbuf_add(reason, d.buf, d.len);
		status = "FAIL";
	} else if (!strcmp(status, "FAIL")) {
		prefix(reason, "no sanitizer errors, but the program failed: ");
	}
	strbuf_release(&log);
	strbuf_release(&err);
	strbuf_release(&d);
	return status;
}

/* Run one step; returns non-OK only when the host is lost. */
static enum go_status run_step(struct hostrun *hr, const struct plan_step *ps,
			       double *fetch_s)
{
	const struct plan *p = &hr->plan;
	struct strbuf err = STRBUF_INIT, out = STRBUF_INIT, errout = STRBUF_INIT;
	struct strbuf reason = STRBUF_INIT;
	struct remote_status rs;
	struct remote_step rstep;
	int64_t t0 = time_mono_ms();
	char *lock = NULL, *out_rel = NULL, *err_rel = NULL;
	int bi = build_index(p, ps->build);
	enum go_status st;
	const char *status;
	cJSON *result = NULL, *files = NULL;

	if (ps->skip_reason) {
		record_step(hr, ps, "SKIPPED", ps->skip_reason, NULL, 0, NULL, NULL, NULL, NULL);
		return GO_OK;
	}
	if (bi >= 0 && !hr->build_ok[bi]) {
		char *r = xstrfmt("the build of '%s' for %s did not pass", ps->build->prog->name,
				  ps->build->arch);
		record_step(hr, ps, "SKIPPED", r, NULL, 0, NULL, NULL, NULL, NULL);
		free(r);
		return GO_OK;
	}
	live_set(hr->ctx->live, hr->index, "run", ps->id);
	memset(&rstep, 0, sizeof(rstep));
	rstep.dir = ps->dir;
	rstep.cwd = p->src_dir;
	rstep.command = ps->command;
	rstep.timeout_s = ps->step->timeout_s;
	if (ps->needs_gpu) {
		lock = gpu_lock_path(hr);
		rstep.lock_path = lock;
		rstep.lock_wait_s = hr->ctx->lock_wait_s;
	}
	st = hr_start_step(hr, &rstep, &err);
	if (st == GO_OK)
		st = hr_wait_step(hr, ps->dir, ps->step->timeout_s, lock ? hr->ctx->lock_wait_s : 0,
				  &rs, &err);
	if (st != GO_OK) {
		record_step(hr, ps, "INFRA_ERROR", err.buf, NULL, hr_secs_since(t0), NULL, NULL, NULL, NULL);
		goto out;
	}
	{
		int64_t f0 = time_mono_ms();
		struct strbuf ferr = STRBUF_INIT;
		if (remote_step_output(hr->conn, ps->dir, &out, &errout, OUTPUT_CAP, &ferr) == GO_OK) {
			out_rel = hr_log_rel(hr, ps->id, "stdout");
			err_rel = hr_log_rel(hr, ps->id, "stderr");
			hr_add_log(hr, out_rel, &out);
			hr_add_log(hr, err_rel, &errout);
		} else {
			strbuf_addf(&reason, "(output not fetched: %s) ", ferr.buf);
		}
		strbuf_release(&ferr);
		*fetch_s += hr_secs_since(f0);
	}
	{
		struct strbuf cmd = STRBUF_INIT, t = STRBUF_INIT, e = STRBUF_INIT;
		strbuf_addstr(&cmd, "cat ");
		strbuf_add_shell_quoted(&cmd, ps->dir);
		strbuf_addstr(&cmd, "/t_run ");
		strbuf_add_shell_quoted(&cmd, ps->dir);
		strbuf_addstr(&cmd, "/t_end 2>/dev/null");
		if (hr_rexec(hr, cmd.buf, &t, &e) == GO_OK &&
		    sscanf(t.buf, "%lf %lf", &hr->ran_from, &hr->ran_to) != 2)
			hr->ran_from = hr->ran_to = 0;
		strbuf_release(&cmd);
		strbuf_release(&t);
		strbuf_release(&e);
	}
	result = parse_result(&out);
	if (ps->step->prog->run) {
		cJSON_Delete(result);
		result = byo_result(ps, &rs, &out);
	}
	status = classify(&rs, result, hr->ctx->lock_wait_s, &reason);
	if (ps->step->kind == STEP_PROFILE || ps->step->kind == STEP_SANITIZE) {
		files = cJSON_CreateObject();
		if (!result)
			result = cJSON_CreateObject();
		status = ps->step->kind == STEP_PROFILE
			 ? finish_profile(hr, ps, &rs, status, &reason, result, files, &errout)
			 : finish_sanitize(hr, ps, &rs, status, &reason, result, files);
	}
	record_step(hr, ps, status, reason.buf, &rs, hr_secs_since(t0), out_rel, err_rel, result,
		    files);
out:
	free(lock);
	free(out_rel);
	free(err_rel);
	strbuf_release(&err);
	strbuf_release(&out);
	strbuf_release(&errout);
	strbuf_release(&reason);
	return st;
}

enum go_status hr_run(struct hostrun *hr)
{
	const struct plan *p = &hr->plan;
	int64_t t0 = time_mono_ms();
	double fetch_s = 0;
	enum go_status st = GO_OK;
	int i, nfail0 = hr->nfailed_steps;

	for (i = 0; i < p->nsteps; i++) {
		if (st != GO_OK || hr_interrupted(hr)) {
			char *why = xstrfmt("not run: %s",
					    hr->interrupted ? "the run was interrupted"
							    : "the host was lost during an earlier step");
			record_step(hr, &p->steps[i], "SKIPPED", why, NULL, 0, NULL, NULL, NULL, NULL);
			free(why);
			continue;
		}
		st = run_step(hr, &p->steps[i], &fetch_s);
	}
	if (st != GO_OK) {
		hr->failed = 1;
		hr_phase(hr, "run", "INFRA_ERROR", t0, "the host was lost during a step");
		hr_host_status(hr, "failed", "the connection was lost during a step and could not be "
					     "re-established");
	} else {
		hr_phase(hr, "run", hr->interrupted ? "INFRA_ERROR"
			     : hr->nfailed_steps > nfail0 ? "FAIL" : "PASS", t0,
			 hr->interrupted ? "interrupted" : NULL);
		/* fetch: pulling each step's output back, timed separately */
		{
			cJSON *ph;
			record_lock(hr->ctx->rec);
			ph = cJSON_CreateObject();
			json_add_str(ph, "name", "fetch");
			json_add_str(ph, "status", "PASS");
			json_add_num(ph, "duration_s", fetch_s);
			json_add_str(ph, "detail", "step outputs pulled back after each step");
			cJSON_AddItemToArray(cJSON_GetObjectItem(hr->hj, "phases"), ph);
			record_unlock(hr->ctx->rec);
		}
	}
	return st;
}

void hr_skip_all(struct hostrun *hr, const char *why)
{
	int i;
	if (!hr->have_plan)
		return;
	for (i = 0; i < hr->plan.nsteps; i++)
		record_step(hr, &hr->plan.steps[i], "SKIPPED", why, NULL, 0, NULL, NULL, NULL, NULL);
}
