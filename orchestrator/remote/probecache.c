/* probecache.c -- the controller's files about each host: its last probe (probecache.h). */
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

/* Everything of the host's entry that changes what the probe sees (and
 * where its work directory is). */
char *host_cache_path(const struct host *h, const char *kind)
{
	struct strbuf key = STRBUF_INIT;
	char hex[SHA256_HEX_LEN + 1], *dir = cache_dir(), *path;
	if (!dir)
		return NULL;
	strbuf_addf(&key, "%s\n%s\n%d\n%s\n%s\n%s\n%s\n%d\n", h->name, h->address, h->port,
		    h->user ? h->user : "", h->cuda_home ? h->cuda_home : "",
		    h->python ? h->python : "", h->workdir ? h->workdir : "", h->gpu_index);
	sha256_hex(key.buf, key.len, hex);
	path = xstrfmt("%s/%s-%.32s.txt", dir, kind, hex);
	strbuf_release(&key);
	free(dir);
	return path;
}

int probe_cache_load(const struct host *h, struct strbuf *out)
{
	struct strbuf err = STRBUF_INIT;
	char *path = host_cache_path(h, "probe");
	int ok = path && access(path, R_OK) == 0 && fs_read_file(path, out, &err) == GO_OK;
	free(path);
	strbuf_release(&err);
	return ok;
}

void host_cache_write(const struct host *h, const char *kind, const char *text, size_t len)
{
	struct strbuf err = STRBUF_INIT;
	char *path = host_cache_path(h, kind), *dir = cache_dir();
	if (path && dir && fs_mkdir_p(dir, 0700, &err) == GO_OK)
		fs_write_atomic(path, text, len, &err);
	free(path);
	free(dir);
	strbuf_release(&err);
}

void probe_cache_save(const struct host *h, const char *text)
{
	host_cache_write(h, "probe", text, strlen(text));
}

void probe_cache_drop(const struct host *h)
{
	char *path = host_cache_path(h, "probe");
	if (path)
		unlink(path);
	free(path);
}
