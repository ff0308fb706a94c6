/* ssh.c -- SSH through libssh2: global init, TCP, connect (host key, auth), disconnect.
 *
 * DESIGN
 * One struct ssh_conn per host thread owns one TCP socket, one libssh2
 * session (non-blocking) and, lazily, one SFTP session. Nothing is shared
 * between threads except libssh2's global state (ssh_global_init, once, in
 * main before any thread).
 *
 * Every libssh2 call runs in a loop "call; on EAGAIN ssh_wait_socket();
 * until the deadline". ssh_wait_socket() polls the socket in the directions
 * libssh2 says it is blocked on (libssh2_session_block_directions), never
 * longer than the deadline, and sends keepalives while only reading is
 * pending (sending one while an outgoing packet is half-written would
 * interleave packets).
 *
 * The connection goes NEW -> TCP -> HANDSHAKE -> VERIFIED -> READY, or to
 * BROKEN after a lost socket; ssh_conn_set_state() is the one place that
 * changes it. Host key checking happens before authentication: a changed
 * key stops everything (no credentials are offered, nothing is run); an
 * unknown key is refused unless accept_new_hostkey, and then the new line
 * is appended to the known_hosts file (appending keeps the user's other
 * lines and comments, which libssh2_knownhost_writefile would rewrite).
 *
 * ssh_map_error() is the one function that turns a libssh2 (or SFTP) error
 * into an enum go_status and a message that names the host.
 *
 * A host with persist_s may be reached through its session keeper
 * (ssh-mux.c): ssh_connect then returns a READY connection with no session
 * of its own (c->mux set, c->lazy a copy of the options), whose execd
 * commands go to the keeper; ssh_need_session() opens its own session the
 * ordinary way the first time a command needs one (exec, SFTP), or after the
 * keeper is found gone.
 *
 * FILES
 * ssh.c: global init, TCP, connect/disconnect (on top of the others);
 * ssh-conn.c: the connection's state, error mapping, waiting (under all the
 * others); ssh-hostkey.c: known_hosts and the host key check; ssh-auth.c: agent
 * and key-file authentication; ssh-exec.c: ssh_exec; ssh-sftp.c: SFTP
 * upload and download; ssh-mux.c: the session keeper's client side;
 * ssh-keeper.c: the keeper process; ssh-int.h: what they share. */
#include "transport/ssh-int.h"
#include "core/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include "core/timeutil.h"
#include "core/banned.h"

#define SSH_DEFAULT_CONNECT_MS 10000
#define SSH_DEFAULT_KEEPALIVE_S 15
#define SSH_MUX_HELLO_MS 2000

static void close_session(struct ssh_conn *c);

static int global_ready;

/* ------------------------------------------------------------------ */
/* state, global init                                                  */

enum go_status ssh_global_init(struct strbuf *err)
{
	int rc;

	if (global_ready)
		return GO_OK;
	rc = libssh2_init(0);
	if (rc)
		return go_fail(err, GO_ERR_SSH, "cannot initialise libssh2 (error %d)", rc);
	global_ready = 1;
	return GO_OK;
}

void ssh_global_cleanup(void)
{
	if (global_ready)
		libssh2_exit();
	global_ready = 0;
}

const char *ssh_fingerprint(const struct ssh_conn *c)
{
	return c ? c->fingerprint : "";
}

const char *ssh_notice(const struct ssh_conn *c)
{
	return c ? c->notice : NULL;
}

/* ------------------------------------------------------------------ */
/* TCP                                                                 */

static enum go_status tcp_connect(struct ssh_conn *c, int64_t deadline, int timeout_ms,
				  struct strbuf *err)
{
	struct addrinfo hints, *res = NULL, *ai;
	char portstr[16];
	int rc, last_errno = 0, timed_out = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	snprintf(portstr, sizeof(portstr), "%d", c->port);
	rc = getaddrinfo(c->address, portstr, &hints, &res);
	if (rc)
		return go_fail(err, GO_ERR_CONNECT, "%s: cannot resolve '%s': %s",
			       c->where, c->address, gai_strerror(rc));

	for (ai = res; ai; ai = ai->ai_next) {
		struct pollfd pfd;
		int fd, soerr = 0, one = 1;
		socklen_t sl = sizeof(soerr);
		int64_t left;

		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			last_errno = errno;
			continue;
		}
		if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
			last_errno = errno;
			close(fd);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
			c->sock = fd;
			break;
		}
		if (errno != EINPROGRESS) {
			last_errno = errno;
			close(fd);
			continue;
		}
		pfd.fd = fd;
		pfd.events = POLLOUT;
		pfd.revents = 0;
		for (;;) {
			left = deadline - time_mono_ms();
			if (left <= 0) {
				rc = 0;
				break;
			}
			rc = poll(&pfd, 1, left > 1000 ? 1000 : (int)left);
			if (rc != 0 && !(rc < 0 && errno == EINTR))
				break;
		}
		if (rc == 0) {
			timed_out = 1;
			close(fd);
			break;
		}
		if (rc < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0) {
			last_errno = errno;
			close(fd);
			continue;
		}
		if (soerr) {
			last_errno = soerr;
			close(fd);
			continue;
		}
		c->sock = fd;
		break;
	}
	freeaddrinfo(res);
	if (c->sock >= 0) {
		ssh_conn_set_state(c, CONN_TCP);
		return GO_OK;
	}
	if (timed_out)
		return go_fail(err, GO_ERR_CONNECT,
			       "%s: connection timed out after %d s; check the address, port and firewall",
			       c->where, (timeout_ms + 999) / 1000);
	if (last_errno == ECONNREFUSED)
		return go_fail(err, GO_ERR_CONNECT,
			       "%s: connection refused; is sshd listening on port %d?",
			       c->where, c->port);
	return go_fail(err, GO_ERR_CONNECT, "%s: cannot connect: %s", c->where,
		       strerror(last_errno ? last_errno : EHOSTUNREACH));
}

/* ------------------------------------------------------------------ */
/* connect / disconnect                                                */

/* Open c's session: TCP, handshake, host key, authentication. On failure
 * c has no session or socket left (c->state says how far it got). */
static enum go_status conn_open(struct ssh_conn *c, const struct ssh_opts *o,
				struct strbuf *err)
{
	int timeout_ms = o->connect_timeout_ms > 0 ? o->connect_timeout_ms : SSH_DEFAULT_CONNECT_MS;
	int64_t deadline = time_mono_ms() + timeout_ms;
	enum go_status st;
	int rc;

	st = tcp_connect(c, deadline, timeout_ms, err);
	if (st)
		return st;

	c->session = libssh2_session_init();
	if (!c->session) {
		st = go_fail(err, GO_ERR_SSH, "%s: cannot create an SSH session", c->where);
		goto fail;
	}
	libssh2_session_set_blocking(c->session, 0);
	libssh2_keepalive_config(c->session, 1, (unsigned)c->keepalive_s);
	SSH_RETRY(c, deadline, rc, libssh2_session_handshake(c->session, c->sock));
	if (rc == LIBSSH2_ERROR_TIMEOUT) {
		st = ssh_fail_timeout(c, "SSH handshake", timeout_ms, err);
		goto fail;
	}
	if (rc) {
		st = ssh_map_error(c, rc, "SSH handshake failed", err);
		goto fail;
	}
	ssh_conn_set_state(c, CONN_HANDSHAKE);

	st = ssh_verify_host_key(c, o, err);
	if (st)
		goto fail;

	if (o->identity && *o->identity)
		st = ssh_auth_keyfile(c, o->identity, deadline, timeout_ms, err);
	else
		st = ssh_auth_agent(c, deadline, timeout_ms, err);
	if (st)
		goto fail;
	ssh_conn_set_state(c, CONN_READY);
	return GO_OK;
fail:
	close_session(c);
	return st;
}

static struct ssh_opts *opts_copy(const struct ssh_opts *o)
{
	struct ssh_opts *d = xmalloc(sizeof(*d));
	*d = *o;
	d->label = o->label ? xstrdup(o->label) : NULL;
	d->address = xstrdup(o->address);
	d->user = xstrdup(o->user);
	d->identity = o->identity ? xstrdup(o->identity) : NULL;
	d->known_hosts = o->known_hosts ? xstrdup(o->known_hosts) : NULL;
	return d;
}

static void opts_free(struct ssh_opts *o)
{
	if (!o)
		return;
	free((char *)o->label);
	free((char *)o->address);
	free((char *)o->user);
	free((char *)o->identity);
	free((char *)o->known_hosts);
	free(o);
}

static enum go_status connect_do(const struct ssh_opts *o, struct ssh_conn **out,
				 struct strbuf *err)
{
	struct ssh_conn *c;
	enum go_status st;
	char *mux = NULL;

	*out = NULL;
	if (!global_ready && (st = ssh_global_init(err)))
		return st;
	c = xcalloc(1, sizeof(*c));
	c->sock = -1;
	c->label = xstrdup(o->label ? o->label : o->address);
	c->address = xstrdup(o->address ? o->address : "");
	c->port = o->port > 0 ? o->port : 22;
	c->user = xstrdup(o->user ? o->user : "");
	c->keepalive_s = o->keepalive_s > 0 ? o->keepalive_s : SSH_DEFAULT_KEEPALIVE_S;
	c->where = xstrfmt("%s (%s:%d)", c->label, c->address, c->port);

	if (!o->address || !*o->address) {
		st = go_fail(err, GO_ERR_HOSTS, "%s: no address to connect to", c->label);
		goto fail;
	}
	if (!*c->user) {
		st = go_fail(err, GO_ERR_HOSTS, "%s: no user to log in as", c->where);
		goto fail;
	}
	if (o->persist_s > 0) {
		struct strbuf why = STRBUF_INIT;
		mux = ssh_mux_path(o, &why);
		if (!mux)
			c->notice = xstrfmt("%s: no session keeper: %s", c->where, why.buf);
		strbuf_release(&why);
		if (mux && !ssh_mux_hello(mux, c->fingerprint, sizeof(c->fingerprint),
					  SSH_MUX_HELLO_MS)) {
			/* the keeper holds a verified, authenticated session:
			 * c opens its own only when a command needs one */
			c->mux = mux;
			c->lazy = opts_copy(o);
			c->lazy->accept_new_hostkey = 0;
			ssh_conn_set_state(c, CONN_READY);
			*out = c;
			return GO_OK;
		}
	}
	st = conn_open(c, o, err);
	if (st)
		goto fail;
	if (mux)
		ssh_mux_launch(c, o, mux);   /* for the next run */
	free(mux);
	*out = c;
	return GO_OK;
fail:
	free(mux);
	ssh_disconnect(c);
	return st;
}

enum go_status ssh_connect(const struct ssh_opts *o, struct ssh_conn **out,
			   struct strbuf *err)
{
	int64_t t0 = trace_now_us();
	enum go_status st = connect_do(o, out, err);

	if (trace_on()) {
		struct trace_args a = TRACE_ARGS_INIT;
		struct strbuf where = STRBUF_INIT;
		strbuf_addf(&where, "%s@%s:%d", o->user ? o->user : "", o->address ? o->address : "",
			    o->port > 0 ? o->port : 22);
		a.detail = where.buf;
		a.status = st ? err->buf : "ok";
		a.via = st == GO_OK && (*out)->mux ? "keeper" : "tcp";
		trace_span(o->label ? o->label : o->address, "connect", t0, &a);
		strbuf_release(&where);
	}
	return st;
}

enum go_status ssh_need_session(struct ssh_conn *c, struct strbuf *err)
{
	enum go_status st;
	int64_t t0;

	if (c->session)
		return GO_OK;
	if (!c->lazy || c->state == CONN_BROKEN)
		return ssh_check_usable(c, err);
	/* its keeper's session was verified by ssh_connect with the same
	 * known_hosts; this one is checked again all the same */
	free(c->mux);
	c->mux = NULL;
	ssh_conn_set_state(c, CONN_NEW);
	t0 = trace_now_us();
	st = conn_open(c, c->lazy, err);
	opts_free(c->lazy);
	c->lazy = NULL;
	if (st)
		ssh_conn_set_state(c, CONN_BROKEN);
	if (trace_on()) {
		struct trace_args a = TRACE_ARGS_INIT;
		a.status = st ? err->buf : "ok";
		a.via = "tcp";
		trace_span(c->label, "session", t0, &a);
	}
	return st;
}

int ssh_via_keeper(const struct ssh_conn *c)
{
	return c && c->mux && !c->session;
}

/* Say goodbye on c's session (unless it is broken), free it and close its
 * socket: the end of a connection, and of a failed open. */
static void close_session(struct ssh_conn *c)
{
	ssh_reap_closing(c, 1);   /* its channels go with the session */
	if (c->session) {
		int64_t deadline = time_mono_ms() + SSH_CLOSE_GRACE_MS;
		int i, rc;
		if (c->state != CONN_BROKEN && c->state >= CONN_HANDSHAKE) {
			SSH_RETRY(c, deadline, rc,
				  libssh2_session_disconnect(c->session, "gpuorch: done"));
			(void)rc;
		}
		/* Once the socket is shut down, libssh2 sees the disconnect and
		 * frees channels still waiting for the server's close (see
		 * channel_discard) instead of answering EAGAIN for ever. */
		if (c->sock >= 0)
			shutdown(c->sock, SHUT_RDWR);
		for (i = 0; i < 1000; i++)
			if (libssh2_session_free(c->session) != LIBSSH2_ERROR_EAGAIN)
				break;
		c->session = NULL;
	}
	if (c->sock >= 0)
		close(c->sock);
	c->sock = -1;
}

void ssh_disconnect(struct ssh_conn *c)
{
	int64_t t0 = trace_now_us();
	if (!c)
		return;
	if (c->session && c->sftp) {
		int64_t deadline = time_mono_ms() + SSH_CLOSE_GRACE_MS;
		int rc;
		if (c->state == CONN_BROKEN && c->sock >= 0)
			shutdown(c->sock, SHUT_RDWR);
		SSH_RETRY(c, deadline, rc, libssh2_sftp_shutdown(c->sftp));
		(void)rc;
	}
	c->sftp = NULL;
	close_session(c);
	if (trace_on() && c->state != CONN_NEW) {
		struct trace_args a = TRACE_ARGS_INIT;
		a.status = c->state == CONN_BROKEN ? "broken" : "ok";
		trace_span(c->label, "disconnect", t0, &a);
	}
	free(c->where);
	free(c->label);
	free(c->address);
	free(c->user);
	free(c->notice);
	free(c->execd);
	free(c->mux);
	opts_free(c->lazy);
	if (c->mux_launcher > 0) {
		/* the launcher leaves once its keeper is ready or has failed
		 * (within the connect timeout): the next run finds it */
		while (waitpid(c->mux_launcher, NULL, 0) < 0 && errno == EINTR)
			;
	}
	free(c);
}
