/* pack.c -- deterministic source archives (ustar or pax via libarchive) and their content id.
 *
 * Design: both packers validate and sort the file list (strcmp order, no
 * duplicates), then stream one file at a time through a "reader" (the work
 * tree, or `git cat-file` at a commit) into one libarchive tar writer
 * whose output callback appends to a strbuf. Every header field that could
 * vary between machines is pinned: mtime 0, uid/gid 0, no user or group
 * names, mode 0644 or 0755 (owner-executable in the work tree, or git mode
 * 100755 in a commit). No directory entries are written: tar creates
 * parents on extraction. The same bytes therefore give the same archive, and
 * its SHA-256 is the content id.
 *
 * The format: ustar when it holds every name (100 bytes, or a prefix of up
 * to 155 split at a "/"), as every archive was before longer names could
 * ship, so such a tree keeps its bytes and content id; else pax, whose
 * extended header carries a name of any length for the entries that need
 * one (pax_restricted: the others keep their ustar headers). gpuorch runs
 * in the C locale, so a non-ASCII name in a pax archive is written as its
 * bytes (hdrcharset=BINARY), as git holds it. */
#include "remote/pack.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "core/fsutil.h"
#include "core/proc.h"
#include "store/gitinfo.h"
#include "core/jsonutil.h"
#include "core/strbuf.h"
#include "core/banned.h"

#define PACK_MAX_FILE ((size_t)64 << 20)
#define PACK_MAX_TOTAL_MIB 512
#define PACK_NAME_MAX 255   /* bytes in one path component: Linux's file systems' NAME_MAX */

/* The limit on all the sources together, in bytes: 512 MiB, or
 * GPUORCH_SOURCES_LIMIT_MIB (1..4096) when set. */
static size_t max_total(void)
{
	const char *v = getenv("GPUORCH_SOURCES_LIMIT_MIB");
	char *end = NULL;
	long mib = v && *v ? strtol(v, &end, 10) : 0;
	if (!v || !*v || *end || mib < 1 || mib > 4096)
		mib = PACK_MAX_TOTAL_MIB;
	return (size_t)mib << 20;
}

/* Fetch one file's bytes and its executable bit. */
typedef enum go_status (*pack_reader)(void *ctx, const char *path, struct strbuf *data,
				      int *exec, struct strbuf *err);

/* ---------------------------------------------------------------- archive */

static la_ssize_t write_cb(struct archive *a, void *ctx, const void *buf, size_t n)
{
	strbuf_add(ctx, buf, n);
	return (la_ssize_t)n;
}

static la_ssize_t discard_cb(struct archive *a, void *ctx, const void *buf, size_t n)
{
	return (la_ssize_t)n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static enum go_status check_path(const char *p, struct strbuf *err)
{
	const char *s = p;
	if (!*p || *p == '/')
		return go_fail(err, GO_ERR_IO,
			       "cannot pack '%s': give a path relative to the repository root", p);
	if (strchr(p, '\n'))
		return go_fail(err, GO_ERR_IO,
			       "cannot pack '%s': a name with a newline cannot ship (the list of files a host "
			       "is sent has a line a file: remote/blobs.h); rename it or leave it out of 'sources'",
			       p);
	while (*s) {
		size_t n = strcspn(s, "/");
		if (n == 0 || (n == 1 && *s == '.') || (n == 2 && !strncmp(s, "..", 2)))
			return go_fail(err, GO_ERR_IO,
				       "cannot pack '%s': not a plain relative path inside the repository",
				       p);
		if (n > PACK_NAME_MAX)
			return go_fail(err, GO_ERR_IO,
				       "cannot pack '%s': its component '%.20s...' is %zu bytes, and no Linux "
				       "file system holds a name over %d; rename it or leave it out of 'sources'",
				       p, s, n, PACK_NAME_MAX);
		s += n;
		if (*s == '/' && !*++s)
			return go_fail(err, GO_ERR_IO, "cannot pack '%s': trailing '/'", p);
	}
	return GO_OK;
}

/* Sorted, validated copy of files (the strings are borrowed). */
static enum go_status sorted_files(char *const *files, const char ***out, int *nout,
				   struct strbuf *err)
{
	int n = 0, i;
	const char **v;
	while (files && files[n])
		n++;
	v = xcalloc((size_t)n + 1, sizeof(*v));
	for (i = 0; i < n; i++) {
		enum go_status st = check_path(files[i], err);
		if (st != GO_OK) {
			free(v);
			return st;
		}
		v[i] = files[i];
	}
	qsort(v, (size_t)n, sizeof(*v), cmp_str);
	for (i = 1; i < n; i++) {
		if (!strcmp(v[i - 1], v[i])) {
			enum go_status st = go_fail(err, GO_ERR_IO, "cannot pack '%s': listed twice",
						    v[i]);
			free(v);
			return st;
		}
	}
	*out = v;
	*nout = n;
	return GO_OK;
}

/* The #include lines of a source (pack.h): a line whose first token is
 * "#" then "include", then "name" or <name>, or anything else (a macro). */
static void scan_includes(const char *text, size_t len, struct pack_file *pf)
{
	const char *p = text, *end = text + len;
	int n = 0;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *q = p, *e;
		if (!eol)
			eol = end;
		while (q < eol && (*q == ' ' || *q == '\t'))
			q++;
		if (q < eol && *q == '#') {
			q++;
			while (q < eol && (*q == ' ' || *q == '\t'))
				q++;
			if (eol - q > 7 && !strncmp(q, "include", 7)) {
				q += 7;
				while (q < eol && (*q == ' ' || *q == '\t'))
					q++;
				if (q < eol && (*q == '"' || *q == '<') &&
				    (e = memchr(q + 1, *q == '"' ? '"' : '>', (size_t)(eol - q - 1))) != NULL) {
					pf->includes = xrealloc(pf->includes, (size_t)(n + 2) * sizeof(char *));
					pf->includes[n++] = xstrfmt("%c:%.*s", *q == '"' ? 'q' : 'a',
								    (int)(e - q - 1), q + 1);
					pf->includes[n] = NULL;
				} else {
					pf->include_macro = 1;
				}
			}
		}
		p = eol + 1;
	}
}

/* *pax: 0 when libarchive's ustar writer holds every name of v (n of
 * them), else 1. The writer itself is asked, with empty entries into a
 * discarding callback: its rule is the one the archive is then written by. */
static enum go_status needs_pax(const char **v, int n, int *pax, struct strbuf *err)
{
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();
	enum go_status st = GO_OK;
	int i;

	*pax = 0;
	if (!a || !e || archive_write_set_format_ustar(a) != ARCHIVE_OK ||
	    archive_write_add_filter_none(a) != ARCHIVE_OK ||
	    archive_write_open(a, NULL, NULL, discard_cb, NULL) != ARCHIVE_OK)
		st = go_fail(err, GO_ERR_INTERNAL, "cannot start a tar archive: %s",
			     a && archive_error_string(a) ? archive_error_string(a) : "out of memory");
	for (i = 0; st == GO_OK && i < n && !*pax; i++) {
		archive_entry_clear(e);
		archive_entry_set_pathname(e, v[i]);
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_perm(e, 0644);
		archive_entry_set_size(e, 0);
		*pax = archive_write_header(a, e) != ARCHIVE_OK;
	}
	if (a)
		archive_write_free(a);
	if (e)
		archive_entry_free(e);
	return st;
}

/* *out: a tar writer appending to ar, in the format the names v (n of
 * them) need: ustar when it holds them all, else pax (needs_pax). */
static enum go_status open_writer(const char **v, int n, struct strbuf *ar, struct archive **out,
				  struct strbuf *err)
{
	struct archive *a;
	enum go_status st;
	int pax = 0;

	*out = NULL;
	st = needs_pax(v, n, &pax, err);
	if (st != GO_OK)
		return st;
	a = archive_write_new();
	if (!a)
		return go_fail(err, GO_ERR_INTERNAL, "cannot create a libarchive writer");
	if ((pax ? archive_write_set_format_pax_restricted(a)
		 : archive_write_set_format_ustar(a)) != ARCHIVE_OK ||
	    archive_write_add_filter_none(a) != ARCHIVE_OK ||
	    archive_write_open(a, ar, NULL, write_cb, NULL) != ARCHIVE_OK) {
		st = go_fail(err, GO_ERR_INTERNAL, "cannot start a tar archive: %s",
			     archive_error_string(a));
		archive_write_free(a);
		return st;
	}
	*out = a;
	return GO_OK;
}

/* One file's header (the pinned fields: pack.h) and bytes, through e. */
static enum go_status write_entry(struct archive *a, struct archive_entry *e, const char *path,
				  const struct strbuf *data, int exec, struct strbuf *err)
{
	archive_entry_clear(e);
	archive_entry_set_pathname(e, path);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, exec ? 0755 : 0644);
	archive_entry_set_size(e, (la_int64_t)data->len);
	archive_entry_set_mtime(e, 0, 0);
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	/* ARCHIVE_WARN: a name not in the C locale's charset, written as its
	 * bytes (hdrcharset=BINARY): the header is whole */
	if (archive_write_header(a, e) < ARCHIVE_WARN ||
	    (data->len && archive_write_data(a, data->buf, data->len) != (la_ssize_t)data->len))
		return go_fail(err, GO_ERR_IO, "cannot pack '%s': %s", path, archive_error_string(a));
	return GO_OK;
}

static enum go_status pack_build(char *const *files, pack_reader reader, void *rctx,
				 struct pack *out, struct strbuf *err)
{
	struct strbuf ar = STRBUF_INIT, data = STRBUF_INIT;
	size_t total = 0, limit = max_total();
	struct archive *a = NULL;
	struct archive_entry *e = NULL;
	const char **v = NULL;
	enum go_status st;
	int n = 0, i;

	memset(out, 0, sizeof(*out));
	st = sorted_files(files, &v, &n, err);
	if (st != GO_OK)
		return st;
	out->files = xcalloc((size_t)n + 1, sizeof(*out->files));

	e = archive_entry_new();
	st = e ? open_writer(v, n, &ar, &a, err)
	       : go_fail(err, GO_ERR_INTERNAL, "cannot create a libarchive entry");
	if (st != GO_OK)
		goto out;
	for (i = 0; i < n; i++) {
		struct pack_file *pf = &out->files[i];
		int exec = 0;
		strbuf_reset(&data);
		st = reader(rctx, v[i], &data, &exec, err);
		if (st != GO_OK)
			goto out;
		if (data.len > PACK_MAX_FILE) {
			st = go_fail(err, GO_ERR_IO, "cannot pack '%s': %zu bytes is over the %zu MiB limit per file",
				     v[i], data.len, PACK_MAX_FILE >> 20);
			goto out;
		}
		total += data.len;
		if (total > limit) {
			st = go_fail(err, GO_ERR_IO,
				     "cannot pack the sources: %d files come to more than the %zu MiB limit in all (at '%s'); "
				     "narrow 'sources' ('gpuorch run --dry-run' lists what ships) or raise GPUORCH_SOURCES_LIMIT_MIB",
				     n, limit >> 20, v[i]);
			goto out;
		}
		st = write_entry(a, e, v[i], &data, exec, err);
		if (st != GO_OK)
			goto out;
		pf->path = xstrdup(v[i]);
		pf->size = data.len;
		pf->exec = exec;
		sha256_hex(data.buf, data.len, pf->sha256);
		scan_includes(data.buf, data.len, pf);
		if (data.len <= PACK_TEXT_MAX) {
			pf->text = xmalloc(data.len + 1);
			memcpy(pf->text, data.buf, data.len);
			pf->text[data.len] = '\0';
		}
		out->nfiles = i + 1;
	}
	if (archive_write_close(a) != ARCHIVE_OK) {
		st = go_fail(err, GO_ERR_IO, "cannot finish the tar archive: %s",
			     archive_error_string(a));
		goto out;
	}
	sha256_hex(ar.buf, ar.len, out->content_id);
	out->len = ar.len;
	out->data = (unsigned char *)strbuf_detach(&ar, NULL);
out:
	if (a)
		archive_write_free(a);
	if (e)
		archive_entry_free(e);
	free(v);
	strbuf_release(&data);
	strbuf_release(&ar);
	if (st != GO_OK)
		pack_release(out);
	return st;
}

/* ---------------------------------------------------------------- work tree */

struct worktree_ctx {
	const char *root;
	char *real_root;
};

static enum go_status read_worktree(void *vctx, const char *path, struct strbuf *data,
				    int *exec, struct strbuf *err)
{
	struct worktree_ctx *w = vctx;
	char *full = xstrfmt("%s/%s", w->root, path);
	char *real = NULL;
	struct stat lst, st;
	enum go_status rc = GO_OK;
	size_t rl = strlen(w->real_root);

	if (lstat(full, &lst) < 0) {
		rc = go_fail(err, go_from_errno(errno), "cannot pack '%s': %s", path,
			     strerror(errno));
		goto out;
	}
	real = realpath(full, NULL);
	if (!real) {
		rc = go_fail(err, GO_ERR_IO, "cannot pack '%s': %s%s", path, strerror(errno),
			     S_ISLNK(lst.st_mode) ? " (a dangling symbolic link)" : "");
		goto out;
	}
	if (strncmp(real, w->real_root, rl) || (real[rl] != '/' && strcmp(w->real_root, "/"))) {
		rc = go_fail(err, GO_ERR_IO,
			     "cannot pack '%s': it resolves to '%s', outside '%s'; copy the file into the repository",
			     path, real, w->root);
		goto out;
	}
	if (stat(real, &st) < 0) {
		rc = go_fail(err, GO_ERR_IO, "cannot pack '%s': %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = go_fail(err, GO_ERR_IO, "cannot pack '%s': not a regular file", path);
		goto out;
	}
	if ((size_t)st.st_size > PACK_MAX_FILE) {
		rc = go_fail(err, GO_ERR_IO,
			     "cannot pack '%s': %lld bytes is over the %zu MiB limit per file",
			     path, (long long)st.st_size, PACK_MAX_FILE >> 20);
		goto out;
	}
	*exec = (st.st_mode & S_IXUSR) != 0;
	rc = fs_read_file(real, data, err);
out:
	free(full);
	free(real);
	return rc;
}

enum go_status pack_worktree(const char *root, char *const *files, struct pack *out,
			     struct strbuf *err)
{
	struct worktree_ctx w;
	enum go_status st;

	memset(out, 0, sizeof(*out));
	w.root = root;
	w.real_root = realpath(root, NULL);
	if (!w.real_root)
		return go_fail(err, GO_ERR_IO, "cannot pack from '%s': %s", root, strerror(errno));
	st = pack_build(files, read_worktree, &w, out, err);
	free(w.real_root);
	return st;
}

/* ---------------------------------------------------------------- commit */

struct commit_ctx {
	const char *root;
	const char *rev;
	char commit[41];
	char **paths;      /* from ls-tree, sorted; parallel to modes */
	int *modes;        /* git modes, e.g. 0100644 */
	char **types;
	int n;
};

static enum go_status list_commit(struct commit_ctx *c, char *const *files, struct strbuf *err)
{
	struct strbuf o = STRBUF_INIT, eo = STRBUF_INIT;
	const char **argv;
	int nfiles = 0, i, code = 0, cap;
	enum go_status st;
	char *p, *end;

	while (files && files[nfiles])
		nfiles++;
	argv = xcalloc((size_t)nfiles + 7, sizeof(*argv));
	argv[0] = "git";
	argv[1] = "--literal-pathspecs";
	argv[2] = "ls-tree";
	argv[3] = "-z";
	argv[4] = c->commit;
	argv[5] = "--";
	for (i = 0; i < nfiles; i++)
		argv[6 + i] = files[i];
	st = proc_run(c->root, argv, &o, &eo, &code, err);
	free(argv);
	if (st == GO_OK && code != 0)
		st = go_fail(err, GO_ERR_GIT, "'git ls-tree %.12s' failed in '%s': %.*s", c->commit,
			     c->root, (int)strcspn(eo.buf, "\n"), eo.buf);
	if (st != GO_OK) {
		strbuf_release(&o);
		strbuf_release(&eo);
		return st == GO_ERR_GIT ? st : GO_ERR_GIT;
	}
	/* "<mode> SP <type> SP <object> TAB <path>" NUL ... */
	cap = nfiles + 1;
	c->paths = xcalloc((size_t)cap, sizeof(char *));
	c->types = xcalloc((size_t)cap, sizeof(char *));
	c->modes = xcalloc((size_t)cap, sizeof(int));
	p = o.buf;
	end = o.buf + o.len;
	while (p < end && c->n < cap) {
		size_t len = strlen(p);
		char *tab = strchr(p, '\t');
		char *sp1 = strchr(p, ' ');
		if (tab && sp1 && sp1 < tab) {
			char *sp2 = strchr(sp1 + 1, ' ');
			c->modes[c->n] = (int)strtol(p, NULL, 8);
			c->types[c->n] = sp2 && sp2 < tab
				? xstrfmt("%.*s", (int)(sp2 - sp1 - 1), sp1 + 1) : xstrdup("?");
			c->paths[c->n] = xstrdup(tab + 1);
			c->n++;
		}
		p += len + 1;
	}
	strbuf_release(&o);
	strbuf_release(&eo);
	return GO_OK;
}

static enum go_status read_commit(void *vctx, const char *path, struct strbuf *data,
				  int *exec, struct strbuf *err)
{
	struct commit_ctx *c = vctx;
	int i;
	for (i = 0; i < c->n; i++)
		if (!strcmp(c->paths[i], path))
			break;
	if (i == c->n)
		return go_fail(err, GO_ERR_NOT_FOUND,
			       "'%s' does not exist in commit %.12s ('%s'); commit it or drop it from 'sources'",
			       path, c->commit, c->rev);
	if (strcmp(c->types[i], "blob"))
		return go_fail(err, GO_ERR_GIT, "'%s' is a %s in commit %.12s, not a file", path,
			       c->types[i], c->commit);
	if ((c->modes[i] & 0170000) == 0120000)
		return go_fail(err, GO_ERR_GIT,
			       "'%s' is a symbolic link in commit %.12s; gpuorch ships regular files only",
			       path, c->commit);
	*exec = (c->modes[i] & 0100) != 0;
	return git_show_file(c->root, c->commit, path, data, err);
}

enum go_status pack_commit(const char *root, const char *rev, char *const *files,
			   struct pack *out, struct strbuf *err)
{
	struct commit_ctx c;
	enum go_status st;
	int i;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	c.root = root;
	c.rev = rev;
	st = git_resolve(root, rev, c.commit, err);
	if (st == GO_OK) {
		const char **v = NULL;
		int n = 0;
		/* validate paths before they reach git's command line */
		st = sorted_files(files, &v, &n, err);
		free(v);
	}
	if (st == GO_OK)
		st = list_commit(&c, files, err);
	if (st == GO_OK)
		st = pack_build(files, read_commit, &c, out, err);
	for (i = 0; i < c.n; i++) {
		free(c.paths[i]);
		free(c.types[i]);
	}
	free(c.paths);
	free(c.types);
	free(c.modes);
	return st;
}

/* ---------------------------------------------------------------- patterns */

static int is_glob(const char *p)
{
	return strpbrk(p, "*?[") != NULL || !strcmp(p, ".");
}

static void strv_push(char ***v, int *n, int *cap, const char *s)
{
	if (*n + 1 >= *cap) {
		*cap = *cap ? *cap * 2 : 64;
		*v = xrealloc(*v, (size_t)*cap * sizeof(**v));
	}
	(*v)[(*n)++] = xstrdup(s);
	(*v)[*n] = NULL;
}

enum go_status pack_resolve_sources(const char *root, const char *commit, char *const *entries,
				    char ***files, struct strbuf *err)
{
	struct strbuf list = STRBUF_INIT;
	char **v = NULL;
	int n = 0, cap = 0, i, j;
	enum go_status st = GO_OK;

	*files = NULL;
	for (i = 0; entries && entries[i]; i++) {
		const char *e = entries[i];
		struct stat sb;
		int dir = 0, matched = 0;
		char *p, *end;

		if (!commit && !is_glob(e)) {
			char *full = xstrfmt("%s/%s", root, e);
			dir = stat(full, &sb) == 0 && S_ISDIR(sb.st_mode);
			free(full);
			if (!dir) {             /* a file named as such ships as it is */
				strv_push(&v, &n, &cap, e);
				continue;
			}
		}
		strbuf_reset(&list);
		st = git_list_files(root, commit, e, &list, err);
		if (st != GO_OK)
			break;
		p = list.buf;
		end = list.buf + list.len;
		while (p < end) {
			size_t len = strlen(p);
			char *full = xstrfmt("%s/%s", root, p);
			/* a tracked file deleted from the work tree does not ship from it */
			int gone = !commit && lstat(full, &sb) < 0 && errno == ENOENT;
			free(full);
			if (!gone) {
				strv_push(&v, &n, &cap, p);
				matched++;
			}
			p += len + 1;
		}
		if (!matched) {
			if (commit && !is_glob(e)) {    /* pack_commit says it is missing */
				strv_push(&v, &n, &cap, e);
				continue;
			}
			st = go_fail(err, GO_ERR_SPEC,
				     "'sources': '%s' selects no file %s (directories and globs select "
				     "the files git tracks; an untracked file ships only when listed by "
				     "its own path)", e,
				     commit ? "in that commit" : "that git tracks in the work tree");
			break;
		}
	}
	strbuf_release(&list);
	if (st == GO_OK && !n)
		st = go_fail(err, GO_ERR_SPEC, "'sources' selects no file");
	if (st == GO_OK) {
		qsort(v, (size_t)n, sizeof(*v), cmp_str);
		for (i = j = 0; i < n; i++) {   /* a file both listed and globbed ships once */
			if (j && !strcmp(v[j - 1], v[i]))
				free(v[i]);
			else
				v[j++] = v[i];
		}
		v[j] = NULL;
		*files = v;
		return GO_OK;
	}
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
	return st;
}

void pack_free_files(char **files)
{
	int i;
	for (i = 0; files && files[i]; i++)
		free(files[i]);
	free(files);
}

/* ---------------------------------------------------------------- results */

void pack_release(struct pack *p)
{
	int i;
	free(p->data);
	for (i = 0; i < p->nfiles; i++) {
		free(p->files[i].path);
		free(p->files[i].text);
		pack_free_files(p->files[i].includes);
	}
	free(p->files);
	memset(p, 0, sizeof(*p));
}

cJSON *pack_files_json(const struct pack *p)
{
	cJSON *arr = cJSON_CreateArray();
	int i;
	if (!arr)
		xmalloc((size_t)-1 / 2); /* dies with an out-of-memory message */
	for (i = 0; i < p->nfiles; i++) {
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(arr, o))
			xmalloc((size_t)-1 / 2);
		json_add_str(o, "path", p->files[i].path);
		json_add_num(o, "size", (double)p->files[i].size);
		json_add_str(o, "sha256", p->files[i].sha256);
	}
	return arr;
}

struct plan_source *pack_plan_sources(const struct pack *p)
{
	struct plan_source *v = xcalloc((size_t)p->nfiles + 1, sizeof(*v));
	int i;
	for (i = 0; i < p->nfiles; i++) {
		v[i].path = p->files[i].path;
		v[i].sha256 = p->files[i].sha256;
		v[i].includes = p->files[i].includes;
		v[i].include_macro = p->files[i].include_macro;
		v[i].text = p->files[i].text;
		v[i].size = p->files[i].size;
	}
	return v;
}
