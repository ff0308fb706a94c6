/* slurmrun-int.h -- what the files of the Slurm executor share (docs/slurm.md).
 *
 * Calls go one way: slurmrun.c (the executor: scheduler, login node, ship)
 * -> slurmrun-jobs.c (one job per build and step: plans, submission, the
 * watch loop) -> slurmrun-collect.c (a job that ended: its journal read
 * back, its build or step recorded; requeue, skip) -> slurmrun-base.c
 * (the login node's commands, the job's record entry, its run dir).
 * Internal to orchestrator/run/slurmrun*.c; slurmrun.h is the public contract. */
#ifndef GPUORCH_SLURMRUN_INT_H
#define GPUORCH_SLURMRUN_INT_H

#include <stdint.h>
#include <cjson/cJSON.h>
#include "core/error.h"
#include "core/strbuf.h"
#include "remote/hostrun.h"
#include "sched/slurm.h"

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
	char runner[16];      /* what ran its plan: its journal's runner_started
			       * "runner" ("gpuorch-agent", "runner.sh"); "" unknown */
	char visible[128];    /* a step job: the CUDA_VISIBLE_DEVICES Slurm gave it (its
			       * node.txt), "" when none or not read */
};

struct srun {
	struct hostrun *hr;
	struct slurm_client *sc;
	struct sjob *jobs;
	int njobs;
	char *runner;         /* W/runs/<run-id>/runner.sh: the fallback */
	char *agent_dir;      /* W/agent: the agent's sources (bundle) and binaries */
	long requests_at_start;
	int64_t t0;
};

/* slurmrun-base.c: what the others stand on */
/* A failed phase of the cluster (scheduler, login node, ship): the phase
 * FAILs and so does the host. */
void sr_fail_host(struct hostrun *hr, const char *name, int64_t t0, const char *msg);
/* A command on the login node (umask 077); its stdout into out (NULL: dropped). */
enum go_status sr_rexec(struct hostrun *hr, const char *cmd, struct strbuf *out,
			struct strbuf *err);
/* A file onto the login node over SFTP. */
enum go_status sr_upload(struct hostrun *hr, const char *path, const void *data, size_t len,
			 int mode, struct strbuf *err);
/* The run dir of a job's attempt: NAME, then NAME.try2 (to free). */
char *sr_job_rundir(const struct plan *p, const char *name, int attempt);
/* The job's Slurm facts, for the build's or step's record entry. */
cJSON *sr_job_json(const struct sjob *j);

/* slurmrun-collect.c: a job's build or step into the record */
/* Build b's entry (hostrun_build_json, from its job's journal end ev, or
 * status_in where Slurm's end of the job decided), with its job's facts
 * (j; NULL: none), in plan order. Returns the entry. */
const cJSON *sr_record_build(struct hostrun *hr, const struct plan_build *b,
			     enum item_status status_in, const char *reason_in, const cJSON *ev,
			     const struct sjob *j);
/* Step ps's entry, likewise (hostrun_step_outcome); its status into
 * *status_out (NULL: not wanted), its reason in `reason`. */
void sr_record_step(struct hostrun *hr, const struct plan_step *ps, enum item_status status_in,
		    struct strbuf *reason, const cJSON *ev, const struct sjob *j,
		    enum item_status *status_out);
/* The job ended: read its journal back and record its build or step.
 * Returns 0 when the job was submitted again instead (a requeue). */
int sr_collect(struct srun *r, struct sjob *j);
/* A job that cannot run because a job it needs did not pass: cancelled, SKIPPED. */
void sr_skip_job(struct srun *r, struct sjob *j, const char *why);

/* slurmrun-jobs.c: the jobs */
/* One job per build to make and per step to run (a resumed run's adopted);
 * what cannot run is recorded now. */
void sr_make_jobs(struct srun *r);
/* Submit and watch every job to its end; non-OK when the scheduler failed
 * (the host FAILED, recorded). */
enum go_status sr_run_jobs(struct srun *r);

#endif
