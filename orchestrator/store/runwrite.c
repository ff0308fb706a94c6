/* runwrite.c -- the run record's one writer (runwrite.h): the run itself, its head, provenance, hosts pending and its end. */
#include "store/runwrite.h"
#include "core/jsonutil.h"
#include "core/timeutil.h"
#include "core/version.h"
#include "store/gates.h"
#include "store/runkeys.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pwd.h>
#include "core/banned.h"

/* An old record's string member, or NULL. */
static const char *old_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Every controller that took this run up, oldest first, now last. */
static cJSON *resumed_at(const cJSON *old)
{
	const cJSON *was = cJSON_GetObjectItemCaseSensitive(old, RK_RESUMED_AT);
	cJSON *rs = cJSON_IsArray(was) ? cJSON_Duplicate(was, 1) : cJSON_CreateArray();
	char ts[32];
	time_iso8601(time(NULL), ts);
	cJSON_AddItemToArray(rs, cJSON_CreateString(ts));
	return rs;
}

static cJSON *head_json(const struct runw_head *h)
{
	cJSON *root = cJSON_CreateObject(), *exp;
	char ts[32];

	json_add_str(root, RK_SCHEMA, "gpuorch.run/1");
	json_add_str(root, RK_RUN_ID, h->run_id);
	json_add_str(root, RK_STATUS, run_status_name(RUN_RUNNING));
	cJSON_AddNullToObject(root, RK_OUTCOME);
	cJSON_AddNullToObject(root, RK_EXIT_CODE);
	json_add_str(root, "command_line", h->command_line);
	json_add_bool(root, "dry_run", 0);
	time_iso8601(h->started, ts);
	json_add_str(root, RK_STARTED_AT,
		     h->old && old_str(h->old, RK_STARTED_AT) ? old_str(h->old, RK_STARTED_AT) : ts);
	cJSON_AddNullToObject(root, RK_ENDED_AT);
	cJSON_AddNullToObject(root, RK_DURATION_S);
	if (h->old)
		cJSON_AddItemToObject(root, RK_RESUMED_AT, resumed_at(h->old));
	exp = json_add_obj(root, RK_EXPERIMENT);
	json_add_str(exp, "name", h->name);
	json_add_str(exp, "slug", h->slug);
	json_add_str(exp, "phase", h->phase);
	json_add_str(exp, "description", h->description);
	json_add_str(exp, "spec_path", h->spec_path);
	json_add_str(exp, "spec_sha256", h->spec_sha256);
	cJSON_AddItemToObject(exp, "spec", cJSON_Duplicate(h->spec, 1));
	return root;
}

void runw_open(struct record *rec, const char *dir, const struct runw_head *h)
{
	record_init(rec, dir, head_json(h));
}

/* git's "diff_withheld": changed files with a secret's name, one a line. */
static void add_withheld(cJSON *g, const char *withheld)
{
	cJSON *w = json_add_arr(g, "diff_withheld");
	const char *q, *nl;
	for (q = withheld; *q; q = nl + 1) {
		char *one;
		nl = strchr(q, '\n');
		if (!nl)
			break;
		one = xstrfmt("%.*s", (int)(nl - q), q);
		cJSON_AddItemToArray(w, cJSON_CreateString(one));
		free(one);
	}
}

/* git's commit, whether dirty, the diff's hash and file. */
static void add_git_state(cJSON *g, const char *c, int dirty, const char *sha,
			  const char *file)
{
	json_add_str(g, "commit", c);
	json_add_bool(g, "dirty", dirty);
	json_add_str(g, "diff_sha256", sha);
	json_add_str(g, "diff_file", file);
}

static cJSON *git_json(const struct runw_provenance *p)
{
	const struct git_info *gi = p->gi;
	cJSON *g = cJSON_CreateObject();
	if (p->commit) {
		add_git_state(g, p->commit, 0, NULL, NULL);
	} else if (gi->is_repo) {
		add_git_state(g, gi->commit[0] ? gi->commit : NULL, gi->dirty,
			      gi->dirty && p->wrote_diff ? gi->diff_sha256 : NULL,
			      p->wrote_diff ? "source.diff" : NULL);
		if (gi->withheld)   /* shipped, never recorded */
			add_withheld(g, gi->withheld);
		if (!gi->commit[0])
			json_add_str(g, "note", "the repository has no commit yet: the sources are "
						"identified by their content id only");
	} else {
		add_git_state(g, NULL, 1, NULL, NULL);
		json_add_str(g, "note", "not a git repository: the sources are identified by "
					"their content id only");
	}
	json_add_str(g, "branch", gi->branch);
	return g;
}

void runw_provenance(struct record *rec, const struct runw_provenance *p)
{
	cJSON *pj = cJSON_CreateObject(), *c;
	char host[256] = "";
	struct passwd *pw = getpwuid(getuid());

	json_add_str(pj, "gpuorch_version", gpuorch_version);
	json_add_str(pj, "source", p->commit ? "commit" : "worktree");
	cJSON_AddItemToObject(pj, "git", git_json(p));
	json_add_str(pj, "content_id", p->content_id);
	json_add_num(pj, "archive_bytes", p->archive_bytes);
	cJSON_AddItemToObject(pj, "files", p->files ? p->files : cJSON_CreateArray());
	c = json_add_obj(pj, "controller");
	gethostname(host, sizeof(host) - 1);
	json_add_str(c, "hostname", host);
	json_add_str(c, "user", pw ? pw->pw_name : NULL);
	record_lock(rec);
	cJSON_AddItemToObject(rec->root, RK_PROVENANCE, pj);
	record_unlock(rec);
}

void runw_hosts_begin(struct record *rec)
{
	record_lock(rec);
	json_add_arr(rec->root, RK_HOSTS);
	record_unlock(rec);
}

void runw_host_add(struct record *rec, const struct runw_host_id *h)
{
	cJSON *j = cJSON_CreateObject();
	json_add_str(j, "name", h->name);
	json_add_str(j, RK_ADDRESS, h->address);
	json_add_num(j, "port", h->port);
	json_add_str(j, "user", h->user);
	json_add_str(j, RK_STATUS, host_status_name(HOST_PENDING));
	cJSON_AddNullToObject(j, RK_STARTED_AT);
	cJSON_AddNullToObject(j, RK_ENDED_AT);
	cJSON_AddNullToObject(j, RK_ERROR);
	cJSON_AddNullToObject(j, RK_INFO);
	cJSON_AddItemToObject(j, RK_ARCHS, cJSON_CreateArray());
	cJSON_AddItemToObject(j, RK_PHASES, cJSON_CreateArray());
	cJSON_AddNullToObject(j, RK_SHIP);
	cJSON_AddNullToObject(j, RK_RUNNER);
	cJSON_AddItemToObject(j, RK_BUILDS, cJSON_CreateArray());
	cJSON_AddItemToObject(j, RK_STEPS, cJSON_CreateArray());
	record_lock(rec);
	cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(rec->root, RK_HOSTS), j);
	record_unlock(rec);
}

static cJSON *copy_or_empty(const cJSON *j)
{
	return j ? cJSON_Duplicate(j, 1) : cJSON_CreateArray();
}

void runw_spec_lists(struct record *rec, const cJSON *baselines, const cJSON *references,
		     const cJSON *expected)
{
	record_lock(rec);
	cJSON_AddItemToObject(rec->root, "baselines", copy_or_empty(baselines));
	cJSON_AddItemToObject(rec->root, "references", copy_or_empty(references));
	cJSON_AddItemToObject(rec->root, "expected", copy_or_empty(expected));
	record_unlock(rec);
}

void runw_end(struct record *rec, const struct runw_end *e)
{
	cJSON *root = rec->root;
	char ts[32];

	time_iso8601(e->ended, ts);
	record_lock(rec);
	cJSON_ReplaceItemInObject(root, RK_STATUS, cJSON_CreateString(run_status_name(e->status)));
	if (e->with_outcome)
		cJSON_ReplaceItemInObject(root, RK_OUTCOME,
					  cJSON_CreateString(run_outcome_name(e->outcome)));
	cJSON_ReplaceItemInObject(root, RK_EXIT_CODE, cJSON_CreateNumber(e->exit_code));
	cJSON_ReplaceItemInObject(root, RK_ENDED_AT, cJSON_CreateString(ts));
	cJSON_ReplaceItemInObject(root, RK_DURATION_S, cJSON_CreateNumber(e->duration_s));
	record_unlock(rec);
}

const cJSON *runw_pool_sweeps(struct record *rec)
{
	cJSON *pools;
	record_lock(rec);
	pools = sweep_rank_pools(cJSON_GetObjectItem(rec->root, RK_HOSTS));
	cJSON_DeleteItemFromObject(rec->root, RK_POOL_SWEEPS);
	if (!cJSON_GetArraySize(pools)) {
		cJSON_Delete(pools);
		pools = NULL;
	} else
		cJSON_AddItemToObject(rec->root, RK_POOL_SWEEPS, pools);
	record_unlock(rec);
	return pools;
}

const cJSON *runw_pool_gates(struct record *rec, const cJSON *gates, int *nfailed)
{
	cJSON *pools = NULL;
	*nfailed = 0;
	record_lock(rec);
	cJSON_DeleteItemFromObject(rec->root, RK_POOL_GATES);
	if (cJSON_GetArraySize(gates))
		pools = gates_evaluate_pools(gates, cJSON_GetObjectItem(rec->root, RK_HOSTS), nfailed);
	if (!cJSON_GetArraySize(pools)) {
		cJSON_Delete(pools);
		pools = NULL;
	} else
		cJSON_AddItemToObject(rec->root, RK_POOL_GATES, pools);
	record_unlock(rec);
	return pools;
}

void runw_notify(struct record *rec, cJSON *notify)
{
	record_lock(rec);
	cJSON_DeleteItemFromObjectCaseSensitive(rec->root, RK_NOTIFY);
	cJSON_AddItemToObject(rec->root, RK_NOTIFY, notify);
	record_unlock(rec);
}

void runw_instances(struct record *rec, cJSON *instances, const double *total)
{
	cJSON *prov;
	record_lock(rec);
	prov = cJSON_GetObjectItemCaseSensitive(rec->root, RK_PROVENANCE);
	cJSON_AddItemToObject(prov, RK_INSTANCES, instances);
	if (total)
		json_add_num(prov, RK_INSTANCES_COST_TOTAL, *total);
	record_unlock(rec);
}
