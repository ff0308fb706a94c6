/* results-git.c -- a run's raw record read back from git history (results-git.h). */
#include "cmd/results-git.h"
#include "cmd/results-prune.h"
#include "core/fsutil.h"
#include "store/gitinfo.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "core/banned.h"

#define RUN_TAR_MAX ((size_t)1 << 31)   /* bytes of one run directory's tar */

/* git argv in dir (store/gitinfo.h's git_run): its stdout in out (the last
 * newline trimmed but from a file's bytes: archive, cat-file); *ok 1 on exit
 * 0 with all of it */
static enum go_status git(const char *dir, const char *const *argv, struct strbuf *out, int *ok,
			  struct strbuf *err)
{
	int rc = -1, bytes = !strcmp(argv[1], "archive") || !strcmp(argv[1], "cat-file");
	enum go_status st;
	out->max = RUN_TAR_MAX;
	st = git_run(dir, argv, out, NULL, &rc, !bytes, err);
	*ok = st == GO_OK && rc == 0 && !out->truncated;
	return st;
}

/* The work tree's top and the reports directory's path in it ("reports/"). */
static enum go_status reports_in_repo(const char *reports, char **top, char **prefix,
				      struct strbuf *err)
{
	const char *argv[] = {"git", "rev-parse", "--show-toplevel", "--show-prefix", NULL};
	struct strbuf out = STRBUF_INIT;
	enum go_status st = GO_ERR_NOT_FOUND;
	char *nl;
	int ok = 0;

	*top = *prefix = NULL;
	if (fs_is_dir(reports) && git(reports, argv, &out, &ok, err) == GO_OK && ok &&
	    (nl = strchr(out.buf, '\n'))) {
		*nl = '\0';
		*top = xstrdup(out.buf);
		*prefix = xstrdup(nl + 1);
		st = GO_OK;
	}
	strbuf_release(&out);
	if (st != GO_OK)
		strbuf_reset(err), strbuf_addf(err, "'%s' is in no git work tree with commits", reports);
	return st;
}

/* 1 when list (", "-separated "SLUG/RUN-ID") names slug s[0..n) */
static int listed(const char *list, const char *s, size_t n)
{
	const char *p = list;
	while (*p) {
		size_t m = strcspn(p, "/");
		if (m == n && !strncmp(p, s, n))
			return 1;
		p = strstr(p, ", ");
		if (!p)
			break;
		p += 2;
	}
	return 0;
}

enum go_status results_git_find(const char *reports, const char *run_id, char **slug,
				struct strbuf *err)
{
	char *top, *prefix, *spec, *p, *line;
	struct strbuf out = STRBUF_INIT, all = STRBUF_INIT;
	enum go_status st;
	int ok = 0, k = 0;

	*slug = NULL;
	if ((st = reports_in_repo(reports, &top, &prefix, err)) != GO_OK)
		return st;
	spec = xstrfmt(":(glob)%s*/%s/run.json", prefix, run_id);
	{
		const char *argv[] = {"git", "log", "--format=", "--name-only", "HEAD", "--", spec, NULL};
		st = git(top, argv, &out, &ok, err);
	}
	for (line = out.buf; st == GO_OK && ok && line && *line; line = p ? p + 1 : NULL) {
		char *s;
		size_t n;
		if ((p = strchr(line, '\n')))
			*p = '\0';
		/* PREFIX SLUG/RUN-ID/run.json: each experiment once */
		s = line + strlen(prefix);
		n = strcspn(s, "/");
		if (strncmp(line, prefix, strlen(prefix)) || !n || listed(all.buf, s, n))
			continue;
		strbuf_addf(&all, "%s%.*s/%s", k ? ", " : "", (int)n, s, run_id);
		if (!k++)
			*slug = xstrfmt("%.*s", (int)n, s);
	}
	if (st == GO_OK && k == 0)
		st = go_fail(err, GO_ERR_NOT_FOUND, "no commit of the repository at '%s' holds "
			     "%s*/%s/run.json", top, prefix, run_id);
	else if (st == GO_OK && k > 1)
		st = go_fail(err, GO_ERR_USAGE, "run id %s is in the repository's history under %d "
			     "experiments (%s): name one as EXPERIMENT/RUN-ID", run_id, k, all.buf);
	if (st != GO_OK) {
		free(*slug);
		*slug = NULL;
	}
	strbuf_release(&out);
	strbuf_release(&all);
	free(spec);
	free(top);
	free(prefix);
	return st;
}

/* The last commit of top's HEAD whose tree has path (the one that removed
 * it: its parent), into hex. GO_ERR_NOT_FOUND when none has. */
static enum go_status commit_holding(const char *top, const char *path, char hex[41],
				     struct strbuf *err)
{
	const char *argv[] = {"git", "rev-list", "-1", "HEAD", "--", path, NULL};
	struct strbuf out = STRBUF_INIT;
	enum go_status st;
	int ok = 0, round;

	hex[0] = '\0';
	st = git(top, argv, &out, &ok, err);
	for (round = 0; st == GO_OK && ok && out.len == 40 && round < 2; round++) {
		char *obj = xstrfmt("%s:%s", out.buf, path);
		const char *cat[] = {"git", "cat-file", "-e", obj, NULL};
		struct strbuf none = STRBUF_INIT;
		int has = 0;
		memcpy(hex, out.buf, 41);
		st = git(top, cat, &none, &has, err);
		strbuf_release(&none);
		free(obj);
		if (has)
			break;
		/* that commit removed it: its first parent has it */
		strbuf_addstr(&out, "^");
		{
			const char *par[] = {"git", "rev-parse", "--verify", "-q", out.buf, NULL};
			struct strbuf p = STRBUF_INIT;
			st = git(top, par, &p, &ok, err);
			strbuf_reset(&out);
			strbuf_add(&out, p.buf, p.len);
			strbuf_release(&p);
		}
		hex[0] = '\0';
	}
	strbuf_release(&out);
	if (st == GO_OK && !hex[0])
		st = go_fail(err, GO_ERR_NOT_FOUND, "no commit of the repository at '%s' holds %s",
			     top, path);
	return st;
}

/* One file of the tar (rd at its data) written to dir/rel unless there. */
static enum go_status restore_file(struct archive *rd, struct archive_entry *e, const char *dir,
				   const char *rel, struct results_counts *n, struct strbuf *err)
{
	char *full = xstrfmt("%s/%s", dir, rel), *parent = fs_dirname(full);
	struct strbuf data = STRBUF_INIT;
	enum go_status st = GO_OK;
	struct stat sb;
	const void *block;
	size_t len;
	la_int64_t at;
	int r;

	n->files++;
	if (lstat(full, &sb) == 0)
		goto out;   /* here already: what the repository has now */
	while ((r = archive_read_data_block(rd, &block, &len, &at)) == ARCHIVE_OK)
		strbuf_add(&data, block, len);
	if (r != ARCHIVE_EOF || (la_int64_t)data.len != archive_entry_size(e))
		st = go_fail(err, GO_ERR_IO, "git archive's copy of '%s' is cut short", rel);
	if (st == GO_OK)
		st = fs_mkdir_p(parent, 0755, err);
	if (st == GO_OK)
		st = fs_write_atomic(full, data.buf ? data.buf : "", data.len, err);
	/* git keeps the executable bit alone */
	if (st == GO_OK && chmod(full, (archive_entry_perm(e) & 0100) ? 0755 : 0644) != 0)
		st = go_fail(err, GO_ERR_IO, "cannot set the mode of '%s': %s", full, strerror(errno));
	n->files_written += st == GO_OK;
out:
	strbuf_release(&data);
	free(parent);
	free(full);
	return st;
}

/* The files of the tar in tar[0..len) under run (its "PATH/") into dir. */
static enum go_status restore_tar(const struct strbuf *tar, const char *run, const char *dir,
				  struct results_counts *n, struct strbuf *err)
{
	struct archive *rd = archive_read_new();
	struct archive_entry *e;
	enum go_status st = GO_OK;
	size_t plen = strlen(run);
	int r;

	archive_read_support_format_tar(rd);
	if (archive_read_open_memory(rd, tar->buf, tar->len) != ARCHIVE_OK)
		st = go_fail(err, GO_ERR_IO, "git archive of %s: %s", run, archive_error_string(rd));
	while (st == GO_OK && (r = archive_read_next_header(rd, &e)) == ARCHIVE_OK) {
		const char *p = archive_entry_pathname(e);
		if (archive_entry_filetype(e) != AE_IFREG)
			continue;
		if (strncmp(p, run, plen) || p[plen] != '/' || !p[plen + 1] || strstr(p, "/../"))
			st = go_fail(err, GO_ERR_IO, "git archive of %s gave '%s', outside it", run, p);
		else if (!results_reader_file(p + plen + 1))
			st = restore_file(rd, e, dir, p + plen + 1, n, err);
		/* a reader's file (summary, samples, report, charts) is derived: the
		 * tree has it as it is now, or not at all (an empty one git dropped) */
	}
	if (st == GO_OK && r != ARCHIVE_EOF)
		st = go_fail(err, GO_ERR_IO, "git archive of %s: %s", run, archive_error_string(rd));
	archive_read_free(rd);
	return st;
}

enum go_status results_git_pull(const char *reports, const char *slug, const char *run_id,
				const char *dir, char **commit, struct results_counts *n,
				struct strbuf *err)
{
	char *top, *prefix, *run = NULL, *rec = NULL, hex[41];
	struct strbuf tar = STRBUF_INIT;
	enum go_status st;
	int ok = 0;

	*commit = NULL;
	if ((st = reports_in_repo(reports, &top, &prefix, err)) != GO_OK)
		return st;
	run = xstrfmt("%s%s/%s", prefix, slug, run_id);
	rec = xstrfmt("%s/run.json", run);
	st = commit_holding(top, rec, hex, err);
	if (st == GO_OK) {
		const char *argv[] = {"git", "archive", "--format=tar", hex, "--", run, NULL};
		st = git(top, argv, &tar, &ok, err);
		if (st == GO_OK && !ok)
			st = go_fail(err, GO_ERR_IO, "'git archive %s -- %s' failed in '%s'", hex, run, top);
	}
	if (st == GO_OK)
		st = restore_tar(&tar, run, dir, n, err);
	if (st == GO_OK)
		*commit = xstrdup(hex);
	strbuf_release(&tar);
	free(rec);
	free(run);
	free(top);
	free(prefix);
	return st;
}

enum go_status results_git_show(const char *reports, const char *slug, const char *run_id,
				const char *rel, struct strbuf *out, char **commit,
				struct strbuf *err)
{
	char *top, *prefix, *path, hex[41];
	enum go_status st;

	*commit = NULL;
	if ((st = reports_in_repo(reports, &top, &prefix, err)) != GO_OK)
		return st;
	path = xstrfmt("%s%s/%s/%s", prefix, slug, run_id, rel);
	st = commit_holding(top, path, hex, err);
	if (st == GO_OK)
		st = git_show_file(top, hex, path, out, err);
	if (st == GO_OK)
		*commit = xstrdup(hex);
	free(path);
	free(top);
	free(prefix);
	return st;
}
