/* cmd-find.c -- `gpuorch find GOOD..BAD EXPERIMENT`: options, then find_main() (run/bisect.h). */
#include "cmd/commands.h"
#include "cmd/run-json.h"
#include "core/jsonutil.h"
#include "run/bisect.h"
#include "core/stats.h"
#include "core/error.h"

#include <getopt.h> /* optind, optarg */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

static const char about[] =
	"Bisect the commits between GOOD and BAD (git rev-list GOOD..BAD) to the\n"
	"first one where a figure (default: the first kernel benchmark's median)\n"
	"changed significantly against GOOD's, in the direction BAD changed, by\n"
	"compare's rule (the stored samples; x1.08 across two GPU instances; a\n"
	"commit measured on another GPU model or clock cap is skipped).\n"
	"Runs already recorded at a commit with the same spec hash are reused;\n"
	"the others are run on one host with the same GPU model.\n";

static const struct cmd_option options[] = {
	{ "hosts", 'H', "FILE", "@file", "hosts inventory" },
	{ "host", 'n', "NAME", NULL, "run on this host" },
	{ "program", 'P', "P", NULL, "the figure to follow: its program" },
	{ "problem", 'Q', "Q", NULL, "the figure to follow: its problem" },
	{ "figure", 'F', "NAME", NULL, "a figure the program printed, or a kernel's median\n"
				       "(kernel:KEY.median_us), instead of the timing; one\n"
				       "value a run: a change is a ratio beyond --factor" },
	{ "factor", 'f', "F", NULL, "smallest ratio of medians called a change (default 1.05)" },
	{ "spec", 's', "PATH", "@file", "the spec's path in the repository (default: the path\n"
					"recorded by the newest run of EXPERIMENT)" },
	CMD_RUN_STEP_OPTIONS,
	{ "reports", 'R', "DIR", "@dir",
	  "where runs are recorded (default ./reports, or $GPUORCH_REPORTS)" },
	{ "root", 'o', "DIR", "@dir", "the git repository (default .)" },
	{ "json", 'j', NULL, NULL, "print the result as one JSON object on stdout\n"
				    "(docs/schema/cli-find.schema.json); progress to stderr" },
	{ NULL, 0, NULL, NULL, NULL },
};

/* find_main; with --json its text goes to stderr and, once it reached a
 * result, the gpuorch.cli.find/1 document to stdout */
static int find_and_print(struct finder *f, const char *range, int json)
{
	int rc, saved;

	if (!json)
		return find_main(f, range);
	f->json = cmd_json_doc("gpuorch.cli.find/1");
	saved = cmd_json_stdout_begin();
	rc = find_main(f, range);
	cmd_json_stdout_end(saved);
	if (cJSON_GetObjectItem(f->json, "result")) {
		json_add_num(f->json, "exit_code", rc);
		cmd_json_print(f->json);
	} else {
		cJSON_Delete(f->json);
	}
	f->json = NULL;
	return rc;
}

static int find_exec(int argc, char **argv)
{
	struct finder f;
	const char *reports = NULL, *dots;
	int c, i, rc, json = 0;

	memset(&f, 0, sizeof(f));
	f.step = (struct run_step_opts)RUN_STEP_OPTS_INIT;
	f.step.plain = 1;   /* find prints its own lines between the runs' */
	f.root = ".";
	f.factor = STATS_DEFAULT_FACTOR;
	optind = 1;
	while ((c = cmd_getopt(&cmd_find_entry, argc, argv)) != -1) {
		int k = cmd_run_step_option(&cmd_find_entry, c, optarg, &f.step);
		if (k > 0)
			continue;
		if (k < 0)
			return GO_EXIT_USAGE;
		switch (c) {
		case 'H': f.hosts_path = optarg; break;
		case 'n': f.host = optarg; break;
		case 'P': f.program = optarg; break;
		case 'F': f.figure = optarg; break;
		case 'Q': f.problem = optarg; break;
		case 's': f.spec_path = optarg; break;
		case 'R': reports = optarg; break;
		case 'o': f.root = optarg; break;
		case 'j': json = 1; break;
		case 'f':
			if (cmd_parse_factor(optarg, &f.factor) < 0)
				return cmd_usage_error(&cmd_find_entry, "--factor: '%s' is not a "
						       "ratio of at least 1 (e.g. 1.05)", optarg);
			break;
		default:
			return cmd_option_failed(&cmd_find_entry, c);
		}
	}
	if (argc - optind != 2)
		return cmd_usage_error(&cmd_find_entry, "give GOOD..BAD and an experiment name");
	if (!f.hosts_path)
		return cmd_usage_error(&cmd_find_entry, "no hosts inventory: give --hosts FILE");
	dots = strstr(argv[optind], "..");
	if (!dots || dots == argv[optind] || !dots[2] || strstr(dots + 2, ".."))
		return cmd_usage_error(&cmd_find_entry, "'%s' is not a range GOOD..BAD",
				       argv[optind]);
	f.experiment = argv[optind + 1];
	cmd_set_reports(reports);
	strbuf_init(&f.cl, 0);
	strbuf_addstr(&f.cl, "gpuorch");
	for (i = 0; i < argc; i++) {
		strbuf_addch(&f.cl, ' ');
		strbuf_add_shell_quoted(&f.cl, argv[i]);
	}
	rc = find_and_print(&f, argv[optind], json);
	strbuf_release(&f.cl);
	return rc;
}

const struct cmd_entry cmd_find_entry = {
	.name = "find",
	.synopsis = "GOOD..BAD EXPERIMENT --hosts FILE [options]",
	.about = about,
	.options = options,
	.after = "exit: 0 the commit was found, 1 BAD does not differ from GOOD or the\n"
		 "      change cannot be pinned to one commit, 2 bad input, 3 no usable host\n",
	.summary = "bisect commits to the one where a figure changed",
	.exec = find_exec,
	.needs = CMD_NEEDS_SSH | CMD_NEEDS_REPORTS,
};
