/* cmd-hosts-clean.h -- `gpuorch hosts clean|disconnect|list` (cmd-hosts-clean.c). */
#ifndef GPUORCH_CMD_HOSTS_CLEAN_H
#define GPUORCH_CMD_HOSTS_CLEAN_H

#include "transport/hosts.h"
#include <cJSON.h>

/* Each verb prints a line (or a few) per host; doc (--json) non-NULL: each
 * host's result goes into doc's "hosts" too (docs/schema/
 * cli-hosts-clean.schema.json, cli-hosts-disconnect.schema.json), the
 * caller having sent the text to stderr. Return the exit code. */
int hosts_clean(const struct hosts *hs, int accept_new, double days, int dry_run, cJSON *doc);
int hosts_disconnect(const struct hosts *hs, int accept_new, cJSON *doc);
/* list: the inventory as resolved; json: one document on stdout instead
 * (docs/schema/cli-hosts-list.schema.json). */
void hosts_list(const struct hosts *hs, int json);

#endif
