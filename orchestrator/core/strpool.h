/* strpool.h -- strings kept once: a pass that keeps the figures of 10,000
 * runs keeps each GPU name, program, problem, host... once, not once per
 * figure (run/history-runs.c). */
#ifndef GPUORCH_STRPOOL_H
#define GPUORCH_STRPOOL_H

#include <stddef.h>

struct strpool_chunk;
struct strpool {
	void *tree;                    /* the kept strings, a tsearch tree */
	struct strpool_chunk *chunks;  /* where they are stored, newest first */
	size_t bytes;                  /* stored: the strings and their chunks' heads */
	int n;                         /* how many distinct strings */
};
#define STRPOOL_INIT { NULL, NULL, 0, 0 }

/* The pool's copy of s (made on first sight; NULL for NULL): it lives
 * until strpool_release. */
const char *strpool_get(struct strpool *p, const char *s);
void strpool_release(struct strpool *p);

#endif
