/* test_parmap.c -- unit tests for parmap.c: an ordered map over a bounded pool of threads. */
#include "core/parmap.h"
#include "check.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

struct ctx {
	pthread_mutex_t lock;
	int jobs, made, taken, dropped, stop_at;
	int in_flight, max_in_flight;   /* claimed by make, not yet taken or dropped */
	int order_ok;
	int meet;                       /* items 0 and 1 wait here for each other */
	int met;
	pthread_t caller;
	int on_caller;                  /* items made on the caller's thread */
};

static void *make(int i, void *p)
{
	struct ctx *c = p;
	int *r = malloc(sizeof(*r));
	pthread_mutex_lock(&c->lock);
	c->made++;
	if (++c->in_flight > c->max_in_flight)
		c->max_in_flight = c->in_flight;
	c->on_caller += pthread_equal(pthread_self(), c->caller) != 0;
	pthread_mutex_unlock(&c->lock);
	if (c->meet && i < 2) {
		/* two items made at once or never: a bound on a hang, not a timing */
		int k, both = 0;
		pthread_mutex_lock(&c->lock);
		c->met++;
		pthread_mutex_unlock(&c->lock);
		for (k = 0; k < 20000 && !both; k++) {
			struct timespec ts = { 0, 1000000 };
			pthread_mutex_lock(&c->lock);
			both = c->met >= 2;
			pthread_mutex_unlock(&c->lock);
			if (!both)
				nanosleep(&ts, NULL);
		}
	}
	*r = 2 * i;
	return r;
}

static int take(int i, void *r, void *p)
{
	struct ctx *c = p;
	pthread_mutex_lock(&c->lock);
	c->in_flight--;
	pthread_mutex_unlock(&c->lock);
	if (i != c->taken || *(int *)r != 2 * i)
		c->order_ok = 0;
	c->taken++;
	free(r);
	return c->stop_at >= 0 && i == c->stop_at;
}

static void drop(void *r, void *p)
{
	struct ctx *c = p;
	pthread_mutex_lock(&c->lock);
	c->in_flight--;
	c->dropped++;
	pthread_mutex_unlock(&c->lock);
	free(r);
}

static void ctx_init(struct ctx *c, int jobs, int stop_at)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	c->jobs = jobs;
	c->stop_at = stop_at;
	c->order_ok = 1;
	c->caller = pthread_self();
}

int main(void)
{
	struct ctx c;
	int n, cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);

	ctx_init(&c, 4, -1);
	n = pmap_run(0, 4, make, take, drop, &c);
	CHECK(n == 0 && c.made == 0 && c.taken == 0, "no items: nothing made or taken", "%d %d", n,
	      c.made);

	ctx_init(&c, 1, -1);
	n = pmap_run(1, 4, make, take, drop, &c);
	CHECK(n == 1 && c.taken == 1 && c.order_ok, "one item, four jobs: made and taken once", "%d", n);

	ctx_init(&c, 1, -1);
	n = pmap_run(50, 1, make, take, drop, &c);
	CHECK(n == 50 && c.order_ok && c.on_caller == 50 && c.max_in_flight == 1,
	      "one job: every item made on the caller's thread, one at a time, in order",
	      "n %d on caller %d in flight %d", n, c.on_caller, c.max_in_flight);

	ctx_init(&c, 4, -1);
	n = pmap_run(1000, 4, make, take, drop, &c);
	CHECK(n == 1000 && c.made == 1000 && c.dropped == 0 && c.order_ok,
	      "four jobs, 1,000 items: each made once, taken in index order",
	      "n %d made %d order %d", n, c.made, c.order_ok);
	CHECK(c.on_caller == 0, "four jobs: items made on the workers, not the caller", "%d",
	      c.on_caller);
	/* the window (2 x jobs), and the one take() is handed (its slot is free then) */
	CHECK(c.max_in_flight <= 2 * 4 + 1, "at most the window (2 x jobs) made and not taken",
	      "%d in flight", c.max_in_flight);

	ctx_init(&c, 2, -1);
	c.meet = 1;
	n = pmap_run(10, 2, make, take, drop, &c);
	CHECK(n == 10 && c.met == 2 && c.order_ok,
	      "two jobs: items 0 and 1 are made at the same time (each waits for the other)",
	      "met %d", c.met);

	ctx_init(&c, 4, 10);
	n = pmap_run(1000, 4, make, take, drop, &c);
	CHECK(n == 11 && c.taken == 11 && c.made == c.taken + c.dropped && c.in_flight == 0,
	      "take stops at item 10: 11 taken, everything else made is dropped, nothing leaks",
	      "n %d made %d dropped %d in flight %d", n, c.made, c.dropped, c.in_flight);
	CHECK(c.made <= 11 + 2 * 4 + 4, "a stop ends the claiming: at most a window and the jobs past it",
	      "%d made", c.made);

	unsetenv("GPUORCH_JOBS");
	CHECK(pmap_jobs(1) == 1, "cap 1: one job", "%d", pmap_jobs(1));
	CHECK(pmap_jobs(PMAP_JOBS_MAX) == (cpus < PMAP_JOBS_MAX ? cpus : PMAP_JOBS_MAX),
	      "no $GPUORCH_JOBS: the online CPUs", "%d (cpus %d)", pmap_jobs(PMAP_JOBS_MAX), cpus);
	setenv("GPUORCH_JOBS", "3", 1);
	CHECK(pmap_jobs(1) == 3, "GPUORCH_JOBS=3 wins over the cap", "%d", pmap_jobs(1));
	setenv("GPUORCH_JOBS", "1", 1);
	CHECK(pmap_jobs(8) == 1, "GPUORCH_JOBS=1: serial", "%d", pmap_jobs(8));
	setenv("GPUORCH_JOBS", "65", 1);
	CHECK(pmap_jobs(1) == 1, "GPUORCH_JOBS over the maximum: ignored (the cap)", "%d", pmap_jobs(1));
	setenv("GPUORCH_JOBS", "2x", 1);
	CHECK(pmap_jobs(1) == 1, "GPUORCH_JOBS not a number: ignored", "%d", pmap_jobs(1));
	setenv("GPUORCH_JOBS", "0", 1);
	CHECK(pmap_jobs(1) == 1, "GPUORCH_JOBS=0: ignored", "%d", pmap_jobs(1));
	unsetenv("GPUORCH_JOBS");
#ifndef __SANITIZE_ADDRESS__   /* ASan's shadow memory needs the address space unlimited */
	{
		struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
		getrlimit(RLIMIT_AS, &rl);
		if (rl.rlim_cur == RLIM_INFINITY && rl.rlim_max == RLIM_INFINITY) {
			rl.rlim_cur = (rlim_t)1 << 40;
			setrlimit(RLIMIT_AS, &rl);
			CHECK(pmap_jobs(8) == 1, "under an address-space limit: one job", "%d",
			      pmap_jobs(8));
			setenv("GPUORCH_JOBS", "3", 1);
			CHECK(pmap_jobs(8) == 3, "under a limit GPUORCH_JOBS still says", "%d",
			      pmap_jobs(8));
			unsetenv("GPUORCH_JOBS");
		} else {
			printf("# skipped the address-space checks: a limit is set already\n");
		}
	}
#endif
	return check_summary();
}
