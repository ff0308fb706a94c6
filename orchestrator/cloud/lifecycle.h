/* lifecycle.h -- one instance's life around a run or a `gpuorch hosts`
 * command: bring it up (start what is stopped, wait for running, take its
 * address, wait for SSH with the host key verified, arm the guard), take it
 * down per after_run, and say what it cost (docs/cloud.md). */
#ifndef GPUORCH_CLOUD_LIFECYCLE_H
#define GPUORCH_CLOUD_LIFECYCLE_H

#include <signal.h>
#include <time.h>
#include <cjson/cJSON.h>
#include "cloud/instance.h"

struct inst_life {
	struct instance *in;      /* NULL: a host without an instance */
	struct host *h;           /* its address is replaced by the provider's */
	enum inst_state before;   /* the state gpuorch found */
	int started;              /* gpuorch requested the start */
	int launched;             /* gpuorch created it in this command (in->launch) */
	int guarded;              /* a guard runs on it (armed or found) */
	int up;                   /* running and reachable over SSH */
	int stopped;              /* stop confirmed */
	int stop_failed;          /* stop asked for and not confirmed: may still be billing */
	int preempted;            /* it stopped under a run without gpuorch asking */
	time_t t_start_req, t_running, t_reachable, t_stop_req, t_stop_conf;
	enum after_run done;      /* what was applied after the run */
	char *error;              /* the bring-up or stop error, for the record */
	volatile sig_atomic_t *interrupted;
	const char *run_id;       /* the run it serves (tags, the per-run ledger), or NULL */
	FILE *progress;           /* progress lines also go here at once (hosts up), or NULL */
	int adopted;              /* an instance gpuorch launched in an earlier command, taken up */
	cJSON *earlier;           /* instances this run used before this controller (array) */
	double earlier_cost;
};

/* Load every host's instance (hosts without one get in = NULL); *out has
 * hs->n entries. Bad input: GO_ERR_HOSTS, nothing started. */
enum go_status life_load(struct hosts *hs, struct inst_life **out, struct strbuf *err);
void life_free(struct inst_life *v, int n);
/* Each instance's credentials, before anything starts. */
enum go_status life_check(struct inst_life *L, struct strbuf *err);
/* Bring it up; log gets progress lines. */
enum go_status life_up(struct inst_life *L, int accept_new_hostkey, int arm_guard,
		       struct strbuf *log, struct strbuf *err);
/* What after_run means for it: the given one, else terminate if gpuorch
 * launched it, stop if gpuorch started it, keep otherwise. */
enum after_run life_after_run(const struct inst_life *L);
/* Apply what (disarm the guard, stop and wait for stopped); on failure
 * L->stop_failed and an error that says it may still be billing. */
enum go_status life_down(struct inst_life *L, enum after_run what, int accept_new_hostkey,
			 struct strbuf *log, struct strbuf *err);
/* After a run: is it still running? If not, and gpuorch did not stop it,
 * it was preempted (L->preempted). */
void life_check_preempted(struct inst_life *L);
/* Seconds billed so far (start requested -> stop confirmed, or now) and the
 * cost; life_cost adds what the run's earlier instances cost (L->earlier). */
double life_seconds(const struct inst_life *L, time_t now);
/* life_seconds, at least the provider's billing minimum (EC2: 60 s) */
double life_billed_seconds(const struct inst_life *L, time_t now);
double life_cost(const struct inst_life *L, time_t now);
cJSON *life_json(const struct inst_life *L, time_t now);

#endif
