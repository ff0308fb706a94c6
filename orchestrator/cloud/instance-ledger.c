/* instance-ledger.c -- the local record of instances gpuorch started (instance-ledger.h). */
#include "cloud/instance-ledger.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/fsutil.h"
#include "core/timeutil.h"
#include "core/jsonutil.h"
#include "core/banned.h"

static char *state_dir(void)
{
	const char *d = getenv("GPUORCH_STATE_DIR");
	if (d && *d)
		return xstrfmt("%s/instances", d);
	d = getenv("XDG_STATE_HOME");
	if (d && *d)
		return xstrfmt("%s/gpuorch/instances", d);
	d = getenv("HOME");
	return xstrfmt("%s/.local/state/gpuorch/instances", d && *d ? d : ".");
}

static char *file_of(const char *host)
{
	char *d = state_dir(), *p = xstrfmt("%s/%s.json", d, host);
	free(d);
	return p;
}

enum go_status ledger_note_start(const char *host, const char *provider, double price_per_hour,
				 time_t start_requested, const char *instance_id, const char *run,
				 const char *token, struct strbuf *err)
{
	char *d = state_dir(), *p = file_of(host);
	cJSON *j = cJSON_CreateObject();
	char ts[32];
	enum go_status st = fs_mkdir_p(d, 0700, err);
	json_add_str(j, "host", host);
	json_add_str(j, "provider", provider);
	json_add_num(j, "start_requested_epoch", (double)start_requested);
	time_iso8601(start_requested, ts);
	json_add_str(j, "start_requested_at", ts);
	json_add_num(j, "price_per_hour", price_per_hour);
	if (instance_id)
		json_add_str(j, "launched_instance_id", instance_id);
	if (run)
		json_add_str(j, "run", run);
	if (token)
		json_add_str(j, "launch_token", token);
	if (st == GO_OK)
		st = json_write_atomic(p, j, err);
	cJSON_Delete(j);
	free(d);
	free(p);
	return st;
}

enum go_status ledger_note_stop(const char *host, const char *keep_id, struct strbuf *err)
{
	char *p = file_of(host);
	enum go_status st = GO_OK;
	if (keep_id) {
		/* a launched instance, stopped: no cost accrues, but it is ours to find again */
		cJSON *j = cJSON_CreateObject();
		json_add_str(j, "host", host);
		json_add_str(j, "launched_instance_id", keep_id);
		st = json_write_atomic(p, j, err);
		cJSON_Delete(j);
	} else if (unlink(p) < 0 && errno != ENOENT)
		st = go_fail(err, go_from_errno(errno), "cannot remove '%s': %s", p, strerror(errno));
	free(p);
	return st;
}

int ledger_read(const char *host, time_t *start_requested, double *price_per_hour)
{
	char *p = file_of(host);
	struct strbuf err = STRBUF_INIT;
	cJSON *j = NULL;
	int ok = 0;
	if (fs_is_file(p) && json_load_file(p, &j, GO_ERR_IO, &err) == GO_OK &&
	    json_has_num(j, "start_requested_epoch")) {
		*start_requested = (time_t)json_num(j, "start_requested_epoch", 0);
		*price_per_hour = json_num(j, "price_per_hour", 0);
		ok = 1;
	}
	cJSON_Delete(j);
	strbuf_release(&err);
	free(p);
	return ok;
}

/* A string member of host's ledger entry (a new string), or NULL. */
static char *entry_str(const char *host, const char *key, const char *unless)
{
	char *p = file_of(host), *v = NULL;
	struct strbuf err = STRBUF_INIT;
	cJSON *j = NULL;
	if (fs_is_file(p) && json_load_file(p, &j, GO_ERR_IO, &err) == GO_OK &&
	    json_str(j, key) && !(unless && json_str(j, unless)))
		v = xstrdup(json_str(j, key));
	cJSON_Delete(j);
	strbuf_release(&err);
	free(p);
	return v;
}

char *ledger_launched_id(const char *host)
{
	return entry_str(host, "launched_instance_id", NULL);
}

char *ledger_pending_token(const char *host)
{
	return entry_str(host, "launch_token", "launched_instance_id");
}

char *ledger_run(const char *host)
{
	return entry_str(host, "run", NULL);
}

/* ---------------------------------------------------------------- per run */

static char *run_file(const char *run)
{
	char *d = state_dir(), *p = xstrfmt("%s/runs/%s.json", d, run);
	free(d);
	return p;
}

enum go_status ledger_run_note(const char *run, const char *host, time_t start_requested,
			       const char *instance_id, double price_per_hour, time_t end,
			       const char *end_how, struct strbuf *err)
{
	char *p = run_file(run), *d = state_dir(), *rd = xstrfmt("%s/runs", d);
	cJSON *j = NULL, *arr, *e, *x;
	struct strbuf ignored = STRBUF_INIT;
	enum go_status st = fs_mkdir_p(rd, 0700, err);
	if (st == GO_OK && (!fs_is_file(p) || json_load_file(p, &j, GO_ERR_IO, &ignored) != GO_OK ||
			    !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "instances")))) {
		cJSON_Delete(j);
		j = cJSON_CreateObject();
		json_add_str(j, "run", run);
		json_add_arr(j, "instances");
	}
	if (st == GO_OK) {
		arr = cJSON_GetObjectItemCaseSensitive(j, "instances");
		e = NULL;
		cJSON_ArrayForEach(x, arr)
			if (json_str(x, "host") && !strcmp(json_str(x, "host"), host) &&
			    (time_t)json_num(x, "start_requested_epoch", -1) == start_requested)
				e = x;
		if (!e) {
			e = cJSON_CreateObject();
			cJSON_AddItemToArray(arr, e);
			json_add_str(e, "host", host);
			json_add_num(e, "start_requested_epoch", (double)start_requested);
		}
		cJSON_DeleteItemFromObjectCaseSensitive(e, "price_per_hour");
		json_add_num(e, "price_per_hour", price_per_hour);
		if (instance_id) {
			cJSON_DeleteItemFromObjectCaseSensitive(e, "instance_id");
			json_add_str(e, "instance_id", instance_id);
		}
		if (end) {
			cJSON_DeleteItemFromObjectCaseSensitive(e, "end_epoch");
			cJSON_DeleteItemFromObjectCaseSensitive(e, "end");
			json_add_num(e, "end_epoch", (double)end);
			json_add_str(e, "end", end_how);
		}
		st = json_write_atomic(p, j, err);
	}
	cJSON_Delete(j);
	strbuf_release(&ignored);
	free(p);
	free(d);
	free(rd);
	return st;
}

cJSON *ledger_run_list(const char *run, const char *host)
{
	char *p = run_file(run);
	struct strbuf ignored = STRBUF_INIT;
	cJSON *j = NULL, *out = cJSON_CreateArray(), *x;
	if (fs_is_file(p) && json_load_file(p, &j, GO_ERR_IO, &ignored) == GO_OK)
		cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(j, "instances"))
			if (json_str(x, "host") && !strcmp(json_str(x, "host"), host))
				cJSON_AddItemToArray(out, cJSON_Duplicate(x, 1));
	cJSON_Delete(j);
	strbuf_release(&ignored);
	free(p);
	return out;
}
