/* gitinfo.c -- git provenance (commit, dirty diff, branch), through the git
 * command run by proc_run() (core/proc.h, never a shell). */
#include "store/gitinfo.h"
#include "core/hash.h"
#include "core/proc.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

/* ---------------------------------------------------------------- git */

enum go_status git_run(const char *root, const char *const *argv, struct strbuf *out,
			      struct strbuf *errout, int *code, int trim, struct strbuf *err)
{
	enum go_status st = proc_run(root, argv, out, errout, code, err);
	if (st == GO_ERR_NOT_FOUND)
		return go_fail(err, GO_ERR_GIT, "cannot run 'git': not found on PATH; install git");
	if (st != GO_OK)
		return st == GO_ERR_TIMEOUT ? st : GO_ERR_GIT;
	if (trim && out->len && out->buf[out->len - 1] == '\n')
		strbuf_setlen(out, out->len - 1);
	return GO_OK;
}

static void first_line(struct strbuf *dst, const struct strbuf *src)
{
	strbuf_reset(dst);
	strbuf_add(dst, src->buf, strcspn(src->buf, "\n"));
}

static int is_hex40(const char *s)
{
	size_t i;
	for (i = 0; i < 40; i++)
		if (!strchr("0123456789abcdef", s[i]) || !s[i])
			return 0;
	return s[40] == '\0';
}

/* The value of a "# branch.KEY VALUE" header line of `git status
 * --porcelain=v2 --branch`, copied into out; 0 when there is none. */
static int status_header(const char *status, const char *key, struct strbuf *out)
{
	size_t klen = strlen(key);
	const char *p = status;
	while (*p == '#') {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		if (len > 9 + klen && !strncmp(p, "# branch.", 9) && !strncmp(p + 9, key, klen) &&
		    p[9 + klen] == ' ') {
			strbuf_reset(out);
			strbuf_add(out, p + 10 + klen, len - 10 - klen);
			return 1;
		}
		if (!eol)
			break;
		p = eol + 1;
	}
	return 0;
}

/* Names that hold secrets by convention: keys, certificates' bundles,
 * credentials and dotenv files. Matched against the last component. */
static const char *const secret_names[] = {
	".env", ".env.*", "*.env", "*.pem", "*.key", "*.p12", "*.pfx", "id_*", "credentials",
	"credentials.*", ".netrc", ".pgpass", NULL
};

int git_secret_name(const char *path)
{
	const char *base = strrchr(path, '/');
	int i;
	base = base ? base + 1 : path;
	for (i = 0; secret_names[i]; i++)
		if (!fnmatch(secret_names[i], base, 0))
			return 1;
	return 0;
}

/* `git --literal-pathspecs diff ARGS BASE -- PATHS` into out. */
static enum go_status diff_run(const char *root, const char *const *args, const char *base,
			       char *const *paths, struct strbuf *out, struct strbuf *err)
{
	struct strbuf eo = STRBUF_INIT, msg = STRBUF_INIT;
	const char **argv;
	size_t n = 0, i, np = 0;
	int code = 0;
	enum go_status st;

	while (paths[np])
		np++;
	argv = xcalloc(np + 16, sizeof(*argv));
	argv[n++] = "git";
	argv[n++] = "--literal-pathspecs";
	argv[n++] = "diff";
	for (i = 0; args[i]; i++)
		argv[n++] = args[i];
	argv[n++] = base;
	argv[n++] = "--";
	for (i = 0; i < np; i++)
		argv[n++] = paths[i];
	st = git_run(root, argv, out, &eo, &code, 0, err);
	if (st == GO_OK && code != 0) {
		first_line(&msg, &eo);
		st = go_fail(err, GO_ERR_GIT, "'git diff' failed in '%s': %s", root, msg.buf);
	}
	if (st == GO_OK && out->truncated)
		st = go_fail(err, GO_ERR_GIT,
			     "the diff of the work tree in '%s' is over %zu MiB; commit the changes and use --commit",
			     root, PROC_OUTPUT_CAP >> 20);
	free(argv);
	strbuf_release(&eo);
	strbuf_release(&msg);
	return st;
}

/* The diff of paths against base: the changed paths with a secret's name go
 * to gi->withheld, the diff of the others to gi->diff; dirty when either. */
static enum go_status diff_paths(const char *root, const char *base, char *const *paths,
				 struct git_info *gi, struct strbuf *err)
{
	static const char *const names_args[] = { "--name-only", "-z", "--no-renames", "--relative", NULL };
	static const char *const diff_args[] = { "--binary", "--no-color", "--no-ext-diff", NULL };
	struct strbuf diff = STRBUF_INIT, names = STRBUF_INIT, withheld = STRBUF_INIT;
	char **keep, **secret;
	size_t n = 0, nk = 0, ns = 0, i;
	enum go_status st = GO_OK;

	while (paths[n])
		n++;
	keep = xcalloc(n + 1, sizeof(*keep));
	secret = xcalloc(n + 1, sizeof(*secret));
	for (i = 0; i < n; i++) {
		if (git_secret_name(paths[i]))
			secret[ns++] = paths[i];
		else
			keep[nk++] = paths[i];
	}
	if (ns) {
		const char *p;
		st = diff_run(root, names_args, base, secret, &names, err);
		/* --relative: git names them as given (relative to root) */
		for (p = names.buf; st == GO_OK && p < names.buf + names.len; p += strlen(p) + 1) {
			strbuf_addstr(&withheld, p);
			strbuf_addch(&withheld, '\n');
		}
	}
	if (st == GO_OK && nk)
		st = diff_run(root, diff_args, base, keep, &diff, err);
	if (st == GO_OK) {
		gi->dirty = diff.len > 0 || withheld.len > 0;
		if (diff.len) {
			sha256_hex(diff.buf, diff.len, gi->diff_sha256);
			gi->diff = strbuf_detach(&diff, NULL);
		}
		if (withheld.len)
			gi->withheld = strbuf_detach(&withheld, NULL);
	}
	free(keep);
	free(secret);
	strbuf_release(&diff);
	strbuf_release(&names);
	strbuf_release(&withheld);
	return st;
}

/* One `git status --porcelain=v2 --branch` tells the commit (branch.oid,
 * "(initial)" before the first), the branch (branch.head, "(detached)" on a
 * detached HEAD) and whether a tracked file changed (any line after the
 * headers): one git process instead of four on every run. Only when it
 * fails does `git rev-parse --show-toplevel` tell a directory outside git
 * (no provenance, not an error) from a git that failed.
 *
 * With paths (the files a run ships, and its spec), "dirty" and the diff are
 * those of these paths only: a change elsewhere in the tree is no part of
 * the run and is never recorded; a changed path with a secret's name
 * (git_secret_name) is named in gi->withheld, never diffed. */
enum go_status git_info_worktree(const char *root, char *const *paths, struct git_info *gi,
				 struct strbuf *err)
{
	struct strbuf out = STRBUF_INIT, eo = STRBUF_INIT, msg = STRBUF_INIT, v = STRBUF_INIT;
	enum go_status st;
	int code = 0;
	const char *top[] = { "git", "rev-parse", "--show-toplevel", NULL };
	const char *status[] = { "git", "--no-optional-locks", "status", "--porcelain=v2", "--branch",
				 "--untracked-files=no", NULL };
	const char *empty_tree[] = { "git", "hash-object", "-t", "tree", "/dev/null", NULL };
	const char *p;

	memset(gi, 0, sizeof(*gi));
	st = git_run(root, status, &out, &eo, &code, 0, err);
	if (st != GO_OK)
		goto out;
	if (code != 0) {
		struct strbuf o2 = STRBUF_INIT, e2 = STRBUF_INIT;
		int c2 = 0;
		st = git_run(root, top, &o2, &e2, &c2, 1, err);
		strbuf_release(&o2);
		strbuf_release(&e2);
		if (st != GO_OK || c2 != 0) /* not a repository: no provenance, not an error */
			goto out;
		first_line(&msg, &eo);
		st = go_fail(err, GO_ERR_GIT, "'git status' failed in '%s': %s", root, msg.buf);
		goto out;
	}
	gi->is_repo = 1;
	if (status_header(out.buf, "oid", &v) && is_hex40(v.buf))
		memcpy(gi->commit, v.buf, 41);
	if (status_header(out.buf, "head", &v) && v.len && strcmp(v.buf, "(detached)"))
		gi->branch = xstrdup(v.buf);
	/* a change is any line that is not a header */
	for (p = out.buf; *p == '#'; p++) {
		p = strchr(p, '\n');
		if (!p)
			break;
	}
	gi->dirty = p && *p;

	strbuf_reset(&out);
	if (!gi->commit[0]) {
		/* No commits yet: everything tracked is "changed"; the diff is
		 * against the empty tree. */
		gi->dirty = 1;
		st = git_run(root, empty_tree, &out, &eo, &code, 1, err);
		if (st != GO_OK)
			goto out;
		if (code != 0) {
			first_line(&msg, &eo);
			st = go_fail(err, GO_ERR_GIT, "cannot compute git's empty tree in '%s': %s",
				     root, msg.buf);
			goto out;
		}
	} else {
		strbuf_addstr(&out, "HEAD");
	}

	if (paths && gi->dirty) {
		char *base = strbuf_detach(&out, NULL);
		st = diff_paths(root, base, paths, gi, err);
		free(base);
	} else if (gi->dirty) {
		struct strbuf diff = STRBUF_INIT;
		char *base = strbuf_detach(&out, NULL);
		const char *dargv[] = { "git", "diff", "--binary", "--no-color", "--no-ext-diff",
					base, "--", NULL };
		strbuf_reset(&eo);
		st = git_run(root, dargv, &diff, &eo, &code, 0, err);
		free(base);
		if (st == GO_OK && code != 0) {
			first_line(&msg, &eo);
			st = go_fail(err, GO_ERR_GIT, "'git diff' failed in '%s': %s", root, msg.buf);
		}
		if (st == GO_OK && diff.truncated)
			st = go_fail(err, GO_ERR_GIT,
				     "the diff of the work tree in '%s' is over %zu MiB; commit the changes and use --commit",
				     root, PROC_OUTPUT_CAP >> 20);
		if (st != GO_OK) {
			strbuf_release(&diff);
			goto out;
		}
		sha256_hex(diff.buf, diff.len, gi->diff_sha256);
		gi->diff = strbuf_detach(&diff, NULL);
	}
out:
	if (st != GO_OK)
		git_info_release(gi);
	strbuf_release(&out);
	strbuf_release(&eo);
	strbuf_release(&msg);
	strbuf_release(&v);
	return st;
}

enum go_status git_resolve(const char *root, const char *rev, char out[41], struct strbuf *err)
{
	struct strbuf o = STRBUF_INIT, eo = STRBUF_INIT, spec = STRBUF_INIT;
	enum go_status st;
	int code = 0;

	out[0] = '\0';
	if (!*rev || *rev == '-')
		return go_fail(err, GO_ERR_GIT, "unknown revision '%s' in '%s'", rev, root);
	strbuf_addf(&spec, "%s^{commit}", rev);
	{
		const char *argv[] = { "git", "rev-parse", "--verify", "-q", spec.buf, NULL };
		st = git_run(root, argv, &o, &eo, &code, 1, err);
	}
	if (st == GO_OK && (code != 0 || !is_hex40(o.buf)))
		st = go_fail(err, GO_ERR_GIT,
			     "unknown revision '%s' in '%s'; give a commit, branch or tag that exists there",
			     rev, root);
	if (st == GO_OK)
		memcpy(out, o.buf, 41);
	strbuf_release(&o);
	strbuf_release(&eo);
	strbuf_release(&spec);
	return st;
}

enum go_status git_show_file(const char *root, const char *rev, const char *path,
			     struct strbuf *out, struct strbuf *err)
{
	struct strbuf obj = STRBUF_INIT, eo = STRBUF_INIT, data = STRBUF_INIT;
	char commit[41];
	enum go_status st;
	int code = 0;

	st = git_resolve(root, rev, commit, err);
	if (st != GO_OK)
		return st;
	/* "./" makes the path relative to root, like the work-tree packer. */
	strbuf_addf(&obj, "%s:./%s", commit, path);
	{
		const char *argv[] = { "git", "cat-file", "blob", obj.buf, NULL };
		st = git_run(root, argv, &data, &eo, &code, 0, err);
	}
	if (st == GO_OK && code != 0)
		st = go_fail(err, GO_ERR_NOT_FOUND, "'%s' does not exist in commit %.12s ('%s')",
			     path, commit, rev);
	if (st == GO_OK && data.truncated)
		st = go_fail(err, GO_ERR_IO, "'%s' in commit %.12s is over %zu MiB", path, commit,
			     PROC_OUTPUT_CAP >> 20);
	if (st == GO_OK)
		strbuf_add(out, data.buf, data.len);
	strbuf_release(&obj);
	strbuf_release(&eo);
	strbuf_release(&data);
	return st;
}

enum go_status git_list_files(const char *root, const char *commit, const char *pattern,
			      struct strbuf *out, struct strbuf *err)
{
	struct strbuf eo = STRBUF_INIT, spec = STRBUF_INIT, empty = STRBUF_INIT;
	enum go_status st = GO_OK;
	int code = 0;

	strbuf_addf(&spec, ":(glob)%s", pattern);
	if (!commit) {
		const char *argv[] = { "git", "ls-files", "-z", "--cached", "--", spec.buf, NULL };
		st = git_run(root, argv, out, &eo, &code, 0, err);
	} else {
		const char *et[] = { "git", "hash-object", "-t", "tree", "/dev/null", NULL };
		st = git_run(root, et, &empty, &eo, &code, 1, err);
		if (st == GO_OK && code == 0) {
			/* the commit against the empty tree: every file in it, matched
			 * by git's own pathspec code, paths relative to root */
			const char *argv[] = { "git", "diff-tree", "-r", "-z", "--name-only",
					       "--no-commit-id", "--relative", "--no-renames",
					       empty.buf, commit, "--", spec.buf, NULL };
			strbuf_reset(&eo);
			st = git_run(root, argv, out, &eo, &code, 0, err);
		}
	}
	if (st == GO_OK && code != 0)
		st = go_fail(err, GO_ERR_GIT, "cannot list the files of '%s' with git in '%s': %.*s",
			     pattern, root, (int)strcspn(eo.buf, "\n"), eo.buf);
	if (st == GO_OK && out->truncated)
		st = go_fail(err, GO_ERR_IO, "'%s' selects too many files to list", pattern);
	strbuf_release(&eo);
	strbuf_release(&spec);
	strbuf_release(&empty);
	return st;
}

void git_info_release(struct git_info *gi)
{
	free(gi->diff);
	free(gi->withheld);
	free(gi->branch);
	memset(gi, 0, sizeof(*gi));
}
