/* executor.c -- which executor (remote/executor.h) runs a host: the first
 * of the table whose runs() claims it; the SSH host's takes the rest. */
#include "run/executor-pick.h"
#include "run/slurmrun.h"

#include <stddef.h>
#include "core/banned.h"

static const struct executor_ops *const executors[] = {
	&slurm_executor,
	&hostrun_ssh_executor,   /* last: runs every host */
};

const struct executor_ops *executor_for(const struct host *h)
{
	size_t i;
	for (i = 0; i + 1 < sizeof(executors) / sizeof(executors[0]); i++)
		if (executors[i]->runs(h))
			return executors[i];
	return executors[i];
}
