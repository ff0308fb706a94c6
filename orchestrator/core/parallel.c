/* parallel.c -- one thread per task, a tick on the caller's thread (see parallel.h). */
#include "core/parallel.h"
#include "core/strbuf.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include "core/banned.h"

struct par_shared {
	pthread_mutex_t lock;
	pthread_cond_t done_cond;
	int remaining;
};

struct par_slot {
	struct par_shared *sh;
	par_task_fn fn;
	void *arg;
};

static void *par_thread(void *p)
{
	struct par_slot *s = p;
	s->fn(s->arg);
	pthread_mutex_lock(&s->sh->lock);
	s->sh->remaining--;
	pthread_cond_signal(&s->sh->done_cond);
	pthread_mutex_unlock(&s->sh->lock);
	return NULL;
}

int par_run(int n, par_task_fn fn, void **args, par_tick_fn tick, void *tick_arg,
	    int tick_ms)
{
	struct par_shared sh;
	struct par_slot *slots = xcalloc((size_t)n, sizeof(*slots));
	pthread_t *th = xcalloc((size_t)n, sizeof(*th));
	int *started = xcalloc((size_t)n, sizeof(*started));
	int i, rc = 0;

	pthread_mutex_init(&sh.lock, NULL);
	pthread_cond_init(&sh.done_cond, NULL);
	sh.remaining = n;
	for (i = 0; i < n; i++) {
		slots[i].sh = &sh;
		slots[i].fn = fn;
		slots[i].arg = args[i];
		if (pthread_create(&th[i], NULL, par_thread, &slots[i]) == 0)
			started[i] = 1;
		else
			rc = -1;
	}
	for (i = 0; i < n; i++)
		if (!started[i])
			par_thread(&slots[i]);

	pthread_mutex_lock(&sh.lock);
	while (sh.remaining > 0) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)(tick_ms % 1000) * 1000000L;
		ts.tv_sec += tick_ms / 1000 + ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&sh.done_cond, &sh.lock, &ts);
		if (tick && sh.remaining > 0) {
			pthread_mutex_unlock(&sh.lock);
			tick(tick_arg, 0);
			pthread_mutex_lock(&sh.lock);
		}
	}
	pthread_mutex_unlock(&sh.lock);
	for (i = 0; i < n; i++)
		if (started[i])
			pthread_join(th[i], NULL);
	if (tick)
		tick(tick_arg, 1);
	pthread_cond_destroy(&sh.done_cond);
	pthread_mutex_destroy(&sh.lock);
	free(slots);
	free(th);
	free(started);
	return rc;
}
