/* agent-kill.c -- gpuorch-agent's `kill RUNDIR`: SIGTERM to the runner (which
 * kills and journals its running items), then, under the run's lock, every
 * item a dead runner left claimed is killed and journaled "killed"; writes
 * runner.stopped (the run is never started again) and prints "killed". */
#include "agent.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void stop_runner(const char *rd, int *was)
{
	char *pf = xfmt("%s/runner.pid", rd), buf[64];
	int i;

	if (held(rd) && nonempty(pf) && first_line(pf, buf, sizeof(buf)) == 0) {
		*was = 1;
		if (atol(buf) > 0)
			(void)kill((pid_t)atol(buf), SIGTERM); /* gone already: nothing to stop */
		for (i = 0; i < 300 && held(rd); i++)
			sleep_ms(100);
	}
	free(pf);
}

static void kill_left_builds(void)
{
	int k;
	for (k = 1; k <= A.plan.nb; k++) {
		struct build *b = &A.plan.b[k - 1];
		char *p = builds_path(k);
		if (owned(b->dir) && !is_file(p)) {
			kill_item(b->dir);
			b->killed = 1;
			build_end(k);
		}
		free(p);
	}
}

static void touch_in(const char *dir, const char *name)
{
	char *p = xfmt("%s/%s", dir, name);
	if (touch_file(p) < 0)
		fprintf(stderr, "runner: cannot write %s: %s\n", p, strerror(errno));
	free(p);
}

static void kill_left_steps(void)
{
	int k;
	for (k = 1; k <= A.plan.ns; k++) {
		const struct step *s = &A.plan.s[k - 1];
		char *ln = xfmt("%s/.launch", s->dir), *jd = xfmt("%s/.journaled", s->dir), erc[64];
		struct sb f = { 0 }, ef = { 0 }, etf = { 0 };
		const char *est;
		if (exists(ln) && !is_file(jd)) {
			kill_item(s->dir);
			end_fields(s->dir, 1, &ef, &etf, &est, erc, sizeof(erc));
			sb_adds(&f, ",\"id\":");
			json_str(&f, s->id);
			sb_add(&f, ef.buf, ef.len);
			ev("step_end", f.buf);
			touch_in(s->dir, ".reopen");
			touch_in(s->dir, ".journaled");
		}
		free(ln), free(jd);
		sb_free(&f), sb_free(&ef), sb_free(&etf);
	}
}

int cmd_kill(const char *rd)
{
	char *p = xfmt("%s/plan.sh", rd), *lk = xfmt("%s/runner.lock", rd), buf[64] = "";
	char *st = xfmt("%s/runner.stopped", rd), *done = xfmt("%s/runner.done", rd);
	int was = 0, lock;

	A.rd = rd;
	A.jpath = xfmt("%s/journal", rd);
	if (!is_file(p))
		die("no plan at '%s'", p);
	stop_runner(rd, &was);
	if ((lock = open_lock(lk)) < 0 || flock_wait(lock, 5) < 0) {
		free(lk);
		lk = xfmt("%s/runner.pid", rd);
		first_line(lk, buf, sizeof(buf));
		die("the runner %s did not stop within 30 s", buf);
	}
	if (touch_file(st) < 0)
		die("cannot write %s: %s", st, strerror(errno));
	A.killcmd = 1;
	plan_read(&A.plan, p);
	free(p);
	p = xfmt("%s/.builds", rd);
	if (mkdir_p(p) < 0)
		fprintf(stderr, "runner: cannot make %s: %s\n", p, strerror(errno));
	kill_left_builds();
	kill_left_steps();
	if (!was && !exists(done) && is_file(A.jpath))
		ev("runner_ended", ",\"status\":\"killed\",\"message\":"
				   "\"stopped by runner.sh kill after the runner had gone\"");
	puts("killed");
	xclose(lock);
	free(p), free(lk), free(st), free(done);
	return 0;
}
