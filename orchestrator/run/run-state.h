/* run-state.h -- `gpuorch run`'s state, passed from stage to stage (run/ only).
 *
 * runner_run (run-engine.c) runs the stages in order, each on one struct
 * run_state:
 *   1. run-inputs.c  everything local, before any connection: the notify
 *                    URL, the commit, the spec, the hosts file and their
 *                    instances, the sources packed, git provenance, and
 *                    (not on a dry run) the instances' credentials;
 *      run-dryrun.c  --dry-run: what would be done, then stop;
 *   2. run-open.c    the run directory (new, or the one resumed) under
 *                    this process's lock, and the "running" record;
 *   3. run-hosts.c   every host in parallel (an instance brought up and
 *                    taken down around its run), then each host's output
 *                    and the instances' cost;
 *   4. run-engine.c  the verdict, the record finished, report.md, the
 *                    webhook, the summary, the exit code.
 * A stage that returns non-zero has printed its error and set rc: the run
 * stops there, and run-engine.c releases what the earlier stages made. */
#ifndef GPUORCH_RUN_STATE_H
#define GPUORCH_RUN_STATE_H

#include "run/run-engine.h"
#include "core/error.h"
#include "core/strbuf.h"
#include "remote/hostrun.h"
#include "remote/pack.h"
#include "store/gitinfo.h"
#include "store/record.h"

#include <stdint.h>
#include <stdio.h>
#include <time.h>

struct spec;
struct hosts;
struct inst_life;
struct live;
struct host_task;

struct run_state {
	const struct run_opts *o;
	struct strbuf err;          /* one error buffer for the whole run */
	time_t started;             /* when runner_run began */
	int64_t t0;                 /* the same, monotonic, for duration_s */
	int rc;                     /* the exit code so far */
	const char *notify_url;     /* --notify, else $GPUORCH_NOTIFY_URL, else NULL */

	/* 1. inputs */
	char commit_buf[41];
	const char *commit;         /* --commit resolved (commit_buf), NULL: the work tree */
	const char *spec_rel;       /* the spec's path without leading "./" */
	struct spec *s;
	struct hosts *hs;
	struct inst_life *lives;    /* one per host (cloud/lifecycle.h) */
	char **files;               /* the sources the spec selects */
	struct pack pk;
	struct git_info gi;

	/* 2. the run directory and its record */
	char run_id[32];
	char *run_dir;
	int lock_fd;
	cJSON *old;                 /* --resume: the run's record as it was left */
	struct record rec;
	int have_rec;
	const cJSON *root;          /* rec's root, to read (its writer: store/runwrite.h) */
	const cJSON *hosts_arr;     /* root's "hosts" */

	/* 3. the hosts */
	struct run_ctx ctx;
	struct live *lv;
	struct hostrun *hrs;
	struct host_task *tasks;
	void **args;
	int nfailed_hosts, nfailed_steps, nfailed_gates;
};

/* Prints the error in r->err, sets r->rc to st's exit code; returns -1. */
static inline int run_stop(struct run_state *r, enum go_status st)
{
	fprintf(stderr, "error: %s\n", r->err.buf);
	r->rc = go_exit_code(st);
	return -1;
}

/* run-inputs.c: stage 1; 0, or -1 when the run stops (rc set). */
int run_resolve_inputs(struct run_state *r);
/* run-inputs.c: expired credentials found before anything starts. */
int run_check_credentials(struct run_state *r);
/* run-dryrun.c: --dry-run's listing on stdout. */
void run_print_dry_run(const struct run_state *r);
/* run-open.c: stage 2; 0, or -1 when the run stops (rc set). */
int run_open(struct run_state *r);
/* run-hosts.c: stage 3: every host in parallel, until each has ended. */
void run_hosts(struct run_state *r);
/* run-hosts.c: each host's output on stdout, the failures counted, the
 * instances' cost recorded and printed; returns how many instances may
 * still be billing. */
int run_hosts_collect(struct run_state *r);
/* run-hosts.c: frees what run_hosts made. */
void run_hosts_release(struct run_state *r);

#endif
