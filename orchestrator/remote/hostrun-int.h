/* hostrun-int.h -- what hostrun*.c share: the record and remote helpers, the phases.
 *
 * Calls go one way: hostrun.c -> hostrun-setup.c, -build.c, -steps.c -> hostrun-base.c.
 *
 * Internal to orchestrator/remote/hostrun*.c; hostrun.h stays the public contract. */
#ifndef GPUORCH_HOSTRUN_INT_H
#define GPUORCH_HOSTRUN_INT_H

#include <stdint.h>
#include "core/error.h"
#include "remote/hostrun.h"
#include "remote/remote.h"
#include "core/strbuf.h"

#define OUTPUT_CAP (16u << 20)

/* hostrun-base.c: what the phases stand on */
/* Seconds since t0 (a time_mono_ms() value). */
double hr_secs_since(int64_t t0);
/* Save the run record; a failure becomes a warning in the host's output. */
void hr_save(struct hostrun *hr);
/* Record a finished phase (name, status, duration since t0, detail) and save. */
void hr_phase(struct hostrun *hr, const char *name, const char *status, int64_t t0,
	      const char *detail);
/* Set the host's status and error in the record and save. */
void hr_host_status(struct hostrun *hr, const char *status, const char *error);
/* The host itself failed in a phase: record the phase, say so, set its status. */
void hr_fail_host(struct hostrun *hr, const char *phase_name, int64_t t0, const char *msg);
/* Whether the run was interrupted (latched in hr->interrupted). */
int hr_interrupted(struct hostrun *hr);
/* Run a short remote command; output in out (may be NULL). */
enum go_status hr_rexec(struct hostrun *hr, const char *cmd, struct strbuf *out,
			struct strbuf *err);
/* Wait for a detached step (or build) to end, reconnecting as needed. */
enum go_status hr_wait_step(struct hostrun *hr, const char *dir, int timeout_s,
			    int lock_wait_s, struct remote_status *rs, struct strbuf *err);
/* Start a detached step, surviving a link that drops meanwhile. */
enum go_status hr_start_step(struct hostrun *hr, const struct remote_step *rstep,
			     struct strbuf *err);
/* Map how a remote process ended to a record status and a reason. */
const char *hr_end_status(const struct remote_status *rs, int lock_wait_s,
			  struct strbuf *reason);
/* Write data into the run directory as rel; a failure becomes a warning. */
void hr_add_log(struct hostrun *hr, const char *rel, const struct strbuf *data);
/* The run-relative path logs/<host>/<name>.<ext> (to free). */
char *hr_log_rel(struct hostrun *hr, const char *name, const char *ext);

/* hostrun-setup.c: the phases before the builds */
/* Connect to the host. */
enum go_status hr_connect(struct hostrun *hr);
/* Probe the host; choose the archs to build for and the one the steps run on. */
enum go_status hr_probe(struct hostrun *hr);
/* Make the host's plan of builds and steps (hr->plan). */
void hr_make_plan(struct hostrun *hr);
/* Ship the packed sources, unless their content id is already on the host. */
enum go_status hr_ship(struct hostrun *hr);

/* hostrun-build.c: the build phase */
/* Start, reuse, wait for and record every build of the plan. */
enum go_status hr_build(struct hostrun *hr);

/* hostrun-steps.c: the step phase */
/* Run and record every step of the plan; non-OK when the host was lost. */
enum go_status hr_run(struct hostrun *hr);
/* Record every step of the plan as SKIPPED, for why. */
void hr_skip_all(struct hostrun *hr, const char *why);

#endif
