/* ssh.h -- SSH through libssh2: connect, verify, authenticate, run, copy.
 *
 * ssh_global_init() once in main() before any thread; then one struct
 * ssh_conn per host thread, never shared. Every wait is bounded by a
 * deadline. Errors name the host: "h100 (127.0.0.1:2222): ...". */
#ifndef GPUORCH_SSH_H
#define GPUORCH_SSH_H

#include <stddef.h>
#include <stdint.h>
#include "core/error.h"

struct ssh_opts {
	const char *label;          /* host name for messages */
	const char *address;
	int port;
	const char *user;
	const char *identity;       /* private key path; NULL: use ssh-agent */
	int use_agent;
	const char *known_hosts;    /* file to verify against */
	int accept_new_hostkey;     /* unknown key: add it to known_hosts (never a changed one) */
	int connect_timeout_ms;     /* TCP connect + handshake + auth */
	int keepalive_s;            /* 0: default 15 */
	int persist_s;              /* >0: keep the session open between runs in a session
				     * keeper (ssh-mux.c) that leaves after this long unused;
				     * commands through the execd go through it */
};

struct ssh_conn;

struct ssh_exec_result {
	int exit_code;              /* valid when signal[0] == 0 */
	char signal[32];            /* "KILL", "TERM", ... when killed by a signal */
	/* a put (ssh_execd_put): the execd's last word of how much it had
	 * read, the most bytes sent ahead of its word at any time, and the
	 * largest bound it was held to (execd-proto.h: execd_flow) */
	uint64_t put_acked, put_ahead_max, put_bound;
};
/* How the command ended, for messages: "signal KILL" or "exit 3". */
void ssh_exec_add_end(struct strbuf *sb, const struct ssh_exec_result *r);

enum go_status ssh_global_init(struct strbuf *err);
void ssh_global_cleanup(void);

enum go_status ssh_connect(const struct ssh_opts *o, struct ssh_conn **out,
			   struct strbuf *err);
void ssh_disconnect(struct ssh_conn *c);   /* NULL-safe */
/* "SHA256:..." fingerprint of the server's host key. */
const char *ssh_fingerprint(const struct ssh_conn *c);
/* A note for the user from ssh_connect, e.g. "h (addr:port): added
 * ssh-ed25519 host key SHA256:... for '[addr]:port' to 'FILE'" when an
 * unknown key was accepted; NULL when there is none. */
const char *ssh_notice(const struct ssh_conn *c);

/* Run one command (a shell command line: build it with
 * strbuf_add_shell_quoted). stdin_data may be NULL. stdout and stderr are
 * drained together and capped (out->max / errout->max if set). Returns
 * GO_ERR_TIMEOUT if it has not finished within timeout_ms (the channel is
 * closed; the remote command may survive: long work uses remote.h). */
enum go_status ssh_exec(struct ssh_conn *c, const char *cmd,
			const void *stdin_data, size_t stdin_len,
			struct strbuf *out, struct strbuf *errout,
			struct ssh_exec_result *res, int timeout_ms, struct strbuf *err);

/* ssh_exec, but stdout goes to on_out as it arrives, and on_out is also
 * called with (NULL, 0) whenever the command has been silent for a while (at
 * most about 0.2 s apart): a non-zero answer stops waiting (GO_ERR_INTERRUPTED;
 * the channel is abandoned, the remote command is not killed). For a reader
 * that follows a long-running remote command (a journal). */
typedef int (*ssh_out_fn)(const char *data, size_t len, void *ctx);
enum go_status ssh_exec_stream(struct ssh_conn *c, const char *cmd,
			       const void *stdin_data, size_t stdin_len,
			       ssh_out_fn on_out, void *out_ctx, struct strbuf *errout,
			       struct ssh_exec_result *res, int timeout_ms, struct strbuf *err);

/* A command's stdin that its reader supplies as the conversation goes, in
 * parts sent one after another as they are (borrowed, never copied: a
 * source tree of tens of MB went through three whole copies): on_out may
 * add parts (ssh_input_add; the caller keeps each alive and unchanged
 * until the command ends) and clear more. EOF is sent once all of it went
 * and more is 0. */
#define SSH_INPUT_PARTS 8
struct ssh_input {
	struct {
		const void *data;
		size_t len;
	} part[SSH_INPUT_PARTS];
	int nparts;
	int more;
	/* through the execd, not a command's stdin but a put of blobs into
	 * this directory (ssh_execd_put) */
	const char *execd_put;
};
/* Appends len bytes at data to in's parts (none for len 0). Returns -1,
 * adding nothing, when in has SSH_INPUT_PARTS parts already. */
int ssh_input_add(struct ssh_input *in, const void *data, size_t len);
/* All of in's parts, in bytes. */
size_t ssh_input_len(const struct ssh_input *in);
/* ssh_exec_stream with such a stdin, always on an exec channel (never the
 * execd, whose framing needs the length first): a command that answers
 * before it is told the rest (the probe, then the plan made from it). */
enum go_status ssh_exec_talk(struct ssh_conn *c, const char *cmd, struct ssh_input *in,
			     ssh_out_fn on_out, void *out_ctx, struct strbuf *errout,
			     struct ssh_exec_result *res, int timeout_ms, struct strbuf *err);
/* ssh_exec_talk that may go through the host's execd (ssh_use_execd): there
 * the stdin given so far goes whole, with its end, and more is ignored (the
 * command must not wait to be told more there: it sees GPUORCH_EXECD in its
 * environment); on an exec channel the conversation holds as above. */
enum go_status ssh_exec_offer(struct ssh_conn *c, const char *cmd, struct ssh_input *in,
			      ssh_out_fn on_out, void *out_ctx, struct strbuf *errout,
			      struct ssh_exec_result *res, int timeout_ms, struct strbuf *err);

/* From now on run commands on c through the host's execd listening on the
 * Unix socket sock (an absolute path on the host; docs/runner.md, "execd"):
 * a direct-streamlocal channel, no login shell. When it is not there or
 * refuses a command as stale, nothing ran: ssh_exec runs the command the
 * ordinary way and c forgets the execd. NULL: the ordinary way. */
void ssh_use_execd(struct ssh_conn *c, const char *sock);
/* The blobs at data (blobs_frames) written by the host's execd (the one
 * ssh_use_execd named) into dir on the host, each checked against its
 * hash there: res says how it ended (0: all stored; errout what was not).
 * GO_ERR_NOT_FOUND, nothing sent, when c has no execd or it ran nothing
 * (then c forgets it, as ssh_exec does). */
enum go_status ssh_execd_put(struct ssh_conn *c, const char *dir, const void *data, size_t len,
			     struct strbuf *errout, struct ssh_exec_result *res, int timeout_ms,
			     struct strbuf *err);
/* 1 when c's last command went to the execd (whatever its outcome). */
int ssh_via_execd(const struct ssh_conn *c);
/* What the tests check about the link (tests/tools/sshtool.c): 1 when c's
 * socket has TCP_NODELAY (no delayed-ACK stall on a small request), and how
 * many channels c has closed whose server CLOSE is still to come (a command
 * let go without waiting for its exit). */
int ssh_nodelay(const struct ssh_conn *c);
int ssh_closes_pending(const struct ssh_conn *c);

/* ---- the session keeper (ssh-mux.c; docs/host-runner-measurements.md, "Session keeper") ----
 * For a host with persist_s, ssh_connect first asks the host's keeper, a
 * process of its own that holds an authenticated session and relays each
 * local client to a new direct-streamlocal channel to the execd. When it
 * answers, c opens no session of its own until a command needs one (an exec
 * channel, SFTP); when it does not, c connects the ordinary way and starts a
 * keeper for the next run. */
/* 1 while c has no session of its own and its commands go through a keeper. */
int ssh_via_keeper(const struct ssh_conn *c);
/* The hidden command `gpuorch SSH_KEEPER_ARG ...` that ssh_connect starts:
 * returns the process exit code. */
#define SSH_KEEPER_ARG "__ssh-keeper"
int ssh_keeper_main(int argc, char **argv);
/* Ask the keeper of the host reached with o to leave now: GO_OK when one
 * left, GO_ERR_NOT_FOUND when none was running. */
enum go_status ssh_keeper_stop(const struct ssh_opts *o, struct strbuf *err);

/* SFTP upload of a buffer: written to REMOTE.part with large writes, then
 * renamed over REMOTE. *bytes_sent counts payload bytes. */
enum go_status ssh_upload(struct ssh_conn *c, const void *data, size_t len,
			  const char *remote_path, int mode, uint64_t *bytes_sent,
			  int timeout_ms, struct strbuf *err);
/* SFTP download into a buffer, at most max bytes (GO_ERR_REMOTE past it). */
enum go_status ssh_download(struct ssh_conn *c, const char *remote_path,
			    struct strbuf *data, size_t max, int timeout_ms,
			    struct strbuf *err);

#endif
