/* results-config.c -- which results store gpuorch uses (results-config.h, docs/results-store.md). */
#include "cmd/results-config.h"
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

/* store_load_record's fetch (store.h): a run directory with a summary but
 * no run.json gets the run's missing files from the store. */
static enum go_status fetch(const char *dir, struct strbuf *err)
{
	char *sum = xstrfmt("%s/summary.json", dir), *q = NULL, *slash;
	struct results_store *rs = NULL;
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
	if (results_configured(NULL, &rs, &why) != GO_OK) {
		st = go_fail(err, GO_ERR_NOT_FOUND, "run %s's raw record is not here (%s has only its "
			     "summary) and %s", slash + 1, dir, why.buf);
		goto out;
	}
	st = results_pull_run(rs, q, slash + 1, dir, RESULTS_KEEP, &n, &why);
	if (st == GO_ERR_NOT_FOUND && !strncmp(why.buf, "run ", 4))
		st = go_fail(err, GO_ERR_NOT_FOUND, "run %s's raw record is not here (%s has only its "
			     "summary) and not in the results store %s: push it from a machine that "
			     "has it ('gpuorch push %s'), or point GPUORCH_RESULTS_STORE at the store "
			     "that holds it", slash + 1, dir, rs->where, slash + 1);
	else if (st != GO_OK)
		st = go_fail(err, st, "run %s's raw record could not be fetched from the results "
			     "store: %s", slash + 1, why.buf);
	else
		fprintf(stderr, "fetched run %s's raw record from the results store %s (%d file%s)\n",
			slash + 1, rs->where, n.files_written, n.files_written == 1 ? "" : "s");
out:
	results_close(rs);
	strbuf_release(&why);
	free(sum);
	free(q);
	return st;
}

void results_fetch_on_demand(void)
{
	store_set_fetch(fetch);
}
