/* store.c -- the reports directory: run ids, run directories, listing and lookup.
 *
 * Layout: REPORTS/<experiment-slug>/<run-id>/run.json. The directory name is
 * the run id (run ids are unique by construction: UTC second + 24 random
 * bits, and store_create_run_dir refuses an existing directory). Listing
 * reads every run.json; lookup by id or prefix reads only the directory
 * names and then the one record that matched.
 */
#include "store/store.h"
#include "store/runkeys.h"
#include "store/runjournal.h"
#include "core/fsutil.h"
#include "core/hash.h"
#include "core/parmap.h"
#include "core/jsonutil.h"
#include "core/timeutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <sys/file.h>
#include "core/banned.h"

#define STORE_MAX_RUNS 100000   /* bound on directories scanned */
/* threads of a store-wide pass (core/parmap.h), unless $GPUORCH_JOBS says:
 * each holds one record being read, ~3 MiB for a 0.43 MiB run.json (its
 * text and cJSON tree), so 8 keep a listing of 10,000 under ~40 MB */
#define STORE_JOBS 8
#define RUN_JSON_MAX ((unsigned long long)1 << 30)   /* bytes of a run.json read */

static char *root_dir;

const char *store_root(void)
{
	return root_dir ? root_dir : "reports";
}

void store_set_root(const char *dir)
{
	free(root_dir);
	root_dir = dir && *dir ? xstrdup(dir) : NULL;
}

/* ---- run ids ---- */

static void random_bytes(unsigned char *buf, size_t n)
{
	size_t got = 0;
	int tries;
	for (tries = 0; got < n && tries < 8; tries++) {
		ssize_t r = getrandom(buf + got, n - got, GRND_NONBLOCK);
		if (r > 0)
			got += (size_t)r;
		else if (r < 0 && errno != EINTR)
			break;
	}
	if (got < n) {
		int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			for (tries = 0; got < n && tries < 8; tries++) {
				ssize_t r = read(fd, buf + got, n - got);
				if (r > 0)
					got += (size_t)r;
			}
			close(fd);
		}
	}
	if (got < n) {
		/* no entropy source at all: still differ between processes */
		unsigned long x = (unsigned long)time_mono_ms() * 2654435761u ^ (unsigned long)getpid();
		for (; got < n; got++) {
			x = x * 6364136223846793005ul + 1442695040888963407ul;
			buf[got] = (unsigned char)(x >> 33);
		}
	}
}

void store_new_run_id(char out[32])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char rnd[3];
	struct tm tm;
	time_t now = time(NULL);
	size_t n;
	int i;

	gmtime_r(&now, &tm);
	n = strftime(out, 32, "%Y%m%d-%H%M%S-", &tm);
	random_bytes(rnd, sizeof(rnd));
	for (i = 0; i < 3 && n + 2 < 32; i++) {
		out[n++] = hex[rnd[i] >> 4];
		out[n++] = hex[rnd[i] & 15];
	}
	out[n] = '\0';
}

/* A single path component: no '/', not "." or "..", not empty. */
static int safe_component(const char *s)
{
	return s && *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

enum go_status store_create_run_dir(const char *slug, const char *run_id, char **dir_out,
				    struct strbuf *err)
{
	char *parent, *dir, *logs;
	enum go_status st;

	*dir_out = NULL;
	if (!safe_component(slug))
		return go_fail(err, GO_ERR_INTERNAL, "experiment slug '%s' is not a directory name",
			       slug ? slug : "");
	if (!safe_component(run_id))
		return go_fail(err, GO_ERR_INTERNAL, "run id '%s' is not a directory name",
			       run_id ? run_id : "");
	parent = xstrfmt("%s/%s", store_root(), slug);
	st = fs_mkdir_p(parent, 0755, err);
	if (st != GO_OK) {
		free(parent);
		return st;
	}
	dir = xstrfmt("%s/%s", parent, run_id);
	free(parent);
	if (mkdir(dir, 0755) < 0) {
		if (errno == EEXIST)
			st = go_fail(err, GO_ERR_IO, "run directory '%s' already exists; "
				     "run ids must be new (is the clock right?)", dir);
		else
			st = go_fail(err, GO_ERR_IO, "cannot create run directory '%s': %s", dir,
				     strerror(errno));
		free(dir);
		return st;
	}
	logs = xstrfmt("%s/logs", dir);
	if (mkdir(logs, 0755) < 0) {
		st = go_fail(err, GO_ERR_IO, "cannot create '%s': %s", logs, strerror(errno));
		free(logs);
		fs_remove_tree(dir);
		free(dir);
		return st;
	}
	free(logs);
	*dir_out = dir;
	return GO_OK;
}

/* ---- scanning ---- */

struct cand {
	char *run_id;
	char *dir;
};

struct cands {
	struct cand *v;
	int n, alloc;
	int capped;
};

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the subdirectories of path (no dot entries). */
static char **subdirs(const char *path, int *n, int max)
{
	DIR *d = opendir(path);
	struct dirent *de;
	char **v = NULL;
	int alloc = 0;

	*n = 0;
	if (!d)
		return NULL;
	while ((de = readdir(d)) && *n < max) {
		char *full;
		int is_dir;
		if (de->d_name[0] == '.')
			continue;
		full = xstrfmt("%s/%s", path, de->d_name);
		is_dir = fs_is_dir(full);
		free(full);
		if (!is_dir)
			continue;
		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			v = xrealloc(v, (size_t)alloc * sizeof(*v));
		}
		v[(*n)++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (*n > 1)
		qsort(v, (size_t)*n, sizeof(*v), by_name);
	return v;
}

static void free_names(char **v, int n)
{
	int i;
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Every REPORTS/slug/run directory; with prefix, only ids starting with it;
 * with only_slug, only under that experiment. */
static void scan(const char *prefix, const char *only_slug, struct cands *out)
{
	int ns, s;
	char **slugs = subdirs(store_root(), &ns, STORE_MAX_RUNS);

	memset(out, 0, sizeof(*out));
	for (s = 0; s < ns; s++) {
		char *sdir;
		int nr, r;
		char **runs;
		if (only_slug && strcmp(slugs[s], only_slug))
			continue;
		sdir = xstrfmt("%s/%s", store_root(), slugs[s]);
		runs = subdirs(sdir, &nr, STORE_MAX_RUNS);
		for (r = 0; r < nr; r++) {
			if (prefix && strncmp(runs[r], prefix, strlen(prefix)) != 0)
				continue;
			if (out->n >= STORE_MAX_RUNS) {
				out->capped = 1;
				break;
			}
			if (out->n == out->alloc) {
				out->alloc = out->alloc ? 2 * out->alloc : 32;
				out->v = xrealloc(out->v, (size_t)out->alloc * sizeof(*out->v));
			}
			out->v[out->n].run_id = xstrdup(runs[r]);
			out->v[out->n].dir = xstrfmt("%s/%s", sdir, runs[r]);
			out->n++;
		}
		free_names(runs, nr);
		free(sdir);
	}
	free_names(slugs, ns);
}

static void cands_release(struct cands *c)
{
	int i;
	for (i = 0; i < c->n; i++) {
		free(c->v[i].run_id);
		free(c->v[i].dir);
	}
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static store_fetch fetch_hook;

void store_set_fetch(store_fetch fetch)
{
	fetch_hook = fetch;
}

/* Read dir/run.json; GO_OK only for a JSON object. Its text is never echoed
 * in an error (it may be a link to any file), and a file over RUN_JSON_MAX
 * is refused before it is read (a listing goes on without it). */
enum go_status store_load_record(const char *dir, cJSON **out, struct strbuf *err)
{
	struct store_record_file of;
	return store_load_record_of(dir, out, &of, err);
}

/* store_load_record_of's work; with lean, run.json is read by json_lean_parse
 * first (its timing samples as blocks: core/jsonlean.h), by cJSON when that
 * does not read it (and then for the error) */
static enum go_status load_record(const char *dir, cJSON **out, struct json_lean *lean,
				  struct store_record_file *of, struct strbuf *err)
{
	char *path = xstrfmt("%s/run.json", dir);
	struct strbuf text = STRBUF_INIT;
	char *sha = of->sha256;
	struct stat sb, rd;
	enum go_status st;

	*out = NULL;
	memset(of, 0, sizeof(*of));
	if (!fs_is_file(path) && fetch_hook && (st = fetch_hook(dir, err)) != GO_OK) {
		/* its raw record is in the results store, or not to be had (the hook says which) */
	} else if (!fs_is_file(path)) {
		st = go_fail(err, GO_ERR_NOT_FOUND, "'%s' has no run.json", dir);
	} else if (stat(path, &sb) == 0 && (unsigned long long)sb.st_size > RUN_JSON_MAX) {
		st = go_fail(err, GO_ERR_IO, "'%s' is %llu bytes, over the %llu MiB gpuorch reads as "
			     "a run record", path, (unsigned long long)sb.st_size,
			     (unsigned long long)RUN_JSON_MAX >> 20);
	} else if ((st = fs_read_file_stat(path, &text, &rd, err)) != GO_OK) {
		st = GO_ERR_IO;
	} else {
		of->size = (double)rd.st_size;
		of->mtime_s = (double)rd.st_mtim.tv_sec;
		of->mtime_ns = (double)rd.st_mtim.tv_nsec;
		if (lean && json_lean_parse(text.buf, text.len, "samples_us", "timing", lean)) {
			*out = lean->tree;
			st = GO_OK;
		} else {
			st = json_parse_unquoted(text.buf, text.len, path, out, err);
		}
		if (st == GO_OK && !cJSON_IsObject(*out))
			st = go_fail(err, GO_ERR_IO, "'%s' is not a run record (not a JSON object)",
				     path);
		/* a run still going, or stopped: its hosts since the start */
		if (st == GO_OK) {
			sha256_hex(text.buf, text.len, sha);
			if (runjournal_apply(dir, *out, sha, err) < 0)
				st = GO_ERR_IO;
		}
		if (st != GO_OK) {
			if (lean && lean->tree == *out)
				*out = NULL;   /* freed with the blocks below */
			cJSON_Delete(*out);
			*out = NULL;
			if (lean)
				json_lean_release(lean);
		}
	}
	strbuf_release(&text);
	free(path);
	return st;
}

enum go_status store_load_record_of(const char *dir, cJSON **out, struct store_record_file *of,
				    struct strbuf *err)
{
	return load_record(dir, out, NULL, of, err);
}

enum go_status store_load_record_lean(const char *dir, struct json_lean *out,
				      struct store_record_file *of, struct strbuf *err)
{
	cJSON *run = NULL;
	enum go_status st;
	memset(out, 0, sizeof(*out));
	st = load_record(dir, &run, out, of, err);
	if (st == GO_OK && !out->tree)
		out->tree = run;   /* read by cJSON: a tree without blocks */
	return st;
}

/* ---- listing ---- */

/* The tree load reads for dir, or NULL with "skipping run" in warnings. */
static cJSON *load_or_warn(store_loader load, const char *dir, struct strbuf *warnings)
{
	struct strbuf why = STRBUF_INIT;
	cJSON *run = NULL;
	if (load(dir, &run, &why) != GO_OK) {
		if (warnings)
			strbuf_addf(warnings, "skipping run '%s': %s\n", dir, why.buf);
		cJSON_Delete(run);
		run = NULL;
	}
	strbuf_release(&why);
	return run;
}

/* The reports directory is not there: no runs yet (GO_OK), or an error
 * when something else has its name. */
static enum go_status no_store(struct strbuf *err)
{
	if (access(store_root(), F_OK) == 0)
		return go_fail(err, GO_ERR_IO, "reports directory '%s' is not a directory; "
			       "set --reports or $GPUORCH_REPORTS", store_root());
	return GO_OK;
}

static int newest_first(const void *pa, const void *pb)
{
	const struct store_entry *a = pa, *b = pb;
	const char *ta = json_str(a->run, RK_STARTED_AT);
	const char *tb = json_str(b->run, RK_STARTED_AT);
	int c;

	if (ta && tb && (c = strcmp(ta, tb)) != 0)
		return -c;
	if (!ta != !tb)
		return ta ? -1 : 1;          /* records without a start time last */
	return -strcmp(a->run_id, b->run_id);
}

enum go_status store_list(struct store_entry **out, int *n, struct strbuf *warnings,
			  struct strbuf *err)
{
	return store_list_with(store_load_record, out, n, warnings, err);
}

enum go_status store_list_with(store_loader load, struct store_entry **out, int *n,
			       struct strbuf *warnings, struct strbuf *err)
{
	struct cands c;
	struct store_entry *v;
	int i, k = 0;

	*out = NULL;
	*n = 0;
	if (!fs_is_dir(store_root()))
		return no_store(err);
	scan(NULL, NULL, &c);
	v = xcalloc((size_t)(c.n ? c.n : 1), sizeof(*v));
	for (i = 0; i < c.n; i++) {
		cJSON *run = load_or_warn(load, c.v[i].dir, warnings);
		if (!run)
			continue;
		v[k].run_id = c.v[i].run_id;
		v[k].dir = c.v[i].dir;
		v[k].run = run;
		c.v[i].run_id = c.v[i].dir = NULL;
		k++;
	}
	if (c.capped && warnings)
		strbuf_addf(warnings, "more than %d runs under '%s'; the rest are not listed\n",
			    STORE_MAX_RUNS, store_root());
	cands_release(&c);
	if (k > 1)
		qsort(v, (size_t)k, sizeof(*v), newest_first);
	*out = v;
	*n = k;
	return GO_OK;
}

/* A run's place in the newest-first order, without its tree. */
struct order_key {
	char *started_at;   /* NULL: the record has none (listed last) */
	int cand;           /* index into the scan's candidates */
	const char *run_id;
};

static int key_newest_first(const void *pa, const void *pb)
{
	const struct order_key *a = pa, *b = pb;
	int c;
	if (a->started_at && b->started_at && (c = strcmp(a->started_at, b->started_at)) != 0)
		return -c;
	if (!a->started_at != !b->started_at)
		return a->started_at ? -1 : 1;
	return -strcmp(a->run_id, b->run_id);
}

/* A store-wide pass over the scan's candidates on core/parmap.c's pool:
 * each run loaded on a worker thread (its warning kept beside it), taken
 * here in the scan's order, so the output and warnings are the same for
 * any number of threads ($GPUORCH_JOBS). A loader shares nothing it
 * writes (store/runread.c's index is per thread); the one shared write is
 * cJSON's own: every parse resets its global error pointer, which gpuorch
 * never reads (core/jsonutil.c takes the parse's end instead), the only
 * race helgrind finds in a parallel `runs` besides OpenSSL's own init. */
struct pass {
	store_loader load;
	const struct cands *c;
	store_visit visit;          /* store_each: each tree, in order */
	void *ctx;
	struct strbuf *warnings;
	struct order_key *keys;     /* store_each_newest: each run's start time */
	int nkeys;
};

struct loaded {
	cJSON *run;                 /* store_each: the tree; NULL when unreadable */
	char *started_at;           /* store_each_newest: its start time (may be NULL) */
	int ok;
	struct strbuf warn;
};

static struct loaded *load_one(struct pass *pa, int i)
{
	struct loaded *l = xcalloc(1, sizeof(*l));
	strbuf_init(&l->warn, 0);
	l->run = load_or_warn(pa->load, pa->c->v[i].dir, &l->warn);
	l->ok = l->run != NULL;
	return l;
}

static void loaded_drop(void *p, void *ctx)
{
	struct loaded *l = p;
	(void)ctx;
	cJSON_Delete(l->run);
	free(l->started_at);
	strbuf_release(&l->warn);
	free(l);
}

/* the tree itself, for store_each's visit */
static void *tree_make(int i, void *ctx)
{
	return load_one(ctx, i);
}

static int tree_take(int i, void *p, void *ctx)
{
	struct pass *pa = ctx;
	struct loaded *l = p;
	int stop = 0;
	if (l->warn.len && pa->warnings)
		strbuf_add(pa->warnings, l->warn.buf, l->warn.len);
	if (l->run) {
		struct store_entry e = { pa->c->v[i].run_id, pa->c->v[i].dir, l->run };
		stop = pa->visit(&e, pa->ctx);
	}
	loaded_drop(l, ctx);
	return stop;
}

/* only the start time, the tree freed on the worker: pass 1 of store_each_newest */
static void *start_make(int i, void *ctx)
{
	struct loaded *l = load_one(ctx, i);
	const char *t = json_str(l->run, RK_STARTED_AT);
	l->started_at = t ? xstrdup(t) : NULL;
	cJSON_Delete(l->run);
	l->run = NULL;
	return l;
}

static int start_take(int i, void *p, void *ctx)
{
	struct pass *pa = ctx;
	struct loaded *l = p;
	if (l->warn.len && pa->warnings)
		strbuf_add(pa->warnings, l->warn.buf, l->warn.len);
	if (l->ok) {
		struct order_key *k = &pa->keys[pa->nkeys++];
		k->started_at = l->started_at;
		l->started_at = NULL;
		k->cand = i;
		k->run_id = pa->c->v[i].run_id;
	}
	loaded_drop(l, ctx);
	return 0;
}

enum go_status store_each_newest(store_loader load, store_visit visit, void *ctx,
				 struct strbuf *warnings, struct strbuf *err)
{
	struct cands c;
	struct order_key *keys;
	int i, k = 0, stop = 0;

	if (!fs_is_dir(store_root()))
		return no_store(err);
	scan(NULL, NULL, &c);
	keys = xcalloc((size_t)(c.n ? c.n : 1), sizeof(*keys));
	/* pass 1: each run loaded alone, on the pool's threads (a loader that
	 * writes a missing summary does so there), its start time kept, its
	 * tree freed; taken in the scan's order whatever the threads do */
	{
		struct pass pa = { load, &c, NULL, NULL, warnings, keys, 0 };
		pmap_run(c.n, pmap_jobs(STORE_JOBS), start_make, start_take, loaded_drop, &pa);
		k = pa.nkeys;
	}
	if (c.capped && warnings)
		strbuf_addf(warnings, "more than %d runs under '%s'; the rest are not listed\n",
			    STORE_MAX_RUNS, store_root());
	if (k > 1)
		qsort(keys, (size_t)k, sizeof(*keys), key_newest_first);
	/* pass 2: loaded again in that order, one at a time, until visit stops */
	for (i = 0; i < k && !stop; i++) {
		struct strbuf why = STRBUF_INIT;
		struct store_entry e;
		e.run_id = c.v[keys[i].cand].run_id;
		e.dir = c.v[keys[i].cand].dir;
		e.run = NULL;
		if (load(e.dir, &e.run, &why) == GO_OK) {   /* gone since: passed over */
			stop = visit(&e, ctx);
			cJSON_Delete(e.run);
		}
		strbuf_release(&why);
	}
	for (i = 0; i < k; i++)
		free(keys[i].started_at);
	free(keys);
	cands_release(&c);
	return GO_OK;
}

enum go_status store_each(store_loader load, store_visit visit, void *ctx,
			  struct strbuf *warnings, struct strbuf *err)
{
	struct cands c;

	if (!fs_is_dir(store_root()))
		return no_store(err);
	scan(NULL, NULL, &c);
	{
		/* loaded on the pool's threads, visited here in the scan's order,
		 * each tree freed after its visit (the visit kept what it needs) */
		struct pass pa = { load, &c, visit, ctx, warnings, NULL, 0 };
		pmap_run(c.n, pmap_jobs(STORE_JOBS), tree_make, tree_take, loaded_drop, &pa);
	}
	if (c.capped && warnings)
		strbuf_addf(warnings, "more than %d runs under '%s'; the rest are not listed\n",
			    STORE_MAX_RUNS, store_root());
	cands_release(&c);
	return GO_OK;
}

void store_entry_release(struct store_entry *e)
{
	if (!e)
		return;
	free(e->run_id);
	free(e->dir);
	cJSON_Delete(e->run);
	e->run_id = e->dir = NULL;
	e->run = NULL;
}

void store_list_free(struct store_entry *v, int n)
{
	int i;
	for (i = 0; i < n && v; i++)
		store_entry_release(&v[i]);
	free(v);
}

/* ---- lookup ---- */

/* The candidates' directories, quoted, for an error (at most 10). */
static void name_dirs(const struct cands *c, int exact_only, const char *run_id,
		      struct strbuf *msg)
{
	int i, k = 0;
	for (i = 0; i < c->n; i++) {
		if (exact_only && strcmp(c->v[i].run_id, run_id))
			continue;
		if (k < 10)
			strbuf_addf(msg, "%s'%s'", k ? ", " : "", c->v[i].dir);
		k++;
	}
	if (k > 10)
		strbuf_addf(msg, " and %d more", k - 10);
}

/* "SLUG/ID" of a run directory REPORTS/SLUG/ID. */
char *store_qualified_id(const char *dir)
{
	const char *id = strrchr(dir, '/'), *slug;
	if (!id)
		return xstrdup(dir);
	for (slug = id; slug > dir && slug[-1] != '/'; slug--)
		;
	return xstrdup(slug);
}

enum go_status store_find(const char *run_id, struct store_entry *out, struct strbuf *err)
{
	return store_find_with(run_id, store_load_record, out, err);
}

enum go_status store_find_with(const char *run_id, store_loader load, struct store_entry *out,
			       struct strbuf *err)
{
	struct cands c;
	int i, pick = -1, nexact = 0, same = 1;
	const char *id = run_id, *slash = run_id ? strchr(run_id, '/') : NULL;
	char *slug = NULL;
	enum go_status st;

	memset(out, 0, sizeof(*out));
	if (slash) {
		slug = xstrfmt("%.*s", (int)(slash - run_id), run_id);
		id = slash + 1;
	}
	if (!run_id || !*run_id || (slash && (!safe_component(slug) || !safe_component(id)))) {
		free(slug);
		return go_fail(err, GO_ERR_USAGE, "'%s' is not a run id (or EXPERIMENT/RUN-ID); see "
			       "'gpuorch runs'", run_id ? run_id : "");
	}
	scan(id, slug, &c);
	for (i = 0; i < c.n; i++) {
		if (!strcmp(c.v[i].run_id, id)) {
			pick = i;   /* an exact id wins over longer ids it prefixes */
			nexact++;
		}
		same &= !strcmp(c.v[i].run_id, c.v[0].run_id);
	}
	if (nexact > 1 || (nexact == 0 && c.n > 1 && same)) {
		/* one id under two experiments (a copied run): which is meant is not ours to guess */
		struct strbuf msg = STRBUF_INIT;
		const char *dup = nexact ? id : c.v[0].run_id;
		char *q = store_qualified_id(c.v[pick >= 0 ? pick : 0].dir);
		name_dirs(&c, 1, dup, &msg);
		st = go_fail(err, GO_ERR_USAGE, "run id '%s' is ambiguous: %d runs have it (%s); name "
			     "one as EXPERIMENT/RUN-ID, e.g. '%s'", dup, nexact ? nexact : c.n,
			     msg.buf, q);
		free(q);
		strbuf_release(&msg);
		cands_release(&c);
		free(slug);
		return st;
	}
	if (pick < 0 && c.n == 1)
		pick = 0;
	if (pick < 0 && c.n == 0) {
		cands_release(&c);
		if (slug)
			st = go_fail(err, GO_ERR_NOT_FOUND, "no run '%s' under '%s/%s'; see 'gpuorch runs'",
				     id, store_root(), slug);
		else
			st = go_fail(err, GO_ERR_NOT_FOUND, "no run '%s' under '%s'; see 'gpuorch runs'",
				     run_id, store_root());
		free(slug);
		return st;
	}
	free(slug);
	if (pick < 0) {
		struct strbuf msg = STRBUF_INIT;
		for (i = 0; i < c.n && i < 10; i++)
			strbuf_addf(&msg, "%s%s", i ? ", " : "", c.v[i].run_id);
		if (c.n > 10)
			strbuf_addf(&msg, " and %d more", c.n - 10);
		st = go_fail(err, GO_ERR_USAGE, "run id '%s' is ambiguous: it starts %d runs (%s); "
			     "give more of the id", run_id, c.n, msg.buf);
		strbuf_release(&msg);
		cands_release(&c);
		return st;
	}
	st = load(c.v[pick].dir, &out->run, err);
	if (st == GO_OK) {
		out->run_id = c.v[pick].run_id;
		out->dir = c.v[pick].dir;
		c.v[pick].run_id = c.v[pick].dir = NULL;
	} else if (st == GO_ERR_NOT_FOUND) {
		st = GO_ERR_IO;   /* the run exists; its record is what is missing */
	}
	cands_release(&c);
	return st;
}

enum go_status store_lock_run(const char *dir, int *fd, struct strbuf *err)
{
	char *path = xstrfmt("%s/controller.lock", dir);
	char pid[32];
	int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	ssize_t n;

	*fd = -1;
	if (f < 0) {
		enum go_status st = go_fail(err, GO_ERR_IO, "cannot open '%s': %s", path,
					    strerror(errno));
		free(path);
		return st;
	}
	if (flock(f, LOCK_EX | LOCK_NB) != 0) {
		n = pread(f, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		close(f);
		go_fail(err, GO_ERR_USAGE, "another gpuorch (pid %s) is running this run now (it holds "
			"'%s'); wait for it to end, or stop it first", *pid ? pid : "?", path);
		free(path);
		return GO_ERR_USAGE;
	}
	snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	/* the pid is only shown to a second controller: the lock is what counts */
	if (ftruncate(f, 0) == 0 && pwrite(f, pid, strlen(pid), 0) < 0)
		pid[0] = '\0';
	free(path);
	*fd = f;
	return GO_OK;
}

int store_run_live(const char *dir)
{
	char *path = xstrfmt("%s/controller.lock", dir);
	int f = open(path, O_RDONLY | O_CLOEXEC), live = 0;
	free(path);
	if (f < 0)
		return 0;   /* no lock file: a run from before the lock, or never started */
	if (flock(f, LOCK_SH | LOCK_NB) != 0)
		live = errno == EWOULDBLOCK;
	close(f);
	return live;
}

/* A directory's run directories: itself when it holds run.json, else those
 * of its subdirectories, down to a reports tree (two levels). */
static void runs_under(const char *dir, int depth, char ***v, int *n, int *alloc)
{
	char *rec = xstrfmt("%s/run.json", dir);
	int is_run = fs_is_file(rec), ns, i;
	char **subs;
	free(rec);
	if (is_run || depth == 0) {
		if (!is_run)
			return;
		if (*n == *alloc) {
			*alloc = *alloc ? 2 * *alloc : 32;
			*v = xrealloc(*v, (size_t)*alloc * sizeof(**v));
		}
		(*v)[(*n)++] = xstrdup(dir);
		return;
	}
	subs = subdirs(dir, &ns, STORE_MAX_RUNS);
	for (i = 0; i < ns && *n < STORE_MAX_RUNS; i++) {
		char *sub = xstrfmt("%s/%s", dir, subs[i]);
		runs_under(sub, depth - 1, v, n, alloc);
		free(sub);
	}
	free_names(subs, ns);
}

char **store_run_dirs_under(const char *dir, int *n)
{
	char **v = NULL;
	int alloc = 0;
	*n = 0;
	runs_under(dir, 2, &v, n, &alloc);
	return v;
}

void store_run_dirs_free(char **v, int n)
{
	free_names(v, n);
}
