/* agent-source.h -- gpuorch-agent's sources (orchestrator/host/), bundled by
 * scripts/agent-bundle.sh and embedded in the gpuorch binary at build time
 * (Makefile, scripts/embed.sh): the start command ships them and the host
 * builds the agent with its cc, then runs its runs with it (docs/runner.md). */
#ifndef GPUORCH_AGENT_SOURCE_H
#define GPUORCH_AGENT_SOURCE_H

#include <stddef.h>

extern const unsigned char gpuorch_agent_src[];   /* NUL-terminated */
extern const size_t gpuorch_agent_src_len;        /* without the NUL */

#endif
