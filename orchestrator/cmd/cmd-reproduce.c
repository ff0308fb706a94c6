/* cmd-reproduce.c -- `gpuorch reproduce`: options, then reproduce_main() (run/reproduce.h). */
#include "cmd/commands.h"
#include "run/reproduce.h"
#include "core/stats.h"
#include "core/error.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

static const char usage[] =
	"usage: gpuorch reproduce RUN_ID --hosts FILE [options]\n"
	"   or: gpuorch reproduce --commit REV EXPERIMENT --hosts FILE [options]\n"
	"\n"
	"Rebuild a recorded run's sources as they were at its commit (the spec is\n"
	"read from the commit too; the work tree is not touched), rerun it on a host\n"
	"with the same GPU model as the recorded one, and write reproduction.md in\n"
	"the new run's directory: old and new figures side by side with a verdict\n"
	"on each (reproduced, faster, slower, different, insufficient data). A run\n"
	"recorded from a dirty tree is rebuilt with its recorded source.diff applied\n"
	"in a scratch git worktree.\n"
	"\n"
	"    --hosts FILE             hosts inventory; the first host with the recorded\n"
	"                             GPU model is used\n"
	"    --host NAME              use this host whatever its GPU\n"
	"    --commit REV             reproduce the newest recorded run of EXPERIMENT at REV\n"
	"    --factor F               smallest ratio of medians called a change (default 1.05)\n"
	CMD_RUN_STEP_USAGE
	"    --reports DIR            where runs are recorded (default ./reports, or $GPUORCH_REPORTS)\n"
	"    --root DIR               the git repository (default .)\n"
	"\n"
	"exit: 0 reproduced, 1 not reproduced (a figure differs, the sources or spec\n"
	"      differ, or the rerun failed), 2 bad input, 3 no host with that GPU,\n"
	"      4 local error (docs/reproduce.md)\n";

static int reproduce_exec(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "hosts", required_argument, NULL, 'H' },
		{ "host", required_argument, NULL, 'n' },
		{ "commit", required_argument, NULL, 'c' },
		{ "factor", required_argument, NULL, 'f' },
		CMD_RUN_STEP_OPTIONS,
		{ "reports", required_argument, NULL, 'R' },
		{ "root", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	struct reproduce_opts o;
	struct strbuf cl = STRBUF_INIT;
	const char *reports = NULL;
	int c, i, rc;

	memset(&o, 0, sizeof(o));
	o.step = (struct run_step_opts)RUN_STEP_OPTS_INIT;
	o.step.plain = 1;   /* the rerun's progress as lines, as before */
	o.root = ".";
	o.factor = STATS_DEFAULT_FACTOR;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
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
		case 'f':
			if (cmd_parse_factor(optarg, &o.factor) < 0)
				return cmd_usage_error(&cmd_reproduce_entry, "--factor: '%s' is not a "
						       "ratio of at least 1 (e.g. 1.05)", optarg);
			break;
		case ':':
			return cmd_usage_error(&cmd_reproduce_entry, "option '%s' needs a value",
					       argv[optind - 1]);
		default:
			return cmd_usage_error(&cmd_reproduce_entry, "unknown option '%s'",
					       argv[optind - 1]);
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
	rc = reproduce_main(&o, argv[optind]);
	strbuf_release(&cl);
	return rc;
}

const struct cmd_entry cmd_reproduce_entry = {
	"reproduce", usage, "rebuild a recorded run at its commit, rerun it, compare", reproduce_exec,
	CMD_NEEDS_SSH | CMD_NEEDS_REPORTS,
};
