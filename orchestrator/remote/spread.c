/* spread.c -- the deal of `run --spread` (spread.h): who came, the pools by
 * GPU model, each pool's units round robin over its slots. */
#include "remote/spread.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/jsonutil.h"
#include "core/strindex.h"
#include "core/banned.h"

struct spread_host {
	int state;                 /* 0 not yet, 1 came, 2 left */
	char *model;               /* "" when the probe named no GPU */
	int nslots;
	const struct plan *plan;   /* while it waits for the deal */
	/* the deal: the ids of its plan's steps and the slot of each */
	char **ids;
	int *slot;
	int nids;
	struct strindex index;
	int pool_hosts, pool_gpus, mine, units, myunits;   /* for its note */
};

struct spread {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int n, pending, dealt;
	struct spread_host *h;
};

struct spread *spread_new(int n)
{
	struct spread *sp = xcalloc(1, sizeof(*sp));
	pthread_mutex_init(&sp->mu, NULL);
	pthread_cond_init(&sp->cv, NULL);
	sp->n = sp->pending = n;
	sp->h = xcalloc((size_t)n + 1, sizeof(*sp->h));
	return sp;
}

void spread_free(struct spread *sp)
{
	int i, j;
	if (!sp)
		return;
	for (i = 0; i < sp->n; i++) {
		struct spread_host *h = &sp->h[i];
		for (j = 0; j < h->nids; j++)
			free(h->ids[j]);
		free(h->ids);
		free(h->slot);
		free(h->model);
		strindex_release(&h->index);
	}
	free(sp->h);
	pthread_mutex_destroy(&sp->mu);
	pthread_cond_destroy(&sp->cv);
	free(sp);
}

/* The unit of a step: its program, problem and variant. */
static char *unit_key(const struct plan_step *ps)
{
	return xstrfmt("%s\037%s\037%s", ps->step->program ? ps->step->program : "",
		       ps->problem ? ps->problem->name : "", ps->variant ? ps->variant->label : "");
}

/* The pool of hosts of model m that came, in host order, into who; its size. */
static int pool_of(struct spread *sp, const char *m, int *who)
{
	int i, n = 0;
	for (i = 0; i < sp->n; i++)
		if (sp->h[i].state == 1 && !strcmp(sp->h[i].model, m))
			who[n++] = i;
	return n;
}

/* The pool's slots, GPU position first, host second: (host, position) pairs. */
static int pool_slots(struct spread *sp, const int *who, int nwho, int *sh, int *spos)
{
	int pos, k, n = 0, more = 1;
	for (pos = 0; more; pos++) {
		more = 0;
		for (k = 0; k < nwho; k++)
			if (pos < sp->h[who[k]].nslots) {
				sh[n] = who[k], spos[n++] = pos;
				more = 1;
			}
	}
	return n;
}

/* Host hi's answer, from the units' places (ukeys of the reference plan). */
static void host_answer(struct spread *sp, int hi, const struct strindex *ukeys,
			const int *uhost, const int *upos)
{
	struct spread_host *h = &sp->h[hi];
	const struct plan *p = h->plan;
	int j;
	h->ids = xcalloc((size_t)p->nsteps + 1, sizeof(char *));
	h->slot = xcalloc((size_t)p->nsteps + 1, sizeof(int));
	h->nids = p->nsteps;
	for (j = 0; j < p->nsteps; j++) {
		char *k = unit_key(&p->steps[j]);
		int u = strindex_find(ukeys, k);
		h->ids[j] = xstrdup(p->steps[j].id);
		h->slot[j] = u < 0 ? SPREAD_ANY : uhost[u] == hi ? upos[u] : SPREAD_ELSEWHERE;
		h->mine += h->slot[j] != SPREAD_ELSEWHERE;
		free(k);
	}
	strindex_build(&h->index, (const char *const *)h->ids, h->nids);
}

/* The pool whose first host is who[0]: its units dealt over its slots. */
static void deal_pool(struct spread *sp, const int *who, int nwho)
{
	const struct plan *ref = sp->h[who[0]].plan;
	int nst = ref->nsteps, i, k, c = 0, nslots, total = 0;
	char **keys = xcalloc((size_t)nst + 1, sizeof(char *));
	int *need = xcalloc((size_t)nst + 1, sizeof(int));
	int *uhost = xcalloc((size_t)nst + 1, sizeof(int));
	int *upos = xcalloc((size_t)nst + 1, sizeof(int));
	int *sh, *spos, units = 0;
	struct strindex ukeys;

	for (k = 0; k < nwho; k++)
		total += sp->h[who[k]].nslots;
	sh = xcalloc((size_t)total + 1, sizeof(int));
	spos = xcalloc((size_t)total + 1, sizeof(int));
	nslots = pool_slots(sp, who, nwho, sh, spos);
	for (i = 0; i < nst; i++)
		keys[i] = unit_key(&ref->steps[i]);
	strindex_build(&ukeys, (const char *const *)keys, nst);
	for (i = 0; i < nst; i++) {
		int u = strindex_find(&ukeys, keys[i]), g = ref->steps[i].step->gpus;
		if (g > need[u])
			need[u] = g;
	}
	for (i = 0; i < nst; i++) {
		int tries;
		if (strindex_find(&ukeys, keys[i]) != i)
			continue;
		units++;
		if (!nslots) {
			uhost[i] = who[0], upos[i] = 0;
			continue;
		}
		/* the next slot whose host has the GPUs the unit needs */
		for (tries = 0; tries < nslots && sp->h[sh[c % nslots]].nslots < need[i]; tries++)
			c++;
		uhost[i] = sh[c % nslots];
		upos[i] = spos[c % nslots];
		if (need[i] > 1 && upos[i] + need[i] > sp->h[uhost[i]].nslots)
			upos[i] = sp->h[uhost[i]].nslots >= need[i] ? sp->h[uhost[i]].nslots - need[i] : 0;
		c++;
		sp->h[uhost[i]].myunits++;
	}
	for (k = 0; k < nwho; k++) {
		host_answer(sp, who[k], &ukeys, uhost, upos);
		sp->h[who[k]].pool_hosts = nwho;
		sp->h[who[k]].pool_gpus = nslots;
		sp->h[who[k]].units = units;
	}
	strindex_release(&ukeys);
	for (i = 0; i < nst; i++)
		free(keys[i]);
	free(keys), free(need), free(uhost), free(upos), free(sh), free(spos);
}

/* Every host came or left: deal each pool (the mutex is held). */
static void deal(struct spread *sp)
{
	int *who = xcalloc((size_t)sp->n + 1, sizeof(int));
	int i, nwho;
	for (i = 0; i < sp->n; i++) {
		if (sp->h[i].state != 1 || sp->h[i].ids)
			continue;
		nwho = pool_of(sp, sp->h[i].model, who);
		deal_pool(sp, who, nwho);
	}
	free(who);
	sp->dealt = 1;
	pthread_cond_broadcast(&sp->cv);
}

static void gone(struct spread *sp, int index, int state)
{
	if (sp->h[index].state)
		return;
	sp->h[index].state = state;
	if (--sp->pending == 0)
		deal(sp);
}

void spread_leave(struct spread *sp, int index)
{
	pthread_mutex_lock(&sp->mu);
	gone(sp, index, 2);
	pthread_mutex_unlock(&sp->mu);
}

/* This host's answer for plan p, by step id. */
static int *answer(const struct spread_host *h, const struct plan *p)
{
	int *slot = xcalloc((size_t)p->nsteps + 1, sizeof(int));
	int j, k;
	for (j = 0; j < p->nsteps; j++) {
		k = strindex_find(&h->index, p->steps[j].id);
		slot[j] = k < 0 ? SPREAD_ANY : h->slot[k];
	}
	return slot;
}

int *spread_arrive(struct spread *sp, int index, const char *model, int nslots,
		   const struct plan *p, volatile sig_atomic_t *interrupted, struct strbuf *note,
		   cJSON **rec)
{
	struct spread_host *h = &sp->h[index];
	int *slot = NULL;

	*rec = NULL;
	pthread_mutex_lock(&sp->mu);
	if (h->state == 2) {   /* no part of the deal (a Slurm cluster) */
		pthread_mutex_unlock(&sp->mu);
		return NULL;
	}
	if (!h->state) {
		h->model = xstrdup(model ? model : "");
		h->nslots = nslots;
		h->plan = p;
		gone(sp, index, 1);
	}
	while (!sp->dealt && !(interrupted && *interrupted)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 200000000L;
		if (ts.tv_nsec >= 1000000000L)
			ts.tv_sec++, ts.tv_nsec -= 1000000000L;
		pthread_cond_timedwait(&sp->cv, &sp->mu, &ts);
	}
	h->plan = NULL;
	if (!sp->dealt)
		h->state = 2;   /* interrupted first: the deal, if it comes, leaves it out */
	else if (h->state == 1) {
		slot = answer(h, p);
		strbuf_addf(note, "  spread: %d of the %d units (program x problem x variant) here, "
			    "%d steps; pool '%s': %d host%s, %d GPU%s\n", h->myunits, h->units, h->mine,
			    h->model, h->pool_hosts, h->pool_hosts == 1 ? "" : "s", h->pool_gpus,
			    h->pool_gpus == 1 ? "" : "s");
		*rec = cJSON_CreateObject();
		json_add_str(*rec, "pool", h->model);
		json_add_num(*rec, "pool_hosts", h->pool_hosts);
		json_add_num(*rec, "pool_gpus", h->pool_gpus);
		json_add_num(*rec, "units", h->units);
		json_add_num(*rec, "units_here", h->myunits);
	}
	pthread_mutex_unlock(&sp->mu);
	return slot;
}
