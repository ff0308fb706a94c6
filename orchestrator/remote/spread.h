/* spread.h -- `run --spread` (spec "spread": true): the experiment's steps
 * dealt over every GPU of the SSH hosts of one GPU model, each step once.
 *
 * DESIGN: each host's thread, once probed and planned, comes here
 * (spread_arrive) and waits until every host taking part has come or left
 * (spread_leave: a host lost before its plan). The last one deals, under
 * the one mutex, for every host that came: hosts are grouped by GPU model
 * (the probe's name; each model is a pool that gets the whole experiment);
 * a pool's slots are listed GPU position first, host second (h0 g0, h1 g0,
 * h0 g1, ...), and its units -- the steps of one program x problem x
 * variant, kept together so that a variant is built on one host only -- go
 * to the slots round robin in plan order (a unit of "gpus": N goes to the
 * next slot whose host has N). Deterministic: the same hosts and spec deal
 * the same way. A host lost later keeps its steps: they are recorded on it
 * as not run (hr_steps_flush), never dealt again. */
#ifndef GPUORCH_SPREAD_H
#define GPUORCH_SPREAD_H

#include <signal.h>
#include <cjson/cJSON.h>
#include "core/strbuf.h"
#include "spec/plan.h"

#define SPREAD_ELSEWHERE (-1)   /* another host of the pool runs the step */
#define SPREAD_ANY (-2)         /* runs here, its slot as without --spread */

struct spread;

/* A pool of n hosts (indexed as the run's hosts). */
struct spread *spread_new(int n);
void spread_free(struct spread *sp);
/* Host INDEX does not take part (a Slurm cluster, or lost before planning). */
void spread_leave(struct spread *sp, int index);
/* Host INDEX is planned (plan p, GPU model, nslots GPU slots): waits for
 * the others (or *interrupted), then returns, per plan step, the GPU slot
 * (its position among the host's slots) it runs on here, SPREAD_ELSEWHERE
 * or SPREAD_ANY (to free). NULL: the host is no part of the deal (it left,
 * or was interrupted before the deal): it runs every step. A second call
 * (a host planned again) gets the first deal's answer, by step id. note:
 * one line saying what the host got of its pool; *rec (NULL with a NULL
 * answer): the same for the host's record, "spread" (docs/run-record.md). */
int *spread_arrive(struct spread *sp, int index, const char *model, int nslots,
		   const struct plan *p, volatile sig_atomic_t *interrupted, struct strbuf *note,
		   cJSON **rec);

#endif
