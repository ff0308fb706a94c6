/* hostpick.h -- choose the host of an inventory that has a given GPU model.
 *
 * Used by `gpuorch reproduce` and `gpuorch find`: a figure can only be
 * compared with one measured on the same GPU model. Every host is probed
 * in parallel (connect + probe, like `hosts check`); the first host, in
 * inventory order, whose GPU name equals the wanted one (case-insensitive;
 * a host's "gpu" override counts) is chosen. A wanted NULL GPU means a host
 * without a GPU (compile-only builds, CPU programs). */
#ifndef GPUORCH_HOSTPICK_H
#define GPUORCH_HOSTPICK_H

#include "core/error.h"
#include "transport/hosts.h"

struct hostpick {
	int chosen;            /* index into the inventory, -1 when no host matches */
	int closest;           /* when none matches: the nearest usable host, or -1 */
	char *chosen_gpu;      /* what the chosen (or closest) host has, NULL: no GPU */
	struct strbuf why;     /* why the closest is closest */
	struct strbuf table;   /* one line per host: name, GPU or why it could not be used */
};

/* want_gpu: info.gpu_name of the recorded host (NULL: no GPU); want_cc its
 * compute capability ("9.0", may be NULL). Returns GO_OK whether or not a
 * host matched (see chosen); errors only for the inventory itself. */
enum go_status hostpick_by_gpu(const struct hosts *hs, const char *want_gpu, const char *want_cc,
			       int accept_new_hostkey, struct hostpick *out, struct strbuf *err);
void hostpick_release(struct hostpick *p);

#endif
