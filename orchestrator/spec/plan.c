/* plan.c -- builds, steps and remote command lines for one host (plan.h). */
#include "spec/plan.h"
#include "spec/ktrace-lib.h"
#include "core/strbuf.h"
#include "core/strdistinct.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

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

int plan_build_objects(const struct plan_build *b, const char *stderr_text, int *nsources,
		       int *nreused)
{
	const char *p = stderr_text;
	int n = 0, r = 0;
	if (b->prog->build_cmds || !b->prog->sources || !b->command || !strstr(b->command, "gpuorch_obj "))
		return 0;
	while (b->prog->sources[n])
		n++;
	while (p && (p = strstr(p, ": object reused (")) != NULL) {
		r++;
		p++;
	}
	*nsources = n;
	*nreused = r > n ? n : r;
	return 1;
}

char *plan_gencode(const char *arch)
{
	const char *num = !strncmp(arch, "sm_", 3) ? arch + 3 : arch;
	return xstrfmt("-gencode=arch=compute_%s,code=sm_%s", num, num);
}

static const char *const cuda_libs[] = { "lib64", "targets/x86_64-linux/lib",
					  "targets/sbsa-linux/lib" };

/* The CUDA tree nvcc lives in, when its path says so: DIR/bin/nvcc with
 * "cuda" in DIR (/usr/local/cuda-13.0, /opt/nvidia/hpc_sdk/.../cuda/13.0).
 * NULL for any other place: /usr/local/bin/nvcc or ~/bin/nvcc is often a
 * wrapper script, and DIR/lib64 beside it is not CUDA's. */
static char *cuda_tree_of(const char *nvcc)
{
	char *top = xstrdup(nvcc), *slash = strrchr(top, '/'), *base, *p;
	if (!slash || slash == top) {
		free(top);
		return NULL;
	}
	*slash = '\0';
	base = strrchr(top, '/');
	if (!base || strcmp(base, "/bin")) {
		free(top);
		return NULL;
	}
	*base = '\0';
	for (p = top; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	if (!strstr(top, "cuda")) {
		free(top);
		return NULL;
	}
	free(top);
	top = xstrdup(nvcc);
	*strrchr(top, '/') = '\0';
	*strrchr(top, '/') = '\0';
	return top;
}

/* Before the nvcc of a build whose CUDA tree the path does not show: ask
 * nvcc itself where it lives (its driver prints "#$ TOP=DIR" on a dry run;
 * a wrapper script passes that through), into $cuda_top for add_rpath. */
static void add_top_probe(struct strbuf *cmd, const char *nvcc)
{
	char *tree = nvcc ? cuda_tree_of(nvcc) : NULL;
	if (!nvcc || tree) {
		free(tree);
		return;
	}
	strbuf_addstr(cmd, "cuda_top=$(");
	strbuf_add_shell_quoted(cmd, nvcc);
	strbuf_addstr(cmd, " --dryrun -x cu -c /dev/null -o /dev/null 2>&1 | "
			   "sed -n 's/^#[$] TOP=//p' | head -n 1) && ");
}

/* The CUDA library directories of nvcc's tree, for the executable's rpath. */
static void add_rpath(struct strbuf *cmd, const char *nvcc)
{
	char *top = cuda_tree_of(nvcc);
	size_t i;
	for (i = 0; i < sizeof(cuda_libs) / sizeof(cuda_libs[0]); i++) {
		if (top) {
			char *dir = xstrfmt("-Xlinker=-rpath=%s/%s", top, cuda_libs[i]);
			strbuf_addch(cmd, ' ');
			strbuf_add_shell_quoted(cmd, dir);
			free(dir);
		} else {
			strbuf_addf(cmd, " -Xlinker=-rpath=\"$cuda_top\"/%s", cuda_libs[i]);
		}
	}
	free(top);
}

/* "a/./b/../c" -> "a/c"; NULL when it climbs above the root or is absolute */
static char *norm_path(const char *p)
{
	char *out = xstrdup(p), *seg[256];
	char *tok, *save = NULL, *copy = xstrdup(p);
	int n = 0, i;
	size_t len = 0;
	if (*p == '/') {
		free(out);
		free(copy);
		return NULL;
	}
	for (tok = strtok_r(copy, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		if (!strcmp(tok, "."))
			continue;
		if (!strcmp(tok, "..")) {
			if (!n) {
				free(out);
				free(copy);
				return NULL;
			}
			n--;
			continue;
		}
		if (n == 256) {
			free(out);
			free(copy);
			return NULL;
		}
		seg[n++] = tok;
	}
	for (i = 0; i < n; i++) {
		size_t l = strlen(seg[i]);
		if (i)
			out[len++] = '/';
		memcpy(out + len, seg[i], l);   /* never longer than p */
		len += l;
	}
	out[len] = '\0';
	free(copy);
	return out;
}

static int cmp_source(const void *key, const void *elem)
{
	return strcmp(key, ((const struct plan_source *)elem)->path);
}

/* the shipped file at dir/name (dir "" = the root), or NULL */
static const struct plan_source *find_source(const struct plan_host *h, const char *dir,
					     const char *name)
{
	char *joined = *dir ? xstrfmt("%s/%s", dir, name) : xstrdup(name);
	char *norm = norm_path(joined);
	const struct plan_source *f = norm ? bsearch(norm, h->sources, (size_t)h->nsources,
						     sizeof(*h->sources), cmp_source) : NULL;
	free(joined);
	free(norm);
	return f;
}

/* The include directories the build's flags name (-Idir, -I dir,
 * --include-path[=]dir), relative to the root; NULL-terminated. 0 when a
 * flag makes the inputs unknowable here (a forced -include). */
static int include_dirs(const struct spec *s, char ***out)
{
	char **v = xcalloc(1, sizeof(char *));
	int n = 0, i;
	for (i = 0; s->build_flags && s->build_flags[i]; i++) {
		const char *f = s->build_flags[i], *d = NULL;
		if (!strcmp(f, "-include") || !strcmp(f, "--pre-include") || !strncmp(f, "-include=", 9) ||
		    !strncmp(f, "--pre-include=", 14)) {
			for (i = 0; i < n; i++)
				free(v[i]);
			free(v);
			*out = NULL;
			return 0;
		}
		if (!strcmp(f, "-I") || !strcmp(f, "--include-path"))
			d = s->build_flags[i + 1] ? s->build_flags[++i] : NULL;
		else if (!strncmp(f, "-I", 2))
			d = f + 2 + (f[2] == '=');
		else if (!strncmp(f, "--include-path=", 15))
			d = f + 15;
		if (d) {
			v = xrealloc(v, (size_t)(n + 2) * sizeof(char *));
			v[n++] = xstrdup(d);
			v[n] = NULL;
		}
	}
	*out = v;
	return 1;
}

/* The files a compile of roots reads -- those sources and, transitively,
 * the shipped files they #include ("name": beside the includer, then the
 * -I directories, then the root; <name>: the -I directories; an <name>
 * found in none is the toolkit's or the system's), into *out (n of them,
 * the caller frees the array). 0, with *out NULL, when that cannot be
 * known: a source not shipped, an #include of a macro, a "name" found
 * nowhere, a forced -include. */
static int dep_closure(char *const *roots, const struct spec *s, const struct plan_host *h,
		       const struct plan_source ***out, int *nout)
{
	const struct plan_source **dep = NULL;
	char **dirs = NULL;
	int n = 0, i, j, k, ok = 1;

	*out = NULL;
	*nout = 0;
	if (!h->sources || !include_dirs(s, &dirs))
		return 0;
	for (i = 0; ok && roots && roots[i]; i++) {
		const struct plan_source *f = find_source(h, "", roots[i]);
		if (!f)
			ok = 0;
		else {
			dep = xrealloc(dep, (size_t)(n + 1) * sizeof(*dep));
			dep[n++] = f;
		}
	}
	for (i = 0; ok && i < n; i++) {   /* dep grows while it is walked */
		char *dir = xstrdup(dep[i]->path), *slash = strrchr(dir, '/');
		if (dep[i]->include_macro)
			ok = 0;
		if (slash)
			*slash = '\0';
		else
			*dir = '\0';
		for (j = 0; ok && dep[i]->includes && dep[i]->includes[j]; j++) {
			const char *inc = dep[i]->includes[j] + 2;
			int quoted = dep[i]->includes[j][0] == 'q';
			const struct plan_source *f = quoted ? find_source(h, dir, inc) : NULL;
			for (k = 0; !f && dirs[k]; k++)
				f = find_source(h, dirs[k], inc);
			if (!f && quoted)
				f = find_source(h, "", inc);
			if (!f) {
				ok = !quoted;   /* <name> of the toolkit; "name" unknown */
				continue;
			}
			for (k = 0; k < n && dep[k] != f; k++)
				;
			if (k == n) {
				dep = xrealloc(dep, (size_t)(n + 1) * sizeof(*dep));
				dep[n++] = f;
			}
		}
		free(dir);
	}
	for (i = 0; dirs && dirs[i]; i++)
		free(dirs[i]);
	free(dirs);
	if (!ok) {
		free(dep);
		return 0;
	}
	*out = dep;
	*nout = n;
	return 1;
}

/* Feed the files a compile of roots reads (dep_closure) into c, in the
 * order of the shipped files (the same set, the same key); 0, feeding
 * nothing, when they cannot be known. */
static int feed_deps(struct sha256_ctx *c, char *const *roots, const struct spec *s,
		     const struct plan_host *h)
{
	const struct plan_source **dep;
	int n, i, k;
	if (!dep_closure(roots, s, h, &dep, &n))
		return 0;
	for (k = 0; k < h->nsources; k++)
		for (i = 0; i < n; i++)
			if (dep[i] == &h->sources[k]) {
				sha256_update(c, dep[i]->path, strlen(dep[i]->path) + 1);
				sha256_update(c, dep[i]->sha256, strlen(dep[i]->sha256) + 1);
			}
	free(dep);
	return 1;
}

static void build_key(struct plan_build *b, const struct spec *s, const struct plan_host *h)
{
	struct sha256_ctx *c = sha256_begin();
	int i;
	/* Every input that changes the binary; fields separated by NUL. */
#define FEED(str) do { const char *_v = (str) ? (str) : ""; sha256_update(c, _v, strlen(_v) + 1); } while (0)
	FEED("gpuorch-build/1");
	/* the files this compile reads when they can be known, else everything shipped */
	if (b->prog->build_cmds || !feed_deps(c, b->prog->sources, s, h)) {
		FEED("|content");
		FEED(h->content_id);
	}
	/* not the program's name, nor its outputs (what is checked, not what
	 * is made): two programs built alike are one build (plan_make) */
	FEED("|sources");
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
	FEED("|variant");
	for (i = 0; b->variant && i < b->variant->ndefines; i++) {
		FEED(b->variant->defines[i].key);
		FEED(b->variant->defines[i].value);
	}
	FEED("|variant sources");   /* the compiles its defines go to (variant_reaches) */
	for (i = 0; b->variant && b->variant->sources && b->variant->sources[i]; i++)
		FEED(b->variant->sources[i]);
	FEED("|build");
	for (i = 0; b->prog->build_cmds && b->prog->build_cmds[i]; i++) {
		int j;
		for (j = 0; b->prog->build_cmds[i][j]; j++)
			FEED(b->prog->build_cmds[i][j]);
		FEED("|&&");
	}
	FEED(b->prog->ptxas ? "ptxas" : "");
	FEED(b->arch);
	FEED(h->nvcc);
	FEED(h->nvcc_version);
	FEED("|env");   /* another PATH: another cmake */
	for (i = 0; i < h->nenv; i++) {
		FEED(h->env[i].name);
		FEED(h->env[i].value);
	}
	{
		/* the rpath from nvcc's own TOP (a wrapper's): not a binary built before */
		char *tree = h->nvcc ? cuda_tree_of(h->nvcc) : NULL;
		if (h->nvcc && !tree)
			FEED("|rpath from nvcc's TOP");
		free(tree);
	}
#undef FEED
	sha256_end(c, b->key);
}

static int variant_defines(const struct spec_variant *v, const char *key)
{
	int i;
	for (i = 0; v && i < v->ndefines; i++)
		if (!strcmp(v->defines[i].key, key))
			return 1;
	return 0;
}

static void add_word_(struct strbuf *cmd, const char *w)
{
	strbuf_addch(cmd, ' ');
	strbuf_add_shell_quoted(cmd, w);
}

/* A word with {arch}, {arch_num} and {KEY} (a key of kv) replaced. */
static char *subst(const char *w, const char *arch, const struct spec_kv *kv, int nkv)
{
	struct strbuf sb = STRBUF_INIT;
	const char *num = arch && !strncmp(arch, "sm_", 3) ? arch + 3 : arch;
	while (*w) {
		size_t n = *w == '{' ? strspn(w + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.") : 0;
		const char *val = NULL;
		int i;
		if (n && w[1 + n] == '}') {
			if (n == 4 && !strncmp(w + 1, "arch", 4))
				val = arch ? arch : "";
			else if (n == 8 && !strncmp(w + 1, "arch_num", 8))
				val = num ? num : "";
			for (i = 0; !val && i < nkv; i++)
				if (strlen(kv[i].key) == n && !strncmp(kv[i].key, w + 1, n))
					val = kv[i].value;
		}
		if (val) {
			strbuf_addstr(&sb, val);
			w += n + 2;
		} else {
			strbuf_addch(&sb, *w++);
		}
	}
	return strbuf_detach(&sb, NULL);
}

/* A command line (argv), each word substituted and quoted. */
static void add_argv(struct strbuf *cmd, char *const *argv, const char *arch,
		     const struct spec_kv *kv, int nkv)
{
	int i;
	for (i = 0; argv[i]; i++) {
		char *w = subst(argv[i], arch, kv, nkv);
		if (i)
			strbuf_addch(cmd, ' ');
		strbuf_add_shell_quoted(cmd, w);
		free(w);
	}
}

/* The build tools (shellenv.h's env_tools) a project build's commands run,
 * into tools (NULL-terminated): each command's program when it is one of
 * them, and cmake's generator -- ninja when a word of that command says
 * Ninja, else make; returns how many. */
static int build_tools(const struct spec_program *prog, const char **tools)
{
	int i, j, k, n = 0, used[ENV_NTOOLS] = { 0 };
	for (i = 0; prog->build_cmds[i]; i++) {
		const char *w = prog->build_cmds[i][0], *base = strrchr(w, '/') ? strrchr(w, '/') + 1 : w;
		for (k = 0; k < ENV_NTOOLS; k++)
			used[k] |= !strcmp(base, env_tools[k]) || (!strcmp(base, "gmake") && k == 1);
		if (strcmp(base, "cmake"))
			continue;
		for (j = 1, k = 1; prog->build_cmds[i][j]; j++)
			if (strstr(prog->build_cmds[i][j], "Ninja"))
				k = 2;
		used[k] = 1;
	}
	for (k = 0; k < ENV_NTOOLS; k++)
		if (used[k])
			tools[n++] = env_tools[k];
	tools[n] = NULL;
	return n;
}

/* The project's own build (docs/byo.md): the shipped tree is copied into
 * the build directory (the content directory stays as shipped, shared by
 * every build), then its commands run there with nvcc first on PATH; every
 * output named by b's program and by the programs of the builds made as b
 * (same_as) must exist. */
static void project_build(struct strbuf *cmd, struct plan_build *b, const struct spec *s,
			  const struct plan *p, const struct plan_host *h)
{
	const struct spec_program *prog = b->prog;
	const char **outs = NULL, *tools[ENV_NTOOLS + 1];
	int i, k, nouts = 0;
	env_add_exports(cmd, h->env, h->nenv);
	strbuf_addstr(cmd, "cd ");
	strbuf_add_shell_quoted(cmd, p->src_dir);
	strbuf_addstr(cmd, " && mkdir -p ");
	strbuf_add_shell_quoted(cmd, b->tree);
	strbuf_addstr(cmd, " && cp -R . ");
	strbuf_add_shell_quoted(cmd, b->tree);
	strbuf_addstr(cmd, " && cd ");
	strbuf_add_shell_quoted(cmd, b->tree);
	if (h->nvcc && strchr(h->nvcc, '/')) {
		char *dir = xstrdup(h->nvcc);
		*strrchr(dir, '/') = '\0';
		strbuf_addstr(cmd, " && PATH=");
		strbuf_add_shell_quoted(cmd, dir);
		strbuf_addstr(cmd, ":$PATH && CUDACXX=");
		strbuf_add_shell_quoted(cmd, h->nvcc);
		strbuf_addstr(cmd, " && export PATH CUDACXX");
		free(dir);
	}
	if (prog->ptxas)
		strbuf_addstr(cmd, " && NVCC_APPEND_FLAGS=\"${NVCC_APPEND_FLAGS:+$NVCC_APPEND_FLAGS }-Xptxas=-v\" && export NVCC_APPEND_FLAGS");
	strbuf_addstr(cmd, " && { ");
	for (i = 0; prog->build_cmds[i]; i++) {
		strbuf_addstr(cmd, i ? " && " : "");
		add_argv(cmd, prog->build_cmds[i], b->arch, s->defines, s->ndefines);
	}
	if (build_tools(prog, tools)) {
		/* a failed build says which cmake / make / ninja it ran (shellenv.h) */
		strbuf_addstr(cmd, " || { rc=$?; ");
		env_add_tool_report(cmd, tools);
		strbuf_addstr(cmd, " >&2; exit $rc; }");
	}
	strbuf_addstr(cmd, "; }");
	strbuf_addstr(cmd, " && for o in");
	for (k = 0; k < p->nbuilds; k++) {
		const struct plan_build *o = &p->builds[k];
		if (o != b && o->same_as != b)
			continue;
		for (i = 0; o->prog->outputs[i]; i++) {
			outs = xrealloc(outs, (size_t)(nouts + 1) * sizeof(*outs));
			outs[nouts++] = o->prog->outputs[i];
		}
	}
	nouts = str_distinct(outs, nouts);
	for (i = 0; i < nouts; i++)
		add_word_(cmd, outs[i]);
	free(outs);
	strbuf_addstr(cmd, "; do test -e \"$o\" || { echo \"gpuorch: the build did not make '$o' "
			   "(named in build.outputs)\" >&2; exit 1; }; done");
}

/* Per-source objects. An nvcc build compiles each of its sources into an
 * object of its own under W/objects, named by a key of everything that
 * compile reads and says (object_key), then links them: an edit recompiles
 * the sources that read the edited file, and programs that share a source
 * (the harness) share its object. gpuorch_obj KEY SOURCE NVCC-WORDS...
 * reuses KEY.o when it is there (its compile's stdout and stderr replayed,
 * so the ptxas report of the build stays whole; "object reused" said on
 * stderr), else compiles it under a temporary name and renames it in last;
 * flock on KEY.lock makes builds that need the same object at once compile
 * it once. A failed compile leaves no object. */
#define OBJ_KEY_LEN 32
#define OBJ_FUNCTION \
	"gpuorch_obj() { k=$1 f=$2; shift 2; ( flock 9 || exit 1; " \
	"if [ -f \"$o/$k.o\" ]; then touch \"$o/$k.o\"; cat \"$o/$k.out\"; cat \"$o/$k.err\" >&2; " \
	"echo \"gpuorch: $f: object reused ($o/$k.o)\" >&2; exit 0; fi; " \
	"\"$@\" -o \"$o/$k.o.$$\" >\"$o/$k.out.$$\" 2>\"$o/$k.err.$$\"; r=$?; " \
	"cat \"$o/$k.out.$$\"; cat \"$o/$k.err.$$\" >&2; " \
	"if [ $r = 0 ]; then mv -f \"$o/$k.out.$$\" \"$o/$k.out\" && mv -f \"$o/$k.err.$$\" \"$o/$k.err\" && " \
	"mv -f \"$o/$k.o.$$\" \"$o/$k.o\"; else rm -f \"$o/$k.o.$$\" \"$o/$k.out.$$\" \"$o/$k.err.$$\"; exit $r; fi " \
	") 9>\"$o/$k.lock\"; }"

/* Whether `name` stands in text as a whole identifier. */
static int names_identifier(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *p = text;
	while ((p = strstr(p, name)) != NULL) {
		int before = p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
		int after = isalnum((unsigned char)p[n]) || p[n] == '_';
		if (!before && !after)
			return 1;
		p += n;
	}
	return 0;
}

/* Whether build b's sweep defines reach the compile of src: always, unless
 * the sweep names its "sources" and src is not one of them -- and even then
 * when a file that compile reads names one of the defines, or when those
 * files or their text cannot be known (a define must never be dropped from
 * a compile that could see it). */
static int variant_reaches(struct plan *p, const struct plan_build *b, const char *src,
			   const struct spec *s, const struct plan_host *h)
{
	const struct plan_source **dep;
	char *roots[2];
	int n, i, k, reach = 0;
	if (!b->variant || !b->variant->sources)
		return 1;
	for (i = 0; b->variant->sources[i]; i++)
		if (!strcmp(b->variant->sources[i], src))
			return 1;
	/* a sweep's variants share their sources list and define names: the
	 * first variant's answer serves them all (the files' text is read once) */
	for (i = 0; i < p->nreach; i++)
		if (p->reach[i].sweep == b->variant->sources && !strcmp(p->reach[i].src, src))
			return p->reach[i].reach;
	roots[0] = (char *)src;
	roots[1] = NULL;
	if (!dep_closure(roots, s, h, &dep, &n)) {
		reach = 1;
	} else {
		for (i = 0; !reach && i < n; i++) {
			if (!dep[i]->text || strlen(dep[i]->text) != dep[i]->size)
				reach = 1;   /* not kept, or NUL bytes in it: not read here */
			for (k = 0; !reach && k < b->variant->ndefines; k++)
				reach = names_identifier(dep[i]->text, b->variant->defines[k].key);
		}
		free(dep);
	}
	p->reach = xrealloc(p->reach, (size_t)(p->nreach + 1) * sizeof(*p->reach));
	p->reach[p->nreach].sweep = b->variant->sources;
	p->reach[p->nreach].src = src;
	p->reach[p->nreach++].reach = reach;
	return reach;
}

/* nvcc, the arch and the build's flags: what its compiles and its link
 * start with */
static void add_nvcc_words(struct strbuf *cmd, const struct spec *s, const struct plan_host *h,
			   const char *gencode)
{
	int i;
	strbuf_add_shell_quoted(cmd, h->nvcc ? h->nvcc : "nvcc");
	strbuf_addch(cmd, ' ');
	strbuf_add_shell_quoted(cmd, gencode);
	for (i = 0; s->build_flags && s->build_flags[i]; i++) {
		strbuf_addch(cmd, ' ');
		strbuf_add_shell_quoted(cmd, s->build_flags[i]);
	}
}

/* add_nvcc_words, -Xptxas=-v and the defines: the words every compile of
 * build b starts with. with_variant: the sweep's defines too, each over
 * the spec's value of the same name; else the spec's alone */
static void add_compile_words(struct strbuf *cmd, const struct plan_build *b, const struct spec *s,
			      const struct plan_host *h, const char *gencode, int with_variant)
{
	int i;
	add_nvcc_words(cmd, s, h, gencode);
	strbuf_addstr(cmd, " -Xptxas=-v");
	for (i = 0; i < s->ndefines; i++) {
		char *d;
		if (with_variant && variant_defines(b->variant, s->defines[i].key))
			continue;   /* the sweep's value wins */
		d = xstrfmt("-D%s=%s", s->defines[i].key, s->defines[i].value);
		strbuf_addch(cmd, ' ');
		strbuf_add_shell_quoted(cmd, d);
		free(d);
	}
	for (i = 0; with_variant && b->variant && i < b->variant->ndefines; i++) {
		char *d = xstrfmt("-D%s=%s", b->variant->defines[i].key,
				  b->variant->defines[i].value);
		strbuf_addch(cmd, ' ');
		strbuf_add_shell_quoted(cmd, d);
		free(d);
	}
}

/* An object's key: its compile command (nvcc's path, arch, flags, defines,
 * the source's name), the files that compile reads (else everything
 * shipped) and nvcc's version. */
static void object_key(char key[SHA256_HEX_LEN + 1], const char *compile, const char *src,
		       const struct spec *s, const struct plan_host *h)
{
	struct sha256_ctx *c = sha256_begin();
	char *roots[2];
	roots[0] = (char *)src;
	roots[1] = NULL;
	sha256_update(c, "gpuorch-obj/1", 14);
	sha256_update(c, compile, strlen(compile) + 1);
	if (!feed_deps(c, roots, s, h)) {
		const char *cid = h->content_id ? h->content_id : "";
		sha256_update(c, "|content", 9);
		sha256_update(c, cid, strlen(cid) + 1);
	}
	{
		const char *v = h->nvcc_version ? h->nvcc_version : "";
		sha256_update(c, v, strlen(v) + 1);
	}
	sha256_end(c, key);
}

/* An nvcc build's executable: named after its first source (attn.cu ->
 * attn), not after the program, which is no part of the build's key. */
static char *bin_name(const struct spec_program *prog)
{
	const char *src = prog->sources && prog->sources[0] ? prog->sources[0] : "program";
	const char *base = strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
	const char *dot = strrchr(base, '.');
	char *stem = xstrfmt("%.*s", (int)(dot && dot > base ? dot - base : (long)strlen(base)), base);
	char *slug = plan_slug(stem, 60);
	free(stem);
	return slug;
}

static void make_build(struct plan_build *b, const struct spec *s, struct plan *p,
		       const struct plan_host *h)
{
	struct strbuf cmd = STRBUF_INIT;
	char *gencode, *slug, *objdir, **keys = NULL;
	int i;

	build_key(b, s, h);
	b->dir = xstrfmt("%s/builds/%.16s", h->workdir, b->key);
	if (b->prog->build_cmds) {
		b->tree = xstrfmt("%s/tree", b->dir);
		b->bin = xstrfmt("%s/%s", b->tree, b->prog->outputs[0]);
	} else {
		slug = bin_name(b->prog);
		b->bin = xstrfmt("%s/%s", b->dir, slug);
		free(slug);
	}

	if (b->prog->min_arch && !spec_arch_satisfies(b->arch, b->prog->min_arch))
		b->skip_reason = xstrfmt("program '%s' needs %s; this build targets %s",
					 b->prog->name, b->prog->min_arch, b->arch);
	else if (!h->nvcc)
		b->skip_reason = xstrdup("nvcc not found on the host (searched PATH, cuda_home, "
					 "/usr/local/cuda/bin, /usr/local/cuda-*/bin); set "
					 "\"cuda_home\" in the hosts file");

	if (b->prog->build_cmds)
		return;   /* its command once the plan knows which builds it makes (share_builds) */
	gencode = plan_gencode(b->arch);
	env_add_exports(&cmd, h->env, h->nenv);
	strbuf_addstr(&cmd, "cd ");
	strbuf_add_shell_quoted(&cmd, p->src_dir);
	strbuf_addstr(&cmd, " && ");
	add_top_probe(&cmd, h->nvcc);
	objdir = xstrfmt("%s/objects", h->workdir);
	strbuf_addstr(&cmd, "o=");
	strbuf_add_shell_quoted(&cmd, objdir);
	strbuf_addstr(&cmd, " && mkdir -p \"$o\" && " OBJ_FUNCTION);
	for (i = 0; b->prog->sources && b->prog->sources[i]; i++) {
		struct strbuf cc = STRBUF_INIT;
		char key[SHA256_HEX_LEN + 1];
		add_compile_words(&cc, b, s, h, gencode, variant_reaches(p, b, b->prog->sources[i], s, h));
		strbuf_addstr(&cc, " -c ");
		strbuf_add_shell_quoted(&cc, b->prog->sources[i]);
		object_key(key, cc.buf, b->prog->sources[i], s, h);
		keys = xrealloc(keys, (size_t)(i + 1) * sizeof(*keys));
		keys[i] = xstrfmt("%.*s", OBJ_KEY_LEN, key);
		strbuf_addf(&cmd, " && gpuorch_obj %s ", keys[i]);
		strbuf_add_shell_quoted(&cmd, b->prog->sources[i]);
		strbuf_addch(&cmd, ' ');
		strbuf_add(&cmd, cc.buf, cc.len);
		strbuf_release(&cc);
	}
	/* the link: the objects, in the sources' order, with the libraries */
	strbuf_addstr(&cmd, " && ");
	add_nvcc_words(&cmd, s, h, gencode);
	strbuf_addstr(&cmd, " -o ");
	strbuf_add_shell_quoted(&cmd, b->bin);
	for (i = 0; b->prog->sources && b->prog->sources[i]; i++)
		strbuf_addf(&cmd, " \"$o\"/%s.o", keys[i]);
	for (i = 0; b->prog->libs && b->prog->libs[i]; i++) {
		strbuf_addch(&cmd, ' ');
		strbuf_add_shell_quoted(&cmd, b->prog->libs[i]);
	}
	if (h->nvcc)
		add_rpath(&cmd, h->nvcc);
	/* the objects it was linked from, beside it: `hosts clean` keeps the
	 * objects of every build it keeps */
	strbuf_addstr(&cmd, " && printf '%s\\n'");
	for (i = 0; b->prog->sources && b->prog->sources[i]; i++) {
		strbuf_addf(&cmd, " %s", keys[i]);
		free(keys[i]);
	}
	free(keys);
	free(objdir);
	strbuf_addstr(&cmd, " >");
	{
		char *list = xstrfmt("%s/objects", b->dir);
		strbuf_add_shell_quoted(&cmd, list);
		free(list);
	}
	b->command = strbuf_detach(&cmd, NULL);
	free(gencode);
}

static int same_variant(const struct spec_variant *a, const struct spec_variant *b)
{
	int i;
	if (!a || !b)
		return a == b;
	if (a->ndefines != b->ndefines)
		return 0;
	for (i = 0; i < a->ndefines; i++)
		if (strcmp(a->defines[i].key, b->defines[i].key) ||
		    strcmp(a->defines[i].value, b->defines[i].value))
			return 0;
	return 1;
}

static const struct plan_build *find_build(const struct plan *p, const struct spec_program *prog,
					   const struct spec_variant *variant, const char *arch)
{
	int i;
	for (i = 0; i < p->nbuilds; i++)
		if (p->builds[i].prog == prog && arch && !strcmp(p->builds[i].arch, arch) &&
		    same_variant(p->builds[i].variant, variant))
			return &p->builds[i];
	return NULL;
}

/* The program's arguments: mode, problem parameters, then tolerances in check mode. */
static void add_program_args(struct strbuf *cmd, const struct spec *s,
			     const struct spec_problem *pr, const char *mode)
{
	int i;
	strbuf_addstr(cmd, " --mode=");
	strbuf_addstr(cmd, mode);
	for (i = 0; i < pr->nparams; i++) {
		char *a = xstrfmt("--%s=%s", pr->params[i].key, pr->params[i].value);
		strbuf_addch(cmd, ' ');
		strbuf_add_shell_quoted(cmd, a);
		free(a);
	}
	if (!strcmp(mode, "check") || !strcmp(mode, "profile")) {
		for (i = 0; i < s->ntolerance; i++) {
			char *key = xstrdup(s->tolerance[i].key), *u, *a;
			for (u = key; *u; u++)
				if (*u == '_')
					*u = '-';
			a = xstrfmt("--tol-%s=%s", key, s->tolerance[i].value);
			strbuf_addch(cmd, ' ');
			strbuf_add_shell_quoted(cmd, a);
			free(a);
			free(key);
		}
	}
}

static void add_word(struct strbuf *cmd, const char *w)
{
	strbuf_addch(cmd, ' ');
	strbuf_add_shell_quoted(cmd, w);
}

/* ncu: profile into DIR/profile.ncu-rep (its own messages into DIR/ncu.log,
 * so stdout stays the program's), then export the raw page as CSV. The
 * program's exit status is the step's. */
static void profile_command(struct strbuf *cmd, struct plan_step *ps, const struct spec *s,
			    const struct plan_host *h, const char *bin)
{
	const struct spec_step *st = ps->step;
	struct strbuf metrics = STRBUF_INIT;
	const char *ncu = h->ncu ? h->ncu : "ncu";
	char *a, *out = xstrfmt("%s/profile", ps->dir);
	int i;

	ps->tool_log = xstrfmt("%s/ncu.log", ps->dir);
	ps->profile_rep = xstrfmt("%s/profile.ncu-rep", ps->dir);
	ps->profile_csv = xstrfmt("%s/profile.csv", ps->dir);
	for (i = 0; st->metrics[i]; i++)
		strbuf_addf(&metrics, "%s%s", i ? "," : "", st->metrics[i]);
	strbuf_add_shell_quoted(cmd, ncu);
	add_word(cmd, "--metrics");
	add_word(cmd, metrics.buf);
	a = xstrfmt("regex:%s", st->kernel);
	add_word(cmd, "--kernel-name");
	add_word(cmd, a);
	free(a);
	strbuf_addf(cmd, " --launch-skip %d --launch-count %d", st->launch_skip, st->launch_count);
	add_word(cmd, "--clock-control");
	add_word(cmd, st->clock_control);
	add_word(cmd, "--cache-control");
	add_word(cmd, st->cache_control);
	add_word(cmd, "--log-file");
	add_word(cmd, ps->tool_log);
	strbuf_addstr(cmd, " -f -o");
	add_word(cmd, out);
	add_word(cmd, bin);
	add_program_args(cmd, s, ps->problem, st->mode);
	if (!strcmp(st->mode, "check"))
		strbuf_addstr(cmd, " --trials=1");
	strbuf_addstr(cmd, "; rc=$?; ");
	strbuf_add_shell_quoted(cmd, ncu);
	strbuf_addstr(cmd, " --import");
	add_word(cmd, ps->profile_rep);
	strbuf_addstr(cmd, " --csv --page raw --print-units base >");
	strbuf_add_shell_quoted(cmd, ps->profile_csv);
	strbuf_addstr(cmd, " 2>>");
	strbuf_add_shell_quoted(cmd, ps->tool_log);
	strbuf_addstr(cmd, "; exit $rc");
	strbuf_release(&metrics);
	free(out);
}

/* compute-sanitizer: one tool; its report into DIR/sanitizer.log; exit 99
 * when it found errors. */
static void sanitize_command(struct strbuf *cmd, struct plan_step *ps, const struct spec *s,
			     const struct plan_host *h, const char *bin)
{
	ps->tool_log = xstrfmt("%s/sanitizer.log", ps->dir);
	strbuf_add_shell_quoted(cmd, h->sanitizer ? h->sanitizer : "compute-sanitizer");
	add_word(cmd, "--tool");
	add_word(cmd, ps->tool);
	strbuf_addf(cmd, " --print-limit %d --error-exitcode 99", ps->step->print_limit);
	add_word(cmd, "--log-file");
	add_word(cmd, ps->tool_log);
	add_word(cmd, bin);
	add_program_args(cmd, s, ps->problem, "check");
}

/* The CUPTI injection library of kernel_timing steps (docs/byo.md): one
 * build per host, keyed by its source and the nvcc whose CUDA tree holds
 * CUPTI; it may fail (no CUPTI there): then only those steps are skipped. */
static const struct spec_program ktrace_prog = { .name = "gpuorch_ktrace" };

static void make_ktrace_build(struct plan_build *b, const struct plan *p, const struct plan_host *h)
{
	struct strbuf cmd = STRBUF_INIT;
	struct sha256_ctx *c = sha256_begin();
	char *tree = h->nvcc ? cuda_tree_of(h->nvcc) : NULL;

	b->prog = &ktrace_prog;
	b->may_fail = 1;
	sha256_update(c, "gpuorch-ktrace/1", 17);
	sha256_update(c, gpuorch_ktrace_c, gpuorch_ktrace_c_len + 1);
	sha256_update(c, h->nvcc ? h->nvcc : "", strlen(h->nvcc ? h->nvcc : "") + 1);
	sha256_update(c, h->nvcc_version ? h->nvcc_version : "",
		      strlen(h->nvcc_version ? h->nvcc_version : "") + 1);
	sha256_end(c, b->key);
	b->dir = xstrfmt("%s/builds/%.16s", h->workdir, b->key);
	b->bin = xstrfmt("%s/libgpuorch_ktrace.so", b->dir);
	if (!h->nvcc)
		b->skip_reason = xstrdup("nvcc not found on the host: the CUPTI library is found "
					 "beside it");
	env_add_exports(&cmd, h->env, h->nenv);
	strbuf_addstr(&cmd, "cd ");
	strbuf_add_shell_quoted(&cmd, b->dir);
	strbuf_addstr(&cmd, " && printf '%s' ");
	strbuf_add_shell_quoted(&cmd, (const char *)gpuorch_ktrace_c);
	strbuf_addstr(&cmd, " >gpuorch_ktrace.c && ");
	add_top_probe(&cmd, h->nvcc);
	strbuf_addstr(&cmd, "C=");
	if (tree)
		strbuf_add_shell_quoted(&cmd, tree);
	else
		strbuf_addstr(&cmd, "\"$cuda_top\"");
	/* CUPTI's header and library: extras/CUPTI in a toolkit tree, or
	 * beside the toolkit's own (Debian's nvidia-cuda-toolkit, targets/) */
	strbuf_addstr(&cmd, " && I= && L= && for d in \"$C/extras/CUPTI/include\" \"$C/include\" "
			    "\"$C\"/targets/*/include /usr/include; do "
			    "if [ -f \"$d/cupti.h\" ]; then I=$d; break; fi; done && "
			    "for d in \"$C/extras/CUPTI/lib64\" \"$C/lib64\" \"$C/lib\" \"$C\"/targets/*/lib "
			    "/usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu; do "
			    "if ls \"$d\"/libcupti.so* >/dev/null 2>&1; then L=$d; break; fi; done && "
			    "if [ -z \"$I\" ] || [ -z \"$L\" ]; then echo \"gpuorch: no CUPTI "
			    "(cupti.h and libcupti.so) in the CUDA tree $C: kernel_timing needs CUPTI, "
			    "which the CUDA Toolkit ships in extras/CUPTI\" >&2; exit 3; fi && "
			    "${CC:-cc} -O2 -shared -fPIC -I\"$I\" -I\"$C/include\" gpuorch_ktrace.c "
			    "-o libgpuorch_ktrace.so.tmp -L\"$L\" -lcupti -Wl,-rpath,\"$L\" && "
			    "mv -f libgpuorch_ktrace.so.tmp libgpuorch_ktrace.so");
	(void)p;
	b->command = strbuf_detach(&cmd, NULL);
	free(tree);
}

/* Profilers and sanitizers need a GPU whatever the program says; so does a
 * step that asks for GPUs ("gpus": N). */
static int step_needs_gpu(const struct spec_program *prog, const struct spec_step *st)
{
	return prog->needs_gpu || st->kind == STEP_PROFILE || st->kind == STEP_SANITIZE ||
	       st->kind == STEP_KERNEL_TIMING || st->gpus > 0;
}

/* A kernel_timing step: the program `repeat` times under the library, each
 * run's trace in DIR/ktrace.N.jsonl; its exit status is the last failing
 * one's (0 when all passed). Exit 97: the library was not built. */
static void ktrace_command(struct strbuf *cmd, struct plan_step *ps, const struct spec *s,
			   const struct plan *p, const struct spec_problem *pr, const char *bin)
{
	const struct spec_program *prog = ps->step->prog;
	const char *lib = p->ktrace ? p->ktrace->bin : "/nonexistent";
	ps->tool_log = xstrfmt("%s/ktrace", ps->dir);
	strbuf_addstr(cmd, "if [ ! -f ");
	strbuf_add_shell_quoted(cmd, lib);
	strbuf_addstr(cmd, " ]; then echo 'gpuorch: the CUPTI injection library was not built on "
			   "this host (see the build of gpuorch_ktrace)' >&2; exit 97; fi; rc=0; i=1; "
			   "while [ $i -le ");
	strbuf_addf(cmd, "%d", ps->step->repeat);
	strbuf_addstr(cmd, " ]; do CUDA_INJECTION64_PATH=");
	strbuf_add_shell_quoted(cmd, lib);
	strbuf_addstr(cmd, " GPUORCH_KTRACE_OUT=");
	strbuf_add_shell_quoted(cmd, ps->tool_log);
	strbuf_addstr(cmd, ".$i.jsonl ");
	if (prog->run) {
		add_argv(cmd, prog->run, ps->arch, pr->params, pr->nparams);
	} else {
		strbuf_add_shell_quoted(cmd, bin);
		add_program_args(cmd, s, pr, "profile");
	}
	strbuf_addstr(cmd, " || rc=$?; i=$((i + 1)); done; exit $rc");
}

#define TOOL_SEARCH "searched PATH, cuda_home/bin, /usr/local/cuda/bin, /usr/local/cuda-*/bin, /opt/nvidia/nsight-compute/*"

/* The start of a step's command: the host's env, then "cd DIR && " */
static void add_env_cd(struct strbuf *cmd, const struct plan_host *h, const char *dir)
{
	env_add_exports(cmd, h->env, h->nenv);
	strbuf_addstr(cmd, "cd ");
	strbuf_add_shell_quoted(cmd, dir);
	strbuf_addstr(cmd, " && ");
}

static void make_step(struct plan_step *ps, const struct spec *s, const struct plan *p,
		      const struct plan_host *h, const struct spec_step *st,
		      const struct spec_problem *pr, const struct spec_variant *variant,
		      const char *tool, const char *mode)
{
	const struct spec_program *prog = st->prog;
	struct strbuf cmd = STRBUF_INIT, id = STRBUF_INIT;
	const char *tool_name = NULL, *tool_path = NULL;
	char *slug;

	ps->step = st;
	ps->problem = pr;
	ps->variant = variant;
	ps->tool = tool;
	ps->mode = mode;
	ps->needs_gpu = step_needs_gpu(prog, st);
	strbuf_addf(&id, "%s.%s", step_kind_name(st->kind), prog->name);
	if (variant)
		strbuf_addf(&id, "[%s]", variant->label);
	strbuf_addf(&id, ".%s", pr->name);
	if (tool)
		strbuf_addf(&id, ".%s", tool);
	if (st->kind == STEP_SWEEP)
		strbuf_addf(&id, ".%s", mode);
	ps->id = strbuf_detach(&id, NULL);
	slug = plan_slug(ps->id, 120);
	ps->dir = xstrfmt("%s/%s", p->run_dir, slug);
	free(slug);
	if (st->kind == STEP_PROFILE) {
		tool_name = "ncu";
		tool_path = h->ncu;
	} else if (st->kind == STEP_SANITIZE) {
		tool_name = "compute-sanitizer";
		tool_path = h->sanitizer;
	}

	/* Which arch does it run on? A GPU program runs on the host's GPU arch;
	 * a CPU program on the first arch built. */
	ps->arch = xstrdup(h->run_arch ? h->run_arch : (h->narchs ? h->archs[0] : "none"));
	if (ps->needs_gpu && !h->run_arch) {
		if (tool_name)
			ps->skip_reason = xstrfmt("no CUDA device on this host (%s); %s %s%s",
						  h->no_gpu_reason ? h->no_gpu_reason : "none detected",
						  tool_name, tool_path ? "found at " : "not found either",
						  tool_path ? tool_path : "");
		else
			ps->skip_reason = xstrfmt("no CUDA device on this host (%s); built only",
						  h->no_gpu_reason ? h->no_gpu_reason : "none detected");
	} else if (tool_name && !tool_path) {
		ps->skip_reason = xstrfmt("%s not found on the host (" TOOL_SEARCH "); set "
					  "\"cuda_home\" in the hosts file or install it",
					  tool_name);
	} else if (prog->script && !h->python) {
		ps->skip_reason = xstrdup("python3 not found on the host");
	}

	if (!prog->script && (!prog->run || prog->build_cmds)) {
		ps->build = find_build(p, prog, variant, ps->arch);
		if (!ps->skip_reason && !ps->build)
			ps->skip_reason = xstrfmt("no build of '%s' for %s", prog->name, ps->arch);
		else if (!ps->skip_reason && ps->build->skip_reason)
			ps->skip_reason = xstrfmt("not built: %s", ps->build->skip_reason);
	}

	add_env_cd(&cmd, h, ps->build && ps->build->tree ? ps->build->tree : p->src_dir);
	if (st->kind == STEP_KERNEL_TIMING) {
		ktrace_command(&cmd, ps, s, p, pr, ps->build ? ps->build->bin : "false");
	} else if (prog->run) {
		/* its own command line: check steps run 'check' when there is one */
		add_argv(&cmd, st->kind == STEP_CORRECTNESS && prog->check ? prog->check : prog->run,
			 ps->arch, pr->params, pr->nparams);
	} else if (st->kind == STEP_PROFILE) {
		profile_command(&cmd, ps, s, h, ps->build ? ps->build->bin : "false");
	} else if (st->kind == STEP_SANITIZE) {
		sanitize_command(&cmd, ps, s, h, ps->build ? ps->build->bin : "false");
	} else {
		if (prog->script) {
			strbuf_add_shell_quoted(&cmd, h->python ? h->python : "python3");
			strbuf_addch(&cmd, ' ');
			strbuf_add_shell_quoted(&cmd, prog->script);
		} else {
			strbuf_add_shell_quoted(&cmd, ps->build ? ps->build->bin : "false");
		}
		add_program_args(&cmd, s, pr, mode);
	}
	ps->command = strbuf_detach(&cmd, NULL);
}

/* The plan steps of one spec step on one problem, appended to p->steps: a
 * sanitize step makes one per tool, a sweep a check (when asked) and a
 * benchmark per variant. */
static void expand_step(struct plan *p, const struct spec *s, const struct plan_host *h,
			const struct spec_step *st, const struct spec_problem *pr)
{
	int t, v;
	switch (st->kind) {
	case STEP_CORRECTNESS:
		make_step(&p->steps[p->nsteps++], s, p, h, st, pr, NULL, NULL, "check");
		break;
	case STEP_BENCHMARK:
		make_step(&p->steps[p->nsteps++], s, p, h, st, pr, NULL, NULL, "bench");
		break;
	case STEP_PROFILE:
		make_step(&p->steps[p->nsteps++], s, p, h, st, pr, NULL, NULL, st->mode);
		break;
	case STEP_KERNEL_TIMING:
		make_step(&p->steps[p->nsteps++], s, p, h, st, pr, NULL, NULL, "profile");
		break;
	case STEP_SANITIZE:
		for (t = 0; st->tools[t]; t++)
			make_step(&p->steps[p->nsteps++], s, p, h, st, pr, NULL,
				  st->tools[t], "check");
		break;
	case STEP_SWEEP:
		/* one variant at a time: its check, then its benchmark */
		for (v = 0; v < st->nvariants; v++) {
			if (st->sweep_check)
				make_step(&p->steps[p->nsteps++], s, p, h, st, pr,
					  &st->variants[v], NULL, "check");
			make_step(&p->steps[p->nsteps++], s, p, h, st, pr,
				  &st->variants[v], NULL, "bench");
		}
		break;
	case STEP_ANY:
	case STEP_KIND_COUNT:
		break;   /* no step of a spec (vocab.h) */
	}
}

/* Builds with the same key are one build: each but the first of those to
 * be made points at it (same_as) and takes its command; a project build's
 * command is made here, checking the outputs of every program it serves. */
static void share_builds(struct plan *p, const struct spec *s, const struct plan_host *h)
{
	int i, k;
	for (i = 0; i < p->nbuilds; i++) {
		struct plan_build *b = &p->builds[i];
		for (k = 0; k < i && !b->skip_reason && !b->same_as; k++)
			if (!p->builds[k].skip_reason && !p->builds[k].same_as &&
			    !strcmp(p->builds[k].key, b->key))
				b->same_as = &p->builds[k];
	}
	for (i = 0; i < p->nbuilds; i++) {
		struct plan_build *b = &p->builds[i];
		struct strbuf cmd = STRBUF_INIT;
		if (b->command)
			continue;
		if (b->same_as) {
			b->command = xstrdup(b->same_as->command);
			continue;
		}
		project_build(&cmd, b, s, p, h);
		b->command = strbuf_detach(&cmd, NULL);
	}
}

static void add_build(struct plan *p, const struct spec *s, const struct plan_host *h,
		      const struct spec_program *prog, const struct spec_variant *variant,
		      const char *arch)
{
	struct plan_build *b;
	if (find_build(p, prog, variant, arch))
		return;
	b = &p->builds[p->nbuilds++];
	b->prog = prog;
	b->variant = variant;
	b->arch = xstrdup(arch);
	make_build(b, s, p, h);
}

void plan_make(struct plan *p, const struct spec *s, const struct plan_host *h)
{
	int i, j, a, v, n, nb;

	memset(p, 0, sizeof(*p));
	p->content_dir = xstrfmt("%s/content/%s", h->workdir, h->content_id);
	p->src_dir = xstrfmt("%s/src", p->content_dir);
	p->blobs_dir = xstrfmt("%s/blobs", h->workdir);
	p->run_dir = xstrfmt("%s/runs/%s", h->workdir, h->run_id);

	/* Builds: every compiled program that some step uses, for every arch;
	 * a sweep adds one build per variant and arch (its defines are part of
	 * the build key). */
	nb = s->nprograms;
	for (j = 0; j < s->nsteps; j++)
		nb += s->steps[j].nvariants;
	p->builds = xcalloc((size_t)(nb * (h->narchs ? h->narchs : 1)) + 1, sizeof(*p->builds));
	for (i = 0; i < s->nprograms; i++) {
		const struct spec_program *prog = &s->programs[i];
		int used = 0;
		if (prog->script || (prog->run && !prog->build_cmds))
			continue;
		for (j = 0; j < s->nsteps; j++)
			if (s->steps[j].prog == prog && s->steps[j].kind != STEP_SWEEP)
				used = 1;
		if (!used)
			continue;
		for (a = 0; a < h->narchs; a++)
			add_build(p, s, h, prog, NULL, h->archs[a]);
	}
	for (j = 0; j < s->nsteps; j++)
		for (v = 0; v < s->steps[j].nvariants; v++)
			for (a = 0; a < h->narchs; a++)
				add_build(p, s, h, s->steps[j].prog, &s->steps[j].variants[v],
					  h->archs[a]);

	for (j = 0; j < s->nsteps; j++)
		if (s->steps[j].kind == STEP_KERNEL_TIMING) {
			p->ktrace = &p->builds[p->nbuilds++];
			p->ktrace->arch = xstrdup(h->run_arch ? h->run_arch : h->narchs ? h->archs[0] : "none");
			make_ktrace_build(p->ktrace, p, h);
			break;
		}
	share_builds(p, s, h);

	n = 0;
	for (j = 0; j < s->nsteps; j++) {
		const struct spec_step *st = &s->steps[j];
		int per = 1;
		if (st->kind == STEP_SANITIZE)
			for (per = 0; st->tools[per]; per++)
				;
		if (st->kind == STEP_SWEEP)
			per = st->nvariants * (st->sweep_check ? 2 : 1);
		for (i = 0; st->problems[i]; i++)
			n += per;
	}
	p->steps = xcalloc((size_t)(n ? n : 1), sizeof(*p->steps));
	for (j = 0; j < s->nsteps; j++) {
		const struct spec_step *st = &s->steps[j];
		for (i = 0; st->problems[i]; i++) {
			const struct spec_problem *pr = spec_find_problem(s, st->problems[i]);
			if (!pr)
				continue;
			expand_step(p, s, h, st, pr);
		}
	}
}

void plan_release(struct plan *p)
{
	int i;
	free(p->reach);
	for (i = 0; i < p->nbuilds; i++) {
		free(p->builds[i].arch);
		free(p->builds[i].dir);
		free(p->builds[i].bin);
		free(p->builds[i].tree);
		free(p->builds[i].command);
		free(p->builds[i].skip_reason);
	}
	for (i = 0; i < p->nsteps; i++) {
		free(p->steps[i].id);
		free(p->steps[i].dir);
		free(p->steps[i].command);
		free(p->steps[i].arch);
		free(p->steps[i].skip_reason);
		free(p->steps[i].tool_log);
		free(p->steps[i].profile_rep);
		free(p->steps[i].profile_csv);
	}
	free(p->builds);
	free(p->steps);
	free(p->content_dir);
	free(p->blobs_dir);
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
		fprintf(out, "    build %s%s%s%s for %s (key %.16s)", b->prog->name,
			b->variant ? " [" : "", b->variant ? b->variant->label : "",
			b->variant ? "]" : "", b->arch, b->key);
		if (b->same_as) {
			fprintf(out, "; the same build as %s%s%s%s, made once\n", b->same_as->prog->name,
				b->same_as->variant ? " [" : "",
				b->same_as->variant ? b->same_as->variant->label : "",
				b->same_as->variant ? "]" : "");
			continue;
		}
		fputc('\n', out);
		if (b->skip_reason)
			fprintf(out, "      skipped: %s\n", b->skip_reason);
		else
			fprintf(out, "      $ %s\n", b->command);
	}
	for (i = 0; i < p->nsteps; i++) {
		const struct plan_step *ps = &p->steps[i];
		if (ps->needs_gpu && ps->step->gpus > 1)
			fprintf(out, "    step %s (timeout %d s, on %d GPUs of the host at once, "
				"each locked)\n", ps->id, ps->step->timeout_s, ps->step->gpus);
		else
			fprintf(out, "    step %s (timeout %d s%s)\n", ps->id, ps->step->timeout_s,
				ps->needs_gpu ? ", one at a time on its GPU slot" : "");
		if (ps->skip_reason)
			fprintf(out, "      skipped: %s\n", ps->skip_reason);
		else
			fprintf(out, "      $ %s\n", ps->command);
	}
}
