/* slurm-api.c -- the Slurm REST API versions gpuorch speaks, each with its adapter (the shapes of
 * its requests and replies), and the choice among those a daemon serves. */
#include "sched/slurm-int.h"

#include <stdio.h>
#include <string.h>
#include "core/banned.h"

/* Newest first; the table ends with a NULL version. */
static const struct slurm_adapter adapters[] = {
	{ "v0.0.44", slurm_v0041_submit_body, slurm_v0041_job, slurm_v0041_node, slurm_v0041_partition },
	{ "v0.0.43", slurm_v0041_submit_body, slurm_v0041_job, slurm_v0041_node, slurm_v0041_partition },
	{ "v0.0.42", slurm_v0041_submit_body, slurm_v0041_job, slurm_v0041_node, slurm_v0041_partition },
	{ "v0.0.41", slurm_v0041_submit_body, slurm_v0041_job, slurm_v0041_node, slurm_v0041_partition },
	{ "v0.0.40", slurm_v0041_submit_body, slurm_v0041_job, slurm_v0041_node, slurm_v0041_partition },
	{ "v0.0.39", slurm_v0041_submit_body, slurm_v0039_job, slurm_v0041_node, slurm_v0041_partition },
	{ "v0.0.38", slurm_v0038_submit_body, slurm_v0038_job, slurm_v0038_node, slurm_v0038_partition },
	{ NULL, NULL, NULL, NULL, NULL },
};

const struct slurm_adapter *slurm_adapters(void)
{
	return adapters;
}

const struct slurm_adapter *slurm_adapter_for(const char *version)
{
	const struct slurm_adapter *a;
	for (a = adapters; version && a->version; a++)
		if (!strcmp(a->version, version))
			return a;
	return NULL;
}

static int version_newer(const char *a, const char *b)
{
	int a1 = 0, a2 = 0, a3 = 0, b1 = 0, b2 = 0, b3 = 0;
	sscanf(a, "v%d.%d.%d", &a1, &a2, &a3);
	sscanf(b, "v%d.%d.%d", &b1, &b2, &b3);
	return a1 != b1 ? a1 > b1 : a2 != b2 ? a2 > b2 : a3 > b3;
}

const struct slurm_adapter *slurm_pick_adapter(const cJSON *doc, struct strbuf *offered)
{
	const cJSON *paths = cJSON_GetObjectItemCaseSensitive(doc, "paths"), *p;
	const struct slurm_adapter *best = NULL, *a;

	if (!cJSON_IsObject(paths))
		return NULL;
	cJSON_ArrayForEach(p, paths) {
		/* "/slurm/v0.0.38/job/submit" */
		char v[32];
		const char *s = p->string, *slash;
		if (!s || strncmp(s, "/slurm/v", 8) || !(slash = strchr(s + 7, '/')) ||
		    strcmp(slash, "/job/submit") || (size_t)(slash - (s + 7)) >= sizeof(v))
			continue;
		snprintf(v, sizeof(v), "%.*s", (int)(slash - (s + 7)), s + 7);
		strbuf_addf(offered, "%s%s", offered->len ? ", " : "", v);
		a = slurm_adapter_for(v);
		if (a && (!best || version_newer(a->version, best->version)))
			best = a;
	}
	return best;
}
