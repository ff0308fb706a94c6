/* slurmshape.c -- the Slurm adapters' request and reply shapes, for tests/t4002 to check against
 * the published OpenAPI documents (no slurmrestd needed):
 *
 *   slurmshape submit VERSION            the submit body of a GPU job (gpus, gres, env, dependency)
 *   slurmshape jobs VERSION FILE         each job of a GET /job reply, decoded, one line each
 *   slurmshape nodes VERSION FILE        each node of a GET /nodes reply, decoded
 *   slurmshape partition VERSION FILE    the partition of a GET /partition reply, decoded
 *   slurmshape pick FILE                 the version gpuorch picks from an OpenAPI document
 *
 * Exits 2 on bad usage or an unknown version, 1 when a file cannot be read. */
#include "sched/slurm-int.h"
#include "core/jsonutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

static int usage(void)
{
	fprintf(stderr, "usage: slurmshape submit VERSION | jobs|nodes|partition VERSION FILE | pick FILE\n");
	return 2;
}

static cJSON *load(const char *path)
{
	cJSON *j = NULL;
	struct strbuf err = STRBUF_INIT;
	if (json_load_file(path, &j, GO_ERR_USAGE, &err) != GO_OK) {
		fprintf(stderr, "slurmshape: %s\n", err.buf);
		strbuf_release(&err);
		return NULL;
	}
	return j;
}

static void print_submit(const struct slurm_adapter *a)
{
	struct host_slurm s;
	struct slurm_job_req r;
	const char *env[] = { "GPUORCH_RUN=r1", "CUDA_CACHE_DISABLE=1", NULL };
	cJSON *b;
	char *txt;
	memset(&s, 0, sizeof(s));
	memset(&r, 0, sizeof(r));
	s.partition = "gpu";
	s.account = "kernels";
	s.qos = "normal";
	s.constraint = "h100";
	s.gpus = "h100:1";
	s.gres = "gpu:1";
	s.time_limit_min = 30;
	s.cpus_per_job = 4;
	r.name = "gpuorch-r1-step-001-bench";
	r.script = "#!/bin/sh\nexec sh run.sh\n";
	r.cwd = "/shared/alice/gpuorch/runs/r1";
	r.std_out = "/shared/alice/gpuorch/runs/r1/%j.out";
	r.std_err = "/shared/alice/gpuorch/runs/r1/%j.err";
	r.dependency = "afterok:100";
	r.env = env;
	r.gpu = 1;
	b = a->submit_body(&s, &r);
	txt = cJSON_Print(b);
	printf("%s\n", txt);
	free(txt);
	cJSON_Delete(b);
}

static int each(const cJSON *reply, const char *key, const struct slurm_adapter *a, const char *what)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(reply, key), *it;
	int n = 0;
	if (!cJSON_IsArray(arr)) {
		fprintf(stderr, "slurmshape: the reply has no %s[]\n", key);
		return 1;
	}
	cJSON_ArrayForEach(it, arr) {
		n++;
		if (!strcmp(what, "jobs")) {
			struct slurm_job j;
			a->job(it, &j);
			printf("job %ld state=%s reason=%s node=%s exit=%d signal=%d submit=%lld start=%lld end=%lld dep=%s\n",
			       j.id, j.state, j.reason, j.node, j.exit_status, j.term_signal,
			       (long long)j.submit_time, (long long)j.start_time, (long long)j.end_time,
			       j.dependency);
		} else if (!strcmp(what, "nodes")) {
			struct slurm_node nd;
			a->node(it, "gpu", &nd);
			printf("node %s state=%s cpus=%d/%d gpus=%d/%d in_gpu_partition=%d reason=%s\n", nd.name,
			       nd.state, nd.alloc_cpus, nd.cpus, nd.gpus_used, nd.gpus_total, nd.in_partition,
			       nd.reason);
			free(nd.name);
			free(nd.state);
			free(nd.gres);
			free(nd.gres_used);
			free(nd.reason);
		} else {
			struct slurm_partition p;
			a->partition(it, "gpu", &p);
			printf("partition %s nodes=%s state=%s total_nodes=%d total_cpus=%d\n", p.name, p.nodes,
			       p.state, p.total_nodes, p.total_cpus);
			slurm_partition_release(&p);
		}
	}
	return n ? 0 : 1;
}

int main(int argc, char **argv)
{
	const struct slurm_adapter *a;
	cJSON *j;
	int rc;

	if (argc == 3 && !strcmp(argv[1], "pick")) {
		struct strbuf off = STRBUF_INIT;
		if (!(j = load(argv[2])))
			return 1;
		a = slurm_pick_adapter(j, &off);
		printf("%s (offered: %s)\n", a ? a->version : "none", off.len ? off.buf : "nothing");
		strbuf_release(&off);
		cJSON_Delete(j);
		return 0;
	}
	if (argc < 3)
		return usage();
	if (!(a = slurm_adapter_for(argv[2]))) {
		fprintf(stderr, "slurmshape: no adapter for '%s'\n", argv[2]);
		return 2;
	}
	if (argc == 3 && !strcmp(argv[1], "submit")) {
		print_submit(a);
		return 0;
	}
	if (argc != 4 || (strcmp(argv[1], "jobs") && strcmp(argv[1], "nodes") && strcmp(argv[1], "partition")))
		return usage();
	if (!(j = load(argv[3])))
		return 1;
	rc = each(j, !strcmp(argv[1], "partition") ? "partitions" : argv[1], a, argv[1]);
	cJSON_Delete(j);
	return rc;
}
