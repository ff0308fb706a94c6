/* run-engine.c -- `gpuorch run`: load, package, run every host in parallel, record, report.
 *
 * Order of work (the stages and their files: run-state.h): everything that
 * can be checked locally (spec, hosts file, sources, git) is checked before
 * any connection is made, so bad input exits 2 with nothing sent. Then the
 * run directory and a "running" record are created, the hosts run in
 * parallel, and the record is finished here as "complete" -- or
 * "incomplete" on SIGINT/SIGTERM -- with its report, webhook and summary. */
#include "run/run-state.h"
#include "cloud/lifecycle.h"
#include "core/interrupt.h"
#include "core/jsonutil.h"
#include "core/live.h"
#include "core/timeutil.h"
#include "report/notify.h"
#include "report/report.h"
#include "report/runsum.h"
#include "spec/spec.h"
#include "store/gates.h"
#include "store/runwrite.h"
#include "transport/hosts.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/banned.h"
#include "core/vocab.h"

/* The record's status, outcome, exit code and times, from the hosts'
 * failures and whether an instance may still be billing. */
static void set_verdict(struct run_state *r, int billing)
{
	struct runw_end e;

	if (billing && r->rc == 0)
		r->rc = GO_EXIT_FAILED;
	memset(&e, 0, sizeof(e));
	if (interrupt_signal) {
		e.status = RUN_INCOMPLETE;
		r->rc = GO_EXIT_INTERRUPTED;
	} else {
		e.status = RUN_COMPLETE;
		e.with_outcome = 1;
		e.outcome = OUTCOME_PASSED;
		if (r->rc == GO_EXIT_FAILED) {
			e.outcome = OUTCOME_FAILED;   /* an instance may still be billing */
		} else if (r->nfailed_hosts == r->hs->n) {
			e.outcome = OUTCOME_INFRA_ERROR;
			r->rc = GO_EXIT_INFRA;
		} else if (r->nfailed_hosts || r->nfailed_steps || r->nfailed_gates) {
			e.outcome = OUTCOME_FAILED;
			r->rc = GO_EXIT_FAILED;
		}
	}
	e.exit_code = r->rc;
	e.ended = time(NULL);
	e.duration_s = (double)(time_mono_ms() - r->t0) / 1000.0;
	runw_end(&r->rec, &e);
}

/* The record saved, report.md, the webhook (and the record saved again
 * with its answer), then the summary last: it records run.json as it is now. */
static enum go_status write_outputs(struct run_state *r)
{
	enum go_status st = record_save(&r->rec, &r->err);

	if (st == GO_OK) {
		char *md = xstrfmt("%s/report.md", r->run_dir);
		st = report_write(r->rec.root, md, &r->err);
		if (st == GO_OK)
			printf("\nreport: %s\n", md);
		if (st == GO_OK && r->notify_url) {
			fflush(stdout);
			runw_notify(&r->rec, notify_run(r->notify_url, r->root, md));
			st = record_save(&r->rec, &r->err);
		}
		free(md);
	}
	if (st == GO_OK)
		st = runsum_write(r->rec.dir, r->rec.root, &r->err);
	return st;
}

/* The pools' gates (runw_pool_gates): one line each with the rows it
 * read, and their failures into the run's verdict. */
static void judge_pool_gates(struct run_state *r)
{
	const cJSON *p, *g, *row;
	int nf = 0;
	const cJSON *pools = runw_pool_gates(&r->rec, r->s->gates, &nf);
	cJSON_ArrayForEach(p, pools)
		cJSON_ArrayForEach(g, cJSON_GetObjectItem(p, "gates")) {
			struct strbuf line = STRBUF_INIT;
			const char *sep = "";
			gates_describe(g, &line);
			strbuf_addstr(&line, " (rows: ");
			cJSON_ArrayForEach(row, cJSON_GetObjectItem(g, "rows")) {
				strbuf_addf(&line, "%s%s on %s", sep, json_str(row, "step"), json_str(row, "host"));
				sep = ", ";
			}
			strbuf_addstr(&line, *sep ? ")" : "none)");
			printf("pool %s (%d hosts): gate %s\n", cJSON_GetObjectItem(p, "pool")->valuestring,
			       cJSON_GetArraySize(cJSON_GetObjectItem(p, "hosts")), line.buf);
			strbuf_release(&line);
		}
	r->nfailed_gates += nf;
}

/* A --spread run: no host holds all of a sweep's variants (each ran its
 * share), so each pool's sweeps are ranked across its hosts, into the
 * record ("pool_sweeps") and the output; the gates whose rows ran on
 * other hosts of the pool are judged once for it ("pool_gates"). */
static void judge_pools(struct run_state *r)
{
	const cJSON *p, *sw;

	cJSON_ArrayForEach(p, runw_pool_sweeps(&r->rec))
		cJSON_ArrayForEach(sw, cJSON_GetObjectItem(p, "sweeps")) {
			struct strbuf line = STRBUF_INIT;
			sweep_describe(sw, &line);
			printf("pool %s (%d hosts): %s\n", cJSON_GetObjectItem(p, "pool")->valuestring,
			       cJSON_GetArraySize(cJSON_GetObjectItem(p, "hosts")), line.buf);
			strbuf_release(&line);
		}
	judge_pool_gates(r);
}

/* Stage 4: the verdict, the record finished, its report and summary, the last line. */
static void finish(struct run_state *r, int billing)
{
	int nh, ns, ng;

	judge_pools(r);   /* a pool's gates count with the hosts' */
	nh = r->nfailed_hosts, ns = r->nfailed_steps, ng = r->nfailed_gates;
	set_verdict(r, billing);
	if (write_outputs(r) != GO_OK) {
		fprintf(stderr, "error: %s\n", r->err.buf);
		r->rc = GO_EXIT_LOCAL;
	}
	printf("run %s: %s (%d host%s failed, %d build/step%s did not pass, %d gate%s failed)\n",
	       r->run_id, interrupt_signal ? "INTERRUPTED, recorded as incomplete"
	       : r->rc == 0 ? "passed" : r->rc == GO_EXIT_INFRA ? "no host could be used" : "FAILED",
	       nh, nh == 1 ? "" : "s", ns, ns == 1 ? "" : "s", ng, ng == 1 ? "" : "s");
}

/* Frees what the stages made; hands the run directory to run_dir_out. */
static void release(struct run_state *r)
{
	const struct run_opts *o = r->o;

	run_hosts_release(r);
	if (r->hs)
		life_free(r->lives, r->hs->n);
	live_free(r->lv);
	if (r->have_rec)
		record_release(&r->rec);
	cJSON_Delete(r->old);
	if (r->lock_fd >= 0)
		close(r->lock_fd);
	if (o->run_dir_out && r->run_dir)
		*o->run_dir_out = r->run_dir;
	else
		free(r->run_dir);
	pack_release(&r->pk);
	pack_free_files(r->files);
	git_info_release(&r->gi);
	hosts_free(r->hs);
	spec_free(r->s);
	strbuf_release(&r->err);
}

int runner_run(const struct run_opts *o)
{
	struct run_state r;

	memset(&r, 0, sizeof(r));
	r.o = o;
	r.started = time(NULL);
	r.t0 = time_mono_ms();
	r.lock_fd = -1;
	strbuf_init(&r.err, 0);
	/* First thing: a SIGINT from now on is recorded, never lost (a shell
	 * starts background jobs with SIGINT ignored). */
	interrupt_catch();
	if (o->run_dir_out)
		*o->run_dir_out = NULL;
	if (run_resolve_inputs(&r) == 0) {
		if (o->dry_run)
			run_print_dry_run(&r);
		else if (run_check_credentials(&r) == 0 && run_open(&r) == 0) {
			run_hosts(&r);
			finish(&r, run_hosts_collect(&r));
		}
	}
	release(&r);
	return r.rc;
}
