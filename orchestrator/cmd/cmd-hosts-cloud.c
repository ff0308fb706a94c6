/* cmd-hosts-cloud.c -- `gpuorch hosts up|down|status`: the cloud instances
 * behind the hosts, by hand (docs/cloud.md): start and arm the guard, stop,
 * or show each one's state and the cost accrued since gpuorch started it.
 * `up` shows each instance id the moment it exists, and what it launched or
 * started it stops again when it fails or is interrupted (after_run "keep":
 * says loudly what runs and how to end it). `status` also lists every
 * instance in the account/region carrying gpuorch's tags, in the ledger or
 * not. */
#include "cmd/cmd-hosts-cloud.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cloud/instance-ledger.h"
#include "cloud/lifecycle.h"
#include "core/parallel.h"
#include "core/timeutil.h"
#include "core/interrupt.h"
#include "core/banned.h"

struct task {
	struct inst_life *L;
	const char *verb;
	const char *hosts_path;
	int accept_new;
	enum go_status st;
	struct strbuf log, err;
	char *run;          /* down: the run the instance was started for */
};


/* `hosts up` that failed or was interrupted: end what it launched or
 * started, unless after_run says keep -- then say loudly what runs. */
static void up_failed(struct task *t)
{
	struct inst_life *L = t->L;
	struct strbuf log = STRBUF_INIT, e = STRBUF_INIT;
	const char *id = L->in->ops->id ? L->in->ops->id(L->in) : NULL;
	if (!L->started && !L->adopted)
		return;
	if (L->in->after_run == AFTER_KEEP) {
		fprintf(stderr, "WARNING: %s: instance %s is RUNNING and billing (after_run \"keep\")%s; "
			"end it with 'gpuorch hosts down --hosts %s --host %s'\n", L->h->name,
			id ? id : "(started)", L->in->max_lifetime_min > 0 && L->launched
			? " until its lifetime cap shuts it down" : "", t->hosts_path, L->h->name);
		return;
	}
	if (life_down(L, L->launched || L->adopted ? AFTER_TERMINATE : AFTER_STOP, t->accept_new,
		      &log, &e) != GO_OK)
		strbuf_addf(&t->err, "; and ending it failed: %s", e.buf);
	else
		strbuf_addf(&t->err, "; %s %s again", id ? id : "the instance",
			    L->done == AFTER_TERMINATE ? "terminated" : "stopped");
	fputs(log.buf, stdout);
	strbuf_release(&log);
	strbuf_release(&e);
}

static void task_main(void *arg)
{
	struct task *t = arg;
	struct inst_life *L = t->L;
	if (!strcmp(t->verb, "up")) {
		L->interrupted = &interrupt_signal;
		L->progress = stdout;   /* each id the moment it exists */
		t->st = life_check(L, &t->err);
		if (t->st == GO_OK)
			t->st = life_up(L, t->accept_new, 1, &t->log, &t->err);
		if (t->st != GO_OK)
			up_failed(t);
	} else {
		time_t since;
		double price;
		enum after_run what = AFTER_STOP;
		if (L->in->launch) {
			/* the one gpuorch launched: ended (terminated) unless after_run says stop */
			char *id = ledger_launched_id(L->h->name), *tok = ledger_pending_token(L->h->name);
			if (!id && !tok) {
				strbuf_addf(&t->log, "%s: no instance launched by gpuorch\n", L->h->name);
				t->st = GO_OK;
				return;
			}
			free(tok);
			L->in->ops->adopt(L->in, id);   /* NULL: life_down looks it up by its token */
			free(id);
			L->launched = 1;
			what = L->in->after_run == AFTER_STOP ? AFTER_STOP : AFTER_TERMINATE;
		}
		if (ledger_read(L->h->name, &since, &price)) {
			L->started = 1;
			L->t_start_req = since;
		}
		t->run = ledger_run(L->h->name);
		L->run_id = t->run;   /* the run's ledger learns the end */
		t->st = life_down(L, what, t->accept_new, &t->log, &t->err);
	}
}

static int print_status(struct inst_life *L)
{
	struct strbuf err = STRBUF_INIT;
	enum inst_state s = INST_UNKNOWN;
	enum go_status st;
	if (L->in->launch) {
		char *id = ledger_launched_id(L->h->name), *tok = ledger_pending_token(L->h->name);
		if (!id && tok)
			printf("%s  %s  a launch whose answer never came (token %s): see the tagged "
			       "instances below\n", L->h->name, L->in->ops->name, tok);
		free(tok);
		if (!id) {
			printf("%s  %s  none (gpuorch launches one for the next run)\n", L->h->name,
			       L->in->ops->name);
			return 1;
		}
		L->in->ops->adopt(L->in, id);
		printf("%s  %s  launched %s\n", L->h->name, L->in->ops->name, id);
		free(id);
	}
	st = L->in->ops->status(L->in, &s, &err);
	time_t since;
	double price;
	int known = ledger_read(L->h->name, &since, &price);
	if (st != GO_OK) {
		printf("%s  %s  error: %s\n", L->h->name, L->in->ops->name, err.buf);
	} else if (known && s != INST_STOPPED && s != INST_TERMINATED) {
		char ts[32];
		double hours = (double)(time(NULL) - since) / 3600.0;
		time_iso8601(since, ts);
		printf("%s  %s  %s  started by gpuorch at %s  accrued %.4f (%.4f h x %.4g/h)\n",
		       L->h->name, L->in->ops->name, inst_state_name(s), ts, hours * price, hours,
		       price);
	} else {
		printf("%s  %s  %s%s\n", L->h->name, L->in->ops->name, inst_state_name(s),
		       s == INST_RUNNING ? "  (not started by gpuorch: cost not tracked)" : "");
	}
	strbuf_release(&err);
	return st == GO_OK;
}

/* Is this instance one some host's ledger entry names (by its id, or by
 * the token of a launch whose answer never came)? */
static int in_ledger(const struct hosts *hs, const struct tagged_inst *t, const char **host)
{
	int i, found = 0;
	for (i = 0; i < hs->n && !found; i++) {
		char *x = ledger_launched_id(hs->v[i].name), *tok = ledger_pending_token(hs->v[i].name);
		found = (x && !strcmp(x, t->id)) || (tok && t->token && !strcmp(tok, t->token));
		if (found)
			*host = hs->v[i].name;
		free(x);
		free(tok);
	}
	return found;
}

/* Every instance carrying gpuorch's tags where the hosts' providers look
 * (each account/region once), known to the ledger or not. 0: could not list. */
static int print_tagged(struct inst_life *lives, struct hosts *hs)
{
	struct strbuf seen = STRBUF_INIT, err = STRBUF_INIT;
	int i, j, ok = 1, header = 0;
	for (i = 0; i < hs->n; i++) {
		struct instance *in = lives[i].in;
		struct tagged_inst *v = NULL;
		int n = 0;
		if (!in || !in->launch || !in->ops->list_tagged)
			continue;   /* where gpuorch launches (and tags) instances */
		if (in->ops->list_tagged(in, &v, &n, &err) != GO_OK) {
			printf("%s  %s  error: cannot list the instances tagged by gpuorch: %s\n",
			       hs->v[i].name, in->ops->name, err.buf);
			ok = 0;
			continue;
		}
		for (j = 0; j < n; j++) {
			const char *owner = NULL;
			struct strbuf key = STRBUF_INIT;
			strbuf_addf(&key, " %s ", v[j].id);
			if (strstr(seen.buf ? seen.buf : "", key.buf)) {
				strbuf_release(&key);
				continue;
			}
			strbuf_addstr(&seen, key.buf);
			strbuf_release(&key);
			if (!header++)
				printf("instances tagged by gpuorch (gpuorch:host):\n");
			if (in_ledger(hs, &v[j], &owner))
				printf("  %s  %s  host %s  run %s  in the ledger (host %s)\n", v[j].id,
				       inst_state_name(v[j].state), v[j].host ? v[j].host : "?",
				       v[j].run ? v[j].run : "?", owner);
			else
				printf("  %s  %s  host %s  run %s  NOT IN THE LEDGER: may be billing; "
				       "'gpuorch hosts up/run' takes it up if its launch answer was lost, "
				       "else end it in the cloud's console\n", v[j].id,
				       inst_state_name(v[j].state), v[j].host ? v[j].host : "?",
				       v[j].run ? v[j].run : "?");
		}
		tagged_free(v, n);
	}
	strbuf_release(&seen);
	strbuf_release(&err);
	return ok;
}

int hosts_cloud_verb(const char *verb, struct hosts *hs, int accept_new)
{
	struct strbuf err = STRBUF_INIT;
	struct inst_life *lives = NULL;
	struct task *tasks;
	void **args;
	enum go_status st = life_load(hs, &lives, &err);
	int i, n = 0, nok = 0, rc, worst = GO_EXIT_OK;

	if (st != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);
		strbuf_release(&err);
		return go_exit_code(st);
	}
	tasks = xcalloc((size_t)hs->n, sizeof(*tasks));
	args = xcalloc((size_t)hs->n, sizeof(*args));
	for (i = 0; i < hs->n; i++) {
		if (!lives[i].in) {
			if (!strcmp(verb, "status"))
				printf("%s  no instance (always on)\n", hs->v[i].name);
			continue;
		}
		if (!strcmp(verb, "status")) {
			if (!print_status(&lives[i]))
				worst = GO_EXIT_FAILED;
			continue;
		}
		tasks[n].L = &lives[i];
		tasks[n].verb = verb;
		tasks[n].hosts_path = hs->path;
		tasks[n].accept_new = accept_new;
		strbuf_init(&tasks[n].log, 0);
		strbuf_init(&tasks[n].err, 0);
		args[n] = &tasks[n];
		n++;
	}
	if (!strcmp(verb, "status") && !print_tagged(lives, hs))
		worst = GO_EXIT_FAILED;
	if (!strcmp(verb, "up"))
		interrupt_catch();
	if (n)
		par_run(n, task_main, args, NULL, NULL, 500);
	for (i = 0; i < n; i++) {
		struct task *t = &tasks[i];
		struct inst_life *L = t->L;
		fputs(t->log.buf, stdout);
		if (t->st == GO_OK) {
			nok++;
			if (!strcmp(verb, "up"))
				printf("%s: up at %s:%d%s\n", L->h->name, L->h->address, L->h->port,
				       L->guarded ? "" : " (no guard)");
			else if (L->started)
				printf("%s: %s; billed %.0f s, cost %.4f\n", L->h->name,
				       L->done == AFTER_TERMINATE ? "terminated" : "stopped",
				       life_seconds(L, time(NULL)), life_cost(L, time(NULL)));
		} else {
			int code = go_exit_code(t->st);
			fprintf(stderr, "error: %s\n", t->err.buf);
			if (code > worst)
				worst = code;
		}
		strbuf_release(&t->log);
		strbuf_release(&t->err);
		free(t->run);
	}
	if (!strcmp(verb, "status"))
		rc = worst;
	else if (interrupt_signal)
		rc = GO_EXIT_INTERRUPTED;
	else if (nok == n)
		rc = GO_EXIT_OK;
	else if (worst == GO_EXIT_USAGE)
		rc = GO_EXIT_USAGE;
	else
		rc = nok ? GO_EXIT_FAILED : GO_EXIT_INFRA;
	free(tasks);
	free(args);
	life_free(lives, hs->n);
	strbuf_release(&err);
	return rc;
}
