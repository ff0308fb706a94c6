/* hostrun-build.c -- a host's build phase, from the host runner's events:
 * each nvcc build's end (built, reused, killed, skipped) becomes its record
 * entry (store/runwrite.h) with its log and ptxas resources (hostrun_build_json, which the
 * Slurm runner uses too); the entries go into the record in plan order when
 * the phase is over. */
#include "remote/hostrun-int.h"
#include "remote/diskspace.h"
#include "core/jsonutil.h"
#include "tools/ptxas.h"
#include "core/timeutil.h"
#include "core/shellenv.h"

#include <ctype.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

/* Build b's entry (store/runwrite.h): errout (count_objects: an nvcc build
 * that ran and passed) says how many objects it compiled and reused. */
static cJSON *build_json(const struct plan_build *b, enum item_status status, const char *reason,
			 int reused, int exit_code, double dur, const char *logrel,
			 cJSON *resources, int count_objects, const char *errout)
{
	const struct spec_variant *v = b->variant;
	struct runw_define *d = v ? xcalloc((size_t)v->ndefines + 1, sizeof(*d)) : NULL;
	char *first = NULL;
	struct runw_build e = {
		.program = b->prog->name, .variant = v ? v->label : NULL, .arch = b->arch,
		.status = status, .reason = reason, .reused = reused, .build_key = b->key,
		.duration_s = dur, .command = b->command, .exit_code = exit_code, .log = logrel,
		.resources = resources,
	};
	cJSON *bj;
	int i, n, nreused;

	for (i = 0; v && i < v->ndefines; i++) {
		d[i].key = v->defines[i].key;
		d[i].value = v->defines[i].value;
	}
	e.defines = d;
	e.ndefines = v ? v->ndefines : 0;
	if (b->same_as)   /* made once for both: the entry of the build that was made */
		e.same_build_as = first = b->same_as->variant
			? xstrfmt("%s[%s]", b->same_as->prog->name, b->same_as->variant->label)
			: xstrdup(b->same_as->prog->name);
	if (count_objects && plan_build_objects(b, errout, &n, &nreused)) {
		e.with_objects = 1;
		e.objects_reused = nreused;
		e.objects_compiled = n - nreused;
	}
	bj = runw_build_entry(&e);
	free(first);
	free(d);
	return bj;
}

/* Keep build i's entry and say what happened to it. */
static void keep(struct hostrun *hr, int i, cJSON *bj)
{
	const struct plan_build *b = &hr->plan.builds[i];
	const char *status = runw_build_status(bj), *reason = runw_build_reason(bj);
	int reused = runw_build_reused(bj);
	if (hr->build_rec[i]) {
		cJSON_Delete(bj);
		return;
	}
	hr->build_rec[i] = bj;
	strbuf_addf(&hr->out, "  build %s%s%s%s %s: %s%s%s%s\n", b->prog->name,
		    b->variant ? " [" : "", b->variant ? b->variant->label : "",
		    b->variant ? "]" : "", b->arch, status, reused ? " (reused)" : "",
		    reason ? ": " : "", reason ? reason : "");
	if (!item_status_is(status, ST_PASS) && !item_status_is(status, ST_SKIPPED))
		hr->nfailed_steps++;
}

/* The first line of stderr that says `what` (nvcc's "error", a shell's
 * "not found"): more than "exit code 1". */
static char *first_line_with(const char *text, const char *what)
{
	const char *e = text ? strstr(text, what) : NULL, *bol, *eol;
	size_t n;
	if (!e)
		return NULL;
	bol = e;
	while (bol > text && bol[-1] != '\n')
		bol--;
	eol = strchr(e, '\n');
	n = (size_t)((eol ? eol : e + strlen(e)) - bol);
	return xstrfmt("%.*s", (int)(n > 300 ? 300 : n), bol);
}

/* "CMake 3.28 or higher is required" in text: the version asked for (3.28)
 * and the word before it (CMake), or 0 */
static int asked_version(const char *text, char **word, char **version)
{
	const char *e = text ? strstr(text, " or higher is required") : NULL, *v, *w;
	if (!e)
		return 0;
	for (v = e; v > text && (isdigit((unsigned char)v[-1]) || v[-1] == '.'); v--)
		;
	for (w = v > text ? v - 1 : v; w > text && isalnum((unsigned char)w[-1]); w--)
		;
	if (v == e)
		return 0;
	*version = xstrfmt("%.*s", (int)(e - v), v);
	*word = xstrfmt("%.*s", (int)(v > w ? v - 1 - w : 0), w);
	return 1;
}

/* The build tools a failed project build ran (its "gpuorch-tool:" lines,
 * core/shellenv.h), after reason: "; the build ran cmake 3.25.1
 * (/usr/bin/cmake; the output asks for 3.28 or higher), make 4.3 (...)". */
static void add_tools(struct strbuf *reason, const char *errout)
{
	char *word = NULL, *asked = NULL;
	int k, n = 0, placed = 0, have = asked_version(errout, &word, &asked);
	for (k = 0; errout && k < ENV_NTOOLS; k++) {
		char *path, *ver;
		if (!env_tool_read(errout, env_tools[k], &path, &ver))
			continue;
		strbuf_addstr(reason, n++ ? ", " : "; the build ran ");
		if (!path)
			strbuf_addf(reason, "%s: absent", env_tools[k]);
		else
			strbuf_addf(reason, "%s %s (%s", env_tools[k], ver ? ver : "(version unknown)", path);
		if (path && have && !placed && !strcasecmp(word, env_tools[k])) {
			strbuf_addf(reason, "; the output asks for %s or higher", asked);
			placed = 1;
		}
		strbuf_addstr(reason, path ? ")" : "");
		free(path);
		free(ver);
	}
	if (have && !placed)
		strbuf_addf(reason, "; the output asks for %s%s%s or higher", word, *word ? " " : "", asked);
	free(word);
	free(asked);
}

/* Why a build that ran did not pass, into reason (the end's own words,
 * "exit code 1"): the first line of stderr that says "error", or a shell's
 * "not found" for exit 127; then the build tools it ran. */
static void fail_reason(struct strbuf *reason, const char *errout, enum item_status status,
			int exit_code)
{
	char *why = NULL;
	if (status == ST_FAIL && (why = first_line_with(errout, "error"))) {
		strbuf_reset(reason);
		strbuf_addstr(reason, why);
	} else if (exit_code == 127 && (why = first_line_with(errout, "not found"))) {
		char *code = strbuf_detach(reason, NULL);
		strbuf_addf(reason, "%s: %s", why, code);
		free(code);
	}
	free(why);
	add_tools(reason, errout);
}

cJSON *hostrun_build_json(struct hostrun *hr, const struct plan_build *b, const cJSON *ev,
			  enum item_status status_in, const char *reason_in)
{
	const char *evn = ev ? json_str(ev, "ev") : NULL;
	const char *out = ev ? hr_ev_str(ev, "stdout_text") : NULL;
	const char *errout = ev ? hr_ev_str(ev, "stderr_text") : NULL;
	struct strbuf logtext = STRBUF_INIT, reason = STRBUF_INIT;
	struct remote_status rs;
	char *name, *rel = NULL;
	enum item_status status = ST_PASS;
	int reused = evn && !strcmp(evn, "build_reused"), exit_code = -1;
	double dur = 0;
	cJSON *res = NULL, *bj;

	if (status_in == ST_NONE && evn && !strcmp(evn, "build_skipped")) {
		status_in = ST_SKIPPED;
		reason_in = "not built: an earlier build failed, so the build phase stopped";
		ev = NULL;
	}
	if (!ev)
		return build_json(b, status_in, reason_in, 0, -1, 0, NULL, NULL, 0, NULL);
	if (!reused) {
		double t0 = json_num(ev, "t_run", 0), t1 = json_num(ev, "t_end", 0);
		remote_end_from_event(ev, &rs);
		status = hr_end_status(hr, &rs, 0, &reason);
		if (rs.end == REMOTE_EXITED)
			exit_code = rs.exit_code;
		if (status != ST_PASS) {
			fail_reason(&reason, errout, status, exit_code);
			disk_full_reason(&reason, errout, out,   /* the cause, not ld's symptom */
					 (long long)json_num(ev, "disk_free_kib", -1));
		}
		if (t0 > 0 && t1 >= t0)
			dur = t1 - t0;
	}
	if (status_in != ST_NONE) {
		status = status_in;
		strbuf_reset(&reason);
		if (reason_in)
			strbuf_addstr(&reason, reason_in);
	}
	name = b->variant ? xstrfmt("build-%s[%s]-%s", b->prog->name, b->variant->label, b->arch)
			  : xstrfmt("build-%s-%s", b->prog->name, b->arch);
	if (out || errout) {
		rel = hostrun_log_rel(hr, name, "log");
		strbuf_addf(&logtext, "$ %s\n", b->command);
		strbuf_addstr(&logtext, out ? out : "");
		strbuf_addstr(&logtext, errout ? errout : "");
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ev, "stderr_truncated")) ||
		    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ev, "stdout_truncated")))
			strbuf_addf(&logtext, "\n[truncated: the whole log is in %s on the host]\n", b->dir);
		hostrun_add_log(hr, rel, logtext.buf, logtext.len);
		res = ptxas_parse(errout ? errout : "", errout ? strlen(errout) : 0, NULL);
	}
	bj = build_json(b, status, reason.len ? reason.buf : NULL, reused, exit_code, dur, rel, res,
			!reused && status == ST_PASS, errout);
	free(name);
	free(rel);
	strbuf_release(&logtext);
	strbuf_release(&reason);
	return bj;
}

void hr_build_ended(struct hostrun *hr, int i, const struct journal_event *e)
{
	keep(hr, i, hostrun_build_json(hr, &hr->plan.builds[i], e->json, ST_NONE, NULL));
}

void hr_builds_done(struct hostrun *hr, int64_t t0, const char *why_missing)
{
	const struct plan *p = &hr->plan;
	int i, nok = 0, nreused = 0, nskipped = 0;
	char *d;

	if (hr->builds_recorded)
		return;
	hr->builds_recorded = 1;
	for (i = 0; i < p->nbuilds; i++) {
		const struct plan_build *b = &p->builds[i];
		if (b->skip_reason)
			keep(hr, i, hostrun_build_json(hr, b, NULL, ST_SKIPPED, b->skip_reason));
		else if (!hr->build_rec[i])
			keep(hr, i, hostrun_build_json(hr, b, NULL, ST_INFRA_ERROR, why_missing));
	}
	for (i = 0; i < p->nbuilds; i++) {
		cJSON *bj = hr->build_rec[i];
		const char *st = runw_build_status(bj);
		nok += item_status_is(st, ST_PASS);
		nskipped += item_status_is(st, ST_SKIPPED);
		nreused += runw_build_reused(bj);
		runw_host_build(hr->ctx->rec, hr->index, bj);
		hr->build_rec[i] = NULL;
	}
	d = xstrfmt("%d of %d builds passed (%d reused, %d skipped)", nok, p->nbuilds, nreused,
		    nskipped);
	hostrun_phase(hr, "build", nok + nskipped == p->nbuilds ? ST_PASS : ST_FAIL, t0, d);
	free(d);
}
