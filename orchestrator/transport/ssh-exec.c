/* ssh-exec.c -- ssh_exec: run one command on a channel, feed stdin, drain stdout/stderr, exit status.
 *
 * Two kinds of channel carry a command. The ordinary one is an exec
 * request, which sshd runs through the user's login shell. Once the caller
 * named the host's execd (ssh_use_execd), a command goes instead over a
 * direct-streamlocal channel to the execd's Unix socket, which sshd connects
 * without starting any shell; the execd runs `/bin/sh -c CMD` and frames its
 * stdout, stderr and end on the one stream (execd-proto.h). An execd that is
 * not there (the channel is refused) or answers "stale" has run nothing: the
 * command then runs the ordinary way and the connection forgets the execd.
 *
 * A connection through a session keeper (ssh-mux.c) has no session of its
 * own: its execd commands go over a local stream to the keeper, which
 * relays it byte for byte to a direct-streamlocal channel of its session.
 * run_channel reads and writes either kind through struct chan's few calls,
 * so both go through the one loop; anything else (an exec channel, SFTP)
 * opens the connection's own session first (ssh_need_session). */
#include "transport/ssh-int.h"
#include "transport/execd-proto.h"
#include "core/trace.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "core/timeutil.h"
#include "core/banned.h"

#define SSH_ABANDON_GRACE_MS 200
#define STREAM_ASK_MS 200

/* ------------------------------------------------------------------ */
/* exec                                                                */

/* Let a channel go without waiting for the server. sshd answers our CLOSE
 * only once the command has exited and its outputs are closed, and nothing
 * here needs that answer: the channels discarded are those of a command its
 * reader stopped (the runner's journal ended: the follow's `tail -f` still
 * exits, and a process with an inotify watch took up to 13 ms to exit on a
 * 2-CPU VM, the kernel waiting out an SRCU grace period; a fresh run's end
 * waited 12-37 ms for sshd's answer), of a command that
 * outlived its timeout (it goes on: long work belongs in remote.h's
 * detached steps) and of the execd's socket (the end frame is in). Our
 * CLOSE is sent -- waited for only while libssh2 is blocked sending it, at
 * most grace_ms -- and the channel goes on c->closing, freed by
 * ssh_reap_closing once the server's CLOSE has come (before c's next
 * channel), else with the session (ssh_disconnect). */
static void channel_discard(struct ssh_conn *c, LIBSSH2_CHANNEL *ch, int grace_ms)
{
	int64_t deadline = time_mono_ms() + grace_ms;
	int rc;

	if (c->state == CONN_BROKEN)
		return;   /* freed with the session */
	for (;;) {
		rc = libssh2_channel_close(ch);
		if (rc != LIBSSH2_ERROR_EAGAIN)
			break;
		/* blocked reading: our CLOSE is out, the server's is awaited */
		if (!(libssh2_session_block_directions(c->session) & LIBSSH2_SESSION_BLOCK_OUTBOUND))
			break;
		if (ssh_wait_socket(c, deadline) < 0)
			return;   /* not even sent: freed with the session */
	}
	if (rc && rc != LIBSSH2_ERROR_EAGAIN)
		return;   /* a failed close (a lost link): freed with the session */
	c->closing = xrealloc(c->closing, sizeof(*c->closing) * (size_t)(c->nclosing + 1));
	c->closing[c->nclosing++] = ch;
	ssh_reap_closing(c, 0);
}

/* ssh_exec's sink: stdout into a strbuf (capped by its max). */
static int add_to_strbuf(const char *data, size_t len, void *ctx)
{
	if (ctx && len)
		strbuf_add(ctx, data, len);
	return 0;
}

enum go_status ssh_exec(struct ssh_conn *c, const char *cmd,
			const void *stdin_data, size_t stdin_len,
			struct strbuf *out, struct strbuf *errout,
			struct ssh_exec_result *res, int timeout_ms, struct strbuf *err)
{
	return ssh_exec_stream(c, cmd, stdin_data, stdin_len, add_to_strbuf, out, errout, res,
			       timeout_ms, err);
}

/* "string" in the SSH wire format: a 4-byte big-endian length, the bytes */
static void add_ssh_string(struct strbuf *sb, const char *s)
{
	size_t n = strlen(s);
	unsigned char h[4] = { (unsigned char)(n >> 24), (unsigned char)(n >> 16),
			       (unsigned char)(n >> 8), (unsigned char)n };
	strbuf_add(sb, h, 4);
	strbuf_add(sb, s, n);
}

#define STREAMLOCAL "direct-streamlocal@openssh.com"

/* OpenSSH's PROTOCOL: string path, string reserved, uint32 reserved. */
LIBSSH2_CHANNEL *ssh_streamlocal_try(struct ssh_conn *c, const char *path, int *rc)
{
	static const unsigned char zero[4] = { 0, 0, 0, 0 };
	struct strbuf msg = STRBUF_INIT;
	LIBSSH2_CHANNEL *ch;

	add_ssh_string(&msg, path);
	add_ssh_string(&msg, "");
	strbuf_add(&msg, zero, 4);
	ch = libssh2_channel_open_ex(c->session, STREAMLOCAL, sizeof(STREAMLOCAL) - 1,
				     LIBSSH2_CHANNEL_WINDOW_DEFAULT, LIBSSH2_CHANNEL_PACKET_DEFAULT,
				     msg.buf, (unsigned int)msg.len);
	*rc = ch ? 0 : libssh2_session_last_errno(c->session);
	strbuf_release(&msg);
	return ch;
}

/* A channel to the execd's socket sock on the host. NULL with *refused set
 * when sshd would not connect it (no such socket, nobody listening,
 * forwarding disabled): *refused = 0 and an error otherwise. */
static LIBSSH2_CHANNEL *open_streamlocal(struct ssh_conn *c, const char *sock, int64_t deadline,
					 int timeout_ms, int *refused, enum go_status *st,
					 struct strbuf *err)
{
	LIBSSH2_CHANNEL *ch;

	*refused = 0;
	for (;;) {
		int rc;
		ch = ssh_streamlocal_try(c, sock, &rc);
		if (ch)
			break;
		if (rc == LIBSSH2_ERROR_CHANNEL_FAILURE) {
			*refused = 1;
			break;
		}
		if (rc != LIBSSH2_ERROR_EAGAIN) {
			*st = ssh_map_error(c, rc, "cannot open a channel to the host's execd", err);
			break;
		}
		if (ssh_wait_socket(c, deadline) < 0) {
			*st = ssh_fail_timeout(c, "opening a channel to the host's execd", timeout_ms,
					       err);
			break;
		}
	}
	return ch;
}

/* ------------------------------------------------------------------ */
/* a command's stream: a libssh2 channel, or a keeper's local stream     */

struct chan {
	struct ssh_conn *c;
	LIBSSH2_CHANNEL *ch;    /* on c's session; NULL with fd */
	int fd;                 /* the keeper's stream; -1 with ch */
	int fd_eof;             /* the keeper closed it */
	int fd_errno;           /* why it failed */
};

/* A failed stream read or write (rc < 0, not EAGAIN) as a go_status. */
static enum go_status chan_fail(struct chan *k, ssize_t rc, const char *what, struct strbuf *err)
{
	if (k->fd < 0)
		return ssh_map_error(k->c, (int)rc, what, err);
	return go_fail(err, GO_ERR_SSH, "%s: %s: the session keeper's stream failed (%s)",
		       k->c->where, what, strerror(k->fd_errno ? k->fd_errno : EPIPE));
}

static ssize_t chan_write(struct chan *k, const char *p, size_t n)
{
	ssize_t w;

	if (k->fd < 0)
		return libssh2_channel_write(k->ch, p, n);
	w = send(k->fd, p, n, MSG_NOSIGNAL);
	if (w >= 0)
		return w;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return LIBSSH2_ERROR_EAGAIN;
	k->fd_errno = errno;
	return LIBSSH2_ERROR_SOCKET_SEND;
}

/* 0 is "nothing now" for both kinds: chan_eof says whether it ended. */
static ssize_t chan_read(struct chan *k, char *buf, size_t n)
{
	ssize_t r;

	if (k->fd < 0)
		return libssh2_channel_read(k->ch, buf, n);
	if (k->fd_eof)
		return 0;
	r = recv(k->fd, buf, n, 0);
	if (r > 0)
		return r;
	if (r == 0) {
		k->fd_eof = 1;
		return 0;
	}
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return LIBSSH2_ERROR_EAGAIN;
	k->fd_errno = errno;
	return LIBSSH2_ERROR_SOCKET_RECV;
}

/* The keeper's stream has no stderr: the execd frames it into stdout. */
static ssize_t chan_read_stderr(struct chan *k, char *buf, size_t n)
{
	return k->fd < 0 ? libssh2_channel_read_stderr(k->ch, buf, n) : LIBSSH2_ERROR_EAGAIN;
}

static int chan_eof(struct chan *k)
{
	return k->fd < 0 ? libssh2_channel_eof(k->ch) : k->fd_eof;
}

/* Wait for the stream until the deadline: -1 past it (ssh_wait_socket). */
static int chan_wait(struct chan *k, int want_write, int64_t deadline)
{
	struct pollfd pfd;
	int64_t left;

	if (k->fd < 0)
		return ssh_wait_socket(k->c, deadline);
	left = deadline - time_mono_ms();
	if (left <= 0)
		return -1;
	pfd.fd = k->fd;
	pfd.events = POLLIN | (want_write ? POLLOUT : 0);
	pfd.revents = 0;
	if (poll(&pfd, 1, left > 1000 ? 1000 : (int)left) < 0 && errno != EINTR)
		time_sleep_ms(10);
	return 0;
}

int ssh_input_add(struct ssh_input *in, const void *data, size_t len)
{
	if (!len)
		return 0;
	if (in->nparts >= SSH_INPUT_PARTS)
		return -1;
	in->part[in->nparts].data = data;
	in->part[in->nparts].len = len;
	in->nparts++;
	return 0;
}

size_t ssh_input_len(const struct ssh_input *in)
{
	size_t n = 0;
	int i;
	for (i = 0; i < in->nparts; i++)
		n += in->part[i].len;
	return n;
}

/* The input from byte off on, up to the end of its part (*n bytes; NULL
 * and 0 past the end). */
static const char *input_at(const struct ssh_input *in, size_t off, size_t *n)
{
	int i;
	for (i = 0; i < in->nparts; i++) {
		if (off < in->part[i].len) {
			*n = in->part[i].len - off;
			return (const char *)in->part[i].data + off;
		}
		off -= in->part[i].len;
	}
	*n = 0;
	return NULL;
}

/* framed: the execd's request for cmd (into head) and in's parts after
 * it, borrowed. -1 when they do not fit. */
static int frame_input(struct ssh_input *framed, struct strbuf *head, const char *cmd,
		       const struct ssh_input *in)
{
	int i;
	memset(framed, 0, sizeof(*framed));
	if (in->execd_put)
		execd_put_request(head, in->execd_put, ssh_input_len(in));
	else
		execd_request(head, cmd, ssh_input_len(in));
	ssh_input_add(framed, head->buf, head->len);
	for (i = 0; i < in->nparts; i++)
		if (ssh_input_add(framed, in->part[i].data, in->part[i].len))
			return -1;
	return 0;
}

/* a put's state in run_channel: its flow, where its blobs start in the input */
struct put_flow {
	struct execd_flow flow;
	size_t head;         /* the request's header and directory */
	int room;            /* 0: held back by the flow (do not wait to write) */
	uint64_t ahead_max;  /* the most sent ahead of the execd's word */
	uint64_t bound_max;  /* the largest bound it was held to */
};

/* A chunk of the command's stdin (a put's no further ahead of what the
 * execd said it read than its flow allows): 1 some went, 0 none now, -1
 * failed (*st). */
static int feed(struct chan *k, struct ssh_input *in, size_t *sent, struct put_flow *pf,
		const struct execd_rx *rx, enum go_status *st, struct strbuf *err)
{
	size_t chunk;
	const char *at;
	ssize_t n;

	if (*sent >= ssh_input_len(in))
		return 0;
	at = input_at(in, *sent, &chunk);
	if (chunk > SSH_IO_CHUNK)
		chunk = SSH_IO_CHUNK;
	if (pf && *sent >= pf->head) {
		uint64_t room;
		execd_flow_acked(&pf->flow, rx->acked, time_mono_us());
		if (pf->flow.ahead > pf->bound_max)
			pf->bound_max = pf->flow.ahead;
		room = execd_flow_room(&pf->flow, *sent - pf->head);
		pf->room = room > 0;
		if (!room)
			return 0;
		if (chunk > room)
			chunk = (size_t)room;
	}
	n = chan_write(k, at, chunk);
	if (n > 0) {
		*sent += (size_t)n;
		if (pf && *sent > pf->head) {
			uint64_t b = *sent - pf->head;
			execd_flow_sent(&pf->flow, b, time_mono_us());
			if (b > pf->flow.acked && b - pf->flow.acked > pf->ahead_max)
				pf->ahead_max = b - pf->flow.acked;
		}
		return 1;
	}
	if (n == 0 || n == LIBSSH2_ERROR_EAGAIN)
		return 0;
	/* the command closed its stdin: stop feeding it */
	if (n == LIBSSH2_ERROR_CHANNEL_EOF_SENT || n == LIBSSH2_ERROR_CHANNEL_CLOSED || chan_eof(k) ||
	    k->fd >= 0) {
		*sent = ssh_input_len(in);
		in->more = 0;
		return 0;
	}
	*st = chan_fail(k, n, "cannot send input to a remote command", err);
	return -1;
}

/* One command on one channel: an exec request (execd NULL), or framed
 * through the execd at that socket. *fallback is set when the execd ran
 * nothing (absent, refused the channel, stale): run it the ordinary way. */
static enum go_status run_channel(struct ssh_conn *c, const char *execd, const char *cmd,
				  struct ssh_input *in,
				  ssh_out_fn on_out, void *out_ctx, struct strbuf *errout,
				  struct ssh_exec_result *res, int timeout_ms, int *fallback,
				  struct strbuf *err)
{
	int64_t deadline = time_mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	struct chan k = { c, NULL, -1, 0, 0 };
	struct strbuf framed_in = STRBUF_INIT;
	struct execd_rx rx;
	struct execd_sink sink = { on_out, out_ctx, errout };
	struct ssh_input framed;
	struct put_flow put, *pf = NULL;   /* a put: its bytes go no further ahead than the execd lets */
	char *buf = NULL;
	size_t sent = 0;
	int eof_sent = 0, keep_open = 0, rc;
	enum go_status st = GO_OK;

	execd_rx_init(&rx);
	if (c->nclosing)
		ssh_reap_closing(c, 0);
	if (execd) {
		int refused = 0;
		if (c->mux)
			k.fd = ssh_mux_open(c, execd, deadline, &refused);
		if (k.fd < 0 && !refused) {
			/* no keeper (or it is gone): c's own session */
			if ((st = ssh_need_session(c, err)) == GO_OK)
				k.ch = open_streamlocal(c, execd, deadline, timeout_ms, &refused, &st, err);
		}
		if (k.fd < 0 && !k.ch) {
			*fallback = refused;
			execd_rx_release(&rx);
			return st;
		}
		/* the request, then stdin; the channel is never half-closed:
		 * its EOF tells the execd that the client left */
		if (frame_input(&framed, &framed_in, cmd, in)) {
			st = go_fail(err, GO_ERR_INTERNAL, "%s: a command's input in too many parts", c->where);
			goto out;
		}
		if (in->execd_put) {
			pf = memset(&put, 0, sizeof(put));
			execd_flow_init(&pf->flow);
			pf->head = framed_in.len;
			pf->room = 1;
		}
		in = &framed;
		keep_open = 1;
	} else {
		if ((st = ssh_need_session(c, err))) {
			execd_rx_release(&rx);
			return st;
		}
		for (;;) {
			k.ch = libssh2_channel_open_session(c->session);
			if (k.ch)
				break;
			rc = libssh2_session_last_errno(c->session);
			if (rc != LIBSSH2_ERROR_EAGAIN) {
				execd_rx_release(&rx);
				return ssh_map_error(c, rc, "cannot open an SSH channel", err);
			}
			if (ssh_wait_socket(c, deadline) < 0) {
				execd_rx_release(&rx);
				return ssh_fail_timeout(c, "opening an SSH channel", timeout_ms, err);
			}
		}
		SSH_RETRY(c, deadline, rc, libssh2_channel_exec(k.ch, cmd));
		if (rc == LIBSSH2_ERROR_TIMEOUT) {
			st = ssh_fail_timeout(c, "starting a remote command", timeout_ms, err);
			goto out;
		}
		if (rc) {
			st = ssh_map_error(c, rc, "cannot start a remote command", err);
			goto out;
		}
	}

	buf = xmalloc(SSH_IO_CHUNK);
	for (;;) {
		int progress = 0;
		ssize_t n;

		/* stdin, interleaved with reading so neither side stalls (a
		 * talk's reader may add to it as output arrives) */
		if (!eof_sent && (rc = feed(&k, in, &sent, pf, &rx, &st, err)) < 0)
			goto out;
		progress = rc > 0;
		if (!eof_sent && !keep_open && !in->more && sent >= ssh_input_len(in)) {
			rc = libssh2_channel_send_eof(k.ch);
			if (rc == 0 || rc != LIBSSH2_ERROR_EAGAIN) {
				/* an error here (channel closed already) is not fatal */
				eof_sent = 1;
				progress = 1;
			}
		}

		n = chan_read(&k, buf, SSH_IO_CHUNK);
		if (n > 0 && execd) {
			if (execd_rx_feed(&rx, buf, (size_t)n, &sink)) {
				st = go_fail(err, GO_ERR_INTERRUPTED, "%s: remote command stopped by its reader",
					     c->where);
				goto out;
			}
			if (rx.end == EXECD_GARBLED || rx.end == EXECD_REFUSED) {
				st = go_fail(err, GO_ERR_REMOTE, "%s: %s", c->where, rx.message);
				goto out;
			}
			if (rx.end != EXECD_RUNNING)
				break;
			progress = 1;
		} else if (n > 0) {
			if (on_out(buf, (size_t)n, out_ctx)) {
				st = go_fail(err, GO_ERR_INTERRUPTED, "%s: remote command stopped by its reader",
					     c->where);
				goto out;
			}
			progress = 1;
		} else if (n < 0 && n != LIBSSH2_ERROR_EAGAIN) {
			st = chan_fail(&k, n, "cannot read the output of a remote command", err);
			goto out;
		}
		n = chan_read_stderr(&k, buf, SSH_IO_CHUNK);
		if (n > 0) {
			if (errout)
				strbuf_add(errout, buf, (size_t)n);
			progress = 1;
		} else if (n < 0 && n != LIBSSH2_ERROR_EAGAIN) {
			st = chan_fail(&k, n, "cannot read the output of a remote command", err);
			goto out;
		}
		if (progress) {
			if (time_mono_ms() >= deadline) {
				st = ssh_fail_timeout(c, "remote command", timeout_ms, err);
				goto out;
			}
			continue;
		}
		/* no data now: finished only when the remote side sent EOF
		 * and both streams are drained (0-byte reads above) */
		if (chan_eof(&k)) {
			if (execd) {
				/* the execd's handler (or the keeper) went before the end frame */
				st = go_fail(err, GO_ERR_SSH, "%s: the host's execd dropped the command "
					     "before it ended%s", c->where,
					     k.fd >= 0 ? " (through the session keeper)" : "");
				goto out;
			}
			break;
		}
		/* a reader that streams is asked between waits, at most
		 * STREAM_ASK_MS apart (a local check, e.g. for an interrupt) */
		if (on_out != add_to_strbuf) {
			int64_t ask = time_mono_ms() + STREAM_ASK_MS;
			if (on_out(NULL, 0, out_ctx)) {
				st = go_fail(err, GO_ERR_INTERRUPTED,
					     "%s: remote command stopped by its reader", c->where);
				goto out;
			}
			if (ask < deadline) {
				chan_wait(&k, sent < ssh_input_len(in) && (!pf || pf->room), ask);
				continue;
			}
		}
		if (chan_wait(&k, sent < ssh_input_len(in) && (!pf || pf->room), deadline) < 0) {
			st = ssh_fail_timeout(c, "remote command", timeout_ms, err);
			goto out;
		}
	}

	if (execd) {
		if (rx.end == EXECD_STALE) {
			*fallback = 1;
		} else if (res) {
			res->exit_code = rx.signal[0] ? -1 : rx.exit_code;
			snprintf(res->signal, sizeof(res->signal), "%s", rx.signal);
			if (pf)
				res->put_acked = rx.acked, res->put_ahead_max = pf->ahead_max,
				res->put_bound = pf->bound_max;
		}
		goto out;   /* the channel goes as a discarded one: the execd closes it */
	}
	SSH_RETRY(c, deadline, rc, libssh2_channel_close(k.ch));
	if (!rc)
		SSH_RETRY(c, deadline, rc, libssh2_channel_wait_closed(k.ch));
	if (rc == LIBSSH2_ERROR_TIMEOUT) {
		st = ssh_fail_timeout(c, "remote command", timeout_ms, err);
		goto out;
	}
	if (rc) {
		st = ssh_map_error(c, rc, "cannot close a remote command's channel", err);
		goto out;
	}
	if (res) {
		char *sig = NULL;
		size_t siglen = 0;
		res->exit_code = libssh2_channel_get_exit_status(k.ch);
		if (libssh2_channel_get_exit_signal(k.ch, &sig, &siglen, NULL, NULL, NULL, NULL) == 0 &&
		    sig) {
			snprintf(res->signal, sizeof(res->signal), "%.*s", (int)siglen, sig);
			libssh2_free(c->session, sig);
		}
	}
	SSH_RETRY(c, deadline, rc, libssh2_channel_free(k.ch));
	k.ch = NULL;
out:
	free(buf);
	if (k.ch)
		channel_discard(c, k.ch, SSH_ABANDON_GRACE_MS);
	if (k.fd >= 0)
		close(k.fd);   /* the keeper closes its channel: the execd hangs up */
	strbuf_release(&framed_in);
	execd_rx_release(&rx);
	return st;
}

/* One command with stdin in: through the host's execd when c names one and
 * the input is whole (may_use_execd), else on an exec channel. */
static enum go_status exec_do(struct ssh_conn *c, const char *cmd, struct ssh_input *in,
				int may_use_execd, ssh_out_fn on_out, void *out_ctx,
				struct strbuf *errout, struct ssh_exec_result *res, int timeout_ms,
				struct strbuf *err)
{
	enum go_status st;
	int fallback = 0;

	if (res) {
		res->exit_code = -1;
		res->signal[0] = '\0';
	}
	if ((st = ssh_check_usable(c, err)))
		return st;
	c->via_execd = 0;
	if (may_use_execd && c->execd) {
		st = run_channel(c, c->execd, cmd, in, on_out, out_ctx, errout, res, timeout_ms,
				 &fallback, err);
		if (!fallback) {
			c->via_execd = 1;
			return st;
		}
		/* nothing ran there: the ordinary way, and not the execd again */
		free(c->execd);
		c->execd = NULL;
		if (errout)
			strbuf_reset(errout);
	}
	return run_channel(c, NULL, cmd, in, on_out, out_ctx, errout, res, timeout_ms, &fallback,
			   err);
}

/* exec_do, and its span in the trace: from the channel's open to its
 * close, how it went (channel, execd or keeper) and how it ended. */
static enum go_status exec_with(struct ssh_conn *c, const char *cmd, struct ssh_input *in,
				int may_use_execd, ssh_out_fn on_out, void *out_ctx,
				struct strbuf *errout, struct ssh_exec_result *res, int timeout_ms,
				struct strbuf *err)
{
	struct ssh_exec_result own;
	struct trace_args a = TRACE_ARGS_INIT;
	int64_t t0 = trace_now_us();
	enum go_status st;

	if (!trace_on())
		return exec_do(c, cmd, in, may_use_execd, on_out, out_ctx, errout, res, timeout_ms,
			       err);
	a.bytes = (int64_t)ssh_input_len(in);
	if (!res)
		res = &own;
	st = exec_do(c, cmd, in, may_use_execd, on_out, out_ctx, errout, res, timeout_ms, err);
	a.detail = cmd;
	a.what = trace_what;
	trace_what = NULL;
	a.status = st ? err->buf : "ok";
	a.via = c->via_execd ? (c->mux && !c->session ? "keeper" : "execd") : "channel";
	if (!st) {
		a.exit_code = res->exit_code;
		a.signal = res->signal;
	}
	trace_span(c->label, "exec", t0, &a);
	return st;
}

enum go_status ssh_exec_stream(struct ssh_conn *c, const char *cmd,
			       const void *stdin_data, size_t stdin_len,
			       ssh_out_fn on_out, void *out_ctx, struct strbuf *errout,
			       struct ssh_exec_result *res, int timeout_ms, struct strbuf *err)
{
	struct ssh_input in;
	memset(&in, 0, sizeof(in));
	if (stdin_data)
		ssh_input_add(&in, stdin_data, stdin_len);
	return exec_with(c, cmd, &in, 1, on_out, out_ctx, errout, res, timeout_ms, err);
}

enum go_status ssh_exec_talk(struct ssh_conn *c, const char *cmd, struct ssh_input *in,
			     ssh_out_fn on_out, void *out_ctx, struct strbuf *errout,
			     struct ssh_exec_result *res, int timeout_ms, struct strbuf *err)
{
	return exec_with(c, cmd, in, 0, on_out, out_ctx, errout, res, timeout_ms, err);
}

enum go_status ssh_exec_offer(struct ssh_conn *c, const char *cmd, struct ssh_input *in,
			      ssh_out_fn on_out, void *out_ctx, struct strbuf *errout,
			      struct ssh_exec_result *res, int timeout_ms, struct strbuf *err)
{
	return exec_with(c, cmd, in, 1, on_out, out_ctx, errout, res, timeout_ms, err);
}

/* a put's reply has no stdout */
static int no_out(const char *data, size_t len, void *ctx)
{
	(void)data;
	(void)len;
	(void)ctx;
	return 0;
}

enum go_status ssh_execd_put(struct ssh_conn *c, const char *dir, const void *data, size_t len,
			     struct strbuf *errout, struct ssh_exec_result *res, int timeout_ms,
			     struct strbuf *err)
{
	struct ssh_input in;
	enum go_status st;
	int fallback = 0;

	memset(&in, 0, sizeof(in));
	ssh_input_add(&in, data, len);
	in.execd_put = dir;
	if (res) {
		memset(res, 0, sizeof(*res));
		res->exit_code = -1;
	}
	if ((st = ssh_check_usable(c, err)))
		return st;
	if (!c->execd)
		return go_fail(err, GO_ERR_NOT_FOUND, "%s: no execd to put the blobs through", c->where);
	st = run_channel(c, c->execd, dir, &in, no_out, NULL, errout, res, timeout_ms, &fallback, err);
	if (fallback) {
		free(c->execd);
		c->execd = NULL;
		return go_fail(err, GO_ERR_NOT_FOUND, "%s: the host's execd ran nothing", c->where);
	}
	return st;
}

void ssh_use_execd(struct ssh_conn *c, const char *sock)
{
	free(c->execd);
	c->execd = sock && *sock ? xstrdup(sock) : NULL;
}

int ssh_via_execd(const struct ssh_conn *c)
{
	return c->via_execd;
}

void ssh_exec_add_end(struct strbuf *sb, const struct ssh_exec_result *r)
{
	if (r->signal[0])
		strbuf_addf(sb, "signal %s", r->signal);
	else
		strbuf_addf(sb, "exit %d", r->exit_code);
}
