/* hostrun-build.c -- a host's build phase: start, reuse, wait for and record each nvcc build. */
#include "remote/hostrun-int.h"
#include "core/jsonutil.h"
#include "tools/ptxas.h"
#include "remote/remote.h"
#include "core/timeutil.h"

#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

/* ---------------------------------------------------------------- builds */

struct build_state {
	int started;      /* a remote build was started */
	int reused;
	int64_t t0;
	const char *status;
	char *reason;
};

static void record_build(struct hostrun *hr, const struct plan_build *b,
			 const struct build_state *bs, int exit_code, double dur,
			 const char *logrel, cJSON *resources)
{
	cJSON *bj;
	record_lock(hr->ctx->rec);
	bj = cJSON_CreateObject();
	json_add_str(bj, "program", b->prog->name);
	if (b->variant) {
		cJSON *d;
		int i;
		json_add_str(bj, "variant", b->variant->label);
		d = json_add_obj(bj, "defines");
		for (i = 0; i < b->variant->ndefines; i++)
			json_add_str(d, b->variant->defines[i].key, b->variant->defines[i].value);
	}
	json_add_str(bj, "arch", b->arch);
	json_add_str(bj, "status", bs->status);
	json_add_str(bj, "reason", bs->reason);
	json_add_bool(bj, "reused", bs->reused);
	json_add_str(bj, "build_key", b->key);
	json_add_num(bj, "duration_s", dur);
	json_add_str(bj, "command", b->command);
	if (exit_code >= 0)
		json_add_num(bj, "exit_code", exit_code);
	else
		cJSON_AddNullToObject(bj, "exit_code");
	json_add_str(bj, "log", logrel);
	cJSON_AddItemToObject(bj, "resources", resources ? resources : cJSON_CreateArray());
	cJSON_AddItemToArray(cJSON_GetObjectItem(hr->hj, "builds"), bj);
	record_unlock(hr->ctx->rec);
}

static void finish_build(struct hostrun *hr, const struct plan_build *b, struct build_state *bs,
			 const struct remote_status *rs)
{
	struct strbuf out = STRBUF_INIT, errout = STRBUF_INIT, err = STRBUF_INIT;
	struct strbuf logtext = STRBUF_INIT, reason = STRBUF_INIT;
	cJSON *res = NULL;
	char *name = b->variant ? xstrfmt("build-%s[%s]-%s", b->prog->name, b->variant->label, b->arch)
				: xstrfmt("build-%s-%s", b->prog->name, b->arch);
	char *rel = hr_log_rel(hr, name, "log");
	int exit_code = -1;

	if (!bs->status) {
		bs->status = bs->reused ? "PASS" : hr_end_status(rs, 0, &reason);
		if (rs && rs->end == REMOTE_EXITED)
			exit_code = rs->exit_code;
		if (reason.len)
			bs->reason = xstrdup(reason.buf);
	}
	if (hr->conn && remote_step_output(hr->conn, b->dir, &out, &errout, OUTPUT_CAP, &err) == GO_OK) {
		strbuf_addf(&logtext, "$ %s\n", b->command);
		strbuf_add(&logtext, out.buf, out.len);
		strbuf_add(&logtext, errout.buf, errout.len);
		hr_add_log(hr, rel, &logtext);
		res = ptxas_parse(errout.buf, errout.len, NULL);
		if (!strcmp(bs->status, "FAIL") && errout.len) {
			/* The first error line says more than "exit code 1". */
			const char *e = strstr(errout.buf, "error");
			if (e) {
				const char *bol = e, *eol = strchr(e, '\n');
				while (bol > errout.buf && bol[-1] != '\n')
					bol--;
				free(bs->reason);
				bs->reason = xstrfmt("%.*s", (int)((eol ? eol : e + strlen(e)) - bol > 300 ? 300 : (eol ? eol : e + strlen(e)) - bol), bol);
			}
		}
	} else {
		free(rel);
		rel = NULL;
	}
	record_build(hr, b, bs, exit_code, bs->reused ? 0.0 : hr_secs_since(bs->t0), rel, res);
	strbuf_addf(&hr->out, "  build %s%s%s%s %s: %s%s%s%s\n", b->prog->name,
		    b->variant ? " [" : "", b->variant ? b->variant->label : "",
		    b->variant ? "]" : "", b->arch, bs->status,
		    bs->reused ? " (reused)" : "", bs->reason ? ": " : "",
		    bs->reason ? bs->reason : "");
	if (strcmp(bs->status, "PASS") && strcmp(bs->status, "SKIPPED"))
		hr->nfailed_steps++;
	free(name);
	free(rel);
	strbuf_release(&out);
	strbuf_release(&errout);
	strbuf_release(&err);
	strbuf_release(&logtext);
	strbuf_release(&reason);
}

enum go_status hr_build(struct hostrun *hr)
{
	const struct plan *p = &hr->plan;
	const struct spec *s = hr->ctx->spec;
	struct build_state *bs = xcalloc((size_t)(p->nbuilds ? p->nbuilds : 1), sizeof(*bs));
	struct strbuf err = STRBUF_INIT, cmd = STRBUF_INIT, out = STRBUF_INIT;
	int64_t t0 = time_mono_ms();
	enum go_status st = GO_OK;
	int i, nok = 0, nreused = 0, nskipped = 0;

	hr->build_ok = xcalloc((size_t)(p->nbuilds ? p->nbuilds : 1), 1);

	/* Start every build that is not reusable: they run in parallel on the host. */
	for (i = 0; i < p->nbuilds && st == GO_OK; i++) {
		const struct plan_build *b = &p->builds[i];
		struct remote_step rstep;
		bs[i].t0 = time_mono_ms();
		if (b->skip_reason) {
			bs[i].status = "SKIPPED";
			bs[i].reason = xstrdup(b->skip_reason);
			nskipped++;
			continue;
		}
		strbuf_reset(&cmd);
		strbuf_reset(&out);
		strbuf_addstr(&cmd, "if test \"$(cat ");
		strbuf_add_shell_quoted(&cmd, b->dir);
		strbuf_addstr(&cmd, "/rc 2>/dev/null)\" = 0 && test -x ");
		strbuf_add_shell_quoted(&cmd, b->bin);
		strbuf_addstr(&cmd, "; then echo reused; else rm -rf ");
		strbuf_add_shell_quoted(&cmd, b->dir);
		strbuf_addstr(&cmd, "; echo new; fi");
		st = hr_rexec(hr, cmd.buf, &out, &err);
		if (st != GO_OK)
			break;
		if (strstr(out.buf, "reused")) {
			bs[i].reused = 1;
			continue;
		}
		memset(&rstep, 0, sizeof(rstep));
		rstep.dir = b->dir;
		rstep.cwd = p->src_dir;
		rstep.command = b->command;
		rstep.timeout_s = s->build_timeout_s;
		st = hr_start_step(hr, &rstep, &err);
		if (st == GO_OK)
			bs[i].started = 1;
	}
	if (st != GO_OK) {
		hr_fail_host(hr, "build", t0, err.buf);
		goto out;
	}
	for (i = 0; i < p->nbuilds; i++) {
		const struct plan_build *b = &p->builds[i];
		struct remote_status rs;
		memset(&rs, 0, sizeof(rs));
		if (bs[i].started) {
			char *what = xstrfmt("%s %s", b->prog->name, b->arch);
			live_set(hr->ctx->live, hr->index, "build", what);
			free(what);
			st = hr_wait_step(hr, b->dir, s->build_timeout_s, 0, &rs, &err);
			if (st != GO_OK) {
				bs[i].status = "INFRA_ERROR";
				bs[i].reason = xstrdup(err.buf);
			}
		}
		finish_build(hr, b, &bs[i], bs[i].started ? &rs : NULL);
		if (!strcmp(bs[i].status, "PASS")) {
			nok++;
			hr->build_ok[i] = 1;
		}
		nreused += bs[i].reused;
		if (st != GO_OK)
			break;
	}
	hr_save(hr);
	if (st != GO_OK) {
		hr_fail_host(hr, "build", t0, err.buf);
	} else {
		char *d = xstrfmt("%d of %d builds passed (%d reused, %d skipped)", nok,
				  p->nbuilds, nreused, nskipped);
		hr_phase(hr, "build", nok + nskipped == p->nbuilds ? "PASS" : "FAIL", t0, d);
		free(d);
	}
out:
	for (i = 0; i < p->nbuilds; i++)
		free(bs[i].reason);
	free(bs);
	strbuf_release(&err);
	strbuf_release(&cmd);
	strbuf_release(&out);
	return st;
}

