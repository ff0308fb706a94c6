/* test_execd.c -- the execd's wire format (transport/execd-proto.c): the
 * request, the reply decoder fed whole and split at every byte, its edges
 * (the longest frame, exit 255, bytes after the end), a put's
 * acknowledgments and its flow's bound, and the embedded source. */
#include <string.h>
#include <stdlib.h>
#include "check.h"
#include "transport/execd-proto.h"
#include "remote/execd-source.h"
#include "remote/remote.h"
#include "core/fsutil.h"

struct got {
	struct strbuf out;
	int stop_after;   /* stop the feed once out holds this many bytes; 0: never */
};

static int on_out(const char *data, size_t len, void *ctx)
{
	struct got *g = ctx;
	strbuf_add(&g->out, data, len);
	return g->stop_after && g->out.len >= (size_t)g->stop_after;
}

static void frame(struct strbuf *sb, char tag, const char *payload, size_t len)
{
	unsigned char h[5] = { (unsigned char)tag, (unsigned char)(len >> 24),
			       (unsigned char)(len >> 16), (unsigned char)(len >> 8),
			       (unsigned char)len };
	strbuf_add(sb, h, 5);
	strbuf_add(sb, payload, len);
}

/* Decode wire in pieces of `step` bytes (0: whole). */
static void decode(const struct strbuf *wire, size_t step, struct execd_rx *rx, struct got *g,
		   struct strbuf *err)
{
	struct execd_sink s = { on_out, g, err };
	size_t i = 0;
	execd_rx_init(rx);
	if (!step)
		step = wire->len ? wire->len : 1;
	while (i < wire->len) {
		size_t n = wire->len - i < step ? wire->len - i : step;
		if (execd_rx_feed(rx, wire->buf + i, n, &s))
			break;
		i += n;
	}
}

static void test_request(void)
{
	struct strbuf sb = STRBUF_INIT;
	execd_request(&sb, "echo 'a b'", 12345);
	CHECK(!strcmp(sb.buf, "gpuorch-execd 1 10 12345\necho 'a b'"),
	      "the request is the header line and the command", "'%s'", sb.buf);
	strbuf_reset(&sb);
	execd_request(&sb, "x", 0);
	CHECK(!strcmp(sb.buf, "gpuorch-execd 1 1 0\nx"), "no stdin is a length of 0", "'%s'",
	      sb.buf);
	strbuf_reset(&sb);
	execd_put_request(&sb, "/w/blobs", 20974400);
	CHECK(!strcmp(sb.buf, "gpuorch-execd-put 1 8 20974400\n/w/blobs"),
	      "a put is its header line and the directory", "'%s'", sb.buf);
	CHECK(strstr((const char *)gpuorch_execd_c, "#define PUT_PROTO \"gpuorch-execd-put 1 \"") != NULL,
	      "the execd reads a put by the header the client writes", "no PUT_PROTO in the execd");
	strbuf_release(&sb);
}

/* A reply split at every point decodes to the same streams and end. */
static void test_split_everywhere(void)
{
	struct strbuf wire = STRBUF_INIT;
	size_t step;
	int all_same = 1;

	frame(&wire, 'O', "hello", 5);
	frame(&wire, 'E', "warn\n", 5);
	frame(&wire, 'O', "", 0);
	frame(&wire, 'O', " world\n", 7);
	frame(&wire, 'X', "exit 3", 6);
	for (step = 0; step <= wire.len; step++) {
		struct execd_rx rx;
		struct got g = { STRBUF_INIT, 0 };
		struct strbuf err = STRBUF_INIT;
		decode(&wire, step, &rx, &g, &err);
		if (rx.end != EXECD_ENDED || rx.exit_code != 3 || rx.signal[0] ||
		    strcmp(g.out.buf, "hello world\n") || strcmp(err.buf, "warn\n") || rx.nframes != 5) {
			all_same = 0;
			printf("# step %zu: end %d exit %d out '%s' err '%s'\n", step, (int)rx.end,
			       rx.exit_code, g.out.buf, err.buf);
		}
		execd_rx_release(&rx);
		strbuf_release(&g.out);
		strbuf_release(&err);
	}
	CHECK(all_same, "stdout, stderr and the exit status survive a split at every byte",
	      "see the lines above");
	strbuf_release(&wire);
}

static enum execd_end decode_one(const char *tag_payload_end, size_t len, struct execd_rx *rx)
{
	struct strbuf wire = STRBUF_INIT;
	struct got g = { STRBUF_INIT, 0 };
	struct strbuf err = STRBUF_INIT;
	strbuf_add(&wire, tag_payload_end, len);
	decode(&wire, 1, rx, &g, &err);
	strbuf_release(&wire);
	strbuf_release(&g.out);
	strbuf_release(&err);
	return rx->end;
}

static void test_ends(void)
{
	struct strbuf w = STRBUF_INIT;
	struct execd_rx rx;

	frame(&w, 'X', "signal KILL", 11);
	CHECK(decode_one(w.buf, w.len, &rx) == EXECD_ENDED && !strcmp(rx.signal, "KILL") &&
	      rx.exit_code == -1, "an end by a signal names it", "end %d sig '%s' code %d",
	      (int)rx.end, rx.signal, rx.exit_code);
	execd_rx_release(&rx);

	strbuf_reset(&w);
	frame(&w, 'X', "exit 255", 8);
	CHECK(decode_one(w.buf, w.len, &rx) == EXECD_ENDED && rx.exit_code == 255,
	      "exit 255 is the highest exit status", "end %d code %d", (int)rx.end, rx.exit_code);
	execd_rx_release(&rx);

	strbuf_reset(&w);
	frame(&w, 'X', "exit 256", 8);
	CHECK(decode_one(w.buf, w.len, &rx) == EXECD_GARBLED, "exit 256 is not a status",
	      "end %d", (int)rx.end);
	execd_rx_release(&rx);

	strbuf_reset(&w);
	frame(&w, 'X', "exit 0", 6);
	CHECK(decode_one(w.buf, w.len, &rx) == EXECD_ENDED && rx.exit_code == 0,
	      "exit 0 is a status", "end %d code %d", (int)rx.end, rx.exit_code);
	execd_rx_release(&rx);

	strbuf_reset(&w);
	frame(&w, 'X', "exit -1", 7);
	CHECK(decode_one(w.buf, w.len, &rx) == EXECD_GARBLED, "a negative exit is not a status",
	      "end %d", (int)rx.end);
	execd_rx_release(&rx);

	strbuf_reset(&w);
	frame(&w, 'X', "exit 0", 6);
	frame(&w, 'O', "late", 4);
	CHECK(decode_one(w.buf, w.len, &rx) == EXECD_GARBLED && strstr(rx.message, "after the end"),
	      "bytes after the end frame are refused", "end %d", (int)rx.end);
	execd_rx_release(&rx);

	strbuf_reset(&w);
	frame(&w, 'S', "stale: .bashrc changed", 22);
	CHECK(decode_one(w.buf, w.len, &rx) == EXECD_STALE && !strcmp(rx.message,
	      "stale: .bashrc changed"), "a stale answer carries its reason", "end %d msg '%s'",
	      (int)rx.end, rx.message ? rx.message : "");
	execd_rx_release(&rx);

	strbuf_reset(&w);
	frame(&w, 'B', "bad", 3);
	CHECK(decode_one(w.buf, w.len, &rx) == EXECD_REFUSED, "a refused request is told apart",
	      "end %d", (int)rx.end);
	execd_rx_release(&rx);

	strbuf_reset(&w);
	frame(&w, 'Q', "x", 1);
	CHECK(decode_one(w.buf, w.len, &rx) == EXECD_GARBLED, "an unknown tag is refused",
	      "end %d", (int)rx.end);
	execd_rx_release(&rx);
	strbuf_release(&w);
}

/* A put's 'A' frames: the count read so far, never going back. */
static void test_acks(void)
{
	struct strbuf w = STRBUF_INIT;
	struct execd_rx rx;

	frame(&w, 'A', "131072", 6);
	frame(&w, 'A', "262144", 6);
	frame(&w, 'X', "exit 0", 6);
	CHECK(decode_one(w.buf, w.len, &rx) == EXECD_ENDED && rx.acked == 262144,
	      "a put's acknowledgments are read between its frames, the last one kept",
	      "end %d acked %llu", (int)rx.end, (unsigned long long)rx.acked);
	execd_rx_release(&rx);
	strbuf_reset(&w);
	frame(&w, 'A', "262144", 6);
	frame(&w, 'A', "131072", 6);
	CHECK(decode_one(w.buf, w.len, &rx) == EXECD_GARBLED && strstr(rx.message, "acknowledgment"),
	      "an acknowledgment that goes back is not the protocol", "end %d", (int)rx.end);
	execd_rx_release(&rx);
	strbuf_reset(&w);
	frame(&w, 'A', "12x", 3);
	CHECK(decode_one(w.buf, w.len, &rx) == EXECD_GARBLED, "nor one that is not a number",
	      "end %d", (int)rx.end);
	execd_rx_release(&rx);
	strbuf_reset(&w);
	frame(&w, 'A', "", 0);
	CHECK(decode_one(w.buf, w.len, &rx) == EXECD_GARBLED, "nor an empty one", "end %d",
	      (int)rx.end);
	execd_rx_release(&rx);
	strbuf_release(&w);
}

/* The bound: 512 KiB before any round trip is known and at a short one,
 * 128 KiB a millisecond of the shortest round trip beyond 4 ms. */
static void test_flow(void)
{
	struct execd_flow f;
	uint64_t sent = 0;
	int i;

	execd_flow_init(&f);
	CHECK(execd_flow_room(&f, 0) == EXECD_AHEAD_MIN, "512 KiB may go before any word",
	      "%llu", (unsigned long long)execd_flow_room(&f, 0));
	execd_flow_sent(&f, EXECD_AHEAD_MIN, 1000);
	CHECK(execd_flow_room(&f, EXECD_AHEAD_MIN) == 0, "then nothing, exactly at the bound",
	      "%llu", (unsigned long long)execd_flow_room(&f, EXECD_AHEAD_MIN));
	CHECK(execd_flow_room(&f, EXECD_AHEAD_MIN - 1) == 1, "one byte below it, one byte",
	      "%llu", (unsigned long long)execd_flow_room(&f, EXECD_AHEAD_MIN - 1));
	execd_flow_acked(&f, 131072, 1300);   /* 0.3 ms */
	CHECK(f.rtt_us == 300 && f.ahead == EXECD_AHEAD_MIN &&
	      execd_flow_room(&f, EXECD_AHEAD_MIN) == 131072,
	      "a word of 128 KiB read lets 128 KiB more go; a short round trip keeps 512 KiB",
	      "rtt %lld ahead %llu", (long long)f.rtt_us, (unsigned long long)f.ahead);
	execd_flow_acked(&f, 131072, 99999);
	CHECK(f.rtt_us == 300, "the same word again changes nothing", "%lld", (long long)f.rtt_us);

	/* a far host: sends 10 ms before their words */
	execd_flow_init(&f);
	for (i = 1; i <= 8; i++) {
		sent = (uint64_t)i * 65536;
		execd_flow_sent(&f, sent, i * 100);
	}
	execd_flow_acked(&f, 65536, 10100);
	CHECK(f.rtt_us == 10000 && f.ahead == 10 * EXECD_AHEAD_PER_MS,
	      "a 10 ms round trip: 1.25 MiB may be ahead", "rtt %lld ahead %llu",
	      (long long)f.rtt_us, (unsigned long long)f.ahead);
	execd_flow_acked(&f, 200000, 10250);   /* reached by the 4th send (t 400): 9.85 ms */
	CHECK(f.rtt_us == 9850 && f.n == 4, "the shortest round trip is kept; the marks it covers go",
	      "rtt %lld marks %u", (long long)f.rtt_us, f.n);

	/* more sends than marks: the oldest go, nothing breaks */
	execd_flow_init(&f);
	for (i = 1; i <= 3 * EXECD_FLOW_MARKS; i++)
		execd_flow_sent(&f, (uint64_t)i * 1000, i);
	CHECK(f.n == EXECD_FLOW_MARKS, "at most EXECD_FLOW_MARKS sends are kept", "%u", f.n);
	execd_flow_acked(&f, 1000, 5000);   /* its send went with the oldest */
	CHECK(f.rtt_us == -1 && f.ahead == EXECD_AHEAD_MIN,
	      "a word whose send was let go measures nothing (a later send would be too short)",
	      "%lld", (long long)f.rtt_us);
	execd_flow_acked(&f, (2 * EXECD_FLOW_MARKS + 2) * 1000, 6000);
	CHECK(f.rtt_us == 6000 - (2 * EXECD_FLOW_MARKS + 2),
	      "the next word whose send is kept does", "%lld", (long long)f.rtt_us);
}

/* The longest frame passes; one byte more is refused before it is read. */
static void test_frame_limit(void)
{
	unsigned char h[5];
	struct strbuf w = STRBUF_INIT;
	struct execd_rx rx;
	struct got g = { STRBUF_INIT, 0 };
	struct strbuf err = STRBUF_INIT;
	char *big = malloc(EXECD_MAX_FRAME);
	uint32_t n;

	memset(big, 'z', EXECD_MAX_FRAME);
	frame(&w, 'O', big, EXECD_MAX_FRAME);
	frame(&w, 'X', "exit 0", 6);
	decode(&w, 4096, &rx, &g, &err);
	CHECK(rx.end == EXECD_ENDED && g.out.len == EXECD_MAX_FRAME,
	      "a frame of exactly the longest length is read", "end %d, %zu bytes", (int)rx.end,
	      g.out.len);
	execd_rx_release(&rx);
	strbuf_reset(&g.out);

	n = EXECD_MAX_FRAME + 1;
	h[0] = 'O';
	h[1] = (unsigned char)(n >> 24);
	h[2] = (unsigned char)(n >> 16);
	h[3] = (unsigned char)(n >> 8);
	h[4] = (unsigned char)n;
	strbuf_reset(&w);
	strbuf_add(&w, h, 5);
	decode(&w, 0, &rx, &g, &err);
	CHECK(rx.end == EXECD_GARBLED && g.out.len == 0,
	      "a frame one byte over the longest is refused", "end %d", (int)rx.end);
	execd_rx_release(&rx);
	free(big);
	strbuf_release(&w);
	strbuf_release(&g.out);
	strbuf_release(&err);
}

static void test_reader_stops(void)
{
	struct strbuf w = STRBUF_INIT, err = STRBUF_INIT;
	struct execd_sink s;
	struct execd_rx rx;
	struct got g = { STRBUF_INIT, 3 };

	frame(&w, 'O', "abcdef", 6);
	frame(&w, 'X', "exit 0", 6);
	s.on_out = on_out;
	s.out_ctx = &g;
	s.err = &err;
	execd_rx_init(&rx);
	CHECK(execd_rx_feed(&rx, w.buf, w.len, &s) == 1 && rx.end == EXECD_RUNNING,
	      "a reader that says stop stops the feed before the end", "end %d", (int)rx.end);
	execd_rx_release(&rx);
	strbuf_release(&w);
	strbuf_release(&err);
	strbuf_release(&g.out);
}

static void test_embedded_and_socket(void)
{
	struct strbuf file = STRBUF_INIT, err = STRBUF_INIT;
	char ver[EXECD_VERSION_LEN + 1], *sock, *longdir;

	CHECK(fs_read_file("orchestrator/remote/host/gpuorch-execd.c", &file, &err) == GO_OK,
	      "the execd's source is readable", "%s", err.buf);
	CHECK(file.len == gpuorch_execd_c_len && !memcmp(file.buf, gpuorch_execd_c, file.len) &&
	      gpuorch_execd_c[gpuorch_execd_c_len] == '\0',
	      "the embedded execd is gpuorch-execd.c byte for byte", "%zu vs %zu bytes", file.len,
	      gpuorch_execd_c_len);
	execd_version(ver);
	CHECK(strlen(ver) == EXECD_VERSION_LEN && strspn(ver, "0123456789abcdef") == EXECD_VERSION_LEN,
	      "the execd's version is hex digits of its source's hash", "'%s'", ver);
	sock = remote_execd_socket("/home/u/.gpuorch/execd");
	CHECK(sock && !strncmp(sock, "/home/u/.gpuorch/execd/", 23) && strstr(sock, ver) &&
	      !strcmp(sock + strlen(sock) - 5, ".sock"), "the socket is named by the version",
	      "'%s'", sock ? sock : "(null)");
	free(sock);
	CHECK(remote_execd_socket("rel/execd") == NULL, "a relative directory has no socket",
	      "%s", "a path");
	/* sun_path holds 107 bytes: a path of exactly 107 fits, 108 does not */
	longdir = xstrfmt("/%0*d", 107 - 1 - EXECD_VERSION_LEN - 5 - 1, 0);
	sock = remote_execd_socket(longdir);
	CHECK(sock && strlen(sock) == 107, "a socket path of 107 bytes fits", "%zu",
	      sock ? strlen(sock) : 0);
	free(sock);
	free(longdir);
	longdir = xstrfmt("/%0*d", 107 - 1 - EXECD_VERSION_LEN - 5, 0);
	sock = remote_execd_socket(longdir);
	CHECK(!sock, "a socket path of 108 bytes does not", "%s", sock ? sock : "");
	free(sock);
	free(longdir);
	strbuf_release(&file);
	strbuf_release(&err);
}

int main(void)
{
	test_request();
	test_split_everywhere();
	test_ends();
	test_frame_limit();
	test_acks();
	test_flow();
	test_reader_stops();
	test_embedded_and_socket();
	return check_summary();
}
