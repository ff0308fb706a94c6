/* hostrun.h -- one host's part of a run: connect, probe, ship, build, run, fetch.
 *
 * DESIGN: each host runs on its own thread (parallel.h) with its own SSH
 * connection; it writes only its own object in the run record (under the
 * record lock) and its own live-view slot, and buffers its printed output
 * so that it is shown whole. A failure of one host never stops another.
 * Its builds and steps run on the host under the host runner (remote.h,
 * docs/runner.md); the controller follows the runner's journal. */
#ifndef GPUORCH_HOSTRUN_H
#define GPUORCH_HOSTRUN_H

#include <signal.h>
#include <cjson/cJSON.h>
#include "transport/hosts.h"
#include "core/live.h"
#include "remote/pack.h"
#include "spec/plan.h"
#include "remote/probe.h"
#include "store/record.h"
#include "spec/spec.h"
#include "transport/ssh.h"

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
};

struct hostrun {
	int index;
	const struct host *h;
	struct run_ctx *ctx;
	cJSON *hj;                    /* this host's object in the record */
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
};

void hostrun_init(struct hostrun *hr, int index, const struct host *h, struct run_ctx *ctx,
		  cJSON *hj);
void hostrun_main(void *arg);     /* par_task_fn */
void hostrun_release(struct hostrun *hr);
/* After a host's steps: rank its sweeps and judge the gates on its record
 * (both attached to it), their lines into hr->out; a failed gate counts as a
 * failed step. 1 when the record changed (the caller saves it). The host
 * runner and the Slurm runner both end with it. */
int hostrun_judge(struct hostrun *hr);

#endif
