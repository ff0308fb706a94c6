/* test_spread.c -- unit tests of remote/spread.c (the deal of `run
 * --spread`: pools by GPU model, units round robin over the pool's slots,
 * GPU position first) and spec/plan-keep.c (a plan cut down to its host's
 * steps and the builds they need). */
#include "remote/spread.h"
#include "core/jsonutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/banned.h"

static struct spec_step bench = { .kind = STEP_BENCHMARK, .program = (char *)"p" };
static struct spec_step check = { .kind = STEP_CORRECTNESS, .program = (char *)"p" };
static struct spec_step pair = { .kind = STEP_BENCHMARK, .program = (char *)"nccl", .gpus = 2 };
static struct spec_problem probs[8] = { { .name = (char *)"q0" }, { .name = (char *)"q1" },
	{ .name = (char *)"q2" }, { .name = (char *)"q3" }, { .name = (char *)"q4" },
	{ .name = (char *)"q5" }, { .name = (char *)"q6" }, { .name = (char *)"q7" } };

/* A plan of n steps: step i of kind k[i] (bench, check, pair) on problem pr[i]. */
static void plan_of(struct plan *p, int n, struct spec_step *const *k, const int *pr)
{
	int i;
	memset(p, 0, sizeof(*p));
	p->steps = calloc((size_t)n + 1, sizeof(*p->steps));
	p->nsteps = n;
	for (i = 0; i < n; i++) {
		p->steps[i].step = k[i];
		p->steps[i].problem = &probs[pr[i]];
		p->steps[i].id = xstrfmt("%d.%s.%s", (int)k[i]->kind, k[i]->program, probs[pr[i]].name);
	}
}

static void plan_free(struct plan *p)
{
	int i;
	for (i = 0; i < p->nsteps; i++)
		free(p->steps[i].id);
	free(p->steps);
}

struct arrival {
	struct spread *sp;
	int index, nslots;
	const char *model;
	struct plan *p;
	int *slot;
	struct strbuf note;
	cJSON *rec;
};

static void *arrive(void *arg)
{
	struct arrival *a = arg;
	a->slot = spread_arrive(a->sp, a->index, a->model, a->nslots, a->p, NULL, &a->note, &a->rec);
	return NULL;
}

/* Hosts 0..n-1 arrive at once (each on its own thread; model[i] NULL:
 * it leaves instead). */
static void arrive_all(struct arrival *a, int n, struct spread *sp)
{
	pthread_t t[8];
	int i;
	for (i = 0; i < n; i++) {
		a[i].sp = sp;
		a[i].index = i;
		strbuf_init(&a[i].note, 0);
		a[i].rec = NULL;
		a[i].slot = NULL;
		if (a[i].model)
			pthread_create(&t[i], NULL, arrive, &a[i]);
		else
			spread_leave(sp, i);
	}
	for (i = 0; i < n; i++)
		if (a[i].model)
			pthread_join(t[i], NULL);
}

static void release_all(struct arrival *a, int n)
{
	int i;
	for (i = 0; i < n; i++) {
		free(a[i].slot);
		strbuf_release(&a[i].note);
		cJSON_Delete(a[i].rec);
	}
}

static void slots_str(struct strbuf *sb, const int *slot, int n)
{
	int i;
	strbuf_reset(sb);
	for (i = 0; i < n; i++)
		strbuf_addf(sb, "%s%d", i ? " " : "", slot[i]);
}

static void test_two_hosts(void)
{
	struct spec_step *k[16];
	int pr[16], i;
	struct plan p0, p1;
	struct arrival a[2];
	struct spread *sp = spread_new(2);
	struct strbuf sb = STRBUF_INIT;

	/* 8 problems, a correctness and a benchmark step each: 8 units */
	for (i = 0; i < 8; i++) {
		k[i] = &check, pr[i] = i;
		k[8 + i] = &bench, pr[8 + i] = i;
	}
	plan_of(&p0, 16, k, pr);
	plan_of(&p1, 16, k, pr);
	memset(a, 0, sizeof(a));
	a[0].model = a[1].model = "H100";
	a[0].nslots = a[1].nslots = 4;
	a[0].p = &p0, a[1].p = &p1;
	arrive_all(a, 2, sp);
	slots_str(&sb, a[0].slot, 16);
	CHECK(!strcmp(sb.buf, "0 -1 1 -1 2 -1 3 -1 0 -1 1 -1 2 -1 3 -1"),
	      "host 0: units 0, 2, 4, 6 on its GPUs 0-3, both steps of a unit on one GPU", "%s", sb.buf);
	slots_str(&sb, a[1].slot, 16);
	CHECK(!strcmp(sb.buf, "-1 0 -1 1 -1 2 -1 3 -1 0 -1 1 -1 2 -1 3"),
	      "host 1: units 1, 3, 5, 7", "%s", sb.buf);
	CHECK(strstr(a[0].note.buf, "spread: 4 of the 8 units") &&
	      strstr(a[0].note.buf, "pool 'H100': 2 hosts, 8 GPUs"), "the note", "%s", a[0].note.buf);
	CHECK(json_num(a[1].rec, "units_here", -1) == 4 && json_num(a[1].rec, "pool_gpus", -1) == 8,
	      "the record's spread", "%s", "");
	/* a host planned again gets the same answer, by step id */
	{
		cJSON *r2;
		int *again = spread_arrive(sp, 0, "H100", 4, &p0, NULL, &a[0].note, &r2);
		struct strbuf sb2 = STRBUF_INIT;
		slots_str(&sb, a[0].slot, 16);
		slots_str(&sb2, again, 16);
		CHECK(!strcmp(sb.buf, sb2.buf), "planned again: the first deal", "%s", sb2.buf);
		free(again);
		cJSON_Delete(r2);
		strbuf_release(&sb2);
	}
	release_all(a, 2);
	spread_free(sp);
	plan_free(&p0);
	plan_free(&p1);
	strbuf_release(&sb);
}

static void test_models_and_leaving(void)
{
	struct spec_step *k[4] = { &bench, &bench, &bench, &bench };
	int pr[4] = { 0, 1, 2, 3 };
	struct plan p[3];
	struct arrival a[3];
	struct spread *sp = spread_new(3);
	struct strbuf sb = STRBUF_INIT;
	int i;

	for (i = 0; i < 3; i++)
		plan_of(&p[i], 4, k, pr);
	memset(a, 0, sizeof(a));
	a[0].model = "H100", a[0].nslots = 4, a[0].p = &p[0];
	a[1].model = NULL;                                     /* lost before its plan */
	a[2].model = "A100", a[2].nslots = 2, a[2].p = &p[2];
	arrive_all(a, 3, sp);
	slots_str(&sb, a[0].slot, 4);
	CHECK(!strcmp(sb.buf, "0 1 2 3"), "a pool of one H100 host (the other left): all of it", "%s", sb.buf);
	slots_str(&sb, a[2].slot, 4);
	CHECK(!strcmp(sb.buf, "0 1 0 1"), "the A100 pool: the whole experiment too, over its 2 GPUs",
	      "%s", sb.buf);
	CHECK(!a[1].slot, "the host that left gets nothing", "%s", "");
	release_all(a, 3);
	spread_free(sp);
	for (i = 0; i < 3; i++)
		plan_free(&p[i]);
	strbuf_release(&sb);
}

static void test_gpus_n(void)
{
	/* units: q0 one GPU, q1 two GPUs, q2 one GPU; host 0 has 1 GPU, host 1 has 2 */
	struct spec_step *k[3] = { &bench, &pair, &bench };
	int pr[3] = { 0, 1, 2 };
	struct plan p0, p1;
	struct arrival a[2];
	struct spread *sp = spread_new(2);
	struct strbuf sb = STRBUF_INIT;

	plan_of(&p0, 3, k, pr);
	plan_of(&p1, 3, k, pr);
	memset(a, 0, sizeof(a));
	a[0].model = a[1].model = "H200";
	a[0].nslots = 1, a[1].nslots = 2;
	a[0].p = &p0, a[1].p = &p1;
	arrive_all(a, 2, sp);
	slots_str(&sb, a[0].slot, 3);
	CHECK(!strcmp(sb.buf, "0 -1 -1"), "host 0 (1 GPU): q0 only", "%s", sb.buf);
	slots_str(&sb, a[1].slot, 3);
	/* the pool's slots: h0 g0, h1 g0, h1 g1; q1 skips none (h1 g0 has room
	 * for 2 from there), q2 takes the next, h1 g1 (its lock waits for q1's) */
	CHECK(!strcmp(sb.buf, "-1 0 1"),
	      "host 1 (2 GPUs): the 2-GPU unit on its GPUs 0-1, then q2 on its GPU 1", "%s", sb.buf);
	release_all(a, 2);
	spread_free(sp);
	/* host 0 of 1 GPU first in line for the 2-GPU unit: it goes to the next host that has 2 */
	{
		struct spec_step *k2[2] = { &pair, &bench };
		int pr2[2] = { 1, 0 };
		plan_free(&p0);
		plan_free(&p1);
		plan_of(&p0, 2, k2, pr2);
		plan_of(&p1, 2, k2, pr2);
		sp = spread_new(2);
		arrive_all(a, 2, sp);
		slots_str(&sb, a[0].slot, 2);
		CHECK(!strcmp(sb.buf, "-1 -1"), "host 0 (1 GPU): not the 2-GPU unit; q0 goes on from there",
		      "%s", sb.buf);
		slots_str(&sb, a[1].slot, 2);
		CHECK(!strcmp(sb.buf, "0 1"), "host 1: the 2-GPU unit, then q0 on the next slot", "%s", sb.buf);
	}
	release_all(a, 2);
	spread_free(sp);
	plan_free(&p0);
	plan_free(&p1);
	strbuf_release(&sb);
}

/* Steps q0-q3; builds: b0 for q0, b1 for q1 and q2, b2 (the same as b0)
 * for q3, b3 named by no step (the CUPTI library's). */
static void keep_plan(struct plan *p)
{
	struct spec_step *k[4] = { &bench, &bench, &bench, &bench };
	int pr[4] = { 0, 1, 2, 3 }, i;

	plan_of(p, 4, k, pr);
	p->builds = calloc(5, sizeof(*p->builds));
	p->nbuilds = 4;
	for (i = 0; i < 4; i++)
		p->builds[i].dir = xstrfmt("b%d", i);
	p->builds[2].same_as = &p->builds[0];
	p->ktrace = &p->builds[3];
	p->steps[0].build = &p->builds[0];
	p->steps[1].build = &p->builds[1];
	p->steps[2].build = &p->builds[1];
	p->steps[3].build = &p->builds[2];
}

static void test_plan_keep(void)
{
	struct plan p;
	int odd[4] = { 0, 1, 0, 1 }, one[4] = { 0, 1, 0, 0 };

	keep_plan(&p);
	plan_keep_steps(&p, odd);
	CHECK(p.nsteps == 2 && !strcmp(p.steps[0].problem->name, "q1") && !strcmp(p.steps[1].problem->name, "q3"),
	      "the kept steps, in order", "%d", p.nsteps);
	CHECK(p.nbuilds == 4 && p.builds[2].same_as == &p.builds[0] && p.steps[1].build == &p.builds[2],
	      "every build stays: b0 is what q3's b2 is the same as, b3 is named by no step", "%d", p.nbuilds);
	plan_release(&p);

	keep_plan(&p);
	plan_keep_steps(&p, one);
	CHECK(p.nsteps == 1 && p.nbuilds == 2 && !strcmp(p.builds[0].dir, "b1") &&
	      !strcmp(p.builds[1].dir, "b3") && p.steps[0].build == &p.builds[0] && p.ktrace == &p.builds[1],
	      "builds only dropped steps name go; the pointers follow the builds that stay",
	      "%d steps, %d builds", p.nsteps, p.nbuilds);
	plan_release(&p);
}

static void test_interrupted(void)
{
	struct spec_step *k[2] = { &bench, &bench };
	int pr[2] = { 0, 1 };
	struct plan p0, p1;
	struct spread *sp = spread_new(2);
	struct strbuf note = STRBUF_INIT, sb = STRBUF_INIT;
	volatile sig_atomic_t stop = 1;
	cJSON *rec;
	int *slot;

	plan_of(&p0, 2, k, pr);
	plan_of(&p1, 2, k, pr);
	slot = spread_arrive(sp, 0, "H100", 4, &p0, &stop, &note, &rec);
	CHECK(!slot && !rec && !note.len, "interrupted before the deal: no answer (the host runs it all)",
	      "%s", note.buf);
	slot = spread_arrive(sp, 1, "H100", 4, &p1, NULL, &note, &rec);
	slots_str(&sb, slot, 2);
	CHECK(!strcmp(sb.buf, "0 1") && json_num(rec, "pool_hosts", -1) == 1,
	      "the deal leaves the interrupted host out", "%s", sb.buf);
	free(slot);
	cJSON_Delete(rec);
	slot = spread_arrive(sp, 0, "H100", 4, &p0, NULL, &note, &rec);
	CHECK(!slot && !rec, "asked again afterwards: still no part of it", "%s", "");
	spread_free(sp);
	plan_free(&p0);
	plan_free(&p1);
	strbuf_release(&note);
	strbuf_release(&sb);
}

int main(void)
{
	test_interrupted();
	test_two_hosts();
	test_models_and_leaving();
	test_gpus_n();
	test_plan_keep();
	return check_summary();
}
