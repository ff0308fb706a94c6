/* diskspace.h -- a full disk on a host (issue 31, item 10): what a run needs
 * there, checked before its runner starts, and a build or step that failed
 * because the disk filled up, named as such instead of its symptom (ld's
 * "collect2: error: ld returned 1 exit status"). docs/runner.md, "Disk". */
#ifndef GPUORCH_DISKSPACE_H
#define GPUORCH_DISKSPACE_H

#include <stddef.h>
#include "core/strbuf.h"
#include "remote/pack.h"
#include "spec/plan.h"

/* The estimate, per item (documented in docs/runner.md): */
#define DISK_BUILD_KIB 4096    /* a build's directory: the binary, objects, logs */
#define DISK_STEP_KIB 1024     /* a step's directory: stdout, stderr, tool files */
#define DISK_LOW_KIB (1024LL * 1024)   /* `hosts check` warns below 1 GiB free */

/* What a run of plan p with the sources pk needs on the host, in KiB: the
 * sources twice (the blob store and the assembled src/), DISK_BUILD_KIB per
 * build the plan runs, DISK_STEP_KIB per step; the parts in *src, *builds,
 * *outputs when not NULL. An estimate, not a bound. */
long long disk_need_kib(const struct plan *p, const struct pack *pk, long long *src,
			long long *builds, long long *outputs);

/* Whether text (a build's or step's output) says the disk was full:
 * "No space left on device" (ENOSPC) or "Disk quota exceeded" (EDQUOT). */
int disk_full_in(const char *text);

#define DISK_FULL_KIB 256      /* free at an item's failed end: the disk was full */

/* A failed item whose output says the disk was full: reason becomes "no
 * space left on device on the host: " and the line that says so. A full
 * disk often eats that line too (the program's stderr is on it; ld's
 * "final link failed" is lost, collect2's line after it is not), so
 * free_kib, the free space the runner saw in the item's file system when
 * it ended (the end event's disk_free_kib; -1 unknown), below
 * DISK_FULL_KIB names it too, the old reason kept in parentheses. Else
 * the reason stays. 1 when it was rewritten. */
int disk_full_reason(struct strbuf *reason, const char *errout, const char *out,
		     long long free_kib);

#endif
