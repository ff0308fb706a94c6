/* parmap.h -- an ordered map over a bounded pool of threads: item i made on
 * any thread, handed to the caller in the order of i.
 *
 * DESIGN: `jobs` worker threads claim the items 0..n-1 in order and run
 * make(i) on them; the caller's thread takes each result in index order
 * (take(i, result)), so what it prints or keeps is the same, in the same
 * order, for any number of jobs. A worker claims item i only while fewer
 * than `window` made items wait to be taken: memory is bounded by jobs
 * items being made plus window results, whatever n is. One mutex guards
 * the ring of results and the counters; two condition variables say "a
 * result is ready" (to the caller) and "a place is free" (to workers).
 * make() runs outside the lock and owns what it allocates until take()
 * (or drop(), for results made after take() asked to stop) owns it.
 * With jobs <= 1 everything runs on the caller's thread, one item at a
 * time (no thread started). */
#ifndef GPUORCH_PARMAP_H
#define GPUORCH_PARMAP_H

typedef void *(*pmap_make_fn)(int i, void *ctx);
/* nonzero: stop (no further item is taken; those made already are dropped) */
typedef int (*pmap_take_fn)(int i, void *result, void *ctx);
typedef void (*pmap_drop_fn)(void *result, void *ctx);

/* How many threads a pass uses: $GPUORCH_JOBS (1 = serial) when it is a
 * number from 1 to PMAP_JOBS_MAX; else 1 under an address-space limit
 * (RLIMIT_AS: each thread's malloc arena reserves 64 MiB of it), else the
 * online CPUs, at most cap (the caller's bound on memory: each thread holds
 * one item being made). */
#define PMAP_JOBS_MAX 64
int pmap_jobs(int cap);

/* make(i) for every i in [0, n) on up to jobs threads, take(i) on this
 * thread in order of i. Returns the number of items taken. */
int pmap_run(int n, int jobs, pmap_make_fn make, pmap_take_fn take, pmap_drop_fn drop,
	     void *ctx);

#endif
