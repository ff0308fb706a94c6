/* agent-build.c -- gpuorch-agent's build phase (runner.sh's phase_builds):
 * builds start in plan order, at most max_builds at once; each is reused
 * (rc 0 and its program executable), attached to (another runner is
 * building it), journaled (ours, ended before a restart) or started, the
 * choice made under W/builds/.claim.lock; a failed build (not MAYFAIL)
 * under fail_fast kills the running ones this run started and skips the
 * rest. The runner sleeps between looks until a build's process ends
 * (SIGCHLD), a stop signal comes or half a second passes. */
#include "agent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

static char *parent_of(const char *dir)
{
	char *p = xstrdup(dir), *s = strrchr(p, '/');
	if (s)
		*s = '\0';
	return p;
}

static void reused(int i)
{
	struct build *b = &A.plan.b[i - 1];
	char *rc = xfmt("%s/rc", b->dir), *log = xfmt("%s/log.%ld.json", b->dir, A.plan.textcap);
	struct sb f = { 0 }, lf = { 0 };

	(void)touch_file(rc); /* its last use (gpuorch hosts clean); may be read-only */
	if (nonempty(log))
		(void)read_all(log, &lf);
	while (lf.len && lf.buf[lf.len - 1] == '\n')
		lf.buf[--lf.len] = '\0';
	if (!lf.len) {
		char *o = xfmt("%s/stdout", b->dir), *e = xfmt("%s/stderr", b->dir);
		text_field(&lf, o, "stdout");
		text_field(&lf, e, "stderr");
		free(o), free(e);
	}
	sb_adds(&f, ",\"id\":");
	json_str(&f, b->id);
	sb_adds(&f, ",\"dir\":");
	json_str(&f, b->dir);
	sb_add(&f, lf.buf ? lf.buf : "", lf.len);
	ev("build_reused", f.buf);
	build_done(i, "pass");
	free(rc), free(log);
	sb_free(&f), sb_free(&lf);
}

static void started(int i, int attached)
{
	struct build *b = &A.plan.b[i - 1];
	struct sb f = { 0 };
	sb_adds(&f, ",\"id\":");
	json_str(&f, b->id);
	sb_adds(&f, ",\"dir\":");
	json_str(&f, b->dir);
	sb_addf(&f, ",\"attached\":%s", attached ? "true" : "false");
	if (attached)
		ev("build_started", f.buf);
	else
		ev_again("build_started", f.buf);
	sb_free(&f);
}

/* decide: under the claim lock: 0 reused or journaled, 1 attached, 2 start */
static int decide(int i)
{
	struct build *b = &A.plan.b[i - 1];
	char *rcp = xfmt("%s/rc", b->dir), *ln = xfmt("%s/.launch", b->dir);
	char *q = xfmt("%s/queued", b->dir), rc[64] = "";
	int own = owned(b->dir), r = 2;

	if (is_file(rcp))
		first_line(rcp, rc, sizeof(rc));
	if (!strcmp(rc, "0") && access(b->bin, X_OK) == 0 && !own)
		r = 0, reused(i);
	else if (*rc && own)
		r = 0, build_end(i);
	else if (!*rc && (exists(ln) || nonempty(q)) && !stale(b->dir))
		r = 1, started(i, 1);
	free(rcp), free(ln), free(q);
	return r;
}

static int start_build(int i)
{
	struct build *b = &A.plan.b[i - 1];
	char *ow = xfmt("%s/owner", b->dir), *line = xfmt("%s\n", A.rd);
	int r = 0;

	if (rm_rf(b->dir) < 0 || mkdir_p(b->dir) < 0 || write_file(ow, line, strlen(line)) < 0 ||
	    spawn(b->dir, b->t, "", 0, b->cmd, &b->pid) < 0)
		r = -1;
	free(ow), free(line);
	return r;
}

/* build_begin I: reuse, attach to or start build I; 1: it runs (ours or
 * attached), 0: done, -1: its directory cannot be made */
static int build_begin(int i)
{
	struct build *b = &A.plan.b[i - 1];
	char *done = builds_path(i), *par = parent_of(b->dir), *cl = xfmt("%s/.claim.lock", par);
	char r[64];
	int fd = -1, st = 1;

	if (is_file(done)) {
		first_line(done, r, sizeof(r));
		if (strcmp(r, "pass") && !b->mayfail)
			A.bfailed = 1;
		st = 0;
	} else if (mkdir_p(par) < 0 || (fd = open_lock(cl)) < 0) {
		st = -1;
	} else {
		if (flock_wait(fd, 120) < 0)
			fprintf(stderr, "runner: no claim lock %s within 120 s\n", cl);
		st = decide(i);
		if (st == 2)
			st = start_build(i) < 0 ? -1 : 2;
	}
	if (fd >= 0)
		xclose(fd);
	if (st == 2) {
		started(i, 0);
		st = 1;
	}
	free(done), free(par), free(cl);
	return st;
}

/* build_check I SLOW: 1 when build I has ended (and was journaled) */
static int build_check(int i, int slow)
{
	struct build *b = &A.plan.b[i - 1];
	char *rc = xfmt("%s/rc", b->dir);
	int ended = is_file(rc) || (slow && stale(b->dir));

	free(rc);
	if (!ended)
		return 0;
	if (b->pid > 0 && !child_gone(b->pid))
		sleep_ms(1); /* writes rc last: about to exit; reaped at the next look */
	b->pid = 0;
	build_end(i);
	return 1;
}

/* kill_builds: the running builds this run started (not the ones it
 * attached to: those belong to another run) */
void kill_builds(void)
{
	int k;
	for (k = 1; k <= A.plan.nb; k++) {
		struct build *b = &A.plan.b[k - 1];
		if (!b->running || !owned(b->dir))
			continue;
		b->killed = 1;
		kill_item(b->dir);
	}
}

static void skip_build(int i)
{
	char *p = builds_path(i);
	struct sb f = { 0 };
	if (!is_file(p)) {
		sb_adds(&f, ",\"id\":");
		json_str(&f, A.plan.b[i - 1].id);
		sb_adds(&f, ",\"reason\":\"an earlier build failed (fail_fast)\"");
		ev("build_skipped", f.buf);
		build_done(i, "skipped");
	}
	free(p);
	sb_free(&f);
}

/* start_more: start builds while there is room; *NEXT: the next to start */
static void start_more(int *next, int *nrun)
{
	while (!A.stop && *nrun < A.plan.maxb && *next <= A.plan.nb) {
		int i = (*next)++, st;
		if (A.bfailed && A.plan.failfast) {
			skip_build(i);
			continue;
		}
		st = build_begin(i);
		if (st < 0) {
			A.stop = "error";
			free(A.msg);
			A.msg = xfmt("cannot create the build directory of build %d", i);
		}
		if (st != 0) {
			A.plan.b[i - 1].running = 1;
			(*nrun)++;
		}
	}
}

/* look: every running build once; 1 when one ended */
static int look(int slow, int *nrun)
{
	int k, ended = 0;
	for (k = 1; k <= A.plan.nb; k++) {
		struct build *b = &A.plan.b[k - 1];
		if (b->running && build_check(k, slow)) {
			b->running = 0;
			(*nrun)--;
			ended = 1;
		}
	}
	return ended;
}

void phase_builds(void)
{
	int next = 1, nrun = 0, tick = 0;
	char plat[4096];
	const char *s;

	ev_again("phase_started", ",\"name\":\"build\"");
	A.bfailed = 0;
	for (;;) {
		int ended;
		start_more(&next, &nrun);
		if (nrun == 0 && (next > A.plan.nb || A.stop))
			break;
		ended = look(++tick % 2 == 0, &nrun);
		if (A.bfailed && A.plan.failfast && nrun > 0) {
			kill_builds();
			continue;
		}
		/* a fresh host's probe answered its slow tools: journaled beside the builds */
		snprintf(plat, sizeof(plat), "%s.later", A.plan.plater ? A.plan.plater : "");
		if (A.plan.plater && exists(plat))
			emit_later();
		if (!ended)
			wait_events(500);
	}
	s = A.stop ? "killed" : A.bfailed ? "fail" : "pass";
	{
		char f[64];
		snprintf(f, sizeof(f), ",\"name\":\"build\",\"status\":\"%s\"", s);
		ev_again("phase_ended", f);
	}
}

/* emit_later: the deferred probe's lines (plan's probe_later FILE) as one
 * probe_later event, waiting (90 s at most) for the part holding FILE.lock
 * unless FILE.later is there; both files removed */
void emit_later(void)
{
	char *later, *lock;
	struct sb f = { 0 };

	if (!A.plan.plater)
		return;
	later = xfmt("%s.later", A.plan.plater);
	lock = xfmt("%s.lock", A.plan.plater);
	if (!is_file(later) && is_file(lock)) {
		int fd = open_lock(lock);
		if (fd >= 0) {
			(void)flock_wait(fd, 90); /* its tools have their own timeouts */
			xclose(fd);
		}
	}
	if (is_file(later)) {
		text_field(&f, later, "probe");
		ev("probe_later", f.buf ? f.buf : "");
	}
	if ((unlink(later) < 0 && errno != ENOENT) || (unlink(lock) < 0 && errno != ENOENT))
		fprintf(stderr, "runner: cannot remove %s: %s\n", later, strerror(errno));
	free(later), free(lock);
	sb_free(&f);
	free(A.plan.plater);
	A.plan.plater = NULL;
}
