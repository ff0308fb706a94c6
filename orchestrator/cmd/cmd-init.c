/* cmd-init.c -- `gpuorch init`: look at a git repository and write a
 * starting spec, experiments/<name>.json (docs/byo.md), never over an
 * existing one. What it guesses: the build system (CMakeLists.txt, then a
 * Makefile, else nvcc on each .cu file that has a main), the executables
 * (a CMake build's targets in any folder, init-cmake.c; the Makefile's first
 * target; with a CMake build where none is found, the .cu files with a
 * main), the __global__ kernels of the .cu/.cuh files; it prints each guess
 * and what to check. The spec it writes is validated like any other before
 * it is kept. */
#include "cmd/commands.h"
#include "cmd/init-cmake.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/jsonutil.h"
#include "core/strbuf.h"
#include "remote/pack.h"
#include "spec/spec.h"

#include <getopt.h> /* optind, optarg */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

#define MAX_KERNELS 200
#define MAX_PROGRAMS 16

static const char about[] =
	"Inspect the git repository at DIR (default .) and write a starting spec,\n"
	"DIR/experiments/NAME.json (NAME: the directory's name). It never\n"
	"overwrites a file. It prints what it guessed -- the build system, the\n"
	"executables, the kernels found in .cu files -- and what to check before\n"
	"'gpuorch run'. Only files git tracks are looked at. A CMake build's\n"
	"executables, in any folder, are asked of cmake (configured in a temporary\n"
	"directory, nothing built; GPUORCH_INIT_CMAKE_TIMEOUT_S, default 120), else\n"
	"read from add_executable() in every CMakeLists.txt.\n";

static const struct cmd_option options[] = {
	{ "root", 'o', "DIR", "@dir", "the git repository to inspect (default .)" },
	{ "name", 'n', "NAME", NULL, "the spec's name: DIR/experiments/NAME.json (default:\n"
				     "the directory's name)" },
	{ "json", 'j', NULL, NULL, "print what was written and guessed as one JSON object\n"
				   "(docs/schema/cli-init.schema.json)" },
	{ NULL, 0, NULL, NULL, NULL },
};

struct guess {
	char **names;     /* executables */
	char **runs;      /* how each runs, relative to the tree */
	char **mains;     /* nvcc only: the .cu file of each */
	int n;
	const char *system; /* "cmake" | "make" | "nvcc" */
	char *how;        /* cmake: how its targets were found (or why none was) */
	int from_cmake;   /* nvcc because the CMake build named no executable */
	char **kernels;
	int nkernels;
};

static void push(char ***v, int *n, const char *s)
{
	*v = xrealloc(*v, (size_t)(*n + 2) * sizeof(**v));
	(*v)[(*n)++] = xstrdup(s);
	(*v)[*n] = NULL;
}

static int has(char **v, int n, const char *s)
{
	int i;
	for (i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return 1;
	return 0;
}

/* Every match of group 1 of the regex in each line of text, into v. */
static void matches(const char *rx, const char *text, char ***v, int *n, int max, int first_only)
{
	regex_t re;
	regmatch_t m[2];
	const char *p = text;
	if (regcomp(&re, rx, REG_EXTENDED | REG_NEWLINE))
		return;
	while (*n < max && regexec(&re, p, 2, m, p == text ? 0 : REG_NOTBOL) == 0) {
		char *name = xstrfmt("%.*s", (int)(m[1].rm_eo - m[1].rm_so), p + m[1].rm_so);
		if (!has(*v, *n, name)) {
			*v = xrealloc(*v, (size_t)(*n + 2) * sizeof(**v));
			(*v)[(*n)++] = name;
			(*v)[*n] = NULL;
		} else {
			free(name);
		}
		p += m[0].rm_eo > 0 ? m[0].rm_eo : 1;
		if (first_only || !*p)
			break;
	}
	regfree(&re);
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

static char *base_name(const char *path, int strip_ext)
{
	const char *b = strrchr(path, '/');
	char *s = xstrdup(b ? b + 1 : path), *dot;
	if (strip_ext && (dot = strrchr(s, '.')) != NULL && dot != s)
		*dot = '\0';
	return s;
}

/* Group 1 of the regex in the file root/rel, into v (at most max). */
static void file_matches(const char *root, const char *rel, const char *rx, char ***v, int *n,
			 int max, int first_only)
{
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	char *full = xstrfmt("%s/%s", root, rel);
	if (fs_read_file(full, &text, &err) == GO_OK)
		matches(rx, text.buf, v, n, max, first_only);
	free(full);
	strbuf_release(&text);
	strbuf_release(&err);
}

static int ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* p at '(' (or '<'): the position after its balanced close, or NULL. */
static const char *skip_balanced(const char *p)
{
	char open = *p, close = open == '(' ? ')' : '>';
	int depth = 0;
	for (; *p; p++) {
		if (*p == open)
			depth++;
		else if (*p == close && --depth == 0)
			return p + 1;
		else if (*p == ';' || *p == '{')
			return NULL;
	}
	return NULL;
}

/* The kernels a CUDA source declares: after each `__global__`, the last
 * identifier before the parameter list's '(' -- across lines, past return
 * types, `__launch_bounds__(...)`, `__attribute__((...))` and template
 * arguments (`__global__ void __launch_bounds__(N)\n k(` names k). */
static void kernel_names(const char *text, char ***v, int *n, int max)
{
	const char *p = text;
	while (*n < max && (p = strstr(p, "__global__")) != NULL) {
		const char *q = p + strlen("__global__"), *name = NULL;
		size_t len = 0;
		if ((p > text && ident_char(p[-1])) || ident_char(*q)) {
			p = q;
			continue;
		}
		while (q && *q && *q != ';' && *q != '{') {
			if (ident_char(*q)) {
				const char *s = q;
				while (ident_char(*q))
					q++;
				if ((q - s == 17 && !strncmp(s, "__launch_bounds__", 17)) ||
				    (q - s == 13 && !strncmp(s, "__attribute__", 13))) {
					while (*q == ' ' || *q == '\t' || *q == '\n')
						q++;
					q = *q == '(' ? skip_balanced(q) : q;
					continue;
				}
				name = s;
				len = (size_t)(q - s);
			} else if (*q == '<') {
				q = skip_balanced(q);
			} else if (*q == '(') {
				break;
			} else {
				q++;
			}
		}
		if (q && *q == '(' && name && !(name[0] >= '0' && name[0] <= '9')) {
			char *k = xstrfmt("%.*s", (int)len, name);
			if (!has(*v, *n, k)) {
				*v = xrealloc(*v, (size_t)(*n + 2) * sizeof(**v));
				(*v)[(*n)++] = k;
				(*v)[*n] = NULL;
			} else {
				free(k);
			}
		}
		p += strlen("__global__");
	}
}

static void file_kernels(const char *root, const char *rel, char ***v, int *n, int max)
{
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	char *full = xstrfmt("%s/%s", root, rel);
	if (fs_read_file(full, &text, &err) == GO_OK)
		kernel_names(text.buf, v, n, max);
	free(full);
	strbuf_release(&text);
	strbuf_release(&err);
}

/* The CMake build's executables into g (none: g->how says why). */
static void guess_cmake(const char *root, char **files, struct guess *g)
{
	struct init_cmake c;
	int i, n = 0;

	init_cmake_find(root, files, MAX_PROGRAMS, &c);
	for (i = 0; i < c.n; i++) {
		push(&g->names, &g->n, c.names[i]);
		push(&g->runs, &n, c.paths[i]);
	}
	g->how = c.how;
	c.how = NULL;
	init_cmake_release(&c);
}

/* nvcc on each .cu file of mains: one program each, named by the file. */
static void guess_nvcc(char **mains, int nm, struct guess *g)
{
	int i, n = 0;
	for (i = 0; i < nm; i++) {
		char *b = base_name(mains[i], 1), *r = xstrfmt("./%s", b);
		int k = g->n;
		if (!has(g->names, g->n, b)) {   /* two mains named alike: keep the first */
			push(&g->names, &g->n, b);
			push(&g->runs, &n, r);
			push(&g->mains, &k, mains[i]);
		}
		free(b);
		free(r);
	}
}

static void guess_repo(const char *root, char **files, struct guess *g)
{
	char **mains = NULL;
	int i, nf, nm = 0, n = 0;

	memset(g, 0, sizeof(*g));
	for (nf = 0; files[nf]; nf++) {
		if (ends_with(files[nf], ".cu") || ends_with(files[nf], ".cuh"))
			file_kernels(root, files[nf], &g->kernels, &g->nkernels, MAX_KERNELS);
		if (ends_with(files[nf], ".cu") && nm < MAX_PROGRAMS) {
			char **m = NULL;
			int k = 0;
			file_matches(root, files[nf], "^[ \t]*int[ \t]+(main)[ \t]*\\(", &m, &k, 1, 1);
			if (k)
				push(&mains, &nm, files[nf]);
			for (i = 0; i < k; i++)
				free(m[i]);
			free(m);
		}
	}
	if (has(files, nf, "CMakeLists.txt")) {
		g->system = "cmake";
		guess_cmake(root, files, g);
		if (!g->n) {   /* none found: the .cu files with a main, as with no build system */
			g->system = "nvcc";
			g->from_cmake = 1;
			guess_nvcc(mains, nm, g);
		}
	} else if (has(files, nf, "Makefile") || has(files, nf, "makefile") ||
		   has(files, nf, "GNUmakefile")) {
		g->system = "make";
		file_matches(root, has(files, nf, "Makefile") ? "Makefile"
				   : has(files, nf, "makefile") ? "makefile" : "GNUmakefile",
			     "^([A-Za-z0-9_][A-Za-z0-9_./+-]*)[ \t]*:([^=]|$)", &g->names, &g->n, 1, 1);
		for (i = 0; i < g->n; i++) {
			char *r = xstrfmt("./%s", g->names[i]);
			push(&g->runs, &n, r);
			free(r);
		}
	} else {
		g->system = "nvcc";
		guess_nvcc(mains, nm, g);
	}
	for (i = 0; i < nm; i++)
		free(mains[i]);
	free(mains);
}

static void free_guess(struct guess *g)
{
	int i;
	for (i = 0; g->names && g->names[i]; i++)
		free(g->names[i]);
	for (i = 0; g->runs && g->runs[i]; i++)
		free(g->runs[i]);
	for (i = 0; g->mains && g->mains[i]; i++)
		free(g->mains[i]);
	for (i = 0; g->kernels && g->kernels[i]; i++)
		free(g->kernels[i]);
	free(g->names);
	free(g->runs);
	free(g->mains);
	free(g->kernels);
	free(g->how);
}

static cJSON *strings(const char *const *v)
{
	cJSON *a = cJSON_CreateArray();
	int i;
	for (i = 0; v[i]; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
	return a;
}

static cJSON *make_spec(const char *name, const struct guess *g)
{
	cJSON *root = cJSON_CreateObject(), *t, *progs, *steps, *pr;
	struct strbuf desc = STRBUF_INIT;
	int i;

	json_add_num(root, "schema", 1);
	json_add_str(root, "name", name);
	json_add_str(root, "phase", name);
	strbuf_addf(&desc, "Written by gpuorch init (%s build). Kernels found in .cu/.cuh files:", g->system);
	for (i = 0; i < g->nkernels; i++)
		strbuf_addf(&desc, "%s %s", i ? "," : "", g->kernels[i]);
	if (!g->nkernels)
		strbuf_addstr(&desc, " none");
	json_add_str(root, "description", desc.buf);
	strbuf_release(&desc);
	{
		const char *src[] = { ".", NULL };
		cJSON_AddItemToObject(root, "sources", strings(src));
	}
	t = json_add_obj(root, "targets");
	json_add_str(t, "H100", "sm_90a");
	json_add_str(t, "H200", "sm_90a");
	json_add_str(t, "A100", "sm_80");
	json_add_str(t, "L4", "sm_89");
	progs = json_add_obj(root, "programs");
	for (i = 0; i < g->n; i++) {
		cJSON *p = json_add_obj(progs, g->names[i]), *b = json_add_obj(p, "build");
		const char *run[] = { g->runs[i], NULL };
		const char *out[] = { !strncmp(g->runs[i], "./", 2) ? g->runs[i] + 2 : g->runs[i], NULL };
		if (!strcmp(g->system, "cmake")) {
			cJSON *cmds = cJSON_CreateArray();
			const char *c1[] = { "cmake", "-S", ".", "-B", "build",
					     "-DCMAKE_BUILD_TYPE=Release",
					     "-DCMAKE_CUDA_ARCHITECTURES={arch_num}", NULL };
			const char *c2[] = { "cmake", "--build", "build", "-j", NULL };
			cJSON_AddItemToArray(cmds, strings(c1));
			cJSON_AddItemToArray(cmds, strings(c2));
			cJSON_AddItemToObject(b, "command", cmds);
		} else if (!strcmp(g->system, "make")) {
			const char *c[] = { "make", "-j", NULL };
			cJSON_AddItemToObject(b, "command", strings(c));
		} else {
			const char *c[] = { "nvcc", "-O3", "-lineinfo", "-arch={arch}", "-o", out[0],
					    g->mains[i], NULL };
			cJSON_AddItemToObject(b, "command", strings(c));
		}
		cJSON_AddItemToObject(b, "outputs", strings(out));
		cJSON_AddItemToObject(b, "ptxas", cJSON_CreateTrue());
		cJSON_AddItemToObject(p, "run", strings(run));
	}
	pr = cJSON_CreateArray();
	t = cJSON_CreateObject();
	json_add_str(t, "name", "default");
	cJSON_AddItemToArray(pr, t);
	cJSON_AddItemToObject(root, "problems", pr);
	steps = json_add_arr(root, "steps");
	for (i = 0; i < g->n; i++) {
		cJSON *s1 = cJSON_CreateObject(), *s2 = cJSON_CreateObject(), *s3 = cJSON_CreateObject();
		json_add_str(s1, "kind", "correctness");
		json_add_str(s1, "program", g->names[i]);
		json_add_str(s2, "kind", "benchmark");
		json_add_str(s2, "program", g->names[i]);
		/* every kernel it launches, timed by gpuorch (docs/byo.md) */
		json_add_str(s3, "kind", "kernel_timing");
		json_add_str(s3, "program", g->names[i]);
		cJSON_AddItemToArray(steps, s1);
		cJSON_AddItemToArray(steps, s2);
		cJSON_AddItemToArray(steps, s3);
	}
	return root;
}

/* What init wrote and guessed, and what to check: the text. */
static void print_text(const struct guess *g, const char *path)
{
	int i;

	printf("wrote %s\n", path);
	printf("  build system   %s%s\n", g->system,
	       g->from_cmake ? " (no executable found in the CMake build: nvcc on each .cu with a main)"
	       : !strcmp(g->system, "nvcc") ? " (no CMakeLists.txt or Makefile: nvcc on each .cu with a main)"
	       : "");
	if (g->how)
		printf("  %-14s %s\n", g->from_cmake ? "cmake build" : "targets from", g->how);
	for (i = 0; i < g->n; i++)
		printf("  program        %s: builds %s, runs %s\n", g->names[i],
		       !strncmp(g->runs[i], "./", 2) ? g->runs[i] + 2 : g->runs[i], g->runs[i]);
	printf("  kernels        %d found in .cu/.cuh files", g->nkernels);
	for (i = 0; i < g->nkernels && i < 12; i++)
		printf("%s %s", i ? "," : ":", g->kernels[i]);
	printf("%s\n", g->nkernels > 12 ? ", ..." : "");
	printf("check before 'gpuorch run':\n"
	       "  - 'targets': GPU name -> arch of your hosts (guessed: H100/H200 sm_90a, A100 sm_80, L4 sm_89)\n"
	       "  - 'build.outputs' and 'run': the executable and its arguments (add {KEY} with problem params)\n"
	       "  - 'figures': the numbers your program prints, e.g. {\"gflops\": {\"regex\": \"GFLOPS: ([0-9.]+)\"}}\n"
	       "  - 'check': a command whose exit status 0 means the results are right\n"
	       "then: gpuorch spec check %s\n", path);
}

/* The same as one JSON document (gpuorch.cli.init/1). */
static void print_json(const struct guess *g, const char *path)
{
	cJSON *doc = cmd_json_doc("gpuorch.cli.init/1"), *progs, *ks;
	char *next = xstrfmt("gpuorch spec check %s", path);
	int i;

	json_add_str(doc, "spec", path);
	json_add_str(doc, "build_system", g->system);
	json_add_bool(doc, "cmake_found_none", g->from_cmake);
	json_add_str(doc, "cmake", g->how);
	progs = json_add_arr(doc, "programs");
	for (i = 0; i < g->n; i++) {
		cJSON *p = cJSON_CreateObject();
		json_add_str(p, "name", g->names[i]);
		json_add_str(p, "builds", !strncmp(g->runs[i], "./", 2) ? g->runs[i] + 2 : g->runs[i]);
		json_add_str(p, "runs", g->runs[i]);
		cJSON_AddItemToArray(progs, p);
	}
	ks = json_add_arr(doc, "kernels");   /* every one found: the text shows 12 */
	for (i = 0; i < g->nkernels; i++)
		cJSON_AddItemToArray(ks, cJSON_CreateString(g->kernels[i]));
	json_add_str(doc, "next", next);
	free(next);
	cmd_json_print(doc);
}

static int init_main(const char *root, const char *name_opt, int json)
{
	struct strbuf err = STRBUF_INIT;
	const char *all[] = { ".", NULL };
	char **files = NULL, *name = NULL, *dir = NULL, *path = NULL, *text = NULL, *real;
	struct guess g;
	struct spec *s = NULL;
	cJSON *spec = NULL;
	enum go_status st;
	int rc = 0;

	memset(&g, 0, sizeof(g));
	st = pack_resolve_sources(root, NULL, (char *const *)all, &files, &err);
	if (st != GO_OK) {
		fprintf(stderr, "error: gpuorch init reads the files git tracks in '%s': %s\n"
			"(run it at the top of a git repository with its files committed or added)\n",
			root, err.buf);
		rc = 2;
		goto out;
	}
	real = realpath(root, NULL);
	name = name_opt ? xstrdup(name_opt) : base_name(real ? real : root, 0);
	free(real);
	guess_repo(root, files, &g);
	if (!g.n) {
		fprintf(stderr, "error: no executable found in '%s': no target in the CMake "
			"build%s%s%s, no target in a Makefile, no .cu file with a main(); write "
			"the spec by hand (docs/byo.md)\n", root, g.how ? " (" : "",
			g.how ? g.how : "", g.how ? ")" : "");
		rc = 2;
		goto out;
	}
	spec = make_spec(name, &g);
	text = cJSON_Print(spec);
	dir = strcmp(root, ".") ? xstrfmt("%s/experiments", root) : xstrdup("experiments");
	path = xstrfmt("%s/%s.json", dir, name);
	/* never keep a spec that gpuorch itself would refuse */
	st = spec_parse(path, text, strlen(text), root, 1, &s, &err);
	if (st == GO_OK)
		st = fs_mkdir_p(dir, 0755, &err);
	if (st == GO_OK) {
		char *t2 = xstrfmt("%s\n", text);
		st = fs_write_new(path, t2, strlen(t2), &err);
		free(t2);
	}
	if (st != GO_OK) {
		fprintf(stderr, "error: %s%s\n", err.buf,
			st == GO_ERR_USAGE ? " (gpuorch init never overwrites a spec; pass --name NAME)" : "");
		rc = go_exit_code(st);
		goto out;
	}
	if (json)
		print_json(&g, path);
	else
		print_text(&g, path);
out:
	cJSON_Delete(spec);
	free(text);
	spec_free(s);
	pack_free_files(files);
	free_guess(&g);
	free(name);
	free(dir);
	free(path);
	strbuf_release(&err);
	return rc;
}

static int cmd_init(int argc, char **argv)
{
	const char *root = ".", *name = NULL;
	int c, json = 0;

	optind = 1;
	while ((c = cmd_getopt(&cmd_init_entry, argc, argv)) != -1) {
		switch (c) {
		case 'o': root = optarg; break;
		case 'n': name = optarg; break;
		case 'j': json = 1; break;
		default:
			return cmd_option_failed(&cmd_init_entry, c);
		}
	}
	if (optind != argc)
		return cmd_usage_error(&cmd_init_entry, "unexpected argument '%s'", argv[optind]);
	if (name && (!*name || strchr(name, '/') || name[0] == '.'))
		return cmd_usage_error(&cmd_init_entry, "--name: a file name without '/', not starting with '.'");
	return cmd_finish_stdout(init_main(root, name, json));
}

const struct cmd_entry cmd_init_entry = {
	.name = "init",
	.synopsis = "[options]",
	.about = about,
	.options = options,
	.after = "exit: 0 written, 2 not a git repository, or the spec exists already\n",
	.summary = "write a starting spec for a CUDA repository",
	.exec = cmd_init,
	.needs = 0, /* neither SSH nor the reports directory */
};
