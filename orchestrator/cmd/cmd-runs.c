/* cmd-runs.c -- `gpuorch runs`: past runs, newest first, with status and headline. */
#include "cmd/commands.h"
#include "core/error.h"
#include "core/jsonutil.h"
#include "report/runsum.h"
#include "store/store.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

static const char usage[] =
	"usage: gpuorch runs [--experiment NAME] [--limit N] [--json] [--reports DIR]\n"
	"\n"
	"List recorded runs, newest first: run id, experiment, status, hosts and\n"
	"the headline figure. An interrupted run shows as 'incomplete'. With --json,\n"
	"a JSON array of {run_id, dir, experiment, started_at, status, outcome,\n"
	"hosts, headline}. Reads each run's summary.json (docs/run-record.md), or\n"
	"its run.json when there is no current summary.\n";

static int runs_exec(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "experiment", required_argument, NULL, 'e' },
		{ "limit", required_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ "reports", required_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	struct strbuf err = STRBUF_INIT, warn = STRBUF_INIT, head = STRBUF_INIT;
	struct store_entry *v = NULL;
	const char *exp = NULL, *reports = NULL;
	int n = 0, limit = 50, c, i, shown = 0, json = 0;
	cJSON *out = NULL;
	enum go_status st;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'e': exp = optarg; break;
		case 'R': reports = optarg; break;
		case 'j': json = 1; break;
		case 'l':
			limit = cmd_parse_int(optarg, 1, 1000000);
			if (limit < 0)
				return cmd_usage_error(&cmd_runs_entry, "--limit: '%s' is not a "
						       "positive number", optarg);
			break;
		case ':':
			return cmd_usage_error(&cmd_runs_entry, "option '%s' needs a value",
					       argv[optind - 1]);
		default:
			return cmd_usage_error(&cmd_runs_entry, "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cmd_usage_error(&cmd_runs_entry, "unexpected argument '%s'", argv[optind]);
	cmd_set_reports(reports);
	st = runsum_list(&v, &n, &warn, &err);
	if (st != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);
		strbuf_release(&err);
		strbuf_release(&warn);
		return go_exit_code(st);
	}
	if (warn.len)
		fputs(warn.buf, stderr);
	if (json)
		out = cJSON_CreateArray();
	else if (!n)
		printf("no runs under %s yet; start one with 'gpuorch run'\n", store_root());
	for (i = 0; i < n && shown < limit; i++) {
		const cJSON *run = v[i].run;
		const cJSON *e = cJSON_GetObjectItem(run, "experiment");
		const char *name = json_str(e, "name");
		const char *status = json_str(run, "status");
		/* "running" with no controller holding the run: it died (SIGKILL, a
		 * lost machine); `gpuorch run --resume` takes it up */
		if (status && !strcmp(status, "running") && !store_run_live(v[i].dir))
			status = "stopped";
		const char *outcome = json_str(run, "outcome");
		const cJSON *hosts = cJSON_GetObjectItem(run, "hosts");
		const cJSON *h;
		if (exp && (!name || strcmp(name, exp)) && (!json_str(e, "slug") ||
							    strcmp(json_str(e, "slug"), exp)))
			continue;
		if (json) {
			cJSON *o = cJSON_CreateObject(), *hn;
			json_add_str(o, "run_id", v[i].run_id);
			json_add_str(o, "dir", v[i].dir);
			json_add_str(o, "experiment", name);
			json_add_str(o, "started_at", json_str(run, "started_at"));
			json_add_str(o, "status", status);
			json_add_str(o, "outcome", outcome);
			hn = json_add_arr(o, "hosts");
			cJSON_ArrayForEach(h, hosts)
				cJSON_AddItemToArray(hn, cJSON_CreateString(json_str(h, "name") ? json_str(h, "name") : "?"));
			json_add_str(o, "headline", json_str(run, "headline"));
			cJSON_AddItemToArray(out, o);
			shown++;
			continue;
		}
		strbuf_reset(&head);
		strbuf_addstr(&head, json_str(run, "headline") ? json_str(run, "headline") : "");
		printf("%s  %-24.24s  %-11s", v[i].run_id, name ? name : "?",
		       status && strcmp(status, "complete") ? status : outcome ? outcome : "?");
		cJSON_ArrayForEach(h, hosts) printf(" %s", json_str(h, "name") ? json_str(h, "name") : "?");
		{
			/* cloud instances gpuorch started for the run (docs/cloud.md) */
			const cJSON *prov = cJSON_GetObjectItem(run, "provenance");
			if (json_num(prov, "instances_cost_total", 0) > 0)
				printf("  cost %.4f", json_num(prov, "instances_cost_total", 0));
		}
		printf("\n    %s\n", head.len ? head.buf : "-");
		shown++;
	}
	if (out) {
		char *text = cJSON_Print(out);
		puts(text);
		free(text);
		cJSON_Delete(out);
	}
	store_list_free(v, n);
	strbuf_release(&err);
	strbuf_release(&warn);
	strbuf_release(&head);
	return GO_EXIT_OK;
}

const struct cmd_entry cmd_runs_entry = {
	"runs", usage, "list past runs, newest first, with status and headline figures", runs_exec,
	CMD_NEEDS_REPORTS,
};
