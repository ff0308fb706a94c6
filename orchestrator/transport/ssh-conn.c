/* ssh-conn.c -- what every ssh*.c stands on: the connection's state, the one
 * map from libssh2 errors to go_status, and socket waits (see ssh.c's DESIGN). */
#include "transport/ssh-int.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include "core/timeutil.h"
#include "core/banned.h"

/* ------------------------------------------------------------------ */
/* state                                                               */

void ssh_conn_set_state(struct ssh_conn *c, enum conn_state st)
{
	/* BROKEN is final: a lost session cannot be revived */
	if (c->state == CONN_BROKEN)
		return;
	c->state = st;
}

/* ------------------------------------------------------------------ */
/* errors                                                              */

const char *ssh_sftp_status_text(unsigned long st)
{
	switch (st) {
	case LIBSSH2_FX_EOF: return "end of file";
	case LIBSSH2_FX_NO_SUCH_FILE: return "no such file";
	case LIBSSH2_FX_PERMISSION_DENIED: return "permission denied";
	case LIBSSH2_FX_FAILURE: return "failure";
	case LIBSSH2_FX_BAD_MESSAGE: return "bad message";
	case LIBSSH2_FX_NO_CONNECTION: return "no connection";
	case LIBSSH2_FX_CONNECTION_LOST: return "connection lost";
	case LIBSSH2_FX_OP_UNSUPPORTED: return "operation unsupported";
	case LIBSSH2_FX_INVALID_HANDLE: return "invalid handle";
	case LIBSSH2_FX_NO_SUCH_PATH: return "no such path";
	case LIBSSH2_FX_FILE_ALREADY_EXISTS: return "file already exists";
	case LIBSSH2_FX_WRITE_PROTECT: return "write protected";
	case LIBSSH2_FX_NO_MEDIA: return "no media";
	case LIBSSH2_FX_NO_SPACE_ON_FILESYSTEM: return "no space left on device";
	case LIBSSH2_FX_QUOTA_EXCEEDED: return "quota exceeded";
	case LIBSSH2_FX_UNKNOWN_PRINCIPAL: return "unknown principal";
	case LIBSSH2_FX_LOCK_CONFLICT: return "lock conflict";
	case LIBSSH2_FX_DIR_NOT_EMPTY: return "directory not empty";
	case LIBSSH2_FX_NOT_A_DIRECTORY: return "not a directory";
	case LIBSSH2_FX_INVALID_FILENAME: return "invalid file name";
	case LIBSSH2_FX_LINK_LOOP: return "link loop";
	default: return "unknown SFTP status";
	}
}

int ssh_is_socket_error(int rc)
{
	switch (rc) {
	case LIBSSH2_ERROR_SOCKET_NONE:
	case LIBSSH2_ERROR_BANNER_RECV:
	case LIBSSH2_ERROR_BANNER_SEND:
	case LIBSSH2_ERROR_SOCKET_SEND:
	case LIBSSH2_ERROR_SOCKET_DISCONNECT:
	case LIBSSH2_ERROR_SOCKET_TIMEOUT:
	case LIBSSH2_ERROR_SOCKET_RECV:
	case LIBSSH2_ERROR_BAD_SOCKET:
		return 1;
	default:
		return 0;
	}
}

/* The one map from a libssh2 error code to a go_status and message.
 * what: the operation, e.g. "cannot open an exec channel". */
enum go_status ssh_map_error(struct ssh_conn *c, int rc, const char *what,
			     struct strbuf *err)
{
	char *msg = NULL;
	int len = 0;
	enum go_status st;

	if (c->session)
		libssh2_session_last_error(c->session, &msg, &len, 0);
	if (!msg || !*msg)
		msg = "unknown error";

	if (rc == LIBSSH2_ERROR_SFTP_PROTOCOL && c->sftp) {
		unsigned long fx = libssh2_sftp_last_error(c->sftp);
		st = fx == LIBSSH2_FX_NO_SUCH_FILE || fx == LIBSSH2_FX_NO_SUCH_PATH
			? GO_ERR_NOT_FOUND : GO_ERR_SSH;
		return go_fail(err, st, "%s: %s: %s (SFTP status %lu)", c->where, what,
			       ssh_sftp_status_text(fx), fx);
	}
	if (ssh_is_socket_error(rc)) {
		ssh_conn_set_state(c, CONN_BROKEN);
		return go_fail(err, GO_ERR_CONNECT,
			       "%s: %s: connection lost (%s); check that the host is up and sshd is running",
			       c->where, what, msg);
	}
	switch (rc) {
	case LIBSSH2_ERROR_TIMEOUT:
		st = GO_ERR_TIMEOUT;
		break;
	case LIBSSH2_ERROR_AUTHENTICATION_FAILED:
	case LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED:
	case LIBSSH2_ERROR_KEYFILE_AUTH_FAILED:
	case LIBSSH2_ERROR_METHOD_NONE:
		st = GO_ERR_AUTH;
		break;
	case LIBSSH2_ERROR_FILE:
		st = GO_ERR_IO;
		break;
	case LIBSSH2_ERROR_KEX_FAILURE:
	case LIBSSH2_ERROR_KEY_EXCHANGE_FAILURE:
	case LIBSSH2_ERROR_HOSTKEY_INIT:
	case LIBSSH2_ERROR_HOSTKEY_SIGN:
	case LIBSSH2_ERROR_INVALID_MAC:
	case LIBSSH2_ERROR_DECRYPT:
	case LIBSSH2_ERROR_PROTO:
		ssh_conn_set_state(c, CONN_BROKEN);
		st = GO_ERR_SSH;
		break;
	default:
		st = GO_ERR_SSH;
		break;
	}
	return go_fail(err, st, "%s: %s: %s (libssh2 error %d)", c->where, what, msg, rc);
}

enum go_status ssh_fail_timeout(struct ssh_conn *c, const char *what, int timeout_ms,
				struct strbuf *err)
{
	return go_fail(err, GO_ERR_TIMEOUT, "%s: %s: timed out after %d.%01d s",
		       c->where, what, timeout_ms / 1000, (timeout_ms % 1000) / 100);
}

/* ------------------------------------------------------------------ */
/* waiting                                                             */

/* About to wait for the server: acknowledge what came in now, not on the
 * delayed-ACK timer. sshd's socket has Nagle on until a session starts, so
 * a reply it writes in pieces (after authentication: the host keys, then
 * the channel's confirmation) holds its last piece until our ACK of the
 * first arrives -- up to 40 ms on Linux for every such exchange, measured
 * as a 42-ms gap between a channel open and its exec on loopback.
 * TCP_QUICKACK sends a pending ACK at once and leaves delayed-ACK mode
 * (the kernel may re-enter it, hence before every wait). Linux only; a
 * failure changes nothing but the timing. */
void ssh_ack_now(int fd)
{
#ifdef TCP_QUICKACK
	int one = 1;
	if (fd >= 0)
		(void)setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
#else
	(void)fd;
#endif
}

/* Wait until the socket is ready in the direction libssh2 is blocked on,
 * or until the deadline. Returns 0 when ready or worth retrying, -1 past
 * the deadline. Sends keepalives while only reading is pending. */
int ssh_wait_socket(struct ssh_conn *c, int64_t deadline)
{
	struct pollfd pfd;
	int dir, ms, rc;
	int64_t left = deadline - time_mono_ms();

	if (left <= 0)
		return -1;
	dir = libssh2_session_block_directions(c->session);
	pfd.fd = c->sock;
	pfd.events = 0;
	pfd.revents = 0;
	if (dir & LIBSSH2_SESSION_BLOCK_INBOUND)
		pfd.events |= POLLIN;
	if (dir & LIBSSH2_SESSION_BLOCK_OUTBOUND)
		pfd.events |= POLLOUT;
	if (!pfd.events)
		pfd.events = POLLIN;
	if (pfd.events & POLLIN)
		ssh_ack_now(c->sock);
	ms = left > 1000 ? 1000 : (int)left;
	if (!(dir & LIBSSH2_SESSION_BLOCK_OUTBOUND) && c->state == CONN_READY) {
		int next = 0;
		if (libssh2_keepalive_send(c->session, &next) == 0 && next > 0 &&
		    next * 1000 < ms)
			ms = next * 1000;
	}
	rc = poll(&pfd, 1, ms);
	if (rc < 0 && errno != EINTR)
		time_sleep_ms(10);
	return 0;
}

/* ------------------------------------------------------------------ */
/* channels let go (ssh-exec.c channel_discard)                        */

void ssh_reap_closing(struct ssh_conn *c, int all)
{
	int i, n = 0;

	for (i = 0; i < c->nclosing; i++) {
		/* not blocking: EAGAIN while the server's CLOSE is not in */
		if (!all && c->state != CONN_BROKEN &&
		    libssh2_channel_free(c->closing[i]) == LIBSSH2_ERROR_EAGAIN)
			c->closing[n++] = c->closing[i];
		/* else freed, or failed (a lost link): left to the session */
	}
	c->nclosing = n;
	if (!n) {
		free(c->closing);
		c->closing = NULL;
	}
}

int ssh_nodelay(const struct ssh_conn *c)
{
	int on = 0;
	socklen_t len = sizeof(on);
	if (!c || c->sock < 0 || getsockopt(c->sock, IPPROTO_TCP, TCP_NODELAY, &on, &len) < 0)
		return 0;
	return on != 0;
}

int ssh_closes_pending(const struct ssh_conn *c)
{
	return c ? c->nclosing : 0;
}

enum go_status ssh_check_usable(struct ssh_conn *c, struct strbuf *err)
{
	if (c->state == CONN_READY)
		return GO_OK;
	return go_fail(err, GO_ERR_CONNECT,
		       "%s: the SSH connection was lost earlier; reconnect", c->where);
}
