/* ssh-sftp.c -- SFTP: upload a buffer (write .part, fsync, rename over) and download into one. */
#include "transport/ssh-int.h"
#include "core/trace.h"

#include <stdlib.h>
#include <string.h>
#include "core/timeutil.h"
#include "core/banned.h"

/* ------------------------------------------------------------------ */
/* SFTP                                                                */

static enum go_status sftp_ready(struct ssh_conn *c, int64_t deadline, int timeout_ms,
				 struct strbuf *err)
{
	enum go_status st;
	int rc;

	if ((st = ssh_check_usable(c, err)) || (st = ssh_need_session(c, err)))
		return st;   /* (a connection through a keeper opens its own session here) */
	while (!c->sftp) {
		c->sftp = libssh2_sftp_init(c->session);
		if (c->sftp)
			break;
		rc = libssh2_session_last_errno(c->session);
		if (rc != LIBSSH2_ERROR_EAGAIN)
			return ssh_map_error(c, rc,
					     "cannot start SFTP (is the sftp subsystem enabled in sshd_config?)",
					     err);
		if (ssh_wait_socket(c, deadline) < 0)
			return ssh_fail_timeout(c, "starting SFTP", timeout_ms, err);
	}
	return GO_OK;
}

static LIBSSH2_SFTP_HANDLE *sftp_open(struct ssh_conn *c, const char *path, unsigned long flags,
				      long mode, int64_t deadline, int *rcp)
{
	LIBSSH2_SFTP_HANDLE *h;

	for (;;) {
		h = libssh2_sftp_open_ex(c->sftp, path, (unsigned int)strlen(path), flags, mode,
					 LIBSSH2_SFTP_OPENFILE);
		if (h) {
			*rcp = 0;
			return h;
		}
		*rcp = libssh2_session_last_errno(c->session);
		if (*rcp != LIBSSH2_ERROR_EAGAIN)
			return NULL;
		if (ssh_wait_socket(c, deadline) < 0) {
			*rcp = LIBSSH2_ERROR_TIMEOUT;
			return NULL;
		}
	}
}

static void sftp_close(struct ssh_conn *c, LIBSSH2_SFTP_HANDLE *h)
{
	int64_t deadline = time_mono_ms() + SSH_CLOSE_GRACE_MS;
	int rc;
	SSH_RETRY(c, deadline, rc, libssh2_sftp_close_handle(h));
	(void)rc;
}

static void sftp_remove(struct ssh_conn *c, const char *path)
{
	int64_t deadline = time_mono_ms() + SSH_CLOSE_GRACE_MS;
	int rc;
	if (c->state == CONN_BROKEN)
		return;
	SSH_RETRY(c, deadline, rc,
		  libssh2_sftp_unlink_ex(c->sftp, path, (unsigned int)strlen(path)));
	(void)rc;
}

/* A failed write: say "no space left on device" when that is why. SFTP v3
 * servers (OpenSSH) report ENOSPC as a plain FAILURE, so ask df. */
static enum go_status upload_write_failed(struct ssh_conn *c, int rc, const char *remote_path,
					  size_t remaining, struct strbuf *err)
{
	unsigned long fx = rc == LIBSSH2_ERROR_SFTP_PROTOCOL ? libssh2_sftp_last_error(c->sftp) : 0;
	long long avail_kib = -1;

	if (rc == LIBSSH2_ERROR_SFTP_PROTOCOL &&
	    (fx == LIBSSH2_FX_FAILURE || fx == LIBSSH2_FX_NO_SPACE_ON_FILESYSTEM ||
	     fx == LIBSSH2_FX_QUOTA_EXCEEDED)) {
		struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, e2 = STRBUF_INIT;
		struct ssh_exec_result r;
		char *dir = xstrdup(remote_path);
		char *slash = strrchr(dir, '/');
		if (slash && slash != dir)
			*slash = '\0';
		else if (slash)
			dir[1] = '\0';
		else {
			free(dir);
			dir = xstrdup(".");
		}
		strbuf_addstr(&cmd, "df -Pk ");
		strbuf_add_shell_quoted(&cmd, dir);
		strbuf_addstr(&cmd, " | awk 'NR==2 {print $4}'");
		out.max = 256;
		if (!ssh_exec(c, cmd.buf, NULL, 0, &out, NULL, &r, 10000, &e2) && r.exit_code == 0)
			avail_kib = strtoll(out.buf, NULL, 10);
		if (fx == LIBSSH2_FX_NO_SPACE_ON_FILESYSTEM || fx == LIBSSH2_FX_QUOTA_EXCEEDED ||
		    (avail_kib >= 0 && (unsigned long long)avail_kib * 1024 < remaining + 65536)) {
			enum go_status st = go_fail(err, GO_ERR_REMOTE,
				"%s: cannot write '%s': no space left on device (%lld KiB free in '%s', %zu bytes still to write); free space on the host or choose another workdir",
				c->where, remote_path, avail_kib < 0 ? 0 : avail_kib, dir, remaining);
			free(dir);
			strbuf_release(&cmd);
			strbuf_release(&out);
			strbuf_release(&e2);
			return st;
		}
		free(dir);
		strbuf_release(&cmd);
		strbuf_release(&out);
		strbuf_release(&e2);
		return go_fail(err, GO_ERR_REMOTE, "%s: cannot write '%s': write failed (SFTP status %s)",
			       c->where, remote_path, ssh_sftp_status_text(fx));
	}
	{
		struct strbuf what = STRBUF_INIT;
		enum go_status st;
		strbuf_addf(&what, "cannot write '%s'", remote_path);
		st = ssh_map_error(c, rc, what.buf, err);
		strbuf_release(&what);
		return st;
	}
}

/* Rename TMP over DST. SFTP v3 servers (OpenSSH) refuse to rename over an
 * existing file and libssh2 1.10 has no posix-rename: fall back to mv -f,
 * which is rename(2), i.e. atomic. */
static enum go_status sftp_rename_over(struct ssh_conn *c, const char *tmp, const char *dst,
				       int64_t deadline, int timeout_ms, struct strbuf *err)
{
	int rc;
	struct strbuf cmd = STRBUF_INIT, eout = STRBUF_INIT;
	struct ssh_exec_result r;
	enum go_status st;
	int64_t left;

	SSH_RETRY(c, deadline, rc,
		  libssh2_sftp_rename_ex(c->sftp, tmp, (unsigned int)strlen(tmp), dst,
					 (unsigned int)strlen(dst),
					 LIBSSH2_SFTP_RENAME_OVERWRITE | LIBSSH2_SFTP_RENAME_ATOMIC |
					 LIBSSH2_SFTP_RENAME_NATIVE));
	if (rc == 0)
		return GO_OK;
	if (rc == LIBSSH2_ERROR_TIMEOUT)
		return ssh_fail_timeout(c, "renaming an upload", timeout_ms, err);
	if (rc != LIBSSH2_ERROR_SFTP_PROTOCOL) {
		struct strbuf what = STRBUF_INIT;
		strbuf_addf(&what, "cannot rename '%s' to '%s'", tmp, dst);
		st = ssh_map_error(c, rc, what.buf, err);
		strbuf_release(&what);
		return st;
	}
	strbuf_addstr(&cmd, "mv -f -- ");
	strbuf_add_shell_quoted(&cmd, tmp);
	strbuf_addch(&cmd, ' ');
	strbuf_add_shell_quoted(&cmd, dst);
	eout.max = 4096;
	left = deadline - time_mono_ms();
	st = ssh_exec(c, cmd.buf, NULL, 0, NULL, &eout, &r, left > 1000 ? (int)left : 1000, err);
	if (!st && (r.signal[0] || r.exit_code != 0)) {
		strbuf_trim(&eout);
		st = go_fail(err, GO_ERR_REMOTE, "%s: cannot rename '%s' to '%s': %s", c->where,
			     tmp, dst, eout.len ? eout.buf : "mv failed");
	}
	strbuf_release(&cmd);
	strbuf_release(&eout);
	return st;
}

static enum go_status upload_do(struct ssh_conn *c, const void *data, size_t len,
				const char *remote_path, int mode, uint64_t *bytes_sent,
				int timeout_ms, struct strbuf *err)
{
	int64_t deadline = time_mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	struct strbuf part = STRBUF_INIT;
	LIBSSH2_SFTP_HANDLE *h = NULL;
	const char *p = data;
	size_t done = 0;
	enum go_status st;
	int rc;

	if (bytes_sent)
		*bytes_sent = 0;
	if ((st = sftp_ready(c, deadline, timeout_ms, err)))
		return st;
	strbuf_addf(&part, "%s.part", remote_path);
	sftp_remove(c, part.buf);   /* a leftover from an earlier attempt */
	h = sftp_open(c, part.buf, LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | LIBSSH2_FXF_TRUNC,
		      mode > 0 ? mode : 0600, deadline, &rc);
	if (!h) {
		if (rc == LIBSSH2_ERROR_TIMEOUT) {
			st = ssh_fail_timeout(c, "opening an upload", timeout_ms, err);
		} else {
			struct strbuf what = STRBUF_INIT;
			strbuf_addf(&what, "cannot create '%s'", part.buf);
			st = ssh_map_error(c, rc, what.buf, err);
			strbuf_release(&what);
		}
		goto out;
	}
	while (done < len) {
		size_t chunk = len - done;
		ssize_t n;
		if (chunk > SSH_IO_CHUNK)
			chunk = SSH_IO_CHUNK;
		/* on EAGAIN libssh2 wants the same buffer again; on a short
		 * write the unchanged tail is sent next round */
		n = libssh2_sftp_write(h, p + done, chunk);
		if (n == LIBSSH2_ERROR_EAGAIN) {
			if (ssh_wait_socket(c, deadline) < 0) {
				st = ssh_fail_timeout(c, "upload", timeout_ms, err);
				goto fail;
			}
			continue;
		}
		if (n < 0) {
			st = upload_write_failed(c, (int)n, remote_path, len - done, err);
			goto fail;
		}
		done += (size_t)n;
		if (bytes_sent)
			*bytes_sent = done;
		if (time_mono_ms() >= deadline && done < len) {
			st = ssh_fail_timeout(c, "upload", timeout_ms, err);
			goto fail;
		}
	}
	SSH_RETRY(c, deadline, rc, libssh2_sftp_fsync(h));
	if (rc == LIBSSH2_ERROR_SFTP_PROTOCOL &&
	    libssh2_sftp_last_error(c->sftp) == LIBSSH2_FX_OP_UNSUPPORTED)
		rc = 0;   /* the server has no fsync@openssh.com: nothing to do */
	if (rc) {
		st = rc == LIBSSH2_ERROR_TIMEOUT ? ssh_fail_timeout(c, "upload", timeout_ms, err)
			: upload_write_failed(c, rc, remote_path, 0, err);
		goto fail;
	}
	SSH_RETRY(c, deadline, rc, libssh2_sftp_close_handle(h));
	h = NULL;
	if (rc) {
		/* close reports a write error the server saw late */
		st = rc == LIBSSH2_ERROR_TIMEOUT ? ssh_fail_timeout(c, "upload", timeout_ms, err)
			: upload_write_failed(c, rc, remote_path, 0, err);
		goto fail;
	}
	st = sftp_rename_over(c, part.buf, remote_path, deadline, timeout_ms, err);
	if (st)
		goto fail;
	goto out;
fail:
	if (h)
		sftp_close(c, h);
	h = NULL;
	sftp_remove(c, part.buf);
out:
	if (h)
		sftp_close(c, h);
	strbuf_release(&part);
	return st;
}

static enum go_status download_do(struct ssh_conn *c, const char *remote_path,
				  struct strbuf *data, size_t max, int timeout_ms,
				  struct strbuf *err)
{
	int64_t deadline = time_mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	LIBSSH2_SFTP_HANDLE *h;
	char *buf;
	size_t got = 0;
	enum go_status st;
	int rc;

	if ((st = sftp_ready(c, deadline, timeout_ms, err)))
		return st;
	h = sftp_open(c, remote_path, LIBSSH2_FXF_READ, 0, deadline, &rc);
	if (!h) {
		struct strbuf what = STRBUF_INIT;
		if (rc == LIBSSH2_ERROR_TIMEOUT)
			return ssh_fail_timeout(c, "opening a download", timeout_ms, err);
		strbuf_addf(&what, "cannot open '%s'", remote_path);
		st = ssh_map_error(c, rc, what.buf, err);
		strbuf_release(&what);
		return st;
	}
	buf = xmalloc(SSH_IO_CHUNK);
	for (;;) {
		ssize_t n = libssh2_sftp_read(h, buf, SSH_IO_CHUNK);
		if (n == LIBSSH2_ERROR_EAGAIN) {
			if (ssh_wait_socket(c, deadline) < 0) {
				st = ssh_fail_timeout(c, "download", timeout_ms, err);
				break;
			}
			continue;
		}
		if (n < 0) {
			struct strbuf what = STRBUF_INIT;
			strbuf_addf(&what, "cannot read '%s'", remote_path);
			st = ssh_map_error(c, (int)n, what.buf, err);
			strbuf_release(&what);
			break;
		}
		if (n == 0)
			break;   /* end of file */
		if (max && got + (size_t)n > max) {
			st = go_fail(err, GO_ERR_REMOTE,
				     "%s: '%s' is larger than the %zu bytes allowed", c->where,
				     remote_path, max);
			break;
		}
		strbuf_add(data, buf, (size_t)n);
		got += (size_t)n;
		if (time_mono_ms() >= deadline) {
			st = ssh_fail_timeout(c, "download", timeout_ms, err);
			break;
		}
	}
	free(buf);
	sftp_close(c, h);
	return st;
}

/* ---- the public calls: each is one span of the trace ---- */

static void trace_sftp(struct ssh_conn *c, const char *name, const char *path, int64_t t0,
		       int64_t bytes, enum go_status st, const struct strbuf *err)
{
	struct trace_args a = TRACE_ARGS_INIT;
	a.detail = path;
	a.bytes = bytes;
	a.via = "sftp";
	a.status = st ? err->buf : "ok";
	trace_span(c->label, name, t0, &a);
}

enum go_status ssh_upload(struct ssh_conn *c, const void *data, size_t len,
			  const char *remote_path, int mode, uint64_t *bytes_sent,
			  int timeout_ms, struct strbuf *err)
{
	int64_t t0 = trace_now_us();
	enum go_status st = upload_do(c, data, len, remote_path, mode, bytes_sent, timeout_ms, err);
	if (trace_on())
		trace_sftp(c, "upload", remote_path, t0, (int64_t)len, st, err);
	return st;
}

enum go_status ssh_download(struct ssh_conn *c, const char *remote_path,
			    struct strbuf *data, size_t max, int timeout_ms,
			    struct strbuf *err)
{
	int64_t t0 = trace_now_us();
	enum go_status st = download_do(c, remote_path, data, max, timeout_ms, err);
	if (trace_on())
		trace_sftp(c, "download", remote_path, t0, st ? -1 : (int64_t)data->len, st, err);
	return st;
}
