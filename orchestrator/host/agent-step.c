/* agent-step.c -- gpuorch-agent's run phase (runner.sh's run_step, with GPU
 * slots): a step is skipped when its build did not pass, journaled once
 * (.journaled), attached to when an earlier runner of this run started it,
 * else started; steps whose GPU locks differ run at once (one per GPU slot,
 * docs/runner.md "GPU slots"), a step without a lock runs alone, and the
 * ends are journaled in plan order. A stop signal kills the running steps
 * (kill_item) and the runner's running builds (on_signal). */
#include "agent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* the steps looked at for a start, from the first not journaled: enough
 * to fill every GPU slot of a host many times over */
#define WINDOW 128

/* a step's state in the run phase */
enum { WAITING, RUNNING, ENDED, JOURNALED };
static int *state;     /* per step */
static pid_t *pids;    /* a RUNNING step's item process; 0: attached to */

static struct sb jid_of(const struct step *s)
{
	struct sb jid = { 0 };
	json_str(&jid, s->id);
	return jid;
}

static int has_file(const char *dir, const char *name, int want_nonempty)
{
	char *p = xfmt("%s/%s", dir, name);
	int r = want_nonempty ? nonempty(p) : exists(p);
	free(p);
	return r;
}

/* build_passed: the step has no build, or its build passed */
static int build_passed(const struct step *s)
{
	char bs[64];
	if (!*s->build)
		return 1;
	build_status(s->build, bs, sizeof(bs));
	return !strcmp(bs, "pass");
}

/* share: the two lock lists (':'-joined paths) name a lock in common */
static int share(const char *a, const char *b)
{
	const char *p = a;
	size_t bn = strlen(b);
	while (*p) {
		size_t n = strcspn(p, ":");
		const char *q = b;
		while (q < b + bn) {
			size_t m = strcspn(q, ":");
			if (m == n && !strncmp(p, q, n))
				return 1;
			q += m + (q[m] == ':');
		}
		p += n + (p[n] == ':');
	}
	return 0;
}

/* startable K: nothing lockless runs or waits before it; a lockless step
 * runs alone; a locked one only while no running step holds one of its
 * locks and no earlier waiting step wants one (each GPU's steps keep their
 * plan order). Running steps are all in [NEXT, NEXT + WINDOW). */
static int startable(int k, int next)
{
	const struct step *s = &A.plan.s[k];
	int i;

	for (i = next; i < A.plan.ns && i < next + WINDOW; i++) {
		const struct step *o = &A.plan.s[i];
		if (i == k || (state[i] != RUNNING && !(state[i] == WAITING && i < k)))
			continue;
		if (state[i] == WAITING && !build_passed(o))
			continue; /* journaled as skipped in its turn */
		if (!*s->lock || !*o->lock || share(s->lock, o->lock))
			return 0;
	}
	return 1;
}

/* look: a step's state from its directory (a runner before this one may
 * have started, ended or journaled it) */
static void look(int k)
{
	const struct step *s = &A.plan.s[k];
	struct sb jid;

	if (state[k] == WAITING) {
		if (has_file(s->dir, ".journaled", 0))
			state[k] = JOURNALED;
		else if (has_file(s->dir, "rc", 0))
			state[k] = ENDED;
		else if (has_file(s->dir, ".launch", 0) || has_file(s->dir, "queued", 1)) {
			jid = jid_of(s);
			step_started(s, &jid, 1);
			sb_free(&jid);
			state[k] = RUNNING;
			pids[k] = 0;
		}
	} else if (state[k] == RUNNING) {
		char *rc = xfmt("%s/rc", s->dir);
		if (is_file(rc) || ((!pids[k] || child_gone(pids[k])) && stale(s->dir)))
			state[k] = ENDED;
		free(rc);
	}
}

/* launch: start step K; -1: not startable (the run stops with an error) */
static int launch(int k)
{
	const struct step *s = &A.plan.s[k];
	struct sb jid = jid_of(s);

	if (spawn(s->dir, s->t, s->lock, s->lw, s->cmd, &pids[k]) < 0) {
		A.stop = "error";
		free(A.msg);
		A.msg = xfmt("cannot create the step directory %s", s->dir);
		sb_free(&jid);
		return -1;
	}
	state[k] = RUNNING;
	step_started(s, &jid, 0);
	sb_free(&jid);
	return 0;
}

/* journal: the ends from step *NEXT on, in plan order, as far as they are
 * in (stopped: the ones not started are left to a resume); 1: one was */
static int journal(int *next)
{
	int any = 0;
	while (*next < A.plan.ns) {
		int k = *next;
		const struct step *s = &A.plan.s[k];
		struct sb jid = jid_of(s);

		look(k);
		if (state[k] == WAITING && !A.stop && skipped(s, &jid))
			state[k] = JOURNALED;
		else if (state[k] == ENDED) {
			step_end(s, &jid);
			state[k] = JOURNALED;
			any = 1;
		}
		sb_free(&jid);
		if (state[k] == RUNNING || (state[k] == WAITING && !A.stop))
			break;
		(*next)++;
	}
	return any;
}

/* start: the steps of the window that may start now; 1: one did */
static int start(int next)
{
	int k, any = 0;
	for (k = next; k < A.plan.ns && k < next + WINDOW && !A.stop; k++) {
		look(k);
		if (state[k] != WAITING || !build_passed(&A.plan.s[k]) || !startable(k, next))
			continue;
		if (launch(k) < 0)
			break;
		any = 1;
	}
	return any;
}

/* stopped: the running steps are killed and end as killed */
static void stopped(int next)
{
	int k;
	for (k = next; k < A.plan.ns && k < next + WINDOW; k++)
		if (state[k] == RUNNING) {
			kill_item(A.plan.s[k].dir);
			state[k] = ENDED;
		}
}

/* run_steps: the run phase. Steps start in plan order, several at once
 * when their GPU locks differ (one step per GPU slot; a step without a lock
 * runs alone); their ends are journaled in plan order. A stop kills the
 * running ones and starts no more. */
void run_steps(void)
{
	int next = 0, k, moved;

	state = calloc((size_t)A.plan.ns + 1, sizeof(*state));
	pids = calloc((size_t)A.plan.ns + 1, sizeof(*pids));
	if (!state || !pids)
		die("out of memory");
	for (k = 0; k < A.plan.ns; k++)
		look(k);
	for (;;) {
		moved = journal(&next);
		if (next >= A.plan.ns)
			break;
		if (A.stop) {
			stopped(next);
			journal(&next);
			break;
		}
		moved |= start(next);
		wait_events(moved ? 0 : 200);
	}
	free(state), free(pids);
	state = NULL;
	pids = NULL;
}

void on_signal(const char *name)
{
	if (A.stop)
		return;
	A.stop = "killed";
	free(A.msg);
	A.msg = xfmt("the runner got SIG%s", name);
	kill_builds();
	/* the running steps: run_steps kills them as it sees the stop */
}
