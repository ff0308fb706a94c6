/* execd-proto.c -- the execd's request and a decoder of its framed reply (execd-proto.h). */
#include "transport/execd-proto.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

void execd_request(struct strbuf *sb, const char *cmd, size_t stdin_len)
{
	strbuf_addf(sb, "gpuorch-execd 1 %zu %zu\n", strlen(cmd), stdin_len);
	strbuf_addstr(sb, cmd);
}

void execd_put_request(struct strbuf *sb, const char *dir, size_t blobs_len)
{
	strbuf_addf(sb, "gpuorch-execd-put 1 %zu %zu\n", strlen(dir), blobs_len);
	strbuf_addstr(sb, dir);
}

void execd_rx_init(struct execd_rx *rx)
{
	memset(rx, 0, sizeof(*rx));
	strbuf_init(&rx->ctl, 0);
	rx->exit_code = -1;
}

void execd_rx_release(struct execd_rx *rx)
{
	strbuf_release(&rx->ctl);
	free(rx->message);
	rx->message = NULL;
}

static void garbled(struct execd_rx *rx, const char *why)
{
	if (rx->end == EXECD_GARBLED)
		return;
	rx->end = EXECD_GARBLED;
	free(rx->message);
	rx->message = xstrfmt("the host's execd answered something else than its protocol: %s", why);
}

/* "exit N" or "signal NAME" */
static void parse_end(struct execd_rx *rx, const char *s)
{
	char *end;
	long v;

	if (!strncmp(s, "exit ", 5)) {
		v = strtol(s + 5, &end, 10);
		if (end == s + 5 || *end || v < 0 || v > 255) {
			garbled(rx, "a bad exit status");
			return;
		}
		rx->exit_code = (int)v;
	} else if (!strncmp(s, "signal ", 7) && s[7] && strlen(s + 7) < sizeof(rx->signal) &&
		   !strpbrk(s + 7, " \n")) {
		snprintf(rx->signal, sizeof(rx->signal), "%s", s + 7);
	} else {
		garbled(rx, "a bad end frame");
		return;
	}
	rx->end = EXECD_ENDED;
}

static void frame_done(struct execd_rx *rx, unsigned char tag)
{
	switch (tag) {
	case 'X':
		parse_end(rx, rx->ctl.buf);
		break;
	case 'A': {
		char *end;
		unsigned long long v;
		errno = 0;
		v = strtoull(rx->ctl.buf, &end, 10);
		if (!rx->ctl.len || *end || errno || v < rx->acked)
			garbled(rx, "a bad acknowledgment of a put");
		else
			rx->acked = v;
		break;
	}
	case 'S':
	case 'B':
		rx->end = tag == 'S' ? EXECD_STALE : EXECD_REFUSED;
		free(rx->message);
		rx->message = xstrdup(rx->ctl.len ? rx->ctl.buf : "(no message)");
		break;
	default:
		break;
	}
	strbuf_reset(&rx->ctl);
}

int execd_rx_feed(struct execd_rx *rx, const char *data, size_t len, const struct execd_sink *s)
{
	size_t i = 0;

	while (i < len && rx->end != EXECD_GARBLED) {
		unsigned char tag;
		size_t take;

		if (rx->nhead < sizeof(rx->head)) {
			if (rx->end != EXECD_RUNNING) {
				garbled(rx, "bytes after the end");
				break;
			}
			rx->head[rx->nhead++] = (unsigned char)data[i++];
			if (rx->nhead < sizeof(rx->head))
				continue;
			tag = rx->head[0];
			rx->left = (uint32_t)rx->head[1] << 24 | (uint32_t)rx->head[2] << 16 |
				   (uint32_t)rx->head[3] << 8 | rx->head[4];
			if (!strchr("OEXSBA", tag) || !tag) {
				garbled(rx, "an unknown frame");
				break;
			}
			if (rx->left > EXECD_MAX_FRAME) {
				garbled(rx, "a frame too long");
				break;
			}
			rx->nframes++;
			if (rx->left == 0) {
				rx->nhead = 0;
				frame_done(rx, tag);
			}
			continue;
		}
		tag = rx->head[0];
		take = len - i < rx->left ? len - i : rx->left;
		if (tag == 'O') {
			if (take && s->on_out(data + i, take, s->out_ctx)) {
				rx->left -= (uint32_t)take;
				if (!rx->left)
					rx->nhead = 0;
				return 1;
			}
		} else if (tag == 'E') {
			if (s->err)
				strbuf_add(s->err, data + i, take);
		} else {
			strbuf_add(&rx->ctl, data + i, take);
		}
		i += take;
		rx->left -= (uint32_t)take;
		if (!rx->left) {
			rx->nhead = 0;
			if (tag != 'O' && tag != 'E')
				frame_done(rx, tag);
		}
	}
	return 0;
}

/* ------------------------------------------------------------ a put's flow */

void execd_flow_init(struct execd_flow *f)
{
	memset(f, 0, sizeof(*f));
	f->rtt_us = -1;
	f->ahead = EXECD_AHEAD_MIN;
}

void execd_flow_sent(struct execd_flow *f, uint64_t sent, int64_t now_us)
{
	unsigned i;
	if (f->n == EXECD_FLOW_MARKS) {   /* the oldest goes: a round trip less to measure */
		f->gone = f->mark[f->first].end;
		f->first = (f->first + 1) % EXECD_FLOW_MARKS;
		f->n--;
	}
	i = (f->first + f->n) % EXECD_FLOW_MARKS;
	f->mark[i].end = sent;
	f->mark[i].t_us = now_us;
	f->n++;
}

void execd_flow_acked(struct execd_flow *f, uint64_t acked, int64_t now_us)
{
	int64_t sample = -1;

	if (acked <= f->acked)
		return;
	f->acked = acked;
	/* the send that carried byte acked: its round trip; the ones before it
	 * are done (none when its mark was let go: a later send's would be
	 * too short) */
	while (f->n) {
		unsigned i = f->first;
		f->first = (f->first + 1) % EXECD_FLOW_MARKS;
		f->n--;
		if (f->mark[i].end >= acked) {
			if (acked > f->gone)
				sample = now_us - f->mark[i].t_us;
			f->gone = f->mark[i].end;
			break;
		}
		f->gone = f->mark[i].end;
	}
	if (sample >= 0 && (f->rtt_us < 0 || sample < f->rtt_us))
		f->rtt_us = sample;
	if (f->rtt_us >= 0) {
		uint64_t by_rtt = (uint64_t)f->rtt_us * EXECD_AHEAD_PER_MS / 1000;
		f->ahead = by_rtt > EXECD_AHEAD_MIN ? by_rtt : EXECD_AHEAD_MIN;
	}
}

uint64_t execd_flow_room(const struct execd_flow *f, uint64_t sent)
{
	uint64_t ahead = sent > f->acked ? sent - f->acked : 0;
	return ahead < f->ahead ? f->ahead - ahead : 0;
}
