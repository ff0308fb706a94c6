/* run-open.c -- `gpuorch run`'s second stage (run-state.h): the run
 * directory, new or the one --resume takes up, under this process's
 * controller lock, and the run's "running" record (docs/run-record.md):
 * its identity, experiment, provenance, one pending entry per host, written
 * by store/runwrite.h. */
#include "run/run-state.h"
#include "run/resume.h"
#include "spec/spec.h"
#include "store/runkeys.h"
#include "store/runwrite.h"
#include "store/store.h"
#include "transport/hosts.h"

#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

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
static void open_record(struct run_state *r)
{
	const struct spec *s = r->s;
	struct runw_head h = {
		.run_id = r->run_id, .command_line = r->o->command_line, .started = r->started,
		.old = r->old, .name = s->name, .slug = s->slug, .phase = s->phase,
		.description = s->description, .spec_path = r->spec_rel,
		.spec_sha256 = s->hash, .spec = s->json,
	};
	runw_open(&r->rec, r->run_dir, &h);
	r->root = r->rec.root;
	r->have_rec = 1;
}

/* The record begun: head, source.diff, provenance, hosts pending, the
 * spec's baselines, references and expected figures; saved. */
static int begin_record(struct run_state *r)
{
	const struct git_info *gi = &r->gi;
	struct runw_provenance p;
	enum go_status st = GO_OK;
	int i;

	open_record(r);
	if (!r->commit && gi->is_repo && gi->commit[0] && gi->dirty && gi->diff) {
		/* Without the diff a dirty run could not be reproduced. */
		st = record_write_file(&r->rec, "source.diff", gi->diff, strlen(gi->diff), &r->err);
		if (st != GO_OK)
			fprintf(stderr, "warning: %s\n", r->err.buf);
	}
	p.gi = gi;
	p.commit = r->commit;
	p.wrote_diff = !r->commit && gi->commit[0] && gi->dirty && gi->diff && st == GO_OK;
	p.content_id = r->pk.content_id;
	p.archive_bytes = (double)r->pk.len;
	p.files = pack_files_json(&r->pk);
	runw_provenance(&r->rec, &p);
	runw_hosts_begin(&r->rec);
	for (i = 0; i < r->hs->n; i++) {
		const struct host *h = &r->hs->v[i];
		struct runw_host_id id = { h->name, h->address, h->user, h->port };
		runw_host_add(&r->rec, &id);
	}
	r->hosts_arr = cJSON_GetObjectItemCaseSensitive(r->root, RK_HOSTS);
	runw_spec_lists(&r->rec, r->s->baselines, r->s->references, r->s->expected);
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
