/* parmap.c -- an ordered map over a bounded pool of threads (see parmap.h). */
#include "core/parmap.h"
#include "core/strbuf.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>
#include "core/banned.h"

struct pmap {
	pthread_mutex_t lock;
	pthread_cond_t ready;     /* a result was stored (the caller waits on it) */
	pthread_cond_t room;      /* a result was taken, or stop (workers wait on it) */
	pmap_make_fn make;
	void *ctx;
	int n, window;
	int next;                 /* the next item a worker claims */
	int taken;                /* items the caller has taken */
	int stop;
	void **slot;              /* ring of window results, item i at i % window */
	char *done;               /* slot holds item's result */
};

static void *pmap_worker(void *p)
{
	struct pmap *m = p;
	pthread_mutex_lock(&m->lock);
	for (;;) {
		int i;
		void *r;
		while (!m->stop && m->next < m->n && m->next >= m->taken + m->window)
			pthread_cond_wait(&m->room, &m->lock);
		if (m->stop || m->next >= m->n)
			break;
		i = m->next++;
		pthread_mutex_unlock(&m->lock);
		r = m->make(i, m->ctx);
		pthread_mutex_lock(&m->lock);
		m->slot[i % m->window] = r;
		m->done[i % m->window] = 1;
		pthread_cond_signal(&m->ready);
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

int pmap_jobs(int cap)
{
	const char *s = getenv("GPUORCH_JOBS");
	struct rlimit rl;
	long cpus;
	if (s && *s) {
		char *end;
		long v = strtol(s, &end, 10);
		if (!*end && v >= 1 && v <= PMAP_JOBS_MAX)
			return (int)v;
	}
	/* under an address-space limit (ulimit -v) each thread's malloc arena
	 * (64 MiB reserved by glibc) and stack could exhaust it: one thread */
	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		return 1;
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (cap < 1 || cap > PMAP_JOBS_MAX)
		cap = PMAP_JOBS_MAX;
	return cpus < 1 ? 1 : cpus > cap ? cap : (int)cpus;
}

static int pmap_serial(int n, pmap_make_fn make, pmap_take_fn take, void *ctx)
{
	int i;
	for (i = 0; i < n; i++)
		if (take(i, make(i, ctx), ctx))
			return i + 1;
	return n;
}

/* The caller's side: take each result in order until the end or a stop;
 * then wait for the workers and drop what they made that was not taken. */
static int pmap_collect(struct pmap *m, pmap_take_fn take)
{
	int stopped = 0;
	pthread_mutex_lock(&m->lock);
	while (!stopped && m->taken < m->n) {
		int k = m->taken % m->window;
		void *r;
		while (!m->done[k])
			pthread_cond_wait(&m->ready, &m->lock);
		r = m->slot[k];
		m->slot[k] = NULL;
		m->done[k] = 0;
		m->taken++;
		pthread_cond_broadcast(&m->room);
		pthread_mutex_unlock(&m->lock);
		stopped = take(m->taken - 1, r, m->ctx);
		pthread_mutex_lock(&m->lock);
	}
	m->stop = 1;
	pthread_cond_broadcast(&m->room);
	pthread_mutex_unlock(&m->lock);
	return m->taken;
}

int pmap_run(int n, int jobs, pmap_make_fn make, pmap_take_fn take, pmap_drop_fn drop,
	     void *ctx)
{
	struct pmap m = { .make = make, .ctx = ctx, .n = n };
	pthread_t *th;
	int i, started = 0, taken;

	if (jobs > n)
		jobs = n;
	if (jobs <= 1)
		return pmap_serial(n, make, take, ctx);
	m.window = 2 * jobs;
	m.slot = xcalloc((size_t)m.window, sizeof(*m.slot));
	m.done = xcalloc((size_t)m.window, 1);
	th = xcalloc((size_t)jobs, sizeof(*th));
	pthread_mutex_init(&m.lock, NULL);
	pthread_cond_init(&m.ready, NULL);
	pthread_cond_init(&m.room, NULL);
	for (i = 0; i < jobs; i++)
		if (pthread_create(&th[started], NULL, pmap_worker, &m) == 0)
			started++;
	/* no thread to be had: this one does it all */
	taken = started ? pmap_collect(&m, take) : pmap_serial(n, make, take, ctx);
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < m.window; i++)
		if (m.done[i] && drop)
			drop(m.slot[i], ctx);
	pthread_cond_destroy(&m.room);
	pthread_cond_destroy(&m.ready);
	pthread_mutex_destroy(&m.lock);
	free(m.slot);
	free(m.done);
	free(th);
	return taken;
}
