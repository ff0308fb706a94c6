/* run-inputs.c -- `gpuorch run`'s first stage: everything local, before any
 * connection (run-state.h). The notify URL, the commit, the spec, the hosts
 * file and their instances, the sources packed and the work tree's
 * provenance are checked here, so bad input exits 2 with nothing sent. */
#include "run/run-state.h"
#include "cloud/lifecycle.h"
#include "report/notify.h"
#include "remote/gpuslots.h"
#include "spec/spec.h"
#include "transport/hosts.h"

#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

static const char *strip_dot_slash(const char *p)
{
	while (!strncmp(p, "./", 2))
		p += 2;
	return p;
}

/* The spec as it is in the work tree, or as it was at --commit. */
static enum go_status load_spec(const struct run_opts *o, const char *commit,
				struct spec **out, struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT;
	enum go_status st;
	char *label;
	if (!commit)
		return spec_load(o->spec_path, o->root, 1, out, err);
	st = git_show_file(o->root, commit, strip_dot_slash(o->spec_path), &text, err);
	if (st != GO_OK) {
		strbuf_release(&text);
		return st == GO_ERR_NOT_FOUND ? GO_ERR_SPEC : st;
	}
	label = xstrfmt("%s@%.12s", o->spec_path, commit);
	st = spec_parse(label, text.buf, text.len, o->root, 0, out, err);
	free(label);
	strbuf_release(&text);
	return st;
}

/* The work tree's provenance; its diff covers exactly what the run uses:
 * the files it ships and its spec (store/gitinfo.h), never a file elsewhere
 * in the tree nor one with a secret's name. */
static enum go_status worktree_info(const struct run_opts *o, char *const *files,
				    struct git_info *gi, struct strbuf *err)
{
	const char *sp = strip_dot_slash(o->spec_path);
	size_t n = 0;
	char **paths;
	enum go_status st;

	while (files[n])
		n++;
	paths = xcalloc(n + 2, sizeof(*paths));
	memcpy(paths, files, n * sizeof(*paths));
	/* the spec, when it is a path inside root (the record holds it whole too) */
	if (sp[0] != '/' && strncmp(sp, "../", 3))
		paths[n] = (char *)sp;
	st = git_info_worktree(o->root, paths, gi, err);
	free(paths);
	return st;
}

/* --notify URL, else $GPUORCH_NOTIFY_URL (empty: off); checked unless a dry run. */
static int check_notify(struct run_state *r)
{
	const struct run_opts *o = r->o;
	enum go_status st;

	r->notify_url = o->notify_url ? o->notify_url : getenv("GPUORCH_NOTIFY_URL");
	if (r->notify_url && !*r->notify_url && !o->notify_url)
		r->notify_url = NULL;   /* GPUORCH_NOTIFY_URL= turns it off */
	if (r->notify_url && !o->dry_run) {
		st = notify_check_url(r->notify_url, &r->err);
		if (st != GO_OK)
			return run_stop(r, st);
	}
	return 0;
}

/* The commit, the spec, the hosts (--host, --queue-timeout) and their instances. */
static int load_spec_and_hosts(struct run_state *r)
{
	const struct run_opts *o = r->o;
	enum go_status st;
	int i;

	if (o->commit) {
		st = git_resolve(o->root, o->commit, r->commit_buf, &r->err);
		if (st != GO_OK)
			return run_stop(r, GO_ERR_USAGE);
		r->commit = r->commit_buf;
	}
	st = load_spec(o, r->commit, &r->s, &r->err);
	if (st != GO_OK)
		return run_stop(r, st);
	st = hosts_load(o->hosts_path, &r->hs, &r->err);
	if (st == GO_OK && o->nhost_names)
		st = hosts_select(r->hs, o->host_names, o->nhost_names, &r->err);
	if (st == GO_OK && o->queue_timeout_s >= 0)
		for (i = 0; i < r->hs->n; i++)
			if (r->hs->v[i].slurm)
				r->hs->v[i].slurm->queue_timeout_s = o->queue_timeout_s;
	if (st == GO_OK)
		st = gpuslots_check_spec(r->s, r->hs, &r->err);
	if (st != GO_OK)
		return run_stop(r, st);
	st = life_load(r->hs, &r->lives, &r->err);
	if (st != GO_OK)
		return run_stop(r, st);
	return 0;
}

/* The sources the spec selects, packed (work tree or commit), and git's provenance. */
static int pack_sources(struct run_state *r)
{
	const struct run_opts *o = r->o;
	enum go_status st;

	st = pack_resolve_sources(o->root, r->commit, r->s->sources, &r->files, &r->err);
	if (st == GO_OK)
		st = spec_check_selected(r->s, r->files, &r->err);
	if (st == GO_OK)
		st = r->commit ? pack_commit(o->root, r->commit, r->files, &r->pk, &r->err)
			       : pack_worktree(o->root, r->files, &r->pk, &r->err);
	if (st != GO_OK)
		return run_stop(r, st == GO_ERR_NOT_FOUND ? GO_ERR_SPEC : st);
	st = worktree_info(o, r->files, &r->gi, &r->err);
	if (st != GO_OK)
		return run_stop(r, st);
	return 0;
}

int run_resolve_inputs(struct run_state *r)
{
	r->spec_rel = strip_dot_slash(r->o->spec_path);
	if (check_notify(r) || load_spec_and_hosts(r) || pack_sources(r))
		return -1;
	return 0;
}

int run_check_credentials(struct run_state *r)
{
	enum go_status st;
	int i;

	for (i = 0; i < r->hs->n; i++) {
		st = life_check(&r->lives[i], &r->err);
		if (st != GO_OK)
			return run_stop(r, st);
	}
	return 0;
}
