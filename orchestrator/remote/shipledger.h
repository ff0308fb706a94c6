/* shipledger.h -- what the controller knows a host holds: the blobs (blobs.h)
 * it sent there or saw there, so that a run's start command can carry the
 * files a host lacks on its stdin without asking first (remote.h).
 *
 * Kept beside the probe cache (probecache.h) as ledger-<key>.txt, one
 * sha256 a line, sorted. A ledger is a guess, never trusted for
 * correctness: a host that lacks a blob the ledger lists (its work
 * directory was cleaned) says so, and the next start carries it. */
#ifndef GPUORCH_SHIPLEDGER_H
#define GPUORCH_SHIPLEDGER_H

#include "remote/pack.h"
#include "transport/hosts.h"

struct shipledger {
	char **hashes;      /* sorted */
	int n;
	int alloc;          /* room in hashes */
};

void shipledger_load(const struct host *h, struct shipledger *l);
int shipledger_has(const struct shipledger *l, const char *sha256);
/* The host holds every file of p now: add them, and save. */
void shipledger_add_pack(const struct host *h, struct shipledger *l, const struct pack *p);
void shipledger_release(struct shipledger *l);

#endif
