/* cmd-summarize.c -- `gpuorch summarize`: write the summary of every run that lacks a current one. */
#include "cmd/commands.h"
#include "core/error.h"
#include "core/jsonutil.h"
#include "core/strbuf.h"
#include "report/runsum.h"
#include "store/store.h"

#include <getopt.h> /* optind, optarg */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

static const char about[] =
	"Write summary.json and samples.txt beside every recorded run.json that has\n"
	"no current summary (runs recorded before summaries existed, runs whose\n"
	"controller was killed, run.json edited since). `runs` and `history` read\n"
	"those instead of every sample; they work without them, only slower.\n";

static const struct cmd_option options[] = {
	{ "reports", 'R', "DIR", "@dir",
	  "where runs are recorded (default ./reports, or $GPUORCH_REPORTS)" },
	{ "json", 'j', NULL, NULL, "print one JSON object (docs/schema/cli-summarize.schema.json)" },
	{ NULL, 0, NULL, NULL, NULL },
};

/* What summarize saw: the runs summarised (their ids, for --json). */
struct summarized {
	int n;
	cJSON *runs;   /* NULL without --json */
};

/* A run summarised (a store_visit): counted, its summary freed after. */
static int count_one(const struct store_entry *e, void *ctx)
{
	struct summarized *s = ctx;
	s->n++;
	if (s->runs)
		cJSON_AddItemToArray(s->runs, cJSON_CreateString(e->run_id ? e->run_id : "?"));
	return 0;
}

/* --json: the document of the text line, each warning line an entry */
static void print_json(const struct summarized *s, const struct strbuf *warn, int rc)
{
	cJSON *doc = cmd_json_doc("gpuorch.cli.summarize/1"), *w;
	const char *p = warn->len ? warn->buf : NULL;
	json_add_str(doc, "reports", store_root());
	json_add_num(doc, "summarised", s->n);
	cJSON_AddItemToObject(doc, "runs", cJSON_Duplicate(s->runs, 1));
	w = json_add_arr(doc, "warnings");
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *line = xstrfmt("%.*s", (int)len, p);
		cJSON_AddItemToArray(w, cJSON_CreateString(line));
		free(line);
		p += len + (nl != NULL);
	}
	json_add_num(doc, "exit_code", rc);
	cmd_json_print(doc);
}

static int summarize_exec(int argc, char **argv)
{
	struct strbuf err = STRBUF_INIT, warn = STRBUF_INIT;
	const char *reports = NULL;
	struct summarized sum = { 0, NULL };
	int c, rc, json = 0;
	enum go_status st;

	optind = 1;
	while ((c = cmd_getopt(&cmd_summarize_entry, argc, argv)) != -1) {
		switch (c) {
		case 'R': reports = optarg; break;
		case 'j': json = 1; break;
		default:
			return cmd_option_failed(&cmd_summarize_entry, c);
		}
	}
	if (optind < argc)
		return cmd_usage_error(&cmd_summarize_entry, "unexpected argument '%s'", argv[optind]);
	cmd_set_reports(reports);
	if (json)
		sum.runs = cJSON_CreateArray();
	/* one run in memory at a time, whatever the store holds */
	st = store_each(runsum_refresh, count_one, &sum, &warn, &err);
	if (warn.len)
		fputs(warn.buf, stderr);
	rc = st != GO_OK ? go_exit_code(st) : warn.len ? GO_EXIT_FAILED : GO_EXIT_OK;
	if (st != GO_OK)
		fprintf(stderr, "error: %s\n", err.buf);   /* no result: nothing on stdout */
	else if (json)
		print_json(&sum, &warn, rc);
	else
		printf("%d run%s summarised under %s\n", sum.n, sum.n == 1 ? "" : "s", store_root());
	cJSON_Delete(sum.runs);
	strbuf_release(&err);
	strbuf_release(&warn);
	return cmd_finish_stdout(rc);
}

const struct cmd_entry cmd_summarize_entry = {
	.name = "summarize",
	.synopsis = "[options]",
	.about = about,
	.options = options,
	.summary = "write the small per-run summaries that runs and history read",
	.exec = summarize_exec,
	.needs = CMD_NEEDS_REPORTS,
};
