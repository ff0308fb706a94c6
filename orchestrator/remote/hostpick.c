/* hostpick.c -- probe an inventory in parallel and choose a host by GPU model (see hostpick.h).
 *
 * "Closest" when no host has the wanted GPU: a GPU of the same compute
 * capability, else the GPU whose compute capability is numerically
 * nearest, else any usable host. It is only named, never used. */
#include "remote/hostpick.h"
#include "remote/probe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "core/banned.h"

static const char *gpu_of(const struct host_probe *t)
{
	if (t->st != GO_OK)
		return NULL;
	if (t->h->gpu)
		return t->h->gpu;
	return t->info.has_gpu ? t->info.gpu_name : NULL;
}

static double cc_value(const char *cc)
{
	return cc && *cc ? strtod(cc, NULL) : NAN;
}

enum go_status hostpick_by_gpu(const struct hosts *hs, const char *want_gpu, const char *want_cc,
			       int accept_new_hostkey, struct hostpick *out, struct strbuf *err)
{
	struct host_probe *t;
	double want = cc_value(want_cc), best_d = INFINITY;
	int i;

	memset(out, 0, sizeof(*out));
	out->chosen = out->closest = -1;
	strbuf_init(&out->why, 0);
	strbuf_init(&out->table, 0);
	if (!hs || hs->n < 1)
		return go_fail(err, GO_ERR_HOSTS, "the hosts inventory lists no host");
	t = probe_inventory(hs, accept_new_hostkey, 0);
	for (i = 0; i < hs->n; i++) {
		const char *gpu = gpu_of(&t[i]);
		if (t[i].st != GO_OK) {
			strbuf_addf(&out->table, "  %s: not usable: %s\n", t[i].h->name, t[i].err.buf);
			continue;
		}
		strbuf_addf(&out->table, "  %s: %s%s%s\n", t[i].h->name, gpu ? gpu : "no GPU",
			    t[i].info.compute_cap ? ", cc " : "",
			    t[i].info.compute_cap ? t[i].info.compute_cap : "");
		if (out->chosen < 0 && ((!want_gpu && !gpu) ||
					(want_gpu && gpu && !strcasecmp(want_gpu, gpu)))) {
			out->chosen = i;
			out->chosen_gpu = gpu ? xstrdup(gpu) : NULL;
		}
	}
	if (out->chosen < 0) {
		for (i = 0; i < hs->n; i++) {
			const char *gpu = gpu_of(&t[i]);
			double d;
			if (t[i].st != GO_OK)
				continue;
			if (want_gpu && gpu) {
				d = fabs(cc_value(t[i].info.compute_cap) - want);
				if (isnan(d))
					d = 1000;
			} else {
				d = 10000 + (gpu ? 1 : 0);   /* GPU vs no GPU: far */
			}
			if (d < best_d) {
				best_d = d;
				out->closest = i;
			}
		}
		if (out->closest >= 0) {
			const char *gpu = gpu_of(&t[out->closest]);
			out->chosen_gpu = gpu ? xstrdup(gpu) : NULL;
			if (best_d == 0)
				strbuf_addf(&out->why, "same compute capability %s", want_cc);
			else if (best_d < 1000)
				strbuf_addf(&out->why, "nearest compute capability (%s vs %s)",
					    t[out->closest].info.compute_cap, want_cc);
			else
				strbuf_addstr(&out->why, "the only kind of host available");
		}
	}
	probe_inventory_release(t, hs->n);
	return GO_OK;
}

void hostpick_release(struct hostpick *p)
{
	free(p->chosen_gpu);
	strbuf_release(&p->why);
	strbuf_release(&p->table);
	p->chosen_gpu = NULL;
}
