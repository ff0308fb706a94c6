/* agent-journal.c -- gpuorch-agent's journal writing: JSON string escaping
 * exactly as runner.sh's ESC_AWK (\\ \" \n \t \r \b \f, other control
 * bytes \u00XX, NUL dropped), an output file's capped text fields, and the
 * events, each one line appended with one write. */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void json_esc(struct sb *out, const char *s, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '\0': break;
		case '\\': sb_add(out, "\\\\", 2); break;
		case '"': sb_add(out, "\\\"", 2); break;
		case '\n': sb_add(out, "\\n", 2); break;
		case '\t': sb_add(out, "\\t", 2); break;
		case '\r': sb_add(out, "\\r", 2); break;
		case '\b': sb_add(out, "\\b", 2); break;
		case '\f': sb_add(out, "\\f", 2); break;
		default:
			if (c < 0x20)
				sb_addf(out, "\\u%04x", c);
			else
				sb_add(out, (const char *)&s[i], 1);
		}
	}
}

/* json_str: "VALUE" (js) */
void json_str(struct sb *out, const char *s)
{
	sb_add(out, "\"", 1);
	json_esc(out, s, strlen(s));
	sb_add(out, "\"", 1);
}

/* read_head: the first MAX bytes of FD */
static ssize_t read_head(int fd, char *buf, size_t max)
{
	size_t got = 0;
	while (got < max) {
		ssize_t n = read(fd, buf + got, max - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* text_field: FILE's first text_cap bytes as ,"NAME_text":"...",
 * "NAME_truncated":BOOL; nothing when FILE is not a file. As runner.sh:
 * the first text_cap + 1 bytes, NULs dropped from them, then cut at text_cap. */
void text_field(struct sb *out, const char *file, const char *name)
{
	size_t cap = (size_t)A.plan.textcap, i, k;
	char *buf;
	ssize_t n;
	int fd;

	if (!is_file(file))
		return;
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	buf = xrealloc(NULL, cap + 1);
	n = read_head(fd, buf, cap + 1);
	xclose(fd);
	if (n < 0)
		n = 0;
	for (i = k = 0; i < (size_t)n; i++)
		if (buf[i])
			buf[k++] = buf[i];
	sb_addf(out, ",\"%s_text\":\"", name);
	json_esc(out, buf, k > cap ? cap : k);
	sb_addf(out, "\",\"%s_truncated\":%s", name, k > cap ? "true" : "false");
	free(buf);
}

static void ev_write(const char *name, const char *fields)
{
	struct sb line = { 0 };
	size_t off = 0;

	if (A.jfd < 0)
		A.jfd = open(A.jpath, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
	sb_addf(&line, "{\"t\":%s,\"ev\":\"%s\"%s}\n", A.evt, name, fields);
	while (A.jfd >= 0 && off < line.len) {
		ssize_t n = write(A.jfd, line.buf + off, line.len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "runner: cannot append to %s: %s\n", A.jpath, strerror(errno));
			break;
		}
		off += (size_t)n;
	}
	if (A.jfd < 0)
		fprintf(stderr, "runner: cannot open %s: %s\n", A.jpath, strerror(errno));
	sb_free(&line);
}

/* ev NAME FIELDS: one event at a fresh clock reading; FIELDS starts with ","
 * (or is empty) */
void ev(const char *name, const char *fields)
{
	now_str(A.evt, sizeof(A.evt));
	ev_write(name, fields);
}

/* ev_again: the same at the last reading (the event before it, or spawn's) */
void ev_again(const char *name, const char *fields)
{
	if (!A.evt[0])
		now_str(A.evt, sizeof(A.evt));
	ev_write(name, fields);
}
