/* remote.h -- a host's run driven over SSH through the host runner
 * (orchestrator/remote/runner.sh, docs/runner.md): the one way a build or a
 * step runs on a host.
 *
 * remote_runner_follow() is one remote command: it puts the blobs it
 * carries into the host's store and assembles the sources when needed, writes the runner and its plan into the run
 * directory, starts the runner (detached; idempotent: a runner that is
 * running is attached to, a finished one is not started again) and then
 * streams the runner's journal from a byte offset until the runner exits.
 * After a dropped link the controller reconnects and calls it again from
 * the offset it had read (journal.h). remote_runner_kill() stops the runner
 * and everything it started. remote_end_from_event() decodes how an item
 * ended from its journal event. */
#ifndef GPUORCH_REMOTE_H
#define GPUORCH_REMOTE_H

#include <stdint.h>
#include <cjson/cJSON.h>
#include "transport/ssh.h"

struct remote_runner {
	const char *content_dir;  /* W/content/<cid>: holds src/ (.complete), else is
				   * assembled from the manifest and the blob store (blobs.h);
				   * NULL: no sources to check (a plan of plain commands) */
	const char *blobs_dir;    /* W/blobs: every file shipped to the host, by hash */
	const char *manifest;     /* the content's manifest (blobs_manifest); NULL: none */
	const unsigned char *blobs; /* a tar of blobs (blobs_tar) the command carries on its
				   * stdin into the store; NULL: none */
	size_t blobs_len;
	const char *run_dir;      /* W/runs/<run-id> */
	const char *plan;         /* the plan file's text (runplan.h); NULL: already there */
	long long need_kib;       /* with plan: a run whose runner has not started yet starts
				   * only with this much free in run_dir's file system
				   * (diskspace.h); else "disk short" (exit 7). 0: no check */
	int reopen;               /* with plan: first `runner.sh reopen` (--resume): what was
				   * stopped or lost before it ended runs again */
	/* A probe the controller kept (probecache.h) is checked first: sig_script
	 * (probe_sig_script) must set $sig to expect_sig, else nothing starts and
	 * the answer is "probe stale". NULL: no check. */
	const char *sig_script;
	const char *expect_sig;
	/* probe_sig_script's parameters, for the agent's own check of it
	 * (agent_held, below: gpuorch-agent attach computes the same $sig) */
	const char *sig_cuda_home, *sig_python;
	int sig_gpu;
	/* The host's execd (docs/runner.md): its directory on the host, absolute
	 * (W/execd); the start command builds it there once and starts it, and
	 * later commands reach it at remote_execd_socket(execd_dir) without a
	 * login shell. NULL: no execd. */
	const char *execd_dir;
	int execd_idle_s;         /* it leaves after this long unused */
	/* The host agent (orchestrator/host/, docs/runner.md): its directory on
	 * the host, absolute (W/agent). The start command carries its sources;
	 * the host builds it there once per version (after the run, at nice 19),
	 * and from then on it runs the runs in runner.sh's place. NULL: runner.sh. */
	const char *agent_dir;
	/* The controller saw this version of the agent built on the host (a
	 * start said "agent PATH"; hostrun-exec.c keeps that per host): the
	 * start carries none of its sources (~75 KB). A host that lost it runs
	 * runner.sh that once, and the next start carries them. */
	int agent_held;
	/* With agent_held, no blobs carried and no probe first, the command is
	 * the agent itself (`gpuorch-agent attach`, orchestrator/host/
	 * agent-attach.c): a re-run is one exec on the host, no shell script.
	 * What it leaves to start.sh (a content to assemble, an execd to
	 * build) it declines before it changes anything, and this call runs
	 * start.sh then. 1: start.sh always (GPUORCH_NO_ATTACH=1 in the
	 * controller's environment sets it too: A/B measurements). */
	int no_attach;
	/* Probe first (a host with no kept probe): the command runs probe_text
	 * (probe_script_text) and then waits; on_probe gets the probe's output,
	 * fills in the fields above that depend on it (directories, plan,
	 * blobs) and answers 0, and only then is the command told them, on the
	 * same channel: a fresh host's run is one command. Non-zero: stop
	 * (GO_ERR_INTERRUPTED). NULL probe_text: no probe. */
	const char *probe_text;
	int (*on_probe)(const char *out, struct remote_runner *r, void *ctx);
	/* The host lacks blobs the content needs (content_dir's manifest): on
	 * an exec channel, where a second command would start a second login
	 * shell, the command says which and waits; on_missing answers with a
	 * tar of them (blobs_tar; *tar stays the caller's, alive until the
	 * command ends), which the command unpacks before it goes on: a host
	 * that lost its work directory is still one command. Non-zero: stop
	 * (the message in err). NULL: the command ends "content absent". */
	int (*on_missing)(char *const *hashes, int n, const unsigned char **tar, size_t *len,
			  void *ctx, struct strbuf *err);
	void *ctx;                /* on_probe's and on_missing's */
};

#define EXECD_VERSION_LEN 12
/* The execd's version: hex digits of the sha256 of the source gpuorch ships. */
void execd_version(char out[EXECD_VERSION_LEN + 1]);
/* The socket of this version's execd in execd_dir; NULL when execd_dir is
 * not absolute or the path is too long for a Unix socket (no execd then). */
char *remote_execd_socket(const char *execd_dir);
/* The host agent's version this gpuorch ships (its sources' sha256, 12 hex digits). */
const char *remote_agent_version(void);

/* What the start said, on the host's side (out of follow's stderr). */
struct remote_start_info {
	int content_unpacked;     /* the sources were assembled by this call */
	int content_present;      /* the content was complete before this call */
	int content_absent;       /* GO_ERR_NOT_FOUND: upload the missing blobs, call again */
	char **missing;           /* with content_absent: the blobs the host lacks (hashes) */
	int nmissing;
	int probe_stale;          /* GO_ERR_NOT_FOUND: the kept probe no longer holds */
	char runner[64];          /* "started PID", "running PID" or "finished" */
	int reopened;             /* with reopen: the builds and steps that will run again */
	long long disk_short_kib; /* need_kib was not free: the KiB free + 1; 0: not short */
	char agent[256];          /* the host agent that runs the run; "" for runner.sh */
	size_t agent_src_sent;    /* bytes of the agent's sources the command carried */
	char execd[256];          /* the execd's socket when it runs, "building" while it is
				   * built, "" when none was asked for or it cannot be */
	int probe_unanswered;     /* probe first: the command ended before the probe's end */
	int attached;             /* the agent's own command ran the start (no_attach) */
	int agent_declined;       /* it declined: start.sh ran after it */
};

/* Start (or attach to) the runner and stream its journal from offset into
 * on_out until the runner exits (GO_OK), on_out stops it
 * (GO_ERR_INTERRUPTED), or timeout_ms passes (GO_ERR_TIMEOUT).
 * GO_ERR_NOT_FOUND: the content is not on the host: its directory and its
 * manifest now exist; call again carrying a tar of info->missing (blobs_tar;
 * info->content_absent), or the host changed since the kept probe
 * (info->probe_stale). info is filled anew by
 * each call (release what an earlier call left in it first, with
 * remote_start_info_release()). */
enum go_status remote_runner_follow(struct ssh_conn *c, struct remote_runner *r,
				    uint64_t offset, ssh_out_fn on_out, void *ctx, int timeout_ms,
				    struct remote_start_info *info, struct strbuf *err);
void remote_start_info_release(struct remote_start_info *info);
/* Stop the run's runner and every build and step it started; what it
 * killed is journaled as "killed". */
enum go_status remote_runner_kill(struct ssh_conn *c, const char *run_dir, struct strbuf *err);

enum remote_end {
	REMOTE_RUNNING = 0,
	REMOTE_EXITED,           /* exit_code valid */
	REMOTE_SIGNALED,         /* signal valid (killed, crashed) */
	REMOTE_TIMED_OUT,        /* timeout(1) fired */
	REMOTE_LOCK_TIMEOUT,     /* could not get the GPU lock in time */
	REMOTE_VANISHED,         /* no rc and no live process: the host rebooted or the wrapper was killed */
	REMOTE_KILLED            /* stopped by the runner (fail_fast, runner.sh kill, a signal to it) */
};

struct remote_status {
	enum remote_end end;
	int exit_code;
	int signal;
};

/* Read a file of the host into out; one over max bytes keeps its first and
 * its last max/2 bytes with a line between them that starts with
 * REMOTE_DROPPED_MARK and says how many bytes were dropped, so a program's
 * last line (its result) is always read. */
#define REMOTE_DROPPED_MARK "[gpuorch:"
enum go_status remote_fetch_kept(struct ssh_conn *c, const char *path, size_t max,
				 int timeout_ms, struct strbuf *out, struct strbuf *err);

/* Read a file of the host as a stream: on_size gets its size, on_data its
 * bytes as they arrive, all of them when it is at most max bytes, else its
 * first and its last max/2 bytes with on_gap(the bytes between) said where
 * they were dropped (on_gap also gets what the file grew by while it was
 * read). The same line remote_fetch_kept puts there: remote_dropped_line. */
struct remote_stream_sink {
	void (*on_size)(uint64_t size, void *ctx);
	void (*on_data)(const char *data, size_t len, void *ctx);
	void (*on_gap)(uint64_t dropped, void *ctx);
	void *ctx;
};
enum go_status remote_fetch_stream(struct ssh_conn *c, const char *path, uint64_t max,
				   int timeout_ms, const struct remote_stream_sink *sink,
				   struct strbuf *err);
void remote_dropped_line(struct strbuf *sb, uint64_t dropped, uint64_t size, uint64_t kept);

/* How an item ended, from a build_end / step_end journal event's "status"
 * and "rc" (docs/runner.md): rc 128+N is signal N. */
void remote_end_from_event(const cJSON *ev, struct remote_status *st);
/* For messages: "exit 3", "signal 9 (KILL)", "timeout", "lost", ... */
void remote_describe(const struct remote_status *st, struct strbuf *sb);

#endif
