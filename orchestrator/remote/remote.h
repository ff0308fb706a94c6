/* remote.h -- steps that run detached on a host and survive the SSH link.
 *
 * A step lives in a remote directory DIR holding: cmd (the command), pgid
 * (its session id), stdout, stderr, t_run and t_end (wall-clock seconds when
 * the command itself started, after any GPU lock, and ended), rc (written last, atomically, by a
 * wrapper: the exit status as the shell saw it, or "timeout"). The command
 * runs under setsid + timeout(1) (+ flock(1) when a GPU lock is named), so a
 * dropped connection does not kill it, and at its timeout its whole process
 * group is killed; remote_step_kill() kills every process of its session.
 * The controller polls with remote_step_poll(); on a lost connection it
 * reconnects and polls again. */
#ifndef GPUORCH_REMOTE_H
#define GPUORCH_REMOTE_H

#include "transport/ssh.h"

struct remote_step {
	const char *dir;         /* step directory (created), relative to $HOME or absolute */
	const char *cwd;         /* working directory of the command */
	const char *command;     /* shell command line, already quoted */
	int timeout_s;           /* killed (TERM, then KILL 5 s later) past this */
	const char *lock_path;   /* flock file (one timed job per GPU), or NULL */
	int lock_wait_s;         /* how long to wait for the lock */
};

enum remote_end {
	REMOTE_RUNNING = 0,
	REMOTE_EXITED,           /* exit_code valid */
	REMOTE_SIGNALED,         /* signal valid (killed, crashed) */
	REMOTE_TIMED_OUT,        /* timeout(1) fired */
	REMOTE_LOCK_TIMEOUT,     /* could not get the GPU lock in time */
	REMOTE_VANISHED          /* no rc and no live process: the host rebooted or the wrapper was killed */
};

struct remote_status {
	enum remote_end end;
	int exit_code;
	int signal;
};

enum go_status remote_step_start(struct ssh_conn *c, const struct remote_step *s,
				 struct strbuf *err);
/* Wait up to wait_ms (bounded, server side) for the step to end. */
enum go_status remote_step_poll(struct ssh_conn *c, const char *dir, int wait_ms,
				struct remote_status *st, struct strbuf *err);
/* Kill every process of the step's session (TERM, then KILL). */
enum go_status remote_step_kill(struct ssh_conn *c, const char *dir, struct strbuf *err);
/* Read DIR/stdout and DIR/stderr. One over max bytes keeps its first and
 * its last max/2 bytes with a line between them that starts with
 * REMOTE_DROPPED_MARK and says how many bytes were dropped, so a program's
 * last line (its result) is always read. */
#define REMOTE_DROPPED_MARK "[gpuorch:"
enum go_status remote_step_output(struct ssh_conn *c, const char *dir, struct strbuf *out,
				  struct strbuf *errout, size_t max, struct strbuf *err);
/* "PASS"-independent decoding for records: "exit 3", "signal 9 (KILL)", "timeout". */
void remote_describe(const struct remote_status *st, struct strbuf *sb);

#endif
