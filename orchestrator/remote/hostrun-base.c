/* hostrun-base.c -- what a host's phases stand on: its entries in the run
 * record (phases, status, saves) and its logs, for the Slurm runner too
 * (hostrun.h); reconnecting a dropped link, and how an item's end maps to a
 * record status (see hostrun.c). */
#include "remote/hostrun-int.h"
#include "core/jsonutil.h"
#include "store/runwrite.h"
#include "remote/remote.h"
#include "core/timeutil.h"
#include "core/trace.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/banned.h"

double hr_secs_since(int64_t t0)
{
	return (double)(time_mono_ms() - t0) / 1000.0;
}

void hostrun_save(struct hostrun *hr)
{
	struct strbuf err = STRBUF_INIT;
	if (hr->save_held) {
		hr->save_pending = 1;   /* hostrun_release_saves saves once for all */
		return;
	}
	hr->save_pending = 0;
	if (record_save_host(hr->ctx->rec, hr->index, hr->hj, &err) != GO_OK)
		strbuf_addf(&hr->out, "  warning: cannot save the run record: %s\n", err.buf);
	strbuf_release(&err);
}

void hostrun_hold_saves(struct hostrun *hr)
{
	hr->save_held++;
}

void hostrun_release_saves(struct hostrun *hr)
{
	if (hr->save_held > 0 && --hr->save_held == 0 && hr->save_pending)
		hostrun_save(hr);
}

void hostrun_phase(struct hostrun *hr, const char *name, enum item_status status, int64_t t0,
	      const char *detail)
{
	runw_host_phase(hr->ctx->rec, hr->index, name, status, hr_secs_since(t0), detail);
	hostrun_save(hr);
}

void hostrun_stamp(struct hostrun *hr, enum runw_stamp which)
{
	runw_host_stamp(hr->ctx->rec, hr->index, which, time(NULL));
	hostrun_save(hr);
}

void hostrun_status(struct hostrun *hr, enum host_status status, const char *error)
{
	runw_host_status(hr->ctx->rec, hr->index, status);
	runw_host_error(hr->ctx->rec, hr->index, error);
	hostrun_save(hr);
}

void hostrun_runner(struct hostrun *hr, const char *runner)
{
	runw_host_runner(hr->ctx->rec, hr->index, runner);
	hostrun_save(hr);
}

void hr_fail_host(struct hostrun *hr, const char *phase_name, int64_t t0, const char *msg)
{
	hr->failed = 1;
	hostrun_phase(hr, phase_name, ST_INFRA_ERROR, t0, msg);
	strbuf_addf(&hr->out, "  %s failed: %s\n", phase_name, msg);
	hostrun_status(hr, hr->have_info ? HOST_FAILED : HOST_UNREACHABLE, msg);
}

int hr_interrupted(struct hostrun *hr)
{
	if (*hr->ctx->interrupted)
		hr->interrupted = 1;
	return hr->interrupted;
}

/* Re-establish a lost connection, for up to reconnect_timeout_s. */
enum go_status hr_reconnect(struct hostrun *hr, struct strbuf *err)
{
	struct ssh_opts o;
	int64_t deadline = time_mono_ms() + (int64_t)hr->ctx->reconnect_timeout_s * 1000;
	int64_t backoff = 500;
	enum go_status st = GO_ERR_CONNECT;

	if (hr_interrupted(hr))
		return go_fail(err, GO_ERR_INTERRUPTED, "interrupted");
	ssh_disconnect(hr->conn);
	hr->conn = NULL;
	host_ssh_opts(hr->h, 0, &o);
	o.persist_s = hr->h->persist_s;
	/* err: what the lost command said (a user wants the why, not only the what) */
	strbuf_addf(&hr->out, "  connection lost%s%.300s%s; reconnecting (up to %d s)\n",
		    err->len ? " (" : "", err->buf, err->len ? ")" : "", hr->ctx->reconnect_timeout_s);
	live_set(hr->ctx->live, hr->index, "reconnect", err->buf);
	while (!hr_interrupted(hr)) {
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
		trace_wait(hr->h->name, "reconnect backoff", backoff);
		if (backoff < 4000)
			backoff *= 2;
	}
	if (hr_interrupted(hr))
		return go_fail(err, GO_ERR_INTERRUPTED, "interrupted");
	{
		char *why = xstrdup(err->buf);
		go_fail(err, st == GO_OK ? GO_ERR_CONNECT : st,
			"lost the connection to '%s' and could not reconnect within %d s: %s",
			hr->h->name, hr->ctx->reconnect_timeout_s, why);
		free(why);
	}
	return st == GO_OK ? GO_ERR_CONNECT : st;
}

/* Map how a remote process ended to a record status and a reason. */
enum item_status hr_end_status(struct hostrun *hr, const struct remote_status *rs,
			       int lock_wait_s, struct strbuf *reason)
{
	switch (rs->end) {
	case REMOTE_KILLED:
		if (hr_interrupted(hr)) {
			strbuf_addstr(reason, "interrupted");
			return ST_INFRA_ERROR;
		}
		strbuf_addstr(reason, "stopped by the host runner before it ended (an earlier build "
				      "failed, or the runner was stopped)");
		return ST_KILLED;
	case REMOTE_EXITED:
		if (rs->exit_code == 0)
			return ST_PASS;
		strbuf_addf(reason, "exit code %d", rs->exit_code);
		if (rs->exit_code == 127)
			strbuf_addstr(reason, " (a command was not found: SSH commands run with the "
					      "host's non-login PATH; name it by its absolute path "
					      "or put it on that PATH)");
		return ST_FAIL;
	case REMOTE_SIGNALED:
		strbuf_addf(reason, "killed by signal %d", rs->signal);
		return ST_KILLED;
	case REMOTE_TIMED_OUT:
		strbuf_addstr(reason, "killed at its timeout, with its whole process group");
		return ST_TIMEOUT;
	case REMOTE_LOCK_TIMEOUT:
		strbuf_addf(reason, "the GPU stayed busy with another timed job for %d s",
			    lock_wait_s);
		return ST_INFRA_ERROR;
	case REMOTE_VANISHED:
		strbuf_addstr(reason, "the step's processes vanished without an exit status "
				      "(host rebooted or processes killed from outside)");
		return ST_INFRA_ERROR;
	case REMOTE_RUNNING:
		break;
	}
	strbuf_addstr(reason, "still running");
	return ST_INFRA_ERROR;
}

const char *hr_ev_str(const cJSON *ev, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(ev, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

void hostrun_add_log(struct hostrun *hr, const char *rel, const char *data, size_t len)
{
	struct strbuf err = STRBUF_INIT;
	if (record_write_file(hr->ctx->rec, rel, data ? data : "", data ? len : 0, &err) != GO_OK)
		strbuf_addf(&hr->out, "  warning: %s\n", err.buf);
	strbuf_release(&err);
}

char *hostrun_log_rel(struct hostrun *hr, const char *name, const char *ext)
{
	char *hs = plan_slug(hr->h->name, 60), *ns = plan_slug(name, 140);
	char *rel = xstrfmt("logs/%s/%s.%s", hs, ns, ext);
	free(hs);
	free(ns);
	return rel;
}

