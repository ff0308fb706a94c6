/* runwrite-step.c -- the run record's one writer (runwrite.h): a step's entry in its host's "steps". */
#include "store/runwrite.h"
#include "core/jsonutil.h"
#include "store/runkeys.h"
#include "store/samples.h"

#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

/* What the step is: id, kind, program, problem, variant, arch, GPUs, role. */
static void add_identity(cJSON *sj, struct runw_step *s)
{
	json_add_str(sj, "id", s->id);
	json_add_str(sj, "kind", step_kind_name(s->kind));
	json_add_str(sj, "program", s->program);
	json_add_str(sj, "problem", s->problem);
	json_add_str(sj, "mode", s->mode);
	if (s->tool)
		json_add_str(sj, "tool", s->tool);
	runw_add_variant(sj, s->variant, s->defines, s->ndefines);
	if (s->tool_settings)
		cJSON_AddItemToObject(sj, "tool_settings", s->tool_settings);
	s->tool_settings = NULL;
	json_add_str(sj, "arch", s->arch);
	if (s->gpus)
		cJSON_AddItemToObject(sj, "gpus", s->gpus);
	s->gpus = NULL;
	json_add_str(sj, "role", s->baseline ? "baseline" : "kernel");
}

/* How it ended and when: status, reason, exit code or signal, its spans. */
static void add_end(cJSON *sj, const struct runw_step *s)
{
	double dur = s->t_start > 0 && s->t_end >= s->t_start ? s->t_end - s->t_start : 0;

	json_add_str(sj, RK_STATUS, item_status_name(s->status));
	json_add_str(sj, "reason", s->reason && *s->reason ? s->reason : NULL);
	if (s->exited)
		json_add_num(sj, RK_EXIT_CODE, s->exit_code);
	else
		cJSON_AddNullToObject(sj, RK_EXIT_CODE);
	if (s->signaled)
		json_add_num(sj, "signal", s->signal);
	else
		cJSON_AddNullToObject(sj, "signal");
	json_add_num(sj, RK_DURATION_S, dur);
	if (dur > 0) {
		/* wall-clock span, to line steps of several hosts up in time */
		json_add_num(sj, "ended_unix_s", s->t_end);
		json_add_num(sj, "started_unix_s", s->t_start);
	}
	if (s->ran_to > 0) {
		/* when the program itself ran on the host (after its GPU lock) */
		json_add_num(sj, "ran_from_unix_s", s->ran_from);
		json_add_num(sj, "ran_to_unix_s", s->ran_to);
	}
}

/* What it left: its command, logs, result, tool files, Slurm job. */
static void add_outputs(cJSON *sj, struct runw_step *s)
{
	json_add_num(sj, "timeout_s", s->timeout_s);
	json_add_str(sj, "command", s->command);
	json_add_str(sj, "stdout_log", s->stdout_log);
	json_add_str(sj, "stderr_log", s->stderr_log);
	if (s->result) {
		/* every timing sample, packed (store/samples.h) */
		samples_pack_timing(cJSON_GetObjectItemCaseSensitive(s->result, "timing"));
		cJSON_AddItemToObject(sj, "result", s->result);
	} else
		cJSON_AddNullToObject(sj, "result");
	s->result = NULL;
	if (s->files) {   /* tool logs and reports pulled back beside the run */
		cJSON *f;
		while ((f = s->files->child)) {
			char *key = xstrdup(f->string);
			cJSON_DetachItemViaPointer(s->files, f);
			cJSON_AddItemToObject(sj, key, f);
			free(key);
		}
		cJSON_Delete(s->files);
		s->files = NULL;
	}
	if (s->slurm)
		cJSON_AddItemToObject(sj, "slurm", s->slurm);
	s->slurm = NULL;
}

/* One attempt's job id, state, reason and node; with its times and run dir when full. */
static void add_try(cJSON *o, const struct runw_job_try *t, int full)
{
	json_add_num(o, "job_id", (double)t->job_id);
	json_add_str(o, "state", t->state);
	json_add_str(o, "reason", t->reason);
	json_add_str(o, "node", t->node);
	if (!full)
		return;
	json_add_num(o, "submit_unix_s", t->submit_unix_s);
	json_add_num(o, "start_unix_s", t->start_unix_s);
	json_add_num(o, "end_unix_s", t->end_unix_s);
	json_add_str(o, "rundir", t->rundir);
}

/* A span's seconds, null when it is not whole (an end before its start). */
static void add_span(cJSON *o, const char *key, double from, double to)
{
	if (from > 0 && to >= from)
		json_add_num(o, key, to - from);
	else
		cJSON_AddNullToObject(o, key);
}

/* Every attempt, the first one first: the one at the top is the last. */
static void add_attempts(cJSON *o, const struct runw_slurm_job *j)
{
	cJSON *arr = json_add_arr(o, "attempts"), *a = cJSON_CreateObject();
	if (j->first_known)
		add_try(a, &j->first, 1);
	else   /* --resume adopted the second attempt: the first is only in the last record */
		cJSON_AddNullToObject(a, "job_id");
	cJSON_AddItemToArray(arr, a);
	a = cJSON_CreateObject();
	add_try(a, &j->last, 0);
	cJSON_AddItemToArray(arr, a);
}

cJSON *runw_slurm_job(const struct runw_slurm_job *j)
{
	const struct runw_job_try *t = &j->last;
	cJSON *o = cJSON_CreateObject();

	add_try(o, t, 0);
	add_span(o, "queue_wait_s", t->submit_unix_s, t->start_unix_s);
	add_span(o, "run_s", t->start_unix_s, t->end_unix_s);
	json_add_num(o, "submit_unix_s", t->submit_unix_s);
	json_add_num(o, "start_unix_s", t->start_unix_s);
	json_add_num(o, "end_unix_s", t->end_unix_s);
	json_add_str(o, "dependency_requested", j->dependency_requested);
	json_add_str(o, "dependency", j->dependency);
	json_add_str(o, "pending_reason", j->pending_reason);
	json_add_str(o, "rundir", t->rundir);
	json_add_num(o, "requeued", j->requeued);
	/* what ran the job's plan: the host agent, or runner.sh where the
	 * compute node could not build it */
	json_add_str(o, RK_RUNNER, j->runner);
	if (!j->is_build)   /* the GPUs Slurm allocated, as the job saw them */
		json_add_str(o, "cuda_visible_devices", j->cuda_visible_devices);
	if (j->requeued)
		add_attempts(o, j);
	return o;
}

static cJSON *step_json(struct runw_step *s)
{
	cJSON *sj = cJSON_CreateObject();
	add_identity(sj, s);
	add_end(sj, s);
	add_outputs(sj, s);
	return sj;
}

void runw_step_end(struct record *rec, int host, struct runw_step *s)
{
	cJSON *sj = step_json(s), *h;
	/* the hosts array never changes while hosts run: read without the lock */
	h = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(rec->root, RK_HOSTS), host);
	record_host_append(rec, host, h, RK_STEPS, sj);
}

void runw_step_end_at(struct record *rec, int host, int pos, struct runw_step *s)
{
	cJSON *sj = step_json(s);
	record_lock(rec);
	json_array_insert(cJSON_GetObjectItemCaseSensitive(
				  cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(rec->root, RK_HOSTS),
						     host), RK_STEPS), pos, sj);
	record_unlock(rec);
}
