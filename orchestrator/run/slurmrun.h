/* slurmrun.h -- the Slurm cluster's executor (remote/executor.h): sources
 * over SFTP to the login node, builds and steps as Slurm jobs through
 * slurmrestd, each running the host agent (docs/slurm.md). It fills the
 * same struct hostrun and host record object as an SSH host's run, plus
 * each job's id, node, queue wait, run time and runner. */
#ifndef GPUORCH_SLURMRUN_H
#define GPUORCH_SLURMRUN_H

#include "remote/executor.h"

/* Runs the hosts whose entry is a cluster (h->slurm). */
extern const struct executor_ops slurm_executor;

#endif
