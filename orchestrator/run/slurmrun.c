/* slurmrun.c -- the Slurm cluster's executor (remote/executor.h): a run on a
 * cluster, one batch job per build and per step, watched over REST.
 *
 * Transport stays SSH (the login node: sources to the shared work dir W,
 * plans, journals back); scheduling goes through slurmrestd (sched/slurm.h).
 * Every build and every step is a batch job (slurmrun-jobs.c) that runs the
 * host agent -- the same program an SSH host runs (docs/runner.md), built
 * by the first job on the compute nodes from the sources shipped to
 * W/agent/, never on the login node; runner.sh (shipped to
 * W/runs/<run-id>/runner.sh) only where a compute node has no C compiler --
 * on a plan of its own in W/runs/<run-id>/slurm/<job>/, written by the SSH
 * host's hostrun_write_plan: a build job's plan has the one build; a step
 * job's has its build (reused: the build job left rc = 0 in
 * W/builds/<key>) and the step, and depends on the build job (afterok).
 * When a job ends its journal is read back over SFTP and the build or step
 * recorded like an SSH host's (slurmrun-collect.c), plus the job's id,
 * node, queue wait, run time and runner. This file: the phases before the
 * jobs (scheduler, login node, ship) and the executor's main. */
#include "run/slurmrun.h"
#include "run/slurmrun-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/jsonutil.h"
#include "core/timeutil.h"
#include "remote/agent-source.h"
#include "remote/remote.h"
#include "remote/runner-script.h"
#include "core/banned.h"

/* The scheduler first: nothing is shipped to a cluster we cannot submit
 * to. Its facts go into the record's "scheduler". */
static enum go_status setup_scheduler(struct srun *r)
{
	struct hostrun *hr = r->hr;
	const struct host *h = hr->h;
	struct strbuf err = STRBUF_INIT;
	int64_t t0 = time_mono_ms();
	enum go_status st;
	struct runw_scheduler sched;

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
		sr_fail_host(hr, "scheduler", t0, err.buf);
		strbuf_release(&err);
		return st;
	}
	sched.url = h->slurm->url;
	sched.api_version = slurm_api_version(r->sc);
	sched.slurm_release = slurm_release(r->sc);
	sched.partition = h->slurm->partition;
	sched.gpus = h->slurm->gpus;
	sched.token_source = slurm_token_source(r->sc);
	sched.max_jobs = h->slurm->max_jobs;
	sched.time_limit_min = h->slurm->time_limit_min;
	sched.queue_timeout_s = h->slurm->queue_timeout_s;
	runw_host_scheduler(hr->ctx->rec, hr->index, &sched);
	hostrun_phase(hr, "scheduler", ST_PASS, t0, slurm_api_version(r->sc));
	strbuf_addf(&hr->out, "  scheduler: slurmrestd %s, API %s (Slurm %s), partition %s\n",
		    h->slurm->url, slurm_api_version(r->sc),
		    slurm_release(r->sc) ? slurm_release(r->sc) : "?", h->slurm->partition);
	strbuf_release(&err);
	return GO_OK;
}

/* The login node: probe its tools (the shared software the jobs use); the
 * archs from the entry (compute nodes are not probed); the plan. */
static enum go_status setup_login(struct srun *r)
{
	struct hostrun *hr = r->hr;
	const struct host *h = hr->h;
	const struct spec *s = hr->ctx->spec;
	struct strbuf err = STRBUF_INIT;
	struct ssh_opts o;
	int64_t t0 = time_mono_ms();
	enum go_status st;
	int i;

	live_set(hr->ctx->live, hr->index, "connect", "login node");
	host_ssh_opts(h, hr->ctx->accept_new_hostkey, &o);
	st = ssh_connect(&o, &hr->conn, &err);
	if (st == GO_OK)
		st = probe_host(hr->conn, h->cuda_home, h->python, h->workdir, 0, &hr->info, NULL, &err);
	if (st != GO_OK) {
		sr_fail_host(hr, "connect", t0, err.buf);
		strbuf_release(&err);
		return st;
	}
	hr->have_info = 1;
	hr->workdir = host_workdir(h, hr->info.home);
	/* compute nodes are not probed: the entry's "arch" names their GPUs */
	if (h->arch) {
		hr->run_arch = xstrdup(h->arch);
		hostrun_add_arch(hr, h->arch);
	} else {
		for (i = 0; i < s->ntargets; i++)
			hostrun_add_arch(hr, s->targets[i].arch);
	}
	/* info.arch: the compute nodes' (the entry's), which gates and reports
	 * read as the arch the steps ran on, not the login node's own GPU */
	hostrun_record_info(hr, "login node (probed for tools; jobs run on compute nodes)");
	hostrun_phase(hr, "connect", ST_PASS, t0, hr->info.hostname);

	hostrun_make_plan(hr, "the cluster entry names no \"arch\" for its GPUs (set \"arch\", e.g. "
			  "\"sm_90a\", to run GPU steps)", h->slurm->gpus);
	/* which builds and steps are in the record (for plan order); freed by hostrun_release */
	hr->recorded = xcalloc((size_t)(hr->plan.nbuilds + hr->plan.nsteps) + 1, 1);
	strbuf_release(&err);
	return GO_OK;
}

/* The sources, content addressed as for an SSH host: 1 in *reused when W
 * already held them. */
static enum go_status ship_sources(struct srun *r, int *reused, struct strbuf *err)
{
	struct hostrun *hr = r->hr;
	struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	char *tar = xstrfmt("%s/src.tar", hr->plan.content_dir);
	enum go_status st;

	strbuf_addstr(&cmd, "test -f ");
	strbuf_add_shell_quoted(&cmd, hr->plan.content_dir);
	strbuf_addstr(&cmd, "/.complete && echo present || { mkdir -p ");
	strbuf_add_shell_quoted(&cmd, hr->plan.content_dir);
	strbuf_addstr(&cmd, " && echo absent; }");
	st = sr_rexec(hr, cmd.buf, &out, err);
	*reused = st == GO_OK && strstr(out.buf, "present") != NULL;
	if (st == GO_OK && !*reused)
		st = sr_upload(hr, tar, hr->ctx->pack->data, hr->ctx->pack->len, 0600, err);
	if (st == GO_OK && !*reused) {
		strbuf_reset(&cmd);
		strbuf_addstr(&cmd, "cd ");
		strbuf_add_shell_quoted(&cmd, hr->plan.content_dir);
		strbuf_addstr(&cmd, " && rm -rf src && mkdir src && tar -xf src.tar -C src && chmod -R go-rwx src && touch .complete");
		st = sr_rexec(hr, cmd.buf, NULL, err);
	}
	free(tar);
	strbuf_release(&cmd);
	strbuf_release(&out);
	return st;
}

/* What the jobs run: runner.sh into the run's directory (the fallback),
 * and the agent's sources, once per version, into W/agent/ as one bundle
 * (scripts/agent-bundle.sh) that the first job on the compute nodes builds
 * (slurm-job.sh): the login node never compiles. 1 in *agent_sent when the
 * bundle went now. */
static enum go_status ship_runners(struct srun *r, int *agent_sent, struct strbuf *err)
{
	struct hostrun *hr = r->hr;
	struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	char *bundle = xstrfmt("%s/gpuorch-agent-%s.bundle", r->agent_dir, remote_agent_version());
	char *tmp = xstrfmt("%s.tmp", bundle);
	enum go_status st;

	strbuf_addstr(&cmd, "mkdir -p ");
	strbuf_add_shell_quoted(&cmd, hr->plan.run_dir);
	strbuf_addstr(&cmd, "/slurm ");
	strbuf_add_shell_quoted(&cmd, r->agent_dir);
	strbuf_addstr(&cmd, " && chmod 700 ");
	strbuf_add_shell_quoted(&cmd, r->agent_dir);
	strbuf_addstr(&cmd, " && { test -s ");
	strbuf_add_shell_quoted(&cmd, bundle);
	strbuf_addstr(&cmd, " && echo agent-present || echo agent-absent; }");
	st = sr_rexec(hr, cmd.buf, &out, err);
	*agent_sent = st == GO_OK && !strstr(out.buf, "agent-present");
	if (st == GO_OK)
		st = sr_upload(hr, r->runner, gpuorch_runner_sh, gpuorch_runner_sh_len, 0600, err);
	/* under a temporary name first: a job never reads half a bundle */
	if (st == GO_OK && *agent_sent)
		st = sr_upload(hr, tmp, gpuorch_agent_src, gpuorch_agent_src_len, 0600, err);
	if (st == GO_OK && *agent_sent) {
		strbuf_reset(&cmd);
		strbuf_addstr(&cmd, "mv -f ");
		strbuf_add_shell_quoted(&cmd, tmp);
		strbuf_addch(&cmd, ' ');
		strbuf_add_shell_quoted(&cmd, bundle);
		st = sr_rexec(hr, cmd.buf, NULL, err);
	}
	free(bundle);
	free(tmp);
	strbuf_release(&cmd);
	strbuf_release(&out);
	return st;
}

/* The ship phase: the sources, runner.sh and the agent's sources. */
static enum go_status ship(struct srun *r)
{
	struct hostrun *hr = r->hr;
	struct strbuf err = STRBUF_INIT, out = STRBUF_INIT;
	int64_t t0 = time_mono_ms();
	enum go_status st;
	int reused = 0, agent_sent = 0;

	live_set(hr->ctx->live, hr->index, "ship", hr->ctx->pack->content_id);
	r->runner = xstrfmt("%s/runner.sh", hr->plan.run_dir);
	r->agent_dir = xstrfmt("%s/agent", hr->workdir);
	st = ship_sources(r, &reused, &err);
	if (st == GO_OK)
		st = ship_runners(r, &agent_sent, &err);
	if (st != GO_OK) {
		sr_fail_host(hr, "ship", t0, err.buf);
		strbuf_release(&err);
		return st;
	}
	if (reused)
		strbuf_addf(&out, "content %.12s already in the shared work dir",
			    hr->ctx->pack->content_id);
	else
		strbuf_addf(&out, "%zu bytes sent", hr->ctx->pack->len);
	if (agent_sent)
		strbuf_addf(&out, ", the host agent's sources (%zu bytes, built by the first job)",
			    gpuorch_agent_src_len);
	hostrun_phase(hr, "ship", ST_PASS, t0, out.buf);
	strbuf_addf(&hr->out, "  ship: %s\n", out.buf);
	strbuf_release(&err);
	strbuf_release(&out);
	return GO_OK;
}

/* The jobs phase, and the scheduler's counts into the record. */
static void jobs_phase(struct srun *r)
{
	struct hostrun *hr = r->hr;
	int64_t t0 = time_mono_ms();

	hostrun_runner(hr, "slurm-job");   /* each job's own script runs its steps */
	sr_make_jobs(r);
	if (sr_run_jobs(r) == GO_OK) {
		char *d = xstrfmt("%d jobs, %ld REST requests", r->njobs, slurm_requests(r->sc));
		hostrun_phase(hr, "jobs", hr->interrupted ? ST_KILLED : ST_PASS, t0, d);
		free(d);
	}
	runw_sched_counts(hr->ctx->rec, hr->index, slurm_requests(r->sc), slurm_token_mints(r->sc));
}

static void slurm_run(struct hostrun *hr)
{
	struct srun r;
	int i;

	memset(&r, 0, sizeof(r));
	r.hr = hr;
	r.t0 = time_mono_ms();
	strbuf_addf(&hr->out, "%s (Slurm cluster %s, login %s@%s:%d)\n", hr->h->name,
		    hr->h->slurm->url, hr->h->user, hr->h->address, hr->h->port);
	hostrun_stamp(hr, RUNW_STARTED);
	if (setup_scheduler(&r) == GO_OK && setup_login(&r) == GO_OK && ship(&r) == GO_OK)
		jobs_phase(&r);
	if (!hr->failed)
		hostrun_status(hr, hr->interrupted ? HOST_FAILED : HOST_OK,
			    hr->interrupted ? "interrupted" : NULL);
	if (hr->have_plan) {
		hostrun_judge(hr);   /* sweeps and gates, as for an SSH host */
		hostrun_save(hr);
	}
	hostrun_stamp(hr, RUNW_ENDED);
	live_done(hr->ctx->live, hr->index,
		  hr->failed ? "cluster FAILED" : hr->nfailed_steps ? "finished, with failures" : "finished, all passed");
	for (i = 0; i < r.njobs; i++) {
		free(r.jobs[i].name);
		free(r.jobs[i].rundir);
		free(r.jobs[i].first_rundir);
	}
	free(r.jobs);
	free(r.runner);
	free(r.agent_dir);
	slurm_close(r.sc);
	ssh_disconnect(hr->conn);
	hr->conn = NULL;
}

/* A cluster entry of the inventory (its "slurm" object). */
static int slurm_runs(const struct host *h)
{
	return h->slurm != NULL;
}

const struct executor_ops slurm_executor = { "slurm", slurm_runs, slurm_run };
