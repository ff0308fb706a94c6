/* delayproxy.c -- a TCP relay on loopback that holds every byte for a fixed
 * time each way: added round-trip latency where the kernel has no netem
 * (issue 33's "16 hosts with 20 ms of added loopback RTT").
 *
 *   delayproxy LISTEN_ADDR PORT TARGET_ADDR TARGET_PORT DELAY_MS [SECONDS]
 *
 * Listens on LISTEN_ADDR:PORT (both on 127.0.0.0/8: a bench puts the proxy on
 * 127.0.0.2 with the sshd's own port, so the host key's known_hosts line
 * differs only in the address) and relays each connection to
 * TARGET_ADDR:TARGET_PORT. Each chunk read from either side is written to the
 * other DELAY_MS milliseconds after it was read, in order: a round trip gains
 * 2 x DELAY_MS. An end of stream is passed on (shutdown) once the bytes read
 * before it have gone. Reading stops while 4 MiB wait in one direction.
 * Prints "listening" on stdout once it listens; exits after SECONDS (default
 * 3600; alarm) so a bench that dies cannot leave it behind for long. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 256
#define CHUNK 65536
#define QUEUE_CAP (4 << 20)

struct chunk {
	struct chunk *next;
	long long due_ms;
	size_t len, off;
	char data[];
};

/* one direction of a connection: bytes read from `from`, written to `to` */
struct pipe_dir {
	int from, to;
	struct chunk *head, *tail;
	size_t queued;
	int eof;        /* `from` ended: pass it on once the queue is empty */
	int done;       /* passed on (or `to` failed) */
};

struct conn {
	int used;
	struct pipe_dir dir[2];
};

static struct conn conns[MAX_CONNS];
static long long delay_ms;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int tcp_socket(const char *addr, int port, struct sockaddr_in *sa)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((unsigned short)port);
	if (fd < 0 || inet_pton(AF_INET, addr, &sa->sin_addr) != 1) {
		fprintf(stderr, "delayproxy: bad address '%s'\n", addr);
		exit(2);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void conn_close(struct conn *c)
{
	for (int d = 0; d < 2; d++) {
		struct chunk *k = c->dir[d].head;
		while (k) {
			struct chunk *n = k->next;
			free(k);
			k = n;
		}
	}
	close(c->dir[0].from);
	close(c->dir[1].from);
	memset(c, 0, sizeof(*c));
}

static void accept_one(int lfd, const char *taddr, int tport)
{
	struct sockaddr_in sa;
	int a = accept(lfd, NULL, NULL), t, i;

	if (a < 0)
		return;
	t = tcp_socket(taddr, tport, &sa);
	if (connect(t, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		fprintf(stderr, "delayproxy: connect %s:%d: %s\n", taddr, tport, strerror(errno));
		close(a);
		close(t);
		return;
	}
	for (i = 0; i < MAX_CONNS && conns[i].used; i++)
		;
	if (i == MAX_CONNS) {
		fprintf(stderr, "delayproxy: more than %d connections\n", MAX_CONNS);
		close(a);
		close(t);
		return;
	}
	fcntl(a, F_SETFL, fcntl(a, F_GETFL) | O_NONBLOCK);
	fcntl(t, F_SETFL, fcntl(t, F_GETFL) | O_NONBLOCK);
	conns[i].used = 1;
	conns[i].dir[0] = (struct pipe_dir){ .from = a, .to = t };
	conns[i].dir[1] = (struct pipe_dir){ .from = t, .to = a };
}

static void dir_read(struct pipe_dir *p)
{
	struct chunk *k = malloc(sizeof(*k) + CHUNK);
	ssize_t n;

	if (!k) {
		perror("delayproxy: malloc");
		exit(1);
	}
	n = read(p->from, k->data, CHUNK);
	if (n <= 0) {
		free(k);
		if (n == 0 || (errno != EINTR && errno != EAGAIN))
			p->eof = 1;
		return;
	}
	k->next = NULL;
	k->due_ms = now_ms() + delay_ms;
	k->len = (size_t)n;
	k->off = 0;
	if (p->tail)
		p->tail->next = k;
	else
		p->head = k;
	p->tail = k;
	p->queued += (size_t)n;
}

/* writes what is due; passes an end on once everything before it went */
static void dir_flush(struct pipe_dir *p)
{
	long long t = now_ms();

	while (p->head && p->head->due_ms <= t) {
		struct chunk *k = p->head;
		ssize_t n = write(p->to, k->data + k->off, k->len - k->off);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			p->done = 1;
			return;
		}
		k->off += (size_t)n;
		p->queued -= (size_t)n;
		if (k->off < k->len)
			return;
		p->head = k->next;
		if (!p->head)
			p->tail = NULL;
		free(k);
	}
	if (!p->head && p->eof && !p->done) {
		shutdown(p->to, SHUT_WR);
		p->done = 1;
	}
}

static void loop(int lfd, const char *taddr, int tport)
{
	struct pollfd pf[1 + 2 * MAX_CONNS];
	int who[1 + 2 * MAX_CONNS];

	for (;;) {
		int n = 0, timeout = -1;
		long long t = now_ms();

		pf[n++] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (int i = 0; i < MAX_CONNS; i++) {
			if (!conns[i].used)
				continue;
			for (int d = 0; d < 2; d++) {
				struct pipe_dir *p = &conns[i].dir[d];
				short ev = 0;
				if (!p->eof && p->queued < QUEUE_CAP)
					ev |= POLLIN;
				if (p->head && p->head->due_ms <= t)
					ev |= POLLOUT;
				else if (p->head) {
					int w = (int)(p->head->due_ms - t);
					if (timeout < 0 || w < timeout)
						timeout = w;
				}
				/* POLLOUT on `to`, POLLIN on `from`: two entries when both */
				if (ev & POLLIN) {
					who[n] = i * 2 + d;
					pf[n++] = (struct pollfd){ .fd = p->from, .events = POLLIN };
				}
				if (ev & POLLOUT) {
					who[n] = -(i * 2 + d) - 1;
					pf[n++] = (struct pollfd){ .fd = p->to, .events = POLLOUT };
				}
				if (!p->head && p->eof && !p->done)
					timeout = 0;
			}
		}
		if (poll(pf, (nfds_t)n, timeout) < 0 && errno != EINTR) {
			perror("delayproxy: poll");
			exit(1);
		}
		if (pf[0].revents & POLLIN)
			accept_one(lfd, taddr, tport);
		for (int j = 1; j < n; j++) {
			if (!pf[j].revents)
				continue;
			if (who[j] >= 0)
				dir_read(&conns[who[j] / 2].dir[who[j] % 2]);
		}
		for (int i = 0; i < MAX_CONNS; i++) {
			if (!conns[i].used)
				continue;
			dir_flush(&conns[i].dir[0]);
			dir_flush(&conns[i].dir[1]);
			if (conns[i].dir[0].done && conns[i].dir[1].done)
				conn_close(&conns[i]);
		}
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa;
	int lfd, one = 1, secs = 3600;

	if (argc != 6 && argc != 7) {
		fprintf(stderr, "usage: delayproxy LISTEN_ADDR PORT TARGET_ADDR TARGET_PORT DELAY_MS [SECONDS]\n");
		return 2;
	}
	delay_ms = atoll(argv[5]);
	if (argc == 7)
		secs = atoi(argv[6]);
	if (delay_ms < 0 || secs <= 0) {
		fprintf(stderr, "delayproxy: DELAY_MS must be >= 0 and SECONDS > 0\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	alarm((unsigned)secs);
	lfd = tcp_socket(argv[1], atoi(argv[2]), &sa);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 64) != 0) {
		fprintf(stderr, "delayproxy: listen %s:%s: %s\n", argv[1], argv[2], strerror(errno));
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	loop(lfd, argv[3], atoi(argv[4]));
	return 0;
}
