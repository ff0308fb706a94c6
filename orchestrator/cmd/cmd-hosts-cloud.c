/* cmd-hosts-cloud.c -- `gpuorch hosts up|down|status`: the cloud instances
 * behind the hosts, by hand (docs/cloud.md): start and arm the guard, stop,
 * or show each one's state and the cost accrued since gpuorch started it. */
#include "cmd/cmd-hosts-cloud.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cloud/ledger.h"
#include "cloud/lifecycle.h"
#include "core/parallel.h"
#include "core/timeutil.h"
#include "core/banned.h"

struct task {
	struct inst_life *L;
	const char *verb;
	int accept_new;
	enum go_status st;
	struct strbuf log, err;
};

static void task_main(void *arg)
{
	struct task *t = arg;
	struct inst_life *L = t->L;
	if (!strcmp(t->verb, "up")) {
		t->st = life_check(L, &t->err);
		if (t->st == GO_OK)
			t->st = life_up(L, t->accept_new, 1, &t->log, &t->err);
	} else {
		time_t since;
		double price;
		enum after_run what = AFTER_STOP;
		if (L->in->launch) {
			/* the one gpuorch launched: ended (terminated) unless after_run says stop */
			char *id = ledger_launched_id(L->h->name);
			if (!id) {
				strbuf_addf(&t->log, "%s: no instance launched by gpuorch\n", L->h->name);
				t->st = GO_OK;
				return;
			}
			L->in->ops->adopt(L->in, id);
			free(id);
			L->launched = 1;
			what = L->in->after_run == AFTER_STOP ? AFTER_STOP : AFTER_TERMINATE;
		}
		if (ledger_read(L->h->name, &since, &price)) {
			L->started = 1;
			L->t_start_req = since;
		}
		t->st = life_down(L, what, t->accept_new, &t->log, &t->err);
	}
}

static int print_status(struct inst_life *L)
{
	struct strbuf err = STRBUF_INIT;
	enum inst_state s = INST_UNKNOWN;
	enum go_status st;
	if (L->in->launch) {
		char *id = ledger_launched_id(L->h->name);
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
		tasks[n].accept_new = accept_new;
		strbuf_init(&tasks[n].log, 0);
		strbuf_init(&tasks[n].err, 0);
		args[n] = &tasks[n];
		n++;
	}
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
	}
	if (!strcmp(verb, "status"))
		rc = worst;
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
