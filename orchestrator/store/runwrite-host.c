/* runwrite-host.c -- the run record's one writer (runwrite.h): a host's entry in "hosts", each call under the record's lock. */
#include "store/runwrite.h"
#include "core/jsonutil.h"
#include "core/timeutil.h"
#include "store/gates.h"
#include "store/runkeys.h"

#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

/* Host index's entry (the caller holds the lock). */
static cJSON *host_obj(struct record *rec, int host)
{
	return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(rec->root, RK_HOSTS), host);
}

/* key of host's entry set to val (taken), in its place or added last. */
static void set_locked(cJSON *h, const char *key, cJSON *val)
{
	if (cJSON_GetObjectItemCaseSensitive(h, key))
		cJSON_ReplaceItemInObject(h, key, val);
	else
		cJSON_AddItemToObject(h, key, val);
}

static void set(struct record *rec, int host, const char *key, cJSON *val)
{
	record_lock(rec);
	set_locked(host_obj(rec, host), key, val);
	record_unlock(rec);
}

/* key of host's entry deleted, then val (taken) added last. */
static void put_last(struct record *rec, int host, const char *key, cJSON *val)
{
	cJSON *h;
	record_lock(rec);
	h = host_obj(rec, host);
	cJSON_DeleteItemFromObjectCaseSensitive(h, key);
	cJSON_AddItemToObject(h, key, val);
	record_unlock(rec);
}

void runw_host_stamp(struct record *rec, int host, enum runw_stamp which, time_t t)
{
	char ts[32];
	time_iso8601(t, ts);
	set(rec, host, which == RUNW_STARTED ? RK_STARTED_AT : RK_ENDED_AT, cJSON_CreateString(ts));
}

void runw_host_status(struct record *rec, int host, enum host_status status)
{
	set(rec, host, RK_STATUS, cJSON_CreateString(host_status_name(status)));
}

void runw_host_error(struct record *rec, int host, const char *error)
{
	set(rec, host, RK_ERROR, error ? cJSON_CreateString(error) : cJSON_CreateNull());
}

void runw_host_runner(struct record *rec, int host, const char *runner)
{
	set(rec, host, RK_RUNNER, cJSON_CreateString(runner));
}

void runw_host_address(struct record *rec, int host, const char *address)
{
	set(rec, host, RK_ADDRESS, cJSON_CreateString(address));
}

void runw_host_instance(struct record *rec, int host, cJSON *instance)
{
	set(rec, host, RK_INSTANCE, instance);
}

void runw_host_phase(struct record *rec, int host, const char *name, enum item_status status,
		     double duration_s, const char *detail)
{
	cJSON *ph = cJSON_CreateObject();
	json_add_str(ph, "name", name);
	json_add_str(ph, "status", item_status_name(status));
	json_add_num(ph, "duration_s", duration_s);
	json_add_str(ph, "detail", detail);
	record_lock(rec);
	cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(host_obj(rec, host), RK_PHASES), ph);
	record_unlock(rec);
}

void runw_host_info(struct record *rec, int host, const struct runw_info *in)
{
	cJSON *info = in->probe, *archs = cJSON_CreateArray(), *h;
	int i;

	/* the arch the steps run on (the probe's "arch" is the plain one from
	 * the compute capability, e.g. sm_90 where the spec builds sm_90a) */
	cJSON_DeleteItemFromObjectCaseSensitive(info, "arch");
	json_add_str(info, "arch", in->run_arch);
	json_add_str(info, "workdir", in->workdir);
	if (in->role)
		json_add_str(info, "role", in->role);
	for (i = 0; i < in->narchs; i++)
		cJSON_AddItemToArray(archs, cJSON_CreateString(in->archs[i]));
	record_lock(rec);
	h = host_obj(rec, host);
	cJSON_ReplaceItemInObject(h, RK_INFO, info);
	cJSON_ReplaceItemInObject(h, RK_ARCHS, archs);
	record_unlock(rec);
}

void runw_host_ship(struct record *rec, int host, const struct runw_ship *s)
{
	cJSON *ship = cJSON_CreateObject();
	json_add_num(ship, "bytes_sent", s->bytes_sent);
	json_add_bool(ship, "reused", s->reused);
	json_add_str(ship, "remote_dir", s->remote_dir);
	json_add_num(ship, "files_sent", s->files_sent);
	json_add_num(ship, "files", s->files);
	json_add_num(ship, "agent_source_bytes", s->agent_source_bytes);
	if (s->files_sent)
		json_add_num(ship, "upload_s", s->upload_s);
	set(rec, host, RK_SHIP, ship);
}

void runw_host_spread(struct record *rec, int host, cJSON *spread)
{
	put_last(rec, host, RK_SPREAD, spread);
}

void runw_host_build(struct record *rec, int host, cJSON *build)
{
	record_lock(rec);
	cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(host_obj(rec, host), RK_BUILDS), build);
	record_unlock(rec);
}

void runw_host_build_at(struct record *rec, int host, int pos, cJSON *build, cJSON *slurm)
{
	if (slurm)
		cJSON_AddItemToObject(build, "slurm", slurm);
	record_lock(rec);
	json_array_insert(cJSON_GetObjectItemCaseSensitive(host_obj(rec, host), RK_BUILDS), pos,
			  build);
	record_unlock(rec);
}

const cJSON *runw_host_sweeps(struct record *rec, int host)
{
	cJSON *sweeps, *h;
	record_lock(rec);
	h = host_obj(rec, host);
	sweeps = sweep_rank_host(h);
	cJSON_DeleteItemFromObject(h, RK_SWEEPS);
	cJSON_AddItemToObject(h, RK_SWEEPS, sweeps);
	record_unlock(rec);
	return sweeps;
}

const cJSON *runw_host_gates(struct record *rec, int host, const cJSON *spec_gates,
			     int *nfailed)
{
	cJSON *gates, *h;
	record_lock(rec);
	h = host_obj(rec, host);
	gates = gates_evaluate_host(spec_gates, h, nfailed);
	cJSON_DeleteItemFromObject(h, RK_GATES);
	cJSON_AddItemToObject(h, RK_GATES, gates);
	record_unlock(rec);
	return gates;
}

/* ------------------------------------------------------------ Slurm */

void runw_host_scheduler(struct record *rec, int host, const struct runw_scheduler *s)
{
	cJSON *sched = cJSON_CreateObject();
	json_add_str(sched, "kind", "slurm");
	json_add_str(sched, "url", s->url);
	json_add_str(sched, "api_version", s->api_version);
	json_add_str(sched, "slurm_release", s->slurm_release);
	json_add_str(sched, "partition", s->partition);
	json_add_str(sched, "gpus", s->gpus);
	json_add_str(sched, "token_source", s->token_source);
	json_add_num(sched, "max_jobs", s->max_jobs);
	json_add_num(sched, "time_limit_min", s->time_limit_min);
	json_add_num(sched, "queue_timeout_s", s->queue_timeout_s);   /* 0: no bound */
	json_add_arr(sched, RK_JOBS);
	put_last(rec, host, RK_SCHEDULER, sched);
}

/* The scheduler's object of host's entry (the caller holds the lock). */
static cJSON *sched_obj(struct record *rec, int host)
{
	return cJSON_GetObjectItemCaseSensitive(host_obj(rec, host), RK_SCHEDULER);
}

void runw_sched_job(struct record *rec, int host, const char *name, long job_id, int attempt,
		    int resumed)
{
	cJSON *e = cJSON_CreateObject();
	json_add_str(e, "name", name);
	json_add_num(e, "job_id", (double)job_id);
	if (attempt > 1)
		json_add_num(e, "attempt", attempt);
	if (resumed)
		json_add_bool(e, "resumed", 1);
	record_lock(rec);
	cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(sched_obj(rec, host), RK_JOBS), e);
	record_unlock(rec);
}

void runw_sched_job_pending(struct record *rec, int host, long job_id, const char *reason)
{
	cJSON *e;
	record_lock(rec);
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(sched_obj(rec, host), RK_JOBS)) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "job_id");
		if (cJSON_IsNumber(id) && (long)id->valuedouble == job_id) {
			cJSON_DeleteItemFromObject(e, "pending_reason");
			json_add_str(e, "pending_reason", reason);
		}
	}
	record_unlock(rec);
}

void runw_sched_counts(struct record *rec, int host, long rest_requests, long token_mints)
{
	cJSON *s;
	record_lock(rec);
	s = sched_obj(rec, host);
	json_add_num(s, "rest_requests", (double)rest_requests);
	json_add_num(s, "token_mints", (double)token_mints);
	record_unlock(rec);
}
