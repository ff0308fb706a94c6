/* results-config.c -- which results store gpuorch uses (results-config.h, docs/results-store.md). */
#include "cmd/results-config.h"
#include "cmd/results-git.h"
#include "cmd/results-prune.h"
#include "core/jsonutil.h"
#include "cloud/results-s3.h"
#include "core/fsutil.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

static char *default_dir(void)
{
	const char *d = getenv("GPUORCH_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	if (d && *d)
		return xstrfmt("%s/results", d);
	if (x && *x)
		return xstrfmt("%s/gpuorch/results", x);
	if (home && *home)
		return xstrfmt("%s/.cache/gpuorch/results", home);
	return NULL;
}

enum go_status results_configured(const char *where, struct results_store **out,
				  struct strbuf *err)
{
	const char *env = getenv("GPUORCH_RESULTS_STORE");
	char *dflt = NULL;

	*out = NULL;
	if (!where || !*where)
		where = env && *env ? env : (dflt = default_dir());
	if (!where || !strcmp(where, "none"))
		return go_fail(err, GO_ERR_USAGE, "no results store is configured%s: set "
			       "GPUORCH_RESULTS_STORE to a directory or s3://BUCKET[/PREFIX], or pass "
			       "--store (docs/results-store.md)",
			       where ? " (GPUORCH_RESULTS_STORE is 'none')" : " (no $HOME for the default)");
	if (!strncmp(where, "s3://", 5))
		*out = results_s3_open(where, getenv("GPUORCH_RESULTS_S3_ENDPOINT"), err);
	else if (strstr(where, "://"))
		go_fail(err, GO_ERR_USAGE, "results store '%s': only a directory or s3://BUCKET[/PREFIX] "
			"is known", where);
	else
		*out = results_local_open(where);
	free(dflt);
	return *out ? GO_OK : GO_ERR_USAGE;
}

/* ---- restoring a run: the store, else git history ---- */

/* From the store rs (NULL: none): GO_ERR_NOT_FOUND when it lacks the run. */
static enum go_status from_store(struct results_store *rs, const char *slug, const char *run_id,
				 enum results_clash clash, char **slug_out,
				 struct results_counts *n, struct strbuf *err)
{
	enum go_status st = GO_OK;
	char *dir;

	if (!slug)
		st = results_find_run(rs, run_id, slug_out, err);
	else
		*slug_out = xstrdup(slug);
	if (st != GO_OK)
		return st;
	dir = xstrfmt("%s/%s/%s", store_root(), *slug_out, run_id);
	st = results_pull_run(rs, *slug_out, run_id, dir, clash, n, err);
	free(dir);
	if (st != GO_OK) {
		free(*slug_out);
		*slug_out = NULL;
	}
	return st;
}

/* From the git history of the repository that holds the reports directory. */
static enum go_status from_git(const char *slug, const char *run_id, char **slug_out,
			       char **from, struct results_counts *n, struct strbuf *err)
{
	char *commit = NULL, *dir;
	enum go_status st = GO_OK;

	if (!slug)
		st = results_git_find(store_root(), run_id, slug_out, err);
	else
		*slug_out = xstrdup(slug);
	if (st != GO_OK)
		return st;
	dir = xstrfmt("%s/%s/%s", store_root(), *slug_out, run_id);
	st = results_git_pull(store_root(), *slug_out, run_id, dir, &commit, n, err);
	if (st == GO_OK)
		*from = xstrfmt("the repository's history (commit %.12s)", commit);
	free(commit);
	free(dir);
	if (st != GO_OK) {
		free(*slug_out);
		*slug_out = NULL;
	}
	return st;
}

enum go_status results_restore(const char *where, const char *slug, const char *run_id,
			       enum results_clash clash, char **slug_out, char **from,
			       struct results_counts *n, struct strbuf *err)
{
	struct results_store *rs = NULL;
	struct strbuf why = STRBUF_INIT, gwhy = STRBUF_INIT;
	int git_only = (where && !strcmp(where, "git")) ||
		       (!where && getenv("GPUORCH_RESULTS_STORE") &&
			!strcmp(getenv("GPUORCH_RESULTS_STORE"), "git"));
	enum go_status st = git_only ? GO_ERR_NOT_FOUND : results_configured(where, &rs, &why);

	*slug_out = *from = NULL;
	if (rs) {
		st = from_store(rs, slug, run_id, clash, slug_out, n, &why);
		if (st == GO_OK)
			*from = xstrfmt("the results store %s", rs->where);
	}
	/* the store lacks it (or there is none): the repository's history may have it */
	if (st == GO_ERR_NOT_FOUND || (st == GO_ERR_USAGE && !rs)) {
		enum go_status gst = from_git(slug, run_id, slug_out, from, n, &gwhy);
		if (gst == GO_OK || gst != GO_ERR_NOT_FOUND)
			st = go_fail(&why, gst, "%s", gwhy.buf);
		else if (git_only)
			st = go_fail(&why, GO_ERR_NOT_FOUND, "run %s is not in the repository's history: "
				     "%s", run_id, gwhy.buf);
		else
			strbuf_addf(&why, "; nor is it in the repository's history (%s)", gwhy.buf);
	}
	if (st != GO_OK)
		go_fail(err, st, "%s", why.buf);
	results_close(rs);
	strbuf_release(&why);
	strbuf_release(&gwhy);
	return st;
}

/* run.json of SLUG/RUN-ID from the store rs: its manifest's object */
static enum go_status record_from_store(struct results_store *rs, const char *slug,
					const char *run_id, struct strbuf *out, struct strbuf *err)
{
	cJSON *map = NULL;
	enum go_status st = results_stored_files(rs, slug, run_id, &map, err);
	if (st == GO_OK && !json_str(map, "run.json"))
		st = go_fail(err, GO_ERR_NOT_FOUND, "the results store %s holds run %s/%s without "
			     "its run.json", rs->where, slug, run_id);
	if (st == GO_OK)
		st = results_get_object(rs, json_str(map, "run.json"), out, err);
	cJSON_Delete(map);
	return st;
}

enum go_status results_read_record(const char *slug, const char *run_id, struct strbuf *out,
				   char **from, struct strbuf *err)
{
	struct results_store *rs = NULL;
	struct strbuf why = STRBUF_INIT, gwhy = STRBUF_INIT;
	const char *env = getenv("GPUORCH_RESULTS_STORE");
	enum go_status st = env && !strcmp(env, "git") ? GO_ERR_NOT_FOUND
						       : results_configured(NULL, &rs, &why);
	char *commit = NULL;

	*from = NULL;
	if (rs && (st = record_from_store(rs, slug, run_id, out, &why)) == GO_OK)
		*from = xstrfmt("the results store %s", rs->where);
	if (st == GO_ERR_NOT_FOUND || (st == GO_ERR_USAGE && !rs)) {
		enum go_status gst = results_git_show(store_root(), slug, run_id, "run.json", out,
						      &commit, &gwhy);
		if (gst == GO_OK)
			*from = xstrfmt("the repository's history (commit %.12s)", commit);
		if (gst == GO_OK || gst != GO_ERR_NOT_FOUND)
			st = go_fail(&why, gst, "%s", gwhy.buf);
		else
			strbuf_addf(&why, "%s; nor is it in the repository's history (%s)",
				    why.len ? "" : "no results store", gwhy.buf);
	}
	if (st != GO_OK)
		go_fail(err, st, "%s", why.buf);
	free(commit);
	results_close(rs);
	strbuf_release(&why);
	strbuf_release(&gwhy);
	return st;
}

/* store_load_record's fetch (store.h): a run directory with a summary but
 * no run.json gets the run's missing files from the store, else from git
 * history. */
static enum go_status fetch(const char *dir, struct strbuf *err)
{
	char *sum = xstrfmt("%s/summary.json", dir), *q = NULL, *slash, *slug = NULL, *from = NULL;
	struct results_counts n = {0};
	struct strbuf why = STRBUF_INIT;
	enum go_status st = GO_OK;

	if (!fs_is_file(sum))
		goto out;   /* not a run the store has taken: store_load_record says what is missing */
	q = store_qualified_id(dir);
	slash = strchr(q, '/');
	if (!slash) {
		st = go_fail(err, GO_ERR_IO, "'%s' has no run.json", dir);
		goto out;
	}
	*slash = '\0';
	st = results_restore(NULL, q, slash + 1, RESULTS_KEEP, &slug, &from, &n, &why);
	if (st == GO_ERR_NOT_FOUND || (st == GO_ERR_USAGE && !from))
		st = go_fail(err, GO_ERR_NOT_FOUND, "run %s's raw record is not here (%s has only its "
			     "summary): %s. Get it with 'gpuorch pull %s --store STORE' from a store "
			     "that holds it (or set GPUORCH_RESULTS_STORE), or push it there from a "
			     "machine that has it ('gpuorch push %s')", slash + 1, dir, why.buf,
			     slash + 1, slash + 1);
	else if (st != GO_OK)
		st = go_fail(err, st, "run %s's raw record could not be fetched: %s", slash + 1,
			     why.buf);
	else
		fprintf(stderr, "fetched run %s's raw record from %s (%d file%s)\n", slash + 1, from,
			n.files_written, n.files_written == 1 ? "" : "s");
out:
	strbuf_release(&why);
	free(sum);
	free(slug);
	free(from);
	free(q);
	return st;
}

void results_fetch_on_demand(void)
{
	store_set_fetch(fetch);
}
