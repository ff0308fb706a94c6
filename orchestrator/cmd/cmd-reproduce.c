/* cmd-reproduce.c -- `gpuorch reproduce`: options, then reproduce_main() (run/reproduce.h). */
#include "cmd/commands.h"
#include "cmd/run-json.h"
#include "run/reproduce.h"
#include "core/stats.h"
#include "core/error.h"

#include <getopt.h> /* optind, optarg */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

static const char about[] =
	"Rebuild a recorded run's sources as they were at its commit (the spec is\n"
	"read from the commit too; the work tree is not touched), rerun it on a host\n"
	"with the same GPU model as the recorded one, and write reproduction.md in\n"
	"the new run's directory: old and new figures side by side with a verdict\n"
	"on each (reproduced, faster, slower, different, insufficient data). A run\n"
	"recorded from a dirty tree is rebuilt with its recorded source.diff applied\n"
	"in a scratch git worktree.\n";

static const struct cmd_option options[] = {
	{ "hosts", 'H', "FILE", "@file", "hosts inventory; the first host with the recorded\n"
					 "GPU model is used" },
	{ "host", 'n', "NAME", NULL, "use this host whatever its GPU" },
	{ "commit", 'c', "REV", NULL, "reproduce the newest recorded run of EXPERIMENT at REV" },
	{ "factor", 'f', "F", NULL, "smallest ratio of medians called a change (default 1.05)" },
	CMD_RUN_STEP_OPTIONS,
	{ "reports", 'R', "DIR", "@dir",
	  "where runs are recorded (default ./reports, or $GPUORCH_REPORTS)" },
	{ "root", 'o', "DIR", "@dir", "the git repository (default .)" },
	{ "json", 'j', NULL, NULL, "print the verdict as one JSON object on stdout\n"
				    "(docs/schema/cli-reproduce.schema.json); the rerun's\n"
				    "progress and reproduction.md go to stderr" },
	{ NULL, 0, NULL, NULL, NULL },
};

static int reproduce_exec(int argc, char **argv)
{
	struct reproduce_opts o;
	struct strbuf cl = STRBUF_INIT;
	const char *reports = NULL;
	int c, i, rc, json = 0;

	memset(&o, 0, sizeof(o));
	o.step = (struct run_step_opts)RUN_STEP_OPTS_INIT;
	o.step.plain = 1;   /* the rerun's progress as lines, as before */
	o.root = ".";
	o.factor = STATS_DEFAULT_FACTOR;
	optind = 1;
	while ((c = cmd_getopt(&cmd_reproduce_entry, argc, argv)) != -1) {
		int k = cmd_run_step_option(&cmd_reproduce_entry, c, optarg, &o.step);
		if (k > 0)
			continue;
		if (k < 0)
			return GO_EXIT_USAGE;
		switch (c) {
		case 'H': o.hosts_path = optarg; break;
		case 'n': o.host = optarg; break;
		case 'c': o.commit_rev = optarg; break;
		case 'R': reports = optarg; break;
		case 'o': o.root = optarg; break;
		case 'j': json = 1; break;
		case 'f':
			if (cmd_parse_factor(optarg, &o.factor) < 0)
				return cmd_usage_error(&cmd_reproduce_entry, "--factor: '%s' is not a "
						       "ratio of at least 1 (e.g. 1.05)", optarg);
			break;
		default:
			return cmd_option_failed(&cmd_reproduce_entry, c);
		}
	}
	if (argc - optind != 1)
		return cmd_usage_error(&cmd_reproduce_entry, o.commit_rev
				       ? "give one experiment name with --commit"
				       : "give one run id");
	if (!o.hosts_path)
		return cmd_usage_error(&cmd_reproduce_entry, "no hosts inventory: give --hosts FILE");
	cmd_set_reports(reports);
	strbuf_addstr(&cl, "gpuorch");
	for (i = 0; i < argc; i++) {
		strbuf_addch(&cl, ' ');
		strbuf_add_shell_quoted(&cl, argv[i]);
	}
	o.command_line = cl.buf;
	if (json) {
		cJSON *doc = NULL;
		int saved = cmd_json_stdout_begin();
		o.json_out = &doc;
		rc = reproduce_main(&o, argv[optind]);
		cmd_json_stdout_end(saved);
		if (doc)
			cmd_json_print(doc);
	} else {
		rc = reproduce_main(&o, argv[optind]);
	}
	strbuf_release(&cl);
	return rc;
}

const struct cmd_entry cmd_reproduce_entry = {
	.name = "reproduce",
	.synopsis = "RUN_ID --hosts FILE [options]\n--commit REV EXPERIMENT --hosts FILE [options]",
	.about = about,
	.options = options,
	.after = "exit: 0 reproduced, 1 not reproduced (a figure differs, the sources or spec\n"
		 "      differ, or the rerun failed), 2 bad input, 3 no host with that GPU,\n"
		 "      4 local error (docs/reproduce.md)\n",
	.summary = "rebuild a recorded run at its commit, rerun it, compare",
	.exec = reproduce_exec,
	.needs = CMD_NEEDS_SSH | CMD_NEEDS_REPORTS,
};
