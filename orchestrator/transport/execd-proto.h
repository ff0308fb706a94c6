/* execd-proto.h -- the wire format of the host's execd (remote/host/gpuorch-execd.c,
 * docs/runner.md "execd"): the request a client sends, and a decoder of the
 * framed reply. Pure code, no I/O: ssh-execd.c drives it over a channel.
 *
 *   request   "gpuorch-execd 1 CMDLEN INLEN\n" CMD STDIN
 *   a put     "gpuorch-execd-put 1 DIRLEN INLEN\n" DIR BLOBS: the execd
 *             writes each blob ("SHA256 SIZE\n" and its bytes) into DIR
 *             itself, checking its hash; its end "exit 0" when all were
 *             stored (blobs.h: blobs_frames)
 *   reply     frames of one tag byte, a 4-byte big-endian length, the payload:
 *             'O' stdout, 'E' stderr, 'X' the end ("exit N" / "signal NAME"),
 *             'S' refused as stale (nothing ran), 'B' a bad request; a put's
 *             'A': how many bytes of its blobs the execd has read so far
 *             (decimal), every 128 KiB: the client sends no more than
 *             execd_flow lets go ahead of it */
#ifndef GPUORCH_EXECD_PROTO_H
#define GPUORCH_EXECD_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include "core/strbuf.h"

#define EXECD_MAX_FRAME (1u << 20)   /* the execd sends at most 64 KiB a frame */
#define EXECD_MAX_CMD (1u << 20)

/* Append the request header and the command to sb (stdin follows it). */
void execd_request(struct strbuf *sb, const char *cmd, size_t stdin_len);
/* Append a put's header and the directory to sb (the blobs follow it). */
void execd_put_request(struct strbuf *sb, const char *dir, size_t blobs_len);

enum execd_end {
	EXECD_RUNNING = 0,      /* no 'X', 'S' or 'B' frame yet */
	EXECD_ENDED,            /* 'X': exit_code or signal */
	EXECD_STALE,            /* 'S': nothing ran; message says why */
	EXECD_REFUSED,          /* 'B': a bad request (a bug): message */
	EXECD_GARBLED           /* not the protocol: message */
};

struct execd_rx {
	unsigned char head[5];
	size_t nhead;           /* header bytes of the current frame read */
	uint32_t left;          /* payload bytes of the current frame still to come */
	struct strbuf ctl;      /* an 'X', 'S' or 'B' payload being gathered */
	enum execd_end end;
	int exit_code;          /* EXECD_ENDED: -1 when it ended by a signal */
	char signal[32];        /* EXECD_ENDED by a signal: "KILL", "TERM", ... or a number */
	char *message;          /* STALE, REFUSED, GARBLED */
	uint64_t nframes;
	uint64_t acked;         /* a put: the bytes of its blobs the execd has read ('A') */
};

/* Where stdout and stderr payloads go; a non-zero answer from on_out stops
 * the feed (execd_rx_feed returns 1). */
struct execd_sink {
	int (*on_out)(const char *data, size_t len, void *ctx);
	void *out_ctx;
	struct strbuf *err;     /* stderr; NULL: dropped */
};

void execd_rx_init(struct execd_rx *rx);
void execd_rx_release(struct execd_rx *rx);
/* Decode len bytes. Returns 0, or 1 when the sink stopped it. Bytes after
 * the end frame, a tag it does not know, a frame over EXECD_MAX_FRAME or an
 * end that does not parse make rx->end EXECD_GARBLED. */
int execd_rx_feed(struct execd_rx *rx, const char *data, size_t len, const struct execd_sink *s);

/* A put's flow: how far the client may send beyond what the execd said it
 * has read. The sshd between them reads up to 256 KiB a loop from TCP but
 * hands the execd's socket at most its send buffer (~212 KiB) a loop, so
 * a put sent as fast as the SSH window (2 MiB) allows piles up in the
 * sshd, whose buffer grows 32 KiB at a time, each step a copy of it (~50
 * ms of the host's CPU for 50 MB: docs/host-runner-measurements.md). The
 * bound: EXECD_AHEAD_MIN, or EXECD_AHEAD_PER_MS for each millisecond of
 * the shortest round trip seen (a send to its 'A'), so a far host is not
 * held to the bound over its round trip. */
#define EXECD_AHEAD_MIN (512u << 10)
#define EXECD_AHEAD_PER_MS (128u << 10)
#define EXECD_FLOW_MARKS 64

struct execd_flow {
	struct {
		uint64_t end;   /* bytes sent when */
		int64_t t_us;   /* this was */
	} mark[EXECD_FLOW_MARKS];
	unsigned first, n;      /* the marks not yet acknowledged, oldest first */
	uint64_t gone;          /* the end of the last mark let go: a word at or
				 * below it has no send to measure against */
	uint64_t acked;         /* the last 'A' taken */
	int64_t rtt_us;         /* the shortest round trip seen; -1: none yet */
	uint64_t ahead;         /* the bound now */
};

void execd_flow_init(struct execd_flow *f);
/* sent bytes of the blobs have gone, at now_us */
void execd_flow_sent(struct execd_flow *f, uint64_t sent, int64_t now_us);
/* the execd said it has read acked of them (rx->acked), seen at now_us */
void execd_flow_acked(struct execd_flow *f, uint64_t acked, int64_t now_us);
/* how many more bytes may go now, sent having gone */
uint64_t execd_flow_room(const struct execd_flow *f, uint64_t sent);

#endif
