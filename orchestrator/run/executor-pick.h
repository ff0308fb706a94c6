/* executor-pick.h -- the choice of a host's executor (executor.c). */
#ifndef GPUORCH_EXECUTOR_PICK_H
#define GPUORCH_EXECUTOR_PICK_H

#include "remote/executor.h"

/* The executor that runs host h (never NULL). */
const struct executor_ops *executor_for(const struct host *h);

#endif
