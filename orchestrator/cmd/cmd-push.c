/* cmd-push.c -- `gpuorch push` and `gpuorch pull`: runs' files to and from the results store. */
#include "cmd/commands.h"
#include "cmd/results-config.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "store/store.h"

#include <getopt.h> /* optind, optarg */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

static const char push_about[] =
	"Copy the files of each run directory (run.json, logs, samples, profiles,\n"
	"report, summary) into the results store, content-addressed: a file the\n"
	"store has is not sent again, and a run it has as it is sends nothing.\n"
	"A run still going, and one whose run.json is not here, are not pushed.\n";

static const char pull_about[] =
	"Restore each run's files from the results store into REPORTS/EXPERIMENT/RUN-ID,\n"
	"byte-identical, every file checked against its hash. A file already here\n"
	"with other content is not replaced (the pull stops, naming it) unless\n"
	"--force is given.\n";

#define XFER_STORE_OPTION \
	{ "store", 's', "WHERE", "@dir", "a directory or s3://BUCKET[/PREFIX] (default:\n" \
	  "$GPUORCH_RESULTS_STORE, else ~/.cache/gpuorch/results)" }
#define XFER_REPORTS_OPTION \
	{ "reports", 'R', "DIR", "@dir", \
	  "the reports directory (default: $GPUORCH_REPORTS or ./reports)" }

static const struct cmd_option push_options[] = {
	{ "all", 'A', NULL, NULL, "every run under the reports directory" },
	XFER_STORE_OPTION,
	XFER_REPORTS_OPTION,
	{ NULL, 0, NULL, NULL, NULL },
};

static const struct cmd_option pull_options[] = {
	{ "force", 'f', NULL, NULL, "replace local files that differ from the store's" },
	XFER_STORE_OPTION,
	XFER_REPORTS_OPTION,
	{ NULL, 0, NULL, NULL, NULL },
};

struct xfer_opts {
	const char *reports, *store;
	int all, force;
};

/* The options; optind is at the first run id after. -1: usage error printed. */
static int parse(const struct cmd_entry *e, int argc, char **argv, struct xfer_opts *o)
{
	int c;
	memset(o, 0, sizeof(*o));
	optind = 1;
	while ((c = cmd_getopt(e, argc, argv)) != -1) {
		switch (c) {
		case 'R': o->reports = optarg; break;
		case 's': o->store = optarg; break;
		case 'A': o->all = 1; break;
		case 'f': o->force = 1; break;
		default:
			cmd_option_failed(e, c);
			return -1;
		}
	}
	if (o->all ? optind < argc : optind >= argc) {
		cmd_usage_error(e, o->all ? "--all and run ids together" : "which runs? name them, "
				"or pass --all");
		return -1;
	}
	return 0;
}

/* One run directory pushed; 0 pushed, 1 skipped or failed (said on stderr). */
static int push_one(struct results_store *rs, const char *dir, struct results_counts *tot)
{
	struct results_counts n = {0};
	struct strbuf err = STRBUF_INIT;
	char *rec = xstrfmt("%s/run.json", dir), *q = store_qualified_id(dir);
	int bad = 1;

	if (store_run_live(dir))
		fprintf(stderr, "skipping run %s: it is still running (push it when it ends)\n", q);
	else if (!fs_is_file(rec))
		fprintf(stderr, "skipping run %s: '%s' has no run.json (nothing to push: its raw "
			"record is elsewhere; 'gpuorch pull %s' brings it)\n", q, dir, q);
	else if (results_push_run(rs, dir, &n, &err) != GO_OK)
		fprintf(stderr, "error: run %s: %s\n", q, err.buf);
	else {
		printf("%s: %d file%s, %d new object%s (%lld bytes)%s\n", q, n.files,
		       n.files == 1 ? "" : "s", n.objects_sent, n.objects_sent == 1 ? "" : "s",
		       n.bytes_sent, n.manifests_sent ? "" : ", the store had it");
		tot->files += n.files;
		tot->objects_sent += n.objects_sent;
		tot->bytes_sent += n.bytes_sent;
		tot->manifests_sent += n.manifests_sent;
		bad = 0;
	}
	strbuf_release(&err);
	free(rec);
	free(q);
	return bad;
}

/* The run directory of a named run, for push (not fetched: push sends what is here). */
static char *run_dir_of(const char *id, struct strbuf *err)
{
	struct store_entry e;
	char *dir = NULL;
	if (store_find(id, &e, err) == GO_OK) {
		dir = e.dir;
		e.dir = NULL;
		store_entry_release(&e);
	}
	return dir;
}

static int push_exec(int argc, char **argv)
{
	struct xfer_opts o;
	struct results_store *rs = NULL;
	struct results_counts tot = {0};
	struct strbuf err = STRBUF_INIT;
	char **dirs = NULL;
	int n = 0, i, failed = 0;

	if (parse(&cmd_push_entry, argc, argv, &o) < 0)
		return GO_EXIT_USAGE;
	cmd_set_reports(o.reports);
	if (results_configured(o.store, &rs, &err) != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);
		strbuf_release(&err);
		return GO_EXIT_USAGE;
	}
	if (o.all) {
		dirs = store_run_dirs_under(store_root(), &n);
	} else {
		dirs = xcalloc((size_t)(argc - optind), sizeof(*dirs));
		for (i = optind; i < argc; i++) {
			char *d = run_dir_of(argv[i], &err);
			if (!d) {
				fprintf(stderr, "error: %s\n", err.buf);
				failed++;
				continue;
			}
			dirs[n++] = d;
		}
	}
	for (i = 0; i < n; i++)
		failed += push_one(rs, dirs[i], &tot);
	printf("pushed %d run%s to %s: %d new object%s, %lld bytes\n", tot.manifests_sent,
	       tot.manifests_sent == 1 ? "" : "s", rs->where, tot.objects_sent,
	       tot.objects_sent == 1 ? "" : "s", tot.bytes_sent);
	store_run_dirs_free(dirs, n);
	results_close(rs);
	strbuf_release(&err);
	return failed ? GO_EXIT_FAILED : GO_EXIT_OK;
}

/* One run pulled; the exit code. */
static int pull_one(struct results_store *rs, const char *arg, int force)
{
	struct results_counts n = {0};
	struct strbuf err = STRBUF_INIT;
	const char *slash = strchr(arg, '/');
	char *slug = NULL, *id = xstrdup(slash ? slash + 1 : arg), *dir = NULL;
	enum go_status st = GO_OK;

	if (slash)
		slug = xstrfmt("%.*s", (int)(slash - arg), arg);
	else
		st = results_find_run(rs, id, &slug, &err);
	if (st == GO_OK && (!*slug || !*id || strchr(id, '/') || slug[0] == '.' || id[0] == '.'))
		st = go_fail(&err, GO_ERR_USAGE, "'%s' is not a run id (or EXPERIMENT/RUN-ID)", arg);
	if (st == GO_OK) {
		dir = xstrfmt("%s/%s/%s", store_root(), slug, id);
		st = results_pull_run(rs, slug, id, dir, force ? RESULTS_OVERWRITE : RESULTS_REFUSE,
				      &n, &err);
	}
	if (st == GO_OK)
		printf("%s/%s: %d file%s, %d written, %d already here, into %s\n", slug, id, n.files,
		       n.files == 1 ? "" : "s", n.files_written, n.files - n.files_written, dir);
	else
		fprintf(stderr, "error: %s\n", err.buf);
	free(slug);
	free(id);
	free(dir);
	strbuf_release(&err);
	return st == GO_OK ? GO_EXIT_OK : go_exit_code(st);
}

static int pull_exec(int argc, char **argv)
{
	struct xfer_opts o;
	struct results_store *rs = NULL;
	struct strbuf err = STRBUF_INIT;
	int i, rc = GO_EXIT_OK, r;

	if (parse(&cmd_pull_entry, argc, argv, &o) < 0)
		return GO_EXIT_USAGE;
	cmd_set_reports(o.reports);
	if (results_configured(o.store, &rs, &err) != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);
		strbuf_release(&err);
		return GO_EXIT_USAGE;
	}
	for (i = optind; i < argc; i++)
		if ((r = pull_one(rs, argv[i], o.force)) != GO_EXIT_OK && rc == GO_EXIT_OK)
			rc = r;
	results_close(rs);
	strbuf_release(&err);
	return rc;
}

const struct cmd_entry cmd_push_entry = {
	.name = "push",
	.synopsis = "(RUN_ID... | --all) [options]",
	.about = push_about,
	.options = push_options,
	.summary = "copy runs' raw files into the results store",
	.exec = push_exec,
	.needs = CMD_NEEDS_REPORTS,
};

const struct cmd_entry cmd_pull_entry = {
	.name = "pull",
	.synopsis = "RUN_ID|EXPERIMENT/RUN_ID... [options]",
	.about = pull_about,
	.options = pull_options,
	.summary = "restore a run's raw files from the results store",
	.exec = pull_exec,
	.needs = CMD_NEEDS_REPORTS,
};
