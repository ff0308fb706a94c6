/* runplan.c -- writes the host runner's plan file (runplan.h, docs/runner.md).
 *
 * The plan is a POSIX shell file of calls, one per line; every value is
 * quoted with strbuf_add_shell_quoted, so the host needs no parser: the
 * runner defines the functions and sources the file. Paths and ids must be
 * free of control characters (the runner reads them back from files a line
 * at a time); commands may hold anything. */
#include "remote/runplan.h"

#include <stdio.h>
#include <string.h>
#include "core/banned.h"

static int has_ctrl(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

/* An id or a path; abs: it must start with '/'. */
static enum go_status check_word(const char *what, const char *item, const char *field,
				 const char *v, int abs, int may_be_null, struct strbuf *err)
{
	if (!v || !*v) {
		if (may_be_null && !v)
			return GO_OK;
		return go_fail(err, GO_ERR_INTERNAL, "runner plan: %s '%s': %s is empty", what,
			       item ? item : "", field);
	}
	if (has_ctrl(v))
		return go_fail(err, GO_ERR_INTERNAL,
			       "runner plan: %s '%s': %s holds a control character (a newline or tab); "
			       "rename it", what, item ? item : "", field);
	if (abs && v[0] != '/')
		return go_fail(err, GO_ERR_INTERNAL,
			       "runner plan: %s '%s': %s '%s' is not an absolute path", what,
			       item ? item : "", field, v);
	return GO_OK;
}

static void word(struct strbuf *sb, const char *v)
{
	strbuf_addch(sb, ' ');
	strbuf_add_shell_quoted(sb, v ? v : "");
}

static void number(struct strbuf *sb, long long v)
{
	strbuf_addf(sb, " %lld", v);
}

static int find_build(const struct runplan *p, const char *id, int upto)
{
	int i;
	for (i = 0; i < upto; i++)
		if (!strcmp(p->builds[i].id, id))
			return i;
	return -1;
}

static enum go_status check(const struct runplan *p, struct strbuf *err)
{
	enum go_status st;
	int i;

	if ((st = check_word("plan", "", "src_dir", p->src_dir, 1, 0, err)) ||
	    (p->probe_later && (st = check_word("plan", "", "probe_later", p->probe_later, 1, 0, err))))
		return st;
	if (p->max_builds < 1)
		return go_fail(err, GO_ERR_INTERNAL, "runner plan: max_builds is %d; it must be at least 1",
			       p->max_builds);
	if (p->nbuilds < 0 || p->nsteps < 0 || (p->nbuilds && !p->builds) || (p->nsteps && !p->steps))
		return go_fail(err, GO_ERR_INTERNAL, "runner plan: bad build or step list");
	for (i = 0; i < p->nbuilds; i++) {
		const struct runplan_build *b = &p->builds[i];
		if ((st = check_word("build", b->id, "id", b->id, 0, 0, err)) ||
		    (st = check_word("build", b->id, "dir", b->dir, 1, 0, err)) ||
		    (st = check_word("build", b->id, "bin", b->bin, 1, 0, err)))
			return st;
		if (!b->command)
			return go_fail(err, GO_ERR_INTERNAL, "runner plan: build '%s' has no command", b->id);
		if (b->timeout_s <= 0)
			return go_fail(err, GO_ERR_INTERNAL,
				       "runner plan: build '%s': timeout %d s is not positive", b->id,
				       b->timeout_s);
		if (find_build(p, b->id, i) >= 0)
			return go_fail(err, GO_ERR_INTERNAL, "runner plan: build '%s' is listed twice", b->id);
	}
	for (i = 0; i < p->nsteps; i++) {
		const struct runplan_step *s = &p->steps[i];
		int j;
		if ((st = check_word("step", s->id, "id", s->id, 0, 0, err)) ||
		    (st = check_word("step", s->id, "dir", s->dir, 1, 0, err)) ||
		    (st = check_word("step", s->id, "lock", s->lock_path, 1, 1, err)) ||
		    (st = check_word("step", s->id, "build", s->build_id, 0, 1, err)))
			return st;
		if (!s->command)
			return go_fail(err, GO_ERR_INTERNAL, "runner plan: step '%s' has no command", s->id);
		if (s->timeout_s <= 0 || s->lock_wait_s < 0)
			return go_fail(err, GO_ERR_INTERNAL,
				       "runner plan: step '%s': timeout %d s or lock wait %d s out of range",
				       s->id, s->timeout_s, s->lock_wait_s);
		if (s->build_id && find_build(p, s->build_id, p->nbuilds) < 0)
			return go_fail(err, GO_ERR_INTERNAL,
				       "runner plan: step '%s' names build '%s', which is not in the plan",
				       s->id, s->build_id);
		for (j = 0; j < i; j++)
			if (!strcmp(p->steps[j].id, s->id) || !strcmp(p->steps[j].dir, s->dir))
				return go_fail(err, GO_ERR_INTERNAL,
					       "runner plan: step '%s' is listed twice (same id or directory)",
					       s->id);
	}
	return GO_OK;
}

enum go_status runplan_write(const struct runplan *p, struct strbuf *out, struct strbuf *err)
{
	struct strbuf sb = STRBUF_INIT;
	enum go_status st = check(p, err);
	int i;

	if (st)
		return st;
	strbuf_addstr(&sb, "# gpuorch runner plan (docs/runner.md); generated, sourced by runner.sh\n");
	strbuf_addf(&sb, "plan_version %d\n", RUNPLAN_VERSION);
	strbuf_addstr(&sb, "src_dir");
	word(&sb, p->src_dir);
	strbuf_addf(&sb, "\nmax_builds %d\nfail_fast %d\ntext_cap %zu\n", p->max_builds,
		    p->fail_fast ? 1 : 0, p->text_cap ? p->text_cap : (size_t)RUNPLAN_TEXT_CAP_DEFAULT);
	if (p->probe_later) {
		strbuf_addstr(&sb, "probe_later");
		word(&sb, p->probe_later);
		strbuf_addch(&sb, '\n');
	}
	for (i = 0; i < p->nbuilds; i++) {
		const struct runplan_build *b = &p->builds[i];
		strbuf_addstr(&sb, "build");
		word(&sb, b->id);
		word(&sb, b->dir);
		word(&sb, b->bin);
		number(&sb, b->timeout_s);
		word(&sb, b->command);
		if (b->may_fail)
			strbuf_addstr(&sb, " 1");
		strbuf_addch(&sb, '\n');
	}
	for (i = 0; i < p->nsteps; i++) {
		const struct runplan_step *s = &p->steps[i];
		strbuf_addstr(&sb, "step");
		word(&sb, s->id);
		word(&sb, s->dir);
		number(&sb, s->timeout_s);
		word(&sb, s->lock_path);
		number(&sb, s->lock_path ? s->lock_wait_s : 0);
		word(&sb, s->build_id);
		word(&sb, s->command);
		strbuf_addch(&sb, '\n');
	}
	strbuf_add(out, sb.buf, sb.len);
	strbuf_release(&sb);
	return GO_OK;
}

int runplan_default_max_builds(int ncores)
{
	/* nvcc is one CPU-bound process per build: one per core, at least 1 */
	return ncores > 0 ? ncores : 1;
}
