/* agent-sig.c -- the host's signature in C: the same text as
 * orchestrator/remote/probe-sig.sh sets in $sig (boot id, the tools' paths
 * and each tool file's size, mtime and inode), so that `attach` can check a
 * probe the controller kept without a shell (agent-attach.c). The lookups
 * follow the script's: `command -v` on PATH (an absolute hit only), then
 * CUDA_HOME/bin, /usr/local/cuda/bin, the newest /usr/local/cuda-* /bin and
 * /opt/nvidia/nsight-compute/VERSION (newest first, as `sort -V -r`). A
 * text that differs from the script's is never a wrong run: the controller
 * answers "probe stale" by probing again (tests/t2290 compares the two). */
#include "agent.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* `[ -x PATH ]` */
static int is_x(const char *p)
{
	return access(p, X_OK) == 0;
}

/* `command -v NAME` when it prints an absolute path: a regular executable
 * file in a PATH directory, the first; NULL for none or a relative hit */
static char *on_path(const char *name)
{
	const char *path = getenv("PATH"), *s, *e;

	if (!path)
		return NULL;
	for (s = path;; s = e + 1) {
		struct stat st;
		char *f;
		e = strchr(s, ':');
		if (!e)
			e = s + strlen(s);
		f = e == s ? xfmt("./%s", name) : xfmt("%.*s/%s", (int)(e - s), s, name);
		if (stat(f, &st) == 0 && S_ISREG(st.st_mode) && is_x(f)) {
			if (f[0] == '/')
				return f;
			free(f);
			return NULL;
		}
		free(f);
		if (!*e)
			return NULL;
	}
}

static int newest_first(const void *a, const void *b)
{
	return strverscmp(*(char *const *)b, *(char *const *)a);
}

/* the versioned directories, newest first (probe-sig.sh's $_fdirs) */
static void versioned(glob_t *g, int *done)
{
	if (*done)
		return;
	*done = 1;
	memset(g, 0, sizeof(*g));
	glob("/usr/local/cuda-*/bin", 0, NULL, g);
	glob("/opt/nvidia/nsight-compute/*/", GLOB_APPEND, NULL, g);
	if (g->gl_pathc > 1)
		qsort(g->gl_pathv, g->gl_pathc, sizeof(char *), newest_first);
}

/* probe-sig.sh's find_tool: the tool's path, or NULL */
static char *find_tool(const char *name, const char *cuda_home, glob_t *g, int *globbed)
{
	char *f = on_path(name);
	size_t i;

	if (f)
		return f;
	if (cuda_home[0]) {
		f = xfmt("%s/bin/%s", cuda_home, name);
		if (is_x(f))
			return f;
		free(f);
	}
	f = xfmt("/usr/local/cuda/bin/%s", name);
	if (is_x(f))
		return f;
	free(f);
	versioned(g, globbed);
	for (i = 0; i < g->gl_pathc; i++) {
		size_t n = strlen(g->gl_pathv[i]);
		if (n && g->gl_pathv[i][n - 1] == '/')
			n--;
		f = xfmt("%.*s/%s", (int)n, g->gl_pathv[i], name);
		if (is_x(f))
			return f;
		free(f);
	}
	return NULL;
}

/* `stat -L --printf '%n %s %Y %i|' PATH` */
static void add_stat(struct sb *out, const char *p)
{
	struct stat st;
	if (stat(p, &st) == 0)
		sb_addf(out, "%s %lld %lld %llu|", p, (long long)st.st_size, (long long)st.st_mtime,
			(unsigned long long)st.st_ino);
}

void host_sig(struct sb *out, const char *cuda_home, const char *python, int gpu)
{
	static const char *const smis[] = { "/usr/bin/nvidia-smi", "/usr/local/nvidia/bin/nvidia-smi" };
	char *tool[5] = { NULL }, boot[128];
	glob_t g;
	int globbed = 0, i;

	tool[0] = on_path("nvidia-smi");
	for (i = 0; i < 2 && !tool[0]; i++)
		if (is_x(smis[i]))
			tool[0] = xstrdup(smis[i]);
	tool[1] = find_tool("nvcc", cuda_home, &g, &globbed);
	tool[2] = find_tool("ncu", cuda_home, &g, &globbed);
	tool[3] = find_tool("compute-sanitizer", cuda_home, &g, &globbed);
	tool[4] = python[0] ? (python[0] == '/' ? xstrdup(python) : NULL) : on_path("python3");
	if (globbed)
		globfree(&g);
	if (first_line("/proc/sys/kernel/random/boot_id", boot, sizeof(boot)) != 0 || !boot[0]) {
		for (i = 0; i < 5; i++)
			free(tool[i]);
		return;   /* no boot id: no signature (the script's empty $sig) */
	}
	sb_addf(out, "probe-v2|%s|%d|%s|%s|", boot, gpu, cuda_home, python);
	for (i = 0; i < 5; i++) {
		if (tool[i])
			add_stat(out, tool[i]);
		free(tool[i]);
	}
}

/* `sig cuda_home=DIR python=PATH gpu=N`: the signature on stdout (tests
 * compare it with probe-sig.sh's) */
int cmd_sig(int argc, char **argv)
{
	const char *cuda_home = "", *python = "";
	struct sb out = { 0 };
	int i, gpu = 0;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "cuda_home=", 10))
			cuda_home = argv[i] + 10;
		else if (!strncmp(argv[i], "python=", 7))
			python = argv[i] + 7;
		else if (!strncmp(argv[i], "gpu=", 4))
			gpu = atoi(argv[i] + 4);
		else
			die("usage: gpuorch-agent sig [cuda_home=DIR] [python=PATH] [gpu=N]");
	}
	host_sig(&out, cuda_home, python, gpu);
	printf("%s\n", out.buf ? out.buf : "");
	sb_free(&out);
	return 0;
}
