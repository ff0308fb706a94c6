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
#include "core/jsonutil.h"
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

/* One host's instance as `status` knows it: what the text line and the
 * JSON entry both show (docs/schema/cli-hosts.schema.json). */
static cJSON *status_of(struct inst_life *L)
{
	struct strbuf err = STRBUF_INIT;
	enum inst_state s = INST_UNKNOWN;
	cJSON *o = cJSON_CreateObject();
	char *id = NULL;
	time_t since;
	double price;
	int known;

	json_add_str(o, "name", L->h->name);
	json_add_str(o, "provider", L->in->ops->name);
	json_add_bool(o, "launches", L->in->launch);
	if (L->in->launch) {
		char *tok = ledger_pending_token(L->h->name);
		id = ledger_launched_id(L->h->name);
		json_add_str(o, "pending_token", id ? NULL : tok);
		json_add_str(o, "launched", id);
		free(tok);
		if (!id)
			return o;   /* none: gpuorch launches one for the next run */
		L->in->ops->adopt(L->in, id);
		free(id);
	}
	if (L->in->ops->status(L->in, &s, &err) != GO_OK) {
		json_add_str(o, "error", err.buf);
		strbuf_release(&err);
		return o;
	}
	json_add_str(o, "state", inst_state_name(s));
	known = ledger_read(L->h->name, &since, &price);
	if (known && s != INST_STOPPED && s != INST_TERMINATED) {
		char ts[32];
		double hours = (double)(time(NULL) - since) / 3600.0;
		cJSON *c = json_add_obj(o, "started_by_gpuorch");
		time_iso8601(since, ts);
		json_add_str(c, "at", ts);
		json_add_num(c, "hours", hours);
		json_add_num(c, "price_per_hour", price);
		json_add_num(c, "accrued", hours * price);
	}
	strbuf_release(&err);
	return o;
}

/* status_of's line (or lines); 1 when the state could be read */
static int print_status(const cJSON *o)
{
	const char *name = json_str(o, "name"), *prov = json_str(o, "provider");
	const char *tok = json_str(o, "pending_token"), *id = json_str(o, "launched");
	const char *state = json_str(o, "state"), *err = json_str(o, "error");
	const cJSON *c = cJSON_GetObjectItem(o, "started_by_gpuorch");

	if (tok)
		printf("%s  %s  a launch whose answer never came (token %s): see the tagged "
		       "instances below\n", name, prov, tok);
	if (cJSON_IsTrue(cJSON_GetObjectItem(o, "launches")) && !id) {
		printf("%s  %s  none (gpuorch launches one for the next run)\n", name, prov);
		return 1;
	}
	if (id)
		printf("%s  %s  launched %s\n", name, prov, id);
	if (err)
		printf("%s  %s  error: %s\n", name, prov, err);
	else if (c)
		printf("%s  %s  %s  started by gpuorch at %s  accrued %.4f (%.4f h x %.4g/h)\n",
		       name, prov, state, json_str(c, "at"), json_num(c, "accrued", 0),
		       json_num(c, "hours", 0), json_num(c, "price_per_hour", 0));
	else
		printf("%s  %s  %s%s\n", name, prov, state, !strcmp(state, inst_state_name(INST_RUNNING))
		       ? "  (not started by gpuorch: cost not tracked)" : "");
	return !err;
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
 * (each account/region once), known to the ledger or not, into out: one
 * entry an instance, or {host, provider, error} where the list failed. */
static void tagged_of(struct inst_life *lives, struct hosts *hs, cJSON *out)
{
	struct strbuf seen = STRBUF_INIT, err = STRBUF_INIT;
	int i, j;
	for (i = 0; i < hs->n; i++) {
		struct instance *in = lives[i].in;
		struct tagged_inst *v = NULL;
		int n = 0;
		if (!in || !in->launch || !in->ops->list_tagged)
			continue;   /* where gpuorch launches (and tags) instances */
		if (in->ops->list_tagged(in, &v, &n, &err) != GO_OK) {
			cJSON *e = cJSON_CreateObject();
			json_add_str(e, "host", hs->v[i].name);
			json_add_str(e, "provider", in->ops->name);
			json_add_str(e, "error", err.buf);
			cJSON_AddItemToArray(out, e);
			strbuf_reset(&err);
			continue;
		}
		for (j = 0; j < n; j++) {
			const char *owner = NULL;
			struct strbuf key = STRBUF_INIT;
			cJSON *t;
			strbuf_addf(&key, " %s ", v[j].id);
			if (strstr(seen.buf ? seen.buf : "", key.buf)) {
				strbuf_release(&key);
				continue;
			}
			strbuf_addstr(&seen, key.buf);
			strbuf_release(&key);
			t = cJSON_CreateObject();
			json_add_str(t, "id", v[j].id);
			json_add_str(t, "state", inst_state_name(v[j].state));
			json_add_str(t, "host", v[j].host);
			json_add_str(t, "run", v[j].run);
			json_add_bool(t, "in_ledger", in_ledger(hs, &v[j], &owner));
			json_add_str(t, "ledger_host", owner);
			cJSON_AddItemToArray(out, t);
		}
		tagged_free(v, n);
	}
	strbuf_release(&seen);
	strbuf_release(&err);
}

/* tagged_of's lines; 0 when a list failed */
static int print_tagged(const cJSON *tagged)
{
	const cJSON *t;
	int ok = 1, header = 0;
	cJSON_ArrayForEach(t, tagged) {
		const char *host = json_str(t, "host"), *run = json_str(t, "run");
		if (json_str(t, "error")) {
			printf("%s  %s  error: cannot list the instances tagged by gpuorch: %s\n",
			       host, json_str(t, "provider"), json_str(t, "error"));
			ok = 0;
			continue;
		}
		if (!header++)
			printf("instances tagged by gpuorch (gpuorch:host):\n");
		if (cJSON_IsTrue(cJSON_GetObjectItem(t, "in_ledger")))
			printf("  %s  %s  host %s  run %s  in the ledger (host %s)\n", json_str(t, "id"),
			       json_str(t, "state"), host ? host : "?", run ? run : "?",
			       json_str(t, "ledger_host"));
		else
			printf("  %s  %s  host %s  run %s  NOT IN THE LEDGER: may be billing; "
			       "'gpuorch hosts up/run' takes it up if its launch answer was lost, "
			       "else end it in the cloud's console\n", json_str(t, "id"),
			       json_str(t, "state"), host ? host : "?", run ? run : "?");
	}
	return ok;
}

/* `hosts status`: each host's instance, then the tagged ones; as text, or
 * into doc (--json). The exit code. */
static int status_verb(struct inst_life *lives, struct hosts *hs, cJSON *doc)
{
	cJSON *arr = doc ? json_add_arr(doc, "hosts") : cJSON_CreateArray();
	cJSON *tagged = doc ? json_add_arr(doc, "tagged") : cJSON_CreateArray();
	const cJSON *o;
	int i, rc = GO_EXIT_OK;

	for (i = 0; i < hs->n; i++) {
		if (!lives[i].in) {
			o = cJSON_CreateObject();
			json_add_str((cJSON *)o, "name", hs->v[i].name);
			json_add_str((cJSON *)o, "provider", NULL);   /* always on */
			cJSON_AddItemToArray(arr, (cJSON *)o);
			continue;
		}
		cJSON_AddItemToArray(arr, status_of(&lives[i]));
	}
	tagged_of(lives, hs, tagged);
	cJSON_ArrayForEach(o, arr) {
		if (!json_str(o, "provider"))
			printf("%s  no instance (always on)\n", json_str(o, "name"));
		else if (!print_status(o))
			rc = GO_EXIT_FAILED;
	}
	if (!print_tagged(tagged))
		rc = GO_EXIT_FAILED;
	if (!doc) {
		cJSON_Delete(arr);
		cJSON_Delete(tagged);
	}
	return rc;
}

/* One task's end: its lines, and its entry of --json's "hosts" */
static void task_result(const struct task *t, cJSON *hosts)
{
	struct inst_life *L = t->L;
	cJSON *o = hosts ? cJSON_CreateObject() : NULL;
	int up = !strcmp(t->verb, "up");

	fputs(t->log.buf, stdout);
	if (o) {
		json_add_str(o, "name", L->h->name);
		json_add_str(o, "status", t->st == GO_OK ? "ok" : "failed");
		json_add_str(o, "error", t->st == GO_OK ? NULL : t->err.buf);
		cJSON_AddItemToArray(hosts, o);
	}
	if (t->st != GO_OK) {
		fprintf(stderr, "error: %s\n", t->err.buf);
		return;
	}
	if (up) {
		printf("%s: up at %s:%d%s\n", L->h->name, L->h->address, L->h->port,
		       L->guarded ? "" : " (no guard)");
		if (o) {
			json_add_str(o, "address", L->h->address);
			json_add_num(o, "port", L->h->port);
			json_add_bool(o, "guarded", L->guarded);
		}
	} else if (L->started) {
		const char *how = L->done == AFTER_TERMINATE ? "terminated" : "stopped";
		double secs = life_seconds(L, time(NULL)), cost = life_cost(L, time(NULL));
		printf("%s: %s; billed %.0f s, cost %.4f\n", L->h->name, how, secs, cost);
		if (o) {
			json_add_str(o, "ended", how);
			json_add_num(o, "billed_s", secs);
			json_add_num(o, "cost", cost);
		}
	}
}

int hosts_cloud_verb(const char *verb, struct hosts *hs, int accept_new, cJSON *doc)
{
	struct strbuf err = STRBUF_INIT;
	struct inst_life *lives = NULL;
	struct task *tasks;
	void **args;
	cJSON *results = doc && strcmp(verb, "status") ? json_add_arr(doc, "hosts") : NULL;
	enum go_status st = life_load(hs, &lives, &err);
	int i, n = 0, nok = 0, rc, worst = GO_EXIT_OK;

	if (st != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);
		strbuf_release(&err);
		return go_exit_code(st);
	}
	if (!strcmp(verb, "status")) {
		rc = status_verb(lives, hs, doc);
		life_free(lives, hs->n);
		return rc;
	}
	tasks = xcalloc((size_t)hs->n, sizeof(*tasks));
	args = xcalloc((size_t)hs->n, sizeof(*args));
	for (i = 0; i < hs->n; i++) {
		if (!lives[i].in)
			continue;
		tasks[n].L = &lives[i];
		tasks[n].verb = verb;
		tasks[n].hosts_path = hs->path;
		tasks[n].accept_new = accept_new;
		strbuf_init(&tasks[n].log, 0);
		strbuf_init(&tasks[n].err, 0);
		args[n] = &tasks[n];
		n++;
	}
	if (!strcmp(verb, "up"))
		interrupt_catch();
	if (n)
		par_run(n, task_main, args, NULL, NULL, 500);
	for (i = 0; i < n; i++) {
		struct task *t = &tasks[i];
		task_result(t, results);
		if (t->st == GO_OK)
			nok++;
		else if (go_exit_code(t->st) > worst)
			worst = go_exit_code(t->st);
		strbuf_release(&t->log);
		strbuf_release(&t->err);
		free(t->run);
	}
	if (interrupt_signal)
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
