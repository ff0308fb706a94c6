/* slurm-check.c -- `gpuorch hosts check` for a cluster entry: login node, REST, version, token, partition, GPUs.
 *
 * Each question is asked in order and the first failure stops the check
 * with its message (slurm.c's, which names the daemon and the request); the
 * answers fill struct slurm_check for the text and JSON outputs. */
#include "sched/slurm-check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/jsonutil.h"
#include "core/timeutil.h"
#include "transport/ssh.h"
#include "core/banned.h"

void slurm_check_run(const struct host *h, int accept_new, struct slurm_check *k)
{
	struct slurm_client *c = NULL;
	struct ssh_opts o;
	struct ssh_conn *conn = NULL;
	int64_t t0 = time_mono_ms();
	int i;

	memset(k, 0, sizeof(*k));
	strbuf_init(&k->err, 0);
	k->h = h;
	k->token_ttl_s = -1;
	/* the login node: sources ship there */
	host_ssh_opts(h, accept_new, &o);
	k->st = ssh_connect(&o, &conn, &k->err);
	if (k->st == GO_OK) {
		k->fingerprint = xstrdup(ssh_fingerprint(conn));
		ssh_disconnect(conn);
	}
	if (k->st == GO_OK)
		k->st = slurm_open(h, &c, &k->err);
	if (k->st == GO_OK)
		slurm_set_retry_ms(c, 3000);
	if (k->st == GO_OK)
		k->st = slurm_discover(c, &k->err);
	if (k->st == GO_OK)
		k->st = slurm_ping(c, &k->err);
	if (k->st == GO_OK) {
		k->api_version = xstrdup(slurm_api_version(c));
		k->release = slurm_release(c) ? xstrdup(slurm_release(c)) : NULL;
		k->token_source = xstrdup(slurm_token_source(c));
		k->token_ttl_s = slurm_token_ttl_s(c);
		k->st = slurm_get_partition(c, h->slurm->partition, &k->part, &k->err);
	}
	if (k->st == GO_OK)
		k->st = slurm_get_nodes(c, &k->nodes, &k->nnodes, &k->err);
	if (k->st == GO_OK)
		k->st = slurm_check_gpus(h->slurm->gpus, h->slurm->partition, k->nodes, k->nnodes,
					 &k->err);
	for (i = 0; k->st == GO_OK && i < k->nnodes; i++) {
		if (!k->nodes[i].in_partition)
			continue;
		k->gpus_total += k->nodes[i].gpus_total;
		k->gpus_used += k->nodes[i].gpus_used;
		k->cpus_total += k->nodes[i].cpus;
		k->cpus_used += k->nodes[i].alloc_cpus;
	}
	if (c)
		k->requests = slurm_requests(c);
	slurm_close(c);
	k->seconds = (double)(time_mono_ms() - t0) / 1000.0;
}

void slurm_check_release(struct slurm_check *k)
{
	strbuf_release(&k->err);
	free(k->fingerprint);
	free(k->api_version);
	free(k->release);
	free(k->token_source);
	slurm_partition_release(&k->part);
	slurm_nodes_release(k->nodes, k->nnodes);
	memset(k, 0, sizeof(*k));
}

void slurm_check_print(const struct slurm_check *k)
{
	const struct host *h = k->h;
	int i;
	printf("%s  cluster: slurmrestd %s, login %s@%s:%d  %s  (%.1f s)\n", h->name, h->slurm->url,
	       h->user, h->address, h->port, k->st == GO_OK ? "ok" : "FAILED", k->seconds);
	if (k->st != GO_OK) {
		printf("    error: %s\n", k->err.buf);
		return;
	}
	printf("    %-18s %s\n", "login host key", k->fingerprint);
	printf("    %-18s %s (Slurm %s)\n", "api", k->api_version, k->release ? k->release : "?");
	if (k->token_ttl_s >= 0)
		printf("    %-18s valid, from %s, expires in %ld s\n", "token", k->token_source,
		       k->token_ttl_s);
	else
		printf("    %-18s valid, from %s\n", "token", k->token_source);
	printf("    %-18s %s: %s, %d node%s, %d CPUs\n", "partition", k->part.name,
	       *k->part.state ? k->part.state : "?", k->part.total_nodes,
	       k->part.total_nodes == 1 ? "" : "s", k->part.total_cpus);
	for (i = 0; i < k->nnodes; i++) {
		const struct slurm_node *n = &k->nodes[i];
		if (!n->in_partition)
			continue;
		printf("    %-18s %s: %s, CPUs %d/%d used, GPUs %d/%d used%s%s%s%s\n", "node", n->name,
		       n->state, n->alloc_cpus, n->cpus, n->gpus_used, n->gpus_total,
		       *n->gres ? ", gres " : "", n->gres, *n->reason ? ", reason: " : "", n->reason);
	}
	printf("    %-18s %d free / %d total%s\n", "gpus", k->gpus_total - k->gpus_used,
	       k->gpus_total, k->gpus_total ? "" : " (no gpu GRES in the partition: CPU-only jobs)");
}

cJSON *slurm_check_json(const struct slurm_check *k)
{
	cJSON *o = cJSON_CreateObject(), *arr, *p;
	int i;
	json_add_str(o, "name", k->h->name);
	json_add_str(o, "kind", "slurm");
	json_add_str(o, "status", k->st == GO_OK ? "ok" : "failed");
	json_add_str(o, "error", k->st == GO_OK ? NULL : k->err.buf);
	json_add_str(o, "url", k->h->slurm->url);
	json_add_str(o, "fingerprint", k->fingerprint);
	json_add_str(o, "api_version", k->api_version);
	json_add_str(o, "slurm_release", k->release);
	json_add_str(o, "token_source", k->token_source);
	if (k->token_ttl_s >= 0)
		json_add_num(o, "token_ttl_s", (double)k->token_ttl_s);
	json_add_num(o, "requests", (double)k->requests);
	if (k->st != GO_OK)
		return o;
	p = json_add_obj(o, "partition");
	json_add_str(p, "name", k->part.name);
	json_add_str(p, "state", k->part.state);
	json_add_num(p, "total_nodes", k->part.total_nodes);
	json_add_num(p, "total_cpus", k->part.total_cpus);
	arr = json_add_arr(o, "nodes");
	for (i = 0; i < k->nnodes; i++) {
		const struct slurm_node *n = &k->nodes[i];
		cJSON *no;
		if (!n->in_partition)
			continue;
		no = cJSON_CreateObject();
		json_add_str(no, "name", n->name);
		json_add_str(no, "state", n->state);
		json_add_num(no, "cpus", n->cpus);
		json_add_num(no, "alloc_cpus", n->alloc_cpus);
		json_add_str(no, "gres", n->gres);
		json_add_num(no, "gpus_total", n->gpus_total);
		json_add_num(no, "gpus_used", n->gpus_used);
		cJSON_AddItemToArray(arr, no);
	}
	json_add_num(o, "gpus_total", k->gpus_total);
	json_add_num(o, "gpus_free", k->gpus_total - k->gpus_used);
	json_add_num(o, "cpus_total", k->cpus_total);
	json_add_num(o, "cpus_free", k->cpus_total - k->cpus_used);
	return o;
}
