/* slurmrun-collect.c -- a Slurm job that ended, into the run record: its
 * journal read back over SFTP and its build or step recorded as an SSH
 * host's (hostrun_build_json, hostrun_step_outcome), with the job's facts
 * and what ran it; or, where Slurm ended it before its work did, the status
 * Slurm's end means, or once more submitted (PREEMPTED, NODE_FAIL: a
 * requeue). Entries go into the record in plan order, whatever order the
 * jobs end in. */
#include "run/slurmrun-int.h"

#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "core/jsonutil.h"
#include "remote/hostjournal.h"
#include "remote/remote.h"
#include "core/banned.h"

#define JOURNAL_MAX (64u << 20)

/* What a job that ended without an end event in its journal means. */
static enum item_status slurm_end_status(const struct sjob *j, const struct host_slurm *s,
					 struct strbuf *reason)
{
	const char *st = j->sj.state;
	if (!strcmp(st, "TIMEOUT")) {
		strbuf_addf(reason, "Slurm stopped the job at its time limit (%d min)", s->time_limit_min);
		return ST_TIMEOUT;
	}
	if (!strcmp(st, "CANCELLED")) {
		strbuf_addstr(reason, "the job was cancelled in Slurm (scancel or DELETE)");
		return ST_KILLED;
	}
	if (!strcmp(st, "OUT_OF_MEMORY")) {
		strbuf_addstr(reason, "the job ran out of memory (Slurm OUT_OF_MEMORY)");
		return ST_FAIL;
	}
	if (!strcmp(st, "FAILED")) {
		if (j->sj.term_signal)
			strbuf_addf(reason, "the Slurm job failed: signal %d", j->sj.term_signal);
		else
			strbuf_addf(reason, "the Slurm job failed: exit %d", j->sj.exit_status);
		if (j->sj.reason[0] && strcmp(j->sj.reason, "None"))
			strbuf_addf(reason, " (%s)", j->sj.reason);
		return ST_INFRA_ERROR;
	}
	if (!j->sj.found)
		strbuf_addstr(reason, "Slurm no longer knows the job and its journal has no end");
	else
		strbuf_addf(reason, "the Slurm job ended %s with no end in its journal", st);
	return ST_INFRA_ERROR;
}

/* Entries go into the record in plan order, whatever order the jobs end in:
 * the position of item idx is the number of items before it already recorded. */
static int position(unsigned char *done, int idx)
{
	int i, n = 0;
	for (i = 0; i < idx; i++)
		n += done[i];
	done[idx] = 1;
	return n;
}

/* Build b's entry (hostrun_build_json: as an SSH host's, from its job's
 * journal end ev, or status_in (not ST_NONE) where Slurm's end of the job
 * decided), with its job's facts, into the record in plan order. Returns
 * the entry. */
const cJSON *sr_record_build(struct hostrun *hr, const struct plan_build *b,
				 enum item_status status_in, const char *reason_in, const cJSON *ev,
				 const struct sjob *j)
{
	cJSON *bj = hostrun_build_json(hr, b, ev, status_in, reason_in);
	runw_host_build_at(hr->ctx->rec, hr->index, position(hr->recorded, (int)(b - hr->plan.builds)),
			   bj, j ? sr_job_json(j) : NULL);
	hostrun_save(hr);
	return bj;
}

/* Step ps's entry: from its job's journal end ev as an SSH host's step
 * (hostrun_step_outcome: result, figures, tool files, status), unless
 * status_in (not ST_NONE: Slurm's end of the job, a skip) decided; with its
 * job's facts, into the record in plan order. The status goes back in
 * *status_out, the reason in `reason`. */
void sr_record_step(struct hostrun *hr, const struct plan_step *ps,
			enum item_status status_in, struct strbuf *reason, const cJSON *ev, const struct sjob *j,
			enum item_status *status_out)
{
	struct remote_status rs;
	cJSON *result = NULL, *files = NULL;
	char *out_rel = NULL, *err_rel = NULL;
	enum item_status status = status_in;
	double t_run, t_end;

	hr->ran_from = hr->ran_to = 0;
	if (ev)
		status = hostrun_step_outcome(hr, ps, ev, status_in, &rs, reason, &result, &files,
					      &out_rel, &err_rel);
	t_run = hr->ran_from;
	t_end = hr->ran_to;
	hostrun_step_record(hr, ps, status, reason->buf, ev ? &rs : NULL, t_run, t_end, out_rel,
			    err_rel, result, files, j ? sr_job_json(j) : NULL,
			    position(hr->recorded + hr->plan.nbuilds, (int)(ps - hr->plan.steps)));
	hostrun_save(hr);
	free(out_rel);
	free(err_rel);
	if (status_out)
		*status_out = status;
}

struct jctx {
	const char *id;
	cJSON *end;          /* the item's end event (a copy) */
	struct sjob *j;      /* its runner_started "runner" into j->runner */
};

static int on_event(const struct journal_event *e, void *arg)
{
	struct jctx *c = arg;
	if (!strcmp(e->ev, "runner_started")) {
		const char *rn = json_str(e->json, "runner");
		/* the last start's: a runner that restarted is the same one */
		snprintf(c->j->runner, sizeof(c->j->runner), "%s", rn ? rn : "");
		return 0;
	}
	if (!e->id || strcmp(e->id, c->id))
		return 0;
	if (!strcmp(e->ev, "build_end") || !strcmp(e->ev, "build_reused") ||
	    !strcmp(e->ev, "step_end") || !strcmp(e->ev, "step_skipped")) {
		cJSON_Delete(c->end);
		c->end = cJSON_Duplicate(e->json, 1);
	}
	return 0;
}

/* The job ended PREEMPTED or NODE_FAIL before its work did: submit it once
 * more, in a run dir of its own. The jobs that waited on it (afterok of a
 * build job that will never pass) are withdrawn and wait for the new one. */
static void requeue(struct srun *r, struct sjob *j)
{
	struct hostrun *hr = r->hr;
	struct strbuf err = STRBUF_INIT;
	int k, self = (int)(j - r->jobs);

	strbuf_addf(&hr->out, "  %s: job %ld ended %s on %s before its %s ended: submitted once more\n",
		    j->name, j->id, j->sj.state, j->sj.node[0] ? j->sj.node : "?",
		    j->is_build ? "build" : "step");
	j->first = j->sj;
	free(j->first_rundir);
	j->first_rundir = j->rundir;
	j->attempt++;
	j->rundir = sr_job_rundir(&hr->plan, j->name, j->attempt);
	memset(&j->sj, 0, sizeof(j->sj));
	j->id = 0;
	j->state = JOB_WAITING;
	j->dep_sent[0] = j->dep_seen[0] = j->pending[0] = j->runner[0] = '\0';
	j->pending_since = 0;
	for (k = 0; k < r->njobs; k++) {
		struct sjob *d = &r->jobs[k];
		if ((d->dep != self && d->dep_lib != self) || d->state != JOB_QUEUED)
			continue;
		if (slurm_cancel(r->sc, d->id, &err) != GO_OK)
			strbuf_addf(&hr->out, "  warning: cannot cancel job %ld: %s\n", d->id, err.buf);
		strbuf_addf(&hr->out, "  %s: job %ld withdrawn (it waited on job %ld)\n", d->name, d->id,
			    j->first.id);
		d->id = 0;
		d->state = JOB_WAITING;
		d->dep_sent[0] = d->dep_seen[0] = '\0';
		memset(&d->sj, 0, sizeof(d->sj));
	}
	strbuf_release(&err);
}

/* "STATE[ REASON] on NODE" of a job as Slurm reported it ("None" is no reason) */
static void add_job_end(struct strbuf *sb, const struct slurm_job *sj)
{
	strbuf_addstr(sb, sj->state);
	if (sj->reason[0] && strcmp(sj->reason, "None"))
		strbuf_addf(sb, " %s", sj->reason);
	strbuf_addf(sb, " on %s", sj->node[0] ? sj->node : "?");
}

/* The job ended: read its journal back and record its build or step.
 * Returns 0 when the job was submitted again instead (requeue()). */
/* A GPU step job's node.txt (slurm-job.sh): the CUDA_VISIBLE_DEVICES line
 * into j->visible; nothing when it cannot be read (the record says null). */
static void read_visible(struct hostrun *hr, struct sjob *j)
{
	struct strbuf data = STRBUF_INIT, err = STRBUF_INIT;
	char *path;
	const char *v, *end;

	j->visible[0] = '\0';
	if (j->is_build || !hr->plan.steps[j->idx].needs_gpu)
		return;
	path = xstrfmt("%s/node.txt", j->rundir);
	if (ssh_download(hr->conn, path, &data, 64u << 10, SFTP_TIMEOUT_MS, &err) == GO_OK &&
	    (v = strstr(data.buf, "\nCUDA_VISIBLE_DEVICES=")) != NULL) {
		v += strlen("\nCUDA_VISIBLE_DEVICES=");
		end = strchr(v, '\n');
		snprintf(j->visible, sizeof(j->visible), "%.*s",
			 (int)(end ? end - v : (ptrdiff_t)strlen(v)), v);
	}
	free(path);
	strbuf_release(&data);
	strbuf_release(&err);
}

int sr_collect(struct srun *r, struct sjob *j)
{
	struct hostrun *hr = r->hr;
	const struct plan *p = &hr->plan;
	struct strbuf data = STRBUF_INIT, err = STRBUF_INIT, reason = STRBUF_INIT;
	struct journal jr;
	struct jctx c;
	char *path = xstrfmt("%s/journal", j->rundir);
	enum item_status status;
	char *bid;
	int collected = 1;

	memset(&c, 0, sizeof(c));
	/* a build's id in its plan and journal is the SSH host's (hostrun_build_id) */
	bid = j->is_build ? hostrun_build_id(&p->builds[j->idx]) : NULL;
	c.id = j->is_build ? bid : p->steps[j->idx].id;
	c.j = j;
	journal_init(&jr, 0);
	if (ssh_download(hr->conn, path, &data, JOURNAL_MAX, SFTP_TIMEOUT_MS, &err) == GO_OK)
		journal_feed(&jr, data.buf, data.len, on_event, &c, &err);
	read_visible(hr, j);
	/* an item that exited says how it went; one the job's end cut short
	 * (scancel, time limit, node failure) is told by Slurm's state */
	if (j->queue_timed_out) {
		strbuf_addf(&reason, "pending for longer than queue_timeout_s (%d s): %s",
			    hr->h->slurm->queue_timeout_s, j->pending[0] ? j->pending : "?");
		status = ST_TIMEOUT;
	} else if (c.end && (!strcmp(json_str(c.end, "status") ? json_str(c.end, "status") : "exited", "exited") ||
		      !j->sj.found || !strcmp(j->sj.state, "COMPLETED"))) {
		/* the journal says, as an SSH host's runner's would */
		const char *evn = json_str(c.end, "ev");
		status = ST_NONE;
		if (evn && !strcmp(evn, "step_skipped")) {
			strbuf_addstr(&reason, json_str(c.end, "reason") ? json_str(c.end, "reason")
								   : "skipped by the runner");
			status = ST_SKIPPED;
		}
	} else {
		switch (slurm_retry_decision(&j->sj, j->attempt)) {
		case SLURM_RETRY_REQUEUE:
			if (*hr->ctx->interrupted)
				break;   /* Ctrl-C: nothing is submitted any more */
			requeue(r, j);
			collected = 0;
			goto out;
		case SLURM_RETRY_GIVE_UP:
			strbuf_addf(&reason, "the Slurm job ended %s twice: job %ld ", j->sj.state, j->first.id);
			add_job_end(&reason, &j->first);
			strbuf_addf(&reason, ", submitted once more as job %ld, ", j->id);
			add_job_end(&reason, &j->sj);
			strbuf_addstr(&reason, " (gpuorch requeues a job once)");
			break;
		case SLURM_RETRY_NO:
			break;
		}
		status = reason.len ? ST_INFRA_ERROR : slurm_end_status(j, hr->h->slurm, &reason);
	}
	if (j->is_build) {
		const cJSON *bj;
		int k;
		for (k = 0; k < p->nbuilds; k++)   /* the builds made by this one (plan.h same_as) */
			if (p->builds[k].same_as == &p->builds[j->idx])
				sr_record_build(hr, &p->builds[k], status, reason.buf, c.end, j);
		bj = sr_record_build(hr, &p->builds[j->idx], status, reason.buf, c.end, j);
		status = ST_NONE;
		item_status_parse(json_str(bj, "status"), &status);
		strbuf_reset(&reason);
		if (json_str(bj, "reason"))
			strbuf_addstr(&reason, json_str(bj, "reason"));
		j->passed = status == ST_PASS;
	} else {
		sr_record_step(hr, &p->steps[j->idx], status, &reason, c.end, j, &status);
	}
	if (status != ST_PASS && status != ST_SKIPPED)
		hr->nfailed_steps++;
	strbuf_addf(&hr->out, "  %s %s: %s%s%s (job %ld on %s, queued %lld s, ran %lld s)\n",
		    j->is_build ? "build" : "step", c.id,
		    item_status_name(status) ? item_status_name(status) : "?", reason.len ? ": " : "", reason.buf,
		    j->id, j->sj.node[0] ? j->sj.node : "?",
		    (long long)(j->sj.start_time ? j->sj.start_time - j->sj.submit_time : 0),
		    (long long)(j->sj.end_time && j->sj.start_time ? j->sj.end_time - j->sj.start_time : 0));
	j->state = JOB_DONE;
out:
	cJSON_Delete(c.end);
	journal_release(&jr);
	strbuf_release(&data);
	strbuf_release(&err);
	strbuf_release(&reason);
	free(path);
	free(bid);
	return collected;
}

/* A job that cannot run because its build job did not pass. */
void sr_skip_job(struct srun *r, struct sjob *j, const char *why)
{
	struct strbuf err = STRBUF_INIT, reason = STRBUF_INIT;
	if (j->state == JOB_QUEUED)
		slurm_cancel(r->sc, j->id, &err);
	strbuf_addstr(&reason, why);
	sr_record_step(r->hr, &r->hr->plan.steps[j->idx], ST_SKIPPED, &reason, NULL,
		    j->state == JOB_QUEUED ? j : NULL, NULL);
	j->state = JOB_DONE;
	strbuf_release(&err);
	strbuf_release(&reason);
}
