/* ssh-exec.c -- ssh_exec: run one command on a channel, feed stdin, drain stdout/stderr, exit status. */
#include "transport/ssh-int.h"

#include <stdio.h>
#include <stdlib.h>
#include "core/timeutil.h"
#include "core/banned.h"

#define SSH_ABANDON_GRACE_MS 200
#define STREAM_ASK_MS 200

/* ------------------------------------------------------------------ */
/* exec                                                                */

/* Close and free a channel, waiting at most grace_ms. sshd answers our
 * close only once the command has exited, so a channel of a command that
 * still runs (a timed-out exec) is left in the session: the remote command
 * goes on (long work belongs in remote.h's detached steps) and
 * ssh_disconnect() frees the channel with the session. */
static void channel_discard(struct ssh_conn *c, LIBSSH2_CHANNEL *ch, int grace_ms)
{
	int64_t deadline = time_mono_ms() + grace_ms;
	int rc;

	if (c->state == CONN_BROKEN)
		return;   /* freed with the session */
	SSH_RETRY(c, deadline, rc, libssh2_channel_close(ch));
	if (rc)
		return;
	deadline = time_mono_ms() + SSH_CLOSE_GRACE_MS;
	SSH_RETRY(c, deadline, rc, libssh2_channel_free(ch));
	(void)rc;
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

enum go_status ssh_exec_stream(struct ssh_conn *c, const char *cmd,
			       const void *stdin_data, size_t stdin_len,
			       ssh_out_fn on_out, void *out_ctx, struct strbuf *errout,
			       struct ssh_exec_result *res, int timeout_ms, struct strbuf *err)
{
	int64_t deadline = time_mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	LIBSSH2_CHANNEL *ch = NULL;
	char *buf = NULL;
	size_t sent = 0;
	int eof_sent = 0, rc;
	enum go_status st = GO_OK;

	if (res) {
		res->exit_code = -1;
		res->signal[0] = '\0';
	}
	if ((st = ssh_check_usable(c, err)))
		return st;

	for (;;) {
		ch = libssh2_channel_open_session(c->session);
		if (ch)
			break;
		rc = libssh2_session_last_errno(c->session);
		if (rc != LIBSSH2_ERROR_EAGAIN)
			return ssh_map_error(c, rc, "cannot open an SSH channel", err);
		if (ssh_wait_socket(c, deadline) < 0)
			return ssh_fail_timeout(c, "opening an SSH channel", timeout_ms, err);
	}
	SSH_RETRY(c, deadline, rc, libssh2_channel_exec(ch, cmd));
	if (rc == LIBSSH2_ERROR_TIMEOUT) {
		st = ssh_fail_timeout(c, "starting a remote command", timeout_ms, err);
		goto out;
	}
	if (rc) {
		st = ssh_map_error(c, rc, "cannot start a remote command", err);
		goto out;
	}
	if (!stdin_data)
		stdin_len = 0;

	buf = xmalloc(SSH_IO_CHUNK);
	for (;;) {
		int progress = 0;
		ssize_t n;

		/* stdin, interleaved with reading so neither side stalls */
		if (!eof_sent && sent < stdin_len) {
			size_t chunk = stdin_len - sent;
			if (chunk > SSH_IO_CHUNK)
				chunk = SSH_IO_CHUNK;
			n = libssh2_channel_write(ch, (const char *)stdin_data + sent, chunk);
			if (n > 0) {
				sent += (size_t)n;
				progress = 1;
			} else if (n < 0 && n != LIBSSH2_ERROR_EAGAIN) {
				/* the command closed its stdin: stop feeding it */
				if (n == LIBSSH2_ERROR_CHANNEL_EOF_SENT ||
				    n == LIBSSH2_ERROR_CHANNEL_CLOSED || libssh2_channel_eof(ch)) {
					sent = stdin_len;
				} else {
					st = ssh_map_error(c, (int)n, "cannot send input to a remote command", err);
					goto out;
				}
			}
		}
		if (!eof_sent && sent >= stdin_len) {
			rc = libssh2_channel_send_eof(ch);
			if (rc == 0 || rc != LIBSSH2_ERROR_EAGAIN) {
				/* an error here (channel closed already) is not fatal */
				eof_sent = 1;
				progress = 1;
			}
		}

		n = libssh2_channel_read(ch, buf, SSH_IO_CHUNK);
		if (n > 0) {
			if (on_out(buf, (size_t)n, out_ctx)) {
				st = go_fail(err, GO_ERR_INTERRUPTED, "%s: remote command stopped by its reader",
					     c->where);
				goto out;
			}
			progress = 1;
		} else if (n < 0 && n != LIBSSH2_ERROR_EAGAIN) {
			st = ssh_map_error(c, (int)n, "cannot read the output of a remote command", err);
			goto out;
		}
		n = libssh2_channel_read_stderr(ch, buf, SSH_IO_CHUNK);
		if (n > 0) {
			if (errout)
				strbuf_add(errout, buf, (size_t)n);
			progress = 1;
		} else if (n < 0 && n != LIBSSH2_ERROR_EAGAIN) {
			st = ssh_map_error(c, (int)n, "cannot read the output of a remote command", err);
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
		if (libssh2_channel_eof(ch))
			break;
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
				ssh_wait_socket(c, ask);
				continue;
			}
		}
		if (ssh_wait_socket(c, deadline) < 0) {
			st = ssh_fail_timeout(c, "remote command", timeout_ms, err);
			goto out;
		}
	}

	SSH_RETRY(c, deadline, rc, libssh2_channel_close(ch));
	if (!rc)
		SSH_RETRY(c, deadline, rc, libssh2_channel_wait_closed(ch));
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
		res->exit_code = libssh2_channel_get_exit_status(ch);
		if (libssh2_channel_get_exit_signal(ch, &sig, &siglen, NULL, NULL, NULL, NULL) == 0 &&
		    sig) {
			snprintf(res->signal, sizeof(res->signal), "%.*s", (int)siglen, sig);
			libssh2_free(c->session, sig);
		}
	}
	SSH_RETRY(c, deadline, rc, libssh2_channel_free(ch));
	ch = NULL;
out:
	free(buf);
	if (ch)
		channel_discard(c, ch, SSH_ABANDON_GRACE_MS);
	return st;
}

void ssh_exec_add_end(struct strbuf *sb, const struct ssh_exec_result *r)
{
	if (r->signal[0])
		strbuf_addf(sb, "signal %s", r->signal);
	else
		strbuf_addf(sb, "exit %d", r->exit_code);
}
