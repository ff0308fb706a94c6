/* ssh-mux.c -- the session keeper: one process per host that keeps an SSH session open between runs.
 *
 * DESIGN
 * A host with "persist_s" (docs/hosts.md) gets a keeper, as OpenSSH's
 * ControlMaster/ControlPersist: a process of its own (`gpuorch
 * __ssh-keeper`, started by the run that connected the ordinary way) that
 * holds one session made by ssh_connect (host key verified against the
 * host's known_hosts, authenticated with its identity) and listens on a
 * Unix socket in a private directory:
 *   $XDG_RUNTIME_DIR/gpuorch-mux/ (else ~/.cache/gpuorch/mux/), 0700, ours;
 *   the socket KEY.sock (0600) and KEY.lock beside it, KEY the first 32 hex
 *   digits of the SHA-256 of user, address, port, identity and known_hosts:
 *   options that differ in any of them never share a keeper.
 *
 * A client sends one line and reads one line back:
 *   "hello"          -> "ok SHA256:..." (the session's host key), closed;
 *   "connect PATH"   -> "ok", then the stream is relayed byte for byte to a
 *                       new direct-streamlocal channel to the Unix socket PATH
 *                       on the host (the execd, execd-proto.h) until either
 *                       side closes; "refused" when sshd would not connect it
 *                       (nothing ran: the caller falls back as with its own
 *                       session); "broken MSG" when the session is lost;
 *   "exit"           -> "ok", and the keeper leaves.
 *
 * The keeper is one thread: a poll loop over the listening socket, the SSH
 * socket and its clients, every fd and the session non-blocking. An idle
 * session channel (opened once, never used) gives libssh2 a channel to read
 * on while no client is there, so keepalive answers and a lost connection
 * are seen at once. It leaves after persist_s without a client, when its
 * session breaks (a read or keepalive fails), on SIGTERM/SIGINT/SIGHUP or
 * "exit", and removes its socket (only if the path is still its own) on the
 * way out. KEY.lock, held with flock for the keeper's life, makes a second
 * keeper for the same key leave at once.
 *
 * The launcher: ssh_connect, having connected the ordinary way, spawns
 * `gpuorch __ssh-keeper ...` (posix_spawn: the controller has threads),
 * which forks the keeper (setsid, stdio on /dev/null and KEY.log) and
 * leaves once the keeper is ready or has failed; ssh_disconnect reaps it,
 * so the run that started a keeper ends with the keeper listening. */
#include "transport/ssh-int.h"
#include "core/hash.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "core/timeutil.h"
#include "core/banned.h"

#define MUX_KEY_HEX 32
#define MUX_LINE_MAX 512
#define MUX_MAX_CLIENTS 64
#define MUX_BUF (64 * 1024)
#define MUX_CLOSE_MS 2000

extern char **environ;

/* ------------------------------------------------------------------ */
/* the socket's place                                                  */

/* mkdir DIR 0700 unless it is there; it must be a directory of ours that
 * nobody else can enter. */
static int private_dir(const char *dir, struct strbuf *why)
{
	struct stat st;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		strbuf_addf(why, "cannot create '%s': %s", dir, strerror(errno));
		return -1;
	}
	if (lstat(dir, &st) < 0) {
		strbuf_addf(why, "cannot stat '%s': %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		strbuf_addf(why, "'%s' is not a private directory of this user (mode 0700); "
			    "fix it or remove it", dir);
		return -1;
	}
	return 0;
}

char *ssh_mux_path(const struct ssh_opts *o, struct strbuf *why)
{
	const char *rt = getenv("XDG_RUNTIME_DIR"), *home = getenv("HOME");
	struct strbuf dir = STRBUF_INIT, key = STRBUF_INIT;
	char hex[SHA256_HEX_LEN + 1];
	char *path = NULL;

	if (rt && rt[0] == '/') {
		strbuf_addf(&dir, "%s/gpuorch-mux", rt);
	} else if (home && home[0] == '/') {
		strbuf_addf(&dir, "%s/.cache", home);
		mkdir(dir.buf, 0700);
		strbuf_addstr(&dir, "/gpuorch");
		mkdir(dir.buf, 0700);
		strbuf_addstr(&dir, "/mux");
	} else {
		strbuf_addstr(why, "neither $XDG_RUNTIME_DIR nor $HOME is an absolute path");
		goto out;
	}
	if (private_dir(dir.buf, why))
		goto out;
	/* every field that decides which session it is: NUL-separated */
	strbuf_addstr(&key, "gpuorch-mux 1");
	strbuf_addch(&key, '\0');
	strbuf_addstr(&key, o->user ? o->user : "");
	strbuf_addch(&key, '\0');
	strbuf_addstr(&key, o->address ? o->address : "");
	strbuf_addch(&key, '\0');
	strbuf_addf(&key, "%d", o->port > 0 ? o->port : 22);
	strbuf_addch(&key, '\0');
	strbuf_addstr(&key, o->identity && *o->identity ? o->identity : "(agent)");
	strbuf_addch(&key, '\0');
	strbuf_addstr(&key, o->known_hosts ? o->known_hosts : "");
	sha256_hex(key.buf, key.len, hex);
	hex[MUX_KEY_HEX] = '\0';
	path = xstrfmt("%s/%s.sock", dir.buf, hex);
	if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		strbuf_addf(why, "the socket path '%s' is too long for a Unix socket; "
			    "set XDG_RUNTIME_DIR to a shorter directory", path);
		free(path);
		path = NULL;
	}
out:
	strbuf_release(&dir);
	strbuf_release(&key);
	return path;
}

/* ------------------------------------------------------------------ */
/* the client side                                                     */

/* A connected, non-blocking stream to the keeper at path; -1 when none
 * listens there (absent, or a stale socket of a keeper that died). */
static int mux_dial(const char *path)
{
	struct sockaddr_un sa;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Send a line, read the one-line answer (byte by byte: what follows it is
 * the relayed stream's). 0 with the answer in line (no newline), -1 when the
 * keeper did not answer by the deadline or closed. */
static int mux_ask(int fd, const char *req, char *line, size_t max, int64_t deadline)
{
	size_t len = strlen(req), off = 0, got = 0;

	while (off < len || got == 0 || line[got - 1] != '\n') {
		struct pollfd pfd = { fd, off < len ? POLLOUT : POLLIN, 0 };
		int64_t left = deadline - time_mono_ms();
		ssize_t n;
		if (left <= 0)
			return -1;
		if (poll(&pfd, 1, left > 1000 ? 1000 : (int)left) < 0 && errno != EINTR)
			return -1;
		if (off < len) {
			n = send(fd, req + off, len - off, MSG_NOSIGNAL);
			if (n > 0)
				off += (size_t)n;
			else if (n < 0 && errno != EAGAIN && errno != EINTR)
				return -1;
			continue;
		}
		n = recv(fd, line + got, 1, 0);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return -1;
		if (n > 0 && ++got >= max)
			return -1;
	}
	line[got - 1] = '\0';
	return 0;
}

int ssh_mux_hello(const char *path, char *fp, size_t fplen, int timeout_ms)
{
	char line[MUX_LINE_MAX];
	int fd = mux_dial(path), rc = -1;

	if (fd < 0)
		return -1;
	if (!mux_ask(fd, "hello\n", line, sizeof(line), time_mono_ms() + timeout_ms) &&
	    !strncmp(line, "ok SHA256:", 10)) {
		snprintf(fp, fplen, "%s", line + 3);
		rc = 0;
	}
	close(fd);
	return rc;
}

int ssh_mux_open(struct ssh_conn *c, const char *sock, int64_t deadline, int *refused)
{
	char line[MUX_LINE_MAX];
	char *req;
	int fd = mux_dial(c->mux);

	*refused = 0;
	if (fd >= 0) {
		req = xstrfmt("connect %s\n", sock);
		if (!strchr(sock, '\n') && !mux_ask(fd, req, line, sizeof(line), deadline)) {
			if (!strcmp(line, "ok")) {
				free(req);
				return fd;
			}
			*refused = !strcmp(line, "refused");
		}
		free(req);
		close(fd);
	}
	if (!*refused) {
		/* gone, broken or unanswering: c's own session from now on */
		free(c->mux);
		c->mux = NULL;
	}
	return -1;
}

enum go_status ssh_keeper_stop(const struct ssh_opts *o, struct strbuf *err)
{
	struct strbuf why = STRBUF_INIT;
	char line[MUX_LINE_MAX];
	char *path = ssh_mux_path(o, &why);
	int fd, i;
	enum go_status st = GO_OK;

	if (!path) {
		st = go_fail(err, GO_ERR_NOT_FOUND, "%s: no session keeper: %s",
			     o->label ? o->label : o->address, why.buf);
		strbuf_release(&why);
		return st;
	}
	fd = mux_dial(path);
	if (fd < 0 || mux_ask(fd, "exit\n", line, sizeof(line), time_mono_ms() + 5000) ||
	    strcmp(line, "ok")) {
		st = go_fail(err, GO_ERR_NOT_FOUND, "%s: no session keeper is running",
			     o->label ? o->label : o->address);
	} else {
		/* it removes its socket on the way out */
		for (i = 0; i < 100 && access(path, F_OK) == 0; i++)
			time_sleep_ms(20);
	}
	if (fd >= 0)
		close(fd);
	free(path);
	strbuf_release(&why);
	return st;
}

void ssh_mux_launch(struct ssh_conn *c, const struct ssh_opts *o, const char *path)
{
	char exe[PATH_MAX];
	char port[16], tmo[16], ka[16], persist[16];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *argv[13];
	pid_t pid;

	if (n <= 0)
		return;   /* no keeper: the next run connects the ordinary way */
	exe[n] = '\0';
	snprintf(port, sizeof(port), "%d", o->port > 0 ? o->port : 22);
	snprintf(tmo, sizeof(tmo), "%d", o->connect_timeout_ms);
	snprintf(ka, sizeof(ka), "%d", c->keepalive_s);
	snprintf(persist, sizeof(persist), "%d", o->persist_s);
	argv[0] = exe;
	argv[1] = (char *)SSH_KEEPER_ARG;
	argv[2] = (char *)path;
	argv[3] = c->label;
	argv[4] = c->address;
	argv[5] = port;
	argv[6] = c->user;
	argv[7] = (char *)(o->identity && *o->identity ? o->identity : "");
	argv[8] = (char *)(o->known_hosts ? o->known_hosts : "");
	argv[9] = tmo;
	argv[10] = ka;
	argv[11] = persist;
	argv[12] = NULL;
	if (posix_spawn(&pid, exe, NULL, NULL, argv, environ) == 0)
		c->mux_launcher = pid;
}

/* ------------------------------------------------------------------ */
/* the keeper                                                          */

struct client {
	int fd;
	LIBSSH2_CHANNEL *ch;        /* relaying once set */
	char line[MUX_LINE_MAX];
	size_t linelen;
	char up[MUX_BUF];           /* client -> host */
	size_t uplen, upoff;
	char down[MUX_BUF];         /* host -> client */
	size_t downlen, downoff;
	int ch_eof;
};

struct keeper {
	struct ssh_conn *c;
	const char *path;
	int listen_fd;
	LIBSSH2_CHANNEL *idle;
	struct client *cl[MUX_MAX_CLIENTS];
	int ncl;
	int broken;                 /* the session is lost */
	int quit;
	int persist_s;
	int64_t last_used;          /* when the last client left */
	int timeout_ms;
};

static volatile sig_atomic_t keeper_signal;

static void on_signal(int sig)
{
	keeper_signal = sig;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char ts[32];
	va_list ap;
	time_iso8601(time(NULL), ts);
	fprintf(stderr, "%s keeper %d: ", ts, (int)getpid());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

/* Is this libssh2 result a lost session? */
static int lost(int rc)
{
	return rc < 0 && rc != LIBSSH2_ERROR_EAGAIN &&
	       (ssh_is_socket_error(rc) || rc == LIBSSH2_ERROR_TIMEOUT ||
		rc == LIBSSH2_ERROR_DECRYPT || rc == LIBSSH2_ERROR_INVALID_MAC ||
		rc == LIBSSH2_ERROR_PROTO);
}

static void send_line(int fd, const char *s)
{
	/* a short line into an empty socket buffer: all of it goes */
	ssize_t n = send(fd, s, strlen(s), MSG_NOSIGNAL);
	(void)n;
}

static void drop_client(struct keeper *k, int i)
{
	struct client *cl = k->cl[i];
	int64_t deadline = time_mono_ms() + MUX_CLOSE_MS;
	int rc;

	close(cl->fd);
	if (cl->ch && !k->broken) {
		/* closing it hangs up the execd's command (if it still runs) */
		SSH_RETRY(k->c, deadline, rc, libssh2_channel_close(cl->ch));
		if (!rc)
			SSH_RETRY(k->c, deadline, rc, libssh2_channel_free(cl->ch));
		if (lost(rc) && rc != LIBSSH2_ERROR_TIMEOUT)
			k->broken = 1;
	}
	free(cl);
	k->cl[i] = k->cl[--k->ncl];
	k->cl[k->ncl] = NULL;
	if (!k->ncl)
		k->last_used = time_mono_ms();
}

static const char streamlocal[] = "direct-streamlocal@openssh.com";

static void add_string(struct strbuf *sb, const char *s)
{
	size_t n = strlen(s);
	unsigned char h[4] = { (unsigned char)(n >> 24), (unsigned char)(n >> 16),
			       (unsigned char)(n >> 8), (unsigned char)n };
	strbuf_add(sb, h, 4);
	strbuf_add(sb, s, n);
}

/* The client's line is in: answer it. 1 when the client stays (relaying). */
static int client_line(struct keeper *k, struct client *cl)
{
	static const unsigned char zero[4] = { 0, 0, 0, 0 };
	struct strbuf msg = STRBUF_INIT;
	int64_t deadline = time_mono_ms() + k->timeout_ms;
	char *ans;
	int rc = 0;

	if (!strcmp(cl->line, "hello")) {
		ans = xstrfmt("ok %s\n", ssh_fingerprint(k->c));
		send_line(cl->fd, ans);
		free(ans);
		return 0;
	}
	if (!strcmp(cl->line, "exit")) {
		send_line(cl->fd, "ok\n");
		say("asked to leave");
		k->quit = 1;
		return 0;
	}
	if (strncmp(cl->line, "connect /", 9)) {
		send_line(cl->fd, "error unknown request\n");
		return 0;
	}
	add_string(&msg, cl->line + 8);
	add_string(&msg, "");
	strbuf_add(&msg, zero, 4);
	for (;;) {
		cl->ch = libssh2_channel_open_ex(k->c->session, streamlocal, sizeof(streamlocal) - 1,
						 LIBSSH2_CHANNEL_WINDOW_DEFAULT,
						 LIBSSH2_CHANNEL_PACKET_DEFAULT, msg.buf,
						 (unsigned int)msg.len);
		if (cl->ch)
			break;
		rc = libssh2_session_last_errno(k->c->session);
		if (rc != LIBSSH2_ERROR_EAGAIN)
			break;
		if (ssh_wait_socket(k->c, deadline) < 0) {
			rc = LIBSSH2_ERROR_TIMEOUT;
			break;
		}
	}
	strbuf_release(&msg);
	if (cl->ch) {
		send_line(cl->fd, "ok\n");
		return 1;
	}
	if (rc == LIBSSH2_ERROR_CHANNEL_FAILURE) {
		send_line(cl->fd, "refused\n");
	} else if (lost(rc)) {
		send_line(cl->fd, "broken the session was lost\n");
		say("the session was lost opening a channel (libssh2 error %d)", rc);
		k->broken = 1;
	} else {
		ans = xstrfmt("error cannot open a channel (libssh2 error %d)\n", rc);
		send_line(cl->fd, ans);
		free(ans);
	}
	return 0;
}

/* One pass over a client: 1 when something moved, -1 when it is done. */
static int client_step(struct keeper *k, struct client *cl)
{
	int progress = 0;
	ssize_t n;

	if (!cl->ch) {
		/* its request line, a byte at a time (it is short) */
		for (;;) {
			n = recv(cl->fd, cl->line + cl->linelen, 1, 0);
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
				return -1;
			if (n < 0)
				return progress;
			progress = 1;
			if (cl->line[cl->linelen] == '\n') {
				cl->line[cl->linelen] = '\0';
				return client_line(k, cl) ? 1 : -1;
			}
			if (++cl->linelen >= sizeof(cl->line) - 1)
				return -1;
		}
	}
	/* client -> host */
	if (!cl->uplen) {
		n = recv(cl->fd, cl->up, sizeof(cl->up), 0);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return -1;   /* the client left: its command is hung up */
		if (n > 0) {
			cl->uplen = (size_t)n;
			cl->upoff = 0;
			progress = 1;
		}
	}
	if (cl->uplen) {
		n = libssh2_channel_write(cl->ch, cl->up + cl->upoff, cl->uplen - cl->upoff);
		if (n > 0) {
			cl->upoff += (size_t)n;
			if (cl->upoff == cl->uplen)
				cl->uplen = 0;
			progress = 1;
		} else if (n < 0 && n != LIBSSH2_ERROR_EAGAIN) {
			if (lost((int)n))
				k->broken = 1;
			return -1;
		}
	}
	/* host -> client */
	if (!cl->downlen && !cl->ch_eof) {
		n = libssh2_channel_read(cl->ch, cl->down, sizeof(cl->down));
		if (n > 0) {
			cl->downlen = (size_t)n;
			cl->downoff = 0;
			progress = 1;
		} else if (n < 0 && n != LIBSSH2_ERROR_EAGAIN) {
			if (lost((int)n))
				k->broken = 1;
			return -1;
		} else if (n == 0 && libssh2_channel_eof(cl->ch)) {
			cl->ch_eof = 1;
		}
	}
	if (cl->downlen) {
		n = send(cl->fd, cl->down + cl->downoff, cl->downlen - cl->downoff, MSG_NOSIGNAL);
		if (n > 0) {
			cl->downoff += (size_t)n;
			if (cl->downoff == cl->downlen)
				cl->downlen = 0;
			progress = 1;
		} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			return -1;
		}
	}
	if (cl->ch_eof && !cl->downlen)
		return -1;   /* the execd closed: so does the client's stream */
	return progress;
}

static void keeper_accept(struct keeper *k)
{
	for (;;) {
		struct client *cl;
		int fd = accept(k->listen_fd, NULL, NULL);
		if (fd < 0)
			return;
		if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0 ||
		    fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
			close(fd);
			continue;
		}
		if (k->ncl >= MUX_MAX_CLIENTS) {
			close(fd);
			continue;
		}
		cl = xcalloc(1, sizeof(*cl));
		cl->fd = fd;
		k->cl[k->ncl++] = cl;
	}
}

/* Let libssh2 read what came (keepalive answers, a lost connection) on
 * the idle channel; send a keepalive when due. Returns the seconds to the
 * next keepalive. */
static int keeper_session(struct keeper *k)
{
	char buf[256];
	ssize_t n;
	int next = 1;

	do
		n = libssh2_channel_read(k->idle, buf, sizeof(buf));
	while (n > 0);
	if (lost((int)n) || libssh2_channel_eof(k->idle)) {
		say("the SSH session was lost (%s)", n < 0 ? "read failed" : "closed by the server");
		k->broken = 1;
		return 1;
	}
	n = libssh2_keepalive_send(k->c->session, &next);
	if (lost((int)n)) {
		say("the SSH session was lost (keepalive failed)");
		k->broken = 1;
	}
	return next > 0 ? next : 1;
}

static void keeper_loop(struct keeper *k)
{
	struct pollfd pfd[MUX_MAX_CLIENTS + 2];

	k->last_used = time_mono_ms();
	while (!k->quit && !k->broken && !keeper_signal) {
		int progress = 0, i, n, dir, next_ka;
		int64_t wait_ms = 1000;

		keeper_accept(k);
		for (i = 0; i < k->ncl && !k->broken; ) {
			int r = client_step(k, k->cl[i]);
			if (r < 0) {
				drop_client(k, i);
				progress = 1;
				continue;
			}
			progress |= r;
			i++;
		}
		next_ka = keeper_session(k);
		if (k->quit || k->broken)
			break;
		if (progress)
			continue;
		if (!k->ncl) {
			int64_t left = k->last_used + (int64_t)k->persist_s * 1000 - time_mono_ms();
			if (left <= 0) {
				say("unused for %d s: leaving", k->persist_s);
				break;
			}
			if (left < wait_ms)
				wait_ms = left;
		}
		if (next_ka * 1000 < wait_ms)
			wait_ms = next_ka * 1000;
		dir = libssh2_session_block_directions(k->c->session);
		pfd[0].fd = k->listen_fd;
		pfd[0].events = POLLIN;
		pfd[1].fd = k->c->sock;
		pfd[1].events = POLLIN | ((dir & LIBSSH2_SESSION_BLOCK_OUTBOUND) ? POLLOUT : 0);
		for (i = 0; i < k->ncl; i++) {
			struct client *cl = k->cl[i];
			pfd[2 + i].fd = cl->fd;
			pfd[2 + i].events = (!cl->ch || !cl->uplen ? POLLIN : 0) |
					    (cl->downlen ? POLLOUT : 0);
		}
		for (i = 0; i < k->ncl + 2; i++)
			pfd[i].revents = 0;
		n = poll(pfd, (nfds_t)(k->ncl + 2), (int)wait_ms);
		if (n < 0 && errno != EINTR)
			time_sleep_ms(10);
	}
	if (keeper_signal)
		say("signal %d: leaving", (int)keeper_signal);
}

/* Remove the socket at path if it is still the one bound by us (ino). */
static void unlink_own(const char *path, ino_t ino)
{
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == ino)
		unlink(path);
}

static int keeper_listen(const char *path, ino_t *ino)
{
	struct sockaddr_un sa;
	struct stat st;
	mode_t old;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	unlink(path);   /* a stale one (we hold the lock: no keeper lives there) */
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		umask(old);
		close(fd);
		return -1;
	}
	umask(old);
	if (chmod(path, 0600) < 0 || listen(fd, 64) < 0 || lstat(path, &st) < 0) {
		unlink(path);
		close(fd);
		return -1;
	}
	*ino = st.st_ino;
	return fd;
}

/* The keeper itself (in the launcher's child): 0 after a clean leave. */
static int keeper_run(struct ssh_opts *o, const char *path, int ready_fd)
{
	struct strbuf err = STRBUF_INIT;
	struct keeper k;
	char *lock = xstrfmt("%s.lock", path);
	int lock_fd, rc = 1;
	int64_t deadline;
	ino_t ino = 0;

	memset(&k, 0, sizeof(k));
	k.path = path;
	k.listen_fd = -1;
	k.persist_s = o->persist_s;
	k.timeout_ms = o->connect_timeout_ms > 0 ? o->connect_timeout_ms : 10000;
	lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock_fd < 0 || flock(lock_fd, LOCK_EX | LOCK_NB) < 0) {
		say("another keeper holds '%s': leaving", lock);
		rc = 0;
		goto out;
	}
	o->persist_s = 0;   /* this session is the kept one */
	if (ssh_connect(o, &k.c, &err) != GO_OK) {
		say("cannot connect: %s", err.buf);
		goto out;
	}
	deadline = time_mono_ms() + k.timeout_ms;
	for (;;) {
		k.idle = libssh2_channel_open_session(k.c->session);
		if (k.idle || libssh2_session_last_errno(k.c->session) != LIBSSH2_ERROR_EAGAIN)
			break;
		if (ssh_wait_socket(k.c, deadline) < 0)
			break;
	}
	if (!k.idle) {
		say("%s: cannot open a session channel", k.c->where);
		goto out;
	}
	k.listen_fd = keeper_listen(path, &ino);
	if (k.listen_fd < 0) {
		say("cannot listen on '%s': %s", path, strerror(errno));
		goto out;
	}
	say("%s: keeping the session (host key %s) on '%s' for %d s unused", k.c->where,
	    ssh_fingerprint(k.c), path, k.persist_s);
	if (write(ready_fd, "r", 1) < 0)
		say("cannot tell the launcher: %s", strerror(errno));
	close(ready_fd);
	ready_fd = -1;
	keeper_loop(&k);
	rc = 0;
out:
	if (k.listen_fd >= 0) {
		unlink_own(path, ino);   /* first: no client finds a keeper that is leaving */
		close(k.listen_fd);
	}
	while (k.ncl)
		drop_client(&k, 0);
	if (k.c) {
		int64_t dl = time_mono_ms() + MUX_CLOSE_MS;
		int r;
		if (k.idle && !k.broken) {
			SSH_RETRY(k.c, dl, r, libssh2_channel_free(k.idle));
			(void)r;
		}
		if (k.broken)
			ssh_conn_set_state(k.c, CONN_BROKEN);
		ssh_disconnect(k.c);
	}
	if (k.broken) {
		say("leaving: the session is lost");
		rc = 1;
	}
	if (lock_fd >= 0)
		close(lock_fd);   /* the lock file stays: removing it would race a new keeper */
	if (ready_fd >= 0)
		close(ready_fd);
	free(lock);
	strbuf_release(&err);
	return rc;
}

/* argv: PATH LABEL ADDRESS PORT USER IDENTITY KNOWN_HOSTS TIMEOUT_MS KEEPALIVE_S PERSIST_S */
int ssh_keeper_main(int argc, char **argv)
{
	struct ssh_opts o;
	struct sigaction sa;
	char *logpath;
	int pipefd[2], fd;
	pid_t pid;
	char r;

	if (argc != 10 || argv[0][0] != '/') {
		fprintf(stderr, "error: %s is gpuorch's own (docs/design.md, \"Session keeper\")\n",
			SSH_KEEPER_ARG);
		return GO_EXIT_USAGE;
	}
	memset(&o, 0, sizeof(o));
	o.label = argv[1];
	o.address = argv[2];
	o.port = atoi(argv[3]);
	o.user = argv[4];
	o.identity = argv[5][0] ? argv[5] : NULL;
	o.use_agent = !o.identity;
	o.known_hosts = argv[6][0] ? argv[6] : NULL;
	o.connect_timeout_ms = atoi(argv[7]);
	o.keepalive_s = atoi(argv[8]);
	o.persist_s = atoi(argv[9]);
	if (o.persist_s <= 0)
		return GO_EXIT_USAGE;
	/* nothing of the controller's: no fd beyond stdio, stdio to /dev/null
	 * and the log (a run's captured output must not wait for the keeper) */
	for (fd = 3; fd < 1024; fd++)
		close(fd);
	logpath = xstrfmt("%.*s.log", (int)(strlen(argv[0]) - 5), argv[0]);
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		if (fd > 2)
			close(fd);
	}
	fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd >= 0) {
		dup2(fd, 2);
		close(fd);
	}
	free(logpath);
	if (pipe(pipefd) < 0)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid > 0) {
		ssize_t n;
		/* the launcher: leave once the keeper is ready (a byte) or has
		 * failed (EOF) */
		close(pipefd[1]);
		do
			n = read(pipefd[0], &r, 1);
		while (n < 0 && errno == EINTR);
		close(pipefd[0]);
		return n == 1 ? 0 : 1;
	}
	close(pipefd[0]);
	setsid();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return keeper_run(&o, argv[0], pipefd[1]);
}
