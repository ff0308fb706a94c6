/* run-open.c -- `gpuorch run`'s second stage (run-state.h): the run
 * directory, new or the one --resume takes up, under this process's
 * controller lock, and the run's "running" record (docs/run-record.md):
 * its identity, experiment, provenance, one pending entry per host. */
#include "run/run-state.h"
#include "core/version.h"
#include "run/resume.h"
#include "core/jsonutil.h"
#include "core/timeutil.h"
#include "spec/spec.h"
#include "store/runread.h"
#include "store/store.h"
#include "transport/hosts.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pwd.h>
#include "core/banned.h"
#include "core/vocab.h"

/* The record's "provenance": gpuorch, git (or the commit), the sources, the controller. */
static cJSON *provenance_json(const struct git_info *gi, const char *commit,
			      const struct pack *pk, int wrote_diff)
{
	cJSON *p = cJSON_CreateObject(), *g, *c;
	char host[256] = "";
	struct passwd *pw = getpwuid(getuid());
	json_add_str(p, "gpuorch_version", gpuorch_version);
	json_add_str(p, "source", commit ? "commit" : "worktree");
	g = json_add_obj(p, "git");
	if (commit) {
		json_add_str(g, "commit", commit);
		json_add_bool(g, "dirty", 0);
		json_add_str(g, "diff_sha256", NULL);
		json_add_str(g, "diff_file", NULL);
	} else if (gi->is_repo) {
		json_add_str(g, "commit", gi->commit[0] ? gi->commit : NULL);
		json_add_bool(g, "dirty", gi->dirty);
		json_add_str(g, "diff_sha256", gi->dirty && wrote_diff ? gi->diff_sha256 : NULL);
		json_add_str(g, "diff_file", wrote_diff ? "source.diff" : NULL);
		if (gi->withheld) {
			/* changed files with a secret's name: shipped, never recorded */
			cJSON *w = json_add_arr(g, "diff_withheld");
			const char *q = gi->withheld, *nl;
			for (; *q; q = nl + 1) {
				char *one;
				nl = strchr(q, '\n');
				if (!nl)
					break;
				one = xstrfmt("%.*s", (int)(nl - q), q);
				cJSON_AddItemToArray(w, cJSON_CreateString(one));
				free(one);
			}
		}
		if (!gi->commit[0])
			json_add_str(g, "note", "the repository has no commit yet: the sources are "
						"identified by their content id only");
	} else {
		json_add_str(g, "commit", NULL);
		json_add_bool(g, "dirty", 1);
		json_add_str(g, "diff_sha256", NULL);
		json_add_str(g, "diff_file", NULL);
		json_add_str(g, "note", "not a git repository: the sources are identified by "
					"their content id only");
	}
	json_add_str(g, "branch", gi->branch);
	json_add_str(p, "content_id", pk->content_id);
	json_add_num(p, "archive_bytes", (double)pk->len);
	cJSON_AddItemToObject(p, "files", pack_files_json(pk));
	c = json_add_obj(p, "controller");
	gethostname(host, sizeof(host) - 1);
	json_add_str(c, "hostname", host);
	json_add_str(c, "user", pw ? pw->pw_name : NULL);
	return p;
}

/* One host's entry in "hosts", pending until its run begins. */
static cJSON *host_json(const struct host *h)
{
	cJSON *j = cJSON_CreateObject();
	json_add_str(j, "name", h->name);
	json_add_str(j, "address", h->address);
	json_add_num(j, "port", h->port);
	json_add_str(j, "user", h->user);
	json_add_str(j, "status", host_status_name(HOST_PENDING));
	cJSON_AddNullToObject(j, "started_at");
	cJSON_AddNullToObject(j, "ended_at");
	cJSON_AddNullToObject(j, "error");
	cJSON_AddNullToObject(j, "info");
	cJSON_AddItemToObject(j, "archs", cJSON_CreateArray());
	cJSON_AddItemToObject(j, "phases", cJSON_CreateArray());
	cJSON_AddNullToObject(j, "ship");
	cJSON_AddNullToObject(j, "runner");
	cJSON_AddItemToObject(j, "builds", cJSON_CreateArray());
	cJSON_AddItemToObject(j, "steps", cJSON_CreateArray());
	return j;
}

static cJSON *copy_or_empty(const cJSON *j)
{
	return j ? cJSON_Duplicate(j, 1) : cJSON_CreateArray();
}

/* --resume: the run's directory, locked, and its record read under the lock. */
static int open_resumed(struct run_state *r)
{
	struct store_entry e;
	enum go_status st;

	st = store_find(r->o->resume_id, &e, &r->err);
	if (st == GO_OK) {
		snprintf(r->run_id, sizeof(r->run_id), "%s", e.run_id);
		r->run_dir = xstrdup(e.dir);
		store_entry_release(&e);
		st = store_lock_run(r->run_dir, &r->lock_fd, &r->err);
	}
	if (st == GO_OK)   /* read again under the lock: it may have ended meanwhile */
		st = store_load_record(r->run_dir, &r->old, &r->err);
	if (st == GO_OK)
		st = resume_check(r->old, r->run_id, r->s, r->hs, r->pk.content_id, &r->err);
	if (st != GO_OK)
		return run_stop(r, st == GO_ERR_NOT_FOUND ? GO_ERR_USAGE : st);
	return 0;
}

/* A new run: its id, its directory, locked. */
static int open_new(struct run_state *r)
{
	enum go_status st;

	store_new_run_id(r->run_id);
	st = store_create_run_dir(r->s->slug, r->run_id, &r->run_dir, &r->err);
	if (st == GO_OK)
		st = store_lock_run(r->run_dir, &r->lock_fd, &r->err);
	if (st != GO_OK)
		return run_stop(r, st);
	return 0;
}

/* The record's head: identity, status "running", times, the experiment. */
static cJSON *record_head(const struct run_state *r)
{
	const struct spec *s = r->s;
	const cJSON *old = r->old;
	cJSON *root = cJSON_CreateObject(), *exp;
	char ts[32];

	json_add_str(root, "schema", "gpuorch.run/1");
	json_add_str(root, "run_id", r->run_id);
	json_add_str(root, "status", run_status_name(RUN_RUNNING));
	cJSON_AddNullToObject(root, "outcome");
	cJSON_AddNullToObject(root, "exit_code");
	json_add_str(root, "command_line", r->o->command_line);
	json_add_bool(root, "dry_run", 0);
	time_iso8601(r->started, ts);
	json_add_str(root, "started_at", old && rr_str(old, "started_at") ? rr_str(old, "started_at") : ts);
	cJSON_AddNullToObject(root, "ended_at");
	cJSON_AddNullToObject(root, "duration_s");
	if (old) {
		/* every controller that took this run up, oldest first */
		cJSON *rs = rr_arr(old, "resumed_at") ? cJSON_Duplicate(rr_arr(old, "resumed_at"), 1)
						       : cJSON_CreateArray();
		time_iso8601(time(NULL), ts);
		cJSON_AddItemToArray(rs, cJSON_CreateString(ts));
		cJSON_AddItemToObject(root, "resumed_at", rs);
	}
	exp = json_add_obj(root, "experiment");
	json_add_str(exp, "name", s->name);
	json_add_str(exp, "slug", s->slug);
	json_add_str(exp, "phase", s->phase);
	json_add_str(exp, "description", s->description);
	json_add_str(exp, "spec_path", r->spec_rel);
	json_add_str(exp, "spec_sha256", s->hash);
	cJSON_AddItemToObject(exp, "spec", cJSON_Duplicate(s->json, 1));
	return root;
}

/* The record begun: head, source.diff, provenance, hosts pending, the
 * spec's baselines, references and expected figures; saved. */
static int begin_record(struct run_state *r)
{
	const struct git_info *gi = &r->gi;
	enum go_status st = GO_OK;
	int i;

	r->root = record_head(r);
	record_init(&r->rec, r->run_dir, r->root);
	r->have_rec = 1;
	if (!r->commit && gi->is_repo && gi->commit[0] && gi->dirty && gi->diff) {
		/* Without the diff a dirty run could not be reproduced. */
		st = record_write_file(&r->rec, "source.diff", gi->diff, strlen(gi->diff), &r->err);
		if (st != GO_OK)
			fprintf(stderr, "warning: %s\n", r->err.buf);
	}
	cJSON_AddItemToObject(r->root, "provenance",
			      provenance_json(gi, r->commit, &r->pk,
					      !r->commit && gi->commit[0] && gi->dirty && gi->diff &&
						      st == GO_OK));
	r->hosts_arr = json_add_arr(r->root, "hosts");
	for (i = 0; i < r->hs->n; i++)
		cJSON_AddItemToArray(r->hosts_arr, host_json(&r->hs->v[i]));
	cJSON_AddItemToObject(r->root, "baselines", copy_or_empty(r->s->baselines));
	cJSON_AddItemToObject(r->root, "references", copy_or_empty(r->s->references));
	cJSON_AddItemToObject(r->root, "expected", copy_or_empty(r->s->expected));
	st = record_save(&r->rec, &r->err);
	if (st != GO_OK)
		return run_stop(r, st);
	return 0;
}

int run_open(struct run_state *r)
{
	if (r->o->resume_id ? open_resumed(r) : open_new(r))
		return -1;
	return begin_record(r);
}
