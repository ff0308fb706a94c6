/* runner-script.h -- orchestrator/remote/runner.sh, embedded in the gpuorch
 * binary at build time (Makefile, scripts/embed.sh) so the controller ships
 * the runner that matches it. */
#ifndef GPUORCH_RUNNER_SCRIPT_H
#define GPUORCH_RUNNER_SCRIPT_H

#include <stddef.h>

extern const unsigned char gpuorch_runner_sh[];   /* NUL-terminated */
extern const size_t gpuorch_runner_sh_len;        /* without the NUL */

#endif
