/* heartbeat.c -- one thread feeding every instance guard of a run (heartbeat.h).
 *
 * The thread wakes every 200 ms, beats each slot whose interval has passed
 * (connecting when it has no connection, dropping the connection after a
 * failure so the next beat reconnects) and sleeps again. A slot being
 * removed waits for the beat in flight, so no heartbeat can land after a
 * disarm. Beats are bounded by the SSH timeouts (guard.c). The sleep is a
 * wait on a condition that heartbeat_stop() signals: every run starts this
 * thread, and a plain sleep made each one wait up to 200 ms for it at the
 * end (tests/unit/test_heartbeat.c). */
#include "cloud/heartbeat.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include "cloud/guard.h"
#include "core/timeutil.h"
#include "core/banned.h"

struct slot {
	const struct host *h;
	const struct instance *in;
	struct ssh_conn *conn;
	int64_t next_ms;
	int active;
	int fired;
};

struct heartbeat {
	pthread_t thread;
	pthread_mutex_t mu;       /* slots' active/h/in and stop */
	pthread_cond_t wake;      /* signalled with mu held when stop is set */
	pthread_mutex_t beat_mu;  /* held while a beat is in flight */
	struct slot *s;
	int n;
	int stop;
	int accept_new;
	int started;
};

static void beat_one(struct heartbeat *hb, struct slot *sl)
{
	struct strbuf err = STRBUF_INIT;
	enum go_status st = GO_OK;
	int fired = 0;
	if (!sl->conn) {
		struct ssh_opts o;
		host_ssh_opts(sl->h, hb->accept_new, &o);
		st = ssh_connect(&o, &sl->conn, &err);
	}
	if (st == GO_OK)
		st = guard_beat(sl->conn, sl->h, &fired, &err);
	if (st != GO_OK) {
		ssh_disconnect(sl->conn);
		sl->conn = NULL;
	}
	if (fired)
		sl->fired = 1;
	strbuf_release(&err);
}

static void *loop(void *arg)
{
	struct heartbeat *hb = arg;
	for (;;) {
		int i, stop;
		pthread_mutex_lock(&hb->mu);
		stop = hb->stop;
		pthread_mutex_unlock(&hb->mu);
		if (stop)
			break;
		for (i = 0; i < hb->n; i++) {
			struct slot *sl = &hb->s[i];
			int due;
			pthread_mutex_lock(&hb->beat_mu);
			pthread_mutex_lock(&hb->mu);
			due = sl->active && time_mono_ms() >= sl->next_ms;
			pthread_mutex_unlock(&hb->mu);
			if (due) {
				beat_one(hb, sl);
				sl->next_ms = time_mono_ms() +
					      (int64_t)(guard_beat_interval_s(sl->in) * 1000);
			}
			pthread_mutex_unlock(&hb->beat_mu);
		}
		pthread_mutex_lock(&hb->mu);
		if (!hb->stop) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_nsec += 200L * 1000000L;
			ts.tv_sec += ts.tv_nsec / 1000000000L;
			ts.tv_nsec %= 1000000000L;
			/* a spurious or early wake only means one more look at the slots */
			pthread_cond_timedwait(&hb->wake, &hb->mu, &ts);
		}
		pthread_mutex_unlock(&hb->mu);
	}
	return NULL;
}

struct heartbeat *heartbeat_start(int n, int accept_new_hostkey)
{
	struct heartbeat *hb = xcalloc(1, sizeof(*hb));
	hb->n = n;
	hb->s = xcalloc((size_t)(n > 0 ? n : 1), sizeof(*hb->s));
	hb->accept_new = accept_new_hostkey;
	pthread_condattr_t ca;
	pthread_mutex_init(&hb->mu, NULL);
	pthread_mutex_init(&hb->beat_mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&hb->wake, &ca);
	pthread_condattr_destroy(&ca);
	hb->started = pthread_create(&hb->thread, NULL, loop, hb) == 0;
	return hb;
}

void heartbeat_add(struct heartbeat *hb, int i, const struct host *h, const struct instance *in)
{
	if (!hb || i < 0 || i >= hb->n)
		return;
	pthread_mutex_lock(&hb->mu);
	hb->s[i].h = h;
	hb->s[i].in = in;
	hb->s[i].next_ms = 0;
	hb->s[i].fired = 0;
	hb->s[i].active = 1;
	pthread_mutex_unlock(&hb->mu);
}

void heartbeat_remove(struct heartbeat *hb, int i)
{
	if (!hb || i < 0 || i >= hb->n)
		return;
	pthread_mutex_lock(&hb->beat_mu);
	pthread_mutex_lock(&hb->mu);
	hb->s[i].active = 0;
	pthread_mutex_unlock(&hb->mu);
	ssh_disconnect(hb->s[i].conn);
	hb->s[i].conn = NULL;
	pthread_mutex_unlock(&hb->beat_mu);
}

int heartbeat_fired(struct heartbeat *hb, int i)
{
	int f;
	if (!hb || i < 0 || i >= hb->n)
		return 0;
	pthread_mutex_lock(&hb->beat_mu);
	f = hb->s[i].fired;
	pthread_mutex_unlock(&hb->beat_mu);
	return f;
}

void heartbeat_stop(struct heartbeat *hb)
{
	int i;
	if (!hb)
		return;
	pthread_mutex_lock(&hb->mu);
	hb->stop = 1;
	pthread_cond_signal(&hb->wake);
	pthread_mutex_unlock(&hb->mu);
	if (hb->started)
		pthread_join(hb->thread, NULL);
	for (i = 0; i < hb->n; i++)
		ssh_disconnect(hb->s[i].conn);
	pthread_cond_destroy(&hb->wake);
	pthread_mutex_destroy(&hb->mu);
	pthread_mutex_destroy(&hb->beat_mu);
	free(hb->s);
	free(hb);
}
