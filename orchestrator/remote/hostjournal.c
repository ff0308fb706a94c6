/* hostjournal.c -- reads a host runner's journal (hostjournal.h, docs/runner.md).
 *
 * The runner is the journal's one writer and appends whole lines, but a
 * runner killed mid-write leaves a torn line, and the next runner closes it
 * with a newline before it appends: so a complete line that is not a JSON
 * object with "ev" is counted and skipped, while an incomplete last line is
 * kept until its newline arrives. The runner delivers events at least once
 * (a restarted runner may journal an item's end again); each item's end
 * event reaches the callback once. */
#include "remote/hostjournal.h"

#include <errno.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

void journal_init(struct journal *j, uint64_t offset)
{
	memset(j, 0, sizeof(*j));
	j->offset = offset;
	strbuf_init(&j->pending, 0);
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(a, b);
}

void journal_release(struct journal *j)
{
	while (j->seen) {   /* POSIX has no tdestroy: the root, one at a time */
		char *key = *(char **)j->seen;
		tdelete(key, &j->seen, cmp_key);
		free(key);
	}
	free(j->end_status);
	free(j->last_bad);
	strbuf_release(&j->pending);
	memset(j, 0, sizeof(*j));
}

void journal_resync(struct journal *j)
{
	strbuf_reset(&j->pending);
}

/* "build" / "step" for the events that end an item, else NULL. */
static const char *end_kind(const char *ev)
{
	static const char *const builds[] = { "build_end", "build_reused", "build_skipped" };
	static const char *const steps[] = { "step_end", "step_skipped" };
	size_t i;
	for (i = 0; i < sizeof(builds) / sizeof(builds[0]); i++)
		if (!strcmp(ev, builds[i]))
			return "build";
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (!strcmp(ev, steps[i]))
			return "step";
	return NULL;
}

/* 1 when this item's end was delivered before; else remembers it. */
static int seen_before(struct journal *j, const char *kind, const char *id)
{
	char *key = xstrfmt("%s\n%s", kind, id);
	char **at = tsearch(key, &j->seen, cmp_key);
	if (!at) {
		fprintf(stderr, "fatal: out of memory reading a host's journal\n");
		abort();
	}
	if (*at != key) {
		free(key);
		return 1;
	}
	return 0;
}
static void bad_line(struct journal *j, uint64_t at, const char *why)
{
	j->nbad++;
	free(j->last_bad);
	j->last_bad = xstrfmt("journal offset %llu: %s", (unsigned long long)at, why);
}

/* One complete line (without its newline); returns the callback's answer. */
static int one_line(struct journal *j, const char *line, size_t len, uint64_t at, uint64_t next,
		    journal_cb cb, void *ctx)
{
	cJSON *root;
	const cJSON *ev, *id, *t;
	struct journal_event e;
	const char *kind;
	int stop = 0;

	if (!len) {
		bad_line(j, at, "an empty line");
		return 0;
	}
	root = cJSON_ParseWithLength(line, len);
	if (!root || !cJSON_IsObject(root)) {
		bad_line(j, at, "not a JSON object (a line torn by a runner killed while writing)");
		cJSON_Delete(root);
		return 0;
	}
	ev = cJSON_GetObjectItemCaseSensitive(root, "ev");
	t = cJSON_GetObjectItemCaseSensitive(root, "t");
	id = cJSON_GetObjectItemCaseSensitive(root, "id");
	if (!cJSON_IsString(ev) || !cJSON_IsNumber(t) || (id && !cJSON_IsString(id))) {
		bad_line(j, at, "an object without a string \"ev\" and a number \"t\"");
		cJSON_Delete(root);
		return 0;
	}
	kind = end_kind(ev->valuestring);
	if (kind && (!id || seen_before(j, kind, id->valuestring))) {
		if (id)
			j->ndup++;
		else
			bad_line(j, at, "an end event without an \"id\"");
		cJSON_Delete(root);
		return 0;
	}
	if (!strcmp(ev->valuestring, "runner_ended")) {
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "status");
		j->ended = 1;
		free(j->end_status);
		j->end_status = xstrdup(cJSON_IsString(s) ? s->valuestring : "unknown");
	}
	e.ev = ev->valuestring;
	e.id = id ? id->valuestring : NULL;
	e.t = t->valuedouble;
	e.json = root;
	e.offset = at;
	e.next = next;
	if (cb)
		stop = cb(&e, ctx);
	cJSON_Delete(root);
	return stop;
}

enum go_status journal_feed(struct journal *j, const char *data, size_t len, journal_cb cb,
			    void *ctx, struct strbuf *err)
{
	size_t start = 0, i;

	strbuf_add(&j->pending, data, len);
	for (i = 0; i < j->pending.len; i++) {
		uint64_t at, next;
		if (j->pending.buf[i] != '\n')
			continue;
		at = j->offset;
		next = j->offset + (i + 1 - start);
		j->offset = next;
		if (one_line(j, j->pending.buf + start, i - start, at, next, cb, ctx)) {
			start = i + 1;
			break;
		}
		start = i + 1;
	}
	if (start) {
		memmove(j->pending.buf, j->pending.buf + start, j->pending.len - start);
		strbuf_setlen(&j->pending, j->pending.len - start);
	}
	if (j->pending.len > JOURNAL_MAX_LINE)
		return go_fail(err, GO_ERR_REMOTE,
			       "journal offset %llu: a line longer than %u bytes; the runner's text_cap "
			       "bounds its events, so the journal is not one the runner wrote",
			       (unsigned long long)j->offset, JOURNAL_MAX_LINE);
	return GO_OK;
}

enum go_status journal_read_file(struct journal *j, const char *path, journal_cb cb, void *ctx,
				 struct strbuf *err)
{
	FILE *f = fopen(path, "rb");
	char buf[65536];
	size_t n;
	enum go_status st = GO_OK;

	if (!f)
		return go_fail(err, go_from_errno(errno), "cannot open journal '%s': %s", path,
			       strerror(errno));
	journal_resync(j);
	if (fseeko(f, (off_t)j->offset, SEEK_SET)) {
		st = go_fail(err, GO_ERR_IO, "cannot seek journal '%s' to %llu: %s", path,
			     (unsigned long long)j->offset, strerror(errno));
		fclose(f);
		return st;
	}
	while (!st && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		st = journal_feed(j, buf, n, cb, ctx, err);
	if (!st && ferror(f))
		st = go_fail(err, GO_ERR_IO, "cannot read journal '%s'", path);
	fclose(f);
	return st;
}
