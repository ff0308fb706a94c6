/* runjournal.c -- append, empty and replay the run's local event journal (runjournal.h). */
#include "store/runjournal.h"
#include "core/fsutil.h"
#include "core/jsonutil.h"
#include "store/runread.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "core/banned.h"

int runjournal_open(const char *dir, struct strbuf *err)
{
	char *path = xstrfmt("%s/%s", dir, RUNJOURNAL_NAME);
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		go_fail(err, GO_ERR_IO, "cannot open the run journal '%s': %s", path, strerror(errno));
	free(path);
	return fd;
}

static enum go_status write_all(int fd, const char *p, size_t n, struct strbuf *err)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return go_fail(err, GO_ERR_IO, "cannot append to the run journal: %s",
				       w < 0 ? strerror(errno) : "short write");
		p += w;
		n -= (size_t)w;
	}
	return GO_OK;
}

enum go_status runjournal_append_host(int fd, int index, const char *host_json, struct strbuf *err)
{
	struct strbuf line = STRBUF_INIT;
	enum go_status st;
	strbuf_addf(&line, "{\"ev\":\"host\",\"host\":%d,\"at\":%lld,\"record\":%s}\n", index,
		    (long long)time(NULL), host_json);
	/* one write: with O_APPEND a line is never interleaved with another */
	st = write_all(fd, line.buf, line.len, err);
	if (st == GO_OK && fdatasync(fd) != 0)
		st = go_fail(err, GO_ERR_IO, "cannot sync the run journal: %s", strerror(errno));
	strbuf_release(&line);
	return st;
}

enum go_status runjournal_clear(int fd, struct strbuf *err)
{
	if (ftruncate(fd, 0) != 0)
		return go_fail(err, GO_ERR_IO, "cannot empty the run journal: %s", strerror(errno));
	return GO_OK;
}

int runjournal_apply(const char *dir, cJSON *run)
{
	char *path = xstrfmt("%s/%s", dir, RUNJOURNAL_NAME);
	struct strbuf sb = STRBUF_INIT, why = STRBUF_INIT;
	cJSON *hosts = cJSON_GetObjectItemCaseSensitive(run, "hosts");
	char *p, *nl;
	int applied = 0;

	if (!cJSON_IsArray(hosts) || !fs_is_file(path) || fs_read_file(path, &sb, &why) != GO_OK)
		goto out;
	/* whole lines only: a line without its newline was being written when the controller died */
	for (p = sb.buf; (nl = memchr(p, '\n', (size_t)(sb.buf + sb.len - p))) != NULL; p = nl + 1) {
		cJSON *ev, *rec;
		const cJSON *idx;
		*nl = '\0';
		ev = cJSON_Parse(p);
		idx = cJSON_GetObjectItemCaseSensitive(ev, "host");
		rec = cJSON_GetObjectItemCaseSensitive(ev, "record");
		if (rr_streq(json_str(ev, "ev"), "host") && cJSON_IsNumber(idx) && cJSON_IsObject(rec) &&
		    idx->valueint >= 0 && idx->valueint < cJSON_GetArraySize(hosts)) {
			cJSON_DetachItemViaPointer(ev, rec);
			cJSON_ReplaceItemInArray(hosts, idx->valueint, rec);
			applied++;
		}
		cJSON_Delete(ev);
	}
out:
	strbuf_release(&sb);
	strbuf_release(&why);
	free(path);
	return applied;
}
