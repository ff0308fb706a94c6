/* probecache.c -- the controller's copy of each host's last probe (probecache.h). */
#include "remote/probecache.h"
#include "core/fsutil.h"
#include "core/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/banned.h"

static char *cache_dir(void)
{
	const char *d = getenv("GPUORCH_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	if (d && *d)
		return xstrdup(d);
	if (x && *x)
		return xstrfmt("%s/gpuorch", x);
	if (home && *home)
		return xstrfmt("%s/.cache/gpuorch", home);
	return NULL;
}

/* Everything of the host's entry that changes what the probe sees. */
static char *cache_path(const struct host *h)
{
	struct strbuf key = STRBUF_INIT;
	char hex[SHA256_HEX_LEN + 1], *dir = cache_dir(), *path;
	if (!dir)
		return NULL;
	strbuf_addf(&key, "%s\n%s\n%d\n%s\n%s\n%s\n%s\n%d\n", h->name, h->address, h->port,
		    h->user ? h->user : "", h->cuda_home ? h->cuda_home : "",
		    h->python ? h->python : "", h->workdir ? h->workdir : "", h->gpu_index);
	sha256_hex(key.buf, key.len, hex);
	path = xstrfmt("%s/probe-%.32s.txt", dir, hex);
	strbuf_release(&key);
	free(dir);
	return path;
}

int probe_cache_load(const struct host *h, struct strbuf *out)
{
	struct strbuf err = STRBUF_INIT;
	char *path = cache_path(h);
	int ok = path && access(path, R_OK) == 0 && fs_read_file(path, out, &err) == GO_OK;
	free(path);
	strbuf_release(&err);
	return ok;
}

void probe_cache_save(const struct host *h, const char *text)
{
	struct strbuf err = STRBUF_INIT;
	char *path = cache_path(h), *dir = cache_dir();
	if (path && dir && fs_mkdir_p(dir, 0700, &err) == GO_OK)
		fs_write_atomic(path, text, strlen(text), &err);
	free(path);
	free(dir);
	strbuf_release(&err);
}

void probe_cache_drop(const struct host *h)
{
	char *path = cache_path(h);
	if (path)
		unlink(path);
	free(path);
}
