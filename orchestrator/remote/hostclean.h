/* hostclean.h -- remove what gpuorch left on a host that no run has used for a while.
 *
 * Under the host's work directory W: run directories (W/runs/<id>) whose
 * runner is not running and whose top level has not changed for the given
 * age; content directories (W/content/<cid>) whose last use (.complete's
 * mtime, touched by every start that finds the content) is older, unless a
 * live run builds or runs from them; builds (W/builds/<key>) whose last use
 * (rc's mtime, touched on every reuse) is older, unless a live run's plan
 * names them; compiled objects (W/objects/<key>.o) whose last use (their
 * mtime, touched on every reuse) is older, unless a live run's plan names
 * them or a build that stays was linked from them (BUILD/objects); then
 * every blob
 * (W/blobs/<sha256>) that no remaining content's manifest names; and the
 * execd (W/execd) of each version that is not running and was last started
 * longer ago. Every running execd is stopped first (its socket removed: it
 * exits once idle rather than after execd_idle_s). One remote
 * command; a dry run removes nothing and says what it would. */
#ifndef GPUORCH_HOSTCLEAN_H
#define GPUORCH_HOSTCLEAN_H

#include "transport/ssh.h"

struct hostclean_result {
	int runs, contents, builds, blobs;   /* removed (or, dry, to remove) */
	int execds;                          /* execd builds (W/execd) of versions not running */
	int execds_stopped;                  /* running execds stopped (their sockets removed) */
	int agents;                          /* host agents (W/agent) of other versions, unused */
	int objects;                         /* compiled objects (W/objects) */
	long long kib;                       /* their size */
	int kept_live;                       /* content dirs kept for a live run */
};

/* older_than_min: minutes since last use (>= 1). Lines describing each
 * removal are appended to log. */
enum go_status hostclean_run(struct ssh_conn *c, const char *workdir, long older_than_min,
			     int dry_run, struct hostclean_result *res, struct strbuf *log,
			     struct strbuf *err);

/* The execds running under workdir (W/execd): stop them (their sockets
 * removed; a command one runs now finishes), or only count them; *n: how
 * many. One remote command. */
enum go_status hostclean_execds(struct ssh_conn *c, const char *workdir, int stop, int *n,
				struct strbuf *err);
#endif
