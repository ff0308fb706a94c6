/* guard-script.h -- orchestrator/cloud/guard.sh, the instance guard's loop,
 * embedded in the gpuorch binary at build time (Makefile, scripts/embed.sh
 * --sh: without its comment lines); guard.c's install command starts it as
 * `setsid sh -c GUARD.SH gpuorch-guard W/guard`. */
#ifndef GPUORCH_GUARD_SCRIPT_H
#define GPUORCH_GUARD_SCRIPT_H

#include <stddef.h>

extern const unsigned char gpuorch_guard_sh[];   /* NUL-terminated */
extern const size_t gpuorch_guard_sh_len;        /* without the NUL */

#endif
