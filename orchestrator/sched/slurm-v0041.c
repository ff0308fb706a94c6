/* slurm-v0041.c -- the shapes of slurmrestd's API v0.0.40 to v0.0.44 (Slurm 23.11 to 25.11, the
 * data_parser generation): submit body, job, node, partition; v0.0.39 (Slurm 23.02, 23.11) sends
 * the same submit body and reads the same nodes and partitions (its jobs: slurm-v0039.c).
 *
 * The five versions agree on every field gpuorch reads or sends (checked against their published
 * OpenAPI documents by tests/t4002-slurm-openapi.sh), and differ from v0.0.38 thus:
 *   - "environment" is an array of "K=V" strings; the time limit a {set, infinite, number} struct;
 *   - GPUs are asked for as TRES: "tres_per_job": "gres/gpu[:type]:N" (sbatch --gpus) and
 *     "tres_per_node": "gres/gpu[:type]:N" (--gres); there is no "gpus" or "gres" field;
 *   - a job's "job_state" is an array of flags (["PENDING"], ["COMPLETED"], ["FAILED", "REQUEUED"]);
 *     times are {set, infinite, number} structs; "exit_code" is an object:
 *     {"status": ["SIGNALED"], "return_code": {...}, "signal": {"id": {...}, "name": "KILL"}};
 *   - a node's "state" is an array, its "partitions" an array;
 *   - a partition's node list, totals and state are nested objects. */
#include "sched/slurm-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/jsonutil.h"
#include "core/banned.h"

cJSON *slurm_v0041_submit_body(const struct host_slurm *s, const struct slurm_job_req *r)
{
	cJSON *root = cJSON_CreateObject(), *job, *env;
	const char *const *e;

	job = json_add_obj(root, "job");
	json_add_str(job, "script", r->script);
	slurm_job_fields(job, s, r);
	slurm_add_no_val(job, "time_limit", r->time_limit_min > 0 ? r->time_limit_min : s->time_limit_min);
	if (r->gpu && r->ngpus > 1) {
		/* N GPUs of the job's one node: sbatch's --gpus-per-node=N */
		char *t = xstrfmt("gres/gpu:%d", r->ngpus);
		json_add_str(job, "tres_per_node", t);
		free(t);
	} else if (r->gpu && s->gpus) {
		/* "gpus" is sbatch's --gpus=[type:]N: one GRES, gpu */
		char *t = xstrfmt("gres/gpu:%s", s->gpus);
		json_add_str(job, "tres_per_job", t);
		free(t);
	}
	if (r->gpu && r->ngpus <= 1 && s->gres) {
		char *t = slurm_gres_as_tres(s->gres);
		json_add_str(job, "tres_per_node", t);
		free(t);
	}
	json_add_bool(job, "requeue", 0);
	env = json_add_arr(job, "environment");
	/* jobs get no login environment: PATH first, then the request's own (a later PATH wins) */
	cJSON_AddItemToArray(env, cJSON_CreateString("PATH=/usr/local/bin:/usr/bin:/bin"));
	for (e = r->env; e && *e; e++)
		if (strchr(*e, '='))
			cJSON_AddItemToArray(env, cJSON_CreateString(*e));
	return root;
}

/* The job's base state from the "job_state" flags: the first one Slurm lists that is a state
 * (flags such as REQUEUED, COMPLETING or CONFIGURING follow it). */
static void first_state(const cJSON *arr, char *dst, size_t n)
{
	const cJSON *it;
	dst[0] = '\0';
	if (cJSON_IsString(arr)) {
		slurm_copy(dst, n, arr->valuestring);
		return;
	}
	cJSON_ArrayForEach(it, (cJSON_IsArray(arr) ? arr : (const cJSON *)0))
		if (cJSON_IsString(it)) {
			slurm_copy(dst, n, it->valuestring);
			return;
		}
}

void slurm_v0041_job(const cJSON *job, struct slurm_job *j)
{
	const cJSON *ec = cJSON_GetObjectItemCaseSensitive(job, "exit_code"), *st, *sig, *it;
	int signaled = 0, unknown = 0;

	slurm_job_common(job, j);
	first_state(cJSON_GetObjectItemCaseSensitive(job, "job_state"), j->state, sizeof(j->state));
	j->submit_time = (int64_t)slurm_no_val(job, "submit_time", 0);
	j->start_time = (int64_t)slurm_no_val(job, "start_time", 0);
	j->end_time = (int64_t)slurm_no_val(job, "end_time", 0);
	/* exit_code: {"status": ["SUCCESS"|"ERROR"|"SIGNALED"|"CORE_DUMPED"|"PENDING"|"INVALID"],
	 * "return_code": no_val (the exit status), "signal": {"id": no_val, "name": "KILL"}} */
	st = cJSON_GetObjectItemCaseSensitive(ec, "status");
	cJSON_ArrayForEach(it, (cJSON_IsArray(st) ? st : (const cJSON *)0)) {
		if (!cJSON_IsString(it))
			continue;
		if (!strcmp(it->valuestring, "SIGNALED") || !strcmp(it->valuestring, "CORE_DUMPED"))
			signaled = 1;
		else if (!strcmp(it->valuestring, "PENDING") || !strcmp(it->valuestring, "INVALID"))
			unknown = 1;
	}
	sig = cJSON_GetObjectItemCaseSensitive(ec, "signal");
	if (signaled)
		j->term_signal = (int)slurm_no_val(sig, "id", 0);
	else if (!unknown && cJSON_IsObject(ec) && slurm_no_val(ec, "return_code", -1) >= 0)
		j->exit_status = (int)slurm_no_val(ec, "return_code", -1) & 0xff;
}

/* An array of strings (or a comma-separated string) as "a,b,c". */
static char *joined(const cJSON *v)
{
	struct strbuf sb = STRBUF_INIT;
	const cJSON *it;
	if (cJSON_IsString(v))
		return xstrdup(v->valuestring);
	cJSON_ArrayForEach(it, (cJSON_IsArray(v) ? v : (const cJSON *)0))
		if (cJSON_IsString(it))
			strbuf_addf(&sb, "%s%s", sb.len ? "," : "", it->valuestring);
	return strbuf_detach(&sb, NULL);
}

void slurm_v0041_node(const cJSON *node, const char *partition, struct slurm_node *n)
{
	const cJSON *parts = cJSON_GetObjectItemCaseSensitive(node, "partitions"), *it;
	const char *s;
	memset(n, 0, sizeof(*n));
	n->name = xstrdup((s = json_str(node, "name")) ? s : "?");
	n->state = joined(cJSON_GetObjectItemCaseSensitive(node, "state"));
	n->gres = xstrdup((s = json_str(node, "gres")) ? s : "");
	n->gres_used = xstrdup((s = json_str(node, "gres_used")) ? s : "");
	n->reason = xstrdup((s = json_str(node, "reason")) ? s : "");
	n->cpus = (int)json_num(node, "cpus", 0);
	n->alloc_cpus = (int)json_num(node, "alloc_cpus", 0);
	n->gpus_total = slurm_gres_gpus(n->gres);
	n->gpus_used = slurm_gres_gpus(n->gres_used);
	cJSON_ArrayForEach(it, (cJSON_IsArray(parts) ? parts : (const cJSON *)0))
		if (cJSON_IsString(it) && partition && !strcmp(it->valuestring, partition))
			n->in_partition = 1;
}

void slurm_v0041_partition(const cJSON *part, const char *name, struct slurm_partition *p)
{
	const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(part, "nodes");
	const cJSON *cpus = cJSON_GetObjectItemCaseSensitive(part, "cpus");
	const cJSON *pstate = json_path(part, "partition.state");
	const char *s;
	memset(p, 0, sizeof(*p));
	p->name = xstrdup((s = json_str(part, "name")) ? s : name);
	p->nodes = xstrdup((s = json_str(nodes, "configured")) ? s : "");
	p->state = joined(pstate);
	p->total_nodes = (int)json_num(nodes, "total", 0);
	p->total_cpus = (int)json_num(cpus, "total", 0);
}
