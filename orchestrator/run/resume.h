/* resume.h -- `gpuorch run --resume RUN_ID`: may this run be taken up again?
 *
 * A run whose controller died (SIGKILL, a lost laptop) left its hosts'
 * runners going on alone; resuming it runs the same pipeline under the same
 * run id, so each host's start command finds its runner ("running" or
 * "finished") and the controller follows that runner's journal from its
 * first byte: what ran meanwhile is collected, nothing runs twice
 * (docs/runner.md). A run that did not finish, or finished with a host
 * failed or lost or a build or step INFRA_ERROR (not passed or failed on its
 * merits), with the same spec, the same sources and the same hosts, and no
 * live controller, is resumed: the host runner's journal gives what ended
 * meanwhile, and what was stopped or lost before it ended runs again
 * (runner.sh reopen). */
#ifndef GPUORCH_RESUME_H
#define GPUORCH_RESUME_H

#include <cjson/cJSON.h>
#include "core/error.h"
#include "spec/spec.h"
#include "transport/hosts.h"

/* Checks the recorded run `old` (its run.json) against what this command
 * would run: GO_ERR_USAGE with what differs and how to proceed. */
enum go_status resume_check(const cJSON *old, const char *run_id, const struct spec *s,
			    const struct hosts *hs, const char *content_id, struct strbuf *err);

#endif
