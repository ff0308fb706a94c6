/* cmd-run.c -- `gpuorch run`: options, then runner_run(). */
#include "cmd/commands.h"
#include "cmd/run-json.h"
#include "core/error.h"
#include "report/notify.h"
#include "run/run-engine.h"
#include "core/strbuf.h"

#include <getopt.h> /* optind, optarg */
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

static const char about[] =
	"Package the spec's sources (from the work tree, or from git commit REV),\n"
	"ship them to every host in parallel, build them with nvcc for each host's\n"
	"arch, run the spec's steps there and write REPORTS/<experiment>/<run-id>/\n"
	"{run.json,report.md,logs/}.\n";

static const struct cmd_option options[] = {
	{ "hosts", 'H', "FILE", "@file", "hosts inventory (docs/hosts.md)" },
	{ "host", 'n', "NAME", NULL, "only this host (repeatable)" },
	{ "commit", 'c', "REV", NULL, "package the sources as they are at commit REV" },
	{ "dry-run", 'd', NULL, NULL, "print the plan (hosts, files, content id, remote\n"
				      "commands) and send nothing" },
	{ "spread", 'S', NULL, NULL, "deal the steps (program x problem x variant) over every\n"
				     "GPU of the hosts of one GPU model, each step once, instead\n"
				     "of every host running them all (spec \"spread\"; docs/spec.md)" },
	CMD_RUN_STEP_OPTIONS,
	{ "reports", 'R', "DIR", "@dir",
	  "where runs are recorded (default ./reports, or $GPUORCH_REPORTS)" },
	{ "root", 'o', "DIR", "@dir", "repository root the spec's paths are relative to (default .)" },
	{ "json", 'j', NULL, NULL, "print the run's outcome as one JSON object on stdout\n"
				    "(docs/schema/cli-run.schema.json); progress goes to stderr" },
	{ "notify", 'N', "URL", NULL, "POST a JSON summary of the finished run to this webhook\n"
				      "(default $GPUORCH_NOTIFY_URL; docs/notify.md)" },
	{ "resume", 'U', "RUN_ID", NULL, "take up run RUN_ID whose controller died: same spec,\n"
					 "sources and hosts; what its hosts' runners did\n"
					 "meanwhile is collected, nothing runs twice" },
	{ NULL, 0, NULL, NULL, NULL },
};

/* runner_run; with --json its text goes to stderr and the run's JSON
 * document (made from the summary it wrote) to stdout. */
static int run_and_print(struct run_opts *o, int json)
{
	char *dir = NULL;
	int rc, saved;

	if (!json)
		return runner_run(o);
	o->run_dir_out = &dir;
	saved = cmd_json_stdout_begin();
	rc = runner_run(o);
	cmd_json_stdout_end(saved);
	if (dir && cmd_print_run_json("gpuorch.cli.run/1", dir, rc) && !rc)
		rc = GO_EXIT_LOCAL;
	free(dir);
	return rc;
}

static int run_exec(int argc, char **argv)
{
	struct run_opts o;
	struct run_step_opts so = RUN_STEP_OPTS_INIT;
	struct strbuf cl = STRBUF_INIT;
	char **names = xcalloc((size_t)argc + 1, sizeof(char *));
	const char *reports = NULL;
	int c, i, rc, k, json = 0;

	memset(&o, 0, sizeof(o));
	o.root = ".";
	o.host_names = names;
	optind = 1;
	while ((c = cmd_getopt(&cmd_run_entry, argc, argv)) != -1) {
		if ((k = cmd_run_step_option(&cmd_run_entry, c, optarg, &so)) != 0) {
			if (k > 0)
				continue;
			free(names);
			return GO_EXIT_USAGE;
		}
		switch (c) {
		case 'H': o.hosts_path = optarg; break;
		case 'n': names[o.nhost_names++] = optarg; break;
		case 'c': o.commit = optarg; break;
		case 'd': o.dry_run = 1; break;
		case 'S': o.spread = 1; break;
		case 'R': reports = optarg; break;
		case 'o': o.root = optarg; break;
		case 'N': o.notify_url = optarg; break;
		case 'U': o.resume_id = optarg; break;
		case 'j': json = 1; break;
		default:
			free(names);
			return cmd_option_failed(&cmd_run_entry, c);
		}
	}
	if (optind >= argc) {
		free(names);
		return cmd_usage_error(&cmd_run_entry, "no experiment spec given");
	}
	if (optind + 1 < argc) {
		free(names);
		return cmd_usage_error(&cmd_run_entry, "one experiment spec at a time; "
				       "unexpected '%s'", argv[optind + 1]);
	}
	if (!o.hosts_path || (json && o.dry_run)) {
		free(names);
		return cmd_usage_error(&cmd_run_entry, "%s", o.hosts_path ? "--dry-run prints a plan, not "
				       "a run: drop --json" : "no hosts inventory: give --hosts FILE");
	}
	o.spec_path = argv[optind];
	o.accept_new_hostkey = so.accept_new_hostkey;
	o.plain = so.plain;
	o.reconnect_timeout_s = so.reconnect_timeout_s;
	o.lock_wait_s = so.lock_wait_s;
	o.queue_timeout_s = so.queue_timeout_s;
	cmd_set_reports(reports);
	strbuf_addstr(&cl, "gpuorch");
	for (i = 0; i < argc; i++) {
		strbuf_addch(&cl, ' ');
		/* a webhook URL carries its secret: record only where it went. Found
		 * by the parsed value (getopt's optarg is the next argument or what
		 * follows '='), so "--notify=URL" and abbreviations count too */
		const char *eq = strchr(argv[i], '=');
		int keep = !o.notify_url ? -1 : o.notify_url == argv[i] ? 0
			 : eq && eq + 1 == o.notify_url ? (int)(eq + 1 - argv[i]) : -1;
		if (keep >= 0) {
			char *origin = notify_url_origin(o.notify_url);
			char *shown = xstrfmt("%.*s%s/(redacted)", keep, argv[i], origin);
			strbuf_add_shell_quoted(&cl, shown);
			free(shown);
			free(origin);
		} else {
			strbuf_add_shell_quoted(&cl, argv[i]);
		}
	}
	o.command_line = cl.buf;
	rc = run_and_print(&o, json);
	strbuf_release(&cl);
	free(names);
	return rc;
}

const struct cmd_entry cmd_run_entry = {
	.name = "run",
	.synopsis = "SPEC.json --hosts FILE [options]",
	.about = about,
	.options = options,
	.after = "exit: 0 passed, 1 a step or host failed, 2 bad input (nothing sent),\n"
		 "      3 no host usable, 4 local error, 130 interrupted (docs/exit-codes.md)\n",
	.summary = "run an experiment on GPU hosts and write its phase report",
	.exec = run_exec,
	.needs = CMD_NEEDS_SSH | CMD_NEEDS_REPORTS,
};
