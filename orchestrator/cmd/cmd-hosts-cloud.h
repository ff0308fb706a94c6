/* cmd-hosts-cloud.h -- the cloud verbs of `gpuorch hosts` (cmd-hosts-cloud.c). */
#ifndef GPUORCH_CMD_HOSTS_CLOUD_H
#define GPUORCH_CMD_HOSTS_CLOUD_H

#include "transport/hosts.h"

/* verb: "up", "down" or "status"; returns the exit code. */
int hosts_cloud_verb(const char *verb, struct hosts *hs, int accept_new);

#endif
