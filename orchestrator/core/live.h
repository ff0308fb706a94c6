/* live.h -- the live view: each host's current step and its elapsed time.
 *
 * On a terminal a table redrawn in place; in a pipe or log, one plain line
 * each time a host changes step. Host threads call live_set(); only the
 * main thread (the parallel tick) calls live_draw(). */
#ifndef GPUORCH_LIVE_H
#define GPUORCH_LIVE_H

#include <stdio.h>

struct live;

struct live *live_new(FILE *out, int nslots, int force_plain);
void live_set_name(struct live *lv, int slot, const char *name);
/* Host thread: "build attn_wmma sm_90a" etc. status NULL keeps the last. */
void live_set(struct live *lv, int slot, const char *phase, const char *what);
/* Host thread: the host is done; final is "ok", "failed: ..." */
void live_done(struct live *lv, int slot, const char *final);
void live_draw(struct live *lv, int final);
void live_free(struct live *lv);

#endif
