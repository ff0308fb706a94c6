/* gpuorch-execd.c -- runs gpuorch's remote commands on a host without
 * starting the user's login shell: a small resident server on a Unix socket
 * in the host's work directory, reached over SSH's direct-streamlocal channel
 * (docs/runner.md, "execd").
 *
 * DESIGN
 * sshd runs every exec request through the user's login shell, which reads
 * ~/.bashrc: 0.2-0.6 s per command where it initialises conda or pyenv. This
 * program is built on the host with its C compiler (nvcc needs one) by the
 * first run's start command, started there detached, and from then on
 * gpuorch opens a direct-streamlocal channel to its socket instead of an exec
 * channel: sshd connects the channel to the socket and starts no shell. It
 * is one file, POSIX plus Linux-only nothing, dependency-free.
 *
 *   gpuorch-execd start SOCK IDLE_S   bring one up on SOCK (its directory must
 *                                     be the caller's, mode 0700); prints
 *                                     "started PID" or "running"
 *   gpuorch-execd ping SOCK           exit 0 when one answers on SOCK
 *
 * One server per socket: it holds flock(SOCK.lock) for life, so a second
 * start finds it running. Per connection it forks a handler that reads one
 * request, runs it as `/bin/sh -c CMD` in a session of its own in $HOME, with
 * the environment the server was started with (that of a login shell: the
 * start command ran in one) plus GPUORCH_EXECD=SOCK (so gpuorch's start
 * command knows it need not start one), and relays it:
 *
 *   request   "gpuorch-execd 1 CMDLEN INLEN\n" CMD (CMDLEN bytes) STDIN (INLEN)
 *   reply     frames: one tag byte, a 4-byte big-endian length, the payload
 *               'O' stdout   'E' stderr   'X' the end: "exit N" or "signal NAME"
 *               'S' refused, nothing ran: the server is stale (see below) and
 *                   exits; the client runs the command the ordinary way
 *               'B' a bad request (the message says what)
 *
 * The client going away mid-command (channel closed) hangs up the command's
 * process group (SIGHUP, SIGKILL 5 s later), as a dropped SSH session ends
 * its command. The server exits when it has been idle IDLE_S seconds, when
 * its binary or its socket is removed or replaced, and -- answering 'S' --
 * when a shell start-up file (~/.bashrc, ~/.profile, /etc/environment, ...)
 * changed since it started, since its environment would no longer be the one
 * a login shell gives. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROTO "gpuorch-execd 1 "
#define PUT_PROTO "gpuorch-execd-put 1 "
#define PUT_CHUNK (1u << 17)     /* a blob's bytes read at most at once (in the cache: 1 MiB cost more) */
#define PUT_ACK (1u << 17)       /* a put says how far it has written every this many bytes ('A') */
#define MAX_CMD (1u << 20)
#define MAX_IN ((uint64_t)1 << 32)
#define REQ_TIMEOUT_MS 30000     /* the request must arrive within this */
#define HANGUP_GRACE_S 5
#define CHUNK 65536
#define OUTQ_MAX (4 * CHUNK)     /* reply bytes queued before the pipes wait */

extern char **environ;

/* ------------------------------------------------------------------ utils */

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static int fill_addr(struct sockaddr_un *a, const char *path)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a->sun_path))
		return -1;
	memcpy(a->sun_path, path, strlen(path) + 1);
	return 0;
}

static int connect_to(const char *path)
{
	struct sockaddr_un a;
	int fd;
	if (fill_addr(&a, path))
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* ------------------------------------------------------- staleness watch */

/* Files whose change means a login shell would now give another
 * environment; relative ones are under $HOME. The server's own binary is
 * watched too (a new gpuorch, `gpuorch hosts clean`). */
static const char *const watched[] = {
	".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshenv", ".zprofile",
	".zshrc", ".zlogin", ".cshrc", ".tcshrc", ".login", ".config/fish/config.fish",
	".ssh/environment", ".ssh/rc", ".pam_environment", "/etc/environment", "/etc/profile",
	"/etc/profile.d", "/etc/bash.bashrc", "/etc/zsh/zshenv", "/etc/zsh/zshrc",
	"/etc/ssh/sshrc", "/etc/security/pam_env.conf",
};
#define NWATCH (sizeof(watched) / sizeof(watched[0]) + 1)

struct fstamp {
	int exists;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
};

static char *self_path;                /* the binary, absolute */
static const char *sock_path;          /* the socket served */
static mode_t start_umask;             /* the start command's, for the commands run */
static int lock_fd = -1;               /* flock(SOCK.lock): held by the server only */
static struct fstamp stamps[NWATCH];

static void stamp_all(struct fstamp *out)
{
	const char *home = getenv("HOME");
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < NWATCH; i++) {
		const char *p = i < NWATCH - 1 ? watched[i] : self_path;
		struct stat st;
		memset(&out[i], 0, sizeof(out[i]));
		if (p[0] != '/') {
			if (!home || snprintf(path, sizeof(path), "%s/%s", home, p) >= (int)sizeof(path))
				continue;
			p = path;
		}
		if (stat(p, &st) == 0) {
			out[i].exists = 1;
			out[i].dev = st.st_dev;
			out[i].ino = st.st_ino;
			out[i].size = st.st_size;
			out[i].mtime = st.st_mtim;
			out[i].ctime = st.st_ctim;
		}
	}
}

/* The name of the first watched file that changed, or NULL. */
static const char *stale_file(void)
{
	struct fstamp cur[NWATCH];
	size_t i;

	stamp_all(cur);
	for (i = 0; i < NWATCH; i++) {
		const struct fstamp *a = &stamps[i], *b = &cur[i];
		if (a->exists != b->exists || a->dev != b->dev || a->ino != b->ino ||
		    a->size != b->size || a->mtime.tv_sec != b->mtime.tv_sec ||
		    a->mtime.tv_nsec != b->mtime.tv_nsec || a->ctime.tv_sec != b->ctime.tv_sec ||
		    a->ctime.tv_nsec != b->ctime.tv_nsec)
			return i < NWATCH - 1 ? watched[i] : "the execd binary";
	}
	return NULL;
}

/* ------------------------------------------------------------ the reply */

struct outq {
	char *buf;
	size_t len, off;
	int fd;          /* the connection; -1 once the client is gone */
};

static void q_frame(struct outq *q, char tag, const void *data, size_t len)
{
	unsigned char h[5];
	if (q->fd < 0)
		return;
	h[0] = (unsigned char)tag;
	h[1] = (unsigned char)(len >> 24);
	h[2] = (unsigned char)(len >> 16);
	h[3] = (unsigned char)(len >> 8);
	h[4] = (unsigned char)len;
	if (q->off && q->off == q->len)
		q->off = q->len = 0;
	q->buf = realloc(q->buf, q->len + 5 + len);
	if (!q->buf)
		_exit(70);
	memcpy(q->buf + q->len, h, 5);
	memcpy(q->buf + q->len + 5, data, len);
	q->len += 5 + len;
}

/* Write what is queued; -1 when the client is gone. */
static int q_flush(struct outq *q)
{
	while (q->fd >= 0 && q->off < q->len) {
		ssize_t n = write(q->fd, q->buf + q->off, q->len - q->off);
		if (n > 0) {
			q->off += (size_t)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			return 0;
		} else {
			close(q->fd);
			q->fd = -1;
			return -1;
		}
	}
	return 0;
}

/* Write out what q holds, blocking. */
static void say_queued(struct outq *q)
{
	struct pollfd p = { q->fd, POLLOUT, 0 };
	while (q->fd >= 0 && q->off < q->len) {
		if (q_flush(q) < 0)
			break;
		if (q->off < q->len && poll(&p, 1, 5000) <= 0)
			break;
	}
}

/* Queue one frame and write it all out, blocking (before the command runs). */
static void say(int fd, char tag, const char *msg)
{
	struct outq q = { NULL, 0, 0, fd };
	q_frame(&q, tag, msg, strlen(msg));
	say_queued(&q);
	free(q.buf);
}

static const char *sig_name(int sig)
{
	static const char *const names[] = {
		NULL, "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1",
		"SEGV", "USR2", "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP",
		"TTIN", "TTOU", "URG", "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO", "PWR", "SYS"
	};
	return sig > 0 && sig < (int)(sizeof(names) / sizeof(names[0])) ? names[sig] : NULL;
}

/* -------------------------------------------------------- one request */

/* Read exactly len bytes from fd (non-blocking) by the deadline. */
static int read_full(int fd, char *buf, size_t len, int64_t deadline)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);
		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n == 0)
			return -1;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		{
			struct pollfd p = { fd, POLLIN, 0 };
			int64_t left = deadline - now_ms();
			if (left <= 0 || poll(&p, 1, (int)left) <= 0)
				return -1;
		}
	}
	return 0;
}

/* The request header, "gpuorch-execd 1 CMDLEN INLEN\n" (or a put's,
 * "gpuorch-execd-put 1 DIRLEN INLEN\n": *put set), byte by byte (so
 * nothing of the command is read past it). */
static int read_header(int fd, uint64_t *cmdlen, uint64_t *inlen, int *put, int64_t deadline)
{
	char line[96], *end;
	size_t n = 0, plen;
	unsigned long long a, b;

	for (;;) {
		if (n + 1 >= sizeof(line) || read_full(fd, line + n, 1, deadline))
			return -1;
		if (line[n] == '\n')
			break;
		n++;
	}
	line[n] = '\0';
	*put = !strncmp(line, PUT_PROTO, strlen(PUT_PROTO));
	plen = *put ? strlen(PUT_PROTO) : strlen(PROTO);
	if (!*put && strncmp(line, PROTO, plen))
		return -2;
	errno = 0;
	a = strtoull(line + plen, &end, 10);
	if (errno || *end != ' ')
		return -2;
	b = strtoull(end + 1, &end, 10);
	if (errno || *end)
		return -2;
	*cmdlen = a;
	*inlen = b;
	return 0;
}

/* Where sshd starts a session, with the umask an exec request would have. */
static void go_home(void)
{
	/* where sshd starts a session: the account's home directory */
	const struct passwd *pw = getpwuid(getuid());
	const char *home = pw && pw->pw_dir && pw->pw_dir[0] ? pw->pw_dir : getenv("HOME");
	if (!home || chdir(home) < 0) {
		if (chdir("/") < 0)
			_exit(126);
	}
	umask(start_umask);
}

static void child_exec(const char *cmd, int in, int out, int err)
{
	/* where sshd starts a session: the account's home directory */
	long fd, maxfd = sysconf(_SC_OPEN_MAX);
	sigset_t none;

	setsid();
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(126);
	if (maxfd < 0 || maxfd > 65536)
		maxfd = 65536;
	for (fd = 3; fd < maxfd; fd++)
		close((int)fd);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setenv("GPUORCH_EXECD", sock_path, 1);   /* the start command: "it runs" */
	unsetenv("PWD");      /* sh sets it for the directory it starts in */
	unsetenv("OLDPWD");
	go_home();
	execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	dprintf(2, "gpuorch-execd: cannot run /bin/sh: %s\n", strerror(errno));
	_exit(127);
}

/* A stale server ('S', see the top) refuses the request and leaves. */
static void refuse_if_stale(int fd)
{
	const char *why = stale_file();
	char msg[256];
	if (!why)
		return;
	snprintf(msg, sizeof(msg), "stale: %s changed since this execd started", why);
	/* the server leaves first (socket and lock released), so the
	 * start command the client runs next starts a fresh one */
	kill(getppid(), SIGUSR1);
	{
		int64_t until = now_ms() + 3000;
		while (access(sock_path, F_OK) == 0 && now_ms() < until)
			poll(NULL, 0, 10);
	}
	say(fd, 'S', msg);
	_exit(0);
}

/* ------------------------------------------------------------ a put of blobs */

/* A put ("gpuorch-execd-put 1 DIRLEN INLEN\n" DIR, then INLEN bytes of
 * blobs, each "SHA256 SIZE\n" and its SIZE bytes) writes each blob
 * straight from the connection into DIR/SHA256: one read and one write a
 * byte, hashed on the way (SHA-256, the host's libcrypto, loaded when a put
 * comes: the execd links nothing), then made read-only with mtime 0 (what
 * start.sh keeps) and renamed into place. A blob whose bytes do not hash to
 * its name is refused: its file goes and it is said on stderr ('E'). Every
 * PUT_ACK bytes of its input read it says how many it has read so far ('A',
 * in decimal): the client keeps no more than a bound ahead of that, so the
 * sshd between them never gathers much of it (its buffer grows in 32 KiB
 * steps, each a copy of it: docs/host-runner-measurements.md). The end:
 * "exit 0" every blob stored; 1 some refused or not written (said); 3 no
 * libcrypto here (nothing read: the client sends them another way). */

/* how far a put has read, said every PUT_ACK bytes */
struct put_ack {
	struct outq *q;
	uint64_t done, said;
};

static void put_read(struct put_ack *a, uint64_t n)
{
	char num[32];
	a->done += n;
	if (a->done - a->said < PUT_ACK)
		return;
	snprintf(num, sizeof(num), "%llu", (unsigned long long)a->done);
	q_frame(a->q, 'A', num, strlen(num));
	say_queued(a->q);
	a->said = a->done;
}

struct sha {   /* libcrypto's EVP digest, found at run time */
	void *(*ctx_new)(void);
	void (*ctx_free)(void *);
	const void *(*sha256)(void);
	int (*init)(void *, const void *, void *);
	int (*update)(void *, const void *, size_t);
	int (*final)(void *, unsigned char *, unsigned int *);
};

static int sha_load(struct sha *h)
{
	static const char *const libs[] = { "libcrypto.so.3", "libcrypto.so.1.1", "libcrypto.so" };
	void *l = NULL;
	size_t i;
	for (i = 0; !l && i < sizeof(libs) / sizeof(libs[0]); i++)
		l = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
	if (!l)
		return -1;
	*(void **)&h->ctx_new = dlsym(l, "EVP_MD_CTX_new");
	*(void **)&h->ctx_free = dlsym(l, "EVP_MD_CTX_free");
	*(void **)&h->sha256 = dlsym(l, "EVP_sha256");
	*(void **)&h->init = dlsym(l, "EVP_DigestInit_ex");
	*(void **)&h->update = dlsym(l, "EVP_DigestUpdate");
	*(void **)&h->final = dlsym(l, "EVP_DigestFinal_ex");
	return h->ctx_new && h->ctx_free && h->sha256 && h->init && h->update && h->final ? 0 : -1;
}

/* mkdir -p dir (each made 0700: the blob store is the account's alone): 0, or -1 with errno. */
static int mkdirs(const char *dir)
{
	char p[PATH_MAX];
	size_t i, n = strlen(dir);
	if (n >= sizeof(p)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(p, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		p[i] = '\0';
		if (mkdir(p, 0700) && errno != EEXIST)
			return -1;
		p[i] = i < n ? '/' : '\0';
	}
	return 0;
}

/* One blob's "SHA256 SIZE\n" line: 0, or -1 (said) when it is not one. */
static int put_line(int fd, char hash[65], uint64_t *size, uint64_t *left, int64_t deadline)
{
	char line[96], *end;
	size_t n = 0, i;
	for (;;) {
		if (n + 1 >= sizeof(line) || n >= *left || read_full(fd, line + n, 1, deadline))
			goto bad;
		if (line[n] == '\n')
			break;
		n++;
	}
	line[n] = '\0';
	for (i = 0; i < 64; i++)
		if (!((line[i] >= '0' && line[i] <= '9') || (line[i] >= 'a' && line[i] <= 'f')))
			goto bad;
	if (line[64] != ' ')
		goto bad;
	errno = 0;
	*size = strtoull(line + 65, &end, 10);
	if (errno || *end || end == line + 65 || *size > *left - n - 1)
		goto bad;
	*left -= n + 1 + *size;
	memcpy(hash, line, 64);
	hash[64] = '\0';
	return 0;
bad:
	say(fd, 'B', "gpuorch-execd: a put's blob does not start with \"SHA256 SIZE\" within its length");
	return -1;
}

/* size bytes from fd into the file out, hashed into ctx; errno'd -1 on a
 * write error (the rest is still read), -2 when the client went. */
static int put_bytes(int fd, int out, uint64_t size, const struct sha *h, void *ctx, char *buf,
		     struct put_ack *a)
{
	int werr = 0;
	while (size) {
		size_t want = size < PUT_CHUNK ? (size_t)size : PUT_CHUNK;
		ssize_t n = read(fd, buf, want), w = 0;
		if (n == 0)
			return -2;
		if (n < 0) {
			struct pollfd p = { fd, POLLIN, 0 };
			if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
				return -2;
			if (errno != EINTR && poll(&p, 1, REQ_TIMEOUT_MS) <= 0)
				return -2;
			continue;
		}
		h->update(ctx, buf, (size_t)n);
		put_read(a, (uint64_t)n);
		while (!werr && w < n) {
			ssize_t k = write(out, buf + w, (size_t)(n - w));
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				werr = k < 0 ? errno : ENOSPC;
				break;
			}
			w += k;
		}
		size -= (uint64_t)n;
	}
	errno = werr;
	return werr ? -1 : 0;
}

/* One blob into dir: 0 stored, 1 refused or not written (said on q), -1
 * the client went (its file gone). */
static int put_one(int fd, struct put_ack *a, const char *dir, const char *hash, uint64_t size,
		   const struct sha *h, char *buf)
{
	struct outq *q = a->q;
	static const struct timespec zero[2] = { { 0, 0 }, { 0, 0 } };
	char tmp[PATH_MAX], dst[PATH_MAX], msg[PATH_MAX + 256], got[65];
	unsigned char md[64];
	unsigned int mdlen = 0, i;
	void *ctx = h->ctx_new();
	int out, r;

	snprintf(dst, sizeof(dst), "%s/%s", dir, hash);
	snprintf(tmp, sizeof(tmp), "%s/.put.%s.%ld", dir, hash, (long)getpid());
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (!ctx || !h->init(ctx, h->sha256(), NULL))
		_exit(70);
	{
		/* a file that cannot be made: its bytes are still read (the
		 * put goes on with the next blob), into /dev/null */
		int sink = out < 0 ? open("/dev/null", O_WRONLY | O_CLOEXEC) : out;
		r = put_bytes(fd, sink, size, h, ctx, buf, a);
		if (out < 0 && sink >= 0)
			close(sink);
	}
	h->final(ctx, md, &mdlen);
	h->ctx_free(ctx);
	for (i = 0; i < mdlen && i < 32; i++)
		snprintf(got + 2 * i, 3, "%02x", md[i]);
	if (r == -2 || out < 0 || r == -1 || strcmp(got, hash)) {
		int e = out < 0 ? EACCES : errno;
		if (out >= 0)
			close(out);
		unlink(tmp);
		if (r == -2)
			return -1;
		if (out < 0 || r == -1)
			snprintf(msg, sizeof(msg), "gpuorch-execd: cannot write blob %s into %s: %s "
				 "(free space there: gpuorch hosts clean)\n", hash, dir, strerror(e));
		else
			snprintf(msg, sizeof(msg), "gpuorch-execd: blob %s refused: its %llu bytes hash "
				 "to %s (changed on the way); it was not stored\n", hash,
				 (unsigned long long)size, got);
		q_frame(q, 'E', msg, strlen(msg));
		return 1;
	}
	if (fchmod(out, 0400) || futimens(out, zero) || close(out) || rename(tmp, dst)) {
		snprintf(msg, sizeof(msg), "gpuorch-execd: cannot store blob %s in %s: %s\n", hash,
			 dir, strerror(errno));
		unlink(tmp);
		q_frame(q, 'E', msg, strlen(msg));
		return 1;
	}
	return 0;
}

/* Serve a put (the header read): never returns. */
static void put_blobs(int fd, const char *dir, uint64_t inlen)
{
	struct outq q = { NULL, 0, 0, fd };
	struct put_ack a = { &q, 0, 0 };
	struct sha h;
	char hash[65], end[32];
	uint64_t size, left = inlen, before;
	int bad = 0, r;
	char *buf = malloc(PUT_CHUNK);

	if (!buf)
		_exit(70);
	go_home();
	if (mkdirs(dir)) {
		char m[PATH_MAX + 128];
		snprintf(m, sizeof(m), "gpuorch-execd: cannot create %s: %s\n", dir, strerror(errno));
		q_frame(&q, 'E', m, strlen(m));
		q_frame(&q, 'X', "exit 1", 6);
		say_queued(&q);
		_exit(0);
	}
	if (sha_load(&h)) {
		const char *m = "gpuorch-execd: no libcrypto on this host to check the blobs with\n";
		q_frame(&q, 'E', m, strlen(m));
		q_frame(&q, 'X', "exit 3", 6);
		say_queued(&q);
		_exit(0);
	}
	while (left) {
		before = left;
		if (put_line(fd, hash, &size, &left, now_ms() + REQ_TIMEOUT_MS))
			_exit(1);
		put_read(&a, before - left - size);   /* the line */
		if ((r = put_one(fd, &a, dir, hash, size, &h, buf)) < 0)
			_exit(1);
		bad |= r;
		if (q.len - q.off > OUTQ_MAX)
			say_queued(&q);
	}
	snprintf(end, sizeof(end), "exit %d", bad);
	q_frame(&q, 'X', end, strlen(end));
	say_queued(&q);
	_exit(0);
}

/* Serve one connection: run its command and relay it (a forked handler). */
static void handle(int fd)
{
	int64_t deadline = now_ms() + REQ_TIMEOUT_MS;
	uint64_t cmdlen, inlen, insent = 0;
	int pin[2], pout[2], perr[2], r, put, status = 0, reaped = 0, open_out = 1, open_err = 1;
	int64_t hup_at = 0;
	char *cmd, *buf;
	size_t pend = 0, poff = 0;   /* stdin bytes read from fd, not yet in the pipe */
	struct outq q = { NULL, 0, 0, fd };
	pid_t pid;

	set_nonblock(fd);
	r = read_header(fd, &cmdlen, &inlen, &put, deadline);
	if (r == -2)
		say(fd, 'B', "gpuorch-execd: not a request of protocol 1");
	if (r)
		_exit(1);
	if (cmdlen == 0 || cmdlen > MAX_CMD || inlen > MAX_IN) {
		say(fd, 'B', "gpuorch-execd: command or input length out of range");
		_exit(1);
	}
	cmd = malloc((size_t)cmdlen + 1);
	buf = malloc(CHUNK);
	if (!cmd || !buf)
		_exit(70);
	if (read_full(fd, cmd, (size_t)cmdlen, deadline))
		_exit(1);
	cmd[cmdlen] = '\0';
	if (memchr(cmd, '\0', (size_t)cmdlen)) {
		say(fd, 'B', "gpuorch-execd: a NUL byte in the command");
		_exit(1);
	}
	refuse_if_stale(fd);
	if (put)
		put_blobs(fd, cmd, inlen);
	if (pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC) || pipe2(perr, O_CLOEXEC)) {
		say(fd, 'B', "gpuorch-execd: cannot make pipes");
		_exit(1);
	}
	pid = fork();
	if (pid < 0) {
		say(fd, 'B', "gpuorch-execd: cannot fork");
		_exit(1);
	}
	if (pid == 0)
		child_exec(cmd, pin[0], pout[1], perr[1]);
	close(pin[0]);
	close(pout[1]);
	close(perr[1]);
	set_nonblock(pin[1]);
	set_nonblock(pout[0]);
	set_nonblock(perr[0]);
	if (inlen == 0) {
		close(pin[1]);
		pin[1] = -1;
	}

	int reap_wait = 1;   /* ms: the outputs closed, the command not yet reaped */
	while (!(reaped && !open_out && !open_err)) {
		struct pollfd p[4];
		int np = 0, ic = -1, ip = -1, io = -1, ie = -1, timeout = 200;
		/* A command's outputs close as it exits, a moment before it can
		 * be reaped (on a host with cores to spare the handler wakes in
		 * that moment), and one may close them and run on: look again
		 * soon (1, 2, 4 ... 32 ms, then every 50), not at the 200 ms
		 * tick, or every command's end waits for it. */
		if (!open_out && !open_err && !reaped) {
			timeout = reap_wait;
			reap_wait = reap_wait < 32 ? reap_wait * 2 : 50;
		}
		int room = q.len - q.off < OUTQ_MAX;
		ssize_t n;

		/* the connection: stdin still to come, or watched for a hang-up */
		if (q.fd >= 0) {
			ic = np;
			p[np].fd = q.fd;
			p[np].events = (short)((insent < inlen && !pend ? POLLIN : 0) |
					       (q.off < q.len ? POLLOUT : 0));
			if (insent >= inlen)
				p[np].events |= POLLIN;   /* EOF: the client left */
			np++;
		}
		if (pin[1] >= 0 && pend) {
			ip = np;
			p[np].fd = pin[1];
			p[np].events = POLLOUT;
			np++;
		}
		if (open_out && room) {
			io = np;
			p[np].fd = pout[0];
			p[np].events = POLLIN;
			np++;
		}
		if (open_err && room) {
			ie = np;
			p[np].fd = perr[0];
			p[np].events = POLLIN;
			np++;
		}
		if (np && poll(p, (nfds_t)np, timeout) < 0 && errno != EINTR)
			break;
		if (!np)
			poll(NULL, 0, timeout);

		if (ic >= 0 && q.fd >= 0 && (p[ic].revents & (POLLIN | POLLHUP | POLLERR))) {
			if (insent < inlen && !pend) {
				size_t want = inlen - insent < CHUNK ? (size_t)(inlen - insent) : CHUNK;
				n = read(q.fd, buf, want);
				if (n > 0) {
					insent += (uint64_t)n;
					pend = (size_t)n;
					poff = 0;
					if (pin[1] < 0)
						pend = 0;   /* the command closed its stdin: dropped */
				} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
					close(q.fd);
					q.fd = -1;
				}
			} else if (insent >= inlen) {
				char c;
				n = read(q.fd, &c, 1);
				if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
					close(q.fd);
					q.fd = -1;
				}
			}
		}
		if (ic >= 0 && q.fd >= 0 && (p[ic].revents & POLLOUT))
			q_flush(&q);
		if (ip >= 0 && (p[ip].revents & (POLLOUT | POLLERR | POLLHUP))) {
			n = write(pin[1], buf + poff, pend - poff);
			if (n > 0) {
				poff += (size_t)n;
				if (poff == pend)
					pend = poff = 0;
			} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
				close(pin[1]);   /* EPIPE: the command no longer reads */
				pin[1] = -1;
				pend = poff = 0;
			}
		}
		if (pin[1] >= 0 && insent >= inlen && !pend) {
			close(pin[1]);
			pin[1] = -1;
		}
		{
			static char rb[CHUNK];
			if (io >= 0 && (p[io].revents & (POLLIN | POLLHUP | POLLERR))) {
				n = read(pout[0], rb, sizeof(rb));
				if (n > 0)
					q_frame(&q, 'O', rb, (size_t)n);
				else if (n == 0 || (errno != EAGAIN && errno != EINTR))
					open_out = 0;
			}
			if (ie >= 0 && (p[ie].revents & (POLLIN | POLLHUP | POLLERR))) {
				n = read(perr[0], rb, sizeof(rb));
				if (n > 0)
					q_frame(&q, 'E', rb, (size_t)n);
				else if (n == 0 || (errno != EAGAIN && errno != EINTR))
					open_err = 0;
			}
		}
		if (q.fd >= 0)
			q_flush(&q);
		if (!reaped && waitpid(pid, &status, WNOHANG) == pid)
			reaped = 1;
		/* the client is gone: hang up the command, then kill what stays */
		if (q.fd < 0 && !reaped) {
			if (!hup_at) {
				hup_at = now_ms();
				kill(-pid, SIGHUP);
				kill(-pid, SIGCONT);
			} else if (now_ms() - hup_at > HANGUP_GRACE_S * 1000) {
				kill(-pid, SIGKILL);
			}
		}
		if (q.fd < 0 && reaped)
			break;
	}
	if (q.fd >= 0) {
		char end[64];
		struct pollfd p = { q.fd, POLLOUT, 0 };
		if (WIFSIGNALED(status)) {
			const char *nm = sig_name(WTERMSIG(status));
			if (nm)
				snprintf(end, sizeof(end), "signal %s", nm);
			else
				snprintf(end, sizeof(end), "signal %d", WTERMSIG(status));
		} else {
			snprintf(end, sizeof(end), "exit %d", WEXITSTATUS(status));
		}
		q_frame(&q, 'X', end, strlen(end));
		while (q.fd >= 0 && q.off < q.len) {
			if (q_flush(&q) < 0)
				break;
			if (q.off < q.len && poll(&p, 1, 10000) <= 0)
				break;
		}
		if (q.fd >= 0)
			shutdown(q.fd, SHUT_WR);
	}
	_exit(0);
}

/* -------------------------------------------------------------- server */

static volatile sig_atomic_t got_stale;

static void on_usr1(int sig)
{
	(void)sig;
	got_stale = 1;
}

/* The lock is held. A server that leaves (its socket removed: gpuorch hosts
 * disconnect, clean, stale) takes no new command and exits within a second,
 * the lock going with it: a start in that second waits for it (5 s at most)
 * rather than answer "running" for a server about to be gone. 1: the lock
 * is this one's now. */
static int leaving_server_gone(int lk, const char *sock)
{
	int64_t until = now_ms() + 5000;
	while (access(sock, F_OK) != 0 && now_ms() < until) {
		if (flock(lk, LOCK_EX | LOCK_NB) == 0)
			return 1;
		poll(NULL, 0, 20);
	}
	return 0;
}

/* Is the socket file still the one this server bound? */
static int still_ours(const char *sock, const struct stat *bound)
{
	struct stat st;
	return stat(sock, &st) == 0 && st.st_ino == bound->st_ino && st.st_dev == bound->st_dev;
}

static void serve(int lfd, const char *sock, int idle_s)
{
	struct stat bound;
	int64_t last = now_ms();
	int children = 0;

	if (stat(sock, &bound) < 0)
		_exit(1);
	signal(SIGUSR1, on_usr1);
	for (;;) {
		struct pollfd p = { lfd, POLLIN, 0 };
		int r, st;
		pid_t pid;

		while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
			children--;
			last = now_ms();
		}
		if (got_stale || !still_ours(sock, &bound) || stale_file() ||
		    (children <= 0 && now_ms() - last > (int64_t)idle_s * 1000))
			break;
		r = poll(&p, 1, 1000);
		if (r <= 0 || !(p.revents & POLLIN))
			continue;
		{
			int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			if (fd < 0)
				continue;
			pid = fork();
			if (pid == 0) {
				/* a handler may outlive the server: it must not keep
				 * the socket's lock (a new server could not start) */
				close(lfd);
				close(lock_fd);
				signal(SIGUSR1, SIG_DFL);
				handle(fd);
			}
			close(fd);
			if (pid > 0)
				children++;
			last = now_ms();
		}
	}
	/* no new requests from here; running ones finish in their handlers.
	 * The socket goes while the lock is still held, so a new server never
	 * binds in between and loses its socket to this unlink. */
	if (still_ours(sock, &bound))
		unlink(sock);
	close(lfd);
	close(lock_fd);
	_exit(0);
}

static int cmd_start(const char *sock, int idle_s)
{
	char lockpath[PATH_MAX];
	struct sockaddr_un a;
	int lfd, lk, devnull;
	pid_t pid;

	if (fill_addr(&a, sock)) {
		fprintf(stderr, "gpuorch-execd: socket path '%s' is too long (at most %zu bytes)\n",
			sock, sizeof(a.sun_path) - 1);
		return 2;
	}
	if (snprintf(lockpath, sizeof(lockpath), "%s.lock", sock) >= (int)sizeof(lockpath))
		return 2;
	sock_path = sock;
	lk = lock_fd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lk < 0) {
		fprintf(stderr, "gpuorch-execd: cannot open '%s': %s\n", lockpath, strerror(errno));
		return 2;
	}
	if (flock(lk, LOCK_EX | LOCK_NB) < 0 && !leaving_server_gone(lk, sock)) {
		printf("running\n");
		return 0;
	}
	unlink(sock);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) < 0 || chmod(sock, 0600) < 0 ||
	    listen(lfd, 64) < 0) {
		fprintf(stderr, "gpuorch-execd: cannot listen on '%s': %s\n", sock, strerror(errno));
		unlink(sock);
		return 2;
	}
	stamp_all(stamps);
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "gpuorch-execd: cannot fork: %s\n", strerror(errno));
		unlink(sock);
		return 2;
	}
	if (pid > 0) {
		printf("started %ld\n", (long)pid);
		return 0;
	}
	/* the server: its own session, no terminal, the lock held for life */
	setsid();
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	devnull = open("/dev/null", O_RDWR);
	if (devnull >= 0) {
		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(devnull, 2);
		if (devnull > 2)
			close(devnull);
	}
	serve(lfd, sock, idle_s);
	return 0;
}

static int cmd_ping(const char *sock)
{
	int fd = connect_to(sock);
	if (fd < 0)
		return 1;
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	char *end;
	long idle;

	if (argc == 4 && !strcmp(argv[1], "start")) {
		idle = strtol(argv[3], &end, 10);
		if (*end || idle < 1 || idle > 7 * 24 * 3600 || argv[2][0] != '/') {
			fprintf(stderr, "gpuorch-execd: usage: start /ABS/SOCK IDLE_S (1..604800)\n");
			return 2;
		}
		self_path = realpath("/proc/self/exe", NULL);
		if (!self_path)
			self_path = realpath(argv[0], NULL);
		if (!self_path) {
			fprintf(stderr, "gpuorch-execd: cannot find its own binary\n");
			return 2;
		}
		/* the socket, its lock and whatever the server writes: 0600/0700 */
		start_umask = umask(077);
		return cmd_start(argv[2], (int)idle);
	}
	if (argc == 3 && !strcmp(argv[1], "ping"))
		return cmd_ping(argv[2]);
	fprintf(stderr, "usage: gpuorch-execd start /ABS/SOCK IDLE_S | ping /ABS/SOCK\n");
	return 2;
}
