/* slurmrun-base.c -- what the Slurm executor's files stand on
 * (slurmrun-int.h): a failed phase, the login node's commands and
 * uploads, a job's run dir and its Slurm facts for the record. */
#include "run/slurmrun-int.h"

#include <stdlib.h>
#include <string.h>
#include "core/jsonutil.h"
#include "remote/remote.h"
#include "core/trace.h"
#include "core/banned.h"

/* A failed phase of the cluster (scheduler, login node, ship): the phase
 * FAILs and so does the host. */
void sr_fail_host(struct hostrun *hr, const char *name, int64_t t0, const char *msg)
{
	hostrun_phase(hr, name, ST_FAIL, t0, msg);
	strbuf_addf(&hr->out, "  %s: FAILED: %s\n", name, msg);
	hr->failed = 1;
	hostrun_status(hr, HOST_FAILED, msg);
}

/* The job's Slurm facts, for the build's or step's record entry. */
cJSON *sr_job_json(const struct sjob *j)
{
	cJSON *o = cJSON_CreateObject();
	json_add_num(o, "job_id", (double)j->id);
	json_add_str(o, "state", j->sj.state[0] ? j->sj.state : NULL);
	json_add_str(o, "reason", j->sj.reason[0] && strcmp(j->sj.reason, "None") ? j->sj.reason : NULL);
	json_add_str(o, "node", j->sj.node[0] ? j->sj.node : NULL);
	if (j->sj.submit_time && j->sj.start_time >= j->sj.submit_time)
		json_add_num(o, "queue_wait_s", (double)(j->sj.start_time - j->sj.submit_time));
	else
		cJSON_AddNullToObject(o, "queue_wait_s");
	if (j->sj.start_time && j->sj.end_time >= j->sj.start_time)
		json_add_num(o, "run_s", (double)(j->sj.end_time - j->sj.start_time));
	else
		cJSON_AddNullToObject(o, "run_s");
	json_add_num(o, "submit_unix_s", (double)j->sj.submit_time);
	json_add_num(o, "start_unix_s", (double)j->sj.start_time);
	json_add_num(o, "end_unix_s", (double)j->sj.end_time);
	json_add_str(o, "dependency_requested", j->dep_sent[0] ? j->dep_sent : NULL);
	json_add_str(o, "dependency", j->dep_seen[0] ? j->dep_seen : NULL);
	json_add_str(o, "pending_reason", j->pending[0] ? j->pending : NULL);
	json_add_str(o, "rundir", j->rundir);
	json_add_num(o, "requeued", j->attempt > 1 ? j->attempt - 1 : 0);
	/* what ran the job's plan: the host agent, or runner.sh where the
	 * compute node could not build it */
	json_add_str(o, "runner", j->runner[0] ? j->runner : NULL);
	if (!j->is_build)   /* the GPUs Slurm allocated, as the job saw them */
		json_add_str(o, "cuda_visible_devices", j->visible[0] ? j->visible : NULL);
	if (j->attempt > 1) {
		/* every attempt, the first one first: the one above is the last */
		cJSON *arr = json_add_arr(o, "attempts"), *a = cJSON_CreateObject();
		if (j->first.id) {
			json_add_num(a, "job_id", (double)j->first.id);
			json_add_str(a, "state", j->first.state[0] ? j->first.state : NULL);
			json_add_str(a, "reason", j->first.reason[0] && strcmp(j->first.reason, "None") ?
				     j->first.reason : NULL);
			json_add_str(a, "node", j->first.node[0] ? j->first.node : NULL);
			json_add_num(a, "submit_unix_s", (double)j->first.submit_time);
			json_add_num(a, "start_unix_s", (double)j->first.start_time);
			json_add_num(a, "end_unix_s", (double)j->first.end_time);
			json_add_str(a, "rundir", j->first_rundir);
		} else {
			/* --resume adopted the second attempt: the first is only in the last record */
			cJSON_AddNullToObject(a, "job_id");
		}
		cJSON_AddItemToArray(arr, a);
		a = cJSON_CreateObject();
		json_add_num(a, "job_id", (double)j->id);
		json_add_str(a, "state", j->sj.state[0] ? j->sj.state : NULL);
		json_add_str(a, "reason", j->sj.reason[0] && strcmp(j->sj.reason, "None") ? j->sj.reason : NULL);
		json_add_str(a, "node", j->sj.node[0] ? j->sj.node : NULL);
		cJSON_AddItemToArray(arr, a);
	}
	return o;
}

enum go_status sr_rexec(struct hostrun *hr, const char *cmd, struct strbuf *out,
			    struct strbuf *err)
{
	struct strbuf o = STRBUF_INIT, e = STRBUF_INIT;
	struct ssh_exec_result res;
	enum go_status st;
	struct strbuf c = STRBUF_INIT;
	memset(&res, 0, sizeof(res));
	/* what it writes on the cluster is the user's alone (0700/0600) */
	strbuf_addf(&c, "umask 077; %s", cmd);
	trace_label("slurm command");
	st = ssh_exec(hr->conn, c.buf, NULL, 0, &o, &e, &res, 60000, err);
	strbuf_release(&c);
	if (st == GO_OK && (res.signal[0] || res.exit_code)) {
		strbuf_trim(&e);
		st = go_fail(err, GO_ERR_REMOTE, "%s: `%.80s` failed on the login node: %.*s",
			     hr->h->name, cmd, (int)strcspn(e.buf, "\n"), e.buf);
	}
	if (out)
		strbuf_addstr(out, o.buf);
	strbuf_release(&o);
	strbuf_release(&e);
	return st;
}

enum go_status sr_upload(struct hostrun *hr, const char *path, const void *data, size_t len,
			     int mode, struct strbuf *err)
{
	uint64_t sent = 0;
	return ssh_upload(hr->conn, data, len, path, mode, &sent, SFTP_TIMEOUT_MS, err);
}

/* The run dir of a job's attempt: NAME, then NAME.try2 (the runner keeps
 * its state there, and the second attempt starts afresh) */
char *sr_job_rundir(const struct plan *p, const char *name, int attempt)
{
	return attempt > 1 ? xstrfmt("%s/slurm/%s.try%d", p->run_dir, name, attempt)
			   : xstrfmt("%s/slurm/%s", p->run_dir, name);
}
