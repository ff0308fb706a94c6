/* cmd-history.c -- `gpuorch history EXPERIMENT`: options, then timeline_run() (run/history-timeline.h). */
#include "cmd/commands.h"
#include "core/stats.h"
#include "run/history-timeline.h"
#include "core/metric.h"

#include <getopt.h> /* optind, optarg */
#include <math.h>
#include <string.h>
#include "core/banned.h"

static const char about[] =
	"List every complete run of EXPERIMENT in commit order with its headline\n"
	"figure, and write REPORTS/<experiment>/history.md with a chart,\n"
	"history.svg, beside it: the figure over commits, one series per GPU model,\n"
	"step changes (regressions and gains) marked.\n";

static const struct cmd_option options[] = {
	{ "program", 'P', "P", NULL, "the figure's program (default: the newest run's first\n"
				     "kernel benchmark)" },
	{ "problem", 'Q', "Q", NULL, "the figure's problem (default as for --program)" },
	{ "metric", 'm', "M", "latency_us tflops gbps",
	  "latency_us (the median, default), tflops or gbps\n"
	  "(the spec's names; 'latency' still means latency_us)" },
	{ "figure", 'F', "NAME", NULL, "instead: a figure the program printed (its spec name,\n"
				       "e.g. gflops) or a kernel's median from a kernel_timing\n"
				       "step (kernel:KEY.median_us); one value a run, so a step\n"
				       "is a change beyond the factor in its better direction" },
	{ "factor", 'f', "F", NULL, "smallest ratio called a step (default 1.05)" },
	{ "json", 'j', NULL, NULL, "print the points as JSON instead of the table (the\n"
				   "files are written all the same)" },
	{ "root", 'o', "DIR", "@dir", "the git repository that orders the commits (default .)" },
	CMD_TRACE_STORE_OPTION,
	{ "reports", 'R', "DIR", "@dir",
	  "where runs are recorded (default ./reports, or $GPUORCH_REPORTS)" },
	{ NULL, 0, NULL, NULL, NULL },
};

static int history_exec(int argc, char **argv)
{
	struct timeline_opts o;
	const char *reports = NULL;
	int c;

	memset(&o, 0, sizeof(o));
	o.factor = STATS_DEFAULT_FACTOR;
	optind = 1;
	while ((c = cmd_getopt(&cmd_history_entry, argc, argv)) != -1) {
		switch (c) {
		case 'P': o.program = optarg; break;
		case 'Q': o.problem = optarg; break;
		case 'o': o.root = optarg; break;
		case 'R': reports = optarg; break;
		case 'j': o.json = 1; break;
		case 'F': o.figure = optarg; break;
		case 'm':
			o.metric = metric_find(!strcmp(optarg, "latency") ? "latency_us" : optarg);
			if (!o.metric || isnan(timeline_value(o.metric, NULL)))
				return cmd_usage_error(&cmd_history_entry, "--metric: '%s' is not "
						       "latency_us, tflops or gbps", optarg);
			break;
		case 'f':
			if (cmd_parse_factor(optarg, &o.factor) < 0)
				return cmd_usage_error(&cmd_history_entry, "--factor: '%s' is not a "
						       "ratio of at least 1 (e.g. 1.05)", optarg);
			break;
		default:
			return cmd_option_failed(&cmd_history_entry, c);
		}
	}
	if (argc - optind != 1)
		return cmd_usage_error(&cmd_history_entry, "give one experiment name");
	if (o.figure && o.metric)
		return cmd_usage_error(&cmd_history_entry, "give --metric or --figure, not both");
	o.experiment = argv[optind];
	cmd_set_reports(reports);
	return timeline_run(&o);
}

const struct cmd_entry cmd_history_entry = {
	.name = "history",
	.synopsis = "EXPERIMENT [options]",
	.about = about,
	.options = options,
	.after = "A run without the figure (infra_error, a step that did not pass) is a row\n"
		 "'no figure (OUTCOME)' in the table and an entry of runs_without_figure in\n"
		 "the JSON; it is not plotted.\n"
		 "\n"
		 "exit: 0, 1 when the newest measured point is a regression against the one\n"
		 "      before it (a newer run without the figure does not hide it), 2 bad input\n",
	.summary = "every run of an experiment across commits: a table and a chart",
	.exec = history_exec,
	.needs = CMD_NEEDS_REPORTS,
};
