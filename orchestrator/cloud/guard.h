/* guard.h -- the watchdog on the instance: a dead-man switch that stops the
 * machine when the controller has gone quiet (docs/cloud.md).
 *
 * guard_install starts, over SSH, a detached shell loop on the instance
 * (setsid, its own session: it outlives the SSH link and gpuorch). It runs
 * the instance's guard_action (default: power off) when no heartbeat came
 * for idle_stop_min and no step or build is running, or when
 * max_lifetime_min has passed since it was installed, busy or not. Files:
 * W/guard/{heartbeat, idle_s, deadline, poll_s, action, pid, fired}. */
#ifndef GPUORCH_CLOUD_GUARD_H
#define GPUORCH_CLOUD_GUARD_H

#include "cloud/instance.h"
#include "transport/ssh.h"

enum go_status guard_install(struct ssh_conn *c, const struct host *h,
			     const struct instance *in, struct strbuf *err);
/* The same with the lifetime cap counted from an earlier moment (the
 * launch): life_left_s is what is left of max_lifetime_min now (<= 0: it
 * has passed, the guard fires at its first look). */
enum go_status guard_install_left(struct ssh_conn *c, const struct host *h,
				  const struct instance *in, double life_left_s, struct strbuf *err);
/* A heartbeat; *fired = 1 when the guard has already fired. */
enum go_status guard_beat(struct ssh_conn *c, const struct host *h, int *fired,
			  struct strbuf *err);
/* Is a guard running there (not fired, not disarmed)? */
enum go_status guard_alive(struct ssh_conn *c, const struct host *h, int *alive,
			   struct strbuf *err);
/* Stop the guard without firing it. */
enum go_status guard_disarm(struct ssh_conn *c, const struct host *h, struct strbuf *err);
/* Seconds between two heartbeats for an instance (a quarter of the idle limit, 1..60). */
double guard_beat_interval_s(const struct instance *in);

#endif
