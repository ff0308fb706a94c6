/* slurm-v0038.c -- the shapes of slurmrestd's API v0.0.38 (Slurm 22.05): submit body, job, node,
 * partition.
 *
 * v0.0.38 takes "environment" as an object {"K": "V"} and the time limit in
 * minutes; a job's exit_code is the raw wait status; times are epoch
 * seconds. v0.0.39 reads alike but sends like v0.0.41 (slurm-v0039.c);
 * v0.0.40 to v0.0.44 differ (environment as an array, exit_code as an
 * object, ...): slurm-v0041.c. */
#include "sched/slurm-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/jsonutil.h"
#include "core/banned.h"

cJSON *slurm_v0038_submit_body(const struct host_slurm *s, const struct slurm_job_req *r)
{
	cJSON *root = cJSON_CreateObject(), *job, *env;
	const char *const *e;

	json_add_str(root, "script", r->script);
	job = json_add_obj(root, "job");
	slurm_job_fields(job, s, r);
	json_add_num(job, "time_limit", r->time_limit_min > 0 ? r->time_limit_min : s->time_limit_min);
	if (r->gpu && r->ngpus > 1) {
		char *g = xstrfmt("gpu:%d", r->ngpus);   /* per node, and the job has one */
		json_add_str(job, "gres", g);
		free(g);
	} else {
		if (r->gpu && s->gpus)
			json_add_str(job, "gpus", s->gpus);
		if (r->gpu && s->gres)
			json_add_str(job, "gres", s->gres);
	}
	/* no "requeue": slurmrestd 22.05 sets Requeue=1 for any value it is
	 * given, false and 0 included (seen: JobRequeue=0 in slurm.conf, a job
	 * sent "requeue": false showed Requeue=1 and came back PENDING after a
	 * node failure); left out, the job has the cluster's JobRequeue */
	env = json_add_obj(job, "environment");
	/* slurmrestd needs at least one variable; jobs get no login environment */
	json_add_str(env, "PATH", "/usr/local/bin:/usr/bin:/bin");
	for (e = r->env; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		char *k;
		if (!eq)
			continue;
		k = xstrfmt("%.*s", (int)(eq - *e), *e);
		cJSON_DeleteItemFromObjectCaseSensitive(env, k);
		json_add_str(env, k, eq + 1);
		free(k);
	}
	return root;
}

void slurm_v0038_job(const cJSON *job, struct slurm_job *j)
{
	slurm_job_common(job, j);
	slurm_copy(j->state, sizeof(j->state), json_str(job, "job_state"));
	j->submit_time = (int64_t)json_num(job, "submit_time", 0);
	j->start_time = (int64_t)json_num(job, "start_time", 0);
	j->end_time = (int64_t)json_num(job, "end_time", 0);
	slurm_wait_status((int)json_num(job, "exit_code", -1), j);
}

void slurm_v0038_node(const cJSON *node, const char *partition, struct slurm_node *n)
{
	const cJSON *parts = cJSON_GetObjectItemCaseSensitive(node, "partitions"), *it;
	const char *s;
	memset(n, 0, sizeof(*n));
	n->name = xstrdup((s = json_str(node, "name")) ? s : "?");
	n->state = xstrdup((s = json_str(node, "state")) ? s : "?");
	n->gres = xstrdup((s = json_str(node, "gres")) ? s : "");
	n->gres_used = xstrdup((s = json_str(node, "gres_used")) ? s : "");
	n->reason = xstrdup((s = json_str(node, "reason")) ? s : "");
	n->cpus = (int)json_num(node, "cpus", 0);
	n->alloc_cpus = (int)json_num(node, "alloc_cpus", 0);
	n->gpus_total = slurm_gres_gpus(n->gres);
	n->gpus_used = slurm_gres_gpus(n->gres_used);
	if (!cJSON_IsArray(parts))
		parts = NULL;
	cJSON_ArrayForEach(it, parts)
		if (cJSON_IsString(it) && partition && !strcmp(it->valuestring, partition))
			n->in_partition = 1;
}

void slurm_v0038_partition(const cJSON *part, const char *name, struct slurm_partition *p)
{
	const char *s;
	memset(p, 0, sizeof(*p));
	p->name = xstrdup((s = json_str(part, "name")) ? s : name);
	p->nodes = xstrdup((s = json_str(part, "nodes")) ? s : "");
	p->state = xstrdup((s = json_str(part, "state")) ? s : "");
	p->total_nodes = (int)json_num(part, "total_nodes", 0);
	p->total_cpus = (int)json_num(part, "total_cpus", 0);
}
