/* runwrite.h -- the one writer of a run's record (run.json) while it runs.
 *
 * DESIGN: every key a run writes into its record is set here (names:
 * store/runkeys.h), through typed calls: C values and the enums of
 * core/vocab.h, never a key name from the caller. Each call takes the
 * record's lock (store/record.h) itself; nothing outside store/ locks the
 * record or adds, replaces or deletes an item of its tree
 * (scripts/check-layers.sh refuses both). Host calls name the host by its
 * index in "hosts" and change only that host's entry (one host thread
 * each). Parts of the record that other modules compute whole (a probe's
 * "info", a build's entry, a cloud instance's life, a step's result) come
 * in as detached cJSON values that the call takes over. Saving stays in
 * record.h (record_save, record_save_host): a call changes the tree only.
 * Files: runwrite.c (the run, its head and end), runwrite-host.c (a host's
 * entry), runwrite-build.c (a build's entry), runwrite-step.c (a step's
 * entry and its Slurm job's facts). */
#ifndef GPUORCH_RUNWRITE_H
#define GPUORCH_RUNWRITE_H

#include <time.h>
#include <cjson/cJSON.h>
#include "core/vocab.h"
#include "store/gitinfo.h"
#include "store/record.h"

/* ------------------------------------------------------------ the run */

/* The record's head: identity, status "running", times, the experiment. */
struct runw_head {
	const char *run_id;
	const char *command_line;
	time_t started;
	const cJSON *old;             /* --resume: the record as it was left, else NULL */
	const char *name, *slug, *phase, *description;
	const char *spec_path, *spec_sha256;
	const cJSON *spec;            /* the spec's JSON, copied */
};
/* Where the sources came from: git (or the commit), the package, the controller. */
struct runw_provenance {
	const struct git_info *gi;
	const char *commit;           /* --commit resolved, NULL: the work tree */
	int wrote_diff;               /* source.diff is in the run directory */
	const char *content_id;
	double archive_bytes;
	cJSON *files;                 /* the package's files (taken over) */
};
/* A host's entry as it starts: pending. */
struct runw_host_id {
	const char *name, *address, *user;
	int port;
};

/* Start rec on run directory dir with the record's head (record_init). */
void runw_open(struct record *rec, const char *dir, const struct runw_head *h);
void runw_provenance(struct record *rec, const struct runw_provenance *p);
/* The "hosts" array, then one pending entry per host, in order. */
void runw_hosts_begin(struct record *rec);
void runw_host_add(struct record *rec, const struct runw_host_id *h);
/* The spec's "baselines", "references", "expected" (copied; NULL: []). */
void runw_spec_lists(struct record *rec, const cJSON *baselines, const cJSON *references,
		     const cJSON *expected);

/* The run's end: status, outcome (with_outcome 0: null, as an interrupted
 * run's), exit code, ended_at and duration. */
struct runw_end {
	enum run_status status;
	int with_outcome;
	enum run_outcome outcome;
	int exit_code;
	time_t ended;
	double duration_s;
};
void runw_end(struct record *rec, const struct runw_end *e);
/* --spread: each pool's sweeps ranked across its hosts (store/gates.h) into
 * "pool_sweeps"; returns them (owned by the record), NULL when no pool has one. */
const cJSON *runw_pool_sweeps(struct record *rec);
/* A --spread run's gates whose rows ran on other hosts of a pool, judged
 * once for the pool (store/gates.h gates_evaluate_pools) into the record's
 * "pool_gates"; returns them (owned by the record; NULL: none) and the
 * number that failed in *nfailed. */
const cJSON *runw_pool_gates(struct record *rec, const cJSON *gates, int *nfailed);
/* The webhook's answer (report/notify.h), taken over, as "notify". */
void runw_notify(struct record *rec, cJSON *notify);
/* The cloud instances' lives (taken over) into provenance "instances", and
 * their total cost when total is not NULL. */
void runw_instances(struct record *rec, cJSON *instances, const double *total);

/* ------------------------------------------------------- a host's entry */

enum runw_stamp { RUNW_STARTED, RUNW_ENDED };
/* The host's started_at or ended_at: t as ISO 8601 UTC. */
void runw_host_stamp(struct record *rec, int host, enum runw_stamp which, time_t t);
void runw_host_status(struct record *rec, int host, enum host_status status);
/* The host's error (NULL: null). */
void runw_host_error(struct record *rec, int host, const char *error);
/* What ran the run on the host ("agent", "runner.sh", "slurm-job"). */
void runw_host_runner(struct record *rec, int host, const char *runner);
void runw_host_address(struct record *rec, int host, const char *address);
/* The host's cloud instance's life (cloud/lifecycle.h), taken over. */
void runw_host_instance(struct record *rec, int host, cJSON *instance);
/* One phase that ended, appended to "phases". */
void runw_host_phase(struct record *rec, int host, const char *name, enum item_status status,
		     double duration_s, const char *detail);
/* The probe's "info" (taken over) with the arch the steps run on, the work
 * directory and the role (NULL: none); "archs" built for. */
struct runw_info {
	cJSON *probe;
	const char *run_arch, *workdir, *role;
	char *const *archs;
	int narchs;
};
void runw_host_info(struct record *rec, int host, const struct runw_info *in);
/* What the ship phase sent. */
struct runw_ship {
	double bytes_sent;
	int reused;
	const char *remote_dir;
	int files_sent, files;
	double agent_source_bytes;
	double upload_s;              /* recorded when files_sent */
};
void runw_host_ship(struct record *rec, int host, const struct runw_ship *s);
/* --spread: the pool's deal for this host (remote/spread.h), taken over. */
void runw_host_spread(struct record *rec, int host, cJSON *spread);
/* A build's entry (taken over, from runw_build_entry): appended, or at pos
 * (plan order) with its Slurm job's facts (slurm, taken over; NULL: none). */
void runw_host_build(struct record *rec, int host, cJSON *build);
void runw_host_build_at(struct record *rec, int host, int pos, cJSON *build, cJSON *slurm);
/* The host's sweeps ranked (store/gates.h) into "sweeps"; returns them. */
const cJSON *runw_host_sweeps(struct record *rec, int host);
/* The spec's gates judged on the host into "gates"; returns them, the
 * failures in *nfailed. */
const cJSON *runw_host_gates(struct record *rec, int host, const cJSON *spec_gates,
			     int *nfailed);

/* A Slurm cluster's "scheduler". */
struct runw_scheduler {
	const char *url, *api_version, *slurm_release, *partition, *gpus, *token_source;
	int max_jobs, time_limit_min, queue_timeout_s;
};
void runw_host_scheduler(struct record *rec, int host, const struct runw_scheduler *s);
/* A job submitted (resumed: adopted from the run's last controller;
 * attempt recorded when > 1). */
void runw_sched_job(struct record *rec, int host, const char *name, long job_id, int attempt,
		    int resumed);
/* Why job job_id still waits in the queue. */
void runw_sched_job_pending(struct record *rec, int host, long job_id, const char *reason);
/* The scheduler's counts at the end of the jobs. */
void runw_sched_counts(struct record *rec, int host, long rest_requests, long token_mints);

/* ----------------------------------------------- a build's, a step's entry */

struct runw_define {
	const char *key, *value;
};
/* How a build ended (docs/run-record.md, "builds"). */
struct runw_build {
	const char *program;
	const char *variant;          /* the sweep variant's label, NULL: none */
	const struct runw_define *defines;
	int ndefines;
	const char *arch;
	enum item_status status;
	const char *reason;           /* NULL: null */
	int reused;
	const char *build_key;
	const char *same_build_as;    /* made once for both: that build's name, NULL: none */
	double duration_s;
	const char *command;
	int exit_code;                /* < 0: null */
	const char *log;              /* run-relative, NULL: null */
	cJSON *resources;             /* ptxas's report, taken over; NULL: [] */
	int with_objects;             /* an nvcc build that ran: its objects' counts */
	int objects_reused, objects_compiled;
};
/* The build's entry, detached until runw_host_build takes it (a host keeps
 * its builds' entries until the build phase ends, to record them in plan
 * order); its status, reason and reused read back with runw_build_*. */
/* A sweep variant's "variant" and "defines" into a build's or a step's
 * entry (nothing when variant is NULL). */
void runw_add_variant(cJSON *o, const char *variant, const struct runw_define *defines, int n);
cJSON *runw_build_entry(struct runw_build *b);
const char *runw_build_status(const cJSON *build);
const char *runw_build_reason(const cJSON *build);
int runw_build_reused(const cJSON *build);
/* How a step ended and what it left (docs/run-record.md, "steps"). */
struct runw_step {
	const char *id;
	enum step_kind kind;
	const char *program, *problem, *mode, *tool;   /* tool: NULL for none */
	const char *variant;          /* the sweep variant's label, NULL: none */
	const struct runw_define *defines;   /* the variant's -D, ndefines of them */
	int ndefines;
	cJSON *tool_settings;         /* taken over; NULL: none */
	const char *arch;
	cJSON *gpus;                  /* the GPU slots it held, taken over; NULL: none */
	int baseline;
	enum item_status status;
	const char *reason;           /* NULL or "": null */
	int exited, exit_code;        /* exited 0: exit_code null */
	int signaled, signal;         /* signaled 0: signal null */
	double t_start, t_end;        /* its span on the host's clock, 0: did not run */
	double ran_from, ran_to;      /* when the program ran (after its GPU lock); 0: unknown */
	double timeout_s;
	const char *command, *stdout_log, *stderr_log;
	cJSON *result;                /* taken over; NULL: null */
	cJSON *files;                 /* tool files, each key moved into the entry; taken */
	cJSON *slurm;                 /* its Slurm job's facts, taken over; NULL: none */
};
/* A build's or step's Slurm job (docs/slurm.md): one attempt as Slurm
 * reported it (NULL strings: null; times in unix s, 0 when not yet). */
struct runw_job_try {
	long job_id;
	const char *state, *reason, *node;
	double submit_unix_s, start_unix_s, end_unix_s;
	const char *rundir;
};
struct runw_slurm_job {
	struct runw_job_try last;     /* the attempt recorded at the top */
	const char *dependency_requested, *dependency, *pending_reason;
	int requeued;                 /* attempts past the first */
	const char *runner;           /* what ran the job's plan, NULL: unknown */
	int is_build;                 /* a build job: no cuda_visible_devices */
	const char *cuda_visible_devices;
	int first_known;              /* requeued: the first attempt is known (else --resume
				       * adopted the second, and it is null) */
	struct runw_job_try first;
};
/* The job's facts as a build's or step's "slurm" (for runw_host_build_at,
 * runw_step's slurm). */
cJSON *runw_slurm_job(const struct runw_slurm_job *j);

/* Append the step's entry to the host's "steps" (journaled without walking
 * the array: record_host_append), or put it at pos (plan order). */
void runw_step_end(struct record *rec, int host, struct runw_step *s);
void runw_step_end_at(struct record *rec, int host, int pos, struct runw_step *s);

#endif
