/* slurm.h -- a Slurm client over slurmrestd's REST API (transport/http.c + cJSON).
 *
 * One client per cluster entry of the hosts inventory. slurm_open() only
 * sets up (no network); slurm_discover() asks the daemon which API versions
 * it serves (GET /openapi) and picks the newest one gpuorch has an adapter
 * for. Every reply's errors[] is read: a failure is a one-line message
 * naming the daemon, the request and Slurm's own words. The JWT is taken
 * from $SLURM_JWT, the entry's token_file, or minted over SSH on the login
 * node (`scontrol token lifespan=N`) and minted again before it expires; it
 * never appears in a message. docs/slurm.md has the whole picture. */
#ifndef GPUORCH_SLURM_H
#define GPUORCH_SLURM_H

#include <stdint.h>
#include "core/error.h"
#include "transport/hosts.h"

struct slurm_client;

/* h must be a cluster entry (h->slurm != NULL); h must outlive the client. */
enum go_status slurm_open(const struct host *h, struct slurm_client **out, struct strbuf *err);
void slurm_close(struct slurm_client *c);

/* GET /openapi: the versions served; picks one (slurm_api_version()). */
enum go_status slurm_discover(struct slurm_client *c, struct strbuf *err);
const char *slurm_api_version(const struct slurm_client *c);   /* "v0.0.38" */
const char *slurm_release(const struct slurm_client *c);       /* "22.05.8" or NULL */
/* Where the token came from: "SLURM_JWT", "token_file", "scontrol token over SSH",
 * "unix socket (local auth)". */
const char *slurm_token_source(const struct slurm_client *c);
/* Seconds until the current token expires (-1: unknown or none). */
long slurm_token_ttl_s(const struct slurm_client *c);
/* Tokens minted over SSH so far (the first one included). */
int slurm_token_mints(const struct slurm_client *c);
/* REST requests made so far (for the cost figures). */
long slurm_requests(const struct slurm_client *c);
/* Retry a request whose connection failed for up to this long (default 30 s). */
void slurm_set_retry_ms(struct slurm_client *c, int64_t ms);

/* GET ping: the token is accepted and slurmctld answers. */
enum go_status slurm_ping(struct slurm_client *c, struct strbuf *err);

struct slurm_partition {
	char *name, *nodes, *state;
	int total_nodes, total_cpus;
};
enum go_status slurm_get_partition(struct slurm_client *c, const char *name,
				   struct slurm_partition *p, struct strbuf *err);
void slurm_partition_release(struct slurm_partition *p);

struct slurm_node {
	char *name, *state, *gres, *gres_used, *reason;
	int cpus, alloc_cpus;
	int gpus_total, gpus_used;   /* from gres / gres_used ("gpu:h100:4(IDX:0-3)") */
	int in_partition;            /* lists the client's partition */
};
enum go_status slurm_get_nodes(struct slurm_client *c, struct slurm_node **out, int *n,
			       struct strbuf *err);
void slurm_nodes_release(struct slurm_node *v, int n);
/* The entry's "gpus" ("[type:]N", as sbatch --gpus) against the partition's
 * nodes: a type no node offers is an error that says how to write it. */
enum go_status slurm_check_gpus(const char *gpus, const char *partition,
				const struct slurm_node *nodes, int n, struct strbuf *err);

/* A batch job to submit. The script runs under /bin/sh in cwd. */
struct slurm_job_req {
	const char *name;
	const char *script;
	const char *cwd;
	const char *std_out, *std_err;   /* paths on the cluster (%j allowed) */
	const char *dependency;          /* "afterok:12:13" or NULL */
	const char *const *env;          /* "K=V" strings, NULL-terminated, or NULL */
	int gpu;                         /* ask for the entry's gpus/gres */
	int ngpus;                       /* > 1 (a step of "gpus": N): N GPUs of its one
					  * node ("gres" gpu:N), instead of the entry's */
	int time_limit_min;              /* 0: the entry's */
};
/* Slurm may accept a job and still put an entry in errors[] (e.g. "Required
 * node not available" for a drained node: the job waits): the job id is
 * returned with GO_OK and that text appended to warn (may be NULL). */
enum go_status slurm_submit(struct slurm_client *c, const struct slurm_job_req *r,
			    long *job_id, struct strbuf *warn, struct strbuf *err);

/* A job as Slurm reports it. exit_code is decoded from the raw wait status. */
struct slurm_job {
	long id;
	char state[32];        /* PENDING RUNNING COMPLETED FAILED TIMEOUT CANCELLED ... */
	char reason[64];       /* state_reason: Resources, Priority, Dependency ... */
	char node[128];        /* batch_host / nodes */
	char dependency[128];  /* as Slurm holds it, e.g. "afterok:12(unfulfilled)" */
	int exit_status;       /* exit status when it exited, else -1 */
	int term_signal;       /* signal that ended it, else 0 */
	int64_t submit_time, start_time, end_time;   /* epoch seconds, 0 unknown */
	int found;             /* 0: Slurm no longer knows the job (MinJobAge) */
};
enum go_status slurm_get_job(struct slurm_client *c, long id, struct slurm_job *j,
			     struct strbuf *err);
/* Many jobs with one request (GET /jobs): out[i] for ids[i]; a job Slurm
 * no longer lists has found = 0. */
enum go_status slurm_get_jobs(struct slurm_client *c, const long *ids, int n,
			      struct slurm_job *out, struct strbuf *err);
/* The ids of the jobs named names[i] that Slurm still lists (GET /jobs; the
 * newest when several share a name), 0 for none: a controller that died
 * between a submit and recording its id finds the job by its name. */
enum go_status slurm_find_jobs(struct slurm_client *c, char *const *names, int n, long *ids,
			       struct strbuf *err);
/* DELETE /job/{id} (SIGKILL): a job already finished is not an error. */
enum go_status slurm_cancel(struct slurm_client *c, long id, struct strbuf *err);
/* A job state that will not change again. */
int slurm_state_final(const char *state);

/* What to do with a job that ended without its work's end in its journal.
 * NODE_FAIL and PREEMPTED are the cluster's doing, not the job's: the job is
 * submitted once more (attempt 1 -> SLURM_RETRY_REQUEUE) and reported when
 * it ends that way again (attempt 2 or later -> SLURM_RETRY_GIVE_UP). Any
 * other state is recorded as it is (SLURM_RETRY_NO). */
enum slurm_retry { SLURM_RETRY_NO, SLURM_RETRY_REQUEUE, SLURM_RETRY_GIVE_UP };
enum slurm_retry slurm_retry_decision(const struct slurm_job *j, int attempt);

#endif
