/* reproduce.c -- `gpuorch reproduce`'s engine: rebuild a recorded run at its commit, rerun, compare (reproduce.h).
 *
 * Order: the recorded run (by id, or the newest one of an experiment at
 * --commit REV), then everything that can be checked locally (commit, spec
 * at the commit and its hash, the recorded diff), then a host with the
 * recorded GPU model (hostpick.c), then the rerun (rerun.c) and the
 * reproduction report, REPORTS/<slug>/<new-run>/reproduction.md. */
#include "run/reproduce.h"
#include "run/runner.h"
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
			if (json_str(s, "kind") && !strcmp(json_str(s, "kind"), "benchmark"))
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

static int reproduce(const struct reproduce_opts *o, const struct store_entry *old)
{
	struct strbuf err = STRBUF_INIT, md = STRBUF_INIT, problems = STRBUF_INIT;
	const cJSON *run = old->run, *git = json_path(run, "provenance.git"), *oh;
	const char *commit = json_str(git, "commit");
	char *spec_path = rerun_spec_path_of(run);
	const char *spec_hash = json_str(json_path(run, "experiment"), "spec_sha256");
	const char *diff_file = json_str(git, "diff_file");
	const char *diff_hash = json_str(git, "diff_sha256");
	const char *old_cid = json_str(json_path(run, "provenance"), "content_id");
	const char *want_gpu, *want_cc, *host_name;
	int dirty = cJSON_IsTrue(cJSON_GetObjectItem(git, "dirty"));
	char hash_now[SHA256_HEX_LEN + 1] = "";
	char *diff_path = NULL, *new_dir = NULL, *path = NULL;
	struct hosts *hs = NULL;
	struct hostpick pick;
	struct rerun_opts ro;
	struct figures fa = { 0 }, fb = { 0 };
	struct cmp_result r;
	struct cmp_opts co;
	cJSON *new_run = NULL;
	int rc = GO_EXIT_OK, run_rc, have_pick = 0, faithful = 1;
	enum go_status st;

	memset(&r, 0, sizeof(r));
	if (!commit) {
		fprintf(stderr, "error: run '%s' has no commit (it was not made in a git repository): "
			"its sources cannot be rebuilt\n", old->run_id);
		rc = GO_EXIT_USAGE;
		goto out;
	}
	if (!spec_path) {
		fprintf(stderr, "error: run '%s' does not record its spec path\n", old->run_id);
		rc = GO_EXIT_USAGE;
		goto out;
	}
	st = rerun_spec_hash_at(o->root, commit, spec_path, hash_now, &err);
	if (st != GO_OK) {
		fprintf(stderr, "error: %s\nhint: the recorded spec path is '%s' (relative to the "
			"repository root; give --root DIR if the repository is elsewhere)\n",
			err.buf, spec_path);
		rc = go_exit_code(st == GO_ERR_NOT_FOUND ? GO_ERR_USAGE : st);
		goto out;
	}
	if (dirty && diff_file) {
		diff_path = xstrfmt("%s/%s", old->dir, diff_file);
		if (!fs_is_file(diff_path)) {
			free(diff_path);
			diff_path = NULL;
		}
	}
	if (diff_path && diff_hash) {
		/* the diff is part of the run's identity: the file must be the one recorded */
		struct strbuf text = STRBUF_INIT;
		char got[SHA256_HEX_LEN + 1] = "";
		if (fs_read_file(diff_path, &text, &err) == GO_OK)
			sha256_hex(text.buf, text.len, got);
		strbuf_release(&text);
		strbuf_reset(&err);
		if (strcmp(got, diff_hash)) {
			strbuf_addf(&problems, "- The recorded %s has sha256 %.12s, not the %.12s the run "
				    "recorded: these are not the recorded run's sources.\n", diff_file,
				    *got ? got : "(unreadable)", diff_hash);
			faithful = 0;
		}
	}
	if (dirty && !diff_path) {
		strbuf_addf(&problems, "- The recorded run was made from a work tree with "
			    "uncommitted changes and its diff was not recorded: this rerun at "
			    "commit %.12s does NOT include those changes.\n", commit);
		faithful = 0;
	}
	if (spec_hash && strcmp(spec_hash, hash_now) && !diff_path) {
		strbuf_addf(&problems, "- The spec '%s' at commit %.12s (sha256 %.12s) is not the "
			    "one the recorded run used (sha256 %.12s).\n", spec_path, commit,
			    hash_now, spec_hash);
		faithful = 0;
	}

	/* A host with the same GPU model. */
	st = hosts_load(o->hosts_path, &hs, &err);
	if (st == GO_OK && o->host) {
		char *names[1] = { (char *)o->host };
		st = hosts_select(hs, names, 1, &err);
	}
	if (st != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);
		rc = go_exit_code(st);
		goto out;
	}
	oh = recorded_host(run);
	want_gpu = json_str(json_path(oh, "info"), "gpu_name");
	want_cc = json_str(json_path(oh, "info"), "compute_cap");
	if (o->host) {
		host_name = o->host;
	} else {
		st = hostpick_by_gpu(hs, want_gpu, want_cc, o->step.accept_new_hostkey, &pick, &err);
		if (st != GO_OK) {
			fprintf(stderr, "error: %s\n", err.buf);
			rc = go_exit_code(st);
			goto out;
		}
		have_pick = 1;
		if (pick.chosen < 0) {
			fprintf(stderr, "error: no host in '%s' has %s like the recorded host '%s'\n%s",
				o->hosts_path, want_gpu ? want_gpu : "no GPU",
				json_str(oh, "name") ? json_str(oh, "name") : "?", pick.table.buf);
			if (pick.closest >= 0)
				fprintf(stderr, "closest: '%s' (%s: %s); use --host %s to run there "
					"anyway\n", hs->v[pick.closest].name,
					pick.chosen_gpu ? pick.chosen_gpu : "no GPU", pick.why.buf,
					hs->v[pick.closest].name);
			rc = GO_EXIT_INFRA;
			goto out;
		}
		host_name = hs->v[pick.chosen].name;
	}
	printf("reproducing run %s (commit %.12s%s%.12s) on host '%s'\n", old->run_id, commit,
	       diff_path ? " + its recorded diff " : "", diff_path && diff_hash ? diff_hash : "",
	       host_name);

	/* The rerun. */
	memset(&ro, 0, sizeof(ro));
	ro.root = o->root;
	ro.hosts_path = o->hosts_path;
	ro.host = host_name;
	ro.step = o->step;
	ro.command_line = o->command_line;
	strbuf_reset(&err);
	if (diff_path)
		run_rc = rerun_with_diff(&ro, spec_path, commit, diff_path, &new_dir, &err);
	else
		run_rc = rerun_at_commit(&ro, spec_path, commit, &new_dir);
	if (!new_dir) {
		if (err.len)
			fprintf(stderr, "error: %s\n", err.buf);
		fprintf(stderr, "error: the rerun of '%s' made no run; nothing to compare\n",
			old->run_id);
		rc = run_rc ? run_rc : GO_EXIT_LOCAL;
		goto out;
	}
	path = xstrfmt("%s/run.json", new_dir);
	st = json_load_file(path, &new_run, GO_ERR_IO, &err);
	if (st != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);
		rc = GO_EXIT_LOCAL;
		goto out;
	}
	{
		const char *new_cid = json_str(json_path(new_run, "provenance"), "content_id");
		const char *new_hash = json_str(json_path(new_run, "experiment"), "spec_sha256");
		if (old_cid && new_cid && strcmp(old_cid, new_cid)) {
			strbuf_addf(&problems, "- The sources differ: content id %.16s now, %.16s "
				    "recorded.\n", new_cid, old_cid);
			faithful = 0;
		}
		if (diff_path && spec_hash && new_hash && strcmp(spec_hash, new_hash)) {
			strbuf_addf(&problems, "- The spec differs from the recorded one (sha256 "
				    "%.12s now, %.12s recorded).\n", new_hash, spec_hash);
			faithful = 0;
		}
		if (run_rc)
			strbuf_addf(&problems, "- The rerun did not pass (exit %d): see its "
				    "report.md.\n", run_rc);
	}

	/* Compare and report. */
	memset(&co, 0, sizeof(co));
	co.alpha = STATS_DEFAULT_ALPHA;
	co.factor = o->factor;
	co.reproduce = 1;
	figures_of_run(run, &fa);
	keep_host(&fa, json_str(oh, "name"));
	figures_of_run(new_run, &fb);
	compare_runs(&fa, &fb, &co, &r);
	{
		int ok = faithful && !run_rc && r.nrows > 0 && r.count[CMP_SAME] == r.nrows;
		int nc = r.count[CMP_NOT_COMPARABLE];
		const cJSON *nh = cJSON_GetArrayItem(cJSON_GetObjectItem(new_run, "hosts"), 0);
		const char *new_gpu = nh ? json_str(json_path(nh, "info"), "gpu_name") : NULL;
		strbuf_addf(&md, "# Reproduction of run %s\n\n", old->run_id);
		if (nc) {
			/* another kind of GPU (or clock cap) reproduces nothing and refutes nothing */
			strbuf_addf(&md, "**NOT COMPARABLE**: recorded on %s, rerun on %s; %d of %d "
				    "figure%s not comparable (see the table), none reproduced",
				    want_gpu ? want_gpu : "no GPU", new_gpu ? new_gpu : "no GPU", nc,
				    r.nrows, r.nrows == 1 ? "" : "s");
		} else {
			strbuf_addf(&md, "**%s**: %d of %d figure%s reproduced", ok ? "REPRODUCED" :
				    "NOT REPRODUCED", r.count[CMP_SAME], r.nrows, r.nrows == 1 ? "" : "s");
		}
		if (!faithful)
			strbuf_addstr(&md, "; the rerun is not of the same sources or spec");
		strbuf_addstr(&md, ".\n\n");
		strbuf_addstr(&md, "- recorded: ");
		compare_describe_run(&md, run);
		strbuf_addf(&md, " on %s (%s)\n- rerun: ", json_str(oh, "name") ? json_str(oh, "name")
			    : "?", want_gpu ? want_gpu : "no GPU");
		compare_describe_run(&md, new_run);
		strbuf_addf(&md, " on %s (%s)\n", host_name, new_gpu ? new_gpu : "no GPU");
		strbuf_addf(&md, "- sources: %s (content id %.16s)\n",
			    old_cid && json_str(json_path(new_run, "provenance"), "content_id") &&
			    !strcmp(old_cid, json_str(json_path(new_run, "provenance"), "content_id"))
			    ? "identical to the recorded run's" : "DIFFERENT from the recorded run's",
			    old_cid ? old_cid : "?");
		strbuf_addf(&md, "- spec: %s at commit %.12s, sha256 %.12s (recorded %.12s)%s\n",
			    spec_path, commit, hash_now, spec_hash ? spec_hash : "?",
			    diff_path ? ", plus the recorded diff" : "");
		if (dirty)
			strbuf_addf(&md, "- the recorded work tree was dirty: %s\n", diff_path
				    ? "its recorded source.diff was applied in a scratch worktree"
				    : "its changes were not recorded and are NOT included");
		strbuf_addf(&md, "- rule: a figure is reproduced when the Mann-Whitney U test on the "
			    "stored samples of both runs does not find a difference at p < %g, or their "
			    "medians differ by less than x%.3g (x%.3g on another GPU instance of the "
			    "model); another GPU model or clock cap is not comparable\n\n", co.alpha,
			    co.factor, co.factor > CMP_INSTANCE_FACTOR ? co.factor : CMP_INSTANCE_FACTOR);
		if (problems.len)
			strbuf_addf(&md, "## Problems\n\n%s\n", problems.buf);
		strbuf_addstr(&md, "## Figures\n\n");
		if (r.nrows)
			compare_render_table(&md, &r, &co, "recorded median [min-max, n]",
					     "rerun median [min-max, n]");
		else
			strbuf_addstr(&md, "Neither run measured any benchmark figure.\n");
		free(path);
		path = xstrfmt("%s/reproduction.md", new_dir);
		st = fs_write_atomic(path, md.buf, md.len, &err);
		if (st != GO_OK) {
			fprintf(stderr, "error: %s\n", err.buf);
			rc = GO_EXIT_LOCAL;
			goto out;
		}
		printf("\n%s\nreproduction: %s\n", md.buf, path);
		/* not comparable: no verdict, so no failure (unless the rerun failed) */
		rc = ok || (nc && !run_rc) ? GO_EXIT_OK : GO_EXIT_FAILED;
	}
out:
	compare_result_release(&r);
	figures_release(&fa);
	figures_release(&fb);
	cJSON_Delete(new_run);
	if (have_pick)
		hostpick_release(&pick);
	hosts_free(hs);
	free(diff_path);
	free(spec_path);
	free(new_dir);
	free(path);
	strbuf_release(&err);
	strbuf_release(&md);
	strbuf_release(&problems);
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
