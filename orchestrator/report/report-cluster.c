/* report-cluster.c -- the "Cluster jobs" section: for each host that is a Slurm cluster entry, how
 * the run was scheduled (slurmrestd, API version, partition, GPUs per job), the nodes its jobs ran
 * on with their GPU model, driver and clocks as the jobs saw them, queue wait apart from run time,
 * how many jobs ran at once (from Slurm's start and end times), why jobs waited, and which jobs
 * gpuorch submitted again because Slurm ended them PREEMPTED or NODE_FAIL. Built from
 * run.json alone (hosts[].scheduler, the builds' and steps' "slurm" objects, each step's
 * result.device); nothing for a run without a cluster (docs/slurm.md). */
#include "report/report-int.h"
#include "store/runkeys.h"

#include <stdlib.h>
#include <string.h>
#include "core/strbuf.h"
#include "core/banned.h"

#define MAX_NODES 64

struct node_row {
	const char *name;
	const cJSON *device;   /* a step's result.device on this node (the last one seen) */
	int jobs, gpu_jobs;
	double run_s;
	double *waits;
	int nwaits;
};

struct span {
	double start, end;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static struct node_row *row_for(struct node_row *rows, int *n, const char *name)
{
	int i;
	for (i = 0; i < *n; i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	if (*n == MAX_NODES)
		return NULL;
	memset(&rows[*n], 0, sizeof(rows[*n]));
	rows[*n].name = name;
	return &rows[(*n)++];
}

/* The most jobs whose [start, end) overlap at one instant: the starts and the ends sorted, an end
 * at the same instant as a start counted first (that job had ended). */
static int max_overlap(const struct span *s, int n)
{
	double *st = xcalloc((size_t)n + 1, sizeof(double)), *en = xcalloc((size_t)n + 1, sizeof(double));
	int i = 0, j = 0, k = 0, best = 0;
	for (i = 0; i < n; i++) {
		st[i] = s[i].start;
		en[i] = s[i].end;
	}
	qsort(st, (size_t)n, sizeof(double), cmp_double);
	qsort(en, (size_t)n, sizeof(double), cmp_double);
	for (i = 0; i < n; i++) {
		while (j < n && en[j] <= st[i]) {
			j++;
			k--;
		}
		if (++k > best)
			best = k;
	}
	free(st);
	free(en);
	return best;
}

/* One job (a build's or a step's "slurm" object): counted for its node, its spans and waits. */
static void take_job(const cJSON *sl, const cJSON *device, int gpu, struct node_row *rows, int *nrows,
		     struct span *spans, int *nspans, int cap, int *pending)
{
	const char *node = rr_str(sl, "node");
	struct node_row *r;
	double w, a, b;

	if (rr_str(sl, "pending_reason"))
		(*pending)++;
	if (!node || !node[0])
		return;
	if (!(r = row_for(rows, nrows, node)))
		return;
	r->jobs++;
	r->gpu_jobs += gpu;
	if (device)
		r->device = device;
	if (rr_num(sl, "run_s", &w))
		r->run_s += w;
	if (rr_num(sl, "queue_wait_s", &w)) {
		r->waits = xrealloc(r->waits, sizeof(double) * (size_t)(r->nwaits + 1));
		r->waits[r->nwaits++] = w;
	}
	if (*nspans < cap && rr_num(sl, "start_unix_s", &a) && rr_num(sl, "end_unix_s", &b) && a > 0 &&
	    b >= a) {
		/* a job that ran within one second still ran: give it that second */
		spans[*nspans].start = a;
		spans[(*nspans)++].end = b > a ? b : a + 1;
	}
}

/* "job 12 PREEMPTED on node1, then job 15 COMPLETED": a requeued job's attempts */
static void attempts_line(struct strbuf *md, const cJSON *sl)
{
	const cJSON *a;
	int k = 0;
	double id;
	FOR_EACH_OBJ(a, rr_arr(sl, "attempts")) {
		strbuf_addstr(md, k++ ? ", then " : " ");
		if (rr_num(a, "job_id", &id))
			strbuf_addf(md, "job %.0f ", id);
		else
			strbuf_addstr(md, "a job ");
		rpt_md_cell_n(md, rr_str(a, "state") ? rr_str(a, "state") : "?", 24);
		if (k == 1 && rr_str(a, "node")) {
			strbuf_addstr(md, " on ");
			rpt_md_cell_n(md, rr_str(a, "node"), 64);
		}
	}
}

/* "build `prog` `variant`" of a build record */
static void build_label(struct strbuf *md, const cJSON *build)
{
	strbuf_addstr(md, "build ");
	rpt_md_code(md, rr_str(build, "program"));
	if (rr_str(build, "variant")) {
		strbuf_addstr(md, " ");
		rpt_md_code(md, rr_str(build, "variant"));
	}
}

static int requeued(const cJSON *item)
{
	double n;
	return rr_num(rr_obj(item, "slurm"), "requeued", &n) && n > 0;
}

static void host_section(struct strbuf *md, const cJSON *h)
{
	const cJSON *sch = rr_obj(h, RK_SCHEDULER), *x, *jobs = rr_arr(sch, "jobs");
	struct node_row rows[MAX_NODES];
	struct span *spans;
	int nrows = 0, nspans = 0, cap = 0, pending = 0, i, nbuilds = 0, nsteps = 0, nrequeued = 0;
	double v;

	FOR_EACH_OBJ(x, rr_arr(h, "builds"))
		cap += rr_obj(x, "slurm") != NULL;
	FOR_EACH_OBJ(x, rr_arr(h, "steps"))
		cap += rr_obj(x, "slurm") != NULL;
	spans = xcalloc((size_t)cap + 1, sizeof(*spans));
	FOR_EACH_OBJ(x, rr_arr(h, "builds"))
		if (rr_obj(x, "slurm")) {
			nbuilds++;
			nrequeued += requeued(x);
			take_job(rr_obj(x, "slurm"), NULL, 0, rows, &nrows, spans, &nspans, cap, &pending);
		}
	FOR_EACH_OBJ(x, rr_arr(h, "steps"))
		if (rr_obj(x, "slurm")) {
			const cJSON *dev = rr_obj(rr_obj(x, "result"), "device");
			nsteps++;
			nrequeued += requeued(x);
			take_job(rr_obj(x, "slurm"), dev, dev != NULL, rows, &nrows, spans, &nspans, cap,
				 &pending);
		}

	strbuf_addstr(md, "**");
	rpt_md_cell_n(md, rpt_host_name(h), 64);
	strbuf_addstr(md, "**: slurmrestd ");
	rpt_md_code(md, rr_str(sch, "url"));
	strbuf_addstr(md, " (API ");
	rpt_md_cell_n(md, rr_str(sch, "api_version") ? rr_str(sch, "api_version") : "?", 16);
	if (rr_str(sch, "slurm_release")) {
		strbuf_addstr(md, ", Slurm ");
		rpt_md_cell_n(md, rr_str(sch, "slurm_release"), 24);
	}
	strbuf_addstr(md, "), partition ");
	rpt_md_code(md, rr_str(sch, "partition"));
	if (rr_str(sch, "gpus")) {
		strbuf_addstr(md, ", GPUs per step job ");
		rpt_md_code(md, rr_str(sch, "gpus"));
	}
	if (rr_str(sch, "token_source")) {
		strbuf_addstr(md, ", token from ");
		rpt_md_cell_n(md, rr_str(sch, "token_source"), 40);
	}
	strbuf_addf(md, ". %d jobs (%d builds, %d steps", cJSON_GetArraySize(jobs), nbuilds, nsteps);
	if (nrequeued)
		strbuf_addf(md, ", %d requeued", nrequeued);
	strbuf_addstr(md, ")");
	if (rr_num(sch, "max_jobs", &v))
		strbuf_addf(md, ", at most %.0f in flight", v);
	if (nspans)
		strbuf_addf(md, "; **%d ran at once** at the most (Slurm's start and end times)",
			    max_overlap(spans, nspans));
	if (rr_num(sch, "rest_requests", &v))
		strbuf_addf(md, "; %.0f REST requests", v);
	strbuf_addstr(md, ".\n\n");

	if (nrows) {
		strbuf_addstr(md, "| node | GPU (as the jobs saw it) | driver | SM clock (MHz) | jobs | "
				  "GPU jobs | queue wait median / max | run time (sum) |\n"
				  "|---|---|---|---|---|---|---|---|\n");
		for (i = 0; i < nrows; i++) {
			struct node_row *r = &rows[i];
			strbuf_addstr(md, "| ");
			rpt_md_cell_n(md, r->name, 64);
			strbuf_addstr(md, " | ");
			rpt_md_cell_n(md, r->device && rr_str(r->device, "name") ? rr_str(r->device, "name") : DASH, 64);
			strbuf_addstr(md, " | ");
			rpt_md_cell_n(md, r->device && rr_str(r->device, "driver_version") ?
					  rr_str(r->device, "driver_version") : DASH, 24);
			strbuf_addstr(md, " | ");
			if (r->device && rr_num(r->device, "sm_clock_mhz", &v))
				strbuf_addf(md, "%.0f", v);
			else
				strbuf_addstr(md, DASH);
			strbuf_addf(md, " | %d | %d | ", r->jobs, r->gpu_jobs);
			if (r->nwaits) {
				qsort(r->waits, (size_t)r->nwaits, sizeof(double), cmp_double);
				rpt_fmt_secs(md, r->nwaits % 2 ? r->waits[r->nwaits / 2] :
					     (r->waits[r->nwaits / 2 - 1] + r->waits[r->nwaits / 2]) / 2);
				strbuf_addstr(md, " / ");
				rpt_fmt_secs(md, r->waits[r->nwaits - 1]);
			} else {
				strbuf_addstr(md, DASH);
			}
			strbuf_addstr(md, " | ");
			rpt_fmt_secs(md, r->run_s);
			strbuf_addstr(md, " |\n");
			free(r->waits);
		}
		strbuf_addstr(md, "\nQueue wait is Slurm's submit-to-start time (a step job waits for its build "
				  "job too), run time its start-to-end time; a step's own timing is in the "
				  "results above.\n\n");
	}
	if (pending) {
		int k = 0;
		strbuf_addf(md, "%d job%s waited with a reason:", pending, pending == 1 ? "" : "s");
		FOR_EACH_OBJ(x, rr_arr(h, "builds")) {
			const cJSON *sl = rr_obj(x, "slurm");
			if (!sl || !rr_str(sl, "pending_reason"))
				continue;
			strbuf_addstr(md, k++ ? "; " : " ");
			build_label(md, x);
			strbuf_addstr(md, " ");
			rpt_md_cell_n(md, rr_str(sl, "pending_reason"), 80);
		}
		FOR_EACH_OBJ(x, rr_arr(h, "steps")) {
			const cJSON *sl = rr_obj(x, "slurm");
			if (!sl || !rr_str(sl, "pending_reason"))
				continue;
			strbuf_addstr(md, k++ ? "; " : " ");
			rpt_md_code(md, rr_str(x, "id"));
			strbuf_addstr(md, " ");
			rpt_md_cell_n(md, rr_str(sl, "pending_reason"), 80);
		}
		strbuf_addstr(md, ".\n\n");
	}
	if (nrequeued) {
		int k = 0;
		strbuf_addstr(md, "Requeued by gpuorch (Slurm ended the job PREEMPTED or NODE_FAIL):");
		FOR_EACH_OBJ(x, rr_arr(h, "builds")) {
			if (!requeued(x))
				continue;
			strbuf_addstr(md, k++ ? "; " : " ");
			build_label(md, x);
			attempts_line(md, rr_obj(x, "slurm"));
		}
		FOR_EACH_OBJ(x, rr_arr(h, "steps")) {
			if (!requeued(x))
				continue;
			strbuf_addstr(md, k++ ? "; " : " ");
			rpt_md_code(md, rr_str(x, "id"));
			attempts_line(md, rr_obj(x, "slurm"));
		}
		strbuf_addstr(md, ".\n\n");
	}
	free(spans);
}

void rpt_section_cluster(struct rpt_ctx *c)
{
	const cJSON *h;
	int any = 0;
	FOR_EACH_OBJ(h, c->hosts) {
		if (!rr_streq(rr_str(rr_obj(h, RK_SCHEDULER), "kind"), "slurm"))
			continue;
		if (!any++)
			strbuf_addstr(c->md, "## Cluster jobs (Slurm)\n\n");
		host_section(c->md, h);
	}
}
