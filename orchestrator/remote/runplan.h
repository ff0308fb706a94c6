/* runplan.h -- the host runner's plan file: what one run does on one host
 * (builds, then steps), written as a shell file of quoted calls that
 * orchestrator/remote/runner.sh sources (docs/runner.md). */
#ifndef GPUORCH_RUNPLAN_H
#define GPUORCH_RUNPLAN_H

#include <stddef.h>
#include "core/error.h"

struct runplan_build {
	const char *id;          /* the build key; steps name it */
	const char *dir;         /* absolute: W/builds/<key> */
	const char *bin;         /* absolute: the executable the build makes */
	const char *command;     /* run by sh in src_dir */
	int timeout_s;
	int may_fail;            /* its failure does not stop the phase (a sweep variant) */
};

struct runplan_step {
	const char *id;
	const char *dir;         /* absolute: W/runs/<run-id>/<step-id> */
	const char *command;     /* run by sh in src_dir */
	const char *lock_path;   /* the GPU lock (absolute), or NULL */
	const char *build_id;    /* skipped unless this build passed; NULL: none */
	int timeout_s;
	int lock_wait_s;
};

struct runplan {
	const char *src_dir;     /* absolute: the builds' and steps' working directory */
	int max_builds;          /* builds running at once, >= 1 */
	int fail_fast;           /* a failed build (not may_fail) kills the running ones,
				  * starts no more */
	size_t text_cap;         /* bytes of each output carried in an end event */
	const struct runplan_build *builds;
	int nbuilds;
	const struct runplan_step *steps;
	int nsteps;
	const char *probe_later; /* NULL, or a probe's deferred part (probe.h, host_info.later):
				  * put in the journal before the first step */
};

#define RUNPLAN_VERSION 1
#define RUNPLAN_TEXT_CAP_DEFAULT (64u << 10)

/* Checks p and appends the plan file's text to out. On bad input nothing is
 * appended and err says which item and field is wrong. */
enum go_status runplan_write(const struct runplan *p, struct strbuf *out, struct strbuf *err);

/* The default bound on concurrent builds for a host with ncores cores
 * (probe's count; <= 0 when unknown). */
int runplan_default_max_builds(int ncores);

#endif
