/* ssh-keeper.c -- the session keeper itself: a process that holds one SSH session and relays local streams to the execd.
 *
 * See ssh-mux.c's DESIGN for the whole (the socket, its requests, the
 * launcher); this file is the process `gpuorch __ssh-keeper` runs: it
 * connects with ssh_connect, listens, relays, and leaves. Calls go one
 * way: ssh-keeper.c -> ssh.c, ssh-conn.c (ssh.c's client side is ssh-mux.c). */
#include "transport/ssh-int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
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

#define MUX_LINE_MAX 512
#define MUX_MAX_CLIENTS 64
#define MUX_BUF (64 * 1024)
#define MUX_CLOSE_MS 2000

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

/* The client's line is in: answer it. 1 when the client stays (relaying). */
static int client_line(struct keeper *k, struct client *cl)
{
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
	while (!(cl->ch = ssh_streamlocal_try(k->c, cl->line + 8, &rc)) && rc == LIBSSH2_ERROR_EAGAIN) {
		if (ssh_wait_socket(k->c, deadline) < 0) {
			rc = LIBSSH2_ERROR_TIMEOUT;
			break;
		}
	}
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
		fprintf(stderr, "error: %s is gpuorch's own (docs/host-runner-measurements.md, \"Session keeper\")\n",
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
