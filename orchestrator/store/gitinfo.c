/* gitinfo.c -- git provenance (commit, dirty diff, branch), through the git
 * command run by proc_run() (core/proc.h, never a shell). */
#include "store/gitinfo.h"
#include "core/hash.h"
#include "core/proc.h"

#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

/* ---------------------------------------------------------------- git */

/* Run git with args in root; stdout into out (trimmed of one trailing
 * newline when trim); *code gets the exit status. */
static enum go_status git_run(const char *root, const char *const *argv, struct strbuf *out,
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

enum go_status git_info_worktree(const char *root, struct git_info *gi, struct strbuf *err)
{
	struct strbuf out = STRBUF_INIT, eo = STRBUF_INIT, msg = STRBUF_INIT;
	enum go_status st;
	int code = 0;
	const char *top[] = { "git", "rev-parse", "--show-toplevel", NULL };
	const char *head[] = { "git", "rev-parse", "--verify", "-q", "HEAD^{commit}", NULL };
	const char *status[] = { "git", "status", "--porcelain", "--untracked-files=no", NULL };
	const char *branch[] = { "git", "symbolic-ref", "--short", "-q", "HEAD", NULL };
	const char *empty_tree[] = { "git", "hash-object", "-t", "tree", "/dev/null", NULL };

	memset(gi, 0, sizeof(*gi));
	st = git_run(root, top, &out, &eo, &code, 1, err);
	if (st != GO_OK)
		goto out;
	if (code != 0) /* not a repository: no provenance, not an error */
		goto out;
	gi->is_repo = 1;

	strbuf_reset(&out);
	st = git_run(root, head, &out, &eo, &code, 1, err);
	if (st != GO_OK)
		goto out;
	if (code == 0 && is_hex40(out.buf))
		memcpy(gi->commit, out.buf, 41);

	strbuf_reset(&out);
	strbuf_reset(&eo);
	st = git_run(root, branch, &out, &eo, &code, 1, err);
	if (st != GO_OK)
		goto out;
	if (code == 0 && out.len)
		gi->branch = xstrdup(out.buf);

	if (!gi->commit[0]) {
		/* No commits yet: everything tracked is "changed"; the diff is
		 * against the empty tree. */
		gi->dirty = 1;
		strbuf_reset(&out);
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
		strbuf_reset(&out);
		strbuf_reset(&eo);
		st = git_run(root, status, &out, &eo, &code, 0, err);
		if (st != GO_OK)
			goto out;
		if (code != 0) {
			first_line(&msg, &eo);
			st = go_fail(err, GO_ERR_GIT, "'git status' failed in '%s': %s", root, msg.buf);
			goto out;
		}
		gi->dirty = out.len > 0;
		strbuf_reset(&out);
		strbuf_addstr(&out, "HEAD");
	}

	if (gi->dirty) {
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
	free(gi->branch);
	memset(gi, 0, sizeof(*gi));
}
