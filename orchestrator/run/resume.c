/* resume.c -- whether a recorded run may be resumed (resume.h). */
#include "run/resume.h"
#include "store/runkeys.h"
#include "store/runread.h"
#include "core/vocab.h"

#include <string.h>
#include "core/banned.h"

/* What in a finished run did not end on its merits: a host that failed or
 * was lost, a build or step that is INFRA_ERROR (lost, interrupted, the
 * link gone); NULL when nothing (it passed or failed on its own results). */
static const char *not_on_merits(const cJSON *old)
{
	static const char *const items[] = { "builds", "steps" };
	const cJSON *h, *it;
	size_t k;

	if (run_outcome_is(rr_str(old, RK_OUTCOME), OUTCOME_INFRA_ERROR))
		return "no host could be used";
	cJSON_ArrayForEach(h, rr_arr(old, "hosts")) {
		const char *hst = rr_str(h, "status");
		if (hst && !host_status_is(hst, HOST_OK) && !host_status_is(hst, HOST_SKIPPED))
			return "a host failed";
		for (k = 0; k < sizeof(items) / sizeof(items[0]); k++)
			cJSON_ArrayForEach(it, rr_arr(h, items[k]))
				if (item_status_is(rr_str(it, "status"), ST_INFRA_ERROR))
					return "a build or step did not end on the host";
	}
	return NULL;
}

enum go_status resume_check(const cJSON *old, const char *run_id, const struct spec *s,
			    const struct hosts *hs, const char *content_id, struct strbuf *err)
{
	const char *status = rr_str(old, "status"), *was;
	const cJSON *h;
	int i, n = 0;

	if (run_status_is(status, RUN_COMPLETE) && !not_on_merits(old))
		return go_fail(err, GO_ERR_USAGE, "run %s finished (outcome %s): there is nothing to "
			       "resume; 'gpuorch report %s' shows it, 'gpuorch run' without --resume "
			       "starts a new run", run_id, rr_str(old, RK_OUTCOME) ? rr_str(old, RK_OUTCOME)
			       : "none", run_id);
	was = rr_str(rr_obj(old, "experiment"), "spec_sha256");
	if (!was || strcmp(was, s->hash))
		return go_fail(err, GO_ERR_USAGE, "run %s was made from another spec (sha256 %.12s…, "
			       "this one is %.12s…): resume it with the spec it ran, or start a new run",
			       run_id, was ? was : "?", s->hash);
	was = rr_str(rr_obj(old, RK_PROVENANCE), "content_id");
	if (!was || strcmp(was, content_id))
		return go_fail(err, GO_ERR_USAGE, "the sources changed since run %s (content id %.12s… "
			       "then, %.12s… now): resume it from the same sources (e.g. --commit of "
			       "its commit, or undo the edits), or start a new run", run_id,
			       was ? was : "?", content_id);
	cJSON_ArrayForEach(h, rr_arr(old, "hosts")) {
		const char *name = rr_str(h, "name");
		for (i = 0; i < hs->n; i++)
			if (name && !strcmp(name, hs->v[i].name))
				break;
		if (i == hs->n)
			return go_fail(err, GO_ERR_USAGE, "run %s ran on host '%s', which this command "
				       "does not select: give the same --hosts and --host as the run "
				       "(its hosts are in its run.json)", run_id, name ? name : "?");
		n++;
	}
	if (n != hs->n)
		return go_fail(err, GO_ERR_USAGE, "run %s ran on %d host%s, this command selects %d: "
			       "give the same --host names as the run", run_id, n, n == 1 ? "" : "s",
			       hs->n);
	return GO_OK;
}
