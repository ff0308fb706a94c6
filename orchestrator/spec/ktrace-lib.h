/* ktrace-lib.h -- kernels/ktrace/gpuorch_ktrace.c (the CUPTI injection
 * library of kernel_timing steps), embedded in the gpuorch binary at build
 * time (Makefile, scripts/embed.sh): plan.c writes it into the build that
 * compiles it on the host, so a foreign repository needs no copy. */
#ifndef GPUORCH_KTRACE_LIB_H
#define GPUORCH_KTRACE_LIB_H

#include <stddef.h>

extern const unsigned char gpuorch_ktrace_c[];   /* NUL-terminated */
extern const size_t gpuorch_ktrace_c_len;        /* without the NUL */

#endif
