/* executor.h -- the one interface the run path calls to run a host's part
 * of a run: an executor takes a struct hostrun and does everything on it --
 * connect, ship, build, run, record (hostrun.h's record entries, the same
 * for every executor). Two fill it: the SSH host's (remote/hostrun.c: the
 * host agent over one SSH connection) and the Slurm cluster's
 * (run/slurmrun.c: the agent inside each batch job); run/executor.c
 * chooses one per host, and nothing else on the run path asks which. */
#ifndef GPUORCH_EXECUTOR_H
#define GPUORCH_EXECUTOR_H

#include "remote/hostrun.h"
#include "transport/hosts.h"

struct executor_ops {
	const char *name;                       /* "ssh", "slurm" */
	/* Whether this executor runs host h (the inventory entry's kind). */
	int (*runs)(const struct host *h);
	/* The host's whole part of the run, on its own thread (par_task_fn's
	 * work); it ends with hostrun_judge and the host's "ended_at". */
	void (*run)(struct hostrun *hr);
};

/* The SSH host's executor (hostrun.c): every entry that no other claims. */
extern const struct executor_ops hostrun_ssh_executor;

#endif
