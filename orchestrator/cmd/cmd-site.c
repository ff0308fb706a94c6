/* cmd-site.c -- `gpuorch site`: options, then site_write() (run/site.h). */
#include "cmd/commands.h"
#include "core/error.h"
#include "run/site.h"

#include <getopt.h> /* optind, optarg */
#include <string.h>
#include "core/banned.h"

static const char about[] =
	"Write a static HTML site of every recorded run into DIR: a runs index\n"
	"(filter by experiment, GPU model and status; pick two runs to compare\n"
	"them), each run's report with its charts, and each experiment's history\n"
	"(its headline figure across commits: median, p10-p90 band, one series per\n"
	"GPU model; zoom with the wheel, a point opens its run). Plain files: open\n"
	"DIR/index.html in a browser, or serve DIR from any web server. DIR is\n"
	"replaced whole, in one rename (docs/site.md).\n";

static const struct cmd_option options[] = {
	{ "out", 'o', "DIR", "@dir", "where the site goes (default ./site): a new or empty\n"
				     "folder, or a site written before (replaced)" },
	{ "root", 'g', "DIR", "@dir", "the git repository that orders the commits (default .)" },
	{ "every-figure", 'F', NULL, NULL, "also a history page for each timed figure (program and\n"
					   "problem) of each experiment's newest measured run,\n"
					   "and each named figure (history --figure) of its newest\n"
					   "run with any, not only its headline" },
	{ "quiet", 'q', NULL, NULL, "print nothing when all went well" },
	CMD_TRACE_STORE_OPTION,
	{ "json", 'j', NULL, NULL, "print one JSON object (docs/schema/cli-site.schema.json)" },
	{ "reports", 'R', "DIR", "@dir",
	  "where runs are recorded (default ./reports, or $GPUORCH_REPORTS)" },
	{ NULL, 0, NULL, NULL, NULL },
};

static int site_exec(int argc, char **argv)
{
	struct site_opts o;
	const char *reports = NULL;
	int c, json = 0, rc;

	memset(&o, 0, sizeof(o));
	o.out = "site";
	optind = 1;
	while ((c = cmd_getopt(&cmd_site_entry, argc, argv)) != -1) {
		switch (c) {
		case 'o': o.out = optarg; break;
		case 'g': o.root = optarg; break;
		case 'q': o.quiet = 1; break;
		case 'F': o.every_figure = 1; break;
		case 'R': reports = optarg; break;
		case 'j': json = 1; break;
		default:
			return cmd_option_failed(&cmd_site_entry, c);
		}
	}
	if (optind < argc)
		return cmd_usage_error(&cmd_site_entry, "unexpected argument '%s'", argv[optind]);
	if (!*o.out)
		return cmd_usage_error(&cmd_site_entry, "--out: give a folder");
	if (json && o.quiet)
		return cmd_usage_error(&cmd_site_entry, "--quiet prints nothing: drop --json");
	cmd_set_reports(reports);
	if (!json)
		return cmd_finish_stdout(site_write(&o));
	o.json = cmd_json_doc("gpuorch.cli.site/1");
	rc = site_write(&o);
	if (rc == GO_EXIT_OK)   /* no site written: the error is on stderr, stdout stays empty */
		cmd_json_print(o.json);
	else
		cJSON_Delete(o.json);
	return cmd_finish_stdout(rc);
}

const struct cmd_entry cmd_site_entry = {
	.name = "site",
	.synopsis = "[--out DIR] [options]",
	.about = about,
	.options = options,
	.after = "exit: 0, 2 bad usage or a --out that is not a site's folder, 4 a file\n"
		 "      that could not be read or written\n",
	.summary = "write a static HTML site of the runs: index, reports, history, compare",
	.exec = site_exec,
	.needs = CMD_NEEDS_REPORTS,
};
