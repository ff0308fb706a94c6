/* probecache.h -- the controller's copy of each host's last probe, so that a
 * re-run needs no probe command: the run's start command checks on the host
 * that the host is unchanged (probe_sig_script) and says "probe stale"
 * otherwise (remote.h). Kept under $GPUORCH_CACHE_DIR, else
 * $XDG_CACHE_HOME/gpuorch, else ~/.cache/gpuorch: probe-<sha256 of the
 * host's entry>.txt, the probe's KEY=VALUE output. Other files of the
 * controller about a host (shipledger.h) live beside it, named by kind. */
#ifndef GPUORCH_PROBECACHE_H
#define GPUORCH_PROBECACHE_H

#include "core/strbuf.h"
#include "transport/hosts.h"

/* The controller's file of this kind ("probe", "ledger") for h, in the cache
 * directory above; NULL when there is none (no HOME). */
char *host_cache_path(const struct host *h, const char *kind);
/* Replace that file with text, atomically; a failure only loses the shortcut. */
void host_cache_write(const struct host *h, const char *kind, const char *text, size_t len);
/* 1 and the text in out when there is a kept probe for h, else 0. */
int probe_cache_load(const struct host *h, struct strbuf *out);
/* Keep text as h's probe; a failure only loses the shortcut. */
void probe_cache_save(const struct host *h, const char *text);
/* Forget h's probe (it no longer holds). */
void probe_cache_drop(const struct host *h);

#endif
