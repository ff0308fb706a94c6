/* agent-reopen.c -- gpuorch-agent's `reopen RUNDIR` (gpuorch run --resume):
 * under the run's lock (nothing when a runner holds it), every item marked
 * .reopen is forgotten (its directory; a build's .builds/<n> too), and the
 * journal loses those items' started/end events, every runner_ended and
 * every phase_ended "killed" -- its own lines, known by their fixed
 * prefixes as runner.sh's awk knows them, rewritten atomically (a new file
 * renamed over it); runner.stopped and runner.done go. Prints "reopened N". */
#include "agent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* ev_of: LINE's event name when it starts {"t":[0-9.]*,"ev":"NAME" (NAME is
 * copied to OUT); the rest after the name's closing quote, else NULL */
static const char *ev_of(const char *line, char *out, size_t size)
{
	const char *p = line, *e;
	if (strncmp(p, "{\"t\":", 5))
		return NULL;
	p += 5;
	p += strspn(p, "0123456789.");
	if (strncmp(p, ",\"ev\":\"", 7))
		return NULL;
	p += 7;
	if (!(e = strchr(p, '"')) || (size_t)(e - p) >= size)
		return NULL;
	memcpy(out, p, (size_t)(e - p));
	out[e - p] = '\0';
	return e + 1;
}

/* dropped: the line goes (awk's three patterns) */
static int dropped(const char *line, const struct sb *ids)
{
	char ev[64];
	const char *rest = ev_of(line, ev, sizeof(ev)), *k;

	if (!rest)
		return 0;
	if (!strcmp(ev, "runner_ended"))
		return 1;
	if (!strcmp(ev, "phase_ended"))
		return strstr(rest, "\"status\":\"killed\"") != NULL;
	if (strcmp(ev, "build_started") && strcmp(ev, "build_end") && strcmp(ev, "step_started") &&
	    strcmp(ev, "step_end"))
		return 0;
	if (rest[0] != ',')
		return 0;
	for (k = ids->buf; k && *k; k += strlen(k) + 1)
		if (strstr(line, k))
			return 1;
	return 0;
}

/* rewrite: the journal without the dropped lines, atomically */
static int rewrite(const char *j, const struct sb *ids)
{
	struct sb in = { 0 }, out = { 0 };
	char *tmp = xfmt("%s.tmp", j);
	size_t at = 0;
	int rc = 0;

	if (read_all(j, &in) < 0)
		rc = -1;
	while (!rc && at < in.len) {
		char *nl = memchr(in.buf + at, '\n', in.len - at);
		size_t end = nl ? (size_t)(nl - in.buf) : in.len;
		in.buf[end] = '\0';
		if (!dropped(in.buf + at, ids)) {
			sb_add(&out, in.buf + at, end - at);
			sb_add(&out, "\n", 1); /* awk's print ends every line */
		}
		at = end + 1;
	}
	if (!rc && (write_file(tmp, out.buf ? out.buf : "", out.len) < 0 || rename(tmp, j) < 0))
		rc = -1;
	free(tmp);
	sb_free(&in), sb_free(&out);
	return rc;
}

/* add_id: "id":<JSON id>, as a NUL-ended key in IDS */
static void add_id(struct sb *ids, const char *id)
{
	sb_adds(ids, "\"id\":");
	json_str(ids, id);
	sb_add(ids, ",", 1);
	ids->buf[ids->len++] = '\0';
	sb_add(ids, "", 0);
}

static int forget(struct sb *ids)
{
	int k, n = 0;
	for (k = 1; k <= A.plan.nb; k++) {
		const struct build *b = &A.plan.b[k - 1];
		char *r = xfmt("%s/.reopen", b->dir), *bp = builds_path(k);
		if (owned(b->dir) && is_file(r)) {
			add_id(ids, b->id);
			if (rm_rf(b->dir) < 0 || (unlink(bp) < 0 && errno != ENOENT))
				fprintf(stderr, "runner: cannot remove %s\n", b->dir);
			n++;
		}
		free(r), free(bp);
	}
	for (k = 1; k <= A.plan.ns; k++) {
		const struct step *s = &A.plan.s[k - 1];
		char *r = xfmt("%s/.reopen", s->dir);
		if (is_file(r)) {
			add_id(ids, s->id);
			if (rm_rf(s->dir) < 0)
				fprintf(stderr, "runner: cannot remove %s\n", s->dir);
			n++;
		}
		free(r);
	}
	return n;
}

int cmd_reopen(const char *rd)
{
	char *p = xfmt("%s/plan.sh", rd), *lk = xfmt("%s/runner.lock", rd);
	char *st = xfmt("%s/runner.stopped", rd), *done = xfmt("%s/runner.done", rd);
	struct sb ids = { 0 };
	int lock, n = 0;

	A.rd = rd;
	A.jpath = xfmt("%s/journal", rd);
	if (!is_file(p))
		die("no plan at '%s'", p);
	if ((lock = open_lock(lk)) < 0)
		die("cannot open %s: %s", lk, strerror(errno));
	if (flock(lock, LOCK_EX | LOCK_NB) == 0) {
		plan_read(&A.plan, p);
		n = forget(&ids);
		if (exists(st) || n > 0) {
			if (nonempty(A.jpath) && rewrite(A.jpath, &ids) < 0)
				die("cannot rewrite the journal %s", A.jpath);
			if ((unlink(st) < 0 && errno != ENOENT) || (unlink(done) < 0 && errno != ENOENT))
				die("cannot remove %s or %s", st, done);
		}
	}
	xclose(lock);
	printf("reopened %d\n", n);
	free(p), free(lk), free(st), free(done);
	sb_free(&ids);
	return 0;
}
