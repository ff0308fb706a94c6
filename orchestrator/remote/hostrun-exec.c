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
#include "remote/diskspace.h"
#include "remote/gpuslots.h"
#include "remote/probecache.h"
#include "remote/runplan.h"
#include "core/jsonutil.h"
#include "core/strindex.h"
#include "core/timeutil.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

#define KILL_FOLLOW_MS 60000         /* collecting what an interrupt killed */
#define MAX_RUNNER_STARTS 4          /* a runner that keeps dying is an error */
#define PROBE_FIRST_MS 120000        /* a start that probes first, until it has planned */

struct exec_state {
	struct hostrun *hr;
	struct journal j;
	struct remote_start_info info;
	char **bids;                  /* per plan build: the runner's id, NULL when not run */
	int64_t t_ship, t_build, t_run;
	int ship_recorded;
	struct hr_ship ship;          /* what the starts carry (hostrun-ship.c) */
	int stopping;                 /* interrupted: the runner is being stopped */
	char runner_pid[64];          /* the host runner's pid, as a start last said ("" unknown) */
	char *runner_error;           /* runner_ended "error": its message */
	enum go_status feed_st;       /* a journal that cannot be read */
	struct strbuf feed_err;
	/* the start command and what it needs of the plan (prepare) */
	struct remote_runner rr;
	struct strbuf text;           /* the runner's plan */
	struct strbuf sig_script;     /* the kept probe's check */
	char *execd_dir, *execd_sock, *agent_dir;
	char *agent_bin;          /* the agent of this version there (agent_dir/gpuorch-agent-V) */
	int agent_noted;          /* "host runner: gpuorch-agent" said */
	int runner_recorded;      /* the host's "runner" is in the record */
	struct strindex step_ids; /* the plan's step ids (find_step), once asked */
	int step_ids_built;
	int via_execd_noted;      /* "through the host's execd" said */
	int64_t budget_ms, deadline;
	long long need_src, need_builds, need_out;   /* the disk it needs (diskspace.h), KiB */
	/* a start that probes first (hostrun-setup.c, hr_probe_take) */
	int64_t t_probe;
	int probe_failed;             /* its output was no probe: recorded */
	int stopped_after_probe;      /* interrupted between the probe and the start */
	int past_deadline;            /* on_bytes stopped it at es->deadline */
	enum go_status prep_st;       /* prepare() failed after the probe */
	struct strbuf prep_err;
};

/* The runner's plan: the whole of hr->plan (hostrun-plan.c); the ids of
 * the builds in es->bids. */
static enum go_status write_plan(struct hostrun *hr, struct exec_state *es, struct strbuf *text,
				 int64_t *budget_ms, struct strbuf *err)
{
	struct hostrun_plan_part all = { .all = 1, .build = -1, .step = -1, .gpu_lock = 1 };
	return hostrun_write_plan(hr, &all, &es->bids, text, budget_ms, err);
}

static void free_bids(struct hostrun *hr, struct exec_state *es)
{
	hostrun_plan_ids_free(hr, es->bids);
	es->bids = NULL;
}

/* What the start command needs of the plan: the runner's plan (es->text),
 * the host's directories, the kept probe's check, the execd, the budget. */
static enum go_status prepare(struct hostrun *hr, struct exec_state *es, struct strbuf *err)
{
	struct remote_runner *rr = &es->rr;
	enum go_status st;

	free(hr->build_rec);
	hr->build_rec = xcalloc((size_t)hr->plan.nbuilds + 1, sizeof(*hr->build_rec));
	strbuf_reset(&es->text);
	st = write_plan(hr, es, &es->text, &es->budget_ms, err);
	if (st)
		return st;
	rr->blobs_dir = hr->plan.blobs_dir;
	rr->content_dir = hr->plan.content_dir;
	rr->run_dir = hr->plan.run_dir;
	rr->plan = es->text.buf;
	rr->need_kib = disk_need_kib(&hr->plan, hr->ctx->pack, &es->need_src, &es->need_builds,
				     &es->need_out);
	strbuf_reset(&es->sig_script);
	rr->sig_script = rr->expect_sig = NULL;
	if (hr->probe_kept) {
		probe_sig_script(&es->sig_script, hr->h->cuda_home, hr->h->python, hr->h->gpu_index);
		rr->sig_script = es->sig_script.buf;
		rr->expect_sig = hr->info.sig;
		rr->sig_cuda_home = hr->h->cuda_home;
		rr->sig_python = hr->h->python;
		rr->sig_gpu = hr->h->gpu_index;
	}
	free(es->execd_dir);
	free(es->execd_sock);
	free(es->agent_dir);
	es->execd_dir = es->execd_sock = NULL;
	rr->execd_dir = NULL;
	/* the host agent (docs/runner.md): built there once, then it runs the runs */
	es->agent_dir = hr->workdir ? xstrfmt("%s/agent", hr->workdir) : NULL;
	rr->agent_dir = es->agent_dir;
	free(es->agent_bin);
	es->agent_bin = es->agent_dir ? xstrfmt("%s/gpuorch-agent-%s", es->agent_dir,
						remote_agent_version()) : NULL;
	rr->agent_held = shipledger_agent_held(hr->h, es->agent_bin);
	/* GPUORCH_NO_ATTACH=1: start.sh for every start (remote.h, no_attach) */
	rr->no_attach = getenv("GPUORCH_NO_ATTACH") && !strcmp(getenv("GPUORCH_NO_ATTACH"), "1");
	if (hr->h->execd_idle_s > 0 && hr->workdir) {
		es->execd_dir = xstrfmt("%s/execd", hr->workdir);
		es->execd_sock = remote_execd_socket(es->execd_dir);
		if (!es->execd_sock)
			strbuf_addf(&hr->out, "  note: no execd on this host: '%s' is too long for a "
				    "Unix socket (commands go through the login shell)\n", es->execd_dir);
		else
			rr->execd_dir = es->execd_dir;
		rr->execd_idle_s = hr->h->execd_idle_s;
	}
	es->deadline = time_mono_ms() + es->budget_ms;
	es->t_ship = es->t_build = time_mono_ms();
	live_set(hr->ctx->live, hr->index, "ship", hr->ctx->pack->content_id);
	return GO_OK;
}

/* The start command's probe is in (remote.h, on_probe): plan from it, then
 * the command is told the rest. */
static int on_probe(const char *out, struct remote_runner *rr, void *ctx)
{
	struct exec_state *es = ctx;
	struct hostrun *hr = es->hr;

	(void)rr;
	if (hr_probe_take(hr, out, es->t_probe) != GO_OK) {
		es->probe_failed = 1;
		return 1;
	}
	hostrun_make_plan(hr, hr->info.gpu_reason, hr->info.gpu_name);
	if (hr_interrupted(hr)) {
		es->stopped_after_probe = 1;
		return 1;
	}
	es->prep_st = prepare(hr, es, &es->prep_err);
	return es->prep_st != GO_OK;
}

/* The start command found blobs missing and waits for them (remote.h,
 * on_missing): what it carried so far arrived; it gets the ones it names. */
static int on_missing(char *const *hashes, int n, const unsigned char **tar, size_t *len,
		      void *ctx, struct strbuf *err)
{
	struct exec_state *es = ctx;

	hr_ship_arrived(&es->ship);
	if (hr_ship_missing(es->hr, &es->ship, hashes, n, err) != GO_OK ||
	    hr_ship_tar(es->hr, &es->ship, err) != GO_OK)
		return 1;
	es->ship.t_call = time_mono_ms();
	es->rr.blobs = NULL;   /* what went before is freed; a later start carries the new tar */
	*tar = es->ship.tar;
	*len = es->ship.tar_len;
	return 0;
}

/* The kept probe did not hold: probe the host afresh and make the plan and
 * the runner's plan again (nothing ran: the start command stopped first). */
static enum go_status replan(struct hostrun *hr, struct exec_state *es, struct strbuf *err)
{
	enum go_status st;
	free_bids(hr, es);
	if (hr->have_plan) {
		plan_release(&hr->plan);
		hr->have_plan = 0;
	}
	st = hr_probe(hr, 1);
	if (st != GO_OK)
		return go_fail(err, st, "%s", "the probe failed (see the probe phase)");
	hostrun_make_plan(hr, hr->info.gpu_reason, hr->info.gpu_name);
	return prepare(hr, es, err);
}

static void record_ship(struct hostrun *hr, struct exec_state *es)
{
	es->ship_recorded = 1;
	es->ship.agent_sent += es->info.agent_src_sent;   /* this start's, counted here once */
	es->info.agent_src_sent = 0;
	/* into the ledger now, not when the start command ends (at the run's
	 * end): a controller killed before that knew of nothing there */
	if (es->info.content_present || es->info.content_unpacked)
		hr_ship_host_has(hr, &es->ship);   /* at the start, not the end */
	hr_ship_record(hr, &es->ship, !es->info.content_unpacked, es->t_ship);
	es->t_build = time_mono_ms();
}

/* The plan step of a journal event's id, or -1: a lookup in an index of
 * the plan's ids (made on the first event; the plan does not change), never
 * a walk over all steps per event (20,000 steps made that quadratic). */
static int find_step(struct exec_state *es, const char *id)
{
	const struct hostrun *hr = es->hr;
	if (!hr->have_plan)
		return -1;
	if (!es->step_ids_built) {
		const char **ids = xmalloc(sizeof(*ids) * (size_t)(hr->plan.nsteps + 1));
		int i;
		for (i = 0; i < hr->plan.nsteps; i++)
			ids[i] = hr->plan.steps[i].id;
		strindex_build(&es->step_ids, ids, hr->plan.nsteps);
		free(ids);
		es->step_ids_built = 1;
	}
	return strindex_find(&es->step_ids, id);
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
		if ((i = find_step(es, e->id)) >= 0) {
			hr->cur_step = i;
			hr->cur_started_t = e->t;
			live_set(hr->ctx->live, hr->index, "run", e->id);
		}
	} else if (is(e, "step_end") || is(e, "step_skipped")) {
		if ((i = find_step(es, e->id)) >= 0)
			hr_step_ended(hr, i, e);
	} else if (is(e, "probe_later")) {
		const char *text = hr_ev_str(e->json, "probe_text");
		if (text)
			hr_probe_later(hr, text);
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
	if (time_mono_ms() >= es->deadline) {
		es->past_deadline = 1;   /* the plan's bound (set once planned) */
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
			    es->stopping ? ST_INFRA_ERROR : ST_NONE, es->stopping ? "interrupted" : NULL);
		return GO_OK;
	}
	hr_builds_done(hr, es->t_build, err);
	hr_steps_flush(hr, err, "not run: the host was lost during an earlier step");
	hr->failed = 1;
	hostrun_phase(hr, "run", ST_INFRA_ERROR, es->t_run ? es->t_run : es->t_build,
		 "the host was lost during a step");
	{
		int link = st == GO_ERR_SSH || st == GO_ERR_CONNECT || st == GO_ERR_HOSTKEY ||
			   st == GO_ERR_AUTH;
		char *pid = es->runner_pid[0] ? xstrfmt(" (pid %s)", es->runner_pid) : xstrdup("");
		char *m = link ? xstrfmt("the connection was lost during a step and could not be "
					 "re-established: %s; the host runner%s goes on alone in %s: "
					 "'gpuorch run SPEC --hosts FILE --resume %s' collects what it "
					 "finishes and runs again what did not end", err, pid,
					 hr->plan.run_dir, hr->ctx->run_id)
			       : xstrdup(err);
		free(pid);
		hostrun_status(hr, HOST_FAILED, m);
		free(m);
	}
	return st;
}

/* A start that probes first ended before its probe did: the host failed
 * in its probe, or the run was interrupted; 1 when the loop is over (*st). */
static int probe_first_ended(struct hostrun *hr, struct exec_state *es, enum go_status *st,
			     struct strbuf *err)
{
	if (es->probe_failed) {
		*st = GO_ERR_REMOTE;   /* hr_probe_take recorded it */
		return 1;
	}
	if (es->stopped_after_probe || (*st == GO_ERR_INTERRUPTED && !es->past_deadline)) {
		/* planned or not, nothing started */
		hr_skip_all(hr, "not run: the run was interrupted");
		*st = GO_OK;
		return 1;
	}
	if (es->prep_st) {
		*st = es->prep_st;
		strbuf_reset(err);
		strbuf_add(err, es->prep_err.buf, es->prep_err.len);
		return 0;   /* finish() records it */
	}
	if (!es->info.probe_unanswered)
		return 0;
	if (es->past_deadline)
		*st = go_fail(err, GO_ERR_TIMEOUT, "%s: the host probe did not finish within %lld s",
			      hr->h->name, (long long)(PROBE_FIRST_MS / 1000));
	if (*st == GO_ERR_SSH || *st == GO_ERR_CONNECT)
		return 0;   /* the link dropped: reconnect, probe again */
	hr_fail_host(hr, "probe", es->t_probe, err->buf);
	return 1;
}

/* Once a host-run: how the host ran it (the agent, the execd), said and
 * recorded as soon as a runner answered a start. */
static void note_how(struct hostrun *hr, struct exec_state *es)
{
	if (es->info.runner[0] && !es->runner_recorded) {
		hostrun_runner(hr, es->info.agent[0] ? "gpuorch-agent" : "runner.sh");
		es->runner_recorded = 1;
	}
	if (es->info.agent[0] && !es->agent_noted) {
		strbuf_addstr(&hr->out, "  host runner: gpuorch-agent (C, built on the host)\n");
		es->agent_noted = 1;
	}
	es->ship.agent_sent += es->info.agent_src_sent;   /* counted once: record_ship too */
	es->info.agent_src_sent = 0;
	/* the agent built there or not: the next start carries its sources
	 * only when it is not */
	if (es->info.runner[0] && es->agent_bin) {
		int built = !strcmp(es->info.agent, es->agent_bin);
		if (built != es->rr.agent_held)
			shipledger_agent_seen(hr->h, built ? es->agent_bin : NULL);
		es->rr.agent_held = built;
	}
	if (!es->via_execd_noted && ssh_via_execd(hr->conn)) {
		strbuf_addstr(&hr->out, "  through the host's execd (no login shell)\n");
		es->via_execd_noted = 1;
	}
}

static void exec_state_init(struct exec_state *es, struct hostrun *hr, struct strbuf *manifest)
{
	memset(es, 0, sizeof(*es));
	es->hr = hr;
	journal_init(&es->j, 0);
	strbuf_init(&es->feed_err, 0);
	strbuf_init(&es->text, 0);
	strbuf_init(&es->sig_script, 0);
	strbuf_init(&es->prep_err, 0);
	es->t_ship = es->t_build = time_mono_ms();
	hr->cur_step = -1;
	blobs_manifest(hr->ctx->pack, manifest);
	es->rr.manifest = manifest->buf;
	/* --resume: what was stopped or lost before it ended runs again */
	es->rr.reopen = hr->ctx->resumed != NULL;
	es->rr.on_missing = on_missing;
	es->rr.ctx = es;
}

static void exec_state_release(struct exec_state *es)
{
	hr_ship_end(&es->ship);
	free_bids(es->hr, es);
	free(es->execd_dir);
	free(es->agent_dir);
	free(es->agent_bin);
	free(es->execd_sock);
	free(es->runner_error);
	remote_start_info_release(&es->info);
	journal_release(&es->j);
	strindex_release(&es->step_ids);
	strbuf_release(&es->feed_err);
	strbuf_release(&es->text);
	strbuf_release(&es->sig_script);
	strbuf_release(&es->prep_err);
}

/* What a start's answer says of the blobs it carried. */
static void ship_outcome(struct hostrun *hr, struct exec_state *es)
{
	if (es->info.content_absent || es->info.content_present || es->info.content_unpacked)
		hr_ship_arrived(&es->ship);   /* else a lost link: it goes again */
	if (es->info.content_present || es->info.content_unpacked)
		hr_ship_host_has(hr, &es->ship);
}

enum go_status hr_execute(struct hostrun *hr)
{
	struct exec_state es;
	struct strbuf err = STRBUF_INIT, manifest = STRBUF_INIT, probe_text = STRBUF_INIT;
	int starts = 0, starts_seen = 0, probe_first_done = 0;
	enum go_status st;

	exec_state_init(&es, hr, &manifest);
	if (hr->probe_pending) {
		/* one command: the probe, then (planned from it) the run */
		hr_probe_text(hr, &probe_text);
		es.rr.probe_text = probe_text.buf;
		es.rr.on_probe = on_probe;
		es.deadline = time_mono_ms() + PROBE_FIRST_MS;
		live_set(hr->ctx->live, hr->index, "probe", "GPU, driver, CUDA tools");
	} else if ((st = prepare(hr, &es, &err)) != GO_OK) {
		st = finish(hr, &es, st, err.buf);
		goto out;
	}
	if ((st = hr_ship_begin(hr, &es.ship, &err)) != GO_OK) {
		st = finish(hr, &es, st, err.buf);
		goto out;
	}
	for (;;) {
		int64_t left = es.deadline - time_mono_ms();
		int fresh_conn = !hr->conn, probing = es.rr.probe_text != NULL;
		if (!hr->conn && (st = hr_reconnect(hr, &err)) != GO_OK) {
			if (!probing)
				break;
			hr_fail_host(hr, "probe", es.t_probe ? es.t_probe : es.t_ship, err.buf);
			goto out;   /* never planned: nothing else to record */
		}
		if (es.execd_sock && (fresh_conn || !starts_seen))
			ssh_use_execd(hr->conn, es.execd_sock);
		starts_seen = 1;
		journal_resync(&es.j);
		strbuf_reset(&err);
		remote_start_info_release(&es.info);
		es.t_probe = time_mono_ms();
		es.past_deadline = 0;
		if ((st = hr_ship_prepare(hr, &es.ship, &err)) != GO_OK)
			break;
		hr_ship_sending(&es.ship, &es.rr);
		st = remote_runner_follow(hr->conn, &es.rr, es.j.offset, on_bytes, &es,
					  left > 1000 ? (int)left : 1000, &es.info, &err);
		if (es.past_deadline && st == GO_ERR_INTERRUPTED)
			st = GO_ERR_TIMEOUT;
		if (probing && !es.info.probe_unanswered && !es.probe_failed && !es.stopped_after_probe &&
		    !es.prep_st) {
			es.rr.probe_text = NULL;   /* probed and planned: never again */
			probe_first_done = 1;
		}
		if (probing && !probe_first_done) {
			if (probe_first_ended(hr, &es, &st, &err))
				goto out;
			if (es.prep_st)
				break;
			ssh_disconnect(hr->conn);
			hr->conn = NULL;
			continue;
		}
		ship_outcome(hr, &es);
		if (st == GO_ERR_INTERRUPTED && es.j.ended && !es.feed_st)
			st = GO_OK;   /* on_bytes stopped at the journal's end */
		note_how(hr, &es);
		if (es.execd_sock && es.info.execd[0] == '/' && !strcmp(es.info.execd, es.execd_sock))
			ssh_use_execd(hr->conn, es.execd_sock);   /* it runs now: the next commands use it */
		if (es.info.runner[0] && es.rr.reopen) {
			es.rr.reopen = 0;   /* once: the runner has started since */
			if (es.info.reopened > 0)
				strbuf_addf(&hr->out, "  resumed: %d build%s and step%s stopped or lost "
					    "before they ended run again\n", es.info.reopened,
					    es.info.reopened == 1 ? "" : "s", es.info.reopened == 1 ? "" : "s");
		}
		if (!strncmp(es.info.runner, "started ", 8) || !strncmp(es.info.runner, "running ", 8))
			snprintf(es.runner_pid, sizeof(es.runner_pid), "%.40s", es.info.runner + 8);
		if (es.info.runner[0] && es.rr.expect_sig) {
			/* the host held to the kept probe; once the run has
			 * started it is never planned again */
			es.rr.sig_script = es.rr.expect_sig = NULL;
			hr->probe_kept = 0;
		}
		if (es.info.disk_short_kib) {
			/* nothing started: the host has not the room the run needs */
			st = go_fail(&err, GO_ERR_REMOTE,
				     "not enough free disk on '%s': %lld KiB free in %s, the run needs "
				     "about %lld KiB (its sources twice %lld + builds %lld + step outputs "
				     "%lld; docs/runner.md, \"Disk\"): free space there (gpuorch hosts "
				     "clean) or give the host a work directory on a larger file system; "
				     "nothing was started", hr->h->name, es.info.disk_short_kib - 1,
				     hr->workdir ? hr->workdir : hr->plan.run_dir, es.rr.need_kib,
				     es.need_src, es.need_builds, es.need_out);
			break;
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
			es.rr.sig_script = es.rr.expect_sig = NULL;
			if ((st = replan(hr, &es, &err)) != GO_OK)
				break;
			continue;
		}
		if (st == GO_ERR_NOT_FOUND && es.info.content_absent && !es.ship.asked && !es.stopping) {
			/* the next start carries the files the host lacks */
			strbuf_reset(&err);
			if ((st = hr_ship_missing(hr, &es.ship, es.info.missing, es.info.nmissing, &err)))
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
			es.rr.plan = NULL;
			es.rr.sig_script = es.rr.expect_sig = NULL;
			stop_runner(hr, &es);
			es.deadline = time_mono_ms() + KILL_FOLLOW_MS;
			continue;
		}
		if (es.stopping || time_mono_ms() >= es.deadline) {
			if (!es.stopping) {
				stop_runner(hr, &es);
				es.stopping = 0;
				st = go_fail(&err, GO_ERR_TIMEOUT,
					     "%s: the host's plan did not finish within %lld s (the sum of "
					     "its timeouts)", hr->h->name, (long long)(es.budget_ms / 1000));
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
	exec_state_release(&es);
	strbuf_release(&manifest);
	strbuf_release(&probe_text);
	strbuf_release(&err);
	return st;
}
