/* cmd-runs.c -- `gpuorch runs`: past runs, newest first, with status and headline. */
#include "cmd/commands.h"
#include "store/runkeys.h"
#include "cmd/run-json.h"
#include "core/error.h"
#include "core/jsonutil.h"
#include "core/vocab.h"
#include "report/runsum.h"
#include "store/store.h"

#include <getopt.h> /* optind, optarg */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

static const char about[] =
	"List recorded runs, newest first: run id, experiment, status, hosts and\n"
	"the headline figure. An interrupted run shows as 'incomplete'. Each host\n"
	"is preceded by its GPU ('H200 on h100'); the second line ends with what\n"
	"went wrong: gates passed of judged, failed builds, failed and skipped steps.\n"
	"With --json, a JSON array of {run_id, dir, experiment, started_at, status,\n"
	"outcome, hosts, gpus (one per host, null when unknown), counts {gates,\n"
	"gates_failed, builds_failed, steps_failed, steps_skipped}, headline}.\n"
	"Reads each run's summary.json (docs/run-record.md), or its run.json when\n"
	"there is no current summary.\n";

static const struct cmd_option options[] = {
	{ "experiment", 'e', "NAME", NULL, "only the runs of this experiment (its name or slug)" },
	{ "limit", 'l', "N", NULL, "at most N runs (default 50)" },
	{ "json", 'j', NULL, NULL, "print a JSON array instead of the listing" },
	{ "reports", 'R', "DIR", "@dir",
	  "where runs are recorded (default ./reports, or $GPUORCH_REPORTS)" },
	{ NULL, 0, NULL, NULL, NULL },
};

/* A host's GPU as `runs` shows it: its name without "NVIDIA " ("H200"), "no
 * GPU" for a host probed without one, NULL when it was never probed. */
static const char *gpu_short(const cJSON *h)
{
	const cJSON *info = cJSON_GetObjectItem(h, "info");
	const char *g = json_str(info, "gpu_name");
	if (g && !strncmp(g, "NVIDIA ", 7) && g[7])
		return g + 7;
	if (g)
		return g;
	return info && (json_str(info, "arch") || json_str(info, "driver")) ? "no GPU" : NULL;
}

/* "gates 8/10 passed (2 failed); 4 builds failed; 8 steps skipped": what
 * went wrong, beside the headline; "" for a run with no gates and nothing
 * failed or skipped. */
static void describe_counts(const struct run_counts *k, struct strbuf *sb)
{
	if (k->gates)
		strbuf_addf(sb, "gates %d/%d passed", k->gates - k->gates_failed, k->gates);
	if (k->gates_failed)
		strbuf_addf(sb, " (%d FAILED)", k->gates_failed);
	if (k->builds_failed)
		strbuf_addf(sb, "%s%d build%s FAILED", sb->len ? "; " : "", k->builds_failed,
			    k->builds_failed == 1 ? "" : "s");
	if (k->steps_failed)
		strbuf_addf(sb, "%s%d step%s failed", sb->len ? "; " : "", k->steps_failed,
			    k->steps_failed == 1 ? "" : "s");
	if (k->steps_skipped)
		strbuf_addf(sb, "%s%d step%s skipped", sb->len ? "; " : "", k->steps_skipped,
			    k->steps_skipped == 1 ? "" : "s");
}

/* What a listing keeps between runs: the options and what it printed. */
struct listing {
	const char *exp;
	int limit, shown;
	cJSON *json;           /* --json: the array printed at the end */
	struct strbuf what;
};

static void list_json(struct listing *L, const struct store_entry *e, const char *status)
{
	cJSON_AddItemToArray(L->json, run_entry_json(e->run, e->run_id, e->dir, status));
}

static void list_text(struct listing *L, const struct store_entry *e, const char *status,
		      const struct run_counts *k)
{
	const cJSON *run = e->run, *hosts = cJSON_GetObjectItem(run, "hosts"), *h;
	const char *name = json_str(cJSON_GetObjectItem(run, "experiment"), "name");
	const char *outcome = json_str(run, RK_OUTCOME);
	/* cloud instances gpuorch started for the run (docs/cloud.md) */
	const cJSON *prov = cJSON_GetObjectItem(run, RK_PROVENANCE);
	const char *head = json_str(run, "headline");

	printf("%s  %-24.24s  %-11s", e->run_id, name ? name : "?",
	       status && !run_status_is(status, RUN_COMPLETE) ? status : outcome ? outcome : "?");
	cJSON_ArrayForEach(h, hosts) {
		if (gpu_short(h))
			printf(" %s on", gpu_short(h));
		printf(" %s%s", json_str(h, "name") ? json_str(h, "name") : "?", h->next ? "," : "");
	}
	if (json_num(prov, RK_INSTANCES_COST_TOTAL, 0) > 0)
		printf("  cost %.4f", json_num(prov, RK_INSTANCES_COST_TOTAL, 0));
	strbuf_reset(&L->what);
	describe_counts(k, &L->what);
	printf("\n    %s%s%s\n", head && *head ? head : "-", L->what.len ? " | " : "", L->what.buf);
}

/* One run, newest first (a store_visit): 1 once the listing is full. */
static int list_one(const struct store_entry *e, void *ctx)
{
	struct listing *L = ctx;
	const cJSON *run = e->run, *ex = cJSON_GetObjectItem(run, "experiment");
	const char *name = json_str(ex, "name"), *slug = json_str(ex, "slug");
	const char *status = json_str(run, "status");
	struct run_counts k;

	if (L->exp && (!name || strcmp(name, L->exp)) && (!slug || strcmp(slug, L->exp)))
		return 0;
	/* "running" with no controller holding the run: it died (SIGKILL, a
	 * lost machine); `gpuorch run --resume` takes it up */
	if (run_status_is(status, RUN_RUNNING) && !store_run_live(e->dir))
		status = "stopped";
	run_counts_sum(cJSON_GetObjectItem(run, "hosts"), &k);
	if (L->json)
		list_json(L, e, status);
	else
		list_text(L, e, status, &k);
	return ++L->shown >= L->limit;
}

static int runs_exec(int argc, char **argv)
{
	struct strbuf err = STRBUF_INIT, warn = STRBUF_INIT;
	struct listing L = { NULL, 50, 0, NULL, STRBUF_INIT };
	const char *reports = NULL;
	int c, json = 0;
	enum go_status st;

	optind = 1;
	while ((c = cmd_getopt(&cmd_runs_entry, argc, argv)) != -1) {
		switch (c) {
		case 'e': L.exp = optarg; break;
		case 'R': reports = optarg; break;
		case 'j': json = 1; break;
		case 'l':
			L.limit = cmd_parse_int(optarg, 1, 1000000);
			if (L.limit < 0)
				return cmd_usage_error(&cmd_runs_entry, "--limit: '%s' is not a "
						       "positive number", optarg);
			break;
		default:
			return cmd_option_failed(&cmd_runs_entry, c);
		}
	}
	if (optind < argc)
		return cmd_usage_error(&cmd_runs_entry, "unexpected argument '%s'", argv[optind]);
	cmd_set_reports(reports);
	if (json)
		L.json = cJSON_CreateArray();
	/* one run in memory at a time: a listing costs what it prints */
	st = store_each_newest(runsum_load, list_one, &L, &warn, &err);
	if (warn.len)
		fputs(warn.buf, stderr);
	if (st != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);
	} else if (L.json) {
		char *text = cJSON_Print(L.json);
		puts(text);
		free(text);
	} else if (!L.shown && !L.exp) {
		printf("no runs under %s yet; start one with 'gpuorch run'\n", store_root());
	}
	cJSON_Delete(L.json);
	strbuf_release(&err);
	strbuf_release(&warn);
	strbuf_release(&L.what);
	return st == GO_OK ? GO_EXIT_OK : go_exit_code(st);
}

const struct cmd_entry cmd_runs_entry = {
	.name = "runs",
	.synopsis = "[options]",
	.about = about,
	.options = options,
	.summary = "list past runs, newest first, with status and headline figures",
	.exec = runs_exec,
	.needs = CMD_NEEDS_REPORTS,
};
