/* slurmrun.h -- one Slurm cluster's part of a run: sources over SFTP to the login node,
 * builds and steps as Slurm jobs through slurmrestd, each running the host runner
 * (docs/slurm.md). It fills the same struct hostrun and host record object as
 * an SSH host's run, plus each job's id, node, queue wait and run time. */
#ifndef GPUORCH_SLURMRUN_H
#define GPUORCH_SLURMRUN_H

#include "remote/hostrun.h"

/* par_task_fn on a struct hostrun whose host has h->slurm. */
void slurmrun_main(void *arg);

#endif
