/* record.c -- the run record under construction, saved atomically (record.h). */
#include "store/record.h"
#include "core/fsutil.h"
#include "core/jsonutil.h"

#include <stdlib.h>
#include "core/banned.h"

void record_init(struct record *r, const char *dir, cJSON *root)
{
	pthread_mutex_init(&r->lock, NULL);
	r->root = root;
	r->dir = xstrdup(dir);
	r->path = xstrfmt("%s/run.json", dir);
}

void record_release(struct record *r)
{
	cJSON_Delete(r->root);
	free(r->dir);
	free(r->path);
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
	record_lock(r);
	st = json_write_atomic(r->path, r->root, err);
	record_unlock(r);
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
