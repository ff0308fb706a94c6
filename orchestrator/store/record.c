/* record.c -- the run record under construction: run.json saved atomically, host changes journaled (record.h). */
#include "store/record.h"
#include "core/fsutil.h"
#include "core/jsonutil.h"
#include "store/runjournal.h"

#include <stdio.h>
#include <stdlib.h>
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

enum go_status record_save(struct record *r, struct strbuf *err)
{
	enum go_status st;
	/* a host's line waits until run.json holds everything before it */
	pthread_mutex_lock(&r->jlock);
	record_lock(r);
	st = json_write_atomic(r->path, r->root, err);
	record_unlock(r);
	if (st == GO_OK && r->jfd >= 0)
		st = runjournal_clear(r->jfd, err);
	pthread_mutex_unlock(&r->jlock);
	return st;
}

enum go_status record_save_host(struct record *r, int index, const cJSON *host,
				struct strbuf *err)
{
	enum go_status st;
	char *text;
	if (r->jfd < 0)
		return record_save(r, err);
	record_lock(r);
	text = cJSON_PrintUnformatted(host);
	record_unlock(r);
	if (!text)
		return go_fail(err, GO_ERR_INTERNAL, "cannot serialise host %d of the run record", index);
	pthread_mutex_lock(&r->jlock);
	st = runjournal_append_host(r->jfd, index, text, err);
	pthread_mutex_unlock(&r->jlock);
	cJSON_free(text);
	return st;
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
