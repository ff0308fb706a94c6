/* slurmrun.c -- a run on a Slurm cluster: ship over SFTP, one job per build and per step, watched over REST.
 *
 * Transport stays SSH (the login node: sources to the shared work dir W,
 * plans, journals back); scheduling goes through slurmrestd (sched/slurm.h).
 * Every build and every step is a batch job that runs the host runner
 * (orchestrator/remote/runner.sh, shipped to W/runs/<run-id>/runner.sh) on
 * a plan of its own in W/runs/<run-id>/slurm/<job>/: a build job's plan has
 * the one build; a step job's has its build (reused: the build job left
 * rc = 0 in W/builds/<key>) and the step, and depends on the build job
 * (afterok). At most max_jobs jobs are in the queue at once, so sweep
 * variants run side by side on as many nodes/GPUs as Slurm gives. All jobs
 * are watched with one GET /jobs per round, the interval doubling from 0.5
 * to 4 s while nothing changes. When a job ends its journal is read back
 * over SFTP and the build or step recorded like an SSH host's, plus the
 * job's id, node, queue wait and run time. A job that Slurm ended PREEMPTED
 * or NODE_FAIL before its work ended is submitted once more (its own run
 * dir NAME.try2, its build already made) and both attempts are recorded; a
 * second such end is an INFRA_ERROR. Ctrl-C cancels (DELETE) every job of
 * the run still queued or running. Never compiles on the login node. */
#include "run/slurmrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/jsonutil.h"
#include "core/timeutil.h"
#include "remote/hostjournal.h"
#include "remote/remote.h"
#include "remote/runner-script.h"
#include "remote/runplan.h"
#include "store/runread.h"
#include "sched/slurm.h"
#include "remote/pack.h"
#include "core/banned.h"

#define POLL_MIN_MS 500
#define POLL_MAX_MS 4000
#define CANCEL_WAIT_MS 30000
#define JOURNAL_MAX (64u << 20)
#define SFTP_TIMEOUT_MS 120000

enum { JOB_WAITING, JOB_QUEUED, JOB_DONE };

struct sjob {
	int is_build;
	int idx;              /* the plan's build or step index */
	int dep;              /* jobs[] index of the build job it needs, or -1 */
	int dep_lib;          /* a kernel_timing step: the CUPTI library's build job, or -1 */
	char *name;           /* folder and job name suffix */
	char *rundir;         /* W/runs/<run-id>/slurm/<name> */
	long id;
	int state;
	int passed;           /* a build job whose build passed */
	struct slurm_job sj;  /* as last seen */
	char dep_sent[64];    /* the dependency in the submit request */
	char dep_seen[128];   /* the dependency Slurm reported for it (while pending) */
	char pending[64];     /* the last reason it was pending for, other than its dependency */
	int64_t pending_since;/* time_mono_ms() when it was first seen pending for that; 0 */
	int queue_timed_out;  /* cancelled by gpuorch at queue_timeout_s */
	int adopted;          /* --resume: submitted by the run's last controller */
	int attempt;          /* 1, or 2 once requeued (PREEMPTED / NODE_FAIL) */
	struct slurm_job first; /* the first attempt as Slurm last reported it (attempt 2) */
	char *first_rundir;   /* its run dir */
};

struct srun {
	struct hostrun *hr;
	struct slurm_client *sc;
	struct sjob *jobs;
	int njobs;
	char *runner;         /* W/runs/<run-id>/runner.sh */
	long requests_at_start;
	int64_t t0;
};

/* ---------------------------------------------------------------- record */

/* A failed phase of the cluster (scheduler, login node, ship): the phase
 * FAILs and so does the host. */
static void fail_host(struct hostrun *hr, const char *name, int64_t t0, const char *msg)
{
	hostrun_phase(hr, name, ST_FAIL, t0, msg);
	strbuf_addf(&hr->out, "  %s: FAILED: %s\n", name, msg);
	hr->failed = 1;
	hostrun_status(hr, HOST_FAILED, msg);
}

/* The job's Slurm facts, for the build's or step's record entry. */
static cJSON *job_json(const struct sjob *j)
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

static void insert_at(cJSON *arr, int pos, cJSON *item)
{
	json_array_insert(arr, pos, item);   /* core/jsonutil.h */
}

/* Build b's entry (hostrun_build_json: as an SSH host's, from its job's
 * journal end ev, or status_in (not ST_NONE) where Slurm's end of the job
 * decided), with its job's facts, into the record in plan order. Returns
 * the entry. */
static const cJSON *record_build(struct hostrun *hr, const struct plan_build *b,
				 enum item_status status_in, const char *reason_in, const cJSON *ev,
				 const struct sjob *j)
{
	cJSON *bj = hostrun_build_json(hr, b, ev, status_in, reason_in);
	if (j)
		cJSON_AddItemToObject(bj, "slurm", job_json(j));
	record_lock(hr->ctx->rec);
	insert_at(cJSON_GetObjectItem(hr->hj, "builds"),
				position(hr->recorded, (int)(b - hr->plan.builds)), bj);
	record_unlock(hr->ctx->rec);
	hostrun_save(hr);
	return bj;
}

/* Step ps's entry: from its job's journal end ev as an SSH host's step
 * (hostrun_step_outcome: result, figures, tool files, status), unless
 * status_in (not ST_NONE: Slurm's end of the job, a skip) decided; with its
 * job's facts, into the record in plan order. The status goes back in
 * *status_out, the reason in `reason`. */
static void record_step(struct hostrun *hr, const struct plan_step *ps,
			enum item_status status_in, struct strbuf *reason, const cJSON *ev, const struct sjob *j,
			enum item_status *status_out)
{
	struct remote_status rs;
	cJSON *sj, *result = NULL, *files = NULL;
	char *out_rel = NULL, *err_rel = NULL;
	enum item_status status = status_in;
	double t_run, t_end;

	hr->ran_from = hr->ran_to = 0;
	if (ev)
		status = hostrun_step_outcome(hr, ps, ev, status_in, &rs, reason, &result, &files,
					      &out_rel, &err_rel);
	t_run = hr->ran_from;
	t_end = hr->ran_to;
	sj = hostrun_step_json(hr, ps, status, reason->buf, ev ? &rs : NULL, t_run, t_end, out_rel,
			       err_rel, result, files);
	if (j)
		cJSON_AddItemToObject(sj, "slurm", job_json(j));
	record_lock(hr->ctx->rec);
	insert_at(cJSON_GetObjectItem(hr->hj, "steps"),
				position(hr->recorded + hr->plan.nbuilds, (int)(ps - hr->plan.steps)), sj);
	record_unlock(hr->ctx->rec);
	hostrun_save(hr);
	free(out_rel);
	free(err_rel);
	if (status_out)
		*status_out = status;
}

/* ---------------------------------------------------------------- remote */

static enum go_status rexec(struct hostrun *hr, const char *cmd, struct strbuf *out,
			    struct strbuf *err)
{
	struct strbuf o = STRBUF_INIT, e = STRBUF_INIT;
	struct ssh_exec_result res;
	enum go_status st;
	struct strbuf c = STRBUF_INIT;
	memset(&res, 0, sizeof(res));
	/* what it writes on the cluster is the user's alone (0700/0600) */
	strbuf_addf(&c, "umask 077; %s", cmd);
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

static enum go_status upload(struct hostrun *hr, const char *path, const void *data, size_t len,
			     int mode, struct strbuf *err)
{
	uint64_t sent = 0;
	return ssh_upload(hr->conn, data, len, path, mode, &sent, SFTP_TIMEOUT_MS, err);
}

/* ---------------------------------------------------------------- setup */

static void add_arch(struct hostrun *hr, const char *a)
{
	int i;
	for (i = 0; i < hr->narchs; i++)
		if (!strcmp(hr->archs[i], a))
			return;
	hr->archs = xrealloc(hr->archs, (size_t)(hr->narchs + 1) * sizeof(char *));
	hr->archs[hr->narchs++] = xstrdup(a);
}

static enum go_status setup(struct srun *r)
{
	struct hostrun *hr = r->hr;
	const struct host *h = hr->h;
	const struct spec *s = hr->ctx->spec;
	struct strbuf err = STRBUF_INIT, cmd = STRBUF_INIT, out = STRBUF_INIT;
	struct ssh_opts o;
	int64_t t0 = time_mono_ms();
	enum go_status st;
	cJSON *sched;
	char *tar = NULL;
	int i, reused = 0;

	/* the scheduler first: nothing is shipped to a cluster we cannot submit to */
	live_set(hr->ctx->live, hr->index, "scheduler", h->slurm->url);
	st = slurm_open(h, &r->sc, &err);
	if (st == GO_OK)
		st = slurm_discover(r->sc, &err);
	if (st == GO_OK)
		st = slurm_ping(r->sc, &err);
	if (st == GO_OK) {
		struct slurm_partition p;
		st = slurm_get_partition(r->sc, h->slurm->partition, &p, &err);
		slurm_partition_release(&p);
	}
	if (st == GO_OK && h->slurm->gpus) {
		struct slurm_node *nodes;
		int nn;
		st = slurm_get_nodes(r->sc, &nodes, &nn, &err);
		if (st == GO_OK)
			st = slurm_check_gpus(h->slurm->gpus, h->slurm->partition, nodes, nn, &err);
		slurm_nodes_release(nodes, nn);
	}
	if (st != GO_OK) {
		fail_host(hr, "scheduler", t0, err.buf);
		goto out;
	}
	record_lock(hr->ctx->rec);
	sched = cJSON_CreateObject();
	json_add_str(sched, "kind", "slurm");
	json_add_str(sched, "url", h->slurm->url);
	json_add_str(sched, "api_version", slurm_api_version(r->sc));
	json_add_str(sched, "slurm_release", slurm_release(r->sc));
	json_add_str(sched, "partition", h->slurm->partition);
	json_add_str(sched, "gpus", h->slurm->gpus);
	json_add_str(sched, "token_source", slurm_token_source(r->sc));
	json_add_num(sched, "max_jobs", h->slurm->max_jobs);
	json_add_num(sched, "time_limit_min", h->slurm->time_limit_min);
	json_add_num(sched, "queue_timeout_s", h->slurm->queue_timeout_s);   /* 0: no bound */
	json_add_arr(sched, "jobs");
	cJSON_DeleteItemFromObjectCaseSensitive(hr->hj, "scheduler");
	cJSON_AddItemToObject(hr->hj, "scheduler", sched);
	record_unlock(hr->ctx->rec);
	hostrun_phase(hr, "scheduler", ST_PASS, t0, slurm_api_version(r->sc));
	strbuf_addf(&hr->out, "  scheduler: slurmrestd %s, API %s (Slurm %s), partition %s\n",
		    h->slurm->url, slurm_api_version(r->sc),
		    slurm_release(r->sc) ? slurm_release(r->sc) : "?", h->slurm->partition);

	/* the login node: probe its tools (the shared software the jobs use) */
	t0 = time_mono_ms();
	live_set(hr->ctx->live, hr->index, "connect", "login node");
	host_ssh_opts(h, hr->ctx->accept_new_hostkey, &o);
	st = ssh_connect(&o, &hr->conn, &err);
	if (st == GO_OK)
		st = probe_host(hr->conn, h->cuda_home, h->python, h->workdir, 0, &hr->info, NULL, &err);
	if (st != GO_OK) {
		fail_host(hr, "connect", t0, err.buf);
		goto out;
	}
	hr->have_info = 1;
	hr->workdir = host_workdir(h, hr->info.home);
	/* compute nodes are not probed: the entry's "arch" names their GPUs */
	if (h->arch) {
		hr->run_arch = xstrdup(h->arch);
		add_arch(hr, h->arch);
	} else {
		for (i = 0; i < s->ntargets; i++)
			add_arch(hr, s->targets[i].arch);
	}
	/* info.arch: the compute nodes' (the entry's), which gates and reports
	 * read as the arch the steps ran on, not the login node's own GPU */
	hostrun_record_info(hr, "login node (probed for tools; jobs run on compute nodes)");
	hostrun_phase(hr, "connect", ST_PASS, t0, hr->info.hostname);

	hostrun_make_plan(hr, "the cluster entry names no \"arch\" for its GPUs (set \"arch\", e.g. "
			  "\"sm_90a\", to run GPU steps)", h->slurm->gpus);
	/* which builds and steps are in the record (for plan order); freed by hostrun_release */
	hr->recorded = xcalloc((size_t)(hr->plan.nbuilds + hr->plan.nsteps) + 1, 1);

	/* ship: content addressed, as for an SSH host */
	t0 = time_mono_ms();
	live_set(hr->ctx->live, hr->index, "ship", hr->ctx->pack->content_id);
	strbuf_addstr(&cmd, "test -f ");
	strbuf_add_shell_quoted(&cmd, hr->plan.content_dir);
	strbuf_addstr(&cmd, "/.complete && echo present || { mkdir -p ");
	strbuf_add_shell_quoted(&cmd, hr->plan.content_dir);
	strbuf_addstr(&cmd, " && echo absent; }");
	st = rexec(hr, cmd.buf, &out, &err);
	reused = st == GO_OK && strstr(out.buf, "present") != NULL;
	tar = xstrfmt("%s/src.tar", hr->plan.content_dir);
	if (st == GO_OK && !reused)
		st = upload(hr, tar, hr->ctx->pack->data, hr->ctx->pack->len, 0600, &err);
	if (st == GO_OK && !reused) {
		strbuf_reset(&cmd);
		strbuf_addstr(&cmd, "cd ");
		strbuf_add_shell_quoted(&cmd, hr->plan.content_dir);
		strbuf_addstr(&cmd, " && rm -rf src && mkdir src && tar -xf src.tar -C src && chmod -R go-rwx src && touch .complete");
		st = rexec(hr, cmd.buf, NULL, &err);
	}
	/* the runner every job runs */
	r->runner = xstrfmt("%s/runner.sh", hr->plan.run_dir);
	if (st == GO_OK) {
		strbuf_reset(&cmd);
		strbuf_addstr(&cmd, "mkdir -p ");
		strbuf_add_shell_quoted(&cmd, hr->plan.run_dir);
		strbuf_addstr(&cmd, "/slurm");
		st = rexec(hr, cmd.buf, NULL, &err);
	}
	if (st == GO_OK)
		st = upload(hr, r->runner, gpuorch_runner_sh, gpuorch_runner_sh_len, 0600, &err);
	if (st != GO_OK) {
		fail_host(hr, "ship", t0, err.buf);
		goto out;
	}
	strbuf_reset(&out);
	if (reused)
		strbuf_addf(&out, "content %.12s already in the shared work dir",
			    hr->ctx->pack->content_id);
	else
		strbuf_addf(&out, "%zu bytes sent", hr->ctx->pack->len);
	hostrun_phase(hr, "ship", ST_PASS, t0, out.buf);
	strbuf_addf(&hr->out, "  ship: %s\n", out.buf);
out:
	free(tar);
	strbuf_release(&err);
	strbuf_release(&cmd);
	strbuf_release(&out);
	return st;
}

/* ---------------------------------------------------------------- jobs */

static int build_index(const struct plan *p, const struct plan_build *b)
{
	int i;
	for (i = 0; i < p->nbuilds; i++)
		if (&p->builds[i] == b)
			return i;
	return -1;
}

/* --resume: the job id that the run's last controller submitted for the job
 * named name on this host, else 0; *attempt its attempt (2: a requeued job) */
static long resumed_job(const struct hostrun *hr, const char *name, int *attempt)
{
	const cJSON *h, *e;
	*attempt = 1;
	cJSON_ArrayForEach(h, rr_arr(hr->ctx->resumed, "hosts")) {
		if (!rr_streq(rr_str(h, "name"), hr->h->name))
			continue;
		long last = 0;
		cJSON_ArrayForEach(e, rr_arr(rr_obj(h, "scheduler"), "jobs")) {
			double id, a;
			/* the last of that name: a withdrawn or requeued job was submitted again */
			if (rr_streq(rr_str(e, "name"), name) && rr_num(e, "job_id", &id) && id > 0) {
				last = (long)id;
				*attempt = rr_num(e, "attempt", &a) && a >= 2 ? 2 : 1;
			}
		}
		return last;
	}
	return 0;
}

/* The run dir of a job's attempt: NAME, then NAME.try2 (the runner keeps
 * its state there, and the second attempt starts afresh) */
static char *job_rundir(const struct plan *p, const char *name, int attempt)
{
	return attempt > 1 ? xstrfmt("%s/slurm/%s.try%d", p->run_dir, name, attempt)
			   : xstrfmt("%s/slurm/%s", p->run_dir, name);
}

/* A job of the resumed run: followed (and collected) as if just submitted. */
static void adopt(struct srun *r, struct sjob *j, long id, int attempt)
{
	struct hostrun *hr = r->hr;
	cJSON *e = cJSON_CreateObject();
	j->id = id;
	j->state = JOB_QUEUED;
	j->adopted = 1;
	if (attempt > 1) {
		j->attempt = attempt;
		free(j->rundir);
		j->rundir = job_rundir(&hr->plan, j->name, attempt);
	}
	json_add_str(e, "name", j->name);
	json_add_num(e, "job_id", (double)id);
	if (attempt > 1)
		json_add_num(e, "attempt", attempt);
	json_add_bool(e, "resumed", 1);
	record_lock(hr->ctx->rec);
	cJSON_AddItemToArray(cJSON_GetObjectItem(cJSON_GetObjectItem(hr->hj, "scheduler"), "jobs"), e);
	record_unlock(hr->ctx->rec);
	strbuf_addf(&hr->out, "  resumed %s: job %ld, submitted by the run's last controller\n", j->name, id);
}

/* --resume: a job submitted just before the last controller died, its id
 * never recorded, is found by its name (gpuorch-RUN-ID-NAME) in Slurm's list */
static void adopt_by_name(struct srun *r)
{
	struct strbuf err = STRBUF_INIT;
	char **names = xcalloc((size_t)r->njobs + 1, sizeof(char *));
	long *ids = xcalloc((size_t)r->njobs + 1, sizeof(long));
	int i;
	for (i = 0; i < r->njobs; i++)
		if (!r->jobs[i].adopted)
			names[i] = xstrfmt("gpuorch-%s-%s", r->hr->ctx->run_id, r->jobs[i].name);
	if (slurm_find_jobs(r->sc, names, r->njobs, ids, &err) != GO_OK)
		strbuf_addf(&r->hr->out, "  warning: cannot list the cluster's jobs to find this run's: %s\n",
			    err.buf);
	for (i = 0; i < r->njobs; i++) {
		if (ids[i] > 0)
			adopt(r, &r->jobs[i], ids[i], 1);
		free(names[i]);
	}
	free(names);
	free(ids);
	strbuf_release(&err);
}

/* One job per build to make and per step to run; what cannot run is recorded now. */
/* The jobs j waits for (afterok), into d: its program's build job and, for
 * a kernel_timing step, the CUPTI library's. Returns how many. */
static int job_deps(const struct sjob *j, int d[2])
{
	int n = 0;
	if (j->dep >= 0)
		d[n++] = j->dep;
	if (j->dep_lib >= 0)
		d[n++] = j->dep_lib;
	return n;
}

/* 1 while a job j waits for is not submitted yet, -1 once one ended
 * without passing (afterok will never start j), else 0 */
static int deps_state(const struct srun *r, const struct sjob *j)
{
	int d[2], n = job_deps(j, d), k, st = 0;
	for (k = 0; k < n; k++) {
		const struct sjob *b = &r->jobs[d[k]];
		if (b->state == JOB_DONE && !b->passed)
			return -1;
		if (b->state == JOB_WAITING)
			st = 1;
	}
	return st;
}

static const char *deps_failed_why(const struct srun *r, const struct sjob *j)
{
	const struct sjob *lib = j->dep_lib >= 0 ? &r->jobs[j->dep_lib] : NULL;
	if (lib && lib->state == JOB_DONE && !lib->passed)
		return "the CUPTI injection library (gpuorch_ktrace) was not built (see its build)";
	return "its build did not pass";
}

static void make_jobs(struct srun *r)
{
	struct hostrun *hr = r->hr;
	const struct plan *p = &hr->plan;
	int *job_of_build = xcalloc((size_t)p->nbuilds + 1, sizeof(int));
	long id;
	int i, attempt;

	r->jobs = xcalloc((size_t)(p->nbuilds + p->nsteps) + 1, sizeof(*r->jobs));
	for (i = 0; i < p->nbuilds; i++) {
		const struct plan_build *b = &p->builds[i];
		struct sjob *j;
		job_of_build[i] = -1;
		if (b->skip_reason) {
			record_build(hr, b, ST_SKIPPED, b->skip_reason, NULL, NULL);
			continue;
		}
		if (b->same_as) {
			/* made once, by the job of the build it is (collect records both) */
			job_of_build[i] = job_of_build[build_index(p, b->same_as)];
			continue;
		}
		j = &r->jobs[r->njobs];
		j->is_build = 1;
		j->idx = i;
		j->dep = j->dep_lib = -1;
		j->attempt = 1;
		j->name = xstrfmt("build-%.16s", b->key);
		j->rundir = job_rundir(p, j->name, 1);
		if ((id = resumed_job(hr, j->name, &attempt)) > 0)
			adopt(r, j, id, attempt);
		job_of_build[i] = r->njobs++;
	}
	for (i = 0; i < p->nsteps; i++) {
		const struct plan_step *ps = &p->steps[i];
		struct sjob *j;
		int bi = ps->build ? build_index(p, ps->build) : -1;
		char *slug;
		if (ps->skip_reason || (bi >= 0 && job_of_build[bi] < 0)) {
			struct strbuf why = STRBUF_INIT;
			if (ps->skip_reason)
				strbuf_addstr(&why, ps->skip_reason);
			else
				strbuf_addf(&why, "its build was not made: %s", p->builds[bi].skip_reason);
			record_step(hr, ps, ST_SKIPPED, &why, NULL, NULL, NULL);
			strbuf_release(&why);
			continue;
		}
		j = &r->jobs[r->njobs++];
		j->idx = i;
		j->dep = bi >= 0 ? job_of_build[bi] : -1;
		/* the library a kernel_timing step runs its program under is a
		 * build job of its own (the host runner builds it before any step) */
		j->dep_lib = ps->step->kind == STEP_KERNEL_TIMING && p->ktrace
			     ? job_of_build[build_index(p, p->ktrace)] : -1;
		slug = plan_slug(ps->id, 80);
		j->name = xstrfmt("step-%03d-%s", i, slug);
		free(slug);
		j->attempt = 1;
		j->rundir = job_rundir(p, j->name, 1);
		if ((id = resumed_job(hr, j->name, &attempt)) > 0)
			adopt(r, j, id, attempt);
	}
	free(job_of_build);
	if (hr->ctx->resumed)
		adopt_by_name(r);
}

static enum go_status write_plan(struct srun *r, struct sjob *j, struct strbuf *err)
{
	struct hostrun *hr = r->hr;
	const struct plan *p = &hr->plan;
	struct runplan rp;
	struct runplan_build rb;
	struct runplan_step rs;
	const struct plan_build *b;
	struct strbuf text = STRBUF_INIT, cmd = STRBUF_INIT;
	char *path, *step_dir = NULL;
	enum go_status st;

	memset(&rp, 0, sizeof(rp));
	memset(&rb, 0, sizeof(rb));
	memset(&rs, 0, sizeof(rs));
	rp.src_dir = p->src_dir;
	rp.max_builds = 1;
	rp.fail_fast = 1;
	rp.text_cap = RUNPLAN_TEXT_CAP_DEFAULT;
	b = j->is_build ? &p->builds[j->idx] : p->steps[j->idx].build;
	if (b) {
		rb.id = b->key;
		rb.dir = b->dir;
		rb.bin = b->bin;
		rb.command = b->command;
		rb.timeout_s = hr->ctx->spec->build_timeout_s;
		rp.builds = &rb;
		rp.nbuilds = 1;
	}
	if (!j->is_build) {
		const struct plan_step *ps = &p->steps[j->idx];
		rs.id = ps->id;
		/* a second attempt's step starts afresh: the first one's processes
		 * may outlive its job (a runner killed before it could stop them,
		 * proctrack/pgid) and must not hand it their outputs */
		step_dir = j->attempt > 1 ? xstrfmt("%s.try%d", ps->dir, j->attempt) : NULL;
		rs.dir = step_dir ? step_dir : ps->dir;
		rs.command = ps->command;
		rs.lock_path = NULL;   /* the GPU is Slurm's allocation: no gpuorch lock */
		rs.build_id = b ? b->key : NULL;
		rs.timeout_s = ps->step->timeout_s;
		rs.lock_wait_s = 0;
		rp.steps = &rs;
		rp.nsteps = 1;
	}
	st = runplan_write(&rp, &text, err);
	free(step_dir);
	if (st != GO_OK) {
		strbuf_release(&text);
		return st;
	}
	strbuf_addstr(&cmd, "mkdir -p ");
	strbuf_add_shell_quoted(&cmd, j->rundir);
	st = rexec(hr, cmd.buf, NULL, err);
	path = xstrfmt("%s/plan.sh", j->rundir);
	if (st == GO_OK)
		st = upload(hr, path, text.buf, text.len, 0600, err);
	free(path);
	strbuf_release(&text);
	strbuf_release(&cmd);
	return st;
}

static enum go_status submit(struct srun *r, struct sjob *j, struct strbuf *err)
{
	struct hostrun *hr = r->hr;
	struct slurm_job_req req;
	struct strbuf script = STRBUF_INIT, dep = STRBUF_INIT, warn = STRBUF_INIT;
	char *name, *out;
	enum go_status st = write_plan(r, j, err);

	if (st != GO_OK)
		return st;
	/* the node's GPU facts (when it has one), then the runner in the foreground */
	strbuf_addstr(&script, "#!/bin/sh\n# gpuorch: one job of a run (docs/slurm.md)\ncd ");
	strbuf_add_shell_quoted(&script, j->rundir);
	strbuf_addstr(&script, " || exit 3\n"
			       "{ uname -n; echo \"CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-}\"; "
			       "nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm "
			       "--format=csv,noheader 2>&1 || true; } >node.txt 2>&1\n"
			       "/bin/sh ");
	strbuf_add_shell_quoted(&script, r->runner);
	strbuf_addstr(&script, " run ");
	strbuf_add_shell_quoted(&script, j->rundir);
	/* the runner exits 0 when it ran its plan, whatever the build did: a
	 * build job must fail when its build did, or afterok would start the
	 * step jobs of a failed build */
	strbuf_addstr(&script, " || exit $?\n");
	if (j->is_build)
		strbuf_addstr(&script, "read -r b <.builds/1 && [ \"$b\" = pass ] || exit 1\n");
	/* a second attempt's build job has passed (else it would not have run):
	 * its dependency is met, and Slurm may have forgotten that job by now */
	{
		int d[2], n = job_deps(j, d), k;
		for (k = 0; k < n; k++)
			if (!(j->attempt > 1 && r->jobs[d[k]].state == JOB_DONE))
				strbuf_addf(&dep, "%s%ld", dep.len ? ":" : "afterok:", r->jobs[d[k]].id);
	}
	name = xstrfmt("gpuorch-%s-%s", hr->ctx->run_id, j->name);
	out = xstrfmt("%s/slurm-%%j.out", j->rundir);
	memset(&req, 0, sizeof(req));
	req.name = name;
	req.script = script.buf;
	req.cwd = j->rundir;
	req.std_out = out;
	req.dependency = dep.len ? dep.buf : NULL;
	req.gpu = !j->is_build && hr->plan.steps[j->idx].needs_gpu;
	if (req.dependency)
		snprintf(j->dep_sent, sizeof(j->dep_sent), "%s", req.dependency);
	st = slurm_submit(r->sc, &req, &j->id, &warn, err);
	if (st == GO_OK) {
		/* every submitted job id is in the record at once: a controller
		 * that dies leaves them there */
		cJSON *e = cJSON_CreateObject();
		json_add_str(e, "name", j->name);
		json_add_num(e, "job_id", (double)j->id);
		if (j->attempt > 1)
			json_add_num(e, "attempt", j->attempt);
		record_lock(hr->ctx->rec);
		cJSON_AddItemToArray(cJSON_GetObjectItem(cJSON_GetObjectItem(hr->hj, "scheduler"), "jobs"), e);
		record_unlock(hr->ctx->rec);   /* saved once per round (run_jobs) */
		j->state = JOB_QUEUED;
		strbuf_addf(&hr->out, "  submitted %s: job %ld%s%s%s\n", j->name, j->id,
			    dep.len ? ", after " : "", dep.buf,
			    j->attempt > 1 ? " (second attempt)" : "");
		if (warn.len)
			strbuf_addf(&hr->out, "  warning: job %ld: %s\n", j->id, warn.buf);
	}
	free(name);
	free(out);
	strbuf_release(&script);
	strbuf_release(&dep);
	strbuf_release(&warn);
	return st;
}

struct jctx {
	const char *id;
	cJSON *end;          /* the item's end event (a copy) */
};

static int on_event(const struct journal_event *e, void *arg)
{
	struct jctx *c = arg;
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
	j->rundir = job_rundir(&hr->plan, j->name, j->attempt);
	memset(&j->sj, 0, sizeof(j->sj));
	j->id = 0;
	j->state = JOB_WAITING;
	j->dep_sent[0] = j->dep_seen[0] = j->pending[0] = '\0';
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
static int collect(struct srun *r, struct sjob *j)
{
	struct hostrun *hr = r->hr;
	const struct plan *p = &hr->plan;
	struct strbuf data = STRBUF_INIT, err = STRBUF_INIT, reason = STRBUF_INIT;
	struct journal jr;
	struct jctx c;
	char *path = xstrfmt("%s/journal", j->rundir);
	enum item_status status;
	int collected = 1;

	memset(&c, 0, sizeof(c));
	c.id = j->is_build ? p->builds[j->idx].key : p->steps[j->idx].id;
	journal_init(&jr, 0);
	if (ssh_download(hr->conn, path, &data, JOURNAL_MAX, SFTP_TIMEOUT_MS, &err) == GO_OK)
		journal_feed(&jr, data.buf, data.len, on_event, &c, &err);
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
				record_build(hr, &p->builds[k], status, reason.buf, c.end, j);
		bj = record_build(hr, &p->builds[j->idx], status, reason.buf, c.end, j);
		status = ST_NONE;
		item_status_parse(json_str(bj, "status"), &status);
		strbuf_reset(&reason);
		if (json_str(bj, "reason"))
			strbuf_addstr(&reason, json_str(bj, "reason"));
		j->passed = status == ST_PASS;
	} else {
		record_step(hr, &p->steps[j->idx], status, &reason, c.end, j, &status);
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
	return collected;
}

/* A job that cannot run because its build job did not pass. */
static void skip_job(struct srun *r, struct sjob *j, const char *why)
{
	struct strbuf err = STRBUF_INIT, reason = STRBUF_INIT;
	if (j->state == JOB_QUEUED)
		slurm_cancel(r->sc, j->id, &err);
	strbuf_addstr(&reason, why);
	record_step(r->hr, &r->hr->plan.steps[j->idx], ST_SKIPPED, &reason, NULL,
		    j->state == JOB_QUEUED ? j : NULL, NULL);
	j->state = JOB_DONE;
	strbuf_release(&err);
	strbuf_release(&reason);
}

static void cancel_all(struct srun *r)
{
	struct strbuf err = STRBUF_INIT;
	int i;
	for (i = 0; i < r->njobs; i++)
		if (r->jobs[i].state == JOB_QUEUED && slurm_cancel(r->sc, r->jobs[i].id, &err) != GO_OK)
			strbuf_addf(&r->hr->out, "  warning: cannot cancel job %ld: %s\n",
				    r->jobs[i].id, err.buf);
	strbuf_release(&err);
}

static enum go_status run_jobs(struct srun *r)
{
	struct hostrun *hr = r->hr;
	struct strbuf err = STRBUF_INIT, live = STRBUF_INIT;
	long *ids = xcalloc((size_t)r->njobs + 1, sizeof(long));
	int *asked = xcalloc((size_t)r->njobs + 1, sizeof(int));   /* jobs[] index of ids[k] */
	struct slurm_job *seen = xcalloc((size_t)r->njobs + 1, sizeof(*seen));
	int64_t interval = POLL_MIN_MS, t0 = time_mono_ms(), cancel_deadline = 0;
	enum go_status st = GO_OK;
	int i, k, left = r->njobs, cancelling = 0;

	while (left > 0) {
		int inflight = 0, n = 0, changed = 0, npend = 0, nrun = 0;
		const char *why_pending = NULL;

		if (!cancelling && *hr->ctx->interrupted) {
			hr->interrupted = 1;
			cancelling = 1;
			cancel_deadline = time_mono_ms() + CANCEL_WAIT_MS;
			cancel_all(r);
			strbuf_addstr(&hr->out, "  interrupted: cancelled every queued and running job of the run\n");
		}
		/* submit while there is room; a step waits for its build's job id */
		for (i = 0; i < r->njobs; i++)
			inflight += r->jobs[i].state == JOB_QUEUED;
		for (i = 0; !cancelling && i < r->njobs && inflight < hr->h->slurm->max_jobs; i++) {
			struct sjob *j = &r->jobs[i];
			if (j->state != JOB_WAITING)
				continue;
			if (deps_state(r, j) > 0)
				continue;
			if (deps_state(r, j) < 0) {
				skip_job(r, j, deps_failed_why(r, j));
				left--;
				continue;
			}
			st = submit(r, j, &err);
			if (st != GO_OK)
				goto fail;
			inflight++;
			changed = 1;
		}
		if (changed)
			hostrun_save(hr);   /* the new job ids */
		/* one request for every job in the queue */
		for (i = 0; i < r->njobs; i++)
			if (r->jobs[i].state == JOB_QUEUED) {
				asked[n] = i;
				ids[n++] = r->jobs[i].id;
			}
		if (n) {
			st = slurm_get_jobs(r->sc, ids, n, seen, &err);
			if (st != GO_OK)
				goto fail;
		}
		for (k = 0; k < n; k++) {
			struct sjob *j = &r->jobs[asked[k]];
			/* a job requeue() withdrew in this round waits to be submitted again */
			if (j->state != JOB_QUEUED || j->id != ids[k])
				continue;
			if (strcmp(seen[k].state, j->sj.state))
				changed = 1;
			j->sj = seen[k];
			if (j->sj.dependency[0] && !j->dep_seen[0])
				snprintf(j->dep_seen, sizeof(j->dep_seen), "%s", j->sj.dependency);
			if (!j->sj.found || slurm_state_final(j->sj.state)) {
				if (collect(r, j))
					left--;
				changed = 1;
				continue;
			}
			if (!strcmp(j->sj.state, "PENDING")) {
				npend++;
				if (strcmp(j->sj.reason, "Dependency") && strcmp(j->sj.reason, "None")) {
					why_pending = j->sj.reason;
					snprintf(j->pending, sizeof(j->pending), "%s", j->sj.reason);
					if (!j->pending_since)
						j->pending_since = time_mono_ms();
				}
				/* --queue-timeout's equivalent: the entry's queue_timeout_s */
				if (j->pending_since && hr->h->slurm->queue_timeout_s && !j->queue_timed_out &&
				    time_mono_ms() - j->pending_since > (int64_t)hr->h->slurm->queue_timeout_s * 1000) {
					j->queue_timed_out = 1;
					if (slurm_cancel(r->sc, j->id, &err) != GO_OK)
						strbuf_addf(&hr->out, "  warning: cannot cancel job %ld: %s\n", j->id, err.buf);
					changed = 1;
				}
			} else {
				nrun++;
			}
		}
		/* a build job that failed: its steps will never start (afterok) */
		for (i = 0; i < r->njobs; i++) {
			struct sjob *j = &r->jobs[i];
			if (j->state == JOB_QUEUED && deps_state(r, j) < 0) {
				skip_job(r, j, deps_failed_why(r, j));
				left--;
			}
		}
		if (cancelling) {
			if (left <= 0)
				break;
			if (time_mono_ms() > cancel_deadline) {
				st = go_fail(&err, GO_ERR_TIMEOUT, "jobs still queued %d s after they were cancelled",
					     CANCEL_WAIT_MS / 1000);
				goto fail;
			}
		}
		strbuf_reset(&live);
		strbuf_addf(&live, "%d running, %d pending%s%s%s, %d of %d done (%.0f s)", nrun, npend,
			    why_pending ? " (" : "", why_pending ? why_pending : "", why_pending ? ")" : "",
			    r->njobs - left, r->njobs, (double)(time_mono_ms() - t0) / 1000.0);
		live_set(hr->ctx->live, hr->index, "jobs", live.buf);
		if (left <= 0)
			break;
		interval = changed ? POLL_MIN_MS : interval * 2 > POLL_MAX_MS ? POLL_MAX_MS : interval * 2;
		/* sleep in slices so Ctrl-C is seen at once */
		{
			int64_t until = time_mono_ms() + interval;
			while (time_mono_ms() < until && (cancelling || !*hr->ctx->interrupted))
				time_sleep_ms(100);
		}
	}
	goto out;
fail:
	/* the scheduler cannot be reached or refused: the jobs stay; their ids
	 * are in the record, and the error names each one (issue 31, item 7) */
	{
		int nleft = 0;
		for (i = 0; i < r->njobs; i++)
			if (r->jobs[i].state == JOB_QUEUED)
				strbuf_addf(&err, "%s job %ld (%s)", nleft++ ? "," : "; left in Slurm:",
					    r->jobs[i].id, r->jobs[i].name);
		if (nleft)
			strbuf_addf(&err, ": 'gpuorch run SPEC --hosts FILE --resume %s' collects %s "
				    "(or scancel %s)", hr->ctx->run_id, nleft == 1 ? "it" : "them",
				    nleft == 1 ? "it" : "them");
	}
	strbuf_addf(&hr->out, "  jobs: FAILED: %s\n", err.buf);
	hr->failed = 1;
	hostrun_status(hr, HOST_FAILED, err.buf);
out:
	free(ids);
	free(asked);
	free(seen);
	strbuf_release(&err);
	strbuf_release(&live);
	return st;
}

void slurmrun_main(void *arg)
{
	struct hostrun *hr = arg;
	struct srun r;
	int i;

	memset(&r, 0, sizeof(r));
	r.hr = hr;
	r.t0 = time_mono_ms();
	strbuf_addf(&hr->out, "%s (Slurm cluster %s, login %s@%s:%d)\n", hr->h->name,
		    hr->h->slurm->url, hr->h->user, hr->h->address, hr->h->port);
	hostrun_stamp(hr, "started_at");
	if (setup(&r) == GO_OK) {
		int64_t t0 = time_mono_ms();
		hostrun_runner(hr, "slurm-job");   /* each job's own script runs its steps */
		make_jobs(&r);
		if (run_jobs(&r) == GO_OK) {
			char *d = xstrfmt("%d jobs, %ld REST requests", r.njobs, slurm_requests(r.sc));
			hostrun_phase(hr, "jobs", hr->interrupted ? ST_KILLED : ST_PASS, t0, d);
			free(d);
		}
		record_lock(hr->ctx->rec);
		json_add_num(cJSON_GetObjectItem(hr->hj, "scheduler"), "rest_requests",
			     (double)slurm_requests(r.sc));
		json_add_num(cJSON_GetObjectItem(hr->hj, "scheduler"), "token_mints",
			     (double)slurm_token_mints(r.sc));
		record_unlock(hr->ctx->rec);
	}
	if (!hr->failed)
		hostrun_status(hr, hr->interrupted ? HOST_FAILED : HOST_OK,
			    hr->interrupted ? "interrupted" : NULL);
	if (hr->have_plan) {
		hostrun_judge(hr);   /* sweeps and gates, as for an SSH host */
		hostrun_save(hr);
	}
	hostrun_stamp(hr, "ended_at");
	live_done(hr->ctx->live, hr->index,
		  hr->failed ? "cluster FAILED" : hr->nfailed_steps ? "finished, with failures" : "finished, all passed");
	for (i = 0; i < r.njobs; i++) {
		free(r.jobs[i].name);
		free(r.jobs[i].rundir);
		free(r.jobs[i].first_rundir);
	}
	free(r.jobs);
	free(r.runner);
	slurm_close(r.sc);
	ssh_disconnect(hr->conn);
	hr->conn = NULL;
}
