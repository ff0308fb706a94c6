/* gpuslots.c -- a host's GPU slots and the slots each step takes
 * (gpuslots.h). */
#include "remote/gpuslots.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "core/jsonutil.h"
#include "core/strbuf.h"
#include "core/banned.h"

static const struct gpu_slot *probed(const struct host_info *hi, int index)
{
	int i;
	for (i = 0; i < hi->nslots; i++)
		if (hi->slots[i].index == index)
			return &hi->slots[i];
	return NULL;
}

static void add(struct gpuslots *g, int index, const char *uuid)
{
	g->index[g->n] = index;
	g->uuid[g->n] = uuid && *uuid ? xstrdup(uuid) : NULL;
	g->n++;
}

static void listed(struct strbuf *sb, const struct host_info *hi)
{
	int i;
	for (i = 0; i < hi->nslots; i++)
		strbuf_addf(sb, "%s%d", i ? ", " : "", hi->slots[i].index);
}

enum go_status gpuslots_init(struct gpuslots *g, const struct host *h,
			     const struct host_info *hi, struct strbuf *err)
{
	int i;

	memset(g, 0, sizeof(*g));
	for (i = 0; i < h->ngpus; i++) {
		const struct gpu_slot *s = probed(hi, h->gpus[i]);
		if (!s && hi->nslots) {
			struct strbuf have = STRBUF_INIT;
			enum go_status st;
			listed(&have, hi);
			st = go_fail(err, GO_ERR_HOSTS,
				     "host '%s': \"gpus\" lists GPU %d, and the host has GPUs %s "
				     "(nvidia-smi's numbering); fix the host entry's \"gpus\"",
				     h->name, h->gpus[i], have.buf);
			strbuf_release(&have);
			gpuslots_release(g);
			return st;
		}
		add(g, h->gpus[i], s ? s->uuid
			: h->gpus[i] == h->gpu_index ? hi->gpu_uuid : NULL);
	}
	for (i = 0; !h->ngpus && i < hi->nslots && i < HOST_MAX_GPUS; i++)
		add(g, hi->slots[i].index, hi->slots[i].uuid);
	if (!g->n)
		add(g, h->gpu_index, hi->gpu_uuid);
	return GO_OK;
}

void gpuslots_release(struct gpuslots *g)
{
	int i;
	for (i = 0; i < g->n; i++)
		free(g->uuid[i]);
	memset(g, 0, sizeof(*g));
}

int gpuslots_take(struct gpuslots *g, int need)
{
	int first;
	if (need < 1 || need > g->n)
		return -1;
	if (g->next + need > g->n)
		g->next = 0;
	first = g->next;
	g->next = (first + need) % g->n;
	return first;
}

char *gpuslots_locks(const struct gpuslots *g, int first, int need)
{
	struct strbuf sb = STRBUF_INIT;
	int i;
	const char *u;
	for (i = first; i < first + need; i++) {
		strbuf_addstr(&sb, i > first ? ":/tmp/gpuorch-gpu" : "/tmp/gpuorch-gpu");
		if (!g->uuid[i]) {
			strbuf_addf(&sb, "%d.lock", g->index[i]);
			continue;
		}
		/* by UUID: one physical GPU, one lock, whatever numbers it (two
		 * machines' GPU 0 on one /tmp, CUDA_VISIBLE_DEVICES set around
		 * sshd); only the UUID's file-name-safe characters */
		strbuf_addch(&sb, '-');
		for (u = g->uuid[i]; *u; u++)
			strbuf_addch(&sb, isalnum((unsigned char)*u) || *u == '-' ? *u : '_');
		strbuf_addstr(&sb, ".lock");
	}
	return strbuf_detach(&sb, NULL);
}

char *gpuslots_command(const struct gpuslots *g, int first, int need, const char *command)
{
	struct strbuf v = STRBUF_INIT, sb = STRBUF_INIT;
	int i, uuids = 1;

	for (i = first; i < first + need; i++)
		uuids = uuids && g->uuid[i];
	for (i = first; i < first + need; i++) {
		if (i > first)
			strbuf_addch(&v, ',');
		if (uuids)
			strbuf_addstr(&v, g->uuid[i]);
		else
			strbuf_addf(&v, "%d", g->index[i]);
	}
	strbuf_addstr(&sb, "CUDA_VISIBLE_DEVICES=");
	strbuf_add_shell_quoted(&sb, v.buf);
	strbuf_addstr(&sb, "; export CUDA_VISIBLE_DEVICES; ");
	strbuf_addstr(&sb, command);
	strbuf_release(&v);
	return strbuf_detach(&sb, NULL);
}

cJSON *gpuslots_json(const struct gpuslots *g, int first, int need)
{
	cJSON *a = cJSON_CreateArray();
	int i;
	for (i = first; i < first + need; i++) {
		cJSON *o = cJSON_CreateObject();
		json_add_num(o, "index", g->index[i]);
		json_add_str(o, "uuid", g->uuid[i]);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

enum go_status gpuslots_check_spec(const struct spec *s, const struct hosts *hs,
				   struct strbuf *err)
{
	int i, j, most = 0, known = 1;
	const struct host *big = NULL;

	for (j = 0; j < hs->n; j++) {
		if (!hs->v[j].ngpus || hs->v[j].slurm)
			known = 0;   /* asked at the run, or of Slurm per job */
		if (hs->v[j].ngpus > most)
			most = hs->v[j].ngpus, big = &hs->v[j];
	}
	for (i = 0; i < s->nsteps; i++) {
		const struct spec_step *st = &s->steps[i];
		if (st->gpus <= 1)
			continue;
		/* a Slurm cluster's step job asks Slurm for N GPUs of one node */
		if (known && st->gpus > most)
			return go_fail(err, GO_ERR_SPEC,
				       "steps[%d] (%s of '%s') asks for \"gpus\": %d, more than any host of "
				       "%s runs steps on (at most %d: host '%s'); lower \"gpus\" or list "
				       "more GPUs in a host's \"gpus\"", i, step_kind_name(st->kind),
				       st->program, st->gpus, hs->path ? hs->path : "the inventory",
				       most, big ? big->name : "?");
	}
	return GO_OK;
}
