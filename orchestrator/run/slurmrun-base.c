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

/* A Slurm-reported string, NULL when empty (or "None", for a reason). */
static const char *or_null(const char *s)
{
	return s[0] ? s : NULL;
}

static const char *reason_or_null(const char *s)
{
	return s[0] && strcmp(s, "None") ? s : NULL;
}

/* One attempt as Slurm last reported it. */
static void job_try(struct runw_job_try *t, const struct slurm_job *sj, long id,
		    const char *rundir)
{
	t->job_id = id;
	t->state = or_null(sj->state);
	t->reason = reason_or_null(sj->reason);
	t->node = or_null(sj->node);
	t->submit_unix_s = (double)sj->submit_time;
	t->start_unix_s = (double)sj->start_time;
	t->end_unix_s = (double)sj->end_time;
	t->rundir = rundir;
}

/* The job's Slurm facts, for the build's or step's record entry (store/runwrite.h). */
cJSON *sr_job_json(const struct sjob *j)
{
	struct runw_slurm_job f;

	memset(&f, 0, sizeof(f));
	job_try(&f.last, &j->sj, j->id, j->rundir);
	f.dependency_requested = or_null(j->dep_sent);
	f.dependency = or_null(j->dep_seen);
	f.pending_reason = or_null(j->pending);
	f.requeued = j->attempt > 1 ? j->attempt - 1 : 0;
	f.runner = or_null(j->runner);
	f.is_build = j->is_build;
	f.cuda_visible_devices = or_null(j->visible);
	f.first_known = j->first.id != 0;
	if (f.first_known)
		job_try(&f.first, &j->first, j->first.id, j->first_rundir);
	return runw_slurm_job(&f);
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
