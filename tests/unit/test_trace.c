/* test_trace.c -- unit tests for trace.c: the event trace's lines, from many threads at once. */
#include "core/trace.h"
#include "core/strbuf.h"
#include "check.h"

#include <cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NTHREADS 8
#define NEVENTS 500

static void *writer(void *arg)
{
	char host[16];
	int i;
	snprintf(host, sizeof(host), "h%d", (int)(long)arg);
	for (i = 0; i < NEVENTS; i++) {
		struct trace_args a = TRACE_ARGS_INIT;
		int64_t t0 = trace_now_us();
		a.exit_code = i;
		a.bytes = i;
		trace_span(host, "exec", t0, &a);
	}
	return NULL;
}

/* the file's lines, parsed; NULL entries for lines that are not JSON */
static int read_lines(const char *path, cJSON **v, int max)
{
	char line[4096];
	FILE *fp = fopen(path, "r");
	int n = 0;
	if (!fp)
		return -1;
	while (n < max && fgets(line, sizeof(line), fp))
		v[n++] = cJSON_Parse(line);
	fclose(fp);
	return n;
}

int main(void)
{
	static cJSON *v[NTHREADS * NEVENTS + 64];
	char dir[] = "/tmp/test_trace.XXXXXX", path[64], bad[96];
	struct strbuf err = STRBUF_INIT, big = STRBUF_INIT;
	struct trace_args a = TRACE_ARGS_INIT;
	pthread_t th[NTHREADS];
	int64_t last_ts[NTHREADS + 2];
	int i, n, parsed = 0, spans = 0, names = 0, in_order = 1, tids_ok = 1;

	CHECK(!trace_on() && trace_now_us() == 0, "no trace open: off, time 0", "%s", "on");
	trace_span("x", "exec", 0, NULL);   /* nothing to write to: nothing happens */

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/t.jsonl", dir);
	snprintf(bad, sizeof(bad), "%s/no/such/dir/t.jsonl", dir);
	CHECK(trace_open(bad, &err) == -1 && strstr(err.buf, "cannot write") &&
	      strstr(err.buf, "No such file"), "a path that cannot be written: -1 and why",
	      "%s", err.buf);
	CHECK(!trace_on(), "a failed open leaves the trace off", "%s", "on");

	CHECK(trace_open(path, &err) == 0 && trace_on(), "open: on", "%s", err.buf);
	for (i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, writer, (void *)(long)i);
	for (i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < 1000; i++)
		strbuf_addch(&big, 'x');
	a.detail = big.buf;
	a.signal = "KILL";
	trace_instant(NULL, "mark", &a);
	trace_wait("w", "a test's wait", 20);
	trace_close();
	CHECK(!trace_on(), "closed: off", "%s", "on");
	trace_span("late", "exec", 0, NULL);   /* after close: nowhere, no crash */

	n = read_lines(path, v, (int)(sizeof(v) / sizeof(v[0])));
	for (i = 0; i < NTHREADS + 2; i++)
		last_ts[i] = -1;
	for (i = 0; i < n; i++) {
		const cJSON *o = v[i], *args = cJSON_GetObjectItem(o, "args");
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(o, "name"));
		const char *host = cJSON_GetStringValue(cJSON_GetObjectItem(args, "host"));
		int tid = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(o, "tid"));
		if (!o || !name)
			continue;
		parsed++;
		if (!strcmp(name, "thread_name")) {
			names++;
			continue;
		}
		if (strcmp(name, "exec"))
			continue;
		spans++;
		/* each host's row: the same tid on every line, its spans in order */
		if (tid < 1 || tid > NTHREADS || !host || host[0] != 'h')
			tids_ok = 0;
		else if (cJSON_GetNumberValue(cJSON_GetObjectItem(o, "ts")) < last_ts[tid])
			in_order = 0;
		else
			last_ts[tid] = (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(o, "ts"));
	}
	CHECK(n == NTHREADS * NEVENTS + (NTHREADS + 1) + 1 + 1 && parsed == n,
	      "every line whole JSON: the spans, a name per host (and w), the mark, the wait",
	      "%d lines, %d parsed", n, parsed);
	CHECK(spans == NTHREADS * NEVENTS, "no span lost or doubled", "%d", spans);
	CHECK(names == NTHREADS + 1, "one thread_name line a host", "%d", names);
	CHECK(tids_ok && in_order, "a host keeps one tid; its spans in the order it wrote them",
	      "tids %d order %d", tids_ok, in_order);
	for (i = 0; i < n; i++) {
		const cJSON *o = v[i], *args = cJSON_GetObjectItem(o, "args");
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(o, "name"));
		if (name && !strcmp(name, "mark")) {
			const char *d = cJSON_GetStringValue(cJSON_GetObjectItem(args, "detail"));
			CHECK(d && strlen(d) == 300, "a detail is cut to 300 bytes", "%zu",
			      d ? strlen(d) : 0);
			CHECK(!cJSON_GetObjectItem(args, "exit") && !cJSON_GetObjectItem(args, "bytes") &&
			      !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(args, "signal")), "KILL") &&
			      !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(o, "ph")), "i") &&
			      (int)cJSON_GetNumberValue(cJSON_GetObjectItem(o, "tid")) == 0,
			      "an instant of the controller: no exit, no bytes, its signal, tid 0",
			      "%s", cJSON_PrintUnformatted(o));
		}
		if (name && !strcmp(name, "wait"))
			CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(o, "dur")) >= 20000 &&
			      !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(args, "detail")),
				      "a test's wait"),
			      "trace_wait sleeps and records its span (dur >= 20 ms)", "%g",
			      cJSON_GetNumberValue(cJSON_GetObjectItem(o, "dur")));
		if (name && !strcmp(name, "exec") &&
		    !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(args, "host")), "h0") &&
		    cJSON_GetNumberValue(cJSON_GetObjectItem(args, "exit")) == NEVENTS - 1)
			CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(args, "bytes")) == NEVENTS - 1 &&
			      !cJSON_GetObjectItem(args, "signal") && !cJSON_GetObjectItem(args, "detail") &&
			      cJSON_GetNumberValue(cJSON_GetObjectItem(o, "dur")) >= 0,
			      "a span: exit and bytes as given, no signal or detail when none", "%s",
			      "keys");
	}
	for (i = 0; i < n; i++)
		cJSON_Delete(v[i]);
	unlink(path);
	rmdir(dir);
	strbuf_release(&err);
	strbuf_release(&big);
	return check_summary();
}
