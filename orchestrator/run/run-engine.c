/* run-engine.c -- `gpuorch run`: load, package, run every host in parallel, record, report.
 *
 * Order of work: everything that can be checked locally (spec, hosts file,
 * sources, git) is checked before any connection is made, so bad input
 * exits 2 with nothing sent. Then the run directory and a "running" record
 * are created, the hosts run in parallel (hostrun.c), and the record is
 * finished as "complete" -- or "incomplete" on SIGINT/SIGTERM. A host with
 * a cloud instance (cloud/lifecycle.h) is brought up on its own thread
 * before its run, fed by the heartbeat thread while it runs, and taken down
 * per after_run afterwards, Ctrl-C or not (run_instances below). */
#include "run/run-engine.h"
#include "run/resume.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "store/gitinfo.h"
#include "remote/hostrun.h"
#include "run/slurmrun.h"
#include "transport/hosts.h"
#include "core/jsonutil.h"
#include "core/live.h"
#include "report/notify.h"
#include "remote/pack.h"
#include "core/parallel.h"
#include "spec/plan.h"
#include "store/record.h"
#include "report/report.h"
#include "report/runsum.h"
#include "spec/spec.h"
#include "transport/ssh.h"
#include "store/store.h"
#include "store/runread.h"
#include "core/timeutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pwd.h>
#include "cloud/heartbeat.h"
#include "core/interrupt.h"
#include "cloud/lifecycle.h"
#include "core/banned.h"


static int fail(enum go_status st, const char *msg)
{
	fprintf(stderr, "error: %s\n", msg);
	return go_exit_code(st);
}

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

static cJSON *provenance_json(const struct git_info *gi, const char *commit,
			      const struct pack *pk, int wrote_diff)
{
	cJSON *p = cJSON_CreateObject(), *g, *c;
	char host[256] = "";
	struct passwd *pw = getpwuid(getuid());
	json_add_str(p, "gpuorch_version", GPUORCH_VERSION);
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

/* One host's part of the run: a Slurm cluster entry runs as jobs (slurmrun.c). */
static void host_main(void *arg)
{
	struct hostrun *hr = arg;
	if (hr->h->slurm)
		slurmrun_main(hr);
	else
		hostrun_main(hr);
}

static cJSON *host_json(const struct host *h)
{
	cJSON *j = cJSON_CreateObject();
	json_add_str(j, "name", h->name);
	json_add_str(j, "address", h->address);
	json_add_num(j, "port", h->port);
	json_add_str(j, "user", h->user);
	json_add_str(j, "status", "pending");
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

static void print_dry_run(const struct spec *s, const struct hosts *hs, const struct pack *pk,
			  const struct git_info *gi, const char *commit)
{
	int i, j;
	printf("dry run: nothing is sent; this is what 'gpuorch run' would do\n\n");
	printf("experiment  %s (%s)\n", s->name, s->path);
	printf("spec sha256 %s\n", s->hash);
	if (commit)
		printf("source      commit %s\n", commit);
	else if (gi->is_repo)
		printf("source      work tree at %s%s\n", gi->commit[0] ? gi->commit : "(no commit)",
		       gi->dirty ? " + uncommitted changes" : "");
	else
		printf("source      work tree (not a git repository)\n");
	printf("content id  %s (%d files, %zu bytes archive)\n", pk->content_id, pk->nfiles,
	       pk->len);
	for (i = 0; i < pk->nfiles; i++)
		printf("  %10zu  %.12s  %s\n", pk->files[i].size, pk->files[i].sha256,
		       pk->files[i].path);
	printf("\nhosts (%d, in parallel)\n", hs->n);
	for (i = 0; i < hs->n; i++) {
		const struct host *h = &hs->v[i];
		struct plan p;
		struct plan_host ph;
		char *arch_list[2] = { NULL, NULL };
		char **archs = arch_list;
		int narchs = 0;
		const char *run_arch = h->arch;
		char *workdir = host_workdir(h, "~");

		if (!run_arch && h->gpu)
			run_arch = spec_arch_for_gpu(s, h->gpu);
		printf("  %s  %s@%s:%d  key %s  known_hosts %s\n", h->name, h->user, h->address,
		       h->port, h->use_agent ? "(ssh-agent)" : h->identity, h->known_hosts);
		if (run_arch) {
			arch_list[0] = (char *)run_arch;
			narchs = 1;
		} else {
			archs = xcalloc((size_t)s->ntargets + 1, sizeof(char *));
			for (j = 0; j < s->ntargets; j++)
				archs[narchs++] = s->targets[j].arch;
			run_arch = narchs ? archs[0] : NULL;
			printf("    (GPU detected at run time: builds shown for every target, steps "
			       "for %s)\n", run_arch ? run_arch : "none");
		}
		memset(&ph, 0, sizeof(ph));
		ph.workdir = workdir;
		ph.content_id = pk->content_id;
	ph.sources = pack_plan_sources(pk);
	ph.nsources = pk->nfiles;
		ph.run_id = "<run-id>";
		ph.archs = archs;
		ph.narchs = narchs;
		ph.run_arch = run_arch;
		ph.nvcc = "nvcc";
		ph.nvcc_version = "(detected at run time)";
		ph.python = "python3";
		ph.ncu = "ncu";
		ph.sanitizer = "compute-sanitizer";
		plan_make(&p, s, &ph);
		free((void *)ph.sources);
		printf("    ship the files of %s/content/%s/src the host lacks (%d files in all)\n",
		       workdir, pk->content_id, pk->nfiles);
		plan_print(&p, stdout);
		plan_release(&p);
		if (archs != arch_list)
			free(archs);
		free(workdir);
	}
}

/* ---------------------------------------------------------------- instances */

struct host_task {
	struct hostrun *hr;
	struct inst_life *L;
	struct heartbeat *hb;
	int accept_new;
};

static void set_host_field(struct hostrun *hr, const char *key, cJSON *val)
{
	record_lock(hr->ctx->rec);
	if (cJSON_GetObjectItemCaseSensitive(hr->hj, key))
		cJSON_ReplaceItemInObject(hr->hj, key, val);
	else
		cJSON_AddItemToObject(hr->hj, key, val);
	record_unlock(hr->ctx->rec);
}

/* One host: bring its instance up, run, take it down (par_task_fn). */
static void host_task_main(void *arg)
{
	struct host_task *t = arg;
	struct hostrun *hr = t->hr;
	struct inst_life *L = t->L;
	struct strbuf log = STRBUF_INIT, e = STRBUF_INIT;
	enum go_status st;

	if (!L->in) {
		host_main(hr);
		return;
	}
	L->interrupted = &interrupt_signal;
	L->run_id = hr->ctx->run_id;   /* tags, the idempotency token, the run's instances */
	live_set(hr->ctx->live, hr->index, "instance", "starting");
	st = life_up(L, t->accept_new, 1, &log, &e);
	strbuf_addstr(&hr->out, log.buf);
	strbuf_reset(&log);
	set_host_field(hr, "address", cJSON_CreateString(L->h->address));
	if (st == GO_OK) {
		if (L->guarded)
			heartbeat_add(t->hb, hr->index, L->h, L->in);
		host_main(hr);
		life_check_preempted(L);
		if (L->preempted) {
			strbuf_addf(&hr->out, "  %s: the instance stopped under the run without gpuorch "
				    "asking (preempted?): its steps were lost, not failed\n", L->h->name);
			set_host_field(hr, "status", cJSON_CreateString("preempted"));
			hr->failed = 1;
		}
		heartbeat_remove(t->hb, hr->index);
	} else {
		hr->failed = 1;
		strbuf_addf(&hr->out, "%s\n  instance failed: %s\n", L->h->name, e.buf);
		set_host_field(hr, "status", cJSON_CreateString(st == GO_ERR_INTERRUPTED ? "failed"
											 : "unreachable"));
		set_host_field(hr, "error", cJSON_CreateString(e.buf));
		live_done(hr->ctx->live, hr->index, "instance failed");
	}
	if (L->started || L->up) {
		strbuf_reset(&e);
		live_set(hr->ctx->live, hr->index, "instance", "stopping");
		if (life_down(L, life_after_run(L), t->accept_new, &log, &e) != GO_OK)
			strbuf_addf(&hr->out, "  warning: %s\n", e.buf);
		strbuf_addstr(&hr->out, log.buf);
	}
	set_host_field(hr, "instance", life_json(L, time(NULL)));
	strbuf_release(&log);
	strbuf_release(&e);
}

/* Every instance's cost into provenance.instances and the run's total;
 * prints the cost lines; returns how many instances may still be billing. */
static int record_costs(struct record *rec, cJSON *root, struct inst_life *lives, int n)
{
	cJSON *prov = cJSON_GetObjectItemCaseSensitive(root, "provenance"), *insts;
	double total = 0;
	int i, billing = 0, any = 0;
	time_t now = time(NULL);
	record_lock(rec);
	insts = json_add_obj(prov, "instances");
	for (i = 0; i < n; i++) {
		const struct inst_life *L = &lives[i];
		if (!L->in)
			continue;
		any = 1;
		cJSON_AddItemToObject(insts, L->h->name, life_json(L, now));
		total += life_cost(L, now);
		if (L->stop_failed || (L->started && !L->stopped && life_after_run(L) != AFTER_KEEP))
			billing++;
		if (L->started) {
			/* the figures shown are the ones the cost is made of */
			double obs = life_seconds(L, now), billed = life_billed_seconds(L, now);
			double earlier = life_cost(L, now) - billed / 3600.0 * L->in->price_per_hour;
			printf("cost: %s %.4f (", L->h->name, life_cost(L, now));
			if (billed > obs)
				printf("%.0f s observed, billed as the provider's minimum %.0f s", obs, billed);
			else
				printf("%.0f s", obs);
			printf(" x %.4g/h", L->in->price_per_hour);
			if (earlier > 0)
				printf(", + %.4f for the run's earlier instances", earlier);
			printf(", %s)%s\n", L->stopped ? "stopped" : "still running",
			       L->stop_failed ? "  MAY STILL BE BILLING: stop it by hand" : "");
		} else
			printf("cost: %s not started by gpuorch (it was %s): not counted\n",
			       L->h->name, inst_state_name(L->before));
	}
	if (any)   /* no instance, no cost: `runs` prints none */
		json_add_num(prov, "instances_cost_total", total);
	record_unlock(rec);
	if (any)
		printf("cost: total %.4f\n", total);
	return billing;
}

int runner_run(const struct run_opts *o)
{
	struct strbuf err = STRBUF_INIT;
	struct spec *s = NULL;
	struct hosts *hs = NULL;
	struct git_info gi;
	struct pack pk;
	char **files = NULL;
	char commit[41] = "";
	char run_id[32];
	char *run_dir = NULL;
	struct record rec;
	int have_rec = 0;
	struct run_ctx ctx;
	struct hostrun *hrs = NULL;
	struct host_task *tasks = NULL;
	struct inst_life *lives = NULL;
	struct heartbeat *hb = NULL;
	void **args = NULL;
	struct live *lv = NULL;
	cJSON *root, *exp, *hosts_arr;
	char ts[32];
	time_t started = time(NULL);
	int64_t t0 = time_mono_ms();
	enum go_status st;
	int i, rc = 0, nfailed_hosts = 0, nfailed_steps = 0, nfailed_gates = 0, lock_fd = -1;
	cJSON *old = NULL;          /* --resume: the run's record as it was left */
	const char *notify_url = o->notify_url ? o->notify_url : getenv("GPUORCH_NOTIFY_URL");

	memset(&gi, 0, sizeof(gi));
	memset(&pk, 0, sizeof(pk));
	/* First thing: a SIGINT from now on is recorded, never lost (a shell
	 * starts background jobs with SIGINT ignored). */
	interrupt_catch();
	if (o->run_dir_out)
		*o->run_dir_out = NULL;
	if (notify_url && !*notify_url && !o->notify_url)
		notify_url = NULL;   /* GPUORCH_NOTIFY_URL= turns it off */
	if (notify_url && !o->dry_run) {
		st = notify_check_url(notify_url, &err);
		if (st != GO_OK) {
			rc = fail(st, err.buf);
			goto out;
		}
	}

	/* 1. Everything local, before any connection. */
	if (o->commit) {
		st = git_resolve(o->root, o->commit, commit, &err);
		if (st != GO_OK) {
			rc = fail(GO_ERR_USAGE, err.buf);
			goto out;
		}
	}
	st = load_spec(o, o->commit ? commit : NULL, &s, &err);
	if (st != GO_OK) {
		rc = fail(st, err.buf);
		goto out;
	}
	st = hosts_load(o->hosts_path, &hs, &err);
	if (st == GO_OK && o->nhost_names)
		st = hosts_select(hs, o->host_names, o->nhost_names, &err);
	if (st == GO_OK && o->queue_timeout_s >= 0)
		for (i = 0; i < hs->n; i++)
			if (hs->v[i].slurm)
				hs->v[i].slurm->queue_timeout_s = o->queue_timeout_s;
	if (st != GO_OK) {
		rc = fail(st, err.buf);
		goto out;
	}
	st = life_load(hs, &lives, &err);
	if (st != GO_OK) {
		rc = fail(st, err.buf);
		goto out;
	}
	st = pack_resolve_sources(o->root, o->commit ? commit : NULL, s->sources, &files, &err);
	if (st == GO_OK)
		st = spec_check_selected(s, files, &err);
	if (st == GO_OK)
		st = o->commit ? pack_commit(o->root, commit, files, &pk, &err)
			       : pack_worktree(o->root, files, &pk, &err);
	if (st != GO_OK) {
		rc = fail(st == GO_ERR_NOT_FOUND ? GO_ERR_SPEC : st, err.buf);
		goto out;
	}
	st = worktree_info(o, files, &gi, &err);
	if (st != GO_OK) {
		rc = fail(st, err.buf);
		goto out;
	}
	if (o->dry_run) {
		print_dry_run(s, hs, &pk, &gi, o->commit ? commit : NULL);
		for (i = 0; i < hs->n; i++)
			if (lives[i].in && lives[i].in->ops->describe) {
				printf("  %s:\n", hs->v[i].name);
				lives[i].in->ops->describe(lives[i].in, stdout);
			}
		goto out;
	}
	/* Credentials that expired are found now, before anything starts. */
	for (i = 0; i < hs->n; i++) {
		st = life_check(&lives[i], &err);
		if (st != GO_OK) {
			rc = fail(st, err.buf);
			goto out;
		}
	}

	/* 2. The run directory (new, or the one resumed) under this process's
	 * controller lock, and a "running" record. */
	if (o->resume_id) {
		struct store_entry e;
		st = store_find(o->resume_id, &e, &err);
		if (st == GO_OK) {
			snprintf(run_id, sizeof(run_id), "%s", e.run_id);
			run_dir = xstrdup(e.dir);
			store_entry_release(&e);
			st = store_lock_run(run_dir, &lock_fd, &err);
		}
		if (st == GO_OK)   /* read again under the lock: it may have ended meanwhile */
			st = store_load_record(run_dir, &old, &err);
		if (st == GO_OK)
			st = resume_check(old, run_id, s, hs, pk.content_id, &err);
		if (st != GO_OK) {
			rc = fail(st == GO_ERR_NOT_FOUND ? GO_ERR_USAGE : st, err.buf);
			goto out;
		}
	} else {
		store_new_run_id(run_id);
		st = store_create_run_dir(s->slug, run_id, &run_dir, &err);
		if (st == GO_OK)
			st = store_lock_run(run_dir, &lock_fd, &err);
		if (st != GO_OK) {
			rc = fail(st, err.buf);
			goto out;
		}
	}
	root = cJSON_CreateObject();
	json_add_str(root, "schema", "gpuorch.run/1");
	json_add_str(root, "run_id", run_id);
	json_add_str(root, "status", "running");
	cJSON_AddNullToObject(root, "outcome");
	cJSON_AddNullToObject(root, "exit_code");
	json_add_str(root, "command_line", o->command_line);
	json_add_bool(root, "dry_run", 0);
	time_iso8601(started, ts);
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
	json_add_str(exp, "spec_path", strip_dot_slash(o->spec_path));
	json_add_str(exp, "spec_sha256", s->hash);
	cJSON_AddItemToObject(exp, "spec", cJSON_Duplicate(s->json, 1));
	record_init(&rec, run_dir, root);
	have_rec = 1;
	if (!o->commit && gi.is_repo && gi.commit[0] && gi.dirty && gi.diff) {
		/* Without the diff a dirty run could not be reproduced. */
		st = record_write_file(&rec, "source.diff", gi.diff, strlen(gi.diff), &err);
		if (st != GO_OK)
			fprintf(stderr, "warning: %s\n", err.buf);
	}
	cJSON_AddItemToObject(root, "provenance",
			      provenance_json(&gi, o->commit ? commit : NULL, &pk,
					      !o->commit && gi.commit[0] && gi.dirty && gi.diff &&
						      st == GO_OK));
	hosts_arr = json_add_arr(root, "hosts");
	for (i = 0; i < hs->n; i++)
		cJSON_AddItemToArray(hosts_arr, host_json(&hs->v[i]));
	cJSON_AddItemToObject(root, "baselines", copy_or_empty(s->baselines));
	cJSON_AddItemToObject(root, "references", copy_or_empty(s->references));
	cJSON_AddItemToObject(root, "expected", copy_or_empty(s->expected));
	st = record_save(&rec, &err);
	if (st != GO_OK) {
		rc = fail(st, err.buf);
		goto out;
	}

	/* 3. Every host in parallel. */
	fprintf(stderr, "run %s: %s on %d host%s -> %s\n", run_id, s->name, hs->n,
		hs->n == 1 ? "" : "s", run_dir);
	lv = live_new(stderr, hs->n, o->plain);
	memset(&ctx, 0, sizeof(ctx));
	ctx.spec = s;
	ctx.pack = &pk;
	ctx.run_id = run_id;
	ctx.rec = &rec;
	ctx.live = lv;
	ctx.accept_new_hostkey = o->accept_new_hostkey;
	ctx.reconnect_timeout_s = o->reconnect_timeout_s;
	ctx.lock_wait_s = o->lock_wait_s;
	ctx.interrupted = &interrupt_signal;
	ctx.resumed = old;
	hrs = xcalloc((size_t)hs->n, sizeof(*hrs));
	tasks = xcalloc((size_t)hs->n, sizeof(*tasks));
	args = xcalloc((size_t)hs->n, sizeof(*args));
	hb = heartbeat_start(hs->n, o->accept_new_hostkey);
	for (i = 0; i < hs->n; i++) {
		hostrun_init(&hrs[i], i, &hs->v[i], &ctx, cJSON_GetArrayItem(hosts_arr, i));
		live_set_name(lv, i, hs->v[i].name);
		tasks[i].hr = &hrs[i];
		tasks[i].L = &lives[i];
		tasks[i].hb = hb;
		tasks[i].accept_new = o->accept_new_hostkey;
		args[i] = &tasks[i];
	}
	if (!interrupt_signal)
		par_run(hs->n, host_task_main, args, (par_tick_fn)live_draw, lv, 500);
	heartbeat_stop(hb);
	hb = NULL;

	/* 4. Each host's output whole, then the verdict. */
	for (i = 0; i < hs->n; i++) {
		fputs(hrs[i].out.buf, stdout);
		nfailed_hosts += hrs[i].failed;
		nfailed_steps += hrs[i].nfailed_steps - hrs[i].nfailed_gates;
		nfailed_gates += hrs[i].nfailed_gates;
	}
	if (record_costs(&rec, root, lives, hs->n) && rc == 0)
		rc = GO_EXIT_FAILED;
	record_lock(&rec);
	if (interrupt_signal) {
		cJSON_ReplaceItemInObject(root, "status", cJSON_CreateString("incomplete"));
		rc = GO_EXIT_INTERRUPTED;
	} else {
		const char *outcome = "passed";
		cJSON_ReplaceItemInObject(root, "status", cJSON_CreateString("complete"));
		if (rc == GO_EXIT_FAILED) {
			outcome = "failed";   /* an instance may still be billing */
		} else if (nfailed_hosts == hs->n) {
			outcome = "infra_error";
			rc = GO_EXIT_INFRA;
		} else if (nfailed_hosts || nfailed_steps || nfailed_gates) {
			outcome = "failed";
			rc = GO_EXIT_FAILED;
		}
		cJSON_ReplaceItemInObject(root, "outcome", cJSON_CreateString(outcome));
	}
	cJSON_ReplaceItemInObject(root, "exit_code", cJSON_CreateNumber(rc));
	time_iso8601(time(NULL), ts);
	cJSON_ReplaceItemInObject(root, "ended_at", cJSON_CreateString(ts));
	cJSON_ReplaceItemInObject(root, "duration_s",
				  cJSON_CreateNumber((double)(time_mono_ms() - t0) / 1000.0));
	record_unlock(&rec);
	st = record_save(&rec, &err);
	if (st == GO_OK) {
		char *md = xstrfmt("%s/report.md", run_dir);
		st = report_write(rec.root, md, &err);
		if (st == GO_OK)
			printf("\nreport: %s\n", md);
		if (st == GO_OK && notify_url) {
			fflush(stdout);
			notify_run(notify_url, root, md);
			st = record_save(&rec, &err);
		}
		free(md);
	}
	/* the summary last: it records run.json as it is now */
	if (st == GO_OK)
		st = runsum_write(rec.dir, rec.root, &err);
	if (st != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);
		rc = GO_EXIT_LOCAL;
	}
	printf("run %s: %s (%d host%s failed, %d build/step%s did not pass, %d gate%s failed)\n",
	       run_id, interrupt_signal ? "INTERRUPTED, recorded as incomplete"
	       : rc == 0 ? "passed" : rc == GO_EXIT_INFRA ? "no host could be used" : "FAILED",
	       nfailed_hosts, nfailed_hosts == 1 ? "" : "s", nfailed_steps,
	       nfailed_steps == 1 ? "" : "s", nfailed_gates, nfailed_gates == 1 ? "" : "s");

out:
	if (hrs)
		for (i = 0; hs && i < hs->n; i++)
			hostrun_release(&hrs[i]);
	free(hrs);
	free(tasks);
	free(args);
	heartbeat_stop(hb);
	if (hs)
		life_free(lives, hs->n);
	live_free(lv);
	if (have_rec)
		record_release(&rec);
	cJSON_Delete(old);
	if (lock_fd >= 0)
		close(lock_fd);
	if (o->run_dir_out && run_dir)
		*o->run_dir_out = run_dir;
	else
		free(run_dir);
	pack_release(&pk);
	pack_free_files(files);
	git_info_release(&gi);
	hosts_free(hs);
	spec_free(s);
	strbuf_release(&err);
	return rc;
}
