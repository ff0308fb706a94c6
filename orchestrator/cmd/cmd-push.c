/* cmd-push.c -- `gpuorch push` and `gpuorch pull`: runs' files to and from the results store. */
#include "cmd/commands.h"
#include "cmd/results-config.h"
#include "cmd/results-prune.h"
#include "cmd/run-json.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/jsonutil.h"
#include "report/runsum.h"
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
	"A run still going, and one whose run.json is not here, are not pushed.\n"
	"\n"
	"--prune then removes each run's raw record from the reports directory\n"
	"(run.json, logs/, source.diff: all but report.md, charts/, summary.json,\n"
	"samples.txt and the notes commands wrote for people), each file only once\n"
	"the store's manifest lists it with its hash and the store's copy reads back\n"
	"as it; a run the store does not hold loses nothing. Run it again after an\n"
	"interruption: it finishes what was left. What git keeps and how to migrate\n"
	"a repository: docs/results-store.md.\n";

static const char pull_about[] =
	"Restore each run's files from the results store into REPORTS/EXPERIMENT/RUN-ID,\n"
	"byte-identical, every file checked against its hash. A file already here\n"
	"with other content is not replaced (the pull stops, naming it) unless\n"
	"--force is given. A run the store does not have (or with no store) comes\n"
	"from the repository's git history where a commit holds its run.json: the\n"
	"files missing here are written (--store git: from history alone).\n";

#define XFER_STORE_OPTION \
	{ "store", 's', "WHERE", "@dir", "a directory or s3://BUCKET[/PREFIX] (default:\n" \
	  "$GPUORCH_RESULTS_STORE, else ~/.cache/gpuorch/results); pull: git\n" \
	  "reads the repository's history alone" }
#define XFER_REPORTS_OPTION \
	{ "reports", 'R', "DIR", "@dir", \
	  "the reports directory (default: $GPUORCH_REPORTS or ./reports)" }
#define XFER_JSON_OPTION(NAME) \
	{ "json", 'j', NULL, NULL, "print one JSON object (docs/schema/cli-" NAME ".schema.json);\n" \
	  "the text on stderr" }

static const struct cmd_option push_options[] = {
	{ "all", 'A', NULL, NULL, "every run under the reports directory" },
	{ "prune", 'P', NULL, NULL, "then remove each pushed run's raw record from the\n"
				    "reports directory, once the store is seen to hold it" },
	XFER_STORE_OPTION,
	XFER_REPORTS_OPTION,
	XFER_JSON_OPTION("push"),
	{ NULL, 0, NULL, NULL, NULL },
};

static const struct cmd_option pull_options[] = {
	{ "force", 'f', NULL, NULL, "replace local files that differ from the store's" },
	XFER_STORE_OPTION,
	XFER_REPORTS_OPTION,
	XFER_JSON_OPTION("pull"),
	{ NULL, 0, NULL, NULL, NULL },
};

struct xfer_opts {
	const char *reports, *store;
	int all, force, prune, json;
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
		case 'P': o->prune = 1; break;
		case 'j': o->json = 1; break;
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

static void add_counts(struct results_counts *tot, const struct results_counts *n)
{
	tot->files += n->files;
	tot->objects_sent += n->objects_sent;
	tot->bytes_sent += n->bytes_sent;
	tot->manifests_sent += n->manifests_sent;
}

/* push --json: one run's entry, appended to runs (NULL: no --json) */
static cJSON *run_json(cJSON *runs, const char *q, const char *dir, const char *status,
		       const char *error)
{
	cJSON *o;
	if (!runs)
		return NULL;
	o = cJSON_CreateObject();
	json_add_str(o, "run", q);
	json_add_str(o, "dir", dir);
	json_add_str(o, "status", status);
	json_add_str(o, "error", error);
	cJSON_AddItemToArray(runs, o);
	return o;
}

static void counts_json(cJSON *o, const struct results_counts *n)
{
	if (!o)
		return;
	json_add_num(o, "files", n->files);
	json_add_num(o, "objects_sent", n->objects_sent);
	json_add_num(o, "bytes_sent", (double)n->bytes_sent);
	json_add_bool(o, "store_had_it", !n->manifests_sent);
}

/* One run directory pushed; 0 pushed, 1 skipped or failed (said on stderr).
 * With prune, a directory whose run.json a cut prune removed is not pushed
 * (the store has the whole run) and counts as pushed. With --json, its entry
 * goes into runs. */
static int push_one(struct results_store *rs, const char *dir, int prune,
		    struct results_counts *tot, cJSON *runs)
{
	struct results_counts n = {0};
	struct strbuf err = STRBUF_INIT;
	char *rec = xstrfmt("%s/run.json", dir), *q = store_qualified_id(dir);
	cJSON *sum = NULL;
	int bad = 1;

	if (store_run_live(dir)) {
		fprintf(stderr, "skipping run %s: it is still running (push it when it ends)\n", q);
		run_json(runs, q, dir, "skipped", "it is still running");
	} else if (!fs_is_file(rec) && prune) {
		bad = 0;
		run_json(runs, q, dir, "pruned_before", NULL);
	} else if (!fs_is_file(rec)) {
		fprintf(stderr, "skipping run %s: '%s' has no run.json (nothing to push: its raw "
			"record is elsewhere; 'gpuorch pull %s' brings it)\n", q, dir, q);
		run_json(runs, q, dir, "skipped", "no run.json");
	/* a prune leaves the summary as all that runs and history read: current first */
	} else if (prune && runsum_refresh(dir, &sum, &err) != GO_OK) {
		fprintf(stderr, "error: run %s: its summary: %s\n", q, err.buf);
		run_json(runs, q, dir, "failed", err.buf);
	} else if (results_push_run(rs, dir, &n, &err) != GO_OK) {
		fprintf(stderr, "error: run %s: %s\n", q, err.buf);
		run_json(runs, q, dir, "failed", err.buf);
	} else {
		counts_json(run_json(runs, q, dir, "pushed", NULL), &n);
		printf("%s: %d file%s, %d new object%s (%lld bytes)%s\n", q, n.files,
		       n.files == 1 ? "" : "s", n.objects_sent, n.objects_sent == 1 ? "" : "s",
		       n.bytes_sent, n.manifests_sent ? "" : ", the store had it");
		add_counts(tot, &n);
		bad = 0;
	}
	fflush(stdout);   /* with --json stdout is stderr: its lines in order with the errors */
	cJSON_Delete(sum);
	strbuf_release(&err);
	free(rec);
	free(q);
	return bad;
}

/* One pushed run's raw record removed; 0 done, 1 failed (said on stderr). */
static int prune_one(struct results_store *rs, const char *dir, struct results_pruned *tot,
		     cJSON *entry)
{
	struct results_pruned p = {0};
	struct strbuf err = STRBUF_INIT;
	char *q = store_qualified_id(dir);
	int bad = 0;

	if (results_prune_run(rs, dir, &p, &err) != GO_OK) {
		fprintf(stderr, "error: run %s: %s\n", q, err.buf);
		if (entry)
			json_add_str(entry, "prune_error", err.buf);
		bad = 1;
	} else {
		if (entry) {
			cJSON *pj = json_add_obj(entry, "pruned");
			json_add_num(pj, "removed", p.removed);
			json_add_num(pj, "bytes", (double)p.bytes);
			json_add_num(pj, "kept", p.kept);
		}
		printf("%s: pruned %d raw file%s (%lld bytes), kept %d\n", q, p.removed,
		       p.removed == 1 ? "" : "s", p.bytes, p.kept);
		tot->removed += p.removed;
		tot->bytes += p.bytes;
		tot->kept += p.kept;
	}
	fflush(stdout);
	strbuf_release(&err);
	free(q);
	return bad;
}

/* The run directory of a named run, for push (not fetched: push sends what
 * is here). A run that a cut prune left without its run.json is found by
 * its directory (a name or EXPERIMENT/RUN-ID, not a prefix). */
static char *run_dir_of(const char *id, int prune, struct strbuf *err)
{
	struct store_entry e;
	char *dir = NULL, *q = NULL, **all;
	int i, n = 0;

	if (store_find(id, &e, err) == GO_OK) {
		dir = e.dir;
		e.dir = NULL;
		store_entry_release(&e);
		return dir;
	}
	all = prune ? results_run_dirs(store_root(), &n) : NULL;
	for (i = 0; i < n; i++) {
		const char *base = strrchr(all[i], '/');
		free(q);
		q = store_qualified_id(all[i]);
		if (strcmp(q, id) && (!base || strcmp(base + 1, id)))
			continue;
		if (dir) {
			go_fail(err, GO_ERR_USAGE, "run id '%s' is ambiguous: '%s' and '%s' have it; "
				"name one as EXPERIMENT/RUN-ID", id, dir, all[i]);
			free(dir);
			dir = NULL;
			break;
		}
		dir = xstrdup(all[i]);
	}
	free(q);
	store_run_dirs_free(all, n);
	return dir;
}

/* The run directories push works on: --all's, or the named runs' (*failed
 * counts the names not found). */
static char **push_dirs(const struct xfer_opts *o, int argc, char **argv, int *n, int *failed,
			cJSON *not_found)
{
	struct strbuf err = STRBUF_INIT;
	char **dirs;
	int i;

	*n = 0;
	if (o->all)
		/* a prune cut before the end left runs with no run.json: they are finished too */
		return o->prune ? results_run_dirs(store_root(), n)
				: store_run_dirs_under(store_root(), n);
	dirs = xcalloc((size_t)(argc - optind) + 1, sizeof(*dirs));
	for (i = optind; i < argc; i++) {
		char *d = run_dir_of(argv[i], o->prune, &err);
		if (!d) {
			fprintf(stderr, "error: %s\n", err.buf);
			if (not_found)
				cJSON_AddItemToArray(not_found, cJSON_CreateString(argv[i]));
			(*failed)++;
			continue;
		}
		dirs[(*n)++] = d;
	}
	strbuf_release(&err);
	return dirs;
}

/* What push did, for its last lines or its --json document. */
struct push_totals {
	struct results_counts sent;
	struct results_pruned pruned;
	int npruned;
	cJSON *runs, *not_found;   /* --json: the entries; NULL without */
};

static void push_print(const struct xfer_opts *o, const char *where, const struct push_totals *t,
		       int rc)
{
	cJSON *doc, *pj;
	if (!o->json) {
		printf("pushed %d run%s to %s: %d new object%s, %lld bytes\n", t->sent.manifests_sent,
		       t->sent.manifests_sent == 1 ? "" : "s", where, t->sent.objects_sent,
		       t->sent.objects_sent == 1 ? "" : "s", t->sent.bytes_sent);
		if (o->prune)
			printf("pruned %d run%s: %d raw file%s removed (%lld bytes), %d reader's "
			       "file%s kept\n", t->npruned, t->npruned == 1 ? "" : "s",
			       t->pruned.removed, t->pruned.removed == 1 ? "" : "s", t->pruned.bytes,
			       t->pruned.kept, t->pruned.kept == 1 ? "" : "s");
		return;
	}
	doc = cmd_json_doc("gpuorch.cli.push/1");
	json_add_str(doc, "store", where);
	json_add_str(doc, "reports", store_root());
	json_add_num(doc, "pushed", t->sent.manifests_sent);
	json_add_num(doc, "objects_sent", t->sent.objects_sent);
	json_add_num(doc, "bytes_sent", (double)t->sent.bytes_sent);
	if (o->prune) {
		pj = json_add_obj(doc, "pruned");
		json_add_num(pj, "runs", t->npruned);
		json_add_num(pj, "removed", t->pruned.removed);
		json_add_num(pj, "bytes", (double)t->pruned.bytes);
		json_add_num(pj, "kept", t->pruned.kept);
	} else {
		cJSON_AddNullToObject(doc, "pruned");
	}
	cJSON_AddItemToObject(doc, "runs", cJSON_Duplicate(t->runs, 1));
	cJSON_AddItemToObject(doc, "not_found", cJSON_Duplicate(t->not_found, 1));
	json_add_num(doc, "exit_code", rc);
	cmd_json_print(doc);
}

static int push_exec(int argc, char **argv)
{
	struct xfer_opts o;
	struct results_store *rs = NULL;
	struct push_totals t;
	struct strbuf err = STRBUF_INIT;
	char **dirs;
	int n = 0, i, failed = 0, saved = -1, rc;

	if (parse(&cmd_push_entry, argc, argv, &o) < 0)
		return GO_EXIT_USAGE;
	cmd_set_reports(o.reports);
	if (results_configured(o.store, &rs, &err) != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);   /* no result: nothing on stdout */
		strbuf_release(&err);
		return GO_EXIT_USAGE;
	}
	memset(&t, 0, sizeof(t));
	if (o.json) {
		t.runs = cJSON_CreateArray();
		t.not_found = cJSON_CreateArray();
		saved = cmd_json_stdout_begin();   /* each run's line goes to stderr */
	}
	dirs = push_dirs(&o, argc, argv, &n, &failed, t.not_found);
	for (i = 0; i < n; i++) {
		int bad = push_one(rs, dirs[i], o.prune, &t.sent, t.runs);
		cJSON *entry = t.runs ? cJSON_GetArrayItem(t.runs, cJSON_GetArraySize(t.runs) - 1) : NULL;
		/* a run pruned only once its push went through, and the store is seen to hold it */
		if (!bad && o.prune && !(bad = prune_one(rs, dirs[i], &t.pruned, entry)))
			t.npruned++;
		failed += bad;
	}
	if (o.json)
		cmd_json_stdout_end(saved);
	rc = failed ? GO_EXIT_FAILED : GO_EXIT_OK;
	push_print(&o, rs->where, &t, rc);
	cJSON_Delete(t.runs);
	cJSON_Delete(t.not_found);
	store_run_dirs_free(dirs, n);
	results_close(rs);
	strbuf_release(&err);
	return cmd_finish_stdout(rc);
}

/* pull --json: one argument's entry */
static void pull_json(cJSON *runs, const char *arg, const char *slug, const char *id,
		      const char *from, const struct results_counts *n, const char *error)
{
	cJSON *o = cJSON_CreateObject();
	char *dir = error ? NULL : xstrfmt("%s/%s/%s", store_root(), slug, id);
	json_add_str(o, "arg", arg);
	json_add_str(o, "status", error ? "failed" : "pulled");
	json_add_str(o, "error", error);
	if (!error) {
		json_add_str(o, "experiment", slug);
		json_add_str(o, "run_id", id);
		json_add_str(o, "dir", dir);
		json_add_str(o, "from", from);
		json_add_num(o, "files", n->files);
		json_add_num(o, "written", n->files_written);
		json_add_num(o, "already_here", n->files - n->files_written);
	}
	cJSON_AddItemToArray(runs, o);
	free(dir);
}

/* One run pulled (the store, else git history); the exit code. With
 * --json (runs non-NULL) its entry goes into runs too. */
static int pull_one(const char *where, const char *arg, int force, cJSON *runs)
{
	struct results_counts n = {0};
	struct strbuf err = STRBUF_INIT;
	const char *slash = strchr(arg, '/');
	char *slug = NULL, *id = xstrdup(slash ? slash + 1 : arg), *got = NULL, *from = NULL;
	enum go_status st = GO_OK;

	if (slash)
		slug = xstrfmt("%.*s", (int)(slash - arg), arg);
	if ((slug && (!*slug || slug[0] == '.')) || !*id || strchr(id, '/') || id[0] == '.')
		st = go_fail(&err, GO_ERR_USAGE, "'%s' is not a run id (or EXPERIMENT/RUN-ID)", arg);
	if (st == GO_OK)
		st = results_restore(where, slug, id, force ? RESULTS_OVERWRITE : RESULTS_REFUSE,
				     &got, &from, &n, &err);
	if (runs)
		pull_json(runs, arg, got, id, from, &n, st == GO_OK ? NULL : err.buf);
	if (st == GO_OK)
		printf("%s/%s: %d file%s, %d written, %d already here, into %s/%s/%s (from %s)\n",
		       got, id, n.files, n.files == 1 ? "" : "s", n.files_written,
		       n.files - n.files_written, store_root(), got, id, from);
	else if (st != GO_OK)
		fprintf(stderr, "error: %s\n", err.buf);
	fflush(stdout);   /* with --json stdout is stderr: its lines in order with the errors */
	free(slug);
	free(got);
	free(from);
	free(id);
	strbuf_release(&err);
	return st == GO_OK ? GO_EXIT_OK : go_exit_code(st);
}

static int pull_exec(int argc, char **argv)
{
	struct xfer_opts o;
	cJSON *runs = NULL, *doc;
	int i, rc = GO_EXIT_OK, r, pulled = 0, saved = -1;

	if (parse(&cmd_pull_entry, argc, argv, &o) < 0)
		return GO_EXIT_USAGE;
	cmd_set_reports(o.reports);
	if (o.json) {
		runs = cJSON_CreateArray();
		saved = cmd_json_stdout_begin();   /* each pulled run's line goes to stderr */
	}
	for (i = optind; i < argc; i++) {
		if ((r = pull_one(o.store, argv[i], o.force, runs)) != GO_EXIT_OK && rc == GO_EXIT_OK)
			rc = r;
		pulled += r == GO_EXIT_OK;
	}
	if (o.json)
		cmd_json_stdout_end(saved);
	/* --json: a document once some run came back; none did: no result, stdout
	 * stays empty and the errors are on stderr (docs/cli.md) */
	if (runs && pulled) {
		doc = cmd_json_doc("gpuorch.cli.pull/1");
		json_add_str(doc, "reports", store_root());
		json_add_num(doc, "pulled", pulled);
		cJSON_AddItemToObject(doc, "runs", runs);
		json_add_num(doc, "exit_code", rc);
		cmd_json_print(doc);
	} else {
		cJSON_Delete(runs);
	}
	return cmd_finish_stdout(rc);
}

const struct cmd_entry cmd_push_entry = {
	.name = "push",
	.synopsis = "(RUN_ID... | --all) [--prune] [options]",
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
