/* reproduce.c -- `gpuorch reproduce`'s engine: rebuild a recorded run at its commit, rerun, compare (reproduce.h).
 *
 * Order: the recorded run (by id, or the newest one of an experiment at
 * --commit REV), then everything that can be checked locally (commit, spec
 * at the commit and its hash, the recorded diff), then a host with the
 * recorded GPU model (hostpick.c), then the rerun (rerun.c) and the
 * reproduction report, REPORTS/<slug>/<new-run>/reproduction.md. */
#include "run/reproduce.h"
#include "store/runkeys.h"
#include "run/run-engine.h"
#include "report/compare.h"
#include "report/runsum.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/hash.h"
#include "store/gitinfo.h"
#include "remote/hostpick.h"
#include "transport/hosts.h"
#include "core/jsonutil.h"
#include "run/rerun.h"
#include "store/runread.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

/* The recorded host whose figures are reproduced: the first that has any. */
static const cJSON *recorded_host(const cJSON *run)
{
	const cJSON *h, *s;
	cJSON_ArrayForEach(h, cJSON_GetObjectItem(run, "hosts"))
		cJSON_ArrayForEach(s, cJSON_GetObjectItem(h, "steps"))
			if (rr_is_kind(s, STEP_BENCHMARK))
				return h;
	return cJSON_GetArrayItem(cJSON_GetObjectItem(run, "hosts"), 0);
}

static void keep_host(struct figures *f, const char *host)
{
	int i, k = 0;
	for (i = 0; i < f->n; i++) {
		if (host && f->v[i].host && !strcmp(f->v[i].host, host))
			f->v[k++] = f->v[i];
		else
			free(f->v[i].samples);
	}
	f->n = k;
}

/* One reproduction: the recorded run, what was checked locally, the host,
 * the rerun and their comparison. */
struct rp {
	const struct reproduce_opts *o;
	const struct store_entry *old;
	const cJSON *run, *oh;          /* the record, and its host whose figures are reproduced */
	const char *commit, *spec_hash, *diff_file, *diff_hash, *old_cid;
	const char *want_gpu, *host_name;
	char *spec_path, *diff_path, *new_dir;
	char hash_now[SHA256_HEX_LEN + 1];
	int dirty, faithful, run_rc;
	struct hosts *hs;
	struct hostpick pick;
	int have_pick;
	cJSON *new_run;
	struct strbuf problems;         /* "- ..." lines: why the rerun may not be of the same thing */
};

/* What can be checked before any host: the commit, the spec at it, the
 * recorded diff (part of the run's identity). 0, or an exit code. */
static int rp_check_local(struct rp *p)
{
	struct strbuf err = STRBUF_INIT;
	enum go_status st;
	int rc = 0;
	if (!p->commit) {
		fprintf(stderr, "error: run '%s' has no commit (it was not made in a git repository): "
			"its sources cannot be rebuilt\n", p->old->run_id);
		return GO_EXIT_USAGE;
	}
	if (!p->spec_path) {
		fprintf(stderr, "error: run '%s' does not record its spec path\n", p->old->run_id);
		return GO_EXIT_USAGE;
	}
	st = rerun_spec_hash_at(p->o->root, p->commit, p->spec_path, p->hash_now, &err);
	if (st != GO_OK) {
		fprintf(stderr, "error: %s\nhint: the recorded spec path is '%s' (relative to the "
			"repository root; give --root DIR if the repository is elsewhere)\n",
			err.buf, p->spec_path);
		rc = go_exit_code(st == GO_ERR_NOT_FOUND ? GO_ERR_USAGE : st);
		goto out;
	}
	if (p->dirty && p->diff_file) {
		p->diff_path = xstrfmt("%s/%s", p->old->dir, p->diff_file);
		if (!fs_is_file(p->diff_path)) {
			free(p->diff_path);
			p->diff_path = NULL;
		}
	}
	if (p->diff_path && p->diff_hash) {
		/* the diff is part of the run's identity: the file must be the one recorded */
		struct strbuf text = STRBUF_INIT;
		char got[SHA256_HEX_LEN + 1] = "";
		if (fs_read_file(p->diff_path, &text, &err) == GO_OK)
			sha256_hex(text.buf, text.len, got);
		strbuf_release(&text);
		if (strcmp(got, p->diff_hash)) {
			strbuf_addf(&p->problems, "- The recorded %s has sha256 %.12s, not the %.12s the "
				    "run recorded: these are not the recorded run's sources.\n",
				    p->diff_file, *got ? got : "(unreadable)", p->diff_hash);
			p->faithful = 0;
		}
	}
	if (p->dirty && !p->diff_path) {
		strbuf_addf(&p->problems, "- The recorded run was made from a work tree with "
			    "uncommitted changes and its diff was not recorded: this rerun at "
			    "commit %.12s does NOT include those changes.\n", p->commit);
		p->faithful = 0;
	}
	if (p->spec_hash && strcmp(p->spec_hash, p->hash_now) && !p->diff_path) {
		strbuf_addf(&p->problems, "- The spec '%s' at commit %.12s (sha256 %.12s) is not the "
			    "one the recorded run used (sha256 %.12s).\n", p->spec_path, p->commit,
			    p->hash_now, p->spec_hash);
		p->faithful = 0;
	}
out:
	strbuf_release(&err);
	return rc;
}

/* The host: --host, or one with the recorded GPU model (hostpick.c). 0, or
 * an exit code after saying which host came closest. */
static int rp_pick_host(struct rp *p)
{
	const struct reproduce_opts *o = p->o;
	struct strbuf err = STRBUF_INIT;
	const char *want_cc;
	enum go_status st = hosts_load(o->hosts_path, &p->hs, &err);
	int rc = 0;
	if (st == GO_OK && o->host) {
		char *names[1] = { (char *)o->host };
		st = hosts_select(p->hs, names, 1, &err);
	}
	if (st != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);
		rc = go_exit_code(st);
		goto out;
	}
	p->oh = recorded_host(p->run);
	p->want_gpu = json_str(json_path(p->oh, "info"), "gpu_name");
	want_cc = json_str(json_path(p->oh, "info"), "compute_cap");
	if (o->host) {
		p->host_name = o->host;
		goto out;
	}
	st = hostpick_by_gpu(p->hs, p->want_gpu, want_cc, o->step.accept_new_hostkey, &p->pick, &err);
	if (st != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);
		rc = go_exit_code(st);
		goto out;
	}
	p->have_pick = 1;
	if (p->pick.chosen < 0) {
		fprintf(stderr, "error: no host in '%s' has %s like the recorded host '%s'\n%s",
			o->hosts_path, p->want_gpu ? p->want_gpu : "no GPU",
			json_str(p->oh, "name") ? json_str(p->oh, "name") : "?", p->pick.table.buf);
		if (p->pick.closest >= 0)
			fprintf(stderr, "closest: '%s' (%s: %s); use --host %s to run there "
				"anyway\n", p->hs->v[p->pick.closest].name,
				p->pick.chosen_gpu ? p->pick.chosen_gpu : "no GPU", p->pick.why.buf,
				p->hs->v[p->pick.closest].name);
		rc = GO_EXIT_INFRA;
		goto out;
	}
	p->host_name = p->hs->v[p->pick.chosen].name;
out:
	strbuf_release(&err);
	return rc;
}

/* The rerun (at the commit, with the recorded diff when there is one), its
 * record loaded, and what differs from the recorded run's identity. 0, or
 * an exit code. */
static int rp_rerun(struct rp *p)
{
	struct strbuf err = STRBUF_INIT;
	struct rerun_opts ro;
	const char *new_cid, *new_hash;
	char *path;
	int rc = 0;

	printf("reproducing run %s (commit %.12s%s%.12s) on host '%s'\n", p->old->run_id, p->commit,
	       p->diff_path ? " + its recorded diff " : "", p->diff_path && p->diff_hash ? p->diff_hash : "",
	       p->host_name);
	memset(&ro, 0, sizeof(ro));
	ro.root = p->o->root;
	ro.hosts_path = p->o->hosts_path;
	ro.host = p->host_name;
	ro.step = p->o->step;
	ro.command_line = p->o->command_line;
	if (p->diff_path)
		p->run_rc = rerun_with_diff(&ro, p->spec_path, p->commit, p->diff_path, &p->new_dir, &err);
	else
		p->run_rc = rerun_at_commit(&ro, p->spec_path, p->commit, &p->new_dir);
	if (!p->new_dir) {
		if (err.len)
			fprintf(stderr, "error: %s\n", err.buf);
		fprintf(stderr, "error: the rerun of '%s' made no run; nothing to compare\n",
			p->old->run_id);
		rc = p->run_rc ? p->run_rc : GO_EXIT_LOCAL;
		goto out;
	}
	path = xstrfmt("%s/run.json", p->new_dir);
	if (json_load_file(path, &p->new_run, GO_ERR_IO, &err) != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);
		free(path);
		rc = GO_EXIT_LOCAL;
		goto out;
	}
	free(path);
	new_cid = json_str(json_path(p->new_run, RK_PROVENANCE), "content_id");
	new_hash = json_str(json_path(p->new_run, "experiment"), "spec_sha256");
	if (p->old_cid && new_cid && strcmp(p->old_cid, new_cid)) {
		strbuf_addf(&p->problems, "- The sources differ: content id %.16s now, %.16s "
			    "recorded.\n", new_cid, p->old_cid);
		p->faithful = 0;
	}
	if (p->diff_path && p->spec_hash && new_hash && strcmp(p->spec_hash, new_hash)) {
		strbuf_addf(&p->problems, "- The spec differs from the recorded one (sha256 "
			    "%.12s now, %.12s recorded).\n", new_hash, p->spec_hash);
		p->faithful = 0;
	}
	if (p->run_rc)
		strbuf_addf(&p->problems, "- The rerun did not pass (exit %d): see its "
			    "report.md.\n", p->run_rc);
out:
	strbuf_release(&err);
	return rc;
}

/* reproduction.md's head: the verdict (REPRODUCED, NOT REPRODUCED or NOT
 * COMPARABLE: another kind of GPU reproduces nothing and refutes nothing),
 * both runs and their identity, and the rule */
static void rp_render_head(const struct rp *p, const struct cmp_result *r,
			   const struct cmp_opts *co, int ok, struct strbuf *md)
{
	const cJSON *nh = cJSON_GetArrayItem(cJSON_GetObjectItem(p->new_run, "hosts"), 0);
	const char *new_gpu = nh ? json_str(json_path(nh, "info"), "gpu_name") : NULL;
	const char *new_cid = json_str(json_path(p->new_run, RK_PROVENANCE), "content_id");
	int nc = r->count[CMP_NOT_COMPARABLE];
	strbuf_addf(md, "# Reproduction of run %s\n\n", p->old->run_id);
	if (nc)
		strbuf_addf(md, "**NOT COMPARABLE**: recorded on %s, rerun on %s; %d of %d "
			    "figure%s not comparable (see the table), none reproduced",
			    p->want_gpu ? p->want_gpu : "no GPU", new_gpu ? new_gpu : "no GPU", nc,
			    r->nrows, r->nrows == 1 ? "" : "s");
	else
		strbuf_addf(md, "**%s**: %d of %d figure%s reproduced", ok ? "REPRODUCED" :
			    "NOT REPRODUCED", r->count[CMP_SAME], r->nrows, r->nrows == 1 ? "" : "s");
	if (!p->faithful)
		strbuf_addstr(md, "; the rerun is not of the same sources or spec");
	strbuf_addstr(md, ".\n\n- recorded: ");
	compare_describe_run(md, p->run);
	strbuf_addf(md, " on %s (%s)\n- rerun: ", json_str(p->oh, "name") ? json_str(p->oh, "name")
		    : "?", p->want_gpu ? p->want_gpu : "no GPU");
	compare_describe_run(md, p->new_run);
	strbuf_addf(md, " on %s (%s)\n", p->host_name, new_gpu ? new_gpu : "no GPU");
	strbuf_addf(md, "- sources: %s (content id %.16s)\n",
		    p->old_cid && new_cid && !strcmp(p->old_cid, new_cid)
		    ? "identical to the recorded run's" : "DIFFERENT from the recorded run's",
		    p->old_cid ? p->old_cid : "?");
	strbuf_addf(md, "- spec: %s at commit %.12s, sha256 %.12s (recorded %.12s)%s\n",
		    p->spec_path, p->commit, p->hash_now, p->spec_hash ? p->spec_hash : "?",
		    p->diff_path ? ", plus the recorded diff" : "");
	if (p->dirty)
		strbuf_addf(md, "- the recorded work tree was dirty: %s\n", p->diff_path
			    ? "its recorded source.diff was applied in a scratch worktree"
			    : "its changes were not recorded and are NOT included");
	strbuf_addf(md, "- rule: a figure is reproduced when the Mann-Whitney U test on the "
		    "stored samples of both runs does not find a difference at p < %g, or their "
		    "medians differ by less than x%.3g (x%.3g on another GPU instance of the "
		    "model); another GPU model or clock cap is not comparable\n\n", co->alpha,
		    co->factor, co->factor > CMP_INSTANCE_FACTOR ? co->factor : CMP_INSTANCE_FACTOR);
}

/* --json's document: the verdict of reproduction.md's head, from the same
 * numbers, and the figures as `compare --json` gives them. */
static cJSON *rp_json(const struct rp *p, const struct cmp_result *r, const struct cmp_opts *co,
		     int ok, const char *path, int rc)
{
	const int nc = r->count[CMP_NOT_COMPARABLE];
	cJSON *doc = cJSON_CreateObject(), *f;

	json_add_str(doc, "schema", "gpuorch.cli.reproduce/1");
	json_add_num(doc, "exit_code", rc);
	json_add_str(doc, "verdict", nc ? "not_comparable" : ok ? "reproduced" : "not_reproduced");
	json_add_str(doc, "recorded_run", p->old->run_id);
	json_add_str(doc, "rerun", json_str(p->new_run, "run_id"));
	json_add_str(doc, "rerun_dir", p->new_dir);
	json_add_num(doc, "rerun_exit_code", p->run_rc);
	json_add_str(doc, "host", p->host_name);
	json_add_str(doc, "commit", p->commit);
	json_add_bool(doc, "faithful", p->faithful);
	json_add_str(doc, "problems", p->problems.len ? p->problems.buf : NULL);
	f = json_add_obj(doc, "figures");
	json_add_num(f, "total", r->nrows);
	json_add_num(f, "reproduced", r->count[CMP_SAME]);
	json_add_num(f, "not_comparable", nc);
	json_add_str(doc, "reproduction", path);
	cJSON_AddItemToObject(doc, "comparison", compare_result_json(r, co));
	return doc;
}

/* Compare the recorded host's figures with the rerun's, write
 * reproduction.md beside the rerun and print it. The exit code: 0
 * reproduced (or not comparable, the rerun passing), 1 not. */
static int rp_compare(struct rp *p)
{
	struct strbuf md = STRBUF_INIT, err = STRBUF_INIT;
	struct figures fa = { 0 }, fb = { 0 };
	struct cmp_result r;
	struct cmp_opts co;
	char *path;
	int ok, nc, rc;

	memset(&r, 0, sizeof(r));
	memset(&co, 0, sizeof(co));
	co.alpha = STATS_DEFAULT_ALPHA;
	co.factor = p->o->factor;
	co.reproduce = 1;
	figures_of_run(p->run, &fa);
	keep_host(&fa, json_str(p->oh, "name"));
	figures_of_run(p->new_run, &fb);
	compare_runs(&fa, &fb, &co, &r);
	ok = p->faithful && !p->run_rc && r.nrows > 0 && r.count[CMP_SAME] == r.nrows;
	nc = r.count[CMP_NOT_COMPARABLE];
	rp_render_head(p, &r, &co, ok, &md);
	if (p->problems.len)
		strbuf_addf(&md, "## Problems\n\n%s\n", p->problems.buf);
	strbuf_addstr(&md, "## Figures\n\n");
	if (r.nrows)
		compare_render_table(&md, &r, &co, "recorded median [min-max, n]",
				     "rerun median [min-max, n]");
	else
		strbuf_addstr(&md, "Neither run measured any benchmark figure.\n");
	path = xstrfmt("%s/reproduction.md", p->new_dir);
	if (fs_write_atomic(path, md.buf, md.len, &err) != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);
		rc = GO_EXIT_LOCAL;
	} else {
		printf("\n%s\nreproduction: %s\n", md.buf, path);
		/* not comparable: no verdict, so no failure (unless the rerun failed) */
		rc = ok || (nc && !p->run_rc) ? GO_EXIT_OK : GO_EXIT_FAILED;
		if (p->o->json_out)
			*p->o->json_out = rp_json(p, &r, &co, ok, path, rc);
	}
	free(path);
	compare_result_release(&r);
	figures_release(&fa);
	figures_release(&fb);
	strbuf_release(&md);
	strbuf_release(&err);
	return rc;
}

static int reproduce(const struct reproduce_opts *o, const struct store_entry *old)
{
	const cJSON *git = json_path(old->run, "provenance.git");
	struct rp p;
	int rc;

	memset(&p, 0, sizeof(p));
	p.o = o;
	p.old = old;
	p.run = old->run;
	p.commit = json_str(git, "commit");
	p.spec_path = rerun_spec_path_of(old->run);
	p.spec_hash = json_str(json_path(old->run, "experiment"), "spec_sha256");
	p.diff_file = json_str(git, "diff_file");
	p.diff_hash = json_str(git, "diff_sha256");
	p.old_cid = json_str(json_path(old->run, RK_PROVENANCE), "content_id");
	p.dirty = cJSON_IsTrue(cJSON_GetObjectItem(git, "dirty"));
	p.faithful = 1;
	strbuf_init(&p.problems, 0);

	rc = rp_check_local(&p);
	if (!rc)
		rc = rp_pick_host(&p);
	if (!rc)
		rc = rp_rerun(&p);
	if (!rc)
		rc = rp_compare(&p);
	cJSON_Delete(p.new_run);
	if (p.have_pick)
		hostpick_release(&p.pick);
	hosts_free(p.hs);
	free(p.diff_path);
	free(p.spec_path);
	free(p.new_dir);
	strbuf_release(&p.problems);
	return rc;
}

int reproduce_main(const struct reproduce_opts *o, const char *what)
{
	struct store_entry e;
	struct store_entry *v = NULL;
	struct strbuf err = STRBUF_INIT, warn = STRBUF_INIT;
	int i, n = 0, rc;
	enum go_status st;

	memset(&e, 0, sizeof(e));
	if (o->commit_rev) {
		char commit[41];
		const char *exp = what;
		st = git_resolve(o->root, o->commit_rev, commit, &err);
		if (st == GO_OK)
			st = runsum_list(&v, &n, &warn, &err);
		if (st != GO_OK) {
			fprintf(stderr, "error: %s\n", err.buf);
			rc = GO_EXIT_USAGE;
			goto out;
		}
		i = rerun_find_recorded(v, n, exp, commit, NULL);
		if (i < 0) {
			fprintf(stderr, "error: no complete run of '%s' at commit %.12s is recorded "
				"under '%s'; record one with 'gpuorch run --commit %s'\n", exp, commit,
				store_root(), o->commit_rev);
			rc = GO_EXIT_USAGE;
			goto out;
		}
		{
			/* the summary found it; the record reproduces (by its directory:
			 * another experiment may hold a run of the same id) */
			char *q = store_qualified_id(v[i].dir);
			st = store_find(q, &e, &err);
			free(q);
		}
		if (st != GO_OK) {
			fprintf(stderr, "error: %s\n", err.buf);
			rc = GO_EXIT_USAGE;
			goto out;
		}
		rc = reproduce(o, &e);
	} else {
		st = store_find(what, &e, &err);
		if (st != GO_OK) {
			fprintf(stderr, "error: %s\n", err.buf);
			rc = GO_EXIT_USAGE;
			goto out;
		}
		rc = reproduce(o, &e);
	}
out:
	store_entry_release(&e);
	store_list_free(v, n);
	strbuf_release(&err);
	strbuf_release(&warn);
	return rc;
}
