/* samplesline.c -- a line of samples.txt written and read, plain or packed (samplesline.h). */
#include "report/samplesline.h"
#include "core/stats.h"
#include "store/samples.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

#define PACKED_PREFIX SAMPLES_ENCODING " "

void samplesline_add(struct strbuf *out, double *v, int n)
{
	size_t start = out->len, plain_len;
	int i;

	stats_sort(v, n);
	for (i = 0; i < n; i++) {
		if (i)
			strbuf_addch(out, ' ');
		strbuf_add_double(out, v[i]);
	}
	plain_len = out->len - start;
	if (samples_exact(v, n)) {
		struct strbuf packed = STRBUF_INIT;
		strbuf_addf(&packed, PACKED_PREFIX "%d ", n);
		if (samples_pack_b64(v, n, &packed) == 0 && packed.len < plain_len) {
			strbuf_setlen(out, start);
			strbuf_add(out, packed.buf, packed.len);
		}
		strbuf_release(&packed);
	}
	strbuf_addch(out, '\n');
}

static int parse_packed(const char *p, double **v, int *n)
{
	char *end;
	long count;
	errno = 0;
	count = strtol(p, &end, 10);
	if (errno || end == p || *end != ' ' || count < 1 || count > 10000000)
		return 0;
	if (samples_unpack_b64(end + 1, (int)count, v, NULL) < 0)
		return 0;
	*n = (int)count;
	return 1;
}

int samplesline_parse(const char *line, double **v, int *n)
{
	const char *p;
	char *end;
	int cap = 0;

	*v = NULL;
	*n = 0;
	/* one line: a newline inside is a samples_at spanning two (damage) */
	if (strchr(line, '\n'))
		return 0;
	if (!strncmp(line, PACKED_PREFIX, strlen(PACKED_PREFIX)))
		return parse_packed(line + strlen(PACKED_PREFIX), v, n);
	for (p = line; *p; p = end) {
		double x = strtod(p, &end);
		if (end == p)
			break;
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			*v = xrealloc(*v, (size_t)cap * sizeof(**v));
		}
		(*v)[(*n)++] = x;
		while (*end == ' ')
			end++;
	}
	return *n > 0;
}
