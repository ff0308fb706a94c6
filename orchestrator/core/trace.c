/* trace.c -- the controller's event trace: JSON lines of Chrome trace events
 * (trace.h, docs/trace.md).
 *
 * DESIGN: one FILE*, one mutex. An event is made as a cJSON object outside
 * the lock, printed unformatted, and written with its newline under the
 * lock and flushed, so a line is whole even when the process dies. Each
 * host gets a small "tid" the first time it is seen (under the lock), and
 * a "thread_name" metadata line naming it, so a viewer shows one row per
 * host. */
#include "core/trace.h"
#include "core/strbuf.h"
#include "core/timeutil.h"

#include <cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "core/banned.h"

#define TRACE_MAX_HOSTS 256
#define TRACE_DETAIL_MAX 300

volatile int trace_active;
_Thread_local const char *trace_what;
static FILE *trace_fp;
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static struct timespec trace_t0;
static char *hosts[TRACE_MAX_HOSTS];
static int nhosts;

static int64_t since_t0_us(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)(now.tv_sec - trace_t0.tv_sec) * 1000000 +
	       (now.tv_nsec - trace_t0.tv_nsec) / 1000;
}

int64_t trace_now_us(void)
{
	return trace_active ? since_t0_us() : 0;
}

static void forget_hosts(void)
{
	int i;
	for (i = 0; i < nhosts; i++)
		free(hosts[i]);
	nhosts = 0;
}

int trace_open(const char *path, struct strbuf *err)
{
	FILE *fp = fopen(path, "w");
	if (!fp) {
		strbuf_addf(err, "--trace: cannot write '%s': %s", path, strerror(errno));
		return -1;
	}
	trace_close();
	pthread_mutex_lock(&trace_lock);
	trace_fp = fp;
	clock_gettime(CLOCK_MONOTONIC, &trace_t0);
	trace_active = 1;
	pthread_mutex_unlock(&trace_lock);
	return 0;
}

void trace_close(void)
{
	pthread_mutex_lock(&trace_lock);
	trace_active = 0;
	if (trace_fp)
		fclose(trace_fp);
	trace_fp = NULL;
	forget_hosts();
	pthread_mutex_unlock(&trace_lock);
}

/* host's row (1 + its index; 0: the controller), naming it the first time.
 * Under trace_lock. */
static int host_tid(const char *host)
{
	cJSON *m, *args;
	char *line;
	int i;

	if (!host)
		return 0;
	for (i = 0; i < nhosts; i++)
		if (!strcmp(hosts[i], host))
			return i + 1;
	if (nhosts == TRACE_MAX_HOSTS)
		return TRACE_MAX_HOSTS + 1;   /* the rest share one row; args name them */
	hosts[nhosts++] = xstrdup(host);
	m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "name", "thread_name");
	cJSON_AddStringToObject(m, "ph", "M");
	cJSON_AddNumberToObject(m, "pid", (double)getpid());
	cJSON_AddNumberToObject(m, "tid", nhosts);
	args = cJSON_AddObjectToObject(m, "args");
	cJSON_AddStringToObject(args, "name", host);
	line = cJSON_PrintUnformatted(m);
	if (line)
		fprintf(trace_fp, "%s\n", line);
	free(line);
	cJSON_Delete(m);
	return nhosts;
}

static void add_args(cJSON *ev, const char *host, const struct trace_args *a)
{
	cJSON *args = cJSON_AddObjectToObject(ev, "args");
	char cut[TRACE_DETAIL_MAX + 1];

	cJSON_AddStringToObject(args, "host", host ? host : "");
	if (!a)
		return;
	if (a->detail) {
		snprintf(cut, sizeof(cut), "%s", a->detail);
		cJSON_AddStringToObject(args, "detail", cut);
	}
	if (a->what)
		cJSON_AddStringToObject(args, "what", a->what);
	if (a->via)
		cJSON_AddStringToObject(args, "via", a->via);
	if (a->status)
		cJSON_AddStringToObject(args, "status", a->status);
	if (a->exit_code != TRACE_NO_EXIT)
		cJSON_AddNumberToObject(args, "exit", a->exit_code);
	if (a->signal && *a->signal)
		cJSON_AddStringToObject(args, "signal", a->signal);
	if (a->bytes >= 0)
		cJSON_AddNumberToObject(args, "bytes", (double)a->bytes);
}

static void emit(const char *host, const char *name, const char *ph, int64_t ts, int64_t dur,
		 const struct trace_args *a)
{
	cJSON *ev = cJSON_CreateObject();
	char *line;

	cJSON_AddStringToObject(ev, "name", name);
	cJSON_AddStringToObject(ev, "cat", "gpuorch");
	cJSON_AddStringToObject(ev, "ph", ph);
	cJSON_AddNumberToObject(ev, "ts", (double)ts);
	if (dur >= 0)
		cJSON_AddNumberToObject(ev, "dur", (double)dur);
	else
		cJSON_AddStringToObject(ev, "s", "t");   /* an instant on its host's row */
	cJSON_AddNumberToObject(ev, "pid", (double)getpid());
	add_args(ev, host, a);
	pthread_mutex_lock(&trace_lock);
	if (trace_fp) {
		cJSON_AddNumberToObject(ev, "tid", host_tid(host));
		line = cJSON_PrintUnformatted(ev);
		if (line) {
			fprintf(trace_fp, "%s\n", line);
			fflush(trace_fp);
		}
		free(line);
	}
	pthread_mutex_unlock(&trace_lock);
	cJSON_Delete(ev);
}

void trace_span(const char *host, const char *name, int64_t start_us,
		const struct trace_args *a)
{
	int64_t now;
	if (!trace_active)
		return;
	now = since_t0_us();
	emit(host, name, "X", start_us, now - start_us, a);
}

void trace_instant(const char *host, const char *name, const struct trace_args *a)
{
	if (!trace_active)
		return;
	emit(host, name, "i", since_t0_us(), -1, a);
}

void trace_wait(const char *host, const char *why, int64_t ms)
{
	struct trace_args a = TRACE_ARGS_INIT;
	int64_t t0 = trace_now_us();
	time_sleep_ms(ms);
	if (!trace_active)
		return;
	a.detail = why;
	trace_span(host, "wait", t0, &a);
}
