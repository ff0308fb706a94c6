/* test_store.c -- unit tests of store.c: run ids, run directories, listing and lookup. */
#include "store/store.h"
#include "core/fsutil.h"
#include "core/jsonutil.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "core/banned.h"


static char tmp[] = "/tmp/test_store.XXXXXX";

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
	char *text = xstrfmt("{\"schema\": \"gpuorch.run/1\", \"run_id\": \"%s\", "
			     "\"started_at\": \"%s\", \"status\": \"complete\"}", id, started);
	put(rel, text);
	free(rel);
	free(text);
}

static int id_shape_ok(const char *id)
{
	int i;
	if (strlen(id) != 22 || id[8] != '-' || id[15] != '-')
		return 0;
	for (i = 0; i < 22; i++) {
		if (i == 8 || i == 15)
			continue;
		if (i < 15 ? !isdigit((unsigned char)id[i])
			   : !(isdigit((unsigned char)id[i]) || (id[i] >= 'a' && id[i] <= 'f')))
			return 0;
	}
	return 1;
}

static void test_ids(void)
{
	char a[32], b[32];
	store_new_run_id(a);
	store_new_run_id(b);
	CHECK(id_shape_ok(a), "run id is YYYYMMDD-HHMMSS-xxxxxx", "got '%s'", a);
	CHECK(strcmp(a, b) != 0, "two run ids in one second differ", "%s %s", a, b);
	CHECK(!strncmp(a, "20", 2), "run id starts with the year", "%s", a);
}

static void test_root(void)
{
	store_set_root(NULL);
	CHECK(!strcmp(store_root(), "reports"), "default root is ./reports", "%s", store_root());
	store_set_root("/x/y");
	CHECK(!strcmp(store_root(), "/x/y"), "store_set_root overrides", "%s", store_root());
	store_set_root(tmp);
}

static void test_create(void)
{
	struct strbuf err = STRBUF_INIT;
	char *dir = NULL;
	enum go_status st = store_create_run_dir("demo", "20261122-051000-a1b2c3", &dir, &err);
	char *logs = xstrfmt("%s/demo/20261122-051000-a1b2c3/logs", tmp);

	CHECK(st == GO_OK && dir && fs_is_dir(logs), "creates REPORTS/slug/run-id/logs", "%s",
	      err.buf);
	CHECK(dir && !strcmp(dir + strlen(tmp), "/demo/20261122-051000-a1b2c3"),
	      "returns the run directory", "%s", dir ? dir : "NULL");
	free(dir);
	dir = NULL;
	st = store_create_run_dir("demo", "20261122-051000-a1b2c3", &dir, &err);
	CHECK(st == GO_ERR_IO && !dir && strstr(err.buf, "already exists"),
	      "an existing run directory is an error", "st=%d %s", st, err.buf);
	st = store_create_run_dir("../evil", "x", &dir, &err);
	CHECK(st != GO_OK && !dir, "a slug with a slash is refused", "st=%d", st);
	st = store_create_run_dir("demo", "..", &dir, &err);
	CHECK(st != GO_OK && !dir, "run id '..' is refused", "st=%d", st);
	free(logs);
	strbuf_release(&err);
}

static void test_list(void)
{
	struct strbuf warn = STRBUF_INIT, err = STRBUF_INIT;
	struct store_entry *v = NULL;
	int n = -1;
	enum go_status st;

	/* the run dir created above has no run.json yet */
	put_run("attention-wmma", "20261120-100000-aaaaaa", "2026-11-20T10:00:00Z");
	put_run("attention-wmma", "20261122-090000-bbbbbb", "2026-11-22T09:00:00Z");
	put_run("sparse-gemm", "20261121-120000-cccccc", "2026-11-21T12:00:00Z");
	put_run("sparse-gemm", "20261121-120000-cccddd", "2026-11-21T12:00:00Z");
	put("sparse-gemm/20261119-000000-bad000/run.json", "{ \"run_id\": ");
	put("sparse-gemm/20261119-000000-arr000/run.json", "[1, 2]");
	put("sparse-gemm/not-a-dir.txt", "x");

	st = store_list(&v, &n, &warn, &err);
	CHECK(st == GO_OK && n == 4, "lists the four readable runs", "st=%d n=%d %s", st, n,
	      err.buf);
	CHECK(n == 4 && !strcmp(v[0].run_id, "20261122-090000-bbbbbb") &&
	      !strcmp(v[1].run_id, "20261121-120000-cccddd") &&
	      !strcmp(v[2].run_id, "20261121-120000-cccccc") &&
	      !strcmp(v[3].run_id, "20261120-100000-aaaaaa"),
	      "newest first; same start time: by run id, newest first", "order %s %s %s %s",
	      n > 0 ? v[0].run_id : "", n > 1 ? v[1].run_id : "", n > 2 ? v[2].run_id : "",
	      n > 3 ? v[3].run_id : "");
	CHECK(n > 0 && v[0].run && !strcmp(json_str(v[0].run, "status"), "complete") &&
	      strstr(v[0].dir, "/attention-wmma/20261122-090000-bbbbbb"),
	      "entries carry the parsed record and directory", "bad");
	CHECK(strstr(warn.buf, "bad000") && strstr(warn.buf, "invalid JSON"),
	      "invalid JSON skipped with a warning", "warnings: %s", warn.buf);
	CHECK(strstr(warn.buf, "arr000") && strstr(warn.buf, "not a run record"),
	      "non-object record skipped with a warning", "warnings: %s", warn.buf);
	CHECK(strstr(warn.buf, "20261122-051000-a1b2c3") && strstr(warn.buf, "no run.json"),
	      "directory without run.json warned about", "warnings: %s", warn.buf);
	store_list_free(v, n);
	strbuf_release(&warn);
	strbuf_release(&err);
}

static void test_find(void)
{
	struct strbuf err = STRBUF_INIT;
	struct store_entry e;
	enum go_status st;

	st = store_find("20261122-090000-bbbbbb", &e, &err);
	CHECK(st == GO_OK && e.run && !strcmp(e.run_id, "20261122-090000-bbbbbb"),
	      "find by exact id", "st=%d %s", st, err.buf);
	store_entry_release(&e);

	st = store_find("20261120", &e, &err);
	CHECK(st == GO_OK && !strcmp(e.run_id, "20261120-100000-aaaaaa"), "find by unique prefix",
	      "st=%d %s", st, err.buf);
	store_entry_release(&e);

	st = store_find("20261121-120000-ccc", &e, &err);
	CHECK(st == GO_ERR_USAGE && strstr(err.buf, "ambiguous") &&
	      strstr(err.buf, "20261121-120000-cccccc") && strstr(err.buf, "20261121-120000-cccddd"),
	      "ambiguous prefix lists the candidates", "st=%d %s", st, err.buf);
	CHECK(!e.run && !e.run_id, "nothing returned on error", "bad");

	st = store_find("1999", &e, &err);
	CHECK(st == GO_ERR_NOT_FOUND && strstr(err.buf, "no run '1999' under") &&
	      strstr(err.buf, "see 'gpuorch runs'"), "unknown id: not found, says what to do",
	      "st=%d %s", st, err.buf);

	st = store_find("20261119-000000-bad000", &e, &err);
	CHECK(st == GO_ERR_IO && strstr(err.buf, "invalid JSON"), "broken record: the reason",
	      "st=%d %s", st, err.buf);

	st = store_find("", &e, &err);
	CHECK(st == GO_ERR_USAGE, "empty id refused", "st=%d", st);
	st = store_find("../x", &e, &err);
	CHECK(st == GO_ERR_USAGE, "id with a slash refused", "st=%d", st);
	strbuf_release(&err);
}

static void test_missing_root(void)
{
	struct strbuf warn = STRBUF_INIT, err = STRBUF_INIT;
	struct store_entry *v = NULL;
	int n = -1;
	char *none = xstrfmt("%s/none", tmp);
	char *file = xstrfmt("%s/sparse-gemm/not-a-dir.txt", tmp);
	enum go_status st;

	store_set_root(none);
	st = store_list(&v, &n, &warn, &err);
	CHECK(st == GO_OK && n == 0, "no reports directory yet: no runs, no error", "st=%d", st);
	store_list_free(v, n);
	store_set_root(file);
	st = store_list(&v, &n, &warn, &err);
	CHECK(st == GO_ERR_IO && strstr(err.buf, "not a directory"),
	      "reports path that is a file: error", "st=%d %s", st, err.buf);
	store_set_root(tmp);
	free(none);
	free(file);
	strbuf_release(&warn);
	strbuf_release(&err);
}

int main(void)
{
	if (!mkdtemp(tmp)) {
		printf("not ok 1 - mkdtemp\n");
		return 1;
	}
	test_ids();
	test_root();
	test_create();
	test_list();
	test_find();
	test_missing_root();
	fs_remove_tree(tmp);
	store_set_root(NULL);
	return check_summary();
}
