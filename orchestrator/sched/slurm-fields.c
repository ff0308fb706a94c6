/* slurm-fields.c -- what the API versions' adapters write and read alike: the job fields named
 * the same in every version (name, partition, ..., and on the way back id, reason, node,
 * dependency), the {set, infinite, number} structs of v0.0.39+, the raw wait status of v0.0.38 and
 * v0.0.39, and GRES strings (the GPUs a node's "gres" holds; the TRES form "gres/gpu:h100:1" that
 * v0.0.39+ takes instead of "gres" and "gpus"). */
#include "sched/slurm-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/jsonutil.h"
#include "core/banned.h"

void slurm_job_fields(cJSON *job, const struct host_slurm *s, const struct slurm_job_req *r)
{
	json_add_str(job, "name", r->name);
	json_add_str(job, "partition", s->partition);
	if (s->account)
		json_add_str(job, "account", s->account);
	if (s->qos)
		json_add_str(job, "qos", s->qos);
	if (s->constraint)
		json_add_str(job, "constraints", s->constraint);
	json_add_num(job, "cpus_per_task", s->cpus_per_job);
	json_add_num(job, "tasks", 1);
	json_add_num(job, "minimum_nodes", 1);
	json_add_str(job, "current_working_directory", r->cwd);
	if (r->std_out)
		json_add_str(job, "standard_output", r->std_out);
	if (r->std_err)
		json_add_str(job, "standard_error", r->std_err);
	if (r->dependency)
		json_add_str(job, "dependency", r->dependency);
}

void slurm_add_no_val(cJSON *parent, const char *key, double n)
{
	cJSON *o = json_add_obj(parent, key);
	json_add_bool(o, "set", 1);
	json_add_bool(o, "infinite", 0);
	json_add_num(o, "number", n);
}

double slurm_no_val(const cJSON *parent, const char *key, double fallback)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(parent, key), *set, *inf, *num;
	if (cJSON_IsNumber(o))
		return o->valuedouble;
	if (!cJSON_IsObject(o))
		return fallback;
	set = cJSON_GetObjectItemCaseSensitive(o, "set");
	inf = cJSON_GetObjectItemCaseSensitive(o, "infinite");
	num = cJSON_GetObjectItemCaseSensitive(o, "number");
	if (!cJSON_IsTrue(set) || cJSON_IsTrue(inf) || !cJSON_IsNumber(num))
		return fallback;
	return num->valuedouble;
}

void slurm_copy(char *dst, size_t n, const char *s)
{
	snprintf(dst, n, "%s", s ? s : "");
}

void slurm_job_common(const cJSON *job, struct slurm_job *j)
{
	memset(j, 0, sizeof(*j));
	j->found = 1;
	j->id = (long)json_num(job, "job_id", 0);
	slurm_copy(j->reason, sizeof(j->reason), json_str(job, "state_reason"));
	slurm_copy(j->node, sizeof(j->node), json_str(job, "batch_host"));
	if (!j->node[0])
		slurm_copy(j->node, sizeof(j->node), json_str(job, "nodes"));
	slurm_copy(j->dependency, sizeof(j->dependency), json_str(job, "dependency"));
	j->exit_status = -1;
}

void slurm_wait_status(int raw, struct slurm_job *j)
{
	/* low 7 bits a signal, else the exit status << 8 */
	j->exit_status = -1;
	j->term_signal = 0;
	if (raw < 0)
		return;
	if ((raw & 0x7f) == 0)
		j->exit_status = (raw >> 8) & 0xff;
	else
		j->term_signal = raw & 0x7f;
}

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
