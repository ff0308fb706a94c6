/* slurm-gres.c -- GRES strings as Slurm writes them: the GPUs a node's "gres" holds, and the
 * TRES form ("gres/gpu:h100:1") that API v0.0.41+ takes instead of "gres" and "gpus". */
#include "sched/slurm-int.h"

#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

/* "gpu:h100:4(S:0-1)" or "gpu:2" or "gpu:h100:4(IDX:0-3),shard:8": the GPU count */
int slurm_gres_gpus(const char *g)
{
	int total = 0;
	const char *p = g;
	while (p && *p) {
		const char *end = p + strcspn(p, ",");
		if (!strncmp(p, "gpu", 3) && (p[3] == ':' || p[3] == '\0' || p[3] == ',')) {
			const char *q = p, *last = NULL;
			while (q < end && *q != '(') {
				if (*q == ':')
					last = q;
				q++;
			}
			if (last && last + 1 < end)
				total += atoi(last + 1);
		}
		p = *end ? end + 1 : end;
	}
	return total;
}

/* "gpu:h100:1,shard:2" -> "gres/gpu:h100:1,gres/shard:2" (entries already "gres/..." kept) */
char *slurm_gres_as_tres(const char *gres)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p = gres;
	while (*p) {
		size_t n = strcspn(p, ",");
		if (n)
			strbuf_addf(&sb, "%s%s%.*s", sb.len ? "," : "", strncmp(p, "gres/", 5) ? "gres/" : "",
				    (int)n, p);
		p += n;
		if (*p == ',')
			p++;
	}
	return strbuf_detach(&sb, NULL);
}
