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
 * so the run that started a keeper ends with the keeper listening.
 *
 * FILES
 * ssh-mux.c: the client side (the socket's place, hello, a relayed stream,
 * the launch, stop), called by ssh.c and ssh-exec.c; ssh-keeper.c: the
 * keeper process, which calls ssh.c (so the two are apart: no loop). */
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
