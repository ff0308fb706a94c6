/* cmd-summarize.c -- `gpuorch summarize`: write the summary of every run that lacks a current one. */
#include "cmd/commands.h"
#include "core/error.h"
#include "report/runsum.h"
#include "store/store.h"

#include <getopt.h> /* optind, optarg */
#include <stdio.h>
#include "core/banned.h"

static const char about[] =
	"Write summary.json and samples.txt beside every recorded run.json that has\n"
	"no current summary (runs recorded before summaries existed, runs whose\n"
	"controller was killed, run.json edited since). `runs` and `history` read\n"
	"those instead of every sample; they work without them, only slower.\n";

static const struct cmd_option options[] = {
	{ "reports", 'R', "DIR", "@dir",
	  "where runs are recorded (default ./reports, or $GPUORCH_REPORTS)" },
	{ NULL, 0, NULL, NULL, NULL },
};

/* A run summarised (a store_visit): counted, its summary freed after. */
static int count_one(const struct store_entry *e, void *ctx)
{
	(void)e;
	++*(int *)ctx;
	return 0;
}

static int summarize_exec(int argc, char **argv)
{
	struct strbuf err = STRBUF_INIT, warn = STRBUF_INIT;
	const char *reports = NULL;
	int n = 0, c, rc;
	enum go_status st;

	optind = 1;
	while ((c = cmd_getopt(&cmd_summarize_entry, argc, argv)) != -1) {
		switch (c) {
		case 'R': reports = optarg; break;
		default:
			return cmd_option_failed(&cmd_summarize_entry, c);
		}
	}
	if (optind < argc)
		return cmd_usage_error(&cmd_summarize_entry, "unexpected argument '%s'", argv[optind]);
	cmd_set_reports(reports);
	/* one run in memory at a time, whatever the store holds */
	st = store_each(runsum_refresh, count_one, &n, &warn, &err);
	if (warn.len)
		fputs(warn.buf, stderr);
	if (st != GO_OK)
		fprintf(stderr, "error: %s\n", err.buf);
	else
		printf("%d run%s summarised under %s\n", n, n == 1 ? "" : "s", store_root());
	rc = st != GO_OK ? go_exit_code(st) : warn.len ? GO_EXIT_FAILED : GO_EXIT_OK;
	strbuf_release(&err);
	strbuf_release(&warn);
	return rc;
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
