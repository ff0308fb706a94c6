/* runjournal.c -- append, empty and replay the run's local event journal (runjournal.h). */
#include "store/runjournal.h"
#include "core/jsonutil.h"
#include "store/runread.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "core/banned.h"

#define JOURNAL_FORMAT 2

int runjournal_open(const char *dir, struct strbuf *err)
{
	char *path = xstrfmt("%s/%s", dir, RUNJOURNAL_NAME);
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		go_fail(err, GO_ERR_IO, "cannot open the run journal '%s': %s", path, strerror(errno));
	free(path);
	return fd;
}

enum go_status runjournal_append(int fd, const char *p, size_t n, struct strbuf *err)
{
	off_t was = lseek(fd, 0, SEEK_END);
	enum go_status st = GO_OK;
	/* one write: with O_APPEND a line is never interleaved with another */
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			st = go_fail(err, GO_ERR_IO, "cannot append to the run journal: %s",
				     w < 0 ? strerror(errno) : "short write");
			break;
		}
		p += w;
		n -= (size_t)w;
	}
	if (st == GO_OK && fdatasync(fd) != 0)
		st = go_fail(err, GO_ERR_IO, "cannot sync the run journal: %s", strerror(errno));
	/* a line cut short would glue the next one to it: cut it off */
	if (st != GO_OK && was >= 0 && ftruncate(fd, was) != 0)
		strbuf_addf(err, " (and cannot cut the journal back: %s)", strerror(errno));
	return st;
}

void runjournal_base_line(struct strbuf *sb, const char *run_sha256)
{
	strbuf_addf(sb, "{\"ev\":\"base\",\"format\":%d,\"run_json_sha256\":\"%s\"}\n",
		    JOURNAL_FORMAT, run_sha256);
}

void runjournal_host_line(struct strbuf *sb, int index, const cJSON *delta)
{
	const cJSON *it;
	strbuf_addf(sb, "{\"ev\":\"host\",\"host\":%d,\"at\":%lld", index, (long long)time(NULL));
	cJSON_ArrayForEach(it, delta) {
		char *t = cJSON_PrintUnformatted(it);
		if (!t) {
			fprintf(stderr, "fatal: out of memory serialising the run journal\n");
			abort();
		}
		strbuf_addf(sb, ",\"%s\":%s", it->string, t);   /* set, del, ins */
		cJSON_free(t);
	}
	strbuf_addstr(sb, "}\n");
}

enum go_status runjournal_clear(int fd, struct strbuf *err)
{
	if (ftruncate(fd, 0) != 0)
		return go_fail(err, GO_ERR_IO, "cannot empty the run journal: %s", strerror(errno));
	return GO_OK;
}

/* ---- reading, a line at a time ---- */

struct lines {
	int fd;
	size_t off, len;
	char buf[65536];
};

/* The next whole line (its '\n' dropped) into sb: 1; 0 at the end (a torn
 * last line is dropped); -1 read error; -2 a line over max bytes. */
static int next_line(struct lines *L, struct strbuf *sb, size_t max)
{
	strbuf_reset(sb);
	for (;;) {
		char *at, *nl;
		size_t take;
		if (L->off == L->len) {
			ssize_t n = read(L->fd, L->buf, sizeof(L->buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return -1;
			if (n == 0)
				return 0;
			L->off = 0;
			L->len = (size_t)n;
		}
		at = L->buf + L->off;
		nl = memchr(at, '\n', L->len - L->off);
		take = nl ? (size_t)(nl - at) : L->len - L->off;
		if (sb->len + take > max)
			return -2;
		strbuf_add(sb, at, take);
		L->off += take + (nl ? 1 : 0);
		if (nl)
			return 1;
	}
}

/* Sizes of the arrays inserts go into, counted once (cJSON counts by walking). */
struct applier {
	cJSON *hosts;
	struct { cJSON *arr; int n; } *a;
	int na, alloc;
};

static int *arr_size(struct applier *ap, cJSON *arr)
{
	int i;
	for (i = 0; i < ap->na; i++)
		if (ap->a[i].arr == arr)
			return &ap->a[i].n;
	if (ap->na == ap->alloc) {
		ap->alloc = ap->alloc ? 2 * ap->alloc : 16;
		ap->a = xrealloc(ap->a, (size_t)ap->alloc * sizeof(*ap->a));
	}
	ap->a[ap->na].arr = arr;
	ap->a[ap->na].n = cJSON_GetArraySize(arr);
	return &ap->a[ap->na++].n;
}

/* arr is about to be freed: its address may come back as another array */
static void arr_forget(struct applier *ap, const cJSON *arr)
{
	int i;
	for (i = 0; i < ap->na; i++)
		if (ap->a[i].arr == arr)
			ap->a[i] = ap->a[--ap->na];
}

static void set_key(struct applier *ap, cJSON *host, const char *key, cJSON *val)
{
	cJSON *old = cJSON_GetObjectItemCaseSensitive(host, key);
	if (old) {
		arr_forget(ap, old);
		cJSON_ReplaceItemViaPointer(host, old, val);
	} else {
		char *k = xstrdup(key);
		cJSON_AddItemToObject(host, k, val);
		free(k);
	}
}

static void apply_delta(struct applier *ap, cJSON *host, cJSON *ev)
{
	cJSON *set = cJSON_GetObjectItemCaseSensitive(ev, "set");
	cJSON *del = cJSON_GetObjectItemCaseSensitive(ev, "del");
	cJSON *ins = cJSON_GetObjectItemCaseSensitive(ev, "ins");
	if (!cJSON_IsArray(del))
		del = NULL;
	if (!cJSON_IsObject(ins))
		ins = NULL;
	cJSON *it, *next;

	for (it = cJSON_IsObject(set) ? set->child : NULL; it; it = next) {
		next = it->next;
		if (!it->string)
			continue;
		cJSON_DetachItemViaPointer(set, it);
		set_key(ap, host, it->string, it);
	}
	cJSON_ArrayForEach(it, del) {
		cJSON *old;
		if (!cJSON_IsString(it) ||
		    !(old = cJSON_GetObjectItemCaseSensitive(host, it->valuestring)))
			continue;
		arr_forget(ap, old);
		cJSON_DeleteItemFromObjectCaseSensitive(host, it->valuestring);
	}
	cJSON_ArrayForEach(it, ins) {
		cJSON *arr, *pair;
		int *n;
		if (!it->string || !cJSON_IsArray(it))
			continue;
		arr = cJSON_GetObjectItemCaseSensitive(host, it->string);
		if (!cJSON_IsArray(arr)) {
			arr = cJSON_CreateArray();
			set_key(ap, host, it->string, arr);
		}
		n = arr_size(ap, arr);
		cJSON_ArrayForEach(pair, it) {
			cJSON *pos, *item;
			if (!cJSON_IsArray(pair))
				continue;
			pos = cJSON_GetArrayItem(pair, 0);
			item = cJSON_GetArrayItem(pair, 1);
			if (!cJSON_IsNumber(pos) || !item)
				continue;
			cJSON_DetachItemViaPointer(pair, item);
			if (pos->valuedouble >= *n || pos->valuedouble < 0)
				cJSON_AddItemToArray(arr, item);   /* the common case: appended */
			else
				json_array_insert(arr, (int)pos->valuedouble, item);
			(*n)++;
		}
	}
}

int runjournal_apply(const char *dir, cJSON *run, const char *run_sha256, struct strbuf *err)
{
	char *path = xstrfmt("%s/%s", dir, RUNJOURNAL_NAME);
	struct strbuf line = STRBUF_INIT;
	struct lines *L = NULL;
	struct applier ap;
	int applied = 0, nline = 0, r, legacy = -1, on = 0;

	memset(&ap, 0, sizeof(ap));
	ap.hosts = cJSON_GetObjectItemCaseSensitive(run, "hosts");
	if (!cJSON_IsArray(ap.hosts))
		goto out;
	L = xcalloc(1, sizeof(*L));
	L->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (L->fd < 0) {
		if (errno != ENOENT) {
			go_fail(err, GO_ERR_IO, "cannot open the run journal '%s': %s", path,
				strerror(errno));
			applied = -1;
		}
		goto out;
	}
	while ((r = next_line(L, &line, RUNJOURNAL_LINE_MAX)) == 1) {
		cJSON *ev = cJSON_ParseWithLength(line.buf, line.len), *host;
		const cJSON *idx = cJSON_GetObjectItemCaseSensitive(ev, "host");
		const char *kind = json_str(ev, "ev");
		nline++;
		if (rr_streq(kind, "base")) {
			/* the lines after it apply to the run.json it names; those of
			 * an earlier run.json (the journal not emptied after a whole
			 * save: killed between the two, or the truncate failed) are
			 * all in this one */
			legacy = 0;
			on = rr_streq(json_str(ev, "run_json_sha256"), run_sha256);
			cJSON_Delete(ev);
			continue;
		}
		if (legacy < 0)
			legacy = 1;   /* no base line first: the earlier format */
		if (!legacy && !on) {
			cJSON_Delete(ev);
			continue;
		}
		if (!ev && !legacy)
			break;   /* a later line may build on this one: stop at it */
		host = rr_streq(kind, "host") && cJSON_IsNumber(idx) && idx->valueint >= 0 &&
		       idx->valueint < cJSON_GetArraySize(ap.hosts)
			       ? cJSON_GetArrayItem(ap.hosts, idx->valueint) : NULL;
		if (host && legacy) {
			/* the earlier format: the host's whole object */
			cJSON *rec = cJSON_GetObjectItemCaseSensitive(ev, "record");
			if (cJSON_IsObject(rec)) {
				cJSON_DetachItemViaPointer(ev, rec);
				cJSON_ReplaceItemInArray(ap.hosts, idx->valueint, rec);
				applied++;
			}
		} else if (host && cJSON_IsObject(host)) {
			apply_delta(&ap, host, ev);
			applied++;
		}
		cJSON_Delete(ev);
	}
	if (r == -1) {
		go_fail(err, GO_ERR_IO, "cannot read the run journal '%s': %s", path, strerror(errno));
		applied = -1;
	} else if (r == -2) {
		go_fail(err, GO_ERR_IO, "the run journal '%s' has a line over %zu MiB (line %d): "
			"not a journal gpuorch wrote whole; move it aside to read run.json alone",
			path, RUNJOURNAL_LINE_MAX >> 20, nline + 1);
		applied = -1;
	}
	close(L->fd);
out:
	free(L);
	free(ap.a);
	strbuf_release(&line);
	free(path);
	return applied;
}
