/* run-hosts.c -- `gpuorch run`'s third stage (run-state.h): every host in
 * parallel (each by its executor: executor.c), then each
 * host's output whole and the failures counted. A host with a cloud
 * instance (cloud/lifecycle.h) is brought up on its own thread before its
 * run, fed by the heartbeat thread while it runs, and taken down per
 * after_run afterwards, Ctrl-C or not; the instances' cost is recorded. */
#include "run/run-state.h"
#include "run/executor-pick.h"
#include "cloud/heartbeat.h"
#include "cloud/lifecycle.h"
#include "core/interrupt.h"
#include "core/jsonutil.h"
#include "core/live.h"
#include "core/parallel.h"
#include "remote/spread.h"
#include "store/runwrite.h"
#include "transport/hosts.h"

#include <stdlib.h>
#include <string.h>
#include "core/banned.h"
#include "core/vocab.h"

/* One host's part of the run, by its executor (executor.c: an SSH host's
 * agent, or a Slurm cluster's jobs). */
static void host_main(void *arg)
{
	struct hostrun *hr = arg;
	executor_for(hr->h)->run(hr);
}

/* The host is done: if it never planned (lost before, its instance never
 * up), its pool is dealt without it (remote/spread.h). */
static void spread_done(struct hostrun *hr)
{
	if (hr->ctx->spread)
		spread_leave(hr->ctx->spread, hr->index);
}

/* One host's thread: its run, its instance, the heartbeat that feeds the guard. */
struct host_task {
	struct hostrun *hr;
	struct inst_life *L;
	struct heartbeat *hb;
	int accept_new;
};

/* One host: bring its instance up, run, take it down (par_task_fn). */
static void host_task_main(void *arg)
{
	struct host_task *t = arg;
	struct hostrun *hr = t->hr;
	struct inst_life *L = t->L;
	struct strbuf log = STRBUF_INIT, e = STRBUF_INIT;
	enum go_status st;

	if (!L->in) {
		host_main(hr);
		spread_done(hr);
		return;
	}
	L->interrupted = &interrupt_signal;
	L->run_id = hr->ctx->run_id;   /* tags, the idempotency token, the run's instances */
	live_set(hr->ctx->live, hr->index, "instance", "starting");
	st = life_up(L, t->accept_new, 1, &log, &e);
	strbuf_addstr(&hr->out, log.buf);
	strbuf_reset(&log);
	runw_host_address(hr->ctx->rec, hr->index, L->h->address);
	if (st == GO_OK) {
		if (L->guarded)
			heartbeat_add(t->hb, hr->index, L->h, L->in);
		host_main(hr);
		life_check_preempted(L);
		if (L->preempted) {
			strbuf_addf(&hr->out, "  %s: the instance stopped under the run without gpuorch "
				    "asking (preempted?): its steps were lost, not failed\n", L->h->name);
			runw_host_status(hr->ctx->rec, hr->index, HOST_PREEMPTED);
			hr->failed = 1;
		}
		heartbeat_remove(t->hb, hr->index);
	} else {
		hr->failed = 1;
		strbuf_addf(&hr->out, "%s\n  instance failed: %s\n", L->h->name, e.buf);
		runw_host_status(hr->ctx->rec, hr->index,
				 st == GO_ERR_INTERRUPTED ? HOST_FAILED : HOST_UNREACHABLE);
		runw_host_error(hr->ctx->rec, hr->index, e.buf);
		live_done(hr->ctx->live, hr->index, "instance failed");
	}
	if (L->started || L->up) {
		strbuf_reset(&e);
		live_set(hr->ctx->live, hr->index, "instance", "stopping");
		if (life_down(L, life_after_run(L), t->accept_new, &log, &e) != GO_OK)
			strbuf_addf(&hr->out, "  warning: %s\n", e.buf);
		strbuf_addstr(&hr->out, log.buf);
	}
	spread_done(hr);
	runw_host_instance(hr->ctx->rec, hr->index, life_json(L, time(NULL)));
	strbuf_release(&log);
	strbuf_release(&e);
}

/* Every instance's cost into provenance.instances and the run's total;
 * prints the cost lines; returns how many instances may still be billing. */
static int record_costs(struct record *rec, struct inst_life *lives, int n)
{
	cJSON *insts = cJSON_CreateObject();
	double total = 0;
	int i, billing = 0, any = 0;
	time_t now = time(NULL);
	for (i = 0; i < n; i++) {
		const struct inst_life *L = &lives[i];
		if (!L->in)
			continue;
		any = 1;
		cJSON_AddItemToObject(insts, L->h->name, life_json(L, now));
		total += life_cost(L, now);
		if (L->stop_failed || (L->started && !L->stopped && life_after_run(L) != AFTER_KEEP))
			billing++;
		if (L->started) {
			/* the figures shown are the ones the cost is made of */
			double obs = life_seconds(L, now), billed = life_billed_seconds(L, now);
			double earlier = life_cost(L, now) - billed / 3600.0 * L->in->price_per_hour;
			printf("cost: %s %.4f (", L->h->name, life_cost(L, now));
			if (billed > obs)
				printf("%.0f s observed, billed as the provider's minimum %.0f s", obs, billed);
			else
				printf("%.0f s", obs);
			printf(" x %.4g/h", L->in->price_per_hour);
			if (earlier > 0)
				printf(", + %.4f for the run's earlier instances", earlier);
			printf(", %s)%s\n", L->stopped ? "stopped" : "still running",
			       L->stop_failed ? "  MAY STILL BE BILLING: stop it by hand" : "");
		} else
			printf("cost: %s not started by gpuorch (it was %s): not counted\n",
			       L->h->name, inst_state_name(L->before));
	}
	/* no instance, no cost: `runs` prints none */
	runw_instances(rec, insts, any ? &total : NULL);
	if (any)
		printf("cost: total %.4f\n", total);
	return billing;
}

void run_hosts(struct run_state *r)
{
	const struct run_opts *o = r->o;
	const struct hosts *hs = r->hs;
	struct heartbeat *hb;
	int i;

	fprintf(stderr, "run %s: %s on %d host%s -> %s\n", r->run_id, r->s->name, hs->n,
		hs->n == 1 ? "" : "s", r->run_dir);
	r->lv = live_new(stderr, hs->n, o->plain);
	memset(&r->ctx, 0, sizeof(r->ctx));
	r->ctx.spec = r->s;
	r->ctx.pack = &r->pk;
	r->ctx.run_id = r->run_id;
	r->ctx.rec = &r->rec;
	r->ctx.live = r->lv;
	r->ctx.accept_new_hostkey = o->accept_new_hostkey;
	r->ctx.reconnect_timeout_s = o->reconnect_timeout_s;
	r->ctx.lock_wait_s = o->lock_wait_s;
	r->ctx.interrupted = &interrupt_signal;
	r->ctx.resumed = r->old;
	if (o->spread || r->s->spread) {
		r->ctx.spread = spread_new(hs->n);
		for (i = 0; i < hs->n; i++)   /* a cluster's jobs spread already */
			if (hs->v[i].slurm)
				spread_leave(r->ctx.spread, i);
	}
	r->hrs = xcalloc((size_t)hs->n, sizeof(*r->hrs));
	r->tasks = xcalloc((size_t)hs->n, sizeof(*r->tasks));
	r->args = xcalloc((size_t)hs->n, sizeof(*r->args));
	hb = heartbeat_start(hs->n, o->accept_new_hostkey);
	for (i = 0; i < hs->n; i++) {
		hostrun_init(&r->hrs[i], i, &hs->v[i], &r->ctx, cJSON_GetArrayItem(r->hosts_arr, i));
		live_set_name(r->lv, i, hs->v[i].name);
		r->tasks[i].hr = &r->hrs[i];
		r->tasks[i].L = &r->lives[i];
		r->tasks[i].hb = hb;
		r->tasks[i].accept_new = o->accept_new_hostkey;
		r->args[i] = &r->tasks[i];
	}
	if (!interrupt_signal)
		par_run(hs->n, host_task_main, r->args, (par_tick_fn)live_draw, r->lv, 500);
	heartbeat_stop(hb);
	spread_free(r->ctx.spread);
	r->ctx.spread = NULL;
}

int run_hosts_collect(struct run_state *r)
{
	int i;

	for (i = 0; i < r->hs->n; i++) {
		fputs(r->hrs[i].out.buf, stdout);
		r->nfailed_hosts += r->hrs[i].failed;
		r->nfailed_steps += r->hrs[i].nfailed_steps - r->hrs[i].nfailed_gates;
		r->nfailed_gates += r->hrs[i].nfailed_gates;
	}
	return record_costs(&r->rec, r->lives, r->hs->n);
}

void run_hosts_release(struct run_state *r)
{
	int i;

	if (r->hrs)
		for (i = 0; r->hs && i < r->hs->n; i++)
			hostrun_release(&r->hrs[i]);
	free(r->hrs);
	free(r->tasks);
	free(r->args);
}
