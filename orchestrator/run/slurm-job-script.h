/* slurm-job-script.h -- orchestrator/run/slurm-job.sh, the batch script of
 * a Slurm job of a run, embedded in the gpuorch binary at build time
 * (Makefile, scripts/embed.sh --sh: without its comment lines);
 * slurmrun.c puts "#!/bin/sh" and its assignments before it. */
#ifndef GPUORCH_SLURM_JOB_SCRIPT_H
#define GPUORCH_SLURM_JOB_SCRIPT_H

#include <stddef.h>

extern const unsigned char gpuorch_slurm_job_sh[];   /* NUL-terminated */
extern const size_t gpuorch_slurm_job_sh_len;        /* without the NUL */

#endif
