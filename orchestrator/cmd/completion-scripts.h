/* completion-scripts.h -- the fixed parts of gpuorch's bash and zsh
 * completions (orchestrator/cmd/completion-bash.sh, completion.zsh),
 * embedded at build time (Makefile, scripts/embed.sh); cmd-doc.c prints
 * them after the data it makes from the commands' declarations. */
#ifndef GPUORCH_COMPLETION_SCRIPTS_H
#define GPUORCH_COMPLETION_SCRIPTS_H

#include <stddef.h>

extern const unsigned char gpuorch_completion_bash[];   /* NUL-terminated */
extern const size_t gpuorch_completion_bash_len;        /* without the NUL */
extern const unsigned char gpuorch_completion_zsh[];
extern const size_t gpuorch_completion_zsh_len;

#endif
