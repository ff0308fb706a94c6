/* clean-script.h -- orchestrator/remote/clean.sh, the host side of `gpuorch
 * hosts clean` and `hosts disconnect`, embedded in the gpuorch binary at
 * build time (Makefile, scripts/embed.sh --sh: without its comment lines);
 * hostclean.c puts its variables' assignments before it. */
#ifndef GPUORCH_CLEAN_SCRIPT_H
#define GPUORCH_CLEAN_SCRIPT_H

#include <stddef.h>

extern const unsigned char gpuorch_clean_sh[];   /* NUL-terminated */
extern const size_t gpuorch_clean_sh_len;        /* without the NUL */

#endif
