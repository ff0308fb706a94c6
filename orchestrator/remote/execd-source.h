/* execd-source.h -- orchestrator/remote/host/gpuorch-execd.c, embedded in the
 * gpuorch binary at build time (Makefile, scripts/embed.sh): the start
 * command ships it and the host builds it with its cc (docs/runner.md). */
#ifndef GPUORCH_EXECD_SOURCE_H
#define GPUORCH_EXECD_SOURCE_H

#include <stddef.h>

extern const unsigned char gpuorch_execd_c[];   /* NUL-terminated */
extern const size_t gpuorch_execd_c_len;        /* without the NUL */

#endif
