/* slurm-fields.c -- what every API version's adapter writes and reads alike: the job fields named
 * the same in v0.0.38 and v0.0.41+, and GRES strings (the GPUs a node's "gres" holds; the TRES
 * form "gres/gpu:h100:1" that v0.0.41+ takes instead of "gres" and "gpus"). */
#include "sched/slurm-int.h"

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
