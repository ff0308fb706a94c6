/* cmd-report.c -- `gpuorch report RUN_ID`: (re)write a run's report.md from run.json. */
#include "cmd/commands.h"
#include "cmd/results-config.h"
#include "cmd/results-prune.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/jsonutil.h"
#include "report/report.h"
#include "report/report-id.h"
#include "store/store.h"

#include <getopt.h> /* optind, optarg */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

static const char about[] =
	"Write REPORTS/<experiment>/<run-id>/report.md again from the run's record\n"
	"(run.json), or print it with --stdout. RUN_ID may be a unique prefix.\n"
	"\n"
	"--check writes nothing: it renders each run's report again and says which\n"
	"report.md differ (stale), with the first line that differs and the renderer\n"
	"that wrote them. DIR is a run's directory, an experiment's or a reports\n"
	"tree; with no argument, every run under REPORTS.\n";

static const struct cmd_option options[] = {
	{ "stdout", 's', NULL, NULL, "print the report instead of writing report.md" },
	{ "check", 'c', NULL, NULL, "write nothing: say which report.md are stale (above)" },
	{ "json", 'j', NULL, NULL, "print what was written or checked as one JSON object\n"
				    "(docs/schema/cli-report.schema.json)" },
	{ "reports", 'R', "DIR", "@dir",
	  "where runs are recorded (default ./reports, or $GPUORCH_REPORTS)" },
	{ NULL, 0, NULL, NULL, NULL },
};

/* A report that is not current: as a text line, or an entry of --json's
 * "problems" (state "stale" or "unreadable", the file, why). */
static void say_problem(cJSON *json, const char *state, const char *file, const char *why)
{
	cJSON *o;
	if (!json) {
		printf("%s: %s: %s\n", state, file, why);
		return;
	}
	o = cJSON_CreateObject();
	json_add_str(o, "state", state);
	json_add_str(o, "file", file);
	json_add_str(o, "why", why);
	cJSON_AddItemToArray(json, o);
}

/* The record of the run in dir, written nowhere: a run whose raw record is
 * in the results store (a summary here, no run.json) is read from there, or
 * from git history, into memory (--check writes nothing). */
static enum go_status check_record(const char *dir, cJSON **run, struct strbuf *err)
{
	char *rec = xstrfmt("%s/run.json", dir), *sum = xstrfmt("%s/summary.json", dir);
	char *q = NULL, *slash, *from = NULL;
	struct strbuf text = STRBUF_INIT, why = STRBUF_INIT;
	enum go_status st;

	if (fs_is_file(rec) || !fs_is_file(sum)) {
		st = store_load_record(dir, run, err);
		goto out;
	}
	q = store_qualified_id(dir);
	slash = strchr(q, '/');
	st = slash ? GO_OK : go_fail(err, GO_ERR_IO, "'%s' has no run.json", dir);
	if (slash)
		*slash = '\0';
	if (st == GO_OK && (st = results_read_record(q, slash + 1, &text, &from, &why)) != GO_OK)
		st = go_fail(err, st, "its raw record is not here (only its summary) and could not "
			     "be read: %s ('gpuorch pull %s/%s' once a store has it)", why.buf, q,
			     slash + 1);
	if (st == GO_OK)
		st = json_parse(text.buf, text.len, from, run, err);
out:
	strbuf_release(&text);
	strbuf_release(&why);
	free(from);
	free(q);
	free(rec);
	free(sum);
	return st;
}

/* One run directory: 1 when its report.md is current, else 0 (said why). */
static int check_dir(const char *dir, cJSON *json)
{
	struct strbuf err = STRBUF_INIT, text = STRBUF_INIT, why = STRBUF_INIT;
	char *path = xstrfmt("%s/report.md", dir);
	cJSON *run = NULL;
	int ok = 0;

	if (check_record(dir, &run, &err) != GO_OK)
		say_problem(json, "unreadable", dir, err.buf);
	else if (!fs_is_file(path))
		say_problem(json, "stale", path, "missing");
	else if (fs_read_file(path, &text, &err) != GO_OK)
		say_problem(json, "unreadable", path, err.buf);
	else if (!(ok = report_check_text(run, text.buf, text.len, &why)))
		say_problem(json, "stale", path, why.buf);
	cJSON_Delete(run);
	free(path);
	strbuf_release(&err);
	strbuf_release(&text);
	strbuf_release(&why);
	return ok;
}

/* --check's last line, or its JSON document (problems: what check_dir said) */
static void check_summary(int checked, int stale, cJSON *problems)
{
	cJSON *doc, *r;
	if (!problems) {
		printf("%d report%s checked, %d stale (renderer %s %s)\n", checked,
		       checked == 1 ? "" : "s", stale, GPUORCH_RELEASE, gpuorch_report_id);
		return;
	}
	doc = cmd_json_doc("gpuorch.cli.report/1");
	json_add_str(doc, "mode", "check");
	json_add_num(doc, "checked", checked);
	json_add_num(doc, "stale", stale);
	r = json_add_obj(doc, "renderer");
	json_add_str(r, "release", GPUORCH_RELEASE);
	json_add_str(r, "id", gpuorch_report_id);
	cJSON_AddItemToObject(doc, "problems", problems);
	cmd_json_print(doc);
}

static int check_main(int argc, char **argv, int json)
{
	struct strbuf err = STRBUF_INIT;
	cJSON *problems = json ? cJSON_CreateArray() : NULL;
	int i, j, n, checked = 0, stale = 0, rc = 0;

	for (i = 0; i < argc || (!argc && i == 0); i++) {
		const char *arg = argc ? argv[i] : store_root();
		char **dirs;
		if (argc && !fs_is_dir(arg)) {
			struct store_entry e;
			if (store_find(arg, &e, &err) != GO_OK) {
				fprintf(stderr, "error: %s\n", err.buf);
				strbuf_release(&err);
				cJSON_Delete(problems);
				return go_exit_code(GO_ERR_NOT_FOUND);
			}
			stale += !check_dir(e.dir, problems);
			checked++;
			store_entry_release(&e);
			continue;
		}
		dirs = results_run_dirs(arg, &n);
		if (!n) {
			fprintf(stderr, "error: '%s' holds no run (no run.json or summary.json in it or "
					"two levels below)\n", arg);
			rc = 1;
		}
		for (j = 0; j < n; j++)
			stale += !check_dir(dirs[j], problems);
		checked += n;
		store_run_dirs_free(dirs, n);
	}
	check_summary(checked, stale, problems);
	strbuf_release(&err);
	return stale || rc ? 1 : 0;
}

static int report_exec(int argc, char **argv)
{
	struct strbuf err = STRBUF_INIT;
	struct store_entry e;
	const char *reports = NULL;
	int to_stdout = 0, check = 0, json = 0, c, rc = 0;
	enum go_status st;

	optind = 1;
	while ((c = cmd_getopt(&cmd_report_entry, argc, argv)) != -1) {
		switch (c) {
		case 's': to_stdout = 1; break;
		case 'c': check = 1; break;
		case 'j': json = 1; break;
		case 'R': reports = optarg; break;
		default:
			return cmd_option_failed(&cmd_report_entry, c);
		}
	}
	if (check && to_stdout)
		return cmd_usage_error(&cmd_report_entry, "--check writes nothing; drop --stdout");
	if (json && to_stdout)
		return cmd_usage_error(&cmd_report_entry, "--stdout prints the report: drop --json");
	if (check) {
		cmd_set_reports(reports);
		return check_main(argc - optind, argv + optind, json);
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
		if (st == GO_OK && json) {
			cJSON *doc = cmd_json_doc("gpuorch.cli.report/1");
			json_add_str(doc, "mode", "write");
			json_add_str(doc, "run_id", e.run_id);
			json_add_str(doc, "report", path);
			cmd_json_print(doc);
		} else if (st == GO_OK) {
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
	.name = "report",
	.synopsis = "RUN_ID [options]\n--check [DIR|RUN_ID...] [options]",
	.about = about,
	.options = options,
	.after = "exit: 0 (--check: every report is current), 1 (--check: a report is stale,\n"
		 "missing or its run cannot be read), 2 usage or no such run\n",
	.summary = "(re)write the Markdown report of a run from its record",
	.exec = report_exec,
	.needs = CMD_NEEDS_REPORTS,
};
