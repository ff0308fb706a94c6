/* slurm-check.h -- `gpuorch hosts check` for a Slurm cluster entry (slurm-check.c). */
#ifndef GPUORCH_SLURM_CHECK_H
#define GPUORCH_SLURM_CHECK_H

#include <cjson/cJSON.h>
#include "sched/slurm.h"

struct slurm_check {
	const struct host *h;
	enum go_status st;
	struct strbuf err;
	double seconds;
	char *fingerprint;       /* the login node's host key */
	char *api_version, *release, *token_source;
	long token_ttl_s;        /* -1 unknown */
	long requests;
	struct slurm_partition part;
	struct slurm_node *nodes;
	int nnodes;
	int gpus_total, gpus_used, cpus_total, cpus_used;   /* nodes of the partition */
};

void slurm_check_run(const struct host *h, int accept_new, struct slurm_check *k);
void slurm_check_print(const struct slurm_check *k);
cJSON *slurm_check_json(const struct slurm_check *k);
void slurm_check_release(struct slurm_check *k);

#endif
