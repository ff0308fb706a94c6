/* rerun.c -- rerun an experiment at a commit (optionally with a recorded diff); find recorded runs.
 *
 * The scratch worktree for a dirty run lives in a fresh mkdtemp directory
 * and is removed with `git worktree remove --force` (then `git worktree
 * prune`) whatever the run's outcome. Only the repository's worktree list
 * changes while it exists; the user's work tree is never touched. */
#include "run/rerun.h"
#include "store/runkeys.h"
#include "core/proc.h"
#include "store/gitinfo.h"
#include "core/jsonutil.h"
#include "run/run-engine.h"
#include "core/strbuf.h"
#include "core/vocab.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/banned.h"

static const char *strip_dot_slash(const char *p)
{
	while (!strncmp(p, "./", 2))
		p += 2;
	return p;
}

static int do_run(const struct rerun_opts *o, const char *root, const char *spec_path,
		  const char *commit, char **run_dir_out)
{
	struct run_opts ro;
	char *names[2] = { (char *)o->host, NULL };
	memset(&ro, 0, sizeof(ro));
	ro.spec_path = spec_path;
	ro.hosts_path = o->hosts_path;
	ro.host_names = names;
	ro.nhost_names = o->host ? 1 : 0;
	ro.commit = commit;
	ro.accept_new_hostkey = o->step.accept_new_hostkey;
	ro.plain = o->step.plain;
	ro.reconnect_timeout_s = o->step.reconnect_timeout_s;
	ro.lock_wait_s = o->step.lock_wait_s;
	ro.queue_timeout_s = o->step.queue_timeout_s;
	ro.root = root;
	ro.command_line = o->command_line;
	ro.run_dir_out = run_dir_out;
	fflush(stdout);
	return runner_run(&ro);
}

int rerun_at_commit(const struct rerun_opts *o, const char *spec_path, const char *commit,
		    char **run_dir_out)
{
	return do_run(o, o->root ? o->root : ".", strip_dot_slash(spec_path), commit, run_dir_out);
}

int rerun_with_diff(const struct rerun_opts *o, const char *spec_path, const char *commit,
		    const char *diff_path, char **run_dir_out, struct strbuf *msg)
{
	const char *root = o->root ? o->root : ".";
	const char *tmpdir = getenv("TMPDIR");
	char *tmpl, *wt = NULL, *spec = NULL, abs_diff[PATH_MAX];
	struct strbuf err = STRBUF_INIT;
	int code = 0, rc = GO_EXIT_LOCAL;

	*run_dir_out = NULL;
	if (!realpath(diff_path, abs_diff)) {
		strbuf_addf(msg, "cannot read the recorded diff '%s'", diff_path);
		return GO_EXIT_LOCAL;
	}
	tmpl = xstrfmt("%s/gpuorch-reproduce.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(tmpl)) {
		strbuf_addf(msg, "cannot create a scratch directory under '%s'",
			    tmpdir && *tmpdir ? tmpdir : "/tmp");
		free(tmpl);
		return GO_EXIT_LOCAL;
	}
	wt = xstrfmt("%s/src", tmpl);
	{
		const char *argv[] = { "git", "worktree", "add", "--detach", "--quiet", wt, commit,
				       NULL };
		if (proc_run(root, argv, NULL, NULL, NULL, &err) != GO_OK) {
			strbuf_addf(msg, "cannot make a scratch worktree at commit %.12s: %s", commit,
				    err.buf);
			goto out;
		}
	}
	{
		const char *argv[] = { "git", "apply", "--whitespace=nowarn", abs_diff, NULL };
		struct strbuf eo = STRBUF_INIT;
		if (proc_run(wt, argv, NULL, &eo, &code, &err) != GO_OK || code) {
			strbuf_trim(&eo);
			strbuf_addf(msg, "the recorded diff does not apply at commit %.12s: %s", commit,
				    eo.len ? eo.buf : err.buf);
			strbuf_release(&eo);
			goto remove;
		}
		strbuf_release(&eo);
	}
	spec = xstrfmt("%s/%s", wt, strip_dot_slash(spec_path));
	rc = do_run(o, wt, spec, NULL, run_dir_out);
remove:
	{
		const char *argv[] = { "git", "worktree", "remove", "--force", wt, NULL };
		const char *prune[] = { "git", "worktree", "prune", NULL };
		strbuf_reset(&err);
		if (proc_run(root, argv, NULL, NULL, &code, &err) != GO_OK || code)
			fprintf(stderr, "warning: could not remove the scratch worktree '%s'\n", wt);
		proc_run(root, prune, NULL, NULL, &code, &err);
	}
out:
	rmdir(tmpl);
	free(spec);
	free(wt);
	free(tmpl);
	strbuf_release(&err);
	return rc;
}

enum go_status rerun_spec_hash_at(const char *root, const char *commit, const char *path,
				  char out[SHA256_HEX_LEN + 1], struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT;
	enum go_status st = git_show_file(root ? root : ".", commit, strip_dot_slash(path), &text,
					  err);
	if (st == GO_OK)
		sha256_hex(text.buf, text.len, out);
	strbuf_release(&text);
	return st;
}

char *rerun_spec_path_of(const cJSON *run)
{
	const char *p = json_str(json_path(run, "experiment"), "spec_path");
	const char *src = json_str(json_path(run, RK_PROVENANCE), "source");
	const char *at;
	size_t i, n;
	if (!p)
		return NULL;
	at = strrchr(p, '@');
	if (src && !strcmp(src, "commit") && at && at > p) {
		n = strlen(at + 1);
		for (i = 0; i < n && strchr("0123456789abcdef", at[1 + i]); i++)
			;
		if (n >= 7 && i == n)
			return xstrfmt("%.*s", (int)(at - p), p);
	}
	return xstrdup(p);
}

int rerun_is_complete(const cJSON *run)
{
	return run_status_is(json_str(run, "status"), RUN_COMPLETE) &&
	       !cJSON_IsTrue(cJSON_GetObjectItem(run, "dry_run"));
}

int rerun_is_run_of(const cJSON *run, const char *experiment)
{
	const cJSON *e = cJSON_GetObjectItem(run, "experiment");
	const char *name = json_str(e, "name"), *slug = json_str(e, "slug");
	if (!rerun_is_complete(run))
		return 0;
	return (name && !strcmp(name, experiment)) || (slug && !strcmp(slug, experiment));
}

int rerun_find_recorded(const struct store_entry *v, int n, const char *experiment,
			const char *commit, const char *spec_hash)
{
	int i;
	for (i = 0; i < n; i++) {
		const cJSON *git = json_path(v[i].run, "provenance.git");
		const char *c = json_str(git, "commit");
		const char *h = json_str(json_path(v[i].run, "experiment"), "spec_sha256");
		if (!rerun_is_run_of(v[i].run, experiment) || !c || strcmp(c, commit) ||
		    cJSON_IsTrue(cJSON_GetObjectItem(git, "dirty")))
			continue;
		if (spec_hash && (!h || strcmp(h, spec_hash)))
			continue;
		return i;
	}
	return -1;
}

enum go_status rerun_git_lines(const char *root, const char *const *argv, char ***lines, int *n,
			       struct strbuf *err)
{
	struct strbuf out = STRBUF_INIT;
	enum go_status st = proc_run(root ? root : ".", argv, &out, NULL, NULL, err);
	char *p, *nl;
	int cap = 0;
	*lines = NULL;
	*n = 0;
	if (st != GO_OK) {
		strbuf_release(&out);
		return st == GO_ERR_NOT_FOUND ? go_fail(err, GO_ERR_GIT, "git: not found") : GO_ERR_GIT;
	}
	for (p = out.buf; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		if (nl > p) {
			if (*n == cap) {
				cap = cap ? 2 * cap : 64;
				*lines = xrealloc(*lines, (size_t)cap * sizeof(char *));
			}
			(*lines)[(*n)++] = xstrfmt("%.*s", (int)(nl - p), p);
		}
		if (!*nl)
			break;
	}
	strbuf_release(&out);
	return GO_OK;
}

void rerun_free_lines(char **lines, int n)
{
	int i;
	for (i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}
