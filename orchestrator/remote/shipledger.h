/* shipledger.h -- what the controller knows a host holds: the blobs (blobs.h)
 * it sent there or saw there, so that a run's start command can carry the
 * files a host lacks on its stdin without asking first (remote.h).
 *
 * Kept beside the probe cache (probecache.h) as ledger-<key>.txt, one
 * sha256 a line, sorted. A ledger is a guess, never trusted for
 * correctness: a host that lacks a blob the ledger lists (its work
 * directory was cleaned) says so, and the next start carries it.
 *
 * Beside it, as sent-<key>.txt, the blobs sent there that the host was not
 * yet seen to hold (a controller killed while its start carried them, or
 * before it read the host's answer): the host may have them, so the next
 * start asks it first rather than sending them again unasked. */
#ifndef GPUORCH_SHIPLEDGER_H
#define GPUORCH_SHIPLEDGER_H

#include "remote/pack.h"
#include "transport/hosts.h"

struct shipledger {
	char **hashes;      /* sorted */
	int n;
	int alloc;          /* room in hashes */
	char **sent;        /* sent, not seen held: sorted */
	int nsent;
	int sent_alloc;
};

void shipledger_load(const struct host *h, struct shipledger *l);
int shipledger_has(const struct shipledger *l, const char *sha256);
/* Sent there before, and not seen held since. */
int shipledger_was_sent(const struct shipledger *l, const char *sha256);
/* These n blobs go to the host now: add them to what was sent, and save
 * (before they go: a controller killed on the way knows of them). */
void shipledger_sending(const struct host *h, struct shipledger *l, char *const *hashes, int n);
/* The host holds every file of p now: add them (and drop them from what
 * was sent), and save. */
void shipledger_add_pack(const struct host *h, struct shipledger *l, const struct pack *p);
void shipledger_release(struct shipledger *l);

/* The host agent's binary on h (W/agent/gpuorch-agent-VERSION): seen built
 * there (a start said so), kept as agent-<key>.txt; a start then carries
 * none of its sources (remote.h: agent_held). */
int shipledger_agent_held(const struct host *h, const char *path);
/* path was seen built on h; NULL: h was seen without it (forgotten). */
void shipledger_agent_seen(const struct host *h, const char *path);

#endif
