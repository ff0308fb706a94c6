/* plan-keep.c -- a plan cut down to some of its steps (plan_keep_steps):
 * the steps another host runs (`run --spread`) and the builds only they
 * needed leave it; what stays keeps its order. */
#include "spec/plan.h"

#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

static void step_free(struct plan_step *ps)
{
	free(ps->id);
	free(ps->dir);
	free(ps->command);
	free(ps->arch);
	free(ps->skip_reason);
	free(ps->tool_log);
	free(ps->profile_rep);
	free(ps->profile_csv);
}

static void build_free(struct plan_build *b)
{
	free(b->arch);
	free(b->dir);
	free(b->bin);
	free(b->tree);
	free(b->command);
	free(b->skip_reason);
}

/* Which builds stay: every build a kept step names (and what it is the
 * same as), every build no step names (the CUPTI library's). */
static char *builds_kept(const struct plan *p, const int *keep)
{
	char *named = xcalloc((size_t)p->nbuilds + 1, 1), *kept = xcalloc((size_t)p->nbuilds + 1, 1);
	int i;
	for (i = 0; i < p->nsteps; i++) {
		const struct plan_build *b = p->steps[i].build;
		if (!b)
			continue;
		named[b - p->builds] = 1;
		if (keep[i]) {
			kept[b - p->builds] = 1;
			if (b->same_as)
				kept[b->same_as - p->builds] = 1;
		}
	}
	for (i = 0; i < p->nbuilds; i++)
		if (!named[i])
			kept[i] = 1;
	free(named);
	return kept;
}

void plan_keep_steps(struct plan *p, const int *keep)
{
	char *kept = builds_kept(p, keep);
	int *to = xcalloc((size_t)p->nbuilds + 1, sizeof(int));
	int i, n = 0;

	for (i = 0; i < p->nbuilds; i++) {
		if (!kept[i]) {
			build_free(&p->builds[i]);
			to[i] = -1;
			continue;
		}
		to[i] = n;
		if (n != i)
			p->builds[n] = p->builds[i];
		n++;
	}
	/* pointers into the builds, re-aimed at where their builds went */
	for (i = 0; i < n; i++)
		if (p->builds[i].same_as)
			p->builds[i].same_as = &p->builds[to[p->builds[i].same_as - p->builds]];
	if (p->ktrace)
		p->ktrace = &p->builds[to[p->ktrace - p->builds]];
	p->nbuilds = n;
	n = 0;
	for (i = 0; i < p->nsteps; i++) {
		struct plan_step *ps = &p->steps[i];
		if (!keep[i]) {
			step_free(ps);
			continue;
		}
		if (ps->build)
			ps->build = &p->builds[to[ps->build - p->builds]];
		if (n != i)
			p->steps[n] = *ps;
		n++;
	}
	p->nsteps = n;
	free(to);
	free(kept);
}
