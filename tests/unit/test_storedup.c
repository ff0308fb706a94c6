/* test_storedup.c -- what the store does with records it cannot trust (issue
 * 31 items 6 and 14): one run id under two experiments is an error naming
 * both directories and the EXPERIMENT/RUN-ID form that picks one (never a
 * silent pick of the last); a run.json that is not JSON is reported by
 * file:line:col and what is wrong, never by its bytes (it may be a link to
 * /etc/passwd); a run whose journal cannot be read (a line longer than any
 * gpuorch writes) is skipped by the listing with a message, and the other
 * runs are listed. */
#include "store/store.h"
#include "store/runjournal.h"
#include "core/fsutil.h"
#include "core/jsonutil.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "core/banned.h"

static char tmp[] = "/tmp/test_storedup.XXXXXX";

static void put(const char *rel, const char *text)
{
	struct strbuf err = STRBUF_INIT;
	char *path = xstrfmt("%s/%s", store_root(), rel);
	char *dir = fs_dirname(path);
	if (fs_mkdir_p(dir, 0755, &err) != GO_OK ||
	    fs_write_atomic(path, text, strlen(text), &err) != GO_OK)
		printf("# cannot write %s: %s\n", path, err.buf);
	free(dir);
	free(path);
	strbuf_release(&err);
}

static void put_run(const char *slug, const char *id, const char *started)
{
	char *rel = xstrfmt("%s/%s/run.json", slug, id);
	char *text = xstrfmt("{\"schema\": \"gpuorch.run/1\", \"run_id\": \"%s\", \"started_at\": "
			     "\"%s\", \"status\": \"complete\", \"hosts\": [], \"slug\": \"%s\"}",
			     id, started, slug);
	put(rel, text);
	free(rel);
	free(text);
}

static void dup_tests(void)
{
	struct strbuf err = STRBUF_INIT;
	struct store_entry e;
	enum go_status st;

	put_run("exp-a", "20261101-000000-abcdef", "2026-11-01T00:00:00Z");
	put_run("exp-b", "20261101-000000-abcdef", "2026-11-01T00:00:00Z");
	put_run("exp-b", "20261102-000000-123456", "2026-11-02T00:00:00Z");

	st = store_find("20261101-000000-abcdef", &e, &err);
	CHECK(st == GO_ERR_USAGE && strstr(err.buf, "ambiguous") &&
	      strstr(err.buf, "/exp-a/20261101-000000-abcdef'") &&
	      strstr(err.buf, "/exp-b/20261101-000000-abcdef'") && strstr(err.buf, "EXPERIMENT/RUN-ID"),
	      "an id two runs have: an error naming both directories and how to pick one",
	      "st=%d %s", st, err.buf);
	CHECK(!e.run && !e.dir, "and nothing picked", "%s", e.dir);
	st = store_find("20261101-000000-abc", &e, &err);
	CHECK(st == GO_ERR_USAGE && strstr(err.buf, "/exp-a/") && strstr(err.buf, "/exp-b/"),
	      "a prefix of only that id: the same error", "st=%d %s", st, err.buf);
	st = store_find("exp-a/20261101-000000-abcdef", &e, &err);
	CHECK(st == GO_OK && e.dir && strstr(e.dir, "/exp-a/") &&
	      !strcmp(json_str(e.run, "slug"), "exp-a"), "EXPERIMENT/RUN-ID picks exp-a's",
	      "st=%d %s", st, err.buf);
	store_entry_release(&e);
	st = store_find("exp-b/20261101", &e, &err);
	CHECK(st == GO_OK && !strcmp(json_str(e.run, "slug"), "exp-b"),
	      "EXPERIMENT/prefix picks exp-b's", "st=%d %s", st, err.buf);
	store_entry_release(&e);
	st = store_find("20261102", &e, &err);
	CHECK(st == GO_OK && !strcmp(e.run_id, "20261102-000000-123456"),
	      "an id only one run has is found as before", "st=%d %s", st, err.buf);
	store_entry_release(&e);
	st = store_find("exp-c/20261101-000000-abcdef", &e, &err);
	CHECK(st == GO_ERR_NOT_FOUND && strstr(err.buf, "exp-c"), "an experiment without it: not found",
	      "st=%d %s", st, err.buf);
	st = store_find("../20261101-000000-abcdef", &e, &err);
	CHECK(st == GO_ERR_USAGE, "'..' as the experiment is refused", "st=%d %s", st, err.buf);
	{
		char *q = store_qualified_id("/r/exp-a/20261101-000000-abcdef");
		CHECK(!strcmp(q, "exp-a/20261101-000000-abcdef"), "store_qualified_id", "'%s'", q);
		free(q);
	}
	strbuf_release(&err);
}

static void unquoted_tests(void)
{
	struct strbuf err = STRBUF_INIT;
	struct store_entry e;
	char *secret = xstrfmt("%s/secret", tmp), *link;
	int fd;
	enum go_status st;

	put("exp-c/20261103-000000-000000/logs/x", "");
	fd = open(secret, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write(fd, "root:x:0:0:root:/root:/bin/bash\n", 32) == 32,
	      "a file that is not JSON", "fd %d", fd);
	if (fd >= 0)
		close(fd);
	link = xstrfmt("%s/exp-c/20261103-000000-000000/run.json", store_root());
	CHECK(symlink(secret, link) == 0, "run.json links to it", "%s", link);
	st = store_find("20261103-000000-000000", &e, &err);
	CHECK(st == GO_ERR_IO && strstr(err.buf, "run.json:1:1: invalid JSON") &&
	      !strstr(err.buf, "root:") && !strstr(err.buf, "bash"),
	      "its error says file:line:col and what is wrong, not one byte of it", "%s", err.buf);
	put("exp-c/20261104-000000-000000/run.json", "{\"run_id\": \"x\",\n \"hosts\": [1, 2,\n");
	st = store_find("20261104-000000-000000", &e, &err);
	CHECK(st == GO_ERR_IO && strstr(err.buf, "invalid JSON: the text ends before"),
	      "a cut-short record: where and why", "%s", err.buf);
	put("exp-c/20261105-000000-000000/run.json", "{\"run_id\": \"x\"} trailing-secret");
	st = store_find("20261105-000000-000000", &e, &err);
	CHECK(st == GO_ERR_IO && strstr(err.buf, "run.json:1:17: invalid JSON: more text follows") &&
	      !strstr(err.buf, "trailing-secret"), "text after the record: where and why", "%s",
	      err.buf);
	free(link);
	free(secret);
	strbuf_release(&err);
}

static void listing_tests(void)
{
	struct strbuf warn = STRBUF_INIT, err = STRBUF_INIT;
	struct store_entry *v = NULL;
	char *jpath;
	int n = -1, fd, i, found = 0;
	enum go_status st;

	put_run("exp-d", "20261106-000000-000000", "2026-11-06T00:00:00Z");
	/* a journal whose line is longer than any gpuorch writes (sparse: no disk) */
	jpath = xstrfmt("%s/exp-d/20261106-000000-000000/%s", store_root(), RUNJOURNAL_NAME);
	fd = open(jpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && ftruncate(fd, (off_t)RUNJOURNAL_LINE_MAX + 2) == 0 &&
	      pwrite(fd, "\n", 1, (off_t)RUNJOURNAL_LINE_MAX + 1) == 1,
	      "a journal line over RUNJOURNAL_LINE_MAX bytes", "fd %d", fd);
	if (fd >= 0)
		close(fd);
	st = store_list(&v, &n, &warn, &err);
	for (i = 0; i < n; i++)
		found |= !strcmp(v[i].run_id, "20261102-000000-123456");
	CHECK(st == GO_OK && found, "the other runs are listed", "st=%d n=%d %s", st, n, err.buf);
	for (i = 0; i < n; i++)
		CHECK(strcmp(v[i].run_id, "20261106-000000-000000"), "the unreadable one is not",
		      "%s", v[i].dir);
	CHECK(strstr(warn.buf, "skipping run") && strstr(warn.buf, "20261106-000000-000000") &&
	      strstr(warn.buf, "line over 64 MiB"), "it is skipped with a message saying why", "%s",
	      warn.buf);
	store_list_free(v, n);
	free(jpath);
	strbuf_release(&warn);
	strbuf_release(&err);
}

int main(void)
{
	char *root;
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	root = xstrfmt("%s/reports", tmp);
	store_set_root(root);
	dup_tests();
	unquoted_tests();
	listing_tests();
	store_set_root(NULL);
	fs_remove_tree(tmp);
	free(root);
	return check_summary();
}
