/* agent-plan.c -- gpuorch-agent's plan: plan.sh (version 1) read through the
 * tokenizer (agent-words.c) into builds and steps, with runner.sh's checks
 * and messages (every number whole, every path absolute; the mistakes joined
 * with "; "). A plan that is not one refuses the run (runner_ended "error",
 * exit 2). */
#include "agent.h"

#include <stdlib.h>
#include <string.h>

static void bad(struct plan *p, const char *msg)
{
	if (p->err.len)
		sb_adds(&p->err, "; ");
	sb_adds(&p->err, msg);
}

/* num: WHAT's VALUE is a whole number (runner.sh's num); its value, -1 if not */
static long num(struct plan *p, const char *what, const char *v)
{
	size_t n = strlen(v);
	char *m;
	if (n && n <= 18 && strspn(v, "0123456789") == n)
		return strtol(v, NULL, 10);
	m = xfmt("%s: '%s' is not a whole number", what, v);
	bad(p, m);
	free(m);
	return -1;
}

static void abs_path(struct plan *p, const char *what, const char *v)
{
	char *m;
	if (v[0] == '/')
		return;
	m = xfmt("%s: '%s' is not an absolute path", what, v);
	bad(p, m);
	free(m);
}

/* a step's locks: ':'-joined absolute paths */
static void abs_locks(struct plan *p, const struct step *s)
{
	const char *l = s->lock;
	char *what = xfmt("step '%s' lock", s->id), *one;
	while (*l) {
		size_t n = strcspn(l, ":");
		one = xfmt("%.*s", (int)n, l);
		abs_path(p, what, one);
		free(one);
		l += n + (l[n] == ':');
	}
	free(what);
}

#define ARG(k) ((k) < w->n ? w->w[(k)] : "")

static void add_build(struct plan *p, const struct words *w)
{
	struct build *b;
	char *what;
	int n = w->n - 1;

	if (n != 5 && n != 6) {
		what = xfmt("build needs 5 or 6 arguments, got %d", n);
		bad(p, what);
		free(what);
		return;
	}
	if (!*ARG(1))
		bad(p, "a build has an empty id");
	p->b = xrealloc(p->b, (size_t)(p->nb + 1) * sizeof(*p->b));
	b = &p->b[p->nb++];
	memset(b, 0, sizeof(*b));
	b->id = xstrdup(ARG(1));
	b->dir = xstrdup(ARG(2));
	b->bin = xstrdup(ARG(3));
	b->cmd = xstrdup(ARG(5));
	b->mayfail = n == 6 && !strcmp(ARG(6), "1");
	abs_path(p, (what = xfmt("build '%s' dir", b->id)), b->dir), free(what);
	abs_path(p, (what = xfmt("build '%s' bin", b->id)), b->bin), free(what);
	b->t = num(p, (what = xfmt("build '%s' timeout", b->id)), ARG(4)), free(what);
}

static void add_step(struct plan *p, const struct words *w)
{
	struct step *s;
	char *what;

	if (w->n - 1 != 7) {
		what = xfmt("step needs 7 arguments, got %d", w->n - 1);
		bad(p, what);
		free(what);
		return;
	}
	if (!*ARG(1))
		bad(p, "a step has an empty id");
	p->s = xrealloc(p->s, (size_t)(p->ns + 1) * sizeof(*p->s));
	s = &p->s[p->ns++];
	s->id = xstrdup(ARG(1));
	s->dir = xstrdup(ARG(2));
	s->lock = xstrdup(ARG(4));
	s->build = xstrdup(ARG(6));
	s->cmd = xstrdup(ARG(7));
	abs_path(p, (what = xfmt("step '%s' dir", s->id)), s->dir), free(what);
	s->t = num(p, (what = xfmt("step '%s' timeout", s->id)), ARG(3)), free(what);
	if (*s->lock)
		abs_locks(p, s);
	s->lw = num(p, (what = xfmt("step '%s' lock wait", s->id)), ARG(5)), free(what);
}

static void set_str(char **field, const char *v)
{
	free(*field);
	*field = xstrdup(v);
}

/* one_command: a plan line's call */
static void one_command(struct plan *p, const struct words *w)
{
	const char *name = w->w[0];
	char *m;

	if (!strcmp(name, "plan_version"))
		set_str(&p->version, ARG(1));
	else if (!strcmp(name, "src_dir"))
		abs_path(p, "src_dir", ARG(1)), set_str(&p->src, ARG(1));
	else if (!strcmp(name, "max_builds"))
		p->maxb = num(p, "max_builds", ARG(1));
	else if (!strcmp(name, "fail_fast"))
		p->failfast = num(p, "fail_fast", ARG(1)) == 1;
	else if (!strcmp(name, "text_cap"))
		p->textcap = num(p, "text_cap", ARG(1));
	else if (!strcmp(name, "probe_later"))
		abs_path(p, "probe_later", ARG(1)), set_str(&p->plater, ARG(1));
	else if (!strcmp(name, "build"))
		add_build(p, w);
	else if (!strcmp(name, "step"))
		add_step(p, w);
	else {
		m = xfmt("'%s' is not a plan line", name);
		bad(p, m);
		free(m);
	}
}

static void parse(struct plan *p, const char *text)
{
	struct words w;
	struct sb err = { 0 };
	size_t pos = 0;
	int line = 1, r;

	while ((r = next_command(text, &pos, &line, &w, &err)) == 1) {
		one_command(p, &w);
		words_free(&w);
	}
	if (r < 0) {
		sb_free(&p->err);
		sb_addf(&p->err, "the plan is not valid: %s", err.buf);
	}
	sb_free(&err);
}

/* plan_read: the plan at PATH into P; P->err says what is wrong with it */
void plan_read(struct plan *p, const char *path)
{
	struct sb text = { 0 };

	p->maxb = 1;
	p->textcap = 65536;
	if (read_all(path, &text) < 0) {
		bad(p, "cannot read the plan");
		return;
	}
	sb_add(&text, "", 0);
	if (strlen(text.buf) != text.len) {
		bad(p, "the plan is not valid: it holds a NUL byte");
	} else {
		parse(p, text.buf);
		if (!p->err.len || strncmp(p->err.buf, "the plan is not valid:", 22)) {
			if (!p->version || strcmp(p->version, "1")) {
				char *m = xfmt("plan version '%s' is not %d (runner version %d)",
					       p->version ? p->version : "", AGENT_VERSION, AGENT_VERSION);
				bad(p, m);
				free(m);
			}
			if (!p->src || !*p->src)
				bad(p, "the plan names no src_dir");
			if (p->maxb < 1)
				bad(p, "max_builds must be at least 1");
		}
	}
	if (p->textcap < 0)
		p->textcap = 65536;
	sb_free(&text);
}

void plan_free(struct plan *p)
{
	int i;
	for (i = 0; i < p->nb; i++) {
		free(p->b[i].id), free(p->b[i].dir), free(p->b[i].bin), free(p->b[i].cmd);
	}
	for (i = 0; i < p->ns; i++) {
		free(p->s[i].id), free(p->s[i].dir), free(p->s[i].lock), free(p->s[i].build);
		free(p->s[i].cmd);
	}
	free(p->b), free(p->s), free(p->version), free(p->src), free(p->plater);
	sb_free(&p->err);
	memset(p, 0, sizeof(*p));
}
