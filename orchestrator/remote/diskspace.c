/* diskspace.c -- a full disk on a host: the run's need, a failure it caused
 * (diskspace.h). */
#include "remote/diskspace.h"

#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

static const char *const full_msgs[] = { "No space left on device", "Disk quota exceeded" };

long long disk_need_kib(const struct plan *p, const struct pack *pk, long long *src,
			long long *builds, long long *outputs)
{
	long long s = 0, b = 0, o = 0;
	int i;

	for (i = 0; pk && i < pk->nfiles; i++)
		s += (long long)pk->files[i].size;
	s = 2 * ((s + 1023) / 1024);
	for (i = 0; p && i < p->nbuilds; i++)
		if (!p->builds[i].skip_reason)
			b += DISK_BUILD_KIB;
	for (i = 0; p && i < p->nsteps; i++)
		if (!p->steps[i].skip_reason)
			o += DISK_STEP_KIB;
	if (src)
		*src = s;
	if (builds)
		*builds = b;
	if (outputs)
		*outputs = o;
	return s + b + o;
}

static const char *full_at(const char *text)
{
	const char *e;
	size_t k;
	for (k = 0; text && k < sizeof(full_msgs) / sizeof(full_msgs[0]); k++)
		if ((e = strstr(text, full_msgs[k])))
			return e;
	return NULL;
}

int disk_full_in(const char *text)
{
	return full_at(text) != NULL;
}

int disk_full_reason(struct strbuf *reason, const char *errout, const char *out,
		     long long free_kib)
{
	const char *text = full_at(errout) ? errout : out;
	const char *e = full_at(text), *bol, *eol;
	size_t n;

	if (!e && free_kib >= 0 && free_kib < DISK_FULL_KIB) {
		char *was = strbuf_detach(reason, NULL);
		strbuf_addf(reason, "no space left on device on the host: %lld KiB free in its file "
			    "system when it ended%s%s%s", free_kib, *was ? " (" : "", was,
			    *was ? ")" : "");
		free(was);
		return 1;
	}
	if (!e)
		return 0;
	bol = e;
	while (bol > text && bol[-1] != '\n')
		bol--;
	eol = strchr(e, '\n');
	n = (size_t)((eol ? eol : e + strlen(e)) - bol);
	strbuf_reset(reason);
	strbuf_addf(reason, "no space left on device on the host: %.*s", (int)(n > 300 ? 300 : n),
		    bol);
	return 1;
}
