/* cmd-report.c -- `gpuorch report RUN_ID`: (re)write a run's report.md from run.json. */
#include "cmd/commands.h"
#include "core/error.h"
#include "report/report.h"
#include "store/store.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include "core/banned.h"

static const char usage[] =
	"usage: gpuorch report RUN_ID [--stdout] [--reports DIR]\n"
	"\n"
	"Write REPORTS/<experiment>/<run-id>/report.md again from the run's record\n"
	"(run.json), or print it with --stdout. RUN_ID may be a unique prefix.\n";

static int report_exec(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "stdout", no_argument, NULL, 's' },
		{ "reports", required_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	struct strbuf err = STRBUF_INIT;
	struct store_entry e;
	const char *reports = NULL;
	int to_stdout = 0, c, rc = 0;
	enum go_status st;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 's': to_stdout = 1; break;
		case 'R': reports = optarg; break;
		case ':':
			return cmd_usage_error(&cmd_report_entry, "option '%s' needs a value",
					       argv[optind - 1]);
		default:
			return cmd_usage_error(&cmd_report_entry, "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cmd_usage_error(&cmd_report_entry, "no run id given (see 'gpuorch runs')");
	if (optind + 1 < argc)
		return cmd_usage_error(&cmd_report_entry, "unexpected argument '%s'",
				       argv[optind + 1]);
	cmd_set_reports(reports);
	st = store_find(argv[optind], &e, &err);
	if (st != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);
		strbuf_release(&err);
		return go_exit_code(st);
	}
	if (to_stdout) {
		struct strbuf md = STRBUF_INIT;
		report_render(e.run, &md);
		fwrite(md.buf, 1, md.len, stdout);
		strbuf_release(&md);
	} else {
		char *path = xstrfmt("%s/report.md", e.dir);
		st = report_write(e.run, path, &err);
		if (st == GO_OK) {
			printf("%s\n", path);
		} else {
			fprintf(stderr, "error: %s\n", err.buf);
			rc = go_exit_code(st);
		}
		free(path);
	}
	store_entry_release(&e);
	strbuf_release(&err);
	return rc;
}

const struct cmd_entry cmd_report_entry = {
	"report", usage, "(re)write the Markdown report of a run from its record", report_exec,
	CMD_NEEDS_REPORTS,
};
