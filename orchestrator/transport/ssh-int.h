/* ssh-int.h -- what ssh*.c share: struct ssh_conn, its states, error mapping, socket waits.
 *
 * Calls go one way: ssh.c -> ssh-hostkey.c, ssh-auth.c -> ssh-conn.c;
 * ssh-exec.c, ssh-sftp.c -> ssh-conn.c; ssh.c, ssh-exec.c -> ssh-mux.c;
 * ssh-keeper.c -> ssh.c, ssh-conn.c.
 *
 * Internal to orchestrator/transport/ssh*.c; ssh.h stays the public contract. */
#ifndef GPUORCH_SSH_INT_H
#define GPUORCH_SSH_INT_H

#include <stddef.h>
#include <stdint.h>
#include <libssh2.h>
#include <libssh2_sftp.h>
#include "transport/ssh.h"

#define SSH_IO_CHUNK (256 * 1024)
#define SSH_CLOSE_GRACE_MS 2000

enum conn_state {
	CONN_NEW = 0,
	CONN_TCP,
	CONN_HANDSHAKE,
	CONN_VERIFIED,
	CONN_READY,
	CONN_BROKEN
};

struct ssh_conn {
	enum conn_state state;
	int sock;
	LIBSSH2_SESSION *session;
	LIBSSH2_SFTP *sftp;
	char *where;            /* "label (address:port)" for messages */
	char *label;
	char *address;
	int port;
	char *user;
	char fingerprint[64];   /* "SHA256:..." */
	char *notice;           /* e.g. host key added; NULL when none */
	int keepalive_s;
	char *execd;            /* the host's execd socket (ssh_use_execd); NULL: none */
	int via_execd;          /* the last command went through it */
	/* the session keeper (ssh-mux.c) */
	char *mux;              /* its socket, while c uses it; NULL: none */
	struct ssh_opts *lazy;  /* the options for opening c's own session when a
				 * command needs one (a copy; NULL: c has one already) */
	int mux_launcher;       /* pid of the keeper's launcher, reaped in ssh_disconnect; 0: none */
	/* channels let go with our CLOSE sent and the server's not yet in
	 * (ssh-exec.c, channel_discard): freed by ssh_reap_closing once it
	 * is, else with the session */
	LIBSSH2_CHANNEL **closing;
	int nclosing;
};

/* ssh-conn.c: state, errors, waiting (every other ssh*.c stands on these) */
/* Set the connection's state; BROKEN is final. */
void ssh_conn_set_state(struct ssh_conn *c, enum conn_state st);
/* Text of an SFTP status code, e.g. "no such file". */
const char *ssh_sftp_status_text(unsigned long st);
/* Is this libssh2 error a lost or unusable socket? */
int ssh_is_socket_error(int rc);
/* The one map from a libssh2 error code to a go_status and message. */
enum go_status ssh_map_error(struct ssh_conn *c, int rc, const char *what,
			     struct strbuf *err);
/* GO_ERR_TIMEOUT with "WHERE: WHAT: timed out after N.N s". */
enum go_status ssh_fail_timeout(struct ssh_conn *c, const char *what, int timeout_ms,
				struct strbuf *err);
/* Wait for the socket in libssh2's blocked direction; -1 past the deadline. */
int ssh_wait_socket(struct ssh_conn *c, int64_t deadline);
/* acknowledge what the server sent at once (before waiting on it) */
void ssh_ack_now(int fd);
/* One try at a channel to the Unix socket path on the host (OpenSSH's
 * "direct-streamlocal@openssh.com"): the channel, or NULL with libssh2's
 * error in *rc (LIBSSH2_ERROR_EAGAIN: wait with ssh_wait_socket and try
 * again; LIBSSH2_ERROR_CHANNEL_FAILURE: sshd would not connect it). */
LIBSSH2_CHANNEL *ssh_streamlocal_try(struct ssh_conn *c, const char *path, int *rc);
/* Free the channels of c->closing whose close the server has answered (no
 * waiting); all=1: forget them all (the session frees them). */
void ssh_reap_closing(struct ssh_conn *c, int all);
/* GO_OK when the connection is READY, else GO_ERR_CONNECT. */
enum go_status ssh_check_usable(struct ssh_conn *c, struct strbuf *err);

/* Run EXPR (a libssh2 call returning int) until it is not EAGAIN or the
 * deadline passes; leaves the result in RC, LIBSSH2_ERROR_TIMEOUT past the
 * deadline. */
#define SSH_RETRY(c, deadline, rc, expr)                                   \
	do {                                                               \
		for (;;) {                                                 \
			(rc) = (expr);                                     \
			if ((rc) != LIBSSH2_ERROR_EAGAIN)                  \
				break;                                     \
			if (ssh_wait_socket((c), (deadline)) < 0) {        \
				(rc) = LIBSSH2_ERROR_TIMEOUT;              \
				break;                                     \
			}                                                  \
		}                                                          \
	} while (0)

/* ssh.c: the session itself */
/* Open c's own session when it has none yet (a connection through a
 * keeper, ssh-mux.c): GO_OK at once when it has one. */
enum go_status ssh_need_session(struct ssh_conn *c, struct strbuf *err);

/* ssh-mux.c: the session keeper's client side */
/* The keeper's socket for these options in a private directory, or NULL
 * (why in *why) when there can be none. */
char *ssh_mux_path(const struct ssh_opts *o, struct strbuf *why);
/* Is the keeper at path alive? 0 with its host key's fingerprint in fp. */
int ssh_mux_hello(const char *path, char *fp, size_t fplen, int timeout_ms);
/* Start a keeper for o at path (after c connected the ordinary way). */
void ssh_mux_launch(struct ssh_conn *c, const struct ssh_opts *o, const char *path);
/* A local stream through c's keeper to the Unix socket sock on the host:
 * an fd, or -1 with *refused when the keeper's sshd would not connect it
 * (as open_streamlocal), or -1 with *refused 0 when the keeper is gone or
 * broken (c->mux is then forgotten: use c's own session). */
int ssh_mux_open(struct ssh_conn *c, const char *sock, int64_t deadline, int *refused);

/* ssh-hostkey.c: known_hosts, fingerprints (called by ssh.c's connect) */
/* Check the server's host key against o->known_hosts (or record a new one). */
enum go_status ssh_verify_host_key(struct ssh_conn *c, const struct ssh_opts *o,
				   struct strbuf *err);

/* ssh-auth.c: authentication (called by ssh.c's connect) */
/* Log in with the keys of ssh-agent. */
enum go_status ssh_auth_agent(struct ssh_conn *c, int64_t deadline, int timeout_ms,
			      struct strbuf *err);
/* Log in with a private key file (and its .pub when there is one). */
enum go_status ssh_auth_keyfile(struct ssh_conn *c, const char *identity, int64_t deadline,
				int timeout_ms, struct strbuf *err);

#endif
