/* probe-script.h -- orchestrator/remote/probe-sig.sh and probe.sh, the host
 * probe's shell, embedded in the gpuorch binary at build time (Makefile,
 * scripts/embed.sh --sh: without their comment lines); probe.c puts the
 * parameters' assignments before them. */
#ifndef GPUORCH_PROBE_SCRIPT_H
#define GPUORCH_PROBE_SCRIPT_H

#include <stddef.h>

extern const unsigned char gpuorch_probe_sig_sh[];   /* NUL-terminated */
extern const size_t gpuorch_probe_sig_sh_len;        /* without the NUL */
extern const unsigned char gpuorch_probe_sh[];
extern const size_t gpuorch_probe_sh_len;

#endif
