/* hostrun.c -- one host's pipeline: its main, which runs the phases in order (hostrun.h).
 *
 * Remote layout under the host's work directory W (docs/runner.md):
 *   W/content/<content-id>/{manifest,src/,.complete}  assembled once per content id
 *   W/blobs/<sha256>                                 each file shipped, once (blobs.h)
 *   W/builds/<build-key>/{cmd,stdout,stderr,rc,<program>} one nvcc build, reused
 *   W/runs/<run-id>/{plan.sh,runner.sh,journal,...}  the host runner of this run
 *   W/runs/<run-id>/<step>/{cmd,pgid,stdout,stderr,rc} one step
 * Builds and steps run under the host runner (remote.h), whose journal the
 * controller follows; a lost link is re-established for up to
 * ctx->reconnect_timeout_s and the journal followed on from its offset.
 *
 * Files, calls one way: hostrun.c (main) -> hostrun-setup.c (connect, probe,
 * plan; a host with no kept probe is probed by the start command itself),
 * hostrun-exec.c (ship, runner, journal) -> hostrun-build.c,
 * hostrun-steps.c (records from events) -> hostrun-base.c (what the phases
 * stand on: the host's record entries, logs, reconnection); hostrun-int.h
 * declares what they share. */
#include "remote/hostrun-int.h"
#include "remote/executor.h"
#include "store/gates.h"
#include "core/jsonutil.h"
#include "core/timeutil.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/banned.h"

/* ---------------------------------------------------------------- main */

void hostrun_init(struct hostrun *hr, int index, const struct host *h, struct run_ctx *ctx,
		  const cJSON *hj)
{
	memset(hr, 0, sizeof(*hr));
	hr->index = index;
	hr->h = h;
	hr->ctx = ctx;
	hr->hj = hj;
	strbuf_init(&hr->out, 0);
}

int hostrun_judge(struct hostrun *hr)
{
	const struct spec *s = hr->ctx->spec;
	const cJSON *gates = NULL, *g;
	int nf = 0, i, any_sweep = 0;

	for (i = 0; i < s->nsteps; i++)
		any_sweep |= s->steps[i].kind == STEP_SWEEP;
	if (any_sweep)
		cJSON_ArrayForEach(g, runw_host_sweeps(hr->ctx->rec, hr->index)) {
			strbuf_addstr(&hr->out, "  ");
			/* --spread: the pool's ranking comes at the run's end (run-engine.c) */
			if (cJSON_GetObjectItem(hr->hj, "spread"))
				strbuf_addstr(&hr->out, "this host's share of the pool: ");
			sweep_describe(g, &hr->out);
			strbuf_addstr(&hr->out, "\n");
		}
	if (cJSON_GetArraySize(s->gates)) {
		gates = runw_host_gates(hr->ctx->rec, hr->index, s->gates, &nf);
		cJSON_ArrayForEach(g, gates) {
			strbuf_addstr(&hr->out, "  gate ");
			gates_describe(g, &hr->out);
			strbuf_addch(&hr->out, '\n');
		}
	}
	hr->nfailed_gates = nf;
	hr->nfailed_steps += nf;
	return any_sweep || gates;
}

/* The SSH host's executor: connect, probe, then the host agent (or
 * runner.sh) over the one connection (hostrun-exec.c). */
static void ssh_run(struct hostrun *hr)
{
	enum go_status st;

	strbuf_addf(&hr->out, "%s (%s@%s:%d)\n", hr->h->name, hr->h->user, hr->h->address,
		    hr->h->port);
	hostrun_stamp(hr, RUNW_STARTED);
	st = hr_connect(hr);
	if (st == GO_OK)
		st = hr_probe(hr, 0);
	if (st == GO_OK) {
		/* a probe still pending is the start command's first part: the
		 * plan is made from it there (hostrun-exec.c) */
		if (!hr->probe_pending)
			hostrun_make_plan(hr, hr->info.gpu_reason, hr->info.gpu_name);
		if (!hr->probe_pending && hr_interrupted(hr))
			hr_skip_all(hr, "not run: the run was interrupted");
		else
			st = hr_execute(hr);
	}
	if (!hr->failed)
		hostrun_status(hr, hr->interrupted ? HOST_FAILED : HOST_OK,
			       hr->interrupted ? "interrupted" : NULL);
	if (hostrun_judge(hr))
		hostrun_save(hr);
	hostrun_stamp(hr, RUNW_ENDED);
	live_done(hr->ctx->live, hr->index,
		  hr->failed ? "host FAILED" : hr->nfailed_steps ? "finished, with failures" : "finished, all passed");
	ssh_disconnect(hr->conn);
	hr->conn = NULL;
}

/* Every host that no other executor claims (run/executor.c asks it last). */
static int ssh_runs(const struct host *h)
{
	(void)h;
	return 1;
}

const struct executor_ops hostrun_ssh_executor = { "ssh", ssh_runs, ssh_run };

void hostrun_release(struct hostrun *hr)
{
	int i;
	if (hr->have_info)
		probe_release(&hr->info);
	free(hr->probe_now);
	if (hr->build_rec)
		for (i = 0; hr->have_plan && i < hr->plan.nbuilds; i++)
			cJSON_Delete(hr->build_rec[i]);
	free(hr->build_rec);
	free(hr->recorded);
	hostrun_slots_release(hr);
	free(hr->spread_slot);
	if (hr->have_plan)
		plan_release(&hr->plan);
	for (i = 0; i < hr->narchs; i++)
		free(hr->archs[i]);
	free(hr->archs);
	free(hr->run_arch);
	free(hr->workdir);
	strbuf_release(&hr->out);
}
