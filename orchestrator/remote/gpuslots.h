/* gpuslots.h -- a host's GPU slots: which of its GPUs the steps run on (the
 * host entry's "gpus", else every GPU the probe lists) and which slots each
 * step takes (round robin in plan order; a step of "gpus": N takes N
 * neighbouring slots), each slot with its own lock (by the GPU's UUID), and what a step is told
 * (CUDA_VISIBLE_DEVICES) and recorded ("gpus") about them (docs/runner.md,
 * "GPU slots"). */
#ifndef GPUORCH_GPUSLOTS_H
#define GPUORCH_GPUSLOTS_H

#include <cjson/cJSON.h>
#include "core/error.h"
#include "remote/probe.h"
#include "spec/spec.h"
#include "transport/hosts.h"

struct gpuslots {
	int n;
	int index[HOST_MAX_GPUS];    /* nvidia-smi's index, ascending */
	char *uuid[HOST_MAX_GPUS];   /* NULL: not known */
	int next;                    /* where the next step's slots begin */
};

/* The slots of host h as probed (hi): its "gpus" (each one the probe must
 * list, when it lists any), else every GPU the probe lists, else the one
 * GPU the probe describes. An error names a listed GPU the host lacks. */
enum go_status gpuslots_init(struct gpuslots *g, const struct host *h,
			     const struct host_info *hi, struct strbuf *err);
void gpuslots_release(struct gpuslots *g);
/* The first of the NEED neighbouring slots the next step takes; -1 when
 * the host has fewer than NEED. */
int gpuslots_take(struct gpuslots *g, int need);
/* The locks of slots [first, first + need), ':'-joined in ascending GPU
 * order (every step takes them in that order: no two steps deadlock):
 * /tmp/gpuorch-gpu-<UUID>.lock, or /tmp/gpuorch-gpu<index>.lock where the
 * UUID is not known. */
char *gpuslots_locks(const struct gpuslots *g, int first, int need);
/* COMMAND run with CUDA_VISIBLE_DEVICES naming those slots' GPUs (by UUID
 * where known: CUDA's own order need not be nvidia-smi's). */
char *gpuslots_command(const struct gpuslots *g, int first, int need, const char *command);
/* The record's "gpus" of a step: [{"index": I, "uuid": U}, ...]. */
cJSON *gpuslots_json(const struct gpuslots *g, int first, int need);

/* The spec's steps of "gpus": N against the inventory, before any host is
 * reached: an error (GO_ERR_SPEC) names a step that asks for more GPUs than
 * every host can give (the GPUs its "gpus" or "gpu_index" lists; a host
 * that lists none may have any number: it is asked at the run; a Slurm
 * cluster is asked for N GPUs of one node per step job). */
enum go_status gpuslots_check_spec(const struct spec *s, const struct hosts *hs,
				   struct strbuf *err);

#endif
