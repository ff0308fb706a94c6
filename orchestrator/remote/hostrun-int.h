/* hostrun-int.h -- what hostrun*.c share: the record and remote helpers, the phases.
 *
 * Calls go one way: hostrun.c -> hostrun-setup.c, hostrun-exec.c;
 * hostrun-exec.c -> hostrun-ship.c, hostrun-build.c, hostrun-steps.c; all ->
 * hostrun-base.c.
 *
 * Internal to orchestrator/remote/hostrun*.c; hostrun.h stays the public contract. */
#ifndef GPUORCH_HOSTRUN_INT_H
#define GPUORCH_HOSTRUN_INT_H

#include <stdint.h>
#include "core/error.h"
#include "remote/hostrun.h"
#include "remote/hostjournal.h"
#include "remote/remote.h"
#include "remote/shipledger.h"
#include "core/strbuf.h"

#define OUTPUT_CAP (16u << 20)

/* hostrun-base.c: what the phases stand on */
/* Seconds since t0 (a time_mono_ms() value). */
double hr_secs_since(int64_t t0);
/* The host itself failed in a phase: record the phase, say so, set its status. */
void hr_fail_host(struct hostrun *hr, const char *phase_name, int64_t t0, const char *msg);
/* Whether the run was interrupted (latched in hr->interrupted). */
int hr_interrupted(struct hostrun *hr);
/* Re-establish a lost connection, for up to ctx->reconnect_timeout_s. */
enum go_status hr_reconnect(struct hostrun *hr, struct strbuf *err);
/* Map how a remote process ended to a record status and a reason. */
enum item_status hr_end_status(struct hostrun *hr, const struct remote_status *rs,
			       int lock_wait_s, struct strbuf *reason);
/* A journal event's string field, or NULL. */
const char *hr_ev_str(const cJSON *ev, const char *key);

/* hostrun-setup.c: the phases before the builds */
/* Connect to the host. */
enum go_status hr_connect(struct hostrun *hr);
/* Probe the host and choose the archs to build for and the one the steps run
 * on: from the probe kept from an earlier run, else (command 0) not yet --
 * hr->probe_pending: the start command probes first and hands its output
 * to hr_probe_take -- or (command 1) by a probe command now. */
enum go_status hr_probe(struct hostrun *hr, int command);
/* The probe's shell text, for the start command that probes first. */
void hr_probe_text(const struct hostrun *hr, struct strbuf *sb);
/* The probe's output (started at t0) is in: as hr_probe. */
enum go_status hr_probe_take(struct hostrun *hr, const char *out, int64_t t0);
/* The rest of that probe (hr->info.later) came in the runner's journal
 * (probe_later): into the record's info and the controller's kept probe. */
void hr_probe_later(struct hostrun *hr, const char *text);

/* hostrun-ship.c: what the start commands carry of the sources */
struct hr_ship {
	struct shipledger ledger;     /* what the controller knows the host holds */
	char **want;                  /* the blobs the host is to get next (hashes), */
	int nwant;                    /* through its execd, else on the next start: */
	unsigned char *tar;           /* what that start carries (blobs_tar); NULL: none */
	size_t tar_len;
	int64_t t_call;               /* when the start that carries it was sent */
	int asked;                    /* the host said which blobs it lacks */
	int via_execd;                /* some went through the host's execd */
	int nblobs;                   /* files (distinct contents) that arrived */
	uint64_t sent;                /* their bytes */
	int64_t upload_ms;            /* the starts that carried them, until each began */
	uint64_t agent_sent;          /* bytes of the host agent's sources the starts carried */
};
/* Read the ledger; the first start carries, unasked, the files it does not
 * list, when they are few enough (else the host is asked first). */
enum go_status hr_ship_begin(struct hostrun *hr, struct hr_ship *sh, struct strbuf *err);
/* The host named the blobs it lacks: the next start carries them. */
enum go_status hr_ship_missing(struct hostrun *hr, struct hr_ship *sh, char *const *hashes, int n,
			       struct strbuf *err);
/* Before a start: the blobs to send go through the host's execd when it
 * has one (written and checked there, ssh_execd_put), else (or should it
 * not store them all) as a tar on the start. */
enum go_status hr_ship_prepare(struct hostrun *hr, struct hr_ship *sh, struct strbuf *err);
/* The tar of the blobs to send, now (a start that waits for them on its
 * stdin: remote.h, on_missing). */
enum go_status hr_ship_tar(struct hostrun *hr, struct hr_ship *sh, struct strbuf *err);
/* A start is being sent: it carries what there is (rr->blobs). */
void hr_ship_sending(struct hr_ship *sh, struct remote_runner *rr);
/* That start got past its sources: what it carried arrived (counted once). */
void hr_ship_arrived(struct hr_ship *sh);
/* The host holds the whole content now: into the ledger. */
void hr_ship_host_has(struct hostrun *hr, struct hr_ship *sh);
/* The record's ship entry and phase (since t0). */
void hr_ship_record(struct hostrun *hr, struct hr_ship *sh, int reused, int64_t t0);
void hr_ship_end(struct hr_ship *sh);

/* hostrun-exec.c: ship, then builds and steps through the host runner */
/* Ship the sources, start (or attach to) the runner, follow its journal to
 * the end and record every build and step; non-OK when the host was lost. */
enum go_status hr_execute(struct hostrun *hr);

/* hostrun-build.c: the build phase, from the runner's events */
/* Build i of the plan ended (build_end, build_reused or build_skipped). */
void hr_build_ended(struct hostrun *hr, int i, const struct journal_event *e);
/* The build phase is over: every build goes into the record in plan order
 * (one with no end: INFRA_ERROR, why_missing), and the build phase. */
void hr_builds_done(struct hostrun *hr, int64_t t0, const char *why_missing);

/* hostrun-steps.c: the step phase, from the runner's events */
/* Step i of the plan ended (step_end or step_skipped); the steps before it
 * that the runner was not given are recorded first, in plan order. */
void hr_step_ended(struct hostrun *hr, int i, const struct journal_event *e);
/* Record every step from hr->next_step on that has no end yet: the one in
 * progress (hr->cur_step) as INFRA_ERROR (why_current), the rest SKIPPED
 * (why_rest); plan skips keep their own reason. */
void hr_steps_flush(struct hostrun *hr, const char *why_current, const char *why_rest);
/* The run phase is over: record it (status from the steps, unless
 * status_override is not ST_NONE) and the fetch phase. */
void hr_run_done(struct hostrun *hr, int64_t t0, enum item_status status_override,
		 const char *detail);
/* Record every step of the plan as SKIPPED, for why. */
void hr_skip_all(struct hostrun *hr, const char *why);
/* Whether step i of the plan is given to the runner (not skipped by the plan,
 * its build not skipped); *why is the reason when it is not. */
int hr_step_runs(const struct hostrun *hr, int i, char **why);

#endif
