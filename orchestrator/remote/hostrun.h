/* hostrun.h -- one host's part of a run: connect, probe, ship, build, run, fetch.
 *
 * DESIGN: each host runs on its own thread (parallel.h) with its own SSH
 * connection; it writes only its own object in the run record (through
 * store/runwrite.h, which takes the record lock) and its own live-view
 * slot, and buffers its printed output so that it is shown whole. A failure of one host never stops another.
 * Its builds and steps run on the host under the host runner (remote.h,
 * docs/runner.md); the controller follows the runner's journal. */
#ifndef GPUORCH_HOSTRUN_H
#define GPUORCH_HOSTRUN_H

#include <signal.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "transport/hosts.h"
#include "core/live.h"
#include "remote/pack.h"
#include "spec/plan.h"
#include "remote/probe.h"
#include "store/record.h"
#include "store/runwrite.h"
#include "spec/spec.h"
#include "core/vocab.h"
#include "transport/ssh.h"

struct remote_status;

struct run_ctx {
	const struct spec *spec;
	const struct pack *pack;
	const char *run_id;
	struct record *rec;
	struct live *live;
	int accept_new_hostkey;
	int reconnect_timeout_s;      /* how long to keep trying after a lost link */
	int lock_wait_s;              /* how long a step waits for its GPU */
	volatile sig_atomic_t *interrupted;
	const cJSON *resumed;         /* --resume: the run's record as it was left, else NULL */
	struct spread *spread;        /* --spread: the pool's deal (remote/spread.h), else NULL */
};

struct gpuslots;
struct spread;

struct hostrun {
	int index;
	const struct host *h;
	struct run_ctx *ctx;
	const cJSON *hj;              /* this host's object in the record, to read (its
				       * writer: store/runwrite.h) */
	struct ssh_conn *conn;
	struct host_info info;
	int have_info;
	int probe_kept;               /* info is the controller's kept probe, not yet checked */
	int probe_pending;            /* no probe yet: the start command probes first */
	char *probe_now;              /* info.later: the probe's first answer, kept until
				       * the rest comes (hr_probe_later) */
	char *workdir;                /* absolute remote work directory */
	char **archs;
	int narchs;
	char *run_arch;
	const char *model_cc;         /* run_arch came from the GPU's model name (probe_model_cc):
				       * its compute capability, for nvidia-smi's later answer */
	struct plan plan;
	int have_plan;
	cJSON **build_rec;            /* per plan build: its record entry once it ended */
	unsigned char *recorded;      /* a cluster run (run/slurmrun.c): per plan build, then
				       * step, 1 once in the record (for plan order) */
	int builds_recorded;          /* the build phase is in the record */
	int next_step;                /* plan steps before this one are in the record */
	int cur_step;                 /* the step the runner journaled as started, or -1 */
	double cur_started_t;         /* its step_started time on the host */
	double fetch_s;               /* pulling step outputs and tool files back */
	int nfailed_before_run;       /* nfailed_steps when the steps began */
	struct strbuf out;            /* printed whole when the host is done */
	int failed;                   /* the host itself failed (connect, ship, lost) */
	int nfailed_steps;            /* builds and steps that did not pass, and failed gates */
	int nfailed_gates;            /* gates (spec "gates") that failed on this host */
	int interrupted;
	double ran_from, ran_to;      /* the current step's t_run / t_end on the host */
	struct gpuslots *slots;       /* the host's GPU slots (remote/gpuslots.h), once planned */
	int *step_slot;               /* per plan step: the first of its slots, -1 none */
	int *spread_slot;             /* --spread: per plan step, the slot the deal gave it
				       * (SPREAD_ANY: as without --spread), else NULL */
	int save_held;                /* >0: hostrun_save waits (many steps, one journal line) */
	int save_pending;             /* a save waited */
};

void hostrun_init(struct hostrun *hr, int index, const struct host *h, struct run_ctx *ctx,
		  const cJSON *hj);
void hostrun_release(struct hostrun *hr);
/* Forget the host's GPU slots and the steps' (a new plan takes them again). */
void hostrun_slots_release(struct hostrun *hr);
/* --spread (ctx->spread): wait for the pool's deal, then cut hr->plan down
 * to the steps it gives this host, each with its slot (hr->spread_slot). */
void hostrun_spread(struct hostrun *hr);
/* After a host's steps: rank its sweeps and judge the gates on its record
 * (both attached to it), their lines into hr->out; a failed gate counts as a
 * failed step. 1 when the record changed (the caller saves it). The host
 * runner and the Slurm runner both end with it. */
int hostrun_judge(struct hostrun *hr);

/* What both executors (the host runner here, Slurm jobs in run/slurmrun.c)
 * make of a host's plan the same way (hostrun-plan.c). */
/* The output of a build or step an end event carries (the runner's
 * text_cap); past it the controller pulls the file back (hostrun_step_outcome). */
#define HOSTRUN_TEXT_CAP (4u << 20)
/* An arch to build for, once (hr->archs, NULL-terminated). */
void hostrun_add_arch(struct hostrun *hr, const char *arch);
/* Build b's id in the runner's plan and journal (to free): its key's first 16 characters. */
char *hostrun_build_id(const struct plan_build *b);
/* Which part of hr->plan a runner's plan holds. */
struct hostrun_plan_part {
	int all;        /* 1: every build and step that runs (an SSH host's runner); else: */
	int build;      /* that plan build (a build job), or -1 */
	int step;       /* that plan step, with its build (a step job), or -1 */
	int attempt;    /* a step's second attempt runs in its DIR.try2; 0 or 1: DIR */
	int gpu_lock;   /* 1: a step that needs the GPU takes the host's GPU lock (not
			 * under Slurm, where the GPU is the job's allocation) */
};
/* The runner's plan (runplan.h) of that part into text: builds by their
 * hostrun_build_id, each output capped at HOSTRUN_TEXT_CAP; *bids (NULL: not
 * wanted; free with hostrun_plan_ids_free): per plan build its id, NULL when
 * not in this plan; *budget_ms (NULL: not wanted): how long it may take. */
enum go_status hostrun_write_plan(struct hostrun *hr, const struct hostrun_plan_part *part,
				  char ***bids, struct strbuf *text, int64_t *budget_ms,
				  struct strbuf *err);
void hostrun_plan_ids_free(struct hostrun *hr, char **bids);

/* A host's entries in the run record, the same for every runner (the host
 * runner here, Slurm jobs in run/slurmrun.c), through store/runwrite.h. */
/* Save the run record; a failure becomes a warning in the host's output. */
void hostrun_save(struct hostrun *hr);
/* Between hold and release (they nest), saves wait; the release saves once
 * when one waited: many steps recorded at once are one journal line. */
void hostrun_hold_saves(struct hostrun *hr);
void hostrun_release_saves(struct hostrun *hr);
/* Record a finished phase (name, status, duration since t0, detail) and save. */
void hostrun_phase(struct hostrun *hr, const char *name, enum item_status status, int64_t t0,
		   const char *detail);
/* Set the host's started_at or ended_at to now, ISO 8601 UTC, and save. */
void hostrun_stamp(struct hostrun *hr, enum runw_stamp which);
/* Set the host's status and error in the record and save. */
void hostrun_status(struct hostrun *hr, enum host_status status, const char *error);
/* The host object's "runner": what ran the run on the host (docs/run-record.md). */
void hostrun_runner(struct hostrun *hr, const char *runner);
/* Write data (len bytes; NULL: empty) into the run directory as rel; a
 * failure becomes a warning. */
void hostrun_add_log(struct hostrun *hr, const char *rel, const char *data, size_t len);
/* The run-relative path logs/<host>/<name>.<ext> (to free). */
char *hostrun_log_rel(struct hostrun *hr, const char *name, const char *ext);
/* The host's probe (hr->info) into its record entry: "info" with the arch
 * the steps run on (hr->run_arch, not the probe's plain compute capability),
 * the work directory and, when given, the host's role; "archs" built for. */
void hostrun_record_info(struct hostrun *hr, const char *role);
/* Make the host's plan of builds and steps (hr->plan) from its probe, with
 * why GPU steps cannot run where no GPU is known and the GPU's name; under
 * --spread, only the steps the pool's deal gives this host (hostrun_spread). */
void hostrun_make_plan(struct hostrun *hr, const char *no_gpu_reason, const char *gpu_name);
/* The record entry of build b (docs/run-record.md) from the runner's event
 * ev (build_ended, build_reused, build_skipped; NULL: none came): its log
 * with the command line into the run, ptxas's resource report, the objects
 * it compiled and reused; its status and reason from the event, or
 * status_in (not ST_NONE) and reason_in where the caller knows better (a build never
 * started, the end of its Slurm job). */
cJSON *hostrun_build_json(struct hostrun *hr, const struct plan_build *b, const cJSON *ev,
			  enum item_status status_in, const char *reason_in);
/* How step ps ended, from the runner's step_ended event ev: its output into
 * the run's logs (*out_rel, *err_rel, to free), its result (the harness's
 * JSON, or the figures of a program of its own), its tool files pulled back
 * over hr->conn and parsed into the result (ncu's CSV, compute-sanitizer's
 * log, CUPTI traces: *files), when it ran (hr->ran_from, hr->ran_to) and how
 * it went (rs, and the status returned with its reason in `reason`). With
 * status_in other than ST_NONE (the end of its Slurm job said it), only the
 * logs and times are taken and status_in is returned. */
enum item_status hostrun_step_outcome(struct hostrun *hr, const struct plan_step *ps,
				      const cJSON *ev, enum item_status status_in,
				      struct remote_status *rs, struct strbuf *reason,
				      cJSON **result, cJSON **files, char **out_rel,
				      char **err_rel);
/* Step ps's entry (docs/run-record.md) into the host's "steps"
 * (store/runwrite.h): status, reason, how it ended (rs, or NULL), its span
 * on the host's clock, logs, result and the tool files (both taken over;
 * NULL: none), its Slurm job's facts (slurm, taken over; NULL: none);
 * appended (pos < 0) or at pos. hr->ran_from/ran_to go in and are cleared. */
void hostrun_step_record(struct hostrun *hr, const struct plan_step *ps, enum item_status status,
			 const char *reason, const struct remote_status *rs, double t_start,
			 double t_end, const char *out_rel, const char *err_rel, cJSON *result,
			 cJSON *files, cJSON *slurm, int pos);

#endif
