/* run-json.c -- one run in JSON for `runs --json` and `run --json`, and the
 * stdout switch of --json on commands that print as they work (run-json.h). */
#include "cmd/run-json.h"
#include "store/runkeys.h"
#include "cmd/commands.h"
#include "core/jsonutil.h"
#include "core/strbuf.h"
#include "report/runsum.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/banned.h"

void run_counts_sum(const cJSON *hosts, struct run_counts *k)
{
	const cJSON *h;
	memset(k, 0, sizeof(*k));
	cJSON_ArrayForEach(h, hosts) {
		const cJSON *c = cJSON_GetObjectItem(h, "counts");
		k->gates += (int)json_num(c, "gates", 0);
		k->gates_failed += (int)json_num(c, "gates_failed", 0);
		k->builds_failed += (int)json_num(c, "builds_failed", 0);
		k->steps_skipped += (int)json_num(c, "steps_skipped", 0);
		k->steps_failed += (int)json_num(c, "steps_failed", 0);
	}
}

cJSON *run_entry_json(const cJSON *run, const char *run_id, const char *dir, const char *status)
{
	const cJSON *hosts = cJSON_GetObjectItem(run, "hosts"), *h;
	cJSON *o = cJSON_CreateObject(), *hn, *gn, *co;
	struct run_counts k;

	run_counts_sum(hosts, &k);
	json_add_str(o, "run_id", run_id);
	json_add_str(o, "dir", dir);
	json_add_str(o, "experiment", json_str(cJSON_GetObjectItem(run, "experiment"), "name"));
	json_add_str(o, "started_at", json_str(run, RK_STARTED_AT));
	json_add_str(o, "status", status);
	json_add_str(o, "outcome", json_str(run, RK_OUTCOME));
	hn = json_add_arr(o, "hosts");
	cJSON_ArrayForEach(h, hosts)
		cJSON_AddItemToArray(hn, cJSON_CreateString(json_str(h, "name") ? json_str(h, "name") : "?"));
	/* each host's GPU, in the order of hosts: its full name, null when unknown */
	gn = json_add_arr(o, "gpus");
	cJSON_ArrayForEach(h, hosts) {
		const char *g = json_str(cJSON_GetObjectItem(h, "info"), "gpu_name");
		cJSON_AddItemToArray(gn, g ? cJSON_CreateString(g) : cJSON_CreateNull());
	}
	co = json_add_obj(o, "counts");
	json_add_num(co, "gates", k.gates);
	json_add_num(co, "gates_failed", k.gates_failed);
	json_add_num(co, "builds_failed", k.builds_failed);
	json_add_num(co, "steps_failed", k.steps_failed);
	json_add_num(co, "steps_skipped", k.steps_skipped);
	json_add_str(o, "headline", json_str(run, "headline"));
	return o;
}

int cmd_json_stdout_begin(void)
{
	int saved;
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	if (saved < 0)
		return -1;
	if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		close(saved);
		return -1;
	}
	return saved;
}

void cmd_json_stdout_end(int saved)
{
	if (saved < 0)
		return;
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
}

int cmd_print_run_json(const char *schema, const char *dir, int rc)
{
	struct strbuf err = STRBUF_INIT;
	cJSON *sum = NULL, *doc;
	char *report;

	if (runsum_load(dir, &sum, &err) != 0) {
		fprintf(stderr, "error: --json: %s\n", err.buf);
		strbuf_release(&err);
		return -1;
	}
	doc = cmd_json_doc(schema);
	json_add_num(doc, "exit_code", rc);
	report = xstrfmt("%s/report.md", dir);
	json_add_str(doc, "report", report);
	free(report);
	cJSON_AddItemToObject(doc, "run", run_entry_json(sum, json_str(sum, "run_id"), dir,
							   json_str(sum, "status")));
	cmd_json_print(doc);
	cJSON_Delete(sum);
	strbuf_release(&err);
	return 0;
}
