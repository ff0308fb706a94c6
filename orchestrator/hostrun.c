/* hostrun.c -- one host's pipeline: connect, probe, ship, build, run, fetch (hostrun.h).
 *
 * Remote layout under the host's work directory W:
 *   W/content/<content-id>/{src.tar,src/,.complete}   shipped once per content id
 *   W/builds/<build-key>/{cmd,stdout,stderr,rc,<program>} one nvcc build, reused
 *   W/runs/<run-id>/<step>/{cmd,pgid,stdout,stderr,rc} one detached step
 * Builds and steps run detached (remote.h) and are polled; a lost link is
 * re-established for up to ctx->reconnect_timeout_s. */
#include "hostrun.h"
#include "gates.h"
#include "jsonutil.h"
#include "ncu.h"
#include "ptxas.h"
#include "remote.h"
#include "sanitizer.h"
#include "timeutil.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "banned.h"

#define OUTPUT_CAP (16u << 20)
#define NCU_REP_CAP (64u << 20)     /* largest .ncu-rep pulled back */
#define TOOL_LOG_CAP (8u << 20)     /* ncu / compute-sanitizer logs, ncu CSV */
#define DOWNLOAD_TIMEOUT_MS 300000
#define EXEC_TIMEOUT_MS 60000
#define POLL_WAIT_MS 5000

/* ---------------------------------------------------------------- helpers */

static double secs_since(int64_t t0)
{
	return (double)(time_mono_ms() - t0) / 1000.0;
}

static void save(struct hostrun *hr)
{
	struct strbuf err = STRBUF_INIT;
	if (record_save(hr->ctx->rec, &err) != GO_OK)
		strbuf_addf(&hr->out, "  warning: cannot save the run record: %s\n", err.buf);
	strbuf_release(&err);
}

static void phase(struct hostrun *hr, const char *name, const char *status, int64_t t0,
		  const char *detail)
{
	cJSON *ph;
	record_lock(hr->ctx->rec);
	ph = cJSON_CreateObject();
	json_add_str(ph, "name", name);
	json_add_str(ph, "status", status);
	json_add_num(ph, "duration_s", secs_since(t0));
	json_add_str(ph, "detail", detail);
	cJSON_AddItemToArray(cJSON_GetObjectItem(hr->hj, "phases"), ph);
	record_unlock(hr->ctx->rec);
	save(hr);
}

static void host_status(struct hostrun *hr, const char *status, const char *error)
{
	record_lock(hr->ctx->rec);
	cJSON_ReplaceItemInObject(hr->hj, "status", cJSON_CreateString(status));
	cJSON_ReplaceItemInObject(hr->hj, "error",
				  error ? cJSON_CreateString(error) : cJSON_CreateNull());
	record_unlock(hr->ctx->rec);
	save(hr);
}

static void fail_host(struct hostrun *hr, const char *phase_name, int64_t t0, const char *msg)
{
	hr->failed = 1;
	phase(hr, phase_name, "INFRA_ERROR", t0, msg);
	strbuf_addf(&hr->out, "  %s failed: %s\n", phase_name, msg);
	host_status(hr, hr->have_info ? "failed" : "unreachable", msg);
}

static int interrupted(struct hostrun *hr)
{
	if (*hr->ctx->interrupted)
		hr->interrupted = 1;
	return hr->interrupted;
}

void hostrun_ssh_opts(const struct host *h, int accept_new_hostkey, struct ssh_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->label = h->name;
	o->address = h->address;
	o->port = h->port;
	o->user = h->user;
	o->identity = h->use_agent ? NULL : h->identity;
	o->use_agent = h->use_agent;
	o->known_hosts = h->known_hosts;
	o->accept_new_hostkey = accept_new_hostkey;
	o->connect_timeout_ms = h->connect_timeout_s * 1000;
	o->keepalive_s = 15;
}

char *hostrun_workdir(const struct host *h, const char *home)
{
	const char *w = h->workdir ? h->workdir : ".gpuorch";
	if (w[0] == '/')
		return xstrdup(w);
	if (!strncmp(w, "~/", 2))
		w += 2;
	return xstrfmt("%s/%s", home && *home ? home : ".", w);
}

/* Run a short remote command; output in out (may be NULL). */
static enum go_status rexec(struct hostrun *hr, const char *cmd, struct strbuf *out,
			    struct strbuf *err)
{
	struct strbuf o = STRBUF_INIT, e = STRBUF_INIT;
	struct ssh_exec_result res;
	enum go_status st;
	o.max = e.max = 1 << 20;
	st = ssh_exec(hr->conn, cmd, NULL, 0, &o, &e, &res, EXEC_TIMEOUT_MS, err);
	if (st == GO_OK && (res.signal[0] || res.exit_code != 0)) {
		strbuf_trim(&e);
		st = go_fail(err, GO_ERR_REMOTE, "%s: remote command failed (%s%s%d): %s",
			     hr->h->name, res.signal[0] ? "signal " : "exit ",
			     res.signal[0] ? res.signal : "",
			     res.signal[0] ? 0 : res.exit_code, e.len ? e.buf : "(no message)");
	}
	if (out)
		strbuf_add(out, o.buf, o.len);
	strbuf_release(&o);
	strbuf_release(&e);
	return st;
}

/* Re-establish a lost connection, for up to reconnect_timeout_s. */
static enum go_status reconnect(struct hostrun *hr, struct strbuf *err)
{
	struct ssh_opts o;
	int64_t deadline = time_mono_ms() + (int64_t)hr->ctx->reconnect_timeout_s * 1000;
	int64_t backoff = 500;
	enum go_status st = GO_ERR_CONNECT;

	ssh_disconnect(hr->conn);
	hr->conn = NULL;
	hostrun_ssh_opts(hr->h, 0, &o);
	strbuf_addf(&hr->out, "  connection lost; reconnecting (up to %d s)\n",
		    hr->ctx->reconnect_timeout_s);
	live_set(hr->ctx->live, hr->index, "reconnect", err->buf);
	while (!interrupted(hr)) {
		struct strbuf e = STRBUF_INIT;
		st = ssh_connect(&o, &hr->conn, &e);
		if (st == GO_OK) {
			strbuf_release(&e);
			strbuf_addstr(&hr->out, "  reconnected\n");
			return GO_OK;
		}
		strbuf_reset(err);
		strbuf_add(err, e.buf, e.len);
		strbuf_release(&e);
		if (st == GO_ERR_HOSTKEY || st == GO_ERR_AUTH)
			break;
		if (time_mono_ms() + backoff > deadline)
			break;
		time_sleep_ms(backoff);
		if (backoff < 4000)
			backoff *= 2;
	}
	{
		char *why = xstrdup(err->buf);
		go_fail(err, st == GO_OK ? GO_ERR_CONNECT : st,
			"lost the connection to '%s' and could not reconnect within %d s: %s",
			hr->h->name, hr->ctx->reconnect_timeout_s, why);
		free(why);
	}
	return st == GO_OK ? GO_ERR_CONNECT : st;
}

/* Wait for a detached step (or build) to end, reconnecting as needed. The
 * controller's own deadline is the step's timeout plus the GPU lock wait plus
 * a grace period: past it the step's session is killed. */
static enum go_status wait_step(struct hostrun *hr, const char *dir, int timeout_s,
				int lock_wait_s, struct remote_status *rs, struct strbuf *err)
{
	int64_t deadline = time_mono_ms() + ((int64_t)timeout_s + lock_wait_s + 30) * 1000;
	int failures = 0;
	memset(rs, 0, sizeof(*rs));
	for (;;) {
		enum go_status st;
		if (interrupted(hr)) {
			if (hr->conn)
				remote_step_kill(hr->conn, dir, err);
			return go_fail(err, GO_ERR_INTERNAL, "interrupted");
		}
		if (!hr->conn) {
			st = reconnect(hr, err);
			if (st != GO_OK)
				return st;
		}
		if (time_mono_ms() > deadline) {
			remote_step_kill(hr->conn, dir, err);
			rs->end = REMOTE_TIMED_OUT;
			return GO_OK;
		}
		st = remote_step_poll(hr->conn, dir, POLL_WAIT_MS, rs, err);
		if (st == GO_OK) {
			failures = 0;
			if (rs->end != REMOTE_RUNNING)
				return GO_OK;
			continue;
		}
		/* A link cut in the middle of a poll can look like any error (an
		 * empty answer, a timeout): reconnect and poll again, but an error
		 * that survives three fresh connections is the step's own. */
		if (++failures > 3)
			return st;
		st = reconnect(hr, err);
		if (st != GO_OK)
			return st;
	}
}

/* Start a detached step, surviving a link that drops meanwhile: the start
 * script is idempotent (a step whose pgid exists is reported as started),
 * so after a reconnect it is simply asked again. */
static enum go_status start_step(struct hostrun *hr, const struct remote_step *rstep,
				 struct strbuf *err)
{
	enum go_status st = GO_ERR_SSH;
	int tries;
	for (tries = 0; tries < 3 && !interrupted(hr); tries++) {
		if (!hr->conn || tries > 0) {
			st = reconnect(hr, err);
			if (st != GO_OK)
				return st;
		}
		st = remote_step_start(hr->conn, rstep, err);
		if (st != GO_ERR_SSH && st != GO_ERR_TIMEOUT && st != GO_ERR_CONNECT)
			return st;
	}
	return st;
}

/* Map how a remote process ended to a record status and a reason. */
static const char *end_status(const struct remote_status *rs, int lock_wait_s,
			      struct strbuf *reason)
{
	switch (rs->end) {
	case REMOTE_EXITED:
		if (rs->exit_code == 0)
			return "PASS";
		strbuf_addf(reason, "exit code %d", rs->exit_code);
		return "FAIL";
	case REMOTE_SIGNALED:
		strbuf_addf(reason, "killed by signal %d", rs->signal);
		return "KILLED";
	case REMOTE_TIMED_OUT:
		strbuf_addstr(reason, "killed at its timeout, with its whole process group");
		return "TIMEOUT";
	case REMOTE_LOCK_TIMEOUT:
		strbuf_addf(reason, "the GPU stayed busy with another timed job for %d s",
			    lock_wait_s);
		return "INFRA_ERROR";
	case REMOTE_VANISHED:
		strbuf_addstr(reason, "the step's processes vanished without an exit status "
				      "(host rebooted or processes killed from outside)");
		return "INFRA_ERROR";
	case REMOTE_RUNNING:
		break;
	}
	strbuf_addstr(reason, "still running");
	return "INFRA_ERROR";
}

static void add_log(struct hostrun *hr, const char *rel, const struct strbuf *data)
{
	struct strbuf err = STRBUF_INIT;
	if (record_write_file(hr->ctx->rec, rel, data->buf, data->len, &err) != GO_OK)
		strbuf_addf(&hr->out, "  warning: %s\n", err.buf);
	strbuf_release(&err);
}

static char *log_rel(struct hostrun *hr, const char *name, const char *ext)
{
	char *hs = plan_slug(hr->h->name, 60), *ns = plan_slug(name, 140);
	char *rel = xstrfmt("logs/%s/%s.%s", hs, ns, ext);
	free(hs);
	free(ns);
	return rel;
}

/* ---------------------------------------------------------------- phases */

static enum go_status do_connect(struct hostrun *hr)
{
	struct strbuf err = STRBUF_INIT;
	struct ssh_opts o;
	int64_t t0 = time_mono_ms();
	enum go_status st;

	live_set(hr->ctx->live, hr->index, "connect", hr->h->address);
	hostrun_ssh_opts(hr->h, hr->ctx->accept_new_hostkey, &o);
	st = ssh_connect(&o, &hr->conn, &err);
	if (st != GO_OK) {
		fail_host(hr, "connect", t0, err.buf);
	} else {
		char *d = xstrfmt("host key %s", ssh_fingerprint(hr->conn));
		phase(hr, "connect", "PASS", t0, d);
		free(d);
	}
	strbuf_release(&err);
	return st;
}

static void add_arch(struct hostrun *hr, const char *arch)
{
	int i;
	for (i = 0; i < hr->narchs; i++)
		if (!strcmp(hr->archs[i], arch))
			return;
	hr->archs = xrealloc(hr->archs, sizeof(char *) * (size_t)(hr->narchs + 2));
	hr->archs[hr->narchs++] = xstrdup(arch);
	hr->archs[hr->narchs] = NULL;
}

static enum go_status do_probe(struct hostrun *hr)
{
	const struct spec *s = hr->ctx->spec;
	struct strbuf err = STRBUF_INIT;
	int64_t t0 = time_mono_ms();
	enum go_status st;
	cJSON *info, *archs;
	int i;

	live_set(hr->ctx->live, hr->index, "probe", "GPU, driver, CUDA tools");
	st = probe_host(hr->conn, hr->h->cuda_home, hr->h->python, hr->h->workdir, hr->h->gpu_index,
			&hr->info, &err);
	if (st != GO_OK) {
		fail_host(hr, "probe", t0, err.buf);
		strbuf_release(&err);
		return st;
	}
	hr->have_info = 1;
	hr->workdir = hostrun_workdir(hr->h, hr->info.home);

	/* Which archs to build for, and which one the steps run on. */
	if (hr->info.has_gpu) {
		const char *gpu = hr->h->gpu ? hr->h->gpu : hr->info.gpu_name;
		const char *arch = hr->h->arch ? hr->h->arch : spec_arch_for_gpu(s, gpu);
		char *cc_arch = NULL;
		if (!arch)
			arch = cc_arch = probe_cc_to_arch(hr->info.compute_cap);
		if (arch) {
			hr->run_arch = xstrdup(arch);
			add_arch(hr, arch);
		}
		free(cc_arch);
	}
	if (!hr->run_arch) {
		/* No GPU (or none we can name): compile-only for every listed arch. */
		if (hr->h->arch)
			add_arch(hr, hr->h->arch);
		for (i = 0; i < s->ntargets; i++)
			add_arch(hr, s->targets[i].arch);
	}

	record_lock(hr->ctx->rec);
	info = probe_to_json(&hr->info);
	/* the arch the steps run on (probe's "arch" is the plain one from the
	 * compute capability, e.g. sm_90 where the spec builds sm_90a) */
	cJSON_DeleteItemFromObjectCaseSensitive(info, "arch");
	json_add_str(info, "arch", hr->run_arch);
	json_add_str(info, "workdir", hr->workdir);
	cJSON_ReplaceItemInObject(hr->hj, "info", info);
	archs = cJSON_CreateArray();
	for (i = 0; i < hr->narchs; i++)
		cJSON_AddItemToArray(archs, cJSON_CreateString(hr->archs[i]));
	cJSON_ReplaceItemInObject(hr->hj, "archs", archs);
	record_unlock(hr->ctx->rec);

	{
		struct strbuf d = STRBUF_INIT;
		if (hr->info.has_gpu)
			strbuf_addf(&d, "%s (cc %s, %s), driver %s", hr->info.gpu_name,
				    hr->info.compute_cap ? hr->info.compute_cap : "?",
				    hr->run_arch ? hr->run_arch : "no arch",
				    hr->info.driver ? hr->info.driver : "?");
		else
			strbuf_addf(&d, "no GPU (%s): compile-only",
				    hr->info.gpu_reason ? hr->info.gpu_reason : "none detected");
		strbuf_addf(&d, "; nvcc %s", hr->info.nvcc.path ? hr->info.nvcc.path : "not found");
		phase(hr, "probe", "PASS", t0, d.buf);
		strbuf_addf(&hr->out, "  %s\n", d.buf);
		strbuf_release(&d);
	}
	strbuf_release(&err);
	return GO_OK;
}

static void make_plan(struct hostrun *hr)
{
	struct plan_host ph;
	memset(&ph, 0, sizeof(ph));
	ph.workdir = hr->workdir;
	ph.content_id = hr->ctx->pack->content_id;
	ph.run_id = hr->ctx->run_id;
	ph.archs = hr->archs;
	ph.narchs = hr->narchs;
	ph.run_arch = hr->run_arch;
	ph.no_gpu_reason = hr->info.gpu_reason;
	ph.gpu_name = hr->info.gpu_name;
	ph.nvcc = hr->info.nvcc.path;
	ph.nvcc_version = hr->info.nvcc.version;
	ph.python = hr->h->python ? hr->h->python : hr->info.python.path;
	ph.ncu = hr->info.ncu.path;
	ph.sanitizer = hr->info.sanitizer.path;
	plan_make(&hr->plan, hr->ctx->spec, &ph);
	hr->have_plan = 1;
}

static enum go_status do_ship(struct hostrun *hr)
{
	const struct pack *pk = hr->ctx->pack;
	const struct plan *p = &hr->plan;
	struct strbuf err = STRBUF_INIT, cmd = STRBUF_INIT, out = STRBUF_INIT;
	int64_t t0 = time_mono_ms();
	uint64_t sent = 0;
	int reused;
	enum go_status st;
	cJSON *ship;
	char *tar = xstrfmt("%s/src.tar", p->content_dir);

	live_set(hr->ctx->live, hr->index, "ship", pk->content_id);
	strbuf_addstr(&cmd, "test -f ");
	strbuf_add_shell_quoted(&cmd, p->content_dir);
	strbuf_addstr(&cmd, "/.complete && echo present || { mkdir -p ");
	strbuf_add_shell_quoted(&cmd, p->content_dir);
	strbuf_addstr(&cmd, " && echo absent; }");
	st = rexec(hr, cmd.buf, &out, &err);
	reused = st == GO_OK && strstr(out.buf, "present") != NULL;
	if (st == GO_OK && !reused) {
		st = ssh_upload(hr->conn, pk->data, pk->len, tar, 0644, &sent, 600000, &err);
		if (st == GO_OK) {
			strbuf_reset(&cmd);
			strbuf_addstr(&cmd, "cd ");
			strbuf_add_shell_quoted(&cmd, p->content_dir);
			strbuf_addstr(&cmd, " && rm -rf src && mkdir src && tar -xf src.tar -C src"
					    " && touch .complete");
			st = rexec(hr, cmd.buf, NULL, &err);
		}
	}
	if (st != GO_OK) {
		fail_host(hr, "ship", t0, err.buf);
	} else {
		char *d;
		record_lock(hr->ctx->rec);
		ship = cJSON_CreateObject();
		json_add_num(ship, "bytes_sent", (double)sent);
		json_add_bool(ship, "reused", reused);
		json_add_str(ship, "remote_dir", p->content_dir);
		cJSON_ReplaceItemInObject(hr->hj, "ship", ship);
		record_unlock(hr->ctx->rec);
		d = reused ? xstrfmt("content %.12s already on the host: 0 bytes sent",
				     pk->content_id)
			   : xstrfmt("%llu bytes sent (%d files)", (unsigned long long)sent,
				     pk->nfiles);
		phase(hr, "ship", "PASS", t0, d);
		strbuf_addf(&hr->out, "  ship: %s\n", d);
		free(d);
	}
	free(tar);
	strbuf_release(&err);
	strbuf_release(&cmd);
	strbuf_release(&out);
	return st;
}

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
	char *rel = log_rel(hr, name, "log");
	int exit_code = -1;

	if (!bs->status) {
		bs->status = bs->reused ? "PASS" : end_status(rs, 0, &reason);
		if (rs && rs->end == REMOTE_EXITED)
			exit_code = rs->exit_code;
		if (reason.len)
			bs->reason = xstrdup(reason.buf);
	}
	if (hr->conn && remote_step_output(hr->conn, b->dir, &out, &errout, OUTPUT_CAP, &err) == GO_OK) {
		strbuf_addf(&logtext, "$ %s\n", b->command);
		strbuf_add(&logtext, out.buf, out.len);
		strbuf_add(&logtext, errout.buf, errout.len);
		add_log(hr, rel, &logtext);
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
	record_build(hr, b, bs, exit_code, bs->reused ? 0.0 : secs_since(bs->t0), rel, res);
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

static enum go_status do_build(struct hostrun *hr)
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
		st = rexec(hr, cmd.buf, &out, &err);
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
		st = start_step(hr, &rstep, &err);
		if (st == GO_OK)
			bs[i].started = 1;
	}
	if (st != GO_OK) {
		fail_host(hr, "build", t0, err.buf);
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
			st = wait_step(hr, b->dir, s->build_timeout_s, 0, &rs, &err);
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
	save(hr);
	if (st != GO_OK) {
		fail_host(hr, "build", t0, err.buf);
	} else {
		char *d = xstrfmt("%d of %d builds passed (%d reused, %d skipped)", nok,
				  p->nbuilds, nreused, nskipped);
		phase(hr, "build", nok + nskipped == p->nbuilds ? "PASS" : "FAIL", t0, d);
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

static const char *classify(const struct remote_status *rs, const cJSON *result,
			    int lock_wait_s, struct strbuf *reason)
{
	const char *st = end_status(rs, lock_wait_s, reason);
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
	save(hr);
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
	add_log(hr, rel, data);
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

	rel = log_rel(hr, ps->id, "ncu.log");
	pull_file(hr, ps->tool_log, TOOL_LOG_CAP, rel, "tool_log", files, &log, NULL);
	free(rel);
	rel = log_rel(hr, ps->id, "ncu.csv");
	have_csv = pull_file(hr, ps->profile_csv, TOOL_LOG_CAP, rel, "profile_csv", files, &csv,
			     NULL);
	free(rel);
	rel = log_rel(hr, ps->id, "ncu-rep");
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
	char *rel = log_rel(hr, ps->id, "sanitizer.log");
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
	st = start_step(hr, &rstep, &err);
	if (st == GO_OK)
		st = wait_step(hr, ps->dir, ps->step->timeout_s, lock ? hr->ctx->lock_wait_s : 0,
			       &rs, &err);
	if (st != GO_OK) {
		record_step(hr, ps, "INFRA_ERROR", err.buf, NULL, secs_since(t0), NULL, NULL, NULL, NULL);
		goto out;
	}
	{
		int64_t f0 = time_mono_ms();
		struct strbuf ferr = STRBUF_INIT;
		if (remote_step_output(hr->conn, ps->dir, &out, &errout, OUTPUT_CAP, &ferr) == GO_OK) {
			out_rel = log_rel(hr, ps->id, "stdout");
			err_rel = log_rel(hr, ps->id, "stderr");
			add_log(hr, out_rel, &out);
			add_log(hr, err_rel, &errout);
		} else {
			strbuf_addf(&reason, "(output not fetched: %s) ", ferr.buf);
		}
		strbuf_release(&ferr);
		*fetch_s += secs_since(f0);
	}
	{
		struct strbuf cmd = STRBUF_INIT, t = STRBUF_INIT, e = STRBUF_INIT;
		strbuf_addstr(&cmd, "cat ");
		strbuf_add_shell_quoted(&cmd, ps->dir);
		strbuf_addstr(&cmd, "/t_run ");
		strbuf_add_shell_quoted(&cmd, ps->dir);
		strbuf_addstr(&cmd, "/t_end 2>/dev/null");
		if (rexec(hr, cmd.buf, &t, &e) == GO_OK &&
		    sscanf(t.buf, "%lf %lf", &hr->ran_from, &hr->ran_to) != 2)
			hr->ran_from = hr->ran_to = 0;
		strbuf_release(&cmd);
		strbuf_release(&t);
		strbuf_release(&e);
	}
	result = parse_result(&out);
	status = classify(&rs, result, hr->ctx->lock_wait_s, &reason);
	if (ps->step->kind == STEP_PROFILE || ps->step->kind == STEP_SANITIZE) {
		files = cJSON_CreateObject();
		if (!result)
			result = cJSON_CreateObject();
		status = ps->step->kind == STEP_PROFILE
			 ? finish_profile(hr, ps, &rs, status, &reason, result, files, &errout)
			 : finish_sanitize(hr, ps, &rs, status, &reason, result, files);
	}
	record_step(hr, ps, status, reason.buf, &rs, secs_since(t0), out_rel, err_rel, result,
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

static enum go_status do_run(struct hostrun *hr)
{
	const struct plan *p = &hr->plan;
	int64_t t0 = time_mono_ms();
	double fetch_s = 0;
	enum go_status st = GO_OK;
	int i, nfail0 = hr->nfailed_steps;

	for (i = 0; i < p->nsteps; i++) {
		if (st != GO_OK || interrupted(hr)) {
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
		phase(hr, "run", "INFRA_ERROR", t0, "the host was lost during a step");
		host_status(hr, "failed", "the connection was lost during a step and could not be "
					  "re-established");
	} else {
		phase(hr, "run", hr->interrupted ? "INFRA_ERROR"
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

/* ---------------------------------------------------------------- main */

void hostrun_init(struct hostrun *hr, int index, const struct host *h, struct run_ctx *ctx,
		  cJSON *hj)
{
	memset(hr, 0, sizeof(*hr));
	hr->index = index;
	hr->h = h;
	hr->ctx = ctx;
	hr->hj = hj;
	strbuf_init(&hr->out, 0);
}

static void stamp(struct hostrun *hr, const char *key)
{
	char ts[32];
	time_iso8601(time(NULL), ts);
	record_lock(hr->ctx->rec);
	cJSON_ReplaceItemInObject(hr->hj, key, cJSON_CreateString(ts));
	record_unlock(hr->ctx->rec);
	save(hr);
}

static void skip_all(struct hostrun *hr, const char *why)
{
	int i;
	if (!hr->have_plan)
		return;
	for (i = 0; i < hr->plan.nsteps; i++)
		record_step(hr, &hr->plan.steps[i], "SKIPPED", why, NULL, 0, NULL, NULL, NULL, NULL);
}

/* After the steps: rank the sweeps and judge the gates on this host's
 * record; a failed gate fails the run (counted with the failed steps). */
static void judge_host(struct hostrun *hr)
{
	const struct spec *s = hr->ctx->spec;
	cJSON *sweeps, *gates = NULL, *g;
	int nf = 0, i, any_sweep = 0;

	for (i = 0; i < s->nsteps; i++)
		any_sweep |= s->steps[i].kind == STEP_SWEEP;
	record_lock(hr->ctx->rec);
	if (any_sweep) {
		sweeps = sweep_rank_host(hr->hj);
		cJSON_DeleteItemFromObject(hr->hj, "sweeps");
		cJSON_AddItemToObject(hr->hj, "sweeps", sweeps);
		cJSON_ArrayForEach(g, sweeps) {
			const char *w = json_str(g, "winner");
			strbuf_addf(&hr->out, "  sweep %s %s: %s%s\n", json_str(g, "program"),
				    json_str(g, "problem"), w ? "fastest correct variant " : "no variant passed",
				    w ? w : "");
		}
	}
	if (cJSON_GetArraySize(s->gates)) {
		gates = gates_evaluate_host(s->gates, hr->hj, &nf);
		cJSON_DeleteItemFromObject(hr->hj, "gates");
		cJSON_AddItemToObject(hr->hj, "gates", gates);
		cJSON_ArrayForEach(g, gates) {
			strbuf_addstr(&hr->out, "  gate ");
			gates_describe(g, &hr->out);
			strbuf_addch(&hr->out, '\n');
		}
	}
	record_unlock(hr->ctx->rec);
	hr->nfailed_gates = nf;
	hr->nfailed_steps += nf;
	if (any_sweep || gates)
		save(hr);
}

void hostrun_main(void *arg)
{
	struct hostrun *hr = arg;
	enum go_status st;

	strbuf_addf(&hr->out, "%s (%s@%s:%d)\n", hr->h->name, hr->h->user, hr->h->address,
		    hr->h->port);
	stamp(hr, "started_at");
	st = do_connect(hr);
	if (st == GO_OK)
		st = do_probe(hr);
	if (st == GO_OK) {
		make_plan(hr);
		st = do_ship(hr);
		if (st == GO_OK && !interrupted(hr))
			st = do_build(hr);
		if (st == GO_OK)
			st = do_run(hr);
		else
			skip_all(hr, "not run: the host failed before its steps");
	}
	if (!hr->failed)
		host_status(hr, hr->interrupted ? "failed" : "ok",
			    hr->interrupted ? "interrupted" : NULL);
	judge_host(hr);
	stamp(hr, "ended_at");
	live_done(hr->ctx->live, hr->index,
		  hr->failed ? "host FAILED" : hr->nfailed_steps ? "finished, with failures" : "finished, all passed");
	ssh_disconnect(hr->conn);
	hr->conn = NULL;
}

void hostrun_release(struct hostrun *hr)
{
	int i;
	if (hr->have_info)
		probe_release(&hr->info);
	if (hr->have_plan)
		plan_release(&hr->plan);
	for (i = 0; i < hr->narchs; i++)
		free(hr->archs[i]);
	free(hr->archs);
	free(hr->run_arch);
	free(hr->workdir);
	free(hr->build_ok);
	strbuf_release(&hr->out);
}
