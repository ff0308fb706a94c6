/* start-script.h -- orchestrator/remote/start.sh, the start command's
 * script, embedded in the gpuorch binary at build time (Makefile,
 * scripts/embed.sh --sh: without its comment lines); remote.c puts its
 * assignments before it. The marker lines that split the text on its
 * stdin: remote.c writes them, start.sh's awk splits at them (written
 * there as they are here: test_runplan checks that they are). */
#ifndef GPUORCH_START_SCRIPT_H
#define GPUORCH_START_SCRIPT_H

#include <stddef.h>

#define PLAN_MARKER "#--gpuorch-plan--"
#define RUNNER_MARKER "#--gpuorch-runner--"
#define EXECD_MARKER "#--gpuorch-execd--"
#define AGENT_MARKER "#--gpuorch-agent--"        /* then the agent's files, each after */
#define AGENT_FILE "#--gpuorch-agent-file-- "    /* this and its name (agent-bundle.sh) */

extern const unsigned char gpuorch_start_sh[];   /* NUL-terminated */
extern const size_t gpuorch_start_sh_len;        /* without the NUL */

#endif
