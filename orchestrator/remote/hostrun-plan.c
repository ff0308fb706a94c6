/* hostrun-plan.c -- what both executors (an SSH host's runner, a Slurm job:
 * run/slurmrun.c) make of a host's plan the same way: the archs built for,
 * a build's id in the runner's plan, the output cap of an end event, and the
 * runner's plan itself (runplan.h), whole or one job's part of it. */
#include "remote/hostrun-int.h"
#include "remote/runplan.h"

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
 * free), command, build, timeout and GPU lock. Returns its budget, s. */
static int64_t add_step(struct hostrun *hr, const struct hostrun_plan_part *part,
			const struct plan_step *ps, char **bids, const char *lock,
			struct runplan_step *r, char **dir_buf)
{
	const struct plan *p = &hr->plan;
	/* a second attempt's step starts afresh: the first one's processes
	 * may outlive its job and must not hand it their outputs */
	*dir_buf = part->attempt > 1 ? xstrfmt("%s.try%d", ps->dir, part->attempt) : NULL;
	r->id = ps->id;
	r->dir = *dir_buf ? *dir_buf : ps->dir;
	r->command = ps->command;
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
	/* under Slurm the GPU is the job's allocation: no gpuorch lock */
	char *lock = part->gpu_lock ? xstrfmt("/tmp/gpuorch-gpu%d.lock", hr->h->gpu_index) : NULL;
	int64_t budget = 300;
	enum go_status st;
	int i, j;

	memset(&rp, 0, sizeof(rp));
	for (i = 0; i < p->nbuilds; i++) {
		const struct plan_build *b = &p->builds[i];
		if (!part_has_build(hr, part, i))
			continue;
		bids[i] = hostrun_build_id(b);
		for (j = 0; j < rp.nbuilds; j++)
			if (!strcmp(rb[j].id, bids[i]))
				break;
		if (j < rp.nbuilds)
			continue;   /* the same build twice: one runs, both are recorded */
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
		budget += add_step(hr, part, &p->steps[i], bids, lock, &rs[rp.nsteps], &dirs[i]);
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
	free(dirs);
	free(rb);
	free(rs);
	free(lock);
	if (bids_out)
		*bids_out = bids;
	else
		hostrun_plan_ids_free(hr, bids);
	return st;
}
