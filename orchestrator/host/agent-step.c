/* agent-step.c -- gpuorch-agent's run phase, one step at a time (runner.sh's
 * run_step): skipped when its build did not pass, journaled once
 * (.journaled), attached to when an earlier runner of this run started it,
 * else started and waited for; a stop signal kills it (kill_item) and the
 * runner's running builds (on_signal). */
#include "agent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* step_wait DIR: until the step has an rc or nothing runs it any more (no
 * process of ours to wait for): looked at every 0.2 s, stale once a second */
static void step_wait(const char *dir)
{
	char *rc = xfmt("%s/rc", dir);
	int tick = 0;

	while (!is_file(rc)) {
		if (A.stop) {
			kill_item(dir);
			break;
		}
		if (tick % 5 == 0 && stale(dir))
			break;
		tick++;
		wait_events(200);
	}
	free(rc);
}

/* build_status: the result of the step's build for this run ("none": the
 * plan has no such build, "missing": it has no result) */
static void build_status(const char *id, char *out, size_t size)
{
	int k;
	snprintf(out, size, "none");
	for (k = 1; k <= A.plan.nb; k++) {
		char *p;
		if (strcmp(A.plan.b[k - 1].id, id))
			continue;
		snprintf(out, size, "missing");
		p = builds_path(k);
		if (is_file(p))
			first_line(p, out, size);
		free(p);
		return;
	}
}

static void mark(const char *dir, const char *name)
{
	char *p = xfmt("%s/%s", dir, name);
	if (touch_file(p) < 0)
		fprintf(stderr, "runner: cannot write %s: %s\n", p, strerror(errno));
	free(p);
}

static int skipped(const struct step *s, const struct sb *jid)
{
	char bs[64], *why;
	struct sb f = { 0 };

	if (!*s->build)
		return 0;
	build_status(s->build, bs, sizeof(bs));
	if (!strcmp(bs, "pass"))
		return 0;
	why = xfmt("build '%s': %s", s->build, bs);
	sb_addf(&f, ",\"id\":%s,\"reason\":", jid->buf);
	json_str(&f, why);
	ev("step_skipped", f.buf);
	if (mkdir_p(s->dir) == 0)
		mark(s->dir, ".journaled");
	free(why);
	sb_free(&f);
	return 1;
}

static void step_started(const struct step *s, const struct sb *jid, int attached)
{
	struct sb f = { 0 };
	sb_addf(&f, ",\"id\":%s,\"dir\":", jid->buf);
	json_str(&f, s->dir);
	sb_addf(&f, ",\"attached\":%s", attached ? "true" : "false");
	if (attached)
		ev("step_started", f.buf);
	else
		ev_again("step_started", f.buf);
	sb_free(&f);
}

/* launch: start the step and wait for its process; -1: not startable */
static int launch(const struct step *s, const struct sb *jid)
{
	char *rc = xfmt("%s/rc", s->dir);
	pid_t pid;

	if (spawn(s->dir, s->t, s->lock, s->lw, s->cmd, &pid) < 0) {
		A.stop = "error";
		free(A.msg);
		A.msg = xfmt("cannot create the step directory %s", s->dir);
		free(rc);
		return -1;
	}
	A.cur = s->dir;
	step_started(s, jid, 0);
	while (!A.stop && !child_gone(pid))
		wait_events(1000);
	if (!is_file(rc))
		step_wait(s->dir);
	free(rc);
	return 0;
}

static void step_end(const struct step *s, const struct sb *jid)
{
	struct sb f = { 0 }, ef = { 0 }, etf = { 0 };
	const char *est;
	char erc[64];

	end_fields(s->dir, A.stop != NULL, &ef, &etf, &est, erc, sizeof(erc));
	sb_addf(&f, ",\"id\":%s", jid->buf);
	sb_add(&f, ef.buf, ef.len);
	ev("step_end", f.buf);
	/* stopped or lost: it did not end; a resume (reopen) runs it again */
	if (!strcmp(est, "killed") || !strcmp(est, "lost"))
		mark(s->dir, ".reopen");
	mark(s->dir, ".journaled");
	sb_free(&f), sb_free(&ef), sb_free(&etf);
}

void run_step(int j)
{
	const struct step *s = &A.plan.s[j - 1];
	char *jd = xfmt("%s/.journaled", s->dir), *rc = xfmt("%s/rc", s->dir);
	char *ln = xfmt("%s/.launch", s->dir), *q = xfmt("%s/queued", s->dir);
	struct sb jid = { 0 };

	json_str(&jid, s->id);
	if (is_file(jd) || skipped(s, &jid))
		goto out;
	if (!is_file(rc)) {
		if (exists(ln) || nonempty(q)) {
			step_started(s, &jid, 1);
			A.cur = s->dir;
			step_wait(s->dir);
		} else if (launch(s, &jid) < 0) {
			goto out;
		}
		A.cur = NULL;
	}
	step_end(s, &jid);
out:
	free(jd), free(rc), free(ln), free(q);
	sb_free(&jid);
}

void on_signal(const char *name)
{
	if (A.stop)
		return;
	A.stop = "killed";
	free(A.msg);
	A.msg = xfmt("the runner got SIG%s", name);
	kill_builds();
	if (A.cur)
		kill_item(A.cur);
}
