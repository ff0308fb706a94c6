/* test_record.c -- unit tests of store/record.c (saving the record) and report/runsum.c (the per-run summary). */
#include "store/record.h"
#include "store/store.h"
#include "report/runsum.h"
#include "core/fsutil.h"
#include "core/jsonutil.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "check.h"
#include "core/banned.h"

static char tmp[] = "/tmp/test_record.XXXXXX";

static const char run_text[] =
	"{\"schema\": \"gpuorch.run/1\", \"run_id\": \"R1\", \"started_at\": \"2026-01-01T00:00:00Z\","
	" \"status\": \"complete\", \"outcome\": \"passed\", \"exit_code\": 0,"
	" \"experiment\": {\"name\": \"exp one\", \"slug\": \"exp-one\", \"spec\": {\"big\": \"spec\"}},"
	" \"provenance\": {\"content_id\": \"abc\", \"git\": {\"commit\": \"c0ffee\", \"dirty\": false},"
	"                 \"files\": [{\"path\": \"a.cu\"}]},"
	" \"hosts\": [{\"name\": \"h1\", \"status\": \"ok\", \"info\": {\"gpu_name\": \"NVIDIA H100\", \"probe\": \"x\"},"
	"   \"builds\": [{\"program\": \"k\", \"log\": \"a long log\"}],"
	"   \"steps\": [{\"id\": \"benchmark.k.P\", \"kind\": \"benchmark\", \"program\": \"k\", \"problem\": \"P\","
	"               \"status\": \"PASS\", \"command\": \"./k --bench\","
	"               \"result\": {\"status\": \"pass\", \"timing\": {\"median_us\": 41.3,"
	"                 \"samples_us\": [41.3, 0.1, 1e-300, 123456789.123456789, 41.29999999999999]},"
	"                 \"model\": {\"tflops\": 7.5, \"impossible\": false}}},"
	"              {\"id\": \"sanitize.k.P\", \"kind\": \"sanitize\", \"program\": \"k\", \"status\": \"PASS\"},"
	"              {\"id\": \"correctness.k.P\", \"kind\": \"correctness\", \"program\": \"k\", \"problem\": \"P\","
	"               \"status\": \"FAIL\", \"reason\": \"max_abs 1 > 0.01\","
	"               \"result\": {\"correctness\": {\"trials\": [1, 2, 3]}}}]}]}";

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;
	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

static void record_tests(void)
{
	struct record r;
	struct strbuf err = STRBUF_INIT, sb = STRBUF_INIT;
	char *dir = xstrfmt("%s/run", tmp), *path;
	cJSON *back = NULL;

	fs_mkdir_p(dir, 0755, &err);
	record_init(&r, dir, cJSON_Parse("{\"status\": \"running\"}"));
	CHECK(record_save(&r, &err) == GO_OK, "record_save writes run.json", "%s", err.buf);
	path = xstrfmt("%s/run.json", dir);
	CHECK(json_load_file(path, &back, GO_ERR_IO, &err) == GO_OK &&
	      !strcmp(json_str(back, "status"), "running"), "run.json reads back whole", "%s", err.buf);
	cJSON_Delete(back);
	back = NULL;
	record_lock(&r);
	cJSON_ReplaceItemInObject(r.root, "status", cJSON_CreateString("complete"));
	record_unlock(&r);
	CHECK(record_save(&r, &err) == GO_OK && json_load_file(path, &back, GO_ERR_IO, &err) == GO_OK &&
	      !strcmp(json_str(back, "status"), "complete"), "a second save replaces it", "%s", err.buf);
	cJSON_Delete(back);
	CHECK(record_write_file(&r, "logs/h1/step.log", "hello\n", 6, &err) == GO_OK,
	      "record_write_file makes the folders it needs", "%s", err.buf);
	free(path);
	path = xstrfmt("%s/logs/h1/step.log", dir);
	CHECK(fs_read_file(path, &sb, &err) == GO_OK && !strcmp(sb.buf, "hello\n"), "the file holds the bytes",
	      "'%s'", sb.buf);
	free(path);
	path = xstrfmt("%s/logs/h1", dir);
	/* no temporary file is left beside what was written (run.json, logs/, the open journal) */
	CHECK(entries(path) == 1 && entries(dir) == 3,
	      "nothing half-written is left beside run.json or the log", "%d in logs/h1, %d in the run",
	      entries(path), entries(dir));
	free(path);
	record_release(&r);
	CHECK(entries(dir) == 2, "a finished record keeps no journal (it was empty)", "%d entries", entries(dir));
	free(dir);
	strbuf_release(&err);
	strbuf_release(&sb);
}

/* The journal: host saves append a line each, readers apply them, a whole save empties it. */
static void journal_tests(void)
{
	struct record r;
	struct strbuf err = STRBUF_INIT, sb = STRBUF_INIT;
	char *dir = xstrfmt("%s/jrun", tmp), *jpath = xstrfmt("%s/jrun/journal.jsonl", tmp);
	cJSON *back = NULL, *h0, *h1;
	int fd;

	fs_mkdir_p(dir, 0755, &err);
	record_init(&r, dir, cJSON_Parse("{\"status\": \"running\", \"hosts\": [{\"name\": \"a\", \"phases\": []},"
					  " {\"name\": \"b\", \"phases\": []}]}"));
	CHECK(record_save(&r, &err) == GO_OK, "the start: run.json whole", "%s", err.buf);
	h0 = cJSON_GetArrayItem(cJSON_GetObjectItem(r.root, "hosts"), 0);
	h1 = cJSON_GetArrayItem(cJSON_GetObjectItem(r.root, "hosts"), 1);
	cJSON_AddItemToArray(cJSON_GetObjectItem(h0, "phases"), cJSON_CreateString("connect"));
	CHECK(record_save_host(&r, 0, h0, &err) == GO_OK, "a host save", "%s", err.buf);
	cJSON_AddItemToArray(cJSON_GetObjectItem(h1, "phases"), cJSON_CreateString("connect"));
	CHECK(record_save_host(&r, 1, h1, &err) == GO_OK, "another host's save", "%s", err.buf);
	cJSON_AddItemToArray(cJSON_GetObjectItem(h0, "phases"), cJSON_CreateString("build"));
	CHECK(record_save_host(&r, 0, h0, &err) == GO_OK, "the first host again", "%s", err.buf);
	strbuf_reset(&sb);
	CHECK(fs_read_file(jpath, &sb, &err) == GO_OK && sb.len > 0 && sb.buf[sb.len - 1] == '\n' &&
	      strstr(sb.buf, "{\"ev\":\"base\",") == sb.buf && strchr(sb.buf, '\n') &&
	      strstr(strchr(sb.buf, '\n') + 1, "{\"ev\":\"host\",\"host\":0,") == strchr(sb.buf, '\n') + 1,
	      "a base line, then three whole lines, the first of host 0", "'%.60s'", sb.buf);
	CHECK(store_load_record(dir, &back, &err) == GO_OK &&
	      cJSON_GetArraySize(json_path(back, "hosts.0.phases")) == 2 &&
	      cJSON_GetArraySize(json_path(back, "hosts.1.phases")) == 1,
	      "a reader sees run.json plus the journal: the last line of each host wins", "%s", err.buf);
	cJSON_Delete(back);
	back = NULL;
	/* a line cut by a crash, and lines that are not ours, are skipped */
	fd = open(jpath, O_WRONLY | O_APPEND);
	CHECK(fd >= 0 && write(fd, "{\"ev\":\"host\",\"host\":9,\"record\":{}}\n{\"ev\":\"host\",\"host\":1,\"rec", 50) == 50,
	      "a torn and an out-of-range line appended", "fd %d", fd);
	if (fd >= 0)
		close(fd);
	CHECK(store_load_record(dir, &back, &err) == GO_OK &&
	      cJSON_GetArraySize(json_path(back, "hosts.1.phases")) == 1 &&
	      cJSON_GetArraySize(cJSON_GetObjectItem(back, "hosts")) == 2,
	      "the torn line and the unknown host are ignored", "%s", err.buf);
	cJSON_Delete(back);
	back = NULL;
	CHECK(record_save(&r, &err) == GO_OK && fs_read_file(jpath, &sb, &err) == GO_OK,
	      "the end: run.json whole again", "%s", err.buf);
	strbuf_reset(&sb);
	CHECK(fs_read_file(jpath, &sb, &err) == GO_OK && sb.len == 0, "the journal is emptied by a whole save",
	      "%zu bytes", sb.len);
	CHECK(store_load_record(dir, &back, &err) == GO_OK &&
	      cJSON_GetArraySize(json_path(back, "hosts.0.phases")) == 2,
	      "run.json alone now holds every phase", "%s", err.buf);
	cJSON_Delete(back);
	record_release(&r);
	CHECK(access(jpath, F_OK) != 0, "and the empty journal is gone once the record is released", "%s", jpath);
	free(dir);
	free(jpath);
	strbuf_release(&err);
	strbuf_release(&sb);
}

static void summary_tests(void)
{
	struct strbuf err = STRBUF_INIT, samples = STRBUF_INIT;
	char *dir = xstrfmt("%s/reports/exp-one/R1", tmp), *path = xstrfmt("%s/run.json", dir);
	cJSON *run = cJSON_Parse(run_text), *sum = NULL, *s2 = NULL;
	const cJSON *step, *at;
	double *v = NULL;
	int n = 0;

	fs_mkdir_p(dir, 0755, &err);
	fs_write_atomic(path, run_text, strlen(run_text), &err);

	sum = runsum_build(run, &samples);
	step = json_path(sum, "hosts.0.steps.0");
	CHECK(!strcmp(json_str(sum, "schema"), RUNSUM_SCHEMA) && !strcmp(json_str(sum, "run_id"), "R1") &&
	      !strcmp(json_str(json_path(sum, "experiment"), "slug"), "exp-one") &&
	      !strcmp(json_str(json_path(sum, "provenance.git"), "commit"), "c0ffee"),
	      "the summary keeps the run's identity and provenance", "%s", json_str(sum, "run_id"));
	CHECK(json_str(sum, "headline") && strstr(json_str(sum, "headline"), "41.30 us"),
	      "the headline is computed from the whole record", "'%s'", json_str(sum, "headline"));
	CHECK(cJSON_GetArraySize(json_path(sum, "hosts.0.steps")) == 2 &&
	      !strcmp(json_str(json_path(sum, "hosts.0.steps.1"), "kind"), "correctness") &&
	      !strcmp(json_str(json_path(sum, "hosts.0.steps.1"), "reason"), "max_abs 1 > 0.01"),
	      "benchmark and correctness steps only, with status and reason", "n=%d",
	      cJSON_GetArraySize(json_path(sum, "hosts.0.steps")));
	CHECK(!json_path(step, "command") && !json_path(step, "result.timing.samples_us") &&
	      !json_path(sum, "hosts.0.builds") && !json_path(sum, "experiment.spec") &&
	      !json_path(sum, "provenance.files") && !json_path(sum, "hosts.0.steps.1.result.correctness"),
	      "no samples, commands, logs, builds or spec in it", "something bulky stayed");
	CHECK(json_num(json_path(step, "result.timing"), "median_us", 0) == 41.3 &&
	      json_num(json_path(step, "result.model"), "tflops", 0) == 7.5 &&
	      json_num(json_path(step, "result.timing"), "samples_n", 0) == 5,
	      "the figures stay, and how many samples there are", "median %g",
	      json_num(json_path(step, "result.timing"), "median_us", 0));
	/* ascending (history reads them sorted: report/runsum.c) */
	CHECK(!strcmp(samples.buf, "1e-300 0.1 41.29999999999999 41.3 123456789.12345679\n"),
	      "samples.txt: each double in the fewest digits that read back as it (15, 16, 17), ascending",
	      "'%s'", samples.buf);
	cJSON_Delete(sum);
	strbuf_release(&samples);

	CHECK(runsum_write(dir, run, &err) == GO_OK, "runsum_write", "%s", err.buf);
	CHECK(runsum_load(dir, &sum, &err) == GO_OK && json_path(sum, "of.mtime_ns") &&
	      json_path(sum, "hosts.0.steps.0.result.timing.samples_at"),
	      "a current summary.json is what loads", "%s", err.buf);
	at = json_path(sum, "hosts.0.steps.0.result.timing.samples_at");
	CHECK(runsum_read_samples(dir, at, &v, &n) && n == 5 && v[0] == 1e-300 && v[1] == 0.1 &&
	      v[2] == 41.29999999999999 && v[3] == 41.3 && v[4] == 123456789.123456789,
	      "samples.txt gives back the very same doubles, ascending", "n=%d", n);
	free(v);
	cJSON_Delete(sum);
	sum = NULL;

	/* run.json changed after the summary: it is stale, run.json is read */
	{
		struct timespec ts[2] = { { 0, UTIME_OMIT }, { time(NULL) + 5, 0 } };
		char *edited = xstrdup(run_text);
		memcpy(strstr(edited, "\"passed\""), "\"failed\"", 8);
		fs_write_atomic(path, edited, strlen(edited), &err);
		utimensat(AT_FDCWD, path, ts, 0);
		free(edited);
	}
	CHECK(runsum_load(dir, &sum, &err) == GO_OK && !strcmp(json_str(sum, "outcome"), "failed") &&
	      json_path(sum, "of") && json_path(sum, "hosts.0.steps.0.result.timing.samples_at"),
	      "a stale summary is not used: built from run.json and written again (samples in samples.txt)",
	      "outcome %s", sum ? json_str(sum, "outcome") : "?");
	cJSON_Delete(sum);
	sum = NULL;
	{
		/* what was written is current: of.size is run.json's new size */
		char *sp = xstrfmt("%s/summary.json", dir);
		struct stat rs;
		cJSON *w = NULL;
		CHECK(json_load_file(sp, &w, GO_ERR_IO, &err) == GO_OK && stat(path, &rs) == 0 &&
		      json_num(json_path(w, "of"), "size", -1) == (double)rs.st_size &&
		      !strcmp(json_str(w, "outcome"), "failed"),
		      "the summary written is of run.json as it is now", "%s", err.buf);
		cJSON_Delete(w);
		/* a summary that cannot be written (a directory in its place): built
		 * in memory, samples inline, and still loads */
		unlink(sp);
		mkdir(sp, 0700);
		CHECK(runsum_load(dir, &sum, &err) == GO_OK && !strcmp(json_str(sum, "run_id"), "R1") &&
		      !json_path(sum, "of") &&
		      cJSON_GetArraySize(json_path(sum, "hosts.0.steps.0.result.timing.samples_us")) == 5,
		      "an unwritable summary: built in memory, samples inline", "%s", err.buf);
		cJSON_Delete(sum);
		sum = NULL;
		rmdir(sp);
		unlink(sp);
		free(sp);
	}
	CHECK(runsum_load(dir, &sum, &err) == GO_OK && !strcmp(json_str(sum, "run_id"), "R1"),
	      "no summary at all: still loads", "%s", err.buf);
	cJSON_Delete(sum);
	sum = NULL;

	CHECK(runsum_refresh(dir, &s2, &err) == GO_OK && runsum_load(dir, &sum, &err) == GO_OK &&
	      json_path(sum, "of") && !strcmp(json_str(sum, "outcome"), "failed"),
	      "runsum_refresh writes a current summary again", "%s", err.buf);
	cJSON_Delete(sum);
	cJSON_Delete(s2);
	sum = NULL;
	{
		struct store_entry *e = NULL;
		int ne = 0;
		char *root = xstrfmt("%s/reports", tmp);
		store_set_root(root);
		CHECK(runsum_list(&e, &ne, NULL, &err) == GO_OK && ne == 1 &&
		      !strcmp(json_str(e[0].run, "schema"), RUNSUM_SCHEMA),
		      "runsum_list lists summaries", "n=%d", ne);
		store_list_free(e, ne);
		free(root);
	}
	CHECK(!runsum_read_samples(dir, NULL, &v, &n) && !v && !n, "no samples_at: no samples", "n=%d", n);
	{
		cJSON *bad = cJSON_Parse("[1e9, 10]");
		CHECK(!runsum_read_samples(dir, bad, &v, &n) && !v, "an offset beyond the file reads nothing",
		      "n=%d", n);
		cJSON_Delete(bad);
	}
	cJSON_Delete(run);
	free(dir);
	free(path);
	strbuf_release(&err);
}

int main(void)
{
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	record_tests();
	journal_tests();
	summary_tests();
	fs_remove_tree(tmp);
	return check_summary();
}
