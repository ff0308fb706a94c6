/* cmd-hosts-cloud.h -- the cloud verbs of `gpuorch hosts` (cmd-hosts-cloud.c). */
#ifndef GPUORCH_CMD_HOSTS_CLOUD_H
#define GPUORCH_CMD_HOSTS_CLOUD_H

#include "transport/hosts.h"
#include <cJSON.h>

/* verb: "up", "down" or "status"; returns the exit code. doc (--json):
 * the verb's results are added to it ("hosts", and "tagged" for status;
 * docs/schema/cli-hosts.schema.json); NULL: text only. */
int hosts_cloud_verb(const char *verb, struct hosts *hs, int accept_new, cJSON *doc);

#endif
