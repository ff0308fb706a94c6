/* hostrun-plan.c -- what both executors (an SSH host's runner, a Slurm job:
 * run/slurmrun.c) make of a host's plan the same way: the archs built for,
 * a build's id in the runner's plan, the output cap of an end event, and the
 * runner's plan itself (runplan.h), whole or one job's part of it; an SSH
 * host's steps take their GPU slots here (remote/gpuslots.h), or the ones
 * the pool's deal gave them under --spread (remote/spread.h). */
#include "remote/hostrun-int.h"
#include "remote/gpuslots.h"
#include "remote/runplan.h"
#include "remote/spread.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

void hostrun_add_arch(struct hostrun *hr, const char *arch)
{
	int i;
	for (i = 0; i < hr->narchs; i++)
		if (!strcmp(hr->archs[i], arch))
			return;
	hr->archs = xrealloc(hr->archs, sizeof(char *) * (size_t)(hr->narchs + 2));
	hr->archs[hr->narchs++] = xstrdup(arch);
	hr->archs[hr->narchs] = NULL;
}

char *hostrun_build_id(const struct plan_build *b)
{
	return xstrfmt("%.16s", b->key);
}

void hostrun_plan_ids_free(struct hostrun *hr, char **bids)
{
	int i;
	for (i = 0; bids && i < hr->plan.nbuilds; i++)
		free(bids[i]);
	free(bids);
}

void hostrun_slots_release(struct hostrun *hr)
{
	if (hr->slots)
		gpuslots_release(hr->slots);
	free(hr->slots);
	free(hr->step_slot);
	hr->slots = NULL;
	hr->step_slot = NULL;
}

void hostrun_spread(struct hostrun *hr)
{
	struct gpuslots g;
	struct strbuf e = STRBUF_INIT, note = STRBUF_INIT;
	int *slot, *keep, i, n = 0;
	cJSON *rec;

	if (hr->h->slurm)   /* a cluster's jobs spread already: it runs every step */
		return;
	/* the host's slot count as its steps will take them; a bad "gpus" is
	 * an error when the plan is written: no slot to deal to here */
	if (hr->info.gpu_name && gpuslots_init(&g, hr->h, &hr->info, &e) == GO_OK) {
		n = g.n;
		gpuslots_release(&g);
	}
	strbuf_release(&e);
	slot = spread_arrive(hr->ctx->spread, hr->index, hr->info.gpu_name, n, &hr->plan,
			     hr->ctx->interrupted, &note, &rec);
	strbuf_addstr(&hr->out, note.buf);
	strbuf_release(&note);
	if (rec)
		runw_host_spread(hr->ctx->rec, hr->index, rec);
	free(hr->spread_slot);
	hr->spread_slot = NULL;
	if (!slot)
		return;
	keep = xcalloc((size_t)hr->plan.nsteps + 1, sizeof(int));
	for (i = 0; i < hr->plan.nsteps; i++)
		keep[i] = slot[i] != SPREAD_ELSEWHERE;
	plan_keep_steps(&hr->plan, keep);
	for (i = n = 0; n < hr->plan.nsteps; i++)
		if (keep[i])
			slot[n++] = slot[i];
	hr->spread_slot = slot;
	free(keep);
}

/* The GPU step I's slots (hr->step_slot[i]), its lock and its command with
 * CUDA_VISIBLE_DEVICES (to free): a step of "gpus": N takes N slots. -1: the
 * host has fewer GPUs than it asks for (why says so). */
static int take_slots(struct hostrun *hr, int i, char **lock, char **command, char **why)
{
	const struct plan_step *ps = &hr->plan.steps[i];
	int need = ps->step->gpus > 0 ? ps->step->gpus : 1;
	int dealt = hr->spread_slot ? hr->spread_slot[i] : SPREAD_ANY;
	int first = dealt >= 0 && dealt + need <= hr->slots->n ? dealt
		    : gpuslots_take(hr->slots, need);

	if (first < 0) {
		*why = xstrfmt("the step asks for %d GPUs and host '%s' runs steps on %d "
			       "(its \"gpus\" or its GPU count)", need, hr->h->name, hr->slots->n);
		return -1;
	}
	hr->step_slot[i] = first;
	*lock = gpuslots_locks(hr->slots, first, need);
	*command = gpuslots_command(hr->slots, first, need, ps->command);
	return 0;
}

/* The host's slots taken afresh (part->gpu_lock: an SSH host; under Slurm
 * the GPUs are the job's allocation, and no step holds a slot). */
static enum go_status slots_begin(struct hostrun *hr, const struct hostrun_plan_part *part,
				  struct strbuf *err)
{
	int i;
	hostrun_slots_release(hr);
	if (!part->gpu_lock)
		return GO_OK;
	hr->slots = xcalloc(1, sizeof(*hr->slots));
	hr->step_slot = xcalloc((size_t)hr->plan.nsteps + 1, sizeof(*hr->step_slot));
	for (i = 0; i < hr->plan.nsteps; i++)
		hr->step_slot[i] = -1;
	return gpuslots_init(hr->slots, hr->h, &hr->info, err);
}

/* Whether plan build i goes into this plan. */
static int part_has_build(const struct hostrun *hr, const struct hostrun_plan_part *part, int i)
{
	const struct plan_build *b = &hr->plan.builds[i];
	if (b->skip_reason)
		return 0;
	if (part->all)
		return 1;
	if (part->build == i)
		return 1;
	return part->step >= 0 && hr->plan.steps[part->step].build == b;
}

/* Whether plan step i goes into this plan. */
static int part_has_step(const struct hostrun *hr, const struct hostrun_plan_part *part, int i)
{
	char *why = NULL;
	int runs;
	if (!part->all)
		return part->step == i;
	runs = hr_step_runs(hr, i, &why);
	free(why);
	return runs;
}

/* Step ps into r: its directory (dir_buf: a second attempt's own, to
 * free), command (with its GPUs: cmd, or NULL), build, timeout and GPU
 * locks (NULL: none). Returns its budget, s. */
static int64_t add_step(struct hostrun *hr, const struct hostrun_plan_part *part,
			const struct plan_step *ps, char **bids, const char *lock, const char *cmd,
			struct runplan_step *r, char **dir_buf)
{
	const struct plan *p = &hr->plan;
	/* a second attempt's step starts afresh: the first one's processes
	 * may outlive its job and must not hand it their outputs */
	*dir_buf = part->attempt > 1 ? xstrfmt("%s.try%d", ps->dir, part->attempt) : NULL;
	r->id = ps->id;
	r->dir = *dir_buf ? *dir_buf : ps->dir;
	r->command = cmd ? cmd : ps->command;
	r->timeout_s = ps->step->timeout_s;
	r->build_id = ps->build ? bids[ps->build - p->builds] : NULL;
	if (ps->needs_gpu && lock) {
		r->lock_path = lock;
		r->lock_wait_s = hr->ctx->lock_wait_s;
	}
	return r->timeout_s + r->lock_wait_s + 15;
}

enum go_status hostrun_write_plan(struct hostrun *hr, const struct hostrun_plan_part *part,
				  char ***bids_out, struct strbuf *text, int64_t *budget_ms,
				  struct strbuf *err)
{
	const struct plan *p = &hr->plan;
	const struct spec *s = hr->ctx->spec;
	struct runplan rp;
	struct runplan_build *rb = xcalloc((size_t)p->nbuilds + 1, sizeof(*rb));
	struct runplan_step *rs = xcalloc((size_t)p->nsteps + 1, sizeof(*rs));
	char **dirs = xcalloc((size_t)p->nsteps + 1, sizeof(char *));
	char **bids = xcalloc((size_t)p->nbuilds + 1, sizeof(char *));
	char **owned = xcalloc((size_t)p->nsteps * 2 + 1, sizeof(char *));  /* locks, commands */
	int64_t budget = 300;
	enum go_status st;
	int i, j;

	memset(&rp, 0, sizeof(rp));
	if ((st = slots_begin(hr, part, err)) != GO_OK) {
		free(rb), free(rs), free(dirs), free(bids), free(owned);
		return st;
	}
	for (i = 0; i < p->nbuilds; i++) {
		const struct plan_build *b = &p->builds[i];
		if (!part_has_build(hr, part, i))
			continue;
		bids[i] = hostrun_build_id(b);
		for (j = 0; j < rp.nbuilds; j++)
			if (!strcmp(rb[j].id, bids[i]))
				break;
		if (j < rp.nbuilds) {
			/* the same build twice (plan.h same_as): one runs, both are
			 * recorded; it may fail only if each of them may */
			if (!(b->variant != NULL || b->may_fail))
				rb[j].may_fail = 0;
			continue;
		}
		rb[rp.nbuilds].id = bids[i];
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
		if (!part_has_step(hr, part, i))
			continue;
		/* a step the host has too few GPUs for is skipped, its reason recorded */
		if (hr->slots && p->steps[i].needs_gpu &&
		    take_slots(hr, i, &owned[2 * i], &owned[2 * i + 1], &hr->plan.steps[i].skip_reason) < 0)
			continue;
		budget += add_step(hr, part, &p->steps[i], bids, owned[2 * i], owned[2 * i + 1],
				   &rs[rp.nsteps], &dirs[i]);
		rp.nsteps++;
	}
	rp.src_dir = p->src_dir;
	rp.max_builds = !part->all ? 1 : hr->h->max_builds > 0 ? hr->h->max_builds
				     : runplan_default_max_builds(hr->info.ncores);
	rp.fail_fast = 1;
	rp.text_cap = HOSTRUN_TEXT_CAP;
	rp.probe_later = part->all ? hr->info.later : NULL;
	rp.builds = rb;
	rp.steps = rs;
	st = runplan_write(&rp, text, err);
	if (budget_ms)
		*budget_ms = budget * 1000 > INT_MAX ? INT_MAX : budget * 1000;
	for (i = 0; i < p->nsteps; i++)
		free(dirs[i]);
	for (i = 0; i < 2 * p->nsteps; i++)
		free(owned[i]);
	free(owned);
	free(dirs);
	free(rb);
	free(rs);
	if (bids_out)
		*bids_out = bids;
	else
		hostrun_plan_ids_free(hr, bids);
	return st;
}
