/* heartbeat.h -- the controller's side of the dead-man switch: one thread
 * that feeds the guard of every instance it is given (guard.h), over SSH
 * connections of its own (a host thread's connection is never shared). If
 * gpuorch dies, the heartbeats stop and each guard fires on its own. */
#ifndef GPUORCH_CLOUD_HEARTBEAT_H
#define GPUORCH_CLOUD_HEARTBEAT_H

#include "cloud/instance.h"

struct heartbeat;

/* n slots, one per host of the run; nothing is fed until heartbeat_add. */
struct heartbeat *heartbeat_start(int n, int accept_new_hostkey);
/* Feed slot i's guard (host h, instance in) from now on; thread-safe. The
 * host must stay valid until heartbeat_remove or heartbeat_stop. */
void heartbeat_add(struct heartbeat *hb, int i, const struct host *h, const struct instance *in);
/* Stop feeding slot i (before disarming or stopping it); waits for a beat in flight. */
void heartbeat_remove(struct heartbeat *hb, int i);
/* Did slot i's guard report that it fired? */
int heartbeat_fired(struct heartbeat *hb, int i);
void heartbeat_stop(struct heartbeat *hb);   /* NULL-safe; joins the thread */

#endif
