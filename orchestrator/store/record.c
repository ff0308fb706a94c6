/* record.c -- the run record under construction: run.json saved atomically, host changes journaled (record.h). */
#include "store/record.h"
#include "core/fsutil.h"
#include "core/jsonutil.h"
#include "store/runjournal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/banned.h"

void record_init(struct record *r, const char *dir, cJSON *root)
{
	pthread_mutex_init(&r->lock, NULL);
	r->root = root;
	r->dir = xstrdup(dir);
	r->path = xstrfmt("%s/run.json", dir);
	pthread_mutex_init(&r->jlock, NULL);
	r->hd = NULL;
	r->nhd = 0;
	r->run_sha[0] = '\0';
	r->based = 0;
	{
		struct strbuf err = STRBUF_INIT;
		r->jfd = runjournal_open(dir, &err);
		if (r->jfd < 0)   /* not fatal: every host save then rewrites run.json */
			fprintf(stderr, "warning: %s; saving run.json whole instead\n", err.buf);
		strbuf_release(&err);
	}
}

void record_release(struct record *r)
{
	cJSON_Delete(r->root);
	if (r->jfd >= 0) {
		/* empty: everything is in run.json; a finished run keeps no journal */
		struct stat sb;
		if (fstat(r->jfd, &sb) == 0 && sb.st_size == 0) {
			char *j = xstrfmt("%s/%s", r->dir, RUNJOURNAL_NAME);
			unlink(j);
			free(j);
		}
		close(r->jfd);
	}
	{
		int i;
		for (i = 0; i < r->nhd; i++)
			hostdelta_release(&r->hd[i]);
		free(r->hd);
	}
	free(r->dir);
	free(r->path);
	pthread_mutex_destroy(&r->jlock);
	pthread_mutex_destroy(&r->lock);
}

void record_lock(struct record *r)
{
	pthread_mutex_lock(&r->lock);
}

void record_unlock(struct record *r)
{
	pthread_mutex_unlock(&r->lock);
}

/* The host shadows (r->hd) hold at least n hosts. */
static void shadows_grow(struct record *r, int n)
{
	if (n <= r->nhd)
		return;
	r->hd = xrealloc(r->hd, (size_t)n * sizeof(*r->hd));
	memset(r->hd + r->nhd, 0, (size_t)(n - r->nhd) * sizeof(*r->hd));
	r->nhd = n;
}

enum go_status record_save(struct record *r, struct strbuf *err)
{
	enum go_status st;
	char *text;
	struct strbuf sb = STRBUF_INIT;
	/* a host's line waits until run.json holds everything before it */
	pthread_mutex_lock(&r->jlock);
	record_lock(r);
	text = cJSON_Print(r->root);
	if (!text) {
		record_unlock(r);
		pthread_mutex_unlock(&r->jlock);
		return go_fail(err, GO_ERR_INTERNAL, "cannot serialise the run record for '%s'",
			       r->path);
	}
	strbuf_addstr(&sb, text);
	strbuf_addch(&sb, '\n');
	cJSON_free(text);
	st = fs_write_atomic(r->path, sb.buf, sb.len, err);
	if (st == GO_OK && r->jfd >= 0) {
		/* the journal's deltas start from run.json as just written */
		const cJSON *h;
		int i = 0;
		sha256_hex(sb.buf, sb.len, r->run_sha);
		shadows_grow(r, cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r->root, "hosts")));
		cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(r->root, "hosts"))
			hostdelta_reset(&r->hd[i++], h);
	}
	record_unlock(r);
	strbuf_release(&sb);
	if (st == GO_OK && r->jfd >= 0) {
		st = runjournal_clear(r->jfd, err);
		r->based = 0;
	}
	pthread_mutex_unlock(&r->jlock);
	return st;
}

enum go_status record_save_host(struct record *r, int index, const cJSON *host,
				struct strbuf *err)
{
	enum go_status st = GO_OK;
	struct strbuf line = STRBUF_INIT;
	cJSON *delta;
	if (r->jfd < 0 || index < 0)
		return record_save(r, err);
	pthread_mutex_lock(&r->jlock);
	if (!r->run_sha[0]) {
		/* no whole save yet: nothing for a delta to start from */
		pthread_mutex_unlock(&r->jlock);
		return record_save(r, err);
	}
	record_lock(r);
	shadows_grow(r, index + 1);
	delta = hostdelta_diff(&r->hd[index], host);
	if (delta) {
		if (!r->based)
			runjournal_base_line(&line, r->run_sha);
		runjournal_host_line(&line, index, delta);
		cJSON_Delete(delta);
	}
	record_unlock(r);
	if (line.len) {
		st = runjournal_append(r->jfd, line.buf, line.len, err);
		if (st == GO_OK) {
			r->based = 1;
		} else {   /* the line is not in the journal: the next one says everything */
			record_lock(r);
			hostdelta_forget(&r->hd[index]);
			record_unlock(r);
		}
	}
	pthread_mutex_unlock(&r->jlock);
	strbuf_release(&line);
	return st;
}

void record_host_append(struct record *r, int index, cJSON *host, const char *key,
			cJSON *item)
{
	record_lock(r);
	cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(host, key), item);
	if (index >= 0 && index < r->nhd)
		hostdelta_appended(&r->hd[index], key, item);
	record_unlock(r);
}

enum go_status record_write_file(struct record *r, const char *rel, const void *data,
				 size_t len, struct strbuf *err)
{
	char *path = xstrfmt("%s/%s", r->dir, rel);
	char *dir = fs_dirname(path);
	enum go_status st = fs_mkdir_p(dir, 0755, err);
	if (st == GO_OK)
		st = fs_write_atomic(path, data, len, err);
	free(dir);
	free(path);
	return st;
}
