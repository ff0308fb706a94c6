/* runwrite-build.c -- the run record's one writer (runwrite.h): a build's entry in its host's "builds". */
#include "store/runwrite.h"
#include "core/jsonutil.h"
#include "store/runkeys.h"

#include <stdlib.h>
#include "core/banned.h"

void runw_add_variant(cJSON *o, const char *variant, const struct runw_define *defines, int n)
{
	cJSON *d;
	int i;
	if (!variant)
		return;
	json_add_str(o, "variant", variant);
	d = json_add_obj(o, "defines");
	for (i = 0; i < n; i++)
		json_add_str(d, defines[i].key, defines[i].value);
}

cJSON *runw_build_entry(struct runw_build *b)
{
	cJSON *bj = cJSON_CreateObject();
	json_add_str(bj, "program", b->program);
	runw_add_variant(bj, b->variant, b->defines, b->ndefines);
	json_add_str(bj, "arch", b->arch);
	json_add_str(bj, RK_STATUS, item_status_name(b->status));
	json_add_str(bj, "reason", b->reason);
	json_add_bool(bj, "reused", b->reused);
	json_add_str(bj, "build_key", b->build_key);
	if (b->same_build_as)
		json_add_str(bj, "same_build_as", b->same_build_as);
	json_add_num(bj, RK_DURATION_S, b->duration_s);
	json_add_str(bj, "command", b->command);
	if (b->exit_code >= 0)
		json_add_num(bj, RK_EXIT_CODE, b->exit_code);
	else
		cJSON_AddNullToObject(bj, RK_EXIT_CODE);
	json_add_str(bj, "log", b->log);
	cJSON_AddItemToObject(bj, "resources", b->resources ? b->resources : cJSON_CreateArray());
	b->resources = NULL;
	if (b->with_objects) {
		json_add_num(bj, "objects_reused", b->objects_reused);
		json_add_num(bj, "objects_compiled", b->objects_compiled);
	}
	return bj;
}

const char *runw_build_status(const cJSON *build)
{
	return json_str(build, RK_STATUS);
}

const char *runw_build_reason(const cJSON *build)
{
	return json_str(build, "reason");
}

int runw_build_reused(const cJSON *build)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(build, "reused"));
}
