/* lifecycle.c -- bring an instance up and take it down (lifecycle.h).
 *
 * Every wait is bounded (start_timeout_s, ssh_timeout_s) and polls the
 * provider every poll_s. Bringing up honours Ctrl-C; taking down does not:
 * an interrupted run must still stop what it started. A host key that does
 * not match is never retried: a re-created instance with a new key is
 * refused unless the user allows it (--accept-new-host-key adds unknown
 * keys only, as everywhere in gpuorch). */
#include "cloud/lifecycle.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cloud/guard.h"
#include "cloud/instance-ledger.h"
#include "core/hash.h"
#include "core/jsonutil.h"
#include "core/timeutil.h"
#include "transport/ssh.h"
#include "core/trace.h"
#include "core/banned.h"

enum go_status life_load(struct hosts *hs, struct inst_life **out, struct strbuf *err)
{
	struct inst_life *v = xcalloc((size_t)(hs->n > 0 ? hs->n : 1), sizeof(*v));
	int i;
	for (i = 0; i < hs->n; i++) {
		enum go_status st = instance_load(&hs->v[i], hs->path, &v[i].in, err);
		v[i].h = &hs->v[i];
		if (st != GO_OK) {
			life_free(v, hs->n);
			*out = NULL;
			return st;
		}
	}
	*out = v;
	return GO_OK;
}

void life_free(struct inst_life *v, int n)
{
	int i;
	if (!v)
		return;
	for (i = 0; i < n; i++) {
		instance_free(v[i].in);
		free(v[i].error);
		cJSON_Delete(v[i].earlier);
	}
	free(v);
}

static enum go_status remember(struct inst_life *L, enum go_status st, struct strbuf *err)
{
	if (st != GO_OK && st != GO_ERR_INTERRUPTED) {
		free(L->error);
		L->error = xstrdup(err->buf);
	}
	return st;
}

/* A progress line: into log, and at once to L->progress where set (an id
 * is shown the moment it exists). */
__attribute__((format(printf, 3, 4)))
static void say(struct inst_life *L, struct strbuf *log, const char *fmt, ...)
{
	va_list ap;
	size_t at = log->len;
	va_start(ap, fmt);
	strbuf_vaddf(log, fmt, ap);
	va_end(ap);
	if (L->progress) {
		fputs(log->buf + at, L->progress);
		fflush(L->progress);
		strbuf_setlen(log, at);   /* shown already */
	}
}

enum go_status life_check(struct inst_life *L, struct strbuf *err)
{
	if (!L->in || !L->in->ops->check)
		return GO_OK;
	return L->in->ops->check(L->in, err);
}

static int interrupted(const struct inst_life *L, int honour)
{
	return honour && L->interrupted && *L->interrupted;
}

/* Poll until the state is one of want (a bit mask), within timeout_s. */
static enum go_status wait_state(struct inst_life *L, unsigned want, int timeout_s,
				 const char *what, int honour_signals, enum inst_state *last,
				 struct strbuf *err)
{
	int64_t deadline = time_mono_ms() + (int64_t)timeout_s * 1000;
	enum inst_state s = INST_UNKNOWN;
	for (;;) {
		enum go_status st = L->in->ops->status(L->in, &s, err);
		if (st != GO_OK)
			return st;
		*last = s;
		if (want & (1u << s))
			return GO_OK;
		if (interrupted(L, honour_signals))
			return go_fail(err, GO_ERR_INTERRUPTED, "%s: interrupted", L->h->name);
		if (time_mono_ms() >= deadline)
			return go_fail(err, GO_ERR_TIMEOUT,
				       "%s: the instance is still %s %d s after %s (\"start_timeout_s\")",
				       L->h->name, inst_state_name(s), timeout_s, what);
		trace_wait(L->h->name, "instance state poll", (int64_t)(L->in->poll_s * 1000));
	}
}

/* This command's instance start in the run's ledger (end: 0 while it runs). */
static void note_run(struct inst_life *L, time_t end, const char *how)
{
	struct strbuf e = STRBUF_INIT;
	const char *id = L->in->ops->id ? L->in->ops->id(L->in) : NULL;
	if (L->run_id && L->t_start_req)
		ledger_run_note(L->run_id, L->h->name, L->t_start_req, id, L->in->price_per_hour, end,
				how, &e);
	strbuf_release(&e);
}

/* The instances the run used before this controller (a resumed run):
 * into L->earlier with their time and cost. One that was left without an
 * end (the controller was killed) and is not the one taken up now ended at
 * the latest now: "seen". cont: the open entry this command continues
 * (an adopted instance, or one still running), whose start is taken. */
static void take_history(struct inst_life *L, int cont, struct strbuf *log)
{
	cJSON *list, *x;
	const char *id = L->in->ops->id ? L->in->ops->id(L->in) : NULL;
	time_t now = time(NULL);
	if (!L->run_id)
		return;
	list = ledger_run_list(L->run_id, L->h->name);
	cJSON_ArrayForEach(x, list) {
		time_t t0 = (time_t)json_num(x, "start_requested_epoch", 0), t1;
		const char *xid = json_str(x, "instance_id"), *how = json_str(x, "end");
		double price = json_num(x, "price_per_hour", 0), billed;
		char ts[32];
		cJSON *e;
		if (how && !strcmp(how, "not launched"))
			continue;
		if (!json_has_num(x, "end_epoch") && cont &&
		    (!L->in->launch || (id && xid && !strcmp(id, xid)))) {
			L->started = 1;   /* the same instance, on: billed from its start */
			L->t_start_req = t0;
			cont = 0;
			continue;
		}
		if (json_has_num(x, "end_epoch")) {
			t1 = (time_t)json_num(x, "end_epoch", 0);
		} else {
			struct strbuf ignored = STRBUF_INIT;
			t1 = now;
			how = "seen";
			ledger_run_note(L->run_id, L->h->name, t0, xid, price, t1, how, &ignored);
			strbuf_release(&ignored);
		}
		billed = t1 > t0 ? (double)(t1 - t0) : 0;
		if (!L->earlier)
			L->earlier = cJSON_CreateArray();
		e = cJSON_CreateObject();
		json_add_str(e, "instance_id", xid);
		time_iso8601(t0, ts);
		json_add_str(e, "start_requested_at", ts);
		time_iso8601(t1, ts);
		json_add_str(e, "ended_at", ts);
		json_add_str(e, "end", how);   /* "confirmed", or "seen": ended by then at the latest */
		json_add_num(e, "billed_s", billed);
		json_add_num(e, "price_per_hour", price);
		json_add_num(e, "cost", billed / 3600.0 * price);
		cJSON_AddItemToArray(L->earlier, e);
		L->earlier_cost += billed / 3600.0 * price;
		strbuf_addf(log, "%s: this run used instance %s before (%.0f s, %s)\n", L->h->name,
			    xid ? xid : "(started)", billed,
			    how && !strcmp(how, "confirmed") ? "ended" : "seen ended");
	}
	cJSON_Delete(list);
}

static enum go_status start_it(struct inst_life *L, struct strbuf *log, struct strbuf *err)
{
	enum go_status st;
	enum inst_state s;
	L->t_start_req = time(NULL);
	L->started = 1;
	if (ledger_note_start(L->h->name, L->in->ops->name, L->in->price_per_hour, L->t_start_req,
			      L->in->launch ? L->in->ops->id(L->in) : NULL, L->run_id, NULL,
			      err) != GO_OK)
		strbuf_addf(log, "%s: warning: %s\n", L->h->name, err->buf);
	note_run(L, 0, NULL);
	say(L, log, "%s: starting the instance (%s)\n", L->h->name, L->in->ops->name);
	st = L->in->ops->start(L->in, err);
	if (st != GO_OK)
		return st;
	st = wait_state(L, 1u << INST_RUNNING, L->in->start_timeout_s, "the start", 1, &s, err);
	if (st == GO_OK)
		L->t_running = time(NULL);
	return st;
}

/* The launch's idempotency token, derived from the run and the host (and
 * how many instances the run launched for the host before: a resumed run
 * that needs a new one gets a new token); `hosts up` has no run: its own
 * moment. The same launch asked for again gets the same instance. */
static char *launch_token(const struct inst_life *L)
{
	char hex[SHA256_HEX_LEN + 1];
	char *seed, *tok;
	if (L->run_id) {
		cJSON *prev = ledger_run_list(L->run_id, L->h->name);
		seed = xstrfmt("gpuorch-launch\n%s\n%s\n%d", L->run_id, L->h->name,
			       cJSON_GetArraySize(prev));
		cJSON_Delete(prev);
	} else {
		seed = xstrfmt("gpuorch-launch\nhosts-up\n%s\n%ld\n%ld", L->h->name,
			       (long)time(NULL), (long)getpid());
	}
	sha256_hex(seed, strlen(seed), hex);
	tok = xstrfmt("gpuorch-%.40s", hex);
	free(seed);
	return tok;
}

/* RunInstances (or the provider's like): a new instance, waited for until it
 * runs. The ledger has the token before the request goes out: an answer
 * that never comes (lost, or this process killed) leaves something to find
 * the instance by. */
static enum go_status launch_it(struct inst_life *L, struct strbuf *log, struct strbuf *err)
{
	struct instance *in = L->in;
	enum go_status st;
	enum inst_state s;
	L->t_start_req = time(NULL);
	L->started = 1;
	L->launched = 1;
	free(in->launch_token);
	in->launch_token = launch_token(L);
	in->run_id = L->run_id;
	if (ledger_note_start(L->h->name, in->ops->name, in->price_per_hour, L->t_start_req, NULL,
			      L->run_id, in->launch_token, err) != GO_OK)
		strbuf_addf(log, "%s: warning: %s\n", L->h->name, err->buf);
	note_run(L, 0, NULL);
	say(L, log, "%s: launching an instance (%s, token %s)\n", L->h->name, in->ops->name,
	    in->launch_token);
	st = in->ops->launch(in, err);
	if (st != GO_OK) {
		/* did it launch all the same? only a sure "none" forgets the token */
		struct strbuf e2 = STRBUF_INIT;
		enum go_status fst = in->ops->find_launched
			? in->ops->find_launched(in, in->launch_token, &e2) : GO_ERR_NOT_FOUND;
		if (fst == GO_ERR_NOT_FOUND) {
			L->started = L->launched = 0;
			ledger_note_stop(L->h->name, NULL, &e2);
			note_run(L, L->t_start_req, "not launched");
		} else if (fst != GO_OK) {
			struct strbuf msg = STRBUF_INIT;
			strbuf_addf(&msg, "%s; it may have launched an instance all the same (tagged "
				    "gpuorch:launch=%s): 'gpuorch hosts status' lists it, the next run "
				    "or 'gpuorch hosts down' finds and ends it", err->buf,
				    in->launch_token);
			go_fail(err, st, "%s", msg.buf);
			strbuf_release(&msg);
		}
		strbuf_release(&e2);
		if (fst != GO_OK)
			return st;
		strbuf_reset(err);
	}
	say(L, log, "%s: launched %s\n", L->h->name, in->ops->id(in));
	/* the ledger knows it at once: Ctrl-C, a failure or a later 'hosts down' ends it */
	if (ledger_note_start(L->h->name, in->ops->name, in->price_per_hour, L->t_start_req,
			      in->ops->id(in), L->run_id, in->launch_token, err) != GO_OK)
		strbuf_addf(log, "%s: warning: %s\n", L->h->name, err->buf);
	note_run(L, 0, NULL);
	st = wait_state(L, 1u << INST_RUNNING, in->start_timeout_s, "the launch", 1, &s, err);
	if (st == GO_OK)
		L->t_running = time(NULL);
	return st;
}

static enum go_status wait_ssh(struct inst_life *L, int accept_new, int arm_guard,
			       struct strbuf *log, struct strbuf *err)
{
	int64_t deadline = time_mono_ms() + (int64_t)L->in->ssh_timeout_s * 1000;
	struct strbuf last = STRBUF_INIT;
	enum go_status st;
	for (;;) {
		struct ssh_opts o;
		struct ssh_conn *c = NULL;
		int64_t left = deadline - time_mono_ms();
		host_ssh_opts(L->h, accept_new, &o);
		if (left < 1000)
			left = 1000;
		if (o.connect_timeout_ms > left)
			o.connect_timeout_ms = (int)left;
		st = ssh_connect(&o, &c, &last);
		if (st == GO_OK) {
			L->up = 1;
			L->t_reachable = time(NULL);
			if (arm_guard && (L->started || L->adopted) &&
			    (L->in->idle_stop_min > 0 || L->in->max_lifetime_min > 0)) {
				/* the lifetime cap counts from the start/launch, not from now */
				st = guard_install_left(c, L->h, L->in, L->in->max_lifetime_min * 60.0 -
							(double)(time(NULL) - L->t_start_req), err);
				if (st == GO_OK) {
					L->guarded = 1;
					if (L->in->idle_stop_min > 0)
						strbuf_addf(log, "%s: guard armed: stops the instance after %g "
							    "min without gpuorch%s\n", L->h->name,
							    L->in->idle_stop_min, L->in->max_lifetime_min > 0
							    ? " or at its max lifetime" : "");
					else
						strbuf_addf(log, "%s: guard armed: stops the instance at its "
							    "max lifetime (%g min from its start)\n",
							    L->h->name, L->in->max_lifetime_min);
				}
			} else if (!L->started) {
				int alive = 0;
				if (guard_alive(c, L->h, &alive, &last) == GO_OK && alive)
					L->guarded = 1;
			}
			ssh_disconnect(c);
			break;
		}
		if (st == GO_ERR_HOSTKEY) {
			go_fail(err, st, "%s", last.buf);
			break;
		}
		if (interrupted(L, 1)) {
			st = go_fail(err, GO_ERR_INTERRUPTED, "%s: interrupted", L->h->name);
			break;
		}
		if (time_mono_ms() >= deadline) {
			st = go_fail(err, GO_ERR_TIMEOUT,
				     "%s: the instance is running but SSH did not answer within %d s "
				     "(\"ssh_timeout_s\"); last error: %s", L->h->name,
				     L->in->ssh_timeout_s, last.buf);
			break;
		}
		trace_wait(L->h->name, "SSH answer poll", (int64_t)(L->in->poll_s * 1000));
	}
	strbuf_release(&last);
	return st;
}

/* A launched instance of an earlier command (the ledger's): take it up if it
 * is there. Only an authoritative answer -- EC2 says it does not exist, or
 * it is terminated -- forgets it; any other error fails without launching
 * (a second instance would be billed beside the first). */
static enum go_status adopt_launched(struct inst_life *L, struct strbuf *log, struct strbuf *err)
{
	struct instance *in = L->in;
	enum go_status st;
	char *tok = ledger_pending_token(L->h->name), *id;
	if (tok && in->ops->find_launched) {
		/* a launch whose answer never came: did it make an instance? */
		st = in->ops->find_launched(in, tok, err);
		if (st == GO_OK) {
			time_t since = time(NULL);
			double price;
			ledger_read(L->h->name, &since, &price);
			say(L, log, "%s: found %s, launched before (token %s) without its answer\n",
			    L->h->name, in->ops->id(in), tok);
			ledger_note_start(L->h->name, in->ops->name, in->price_per_hour, since,
					  in->ops->id(in), L->run_id, tok, err);
			strbuf_reset(err);
		} else if (st == GO_ERR_NOT_FOUND) {
			strbuf_reset(err);
			ledger_note_stop(L->h->name, NULL, err);
			strbuf_reset(err);
		} else {
			struct strbuf msg = STRBUF_INIT;
			strbuf_addf(&msg, "%s; cannot tell whether an earlier launch (token %s) made an "
				    "instance: nothing launched, so that none is billed twice; try again",
				    err->buf, tok);
			go_fail(err, st, "%s", msg.buf);
			strbuf_release(&msg);
			free(tok);
			return st;
		}
	}
	free(tok);
	id = ledger_launched_id(L->h->name);
	in->ops->adopt(in, id);
	free(id);
	if (!in->ops->id(in))
		return GO_OK;
	st = in->ops->status(in, &L->before, err);
	if (st == GO_OK && L->before != INST_TERMINATED) {
		say(L, log, "%s: instance %s (launched by gpuorch before) is %s\n", L->h->name,
		    in->ops->id(in), inst_state_name(L->before));
		L->adopted = 1;
		return GO_OK;
	}
	if (st != GO_OK && st != GO_ERR_NOT_FOUND) {
		struct strbuf msg = STRBUF_INIT;
		strbuf_addf(&msg, "%s; cannot tell whether instance %s (launched by gpuorch before) is "
			    "still there: nothing launched, so that none is billed twice; try again, "
			    "or end it with 'gpuorch hosts down --host %s'", err->buf, in->ops->id(in),
			    L->h->name);
		go_fail(err, st, "%s", msg.buf);
		strbuf_release(&msg);
		return st;
	}
	/* ended outside gpuorch, or EC2 no longer knows it: forget it */
	say(L, log, "%s: instance %s launched before is gone: %s\n", L->h->name, in->ops->id(in),
	    st != GO_OK ? err->buf : "terminated");
	strbuf_reset(err);
	ledger_note_stop(L->h->name, NULL, err);
	strbuf_reset(err);
	return GO_OK;
}

enum go_status life_up(struct inst_life *L, int accept_new_hostkey, int arm_guard,
		       struct strbuf *log, struct strbuf *err)
{
	struct instance *in = L->in;
	enum go_status st = GO_OK;
	enum inst_state s;

	if (!in)
		return GO_OK;
	in->run_id = L->run_id;
	if (in->launch) {
		/* one launched before and not ended is taken up again; else a new one */
		st = adopt_launched(L, log, err);
		if (st != GO_OK)
			return remember(L, st, err);
		take_history(L, L->adopted, log);
		if (!L->adopted) {
			in->ops->adopt(in, NULL);
			L->before = INST_TERMINATED;   /* none: it is created */
			st = launch_it(L, log, err);
			if (st != GO_OK)
				return remember(L, st, err);
			goto reach;
		}
		if (!L->started && (L->before == INST_RUNNING || L->before == INST_PENDING)) {
			/* gpuorch's own instance, billing: counted from now for this run */
			L->started = 1;
			L->t_start_req = time(NULL);
			note_run(L, 0, NULL);
		}
	} else {
		st = in->ops->status(in, &L->before, err);
		if (st != GO_OK)
			return remember(L, st, err);
		say(L, log, "%s: instance is %s\n", L->h->name, inst_state_name(L->before));
		take_history(L, L->before == INST_RUNNING || L->before == INST_PENDING, log);
	}
	s = L->before;
	if (s == INST_TERMINATED)
		return remember(L, go_fail(err, GO_ERR_REMOTE, "%s: the instance is terminated (it "
					   "no longer exists): fix %s", L->h->name, in->label), err);
	if (s == INST_STOPPING) {
		st = wait_state(L, 1u << INST_STOPPED, in->start_timeout_s, "stopping", 1, &s, err);
		if (st != GO_OK)
			return remember(L, st, err);
	}
	if (s == INST_STOPPED)
		st = start_it(L, log, err);
	else if (s == INST_PENDING)
		st = wait_state(L, 1u << INST_RUNNING, in->start_timeout_s, "it was found starting",
				1, &s, err);
	if (st != GO_OK)
		return remember(L, st, err);
reach:
	if (in->ops->address) {
		char *addr = NULL;
		st = in->ops->address(in, &addr, err);
		if (st != GO_OK)
			return remember(L, st, err);
		if (addr) {   /* NULL: the hosts entry's own address */
			free(L->h->address);
			L->h->address = addr;
		}
	}
	return remember(L, wait_ssh(L, accept_new_hostkey, arm_guard, log, err), err);
}

enum after_run life_after_run(const struct inst_life *L)
{
	if (!L->in)
		return AFTER_KEEP;
	if (L->in->after_run != AFTER_DEFAULT)
		return L->in->after_run;
	if (L->launched || L->adopted)
		return AFTER_TERMINATE;
	return L->started ? AFTER_STOP : AFTER_KEEP;
}

/* After the stop is confirmed: the guard went with the machine; where the
 * machine still answers (a test's loopback "instance") it is ended too,
 * with a short connect timeout (a stopped cloud machine does not answer). */
static void disarm_after_stop(struct inst_life *L, int accept_new)
{
	struct strbuf e = STRBUF_INIT;
	struct ssh_conn *c = NULL;
	struct ssh_opts o;
	host_ssh_opts(L->h, accept_new, &o);
	if (o.connect_timeout_ms > 5000)
		o.connect_timeout_ms = 5000;
	if (ssh_connect(&o, &c, &e) == GO_OK)
		guard_disarm(c, L->h, &e);
	ssh_disconnect(c);
	L->guarded = 0;
	strbuf_release(&e);
}

enum go_status life_down(struct inst_life *L, enum after_run what, int accept_new_hostkey,
			 struct strbuf *log, struct strbuf *err)
{
	struct instance *in = L->in;
	enum go_status st = GO_OK;
	enum inst_state s = INST_UNKNOWN;
	unsigned want;

	if (!in)
		return GO_OK;
	L->done = what;
	if (what == AFTER_KEEP) {
		if (L->up)
			strbuf_addf(log, "%s: instance kept running (after_run \"keep\")%s\n",
				    L->h->name, L->guarded ? "; its guard stays armed" : "");
		return GO_OK;
	}
	/* the guard stays armed until the provider confirms the stop: a stop
	 * that fails (an expired token) leaves a guarded machine, never a bare one */
	L->t_stop_req = time(NULL);
	want = what == AFTER_TERMINATE ? 1u << INST_TERMINATED
				       : (1u << INST_STOPPED) | (1u << INST_TERMINATED);
	if (in->launch && !in->ops->id(in)) {
		/* a launch whose answer never came: find it first */
		char *tok = ledger_pending_token(L->h->name);
		st = tok && in->ops->find_launched ? in->ops->find_launched(in, tok, err)
			: go_fail(err, GO_ERR_NOT_FOUND, "%s: no instance launched", L->h->name);
		free(tok);
		if (st == GO_ERR_NOT_FOUND) {
			strbuf_reset(err);
			ledger_note_stop(L->h->name, NULL, err);
			strbuf_reset(err);
			L->stopped = 1;
			L->t_stop_conf = L->t_stop_req;
			note_run(L, L->t_stop_conf, "not launched");
			strbuf_addf(log, "%s: no instance was launched\n", L->h->name);
			return GO_OK;
		}
	}
	if (st == GO_OK)
		st = in->ops->status(in, &s, err);
	if (st == GO_ERR_NOT_FOUND && in->launch) {
		s = INST_TERMINATED;   /* EC2 no longer knows it: ended */
		st = GO_OK;
		strbuf_reset(err);
	}
	if (st == GO_OK && !(want & (1u << s))) {
		strbuf_addf(log, "%s: %s the instance\n", L->h->name,
			    what == AFTER_TERMINATE ? "terminating" : "stopping");
		st = what == AFTER_TERMINATE ? in->ops->terminate(in, err) : in->ops->stop(in, err);
		if (st == GO_OK)
			st = wait_state(L, want, in->start_timeout_s, "the stop", 0, &s, err);
	}
	if (st != GO_OK) {
		struct strbuf msg = STRBUF_INIT;
		L->stop_failed = 1;
		strbuf_addf(&msg, "%s; the instance may still be billing%s: check it and stop it by "
			    "hand ('gpuorch hosts down --host %s' or the cloud's console)", err->buf,
			    L->guarded ? " (its guard stays armed)" : "", L->h->name);
		go_fail(err, st, "%s", msg.buf);
		strbuf_release(&msg);
		return remember(L, st, err);
	}
	L->stopped = 1;
	L->t_stop_conf = time(NULL);
	if (L->guarded && L->up)
		disarm_after_stop(L, accept_new_hostkey);
	L->up = 0;
	note_run(L, L->t_stop_conf, "confirmed");
	if (ledger_note_stop(L->h->name, in->launch && s != INST_TERMINATED ? in->ops->id(in) : NULL,
			     err) != GO_OK)
		strbuf_addf(log, "%s: warning: %s\n", L->h->name, err->buf);
	strbuf_addf(log, "%s: instance %s\n", L->h->name, inst_state_name(s));
	return GO_OK;
}

void life_check_preempted(struct inst_life *L)
{
	struct strbuf e = STRBUF_INIT;
	enum inst_state s;
	if (L->in && L->up && L->in->ops->status(L->in, &s, &e) == GO_OK && s != INST_RUNNING)
		L->preempted = 1;
	strbuf_release(&e);
}

double life_seconds(const struct inst_life *L, time_t now)
{
	time_t end;
	if (!L->in || !L->started)
		return 0;
	end = L->t_stop_conf ? L->t_stop_conf : now;
	return end > L->t_start_req ? (double)(end - L->t_start_req) : 0;
}

/* The shortest time a provider bills a start for: EC2 bills Linux
 * on-demand instances per second with a one-minute minimum; a command
 * provider's is not known (0). */
static double billing_minimum_s(const struct inst_life *L)
{
	return L->in && L->in->ops && !strcmp(L->in->ops->name, "aws") ? 60 : 0;
}

double life_billed_seconds(const struct inst_life *L, time_t now)
{
	double s = life_seconds(L, now), min = billing_minimum_s(L);
	return !L->in || !L->started ? 0 : s > min ? s : min;
}

static double own_cost(const struct inst_life *L, time_t now)
{
	return L->in ? life_billed_seconds(L, now) / 3600.0 * L->in->price_per_hour : 0;
}

double life_cost(const struct inst_life *L, time_t now)
{
	return own_cost(L, now) + (L->in ? L->earlier_cost : 0);
}

static void add_time(cJSON *j, const char *key, time_t t)
{
	char ts[32];
	if (!t) {
		cJSON_AddNullToObject(j, key);
		return;
	}
	time_iso8601(t, ts);
	json_add_str(j, key, ts);
}

cJSON *life_json(const struct inst_life *L, time_t now)
{
	cJSON *j = cJSON_CreateObject();
	json_add_str(j, "provider", L->in->ops->name);
	json_add_str(j, "state_before", inst_state_name(L->before));
	json_add_bool(j, "started_by_gpuorch", L->started);
	json_add_bool(j, "launched_by_gpuorch", L->launched);
	if (L->in->ops->id)
		json_add_str(j, "instance_id", L->in->ops->id(L->in));
	add_time(j, "start_requested_at", L->t_start_req);
	add_time(j, "running_at", L->t_running);
	add_time(j, "reachable_at", L->t_reachable);
	add_time(j, "stop_requested_at", L->t_stop_req);
	add_time(j, "stop_confirmed_at", L->t_stop_conf);
	json_add_str(j, "after_run", L->done ? after_run_name(L->done) : NULL);
	json_add_bool(j, "guard", L->guarded || (L->started && L->in->idle_stop_min > 0 && L->t_reachable));
	json_add_num(j, "idle_stop_min", L->in->idle_stop_min);
	json_add_num(j, "price_per_hour", L->in->price_per_hour);
	/* what gpuorch saw (start requested to stop confirmed), not the
	 * provider's bill; the cost counts at least the billing minimum */
	json_add_str(j, "currency", "USD");
	json_add_num(j, "billing_minimum_s", billing_minimum_s(L));
	if (L->started) {
		json_add_num(j, "observed_s", life_seconds(L, now));
		json_add_num(j, "billed_s", life_seconds(L, now));   /* = observed_s: the name older readers know */
		json_add_num(j, "cost", own_cost(L, now));
	} else {
		cJSON_AddNullToObject(j, "observed_s");
		cJSON_AddNullToObject(j, "billed_s");
		cJSON_AddNullToObject(j, "cost");
	}
	if (L->earlier) {
		/* what the run used before this controller (--resume) */
		cJSON_AddItemToObject(j, "earlier_instances", cJSON_Duplicate(L->earlier, 1));
		json_add_num(j, "earlier_cost", L->earlier_cost);
	}
	json_add_bool(j, "stop_failed", L->stop_failed);
	json_add_bool(j, "preempted", L->preempted);
	json_add_str(j, "error", L->error);
	return j;
}
