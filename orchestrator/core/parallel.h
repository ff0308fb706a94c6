/* parallel.h -- run N tasks on N threads, with a periodic tick on the caller's
 * thread (the live view).
 *
 * DESIGN: one thread per task (a task is a host: the work is I/O bound and a
 * run has a handful of hosts). Tasks own their own state and never touch
 * another task's; anything shared (the run record, the live table) has its
 * own lock. The calling thread waits on a condition variable with a timeout
 * and calls tick() between waits, so the live view is redrawn by one thread
 * only. par_run returns when every task has returned. */
#ifndef GPUORCH_PARALLEL_H
#define GPUORCH_PARALLEL_H

typedef void (*par_task_fn)(void *arg);
typedef void (*par_tick_fn)(void *tick_arg, int final);

/* Runs fn(args[i]) for i in [0, n) in parallel; calls tick every tick_ms
 * (and once with final=1 at the end). Returns 0, or -1 if a thread could
 * not be started (then the remaining tasks run on the caller's thread). */
int par_run(int n, par_task_fn fn, void **args, par_tick_fn tick, void *tick_arg,
	    int tick_ms);

#endif
