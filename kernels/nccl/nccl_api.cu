/* nccl_api.cu -- finds and loads libnccl.so.2 and libnvidia-ml.so.1 at run time (nccl_api.h). */
#include "nccl_api.h"

#include <dlfcn.h>
#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NCCL_SONAME "libnccl.so.2"
#define WHEEL_DIR "nvidia/nccl/lib/" NCCL_SONAME

static void addf(char *why, size_t len, const char *fmt, ...)
{
	size_t n = strlen(why);
	va_list ap;
	if (n + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(why + n, len - n, fmt, ap);
	va_end(ap);
}

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* dlopen path and resolve every symbol; 0 on success */
static int try_path(struct nccl_api *api, const char *path, char *why, size_t whylen)
{
	void *h;
	struct stat st;
	if (path[0] == '/' && stat(path, &st) != 0)
		return -1;   /* not there: said once in the summary, not per path */
	h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		addf(why, whylen, "; %s: %s", path, dlerror());
		return -1;
	}
#define SYM(field, name)                                                    \
	do {                                                                \
		*(void **)&api->field = dlsym(h, name);                     \
		if (!api->field) {                                          \
			addf(why, whylen, "; %s lacks %s", path, name);      \
			dlclose(h);                                         \
			return -1;                                          \
		}                                                           \
	} while (0)
	SYM(GetVersion, "ncclGetVersion");
	SYM(CommInitAll, "ncclCommInitAll");
	SYM(CommDestroy, "ncclCommDestroy");
	SYM(GroupStart, "ncclGroupStart");
	SYM(GroupEnd, "ncclGroupEnd");
	SYM(AllReduce, "ncclAllReduce");
	SYM(GetErrorString, "ncclGetErrorString");
#undef SYM
	snprintf(api->path, sizeof api->path, "%s", path);
	if (api->GetVersion(&api->version) != ncclSuccess)
		api->version = 0;
	return 0;
}

/* each directory of a ':' list, with the library's name appended */
static int try_dirs(struct nccl_api *api, const char *list, char *why, size_t whylen)
{
	char dir[1024], path[1100];
	const char *p = list;
	while (p && *p) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n > 0 && n < sizeof dir) {
			memcpy(dir, p, n);
			dir[n] = 0;
			snprintf(path, sizeof path, "%s/%s", dir, NCCL_SONAME);
			if (try_path(api, path, why, whylen) == 0)
				return 0;
		}
		p = e ? e + 1 : NULL;
	}
	return -1;
}

static int try_glob(struct nccl_api *api, const char *pattern, char *why, size_t whylen)
{
	glob_t g;
	size_t i;
	int rc = -1;
	if (glob(pattern, 0, NULL, &g) != 0)
		return -1;
	for (i = 0; i < g.gl_pathc && rc != 0; i++)
		rc = try_path(api, g.gl_pathv[i], why, whylen);
	globfree(&g);
	return rc;
}

/* the nvidia-nccl wheel under the site-packages of every prefix a python
 * may live in: the usual ones, the environment's venv/conda, and the
 * parent of each bin/ directory on PATH */
static int try_wheels(struct nccl_api *api, char *why, size_t whylen)
{
	const char *fixed[] = { "/usr", "/usr/local", "/opt/conda", "/opt/*", "/opt/*/.venv",
				getenv("VIRTUAL_ENV"), getenv("CONDA_PREFIX") };
	const char *home = getenv("HOME"), *path = getenv("PATH");
	char pat[1400];
	size_t i;
	for (i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
		if (!fixed[i] || !*fixed[i])
			continue;
		snprintf(pat, sizeof pat, "%s/lib/python3*/*-packages/" WHEEL_DIR, fixed[i]);
		if (try_glob(api, pat, why, whylen) == 0)
			return 0;
	}
	if (home && *home) {
		snprintf(pat, sizeof pat, "%s/.local/lib/python3*/site-packages/" WHEEL_DIR, home);
		if (try_glob(api, pat, why, whylen) == 0)
			return 0;
	}
	while (path && *path) {
		const char *e = strchr(path, ':');
		size_t n = e ? (size_t)(e - path) : strlen(path);
		if (n > 4 && n < 1024 && !strncmp(path + n - 4, "/bin", 4)) {
			snprintf(pat, sizeof pat, "%.*s/lib/python3*/*-packages/" WHEEL_DIR, (int)(n - 4), path);
			if (try_glob(api, pat, why, whylen) == 0)
				return 0;
		}
		path = e ? e + 1 : NULL;
	}
	return -1;
}

/* a file, or a directory holding the library */
static int try_named(struct nccl_api *api, const char *p, char *why, size_t whylen)
{
	char path[1100];
	if (!p || !*p)
		return -1;
	if (is_dir(p))
		snprintf(path, sizeof path, "%s/%s", p, NCCL_SONAME);
	else
		snprintf(path, sizeof path, "%s", p);
	if (try_path(api, path, why, whylen) == 0)
		return 0;
	if (path[0] == '/' && access(path, F_OK) != 0)
		addf(why, whylen, "; %s: no such file", path);
	return -1;
}

int nccl_load(struct nccl_api *api, const char *named, char *why, size_t whylen)
{
	const char *env = getenv("GPUORCH_NCCL_LIB");
	memset(api, 0, sizeof *api);
	why[0] = 0;
	if (try_dirs(api, getenv("LD_LIBRARY_PATH"), why, whylen) == 0)
		return 0;
	if (try_named(api, named, why, whylen) == 0 || try_named(api, env, why, whylen) == 0)
		return 0;
	if (try_wheels(api, why, whylen) == 0)
		return 0;
	if (try_path(api, NCCL_SONAME, why, whylen) == 0)
		return 0;
	{
		char tried[2048];
		snprintf(tried, sizeof tried, "%s", why);
		snprintf(why, whylen,
			 "no NCCL: " NCCL_SONAME " is not in LD_LIBRARY_PATH, --nccl_lib (%s), GPUORCH_NCCL_LIB "
			 "(%s), a python site-packages/" WHEEL_DIR " (pip install nvidia-nccl-cu12, or torch) "
			 "nor the loader's path%s",
			 named && *named ? named : "not given", env && *env ? env : "unset", tried);
	}
	return -1;
}

/* ---- NVML: the interconnect ---- */
typedef int (*nvml_fn0)(void);
typedef int (*nvml_bus)(const char *, void **);
typedef int (*nvml_link_state)(void *, unsigned int, int *);
typedef int (*nvml_uint)(void *, unsigned int *);

int link_read(const int *devs, int n, struct link_gpu *out, char *why, size_t whylen)
{
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
	nvml_fn0 init, shut;
	nvml_bus bus;
	nvml_link_state state;
	nvml_uint gen, width;
	int i, rc = 0;

	why[0] = 0;
	for (i = 0; i < n; i++) {
		out[i].nvlinks_active = -1;
		out[i].pcie_gen = out[i].pcie_width = 0;
		if (cudaDeviceGetPCIBusId(out[i].bus_id, sizeof out[i].bus_id, devs[i]) != cudaSuccess) {
			cudaGetLastError();
			out[i].bus_id[0] = 0;
		}
	}
	if (!h) {
		snprintf(why, whylen, "dlopen libnvidia-ml.so.1 failed: %s", dlerror());
		return -1;
	}
	init = (nvml_fn0)dlsym(h, "nvmlInit_v2");
	shut = (nvml_fn0)dlsym(h, "nvmlShutdown");
	bus = (nvml_bus)dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2");
	state = (nvml_link_state)dlsym(h, "nvmlDeviceGetNvLinkState");
	gen = (nvml_uint)dlsym(h, "nvmlDeviceGetMaxPcieLinkGeneration");
	width = (nvml_uint)dlsym(h, "nvmlDeviceGetMaxPcieLinkWidth");
	if (!init || !bus || !state || !gen || !width || init() != 0) {
		snprintf(why, whylen, "libnvidia-ml.so.1: nvmlInit_v2 failed or a symbol is missing");
		return -1;
	}
	for (i = 0; i < n; i++) {
		void *d;
		unsigned int l, v;
		int active;
		if (!out[i].bus_id[0] || bus(out[i].bus_id, &d) != 0) {
			addf(why, whylen, "%snvmlDeviceGetHandleByPciBusId(%s) failed", *why ? "; " : "", out[i].bus_id);
			rc = -1;
			continue;
		}
		out[i].nvlinks_active = 0;
		/* NVML_NVLINK_MAX_LINKS is 18; a link the GPU lacks answers an error */
		for (l = 0; l < 18; l++)
			if (state(d, l, &active) == 0 && active)
				out[i].nvlinks_active++;
		if (gen(d, &v) == 0)
			out[i].pcie_gen = (int)v;
		if (width(d, &v) == 0)
			out[i].pcie_width = (int)v;
	}
	if (shut)
		shut();
	return rc;
}
