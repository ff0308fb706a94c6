/* plan.c -- builds, steps and remote command lines for one host (plan.h). */
#include "plan.h"
#include "strbuf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "banned.h"

char *plan_slug(const char *s, size_t max)
{
	struct strbuf sb = STRBUF_INIT;
	int dash = 0;
	for (; *s && sb.len < max; s++) {
		unsigned char c = (unsigned char)*s;
		if (isalnum(c) || c == '.' || c == '_' || c == '-') {
			strbuf_addch(&sb, c);
			dash = 0;
		} else if (!dash && sb.len) {
			strbuf_addch(&sb, '-');
			dash = 1;
		}
	}
	while (sb.len && sb.buf[sb.len - 1] == '-')
		strbuf_setlen(&sb, sb.len - 1);
	if (!sb.len || !strcmp(sb.buf, ".") || !strcmp(sb.buf, "..")) {
		strbuf_reset(&sb);
		strbuf_addstr(&sb, "x");
	}
	return strbuf_detach(&sb, NULL);
}

char *plan_gencode(const char *arch)
{
	const char *num = !strncmp(arch, "sm_", 3) ? arch + 3 : arch;
	return xstrfmt("-gencode=arch=compute_%s,code=sm_%s", num, num);
}

/* The CUDA library directories next to nvcc, for the executable's rpath. */
static void add_rpath(struct strbuf *cmd, const char *nvcc)
{
	const char *libs[] = { "lib64", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib" };
	char *bin = xstrdup(nvcc);
	char *slash = strrchr(bin, '/');
	size_t i;
	if (slash) {
		*slash = '\0';
		slash = strrchr(bin, '/');
	}
	if (slash) {
		*slash = '\0';
		for (i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
			char *dir = xstrfmt("-Xlinker=-rpath=%s/%s", bin, libs[i]);
			strbuf_addch(cmd, ' ');
			strbuf_add_shell_quoted(cmd, dir);
			free(dir);
		}
	}
	free(bin);
}

static void build_key(struct plan_build *b, const struct spec *s, const struct plan_host *h)
{
	struct sha256_ctx *c = sha256_begin();
	int i;
	/* Every input that changes the binary; fields separated by NUL. */
#define FEED(str) do { const char *_v = (str) ? (str) : ""; sha256_update(c, _v, strlen(_v) + 1); } while (0)
	FEED("gpuorch-build/1");
	FEED(h->content_id);
	FEED(b->prog->name);
	for (i = 0; b->prog->sources && b->prog->sources[i]; i++)
		FEED(b->prog->sources[i]);
	FEED("|libs");
	for (i = 0; b->prog->libs && b->prog->libs[i]; i++)
		FEED(b->prog->libs[i]);
	FEED("|flags");
	for (i = 0; s->build_flags && s->build_flags[i]; i++)
		FEED(s->build_flags[i]);
	FEED("|defines");
	for (i = 0; i < s->ndefines; i++) {
		FEED(s->defines[i].key);
		FEED(s->defines[i].value);
	}
	FEED(b->arch);
	FEED(h->nvcc);
	FEED(h->nvcc_version);
#undef FEED
	sha256_end(c, b->key);
}

static void make_build(struct plan_build *b, const struct spec *s, const struct plan *p,
		       const struct plan_host *h)
{
	struct strbuf cmd = STRBUF_INIT;
	char *gencode, *slug;
	int i;

	build_key(b, s, h);
	slug = plan_slug(b->prog->name, 60);
	b->dir = xstrfmt("%s/builds/%.16s", h->workdir, b->key);
	b->bin = xstrfmt("%s/%s", b->dir, slug);
	free(slug);

	if (b->prog->min_arch && !spec_arch_satisfies(b->arch, b->prog->min_arch))
		b->skip_reason = xstrfmt("program '%s' needs %s; this build targets %s",
					 b->prog->name, b->prog->min_arch, b->arch);
	else if (!h->nvcc)
		b->skip_reason = xstrdup("nvcc not found on the host (searched PATH, cuda_home, "
					 "/usr/local/cuda/bin, /usr/local/cuda-*/bin); set "
					 "\"cuda_home\" in the hosts file");

	gencode = plan_gencode(b->arch);
	strbuf_addstr(&cmd, "cd ");
	strbuf_add_shell_quoted(&cmd, p->src_dir);
	strbuf_addstr(&cmd, " && ");
	strbuf_add_shell_quoted(&cmd, h->nvcc ? h->nvcc : "nvcc");
	strbuf_addch(&cmd, ' ');
	strbuf_add_shell_quoted(&cmd, gencode);
	for (i = 0; s->build_flags && s->build_flags[i]; i++) {
		strbuf_addch(&cmd, ' ');
		strbuf_add_shell_quoted(&cmd, s->build_flags[i]);
	}
	strbuf_addstr(&cmd, " -Xptxas=-v");
	for (i = 0; i < s->ndefines; i++) {
		char *d = xstrfmt("-D%s=%s", s->defines[i].key, s->defines[i].value);
		strbuf_addch(&cmd, ' ');
		strbuf_add_shell_quoted(&cmd, d);
		free(d);
	}
	strbuf_addstr(&cmd, " -o ");
	strbuf_add_shell_quoted(&cmd, b->bin);
	for (i = 0; b->prog->sources && b->prog->sources[i]; i++) {
		strbuf_addch(&cmd, ' ');
		strbuf_add_shell_quoted(&cmd, b->prog->sources[i]);
	}
	for (i = 0; b->prog->libs && b->prog->libs[i]; i++) {
		strbuf_addch(&cmd, ' ');
		strbuf_add_shell_quoted(&cmd, b->prog->libs[i]);
	}
	if (h->nvcc)
		add_rpath(&cmd, h->nvcc);
	b->command = strbuf_detach(&cmd, NULL);
	free(gencode);
}

static const struct plan_build *find_build(const struct plan *p, const struct spec_program *prog,
					   const char *arch)
{
	int i;
	for (i = 0; i < p->nbuilds; i++)
		if (p->builds[i].prog == prog && arch && !strcmp(p->builds[i].arch, arch))
			return &p->builds[i];
	return NULL;
}

static void make_step(struct plan_step *ps, const struct spec *s, const struct plan *p,
		      const struct plan_host *h, const struct spec_step *st,
		      const struct spec_problem *pr)
{
	const struct spec_program *prog = st->prog;
	struct strbuf cmd = STRBUF_INIT;
	char *slug;
	int i;

	ps->step = st;
	ps->problem = pr;
	ps->needs_gpu = prog->needs_gpu;
	ps->id = xstrfmt("%s.%s.%s", spec_step_kind_name(st->kind), prog->name, pr->name);
	slug = plan_slug(ps->id, 120);
	ps->dir = xstrfmt("%s/%s", p->run_dir, slug);
	free(slug);

	/* Which arch does it run on? A GPU program runs on the host's GPU arch;
	 * a CPU program on the first arch built. */
	ps->arch = xstrdup(h->run_arch ? h->run_arch : (h->narchs ? h->archs[0] : "none"));
	if (prog->needs_gpu && !h->run_arch)
		ps->skip_reason = xstrfmt("no CUDA device on this host (%s); built only",
					  h->no_gpu_reason ? h->no_gpu_reason : "none detected");
	else if (prog->script && !h->python)
		ps->skip_reason = xstrdup("python3 not found on the host");

	if (!prog->script) {
		ps->build = find_build(p, prog, ps->arch);
		if (!ps->skip_reason && !ps->build)
			ps->skip_reason = xstrfmt("no build of '%s' for %s", prog->name, ps->arch);
		else if (!ps->skip_reason && ps->build->skip_reason)
			ps->skip_reason = xstrfmt("not built: %s", ps->build->skip_reason);
	}

	strbuf_addstr(&cmd, "cd ");
	strbuf_add_shell_quoted(&cmd, p->src_dir);
	strbuf_addstr(&cmd, " && ");
	if (prog->script) {
		strbuf_add_shell_quoted(&cmd, h->python ? h->python : "python3");
		strbuf_addch(&cmd, ' ');
		strbuf_add_shell_quoted(&cmd, prog->script);
	} else {
		strbuf_add_shell_quoted(&cmd, ps->build ? ps->build->bin : "false");
	}
	strbuf_addstr(&cmd, st->kind == STEP_CORRECTNESS ? " --mode=check" : " --mode=bench");
	for (i = 0; i < pr->nparams; i++) {
		char *a = xstrfmt("--%s=%s", pr->params[i].key, pr->params[i].value);
		strbuf_addch(&cmd, ' ');
		strbuf_add_shell_quoted(&cmd, a);
		free(a);
	}
	if (st->kind == STEP_CORRECTNESS) {
		for (i = 0; i < s->ntolerance; i++) {
			char *key = xstrdup(s->tolerance[i].key), *u;
			for (u = key; *u; u++)
				if (*u == '_')
					*u = '-';
			char *a = xstrfmt("--tol-%s=%s", key, s->tolerance[i].value);
			strbuf_addch(&cmd, ' ');
			strbuf_add_shell_quoted(&cmd, a);
			free(a);
			free(key);
		}
	}
	ps->command = strbuf_detach(&cmd, NULL);
}

void plan_make(struct plan *p, const struct spec *s, const struct plan_host *h)
{
	int i, j, a, n;

	memset(p, 0, sizeof(*p));
	p->content_dir = xstrfmt("%s/content/%s", h->workdir, h->content_id);
	p->src_dir = xstrfmt("%s/src", p->content_dir);
	p->run_dir = xstrfmt("%s/runs/%s", h->workdir, h->run_id);

	/* Builds: every compiled program that some step uses, for every arch. */
	p->builds = xcalloc((size_t)(s->nprograms * (h->narchs ? h->narchs : 1)), sizeof(*p->builds));
	for (i = 0; i < s->nprograms; i++) {
		const struct spec_program *prog = &s->programs[i];
		int used = 0;
		if (prog->script)
			continue;
		for (j = 0; j < s->nsteps; j++)
			if (s->steps[j].prog == prog)
				used = 1;
		if (!used)
			continue;
		for (a = 0; a < h->narchs; a++) {
			struct plan_build *b = &p->builds[p->nbuilds++];
			b->prog = prog;
			b->arch = xstrdup(h->archs[a]);
			make_build(b, s, p, h);
		}
	}

	n = 0;
	for (j = 0; j < s->nsteps; j++)
		for (i = 0; s->steps[j].problems[i]; i++)
			n++;
	p->steps = xcalloc((size_t)(n ? n : 1), sizeof(*p->steps));
	for (j = 0; j < s->nsteps; j++) {
		for (i = 0; s->steps[j].problems[i]; i++) {
			const struct spec_problem *pr = spec_find_problem(s, s->steps[j].problems[i]);
			if (pr)
				make_step(&p->steps[p->nsteps++], s, p, h, &s->steps[j], pr);
		}
	}
}

void plan_release(struct plan *p)
{
	int i;
	for (i = 0; i < p->nbuilds; i++) {
		free(p->builds[i].arch);
		free(p->builds[i].dir);
		free(p->builds[i].bin);
		free(p->builds[i].command);
		free(p->builds[i].skip_reason);
	}
	for (i = 0; i < p->nsteps; i++) {
		free(p->steps[i].id);
		free(p->steps[i].dir);
		free(p->steps[i].command);
		free(p->steps[i].arch);
		free(p->steps[i].skip_reason);
	}
	free(p->builds);
	free(p->steps);
	free(p->content_dir);
	free(p->src_dir);
	free(p->run_dir);
	memset(p, 0, sizeof(*p));
}

void plan_print(const struct plan *p, FILE *out)
{
	int i;
	fprintf(out, "    sources unpacked in %s\n", p->src_dir);
	for (i = 0; i < p->nbuilds; i++) {
		const struct plan_build *b = &p->builds[i];
		fprintf(out, "    build %s for %s (key %.16s)\n", b->prog->name, b->arch, b->key);
		if (b->skip_reason)
			fprintf(out, "      skipped: %s\n", b->skip_reason);
		else
			fprintf(out, "      $ %s\n", b->command);
	}
	for (i = 0; i < p->nsteps; i++) {
		const struct plan_step *ps = &p->steps[i];
		fprintf(out, "    step %s (timeout %d s%s)\n", ps->id, ps->step->timeout_s,
			ps->needs_gpu ? ", one at a time on the GPU" : "");
		if (ps->skip_reason)
			fprintf(out, "      skipped: %s\n", ps->skip_reason);
		else
			fprintf(out, "      $ %s\n", ps->command);
	}
}
