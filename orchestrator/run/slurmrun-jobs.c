/* slurmrun-jobs.c -- the Slurm executor's jobs: one batch job per build
 * and per step (a step's after its build's: afterok), each with its plan
 * (hostrun_write_plan, as an SSH host's runner would run it) and the batch
 * script slurm-job.sh, which runs the plan with the host agent. At most
 * max_jobs are in the queue at once; all are watched with one GET /jobs a
 * round, the interval doubling from 0.5 to 4 s while nothing changes; a
 * job that ended is collected (slurmrun-collect.c). --resume adopts the
 * jobs the run's last controller submitted; Ctrl-C cancels (DELETE) every
 * job of the run still queued or running. */
#include "run/slurmrun-int.h"
#include "store/runkeys.h"
#include "run/slurm-job-script.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/jsonutil.h"
#include "core/timeutil.h"
#include "remote/remote.h"
#include "store/runread.h"
#include "core/trace.h"
#include "core/banned.h"

#define POLL_MIN_MS 500
#define POLL_MAX_MS 4000
#define CANCEL_WAIT_MS 30000

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
		cJSON_ArrayForEach(e, rr_arr(rr_obj(h, RK_SCHEDULER), "jobs")) {
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

/* A job of the resumed run: followed (and collected) as if just submitted. */
static void adopt(struct srun *r, struct sjob *j, long id, int attempt)
{
	struct hostrun *hr = r->hr;
	j->id = id;
	j->state = JOB_QUEUED;
	j->adopted = 1;
	if (attempt > 1) {
		j->attempt = attempt;
		free(j->rundir);
		j->rundir = sr_job_rundir(&hr->plan, j->name, attempt);
	}
	runw_sched_job(hr->ctx->rec, hr->index, j->name, id, attempt, 1);
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

void sr_make_jobs(struct srun *r)
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
			sr_record_build(hr, b, ST_SKIPPED, b->skip_reason, NULL, NULL);
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
		j->rundir = sr_job_rundir(p, j->name, 1);
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
			sr_record_step(hr, ps, ST_SKIPPED, &why, NULL, NULL, NULL);
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
		j->rundir = sr_job_rundir(p, j->name, 1);
		if ((id = resumed_job(hr, j->name, &attempt)) > 0)
			adopt(r, j, id, attempt);
	}
	free(job_of_build);
	if (hr->ctx->resumed)
		adopt_by_name(r);
}

/* The job's plan (hostrun_write_plan: one build, or one step with its
 * build, as an SSH host's runner would run them) into its run dir. */
static enum go_status write_plan(struct srun *r, struct sjob *j, struct strbuf *err)
{
	struct hostrun *hr = r->hr;
	struct hostrun_plan_part part = { .all = 0, .build = -1, .step = -1, .gpu_lock = 0 };
	struct strbuf text = STRBUF_INIT, cmd = STRBUF_INIT;
	char *path;
	enum go_status st;

	if (j->is_build)
		part.build = j->idx;
	else
		part.step = j->idx;
	part.attempt = j->attempt;
	st = hostrun_write_plan(hr, &part, NULL, &text, NULL, err);
	if (st != GO_OK) {
		strbuf_release(&text);
		return st;
	}
	strbuf_addstr(&cmd, "mkdir -p ");
	strbuf_add_shell_quoted(&cmd, j->rundir);
	st = sr_rexec(hr, cmd.buf, NULL, err);
	path = xstrfmt("%s/plan.sh", j->rundir);
	if (st == GO_OK)
		st = sr_upload(hr, path, text.buf, text.len, 0600, err);
	free(path);
	strbuf_release(&text);
	strbuf_release(&cmd);
	return st;
}

/* The job's batch script: "#!/bin/sh", the assignments slurm-job.sh reads,
 * then slurm-job.sh (the node's facts, the host agent or runner.sh on the
 * job's plan). */
static void job_script(struct srun *r, const struct sjob *j, struct strbuf *sb)
{
	strbuf_addstr(sb, "#!/bin/sh\n# gpuorch: one job of a run (docs/slurm.md)\nrd=");
	strbuf_add_shell_quoted(sb, j->rundir);
	strbuf_addstr(sb, " runner=");
	strbuf_add_shell_quoted(sb, r->runner);
	strbuf_addstr(sb, " ad=");
	strbuf_add_shell_quoted(sb, r->agent_dir);
	strbuf_addf(sb, " av=%s build=%d\n", remote_agent_version(), j->is_build);
	strbuf_add(sb, gpuorch_slurm_job_sh, gpuorch_slurm_job_sh_len);
}

/* Every submitted job id is in the record at once: a controller that dies
 * leaves them there (saved once per round: sr_run_jobs). */
static void record_submitted(struct hostrun *hr, const struct sjob *j)
{
	runw_sched_job(hr->ctx->rec, hr->index, j->name, j->id, j->attempt, 0);
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
	job_script(r, j, &script);
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
	req.ngpus = req.gpu ? hr->plan.steps[j->idx].step->gpus : 0;
	if (req.dependency)
		snprintf(j->dep_sent, sizeof(j->dep_sent), "%s", req.dependency);
	st = slurm_submit(r->sc, &req, &j->id, &warn, err);
	if (st == GO_OK) {
		record_submitted(hr, j);
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

/* The watch loop's state across rounds (sr_run_jobs). */
struct watch {
	long *ids;                /* the jobs asked about this round */
	int *asked;               /* jobs[] index of ids[k] */
	struct slurm_job *seen;   /* Slurm's answer for ids[k] */
	int left;                 /* jobs not done */
	int cancelling;           /* Ctrl-C: every job was cancelled */
	int64_t cancel_deadline, t0;
	/* this round */
	int changed, npend, nrun;
	const char *why_pending;
};

/* Ctrl-C, seen once: cancel every job of the run. */
static void watch_interrupt(struct srun *r, struct watch *w)
{
	struct hostrun *hr = r->hr;
	if (w->cancelling || !*hr->ctx->interrupted)
		return;
	hr->interrupted = 1;
	w->cancelling = 1;
	w->cancel_deadline = time_mono_ms() + CANCEL_WAIT_MS;
	cancel_all(r);
	strbuf_addstr(&hr->out, "  interrupted: cancelled every queued and running job of the run\n");
}

/* Submit while there is room; a step waits for its build's job id, and is
 * skipped once that build failed. */
static enum go_status submit_round(struct srun *r, struct watch *w, struct strbuf *err)
{
	struct hostrun *hr = r->hr;
	int i, inflight = 0;

	for (i = 0; i < r->njobs; i++)
		inflight += r->jobs[i].state == JOB_QUEUED;
	for (i = 0; !w->cancelling && i < r->njobs && inflight < hr->h->slurm->max_jobs; i++) {
		struct sjob *j = &r->jobs[i];
		enum go_status st;
		if (j->state != JOB_WAITING || deps_state(r, j) > 0)
			continue;
		if (deps_state(r, j) < 0) {
			sr_skip_job(r, j, deps_failed_why(r, j));
			w->left--;
			continue;
		}
		st = submit(r, j, err);
		if (st != GO_OK)
			return st;
		inflight++;
		w->changed = 1;
	}
	if (w->changed)
		hostrun_save(hr);   /* the new job ids */
	return GO_OK;
}

/* A reason a job waits for that no poll saw before: into the job's entry
 * of scheduler.jobs and saved at once, so a reader of the record sees why
 * the run waits while it waits (the job's full entry comes at its end). */
static void record_pending(struct hostrun *hr, const struct sjob *j)
{
	runw_sched_job_pending(hr->ctx->rec, hr->index, j->id, j->pending);
	hostrun_save(hr);
}

/* A job still pending: why, and whether queue_timeout_s (the entry's
 * --queue-timeout) has passed since it began waiting for that. */
static void watch_pending(struct srun *r, struct watch *w, struct sjob *j)
{
	struct hostrun *hr = r->hr;
	struct strbuf err = STRBUF_INIT;

	w->npend++;
	if (strcmp(j->sj.reason, "Dependency") && strcmp(j->sj.reason, "None")) {
		w->why_pending = j->sj.reason;
		if (strcmp(j->pending, j->sj.reason)) {
			snprintf(j->pending, sizeof(j->pending), "%s", j->sj.reason);
			record_pending(hr, j);
		}
		if (!j->pending_since)
			j->pending_since = time_mono_ms();
	}
	if (j->pending_since && hr->h->slurm->queue_timeout_s && !j->queue_timed_out &&
	    time_mono_ms() - j->pending_since > (int64_t)hr->h->slurm->queue_timeout_s * 1000) {
		j->queue_timed_out = 1;
		if (slurm_cancel(r->sc, j->id, &err) != GO_OK)
			strbuf_addf(&hr->out, "  warning: cannot cancel job %ld: %s\n", j->id, err.buf);
		w->changed = 1;
	}
	strbuf_release(&err);
}

/* One request for every job in the queue; each job that ended is collected. */
static enum go_status poll_round(struct srun *r, struct watch *w, struct strbuf *err)
{
	int i, k, n = 0;

	for (i = 0; i < r->njobs; i++)
		if (r->jobs[i].state == JOB_QUEUED) {
			w->asked[n] = i;
			w->ids[n++] = r->jobs[i].id;
		}
	if (n) {
		enum go_status st = slurm_get_jobs(r->sc, w->ids, n, w->seen, err);
		if (st != GO_OK)
			return st;
	}
	for (k = 0; k < n; k++) {
		struct sjob *j = &r->jobs[w->asked[k]];
		/* a job requeue() withdrew in this round waits to be submitted again */
		if (j->state != JOB_QUEUED || j->id != w->ids[k])
			continue;
		if (strcmp(w->seen[k].state, j->sj.state))
			w->changed = 1;
		j->sj = w->seen[k];
		if (j->sj.dependency[0] && !j->dep_seen[0])
			snprintf(j->dep_seen, sizeof(j->dep_seen), "%s", j->sj.dependency);
		if (!j->sj.found || slurm_state_final(j->sj.state)) {
			if (sr_collect(r, j))
				w->left--;
			w->changed = 1;
		} else if (!strcmp(j->sj.state, "PENDING")) {
			watch_pending(r, w, j);
		} else {
			w->nrun++;
		}
	}
	/* a build job that failed: its steps will never start (afterok) */
	for (i = 0; i < r->njobs; i++) {
		struct sjob *j = &r->jobs[i];
		if (j->state == JOB_QUEUED && deps_state(r, j) < 0) {
			sr_skip_job(r, j, deps_failed_why(r, j));
			w->left--;
		}
	}
	return GO_OK;
}

/* The live view's line for the jobs. */
static void watch_live(struct srun *r, const struct watch *w)
{
	struct strbuf live = STRBUF_INIT;
	strbuf_addf(&live, "%d running, %d pending%s%s%s, %d of %d done (%.0f s)", w->nrun, w->npend,
		    w->why_pending ? " (" : "", w->why_pending ? w->why_pending : "",
		    w->why_pending ? ")" : "", r->njobs - w->left, r->njobs,
		    (double)(time_mono_ms() - w->t0) / 1000.0);
	live_set(r->hr->ctx->live, r->hr->index, "jobs", live.buf);
	strbuf_release(&live);
}

/* The scheduler cannot be reached or refused: the jobs stay; their ids are
 * in the record, and the error names each one (issue 31, item 7). */
static void jobs_failed(struct srun *r, struct strbuf *err)
{
	struct hostrun *hr = r->hr;
	int i, nleft = 0;
	for (i = 0; i < r->njobs; i++)
		if (r->jobs[i].state == JOB_QUEUED)
			strbuf_addf(err, "%s job %ld (%s)", nleft++ ? "," : "; left in Slurm:",
				    r->jobs[i].id, r->jobs[i].name);
	if (nleft)
		strbuf_addf(err, ": 'gpuorch run SPEC --hosts FILE --resume %s' collects %s "
			    "(or scancel %s)", hr->ctx->run_id, nleft == 1 ? "it" : "them",
			    nleft == 1 ? "it" : "them");
	strbuf_addf(&hr->out, "  jobs: FAILED: %s\n", err->buf);
	hr->failed = 1;
	hostrun_status(hr, HOST_FAILED, err->buf);
}

/* Sleep interval ms in slices, so that Ctrl-C is seen at once. */
static void watch_sleep(struct srun *r, const struct watch *w, int64_t interval)
{
	int64_t until = time_mono_ms() + interval;
	int64_t t0 = trace_now_us();
	while (time_mono_ms() < until && (w->cancelling || !*r->hr->ctx->interrupted))
		time_sleep_ms(100);
	if (trace_on()) {
		struct trace_args a = TRACE_ARGS_INIT;
		a.detail = "slurm jobs poll";
		trace_span(r->hr->h->name, "wait", t0, &a);
	}
}

enum go_status sr_run_jobs(struct srun *r)
{
	struct strbuf err = STRBUF_INIT;
	struct watch w;
	int64_t interval = POLL_MIN_MS;
	enum go_status st = GO_OK;

	memset(&w, 0, sizeof(w));
	w.ids = xcalloc((size_t)r->njobs + 1, sizeof(long));
	w.asked = xcalloc((size_t)r->njobs + 1, sizeof(int));
	w.seen = xcalloc((size_t)r->njobs + 1, sizeof(*w.seen));
	w.left = r->njobs;
	w.t0 = time_mono_ms();
	while (w.left > 0) {
		w.changed = w.npend = w.nrun = 0;
		w.why_pending = NULL;
		watch_interrupt(r, &w);
		st = submit_round(r, &w, &err);
		if (st == GO_OK)
			st = poll_round(r, &w, &err);
		if (st == GO_OK && w.cancelling && w.left > 0 && time_mono_ms() > w.cancel_deadline)
			st = go_fail(&err, GO_ERR_TIMEOUT, "jobs still queued %d s after they were cancelled",
				     CANCEL_WAIT_MS / 1000);
		if (st != GO_OK) {
			jobs_failed(r, &err);
			break;
		}
		watch_live(r, &w);
		if (w.left <= 0)
			break;
		interval = w.changed ? POLL_MIN_MS : interval * 2 > POLL_MAX_MS ? POLL_MAX_MS : interval * 2;
		watch_sleep(r, &w, interval);
	}
	free(w.ids);
	free(w.asked);
	free(w.seen);
	strbuf_release(&err);
	return st;
}
