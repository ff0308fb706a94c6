/* hostrun-exec.c -- a host's builds and steps through the host runner
 * (remote.h, docs/runner.md).
 *
 * The host's plan is written once (runplan.c) and travels with the runner
 * on the one command that starts the runner and follows its journal; the
 * sources go over SFTP only when the host lacks them. The journal is read
 * over that one channel; after a dropped link the controller reconnects and
 * follows again from the offset it had read (the start is idempotent: a
 * running runner is attached to, a dead one is started again and attaches
 * to what its predecessor left). Each event goes to the build and step
 * recorders (hostrun-build.c, hostrun-steps.c). There is no poll and no
 * per-step deadline here: the runner enforces every timeout on the host,
 * and the controller only bounds the whole plan. */
#include "remote/hostrun-int.h"
#include "remote/blobs.h"
#include "remote/probecache.h"
#include "remote/runplan.h"
#include "core/jsonutil.h"
#include "core/timeutil.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

#define RUNNER_TEXT_CAP (4u << 20)   /* output carried in an end event */
#define KILL_FOLLOW_MS 60000         /* collecting what an interrupt killed */
#define MAX_RUNNER_STARTS 4          /* a runner that keeps dying is an error */
#define UPLOAD_TIMEOUT_MS 600000

struct exec_state {
	struct hostrun *hr;
	struct journal j;
	struct remote_start_info info;
	char **bids;                  /* per plan build: the runner's id, NULL when not run */
	int64_t t_ship, t_build, t_run;
	int ship_recorded;
	int uploaded;
	int nblobs;             /* files (distinct contents) the upload carried */
	int64_t upload_ms;      /* the SFTP upload alone (write, fsync, rename) */
	uint64_t sent;
	int stopping;                 /* interrupted: the runner is being stopped */
	char *runner_error;           /* runner_ended "error": its message */
	enum go_status feed_st;       /* a journal that cannot be read */
	struct strbuf feed_err;
};

static char *gpu_lock_path(const struct hostrun *hr)
{
	return xstrfmt("/tmp/gpuorch-gpu%d.lock", hr->h->gpu_index);
}

/* The runner's plan from hr->plan; the ids of the builds in es->bids. */
static enum go_status write_plan(struct hostrun *hr, struct exec_state *es, struct strbuf *text,
				 int64_t *budget_ms, struct strbuf *err)
{
	const struct plan *p = &hr->plan;
	const struct spec *s = hr->ctx->spec;
	struct runplan rp;
	struct runplan_build *rb = xcalloc((size_t)p->nbuilds + 1, sizeof(*rb));
	struct runplan_step *rs = xcalloc((size_t)p->nsteps + 1, sizeof(*rs));
	char *lock = gpu_lock_path(hr);
	int64_t budget = 300;
	enum go_status st;
	int i, j;

	memset(&rp, 0, sizeof(rp));
	es->bids = xcalloc((size_t)p->nbuilds + 1, sizeof(*es->bids));
	for (i = 0; i < p->nbuilds; i++) {
		const struct plan_build *b = &p->builds[i];
		if (b->skip_reason)
			continue;
		es->bids[i] = xstrfmt("%.16s", b->key);
		for (j = 0; j < rp.nbuilds; j++)
			if (!strcmp(rb[j].id, es->bids[i]))
				break;
		if (j < rp.nbuilds)
			continue;   /* the same build twice: one runs, both are recorded */
		rb[rp.nbuilds].id = es->bids[i];
		rb[rp.nbuilds].dir = b->dir;
		rb[rp.nbuilds].bin = b->bin;
		rb[rp.nbuilds].command = b->command;
		rb[rp.nbuilds].timeout_s = s->build_timeout_s;
		/* a sweep variant may be refused by the kernel (static_assert):
		 * that is a result, not a failed build phase */
		rb[rp.nbuilds].may_fail = b->variant != NULL || b->may_fail;
		budget += s->build_timeout_s + 10;
		rp.nbuilds++;
	}
	for (i = 0; i < p->nsteps; i++) {
		const struct plan_step *ps = &p->steps[i];
		struct runplan_step *r = &rs[rp.nsteps];
		char *why;
		if (!hr_step_runs(hr, i, &why)) {
			free(why);
			continue;
		}
		r->id = ps->id;
		r->dir = ps->dir;
		r->command = ps->command;
		r->timeout_s = ps->step->timeout_s;
		r->build_id = ps->build ? es->bids[ps->build - p->builds] : NULL;
		if (ps->needs_gpu) {
			r->lock_path = lock;
			r->lock_wait_s = hr->ctx->lock_wait_s;
		}
		budget += r->timeout_s + r->lock_wait_s + 15;
		rp.nsteps++;
	}
	rp.src_dir = p->src_dir;
	rp.max_builds = hr->h->max_builds > 0 ? hr->h->max_builds
					      : runplan_default_max_builds(hr->info.ncores);
	rp.fail_fast = 1;
	rp.text_cap = RUNNER_TEXT_CAP;
	rp.builds = rb;
	rp.steps = rs;
	st = runplan_write(&rp, text, err);
	*budget_ms = budget * 1000 > INT_MAX ? INT_MAX : budget * 1000;
	free(rb);
	free(rs);
	free(lock);
	return st;
}

static void free_bids(struct hostrun *hr, struct exec_state *es)
{
	int i;
	for (i = 0; es->bids && i < hr->plan.nbuilds; i++)
		free(es->bids[i]);
	free(es->bids);
	es->bids = NULL;
}

/* The kept probe did not hold: probe the host afresh and make the plan and
 * the runner's plan again (nothing ran: the start command stopped first). */
static enum go_status replan(struct hostrun *hr, struct exec_state *es, struct strbuf *text,
			     int64_t *budget_ms, struct strbuf *err)
{
	enum go_status st;
	free_bids(hr, es);
	free(hr->build_rec);
	hr->build_rec = NULL;
	if (hr->have_plan) {
		plan_release(&hr->plan);
		hr->have_plan = 0;
	}
	st = hr_probe(hr, 1);
	if (st != GO_OK)
		return go_fail(err, st, "%s", "the probe failed (see the probe phase)");
	hr_make_plan(hr);
	hr->build_rec = xcalloc((size_t)hr->plan.nbuilds + 1, sizeof(*hr->build_rec));
	strbuf_reset(text);
	return write_plan(hr, es, text, budget_ms, err);
}

static void record_ship(struct hostrun *hr, struct exec_state *es)
{
	const struct pack *pk = hr->ctx->pack;
	int reused = !es->uploaded;
	cJSON *ship;
	char *d;

	es->ship_recorded = 1;
	record_lock(hr->ctx->rec);
	ship = cJSON_CreateObject();
	json_add_num(ship, "bytes_sent", (double)es->sent);
	json_add_bool(ship, "reused", reused);
	json_add_str(ship, "remote_dir", hr->plan.content_dir);
	json_add_num(ship, "files_sent", reused ? 0 : es->nblobs);
	json_add_num(ship, "files", pk->nfiles);
	if (!reused)
		json_add_num(ship, "upload_s", (double)es->upload_ms / 1000.0);
	cJSON_ReplaceItemInObject(hr->hj, "ship", ship);
	record_unlock(hr->ctx->rec);
	d = reused ? xstrfmt("content %.12s already on the host: 0 bytes sent", pk->content_id)
		   : es->nblobs < pk->nfiles
		   ? xstrfmt("%llu bytes sent (%d of %d files; the host had the others)",
			     (unsigned long long)es->sent, es->nblobs, pk->nfiles)
		   : xstrfmt("%llu bytes sent (%d files)", (unsigned long long)es->sent, pk->nfiles);
	hr_phase(hr, "ship", "PASS", es->t_ship, d);
	strbuf_addf(&hr->out, "  ship: %s\n", d);
	free(d);
	es->t_build = time_mono_ms();
}

static int find_step(const struct hostrun *hr, const char *id)
{
	int i;
	for (i = 0; id && i < hr->plan.nsteps; i++)
		if (!strcmp(hr->plan.steps[i].id, id))
			return i;
	return -1;
}

static int is(const struct journal_event *e, const char *ev)
{
	return !strcmp(e->ev, ev);
}

/* One journal event (journal_cb). */
static int on_event(const struct journal_event *e, void *ctx)
{
	struct exec_state *es = ctx;
	struct hostrun *hr = es->hr;
	const char *name = hr_ev_str(e->json, "name");
	int i;

	if (!es->ship_recorded)
		record_ship(hr, es);
	if (is(e, "build_started")) {
		live_set(hr->ctx->live, hr->index, "build", e->id);
	} else if (is(e, "build_end") || is(e, "build_reused") || is(e, "build_skipped")) {
		for (i = 0; e->id && i < hr->plan.nbuilds && !hr->builds_recorded; i++)
			if (es->bids[i] && !strcmp(es->bids[i], e->id))
				hr_build_ended(hr, i, e);
	} else if (is(e, "phase_ended") && name && !strcmp(name, "build")) {
		hr_builds_done(hr, es->t_build, "no end in the host runner's journal");
	} else if (is(e, "phase_started") && name && !strcmp(name, "run")) {
		es->t_run = time_mono_ms();
		hr->nfailed_before_run = hr->nfailed_steps;
	} else if (is(e, "step_started")) {
		if ((i = find_step(hr, e->id)) >= 0) {
			hr->cur_step = i;
			hr->cur_started_t = e->t;
			live_set(hr->ctx->live, hr->index, "run", e->id);
		}
	} else if (is(e, "step_end") || is(e, "step_skipped")) {
		if ((i = find_step(hr, e->id)) >= 0)
			hr_step_ended(hr, i, e);
	} else if (is(e, "runner_ended")) {
		const char *st = hr_ev_str(e->json, "status"), *msg = hr_ev_str(e->json, "message");
		if (st && !strcmp(st, "error")) {
			free(es->runner_error);
			es->runner_error = xstrdup(msg ? msg : "(no message)");
		}
	}
	return 0;
}

/* Bytes of the journal as they arrive (ssh_out_fn); also asked while the
 * runner is silent: a non-zero answer stops following. runner_ended is the
 * journal's last line: following stops there, without waiting for the
 * follow command to notice that the runner has exited (tail --pid sees a
 * runner that is a zombie not yet reaped as alive). */
static int on_bytes(const char *data, size_t len, void *ctx)
{
	struct exec_state *es = ctx;
	if (len) {
		es->feed_st = journal_feed(&es->j, data, len, on_event, es, &es->feed_err);
		if (es->feed_st || es->j.ended)
			return 1;
	}
	return !es->stopping && hr_interrupted(es->hr);
}

/* Stop the runner after an interrupt; what it killed is still collected. */
static void stop_runner(struct hostrun *hr, struct exec_state *es)
{
	struct strbuf err = STRBUF_INIT;
	es->stopping = 1;
	if (hr->conn && remote_runner_kill(hr->conn, hr->plan.run_dir, &err) != GO_OK)
		strbuf_addf(&hr->out, "  warning: %s\n", err.buf);
	strbuf_release(&err);
}

/* After the loop: the record's builds, steps and phases for how it ended. */
static enum go_status finish(struct hostrun *hr, struct exec_state *es, enum go_status st,
			     const char *err)
{
	if (!es->ship_recorded && !es->stopping && st != GO_OK) {
		/* nothing ran: the sources or the runner never got there */
		hr_fail_host(hr, "ship", es->t_ship, err);
		hr_skip_all(hr, "not run: the host failed before its steps");
		return st;
	}
	if (!es->ship_recorded)
		record_ship(hr, es);
	if (st == GO_OK || es->stopping) {
		const char *why = es->stopping ? "interrupted"
				  : es->runner_error ? es->runner_error
				  : "no end in the host runner's journal";
		hr_builds_done(hr, es->t_build, why);
		hr_steps_flush(hr, why, es->stopping ? "not run: the run was interrupted" : why);
		if (es->runner_error && !es->stopping) {
			char *m = xstrfmt("the host runner stopped: %s", es->runner_error);
			hr_fail_host(hr, "run", es->t_run ? es->t_run : es->t_build, m);
			free(m);
			return GO_ERR_REMOTE;
		}
		hr_run_done(hr, es->t_run ? es->t_run : es->t_build,
			    es->stopping ? "INFRA_ERROR" : NULL, es->stopping ? "interrupted" : NULL);
		return GO_OK;
	}
	hr_builds_done(hr, es->t_build, err);
	hr_steps_flush(hr, err, "not run: the host was lost during an earlier step");
	hr->failed = 1;
	hr_phase(hr, "run", "INFRA_ERROR", es->t_run ? es->t_run : es->t_build,
		 "the host was lost during a step");
	{
		int link = st == GO_ERR_SSH || st == GO_ERR_CONNECT || st == GO_ERR_HOSTKEY ||
			   st == GO_ERR_AUTH;
		char *m = link ? xstrfmt("the connection was lost during a step and could not be "
					 "re-established: %s", err)
			       : xstrdup(err);
		hr_host_status(hr, "failed", m);
		free(m);
	}
	return st;
}

enum go_status hr_execute(struct hostrun *hr)
{
	struct exec_state es;
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT, sig_script = STRBUF_INIT;
	struct strbuf manifest = STRBUF_INIT;
	struct remote_runner rr;
	int64_t budget_ms = 0, deadline;
	int starts = 0, starts_seen = 0, via_execd_noted = 0;
	char *execd_dir = NULL, *execd_sock = NULL;
	enum go_status st;

	memset(&es, 0, sizeof(es));
	es.hr = hr;
	journal_init(&es.j, 0);
	strbuf_init(&es.feed_err, 0);
	es.t_ship = es.t_build = time_mono_ms();
	hr->cur_step = -1;
	hr->build_rec = xcalloc((size_t)hr->plan.nbuilds + 1, sizeof(*hr->build_rec));
	live_set(hr->ctx->live, hr->index, "ship", hr->ctx->pack->content_id);
	st = write_plan(hr, &es, &text, &budget_ms, &err);
	if (st) {
		st = finish(hr, &es, st, err.buf);
		goto out;
	}
	memset(&rr, 0, sizeof(rr));
	blobs_manifest(hr->ctx->pack, &manifest);
	rr.manifest = manifest.buf;
	rr.blobs_dir = hr->plan.blobs_dir;
	rr.content_dir = hr->plan.content_dir;
	rr.run_dir = hr->plan.run_dir;
	rr.plan = text.buf;
	if (hr->probe_kept) {
		probe_sig_script(&sig_script, hr->h->cuda_home, hr->h->python, hr->h->gpu_index);
		rr.sig_script = sig_script.buf;
		rr.expect_sig = hr->info.sig;
	}
	if (hr->h->execd_idle_s > 0 && hr->workdir) {
		execd_dir = xstrfmt("%s/execd", hr->workdir);
		execd_sock = remote_execd_socket(execd_dir);
		if (!execd_sock)
			strbuf_addf(&hr->out, "  note: no execd on this host: '%s' is too long for a "
				    "Unix socket (commands go through the login shell)\n", execd_dir);
		else
			rr.execd_dir = execd_dir;
		rr.execd_idle_s = hr->h->execd_idle_s;
	}
	deadline = time_mono_ms() + budget_ms;
	for (;;) {
		int64_t left = deadline - time_mono_ms();
		int fresh_conn = !hr->conn;
		if (!hr->conn && (st = hr_reconnect(hr, &err)) != GO_OK)
			break;
		if (execd_sock && (fresh_conn || !starts_seen))
			ssh_use_execd(hr->conn, execd_sock);
		starts_seen = 1;
		journal_resync(&es.j);
		strbuf_reset(&err);
		remote_start_info_release(&es.info);
		st = remote_runner_follow(hr->conn, &rr, es.j.offset, on_bytes, &es,
					  left > 1000 ? (int)left : 1000, &es.info, &err);
		if (st == GO_ERR_INTERRUPTED && es.j.ended && !es.feed_st)
			st = GO_OK;   /* on_bytes stopped at the journal's end */
		if (!via_execd_noted && ssh_via_execd(hr->conn)) {
			strbuf_addstr(&hr->out, "  through the host's execd (no login shell)\n");
			via_execd_noted = 1;
		}
		if (execd_sock && es.info.execd[0] == '/' && !strcmp(es.info.execd, execd_sock))
			ssh_use_execd(hr->conn, execd_sock);   /* it runs now: the next commands use it */
		if (es.info.runner[0] && rr.expect_sig) {
			/* the host held to the kept probe; once the run has
			 * started it is never planned again */
			rr.sig_script = rr.expect_sig = NULL;
			hr->probe_kept = 0;
		}
		if (es.feed_st) {
			strbuf_reset(&err);
			strbuf_add(&err, es.feed_err.buf, es.feed_err.len);
			st = es.feed_st;
			break;
		}
		if (st == GO_ERR_NOT_FOUND && es.info.probe_stale && hr->probe_kept && !es.stopping) {
			/* the host changed since the kept probe: probe it, plan again */
			strbuf_addstr(&hr->out, "  the host changed since its last probe: probing it\n");
			probe_cache_drop(hr->h);
			rr.sig_script = rr.expect_sig = NULL;
			if ((st = replan(hr, &es, &text, &budget_ms, &err)) != GO_OK)
				break;
			rr.content_dir = hr->plan.content_dir;
			rr.blobs_dir = hr->plan.blobs_dir;
			rr.run_dir = hr->plan.run_dir;
			rr.plan = text.buf;
			deadline = time_mono_ms() + budget_ms;
			continue;
		}
		if (st == GO_ERR_NOT_FOUND && es.info.content_absent && !es.uploaded && !es.stopping) {
			/* only the files the host lacks: by content, named by their hash */
			char *tar = xstrfmt("%s/blobs.tar", hr->plan.content_dir);
			unsigned char *data = NULL;
			size_t len = 0;
			strbuf_reset(&err);
			st = blobs_tar(hr->ctx->pack, es.info.missing, es.info.nmissing, &data, &len, &err);
			if (st == GO_OK) {
				int64_t t0 = time_mono_ms();
				st = ssh_upload(hr->conn, data, len, tar, 0644, &es.sent, UPLOAD_TIMEOUT_MS,
						&err);
				es.upload_ms = time_mono_ms() - t0;
			}
			es.nblobs = es.info.nmissing;
			free(data);
			free(tar);
			es.uploaded = 1;
			if (st)
				break;
			continue;
		}
		if (st == GO_OK) {
			if (es.j.ended)
				break;
			/* the runner is gone without ending its journal (killed, or
			 * the host rebooted): the next follow starts it again */
			if (++starts >= MAX_RUNNER_STARTS) {
				st = go_fail(&err, GO_ERR_REMOTE,
					     "%s: the host runner in '%s' stopped %d times without finishing "
					     "its plan (see runner.log there)", hr->h->name,
					     hr->plan.run_dir, starts);
				break;
			}
			continue;
		}
		if (st == GO_ERR_INTERRUPTED && !es.stopping) {
			/* from now on nothing is started: only what ran is collected */
			rr.plan = NULL;
			rr.sig_script = rr.expect_sig = NULL;
			stop_runner(hr, &es);
			deadline = time_mono_ms() + KILL_FOLLOW_MS;
			continue;
		}
		if (es.stopping || time_mono_ms() >= deadline) {
			if (!es.stopping) {
				stop_runner(hr, &es);
				es.stopping = 0;
				st = go_fail(&err, GO_ERR_TIMEOUT,
					     "%s: the host's plan did not finish within %lld s (the sum of "
					     "its timeouts)", hr->h->name, (long long)(budget_ms / 1000));
			}
			break;
		}
		if (st != GO_ERR_SSH && st != GO_ERR_CONNECT && st != GO_ERR_TIMEOUT)
			break;   /* the remote command failed: not a link problem */
		/* the link dropped: reconnect, then follow on from the offset */
		ssh_disconnect(hr->conn);
		hr->conn = NULL;
	}
	st = finish(hr, &es, st, err.buf);
out:
	free_bids(hr, &es);
	free(execd_dir);
	free(execd_sock);
	free(es.runner_error);
	remote_start_info_release(&es.info);
	strbuf_release(&manifest);
	journal_release(&es.j);
	strbuf_release(&es.feed_err);
	strbuf_release(&text);
	strbuf_release(&err);
	strbuf_release(&sig_script);
	return st;
}
