/* test_runjournal.c -- the run journal stays linear (issue 31 item 6): a
 * step's save is one line of that step (store/hostdelta.h), not the host's
 * whole object; the unrun steps of an interrupt are one line; replaying the
 * journal rebuilds the record the controller held, whatever was inserted,
 * set or deleted; a journal left from an earlier run.json is ignored; a
 * journal of the earlier format (whole host objects) still reads. The steps
 * are recorded by the host runner's own code (remote/hostrun-steps.c) on a
 * plan made from a spec. */
#include "remote/hostrun-int.h"
#include "spec/plan.h"
#include "spec/spec.h"
#include "store/record.h"
#include "store/runjournal.h"
#include "store/store.h"
#include "core/fsutil.h"
#include "core/jsonutil.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"
#include "core/banned.h"

static char tmp[] = "/tmp/test_runjournal.XXXXXX";

/* A CPU experiment of n problems, one benchmark step each: n steps. */
static struct spec *spec_of(int n)
{
	struct strbuf t = STRBUF_INIT, err = STRBUF_INIT;
	struct spec *s = NULL;
	int i;
	strbuf_addstr(&t, "{\"schema\": 1, \"name\": \"j\", \"phase\": \"p\", \"sources\": [\"c.c\"],"
			  " \"targets\": {\"H100\": \"sm_90a\"},"
			  " \"programs\": {\"c\": {\"sources\": [\"c.c\"], \"needs_gpu\": false}},"
			  " \"problems\": [");
	for (i = 0; i < n; i++)
		strbuf_addf(&t, "%s{\"name\": \"p%05d\", \"params\": {\"work\": %d}}", i ? "," : "",
			    i, 1000 + i);
	strbuf_addstr(&t, "], \"steps\": [{\"kind\": \"benchmark\", \"program\": \"c\"}]}");
	if (spec_parse("j.json", t.buf, t.len, ".", 0, &s, &err) != GO_OK)
		printf("# spec did not parse: %s\n", err.buf);
	strbuf_release(&t);
	strbuf_release(&err);
	return s;
}

static char *const archs[] = { "sm_90a", NULL };

struct rig {
	struct spec *s;
	struct run_ctx ctx;
	struct record rec;
	struct hostrun hr;
	struct host h;
	char *dir;
	volatile sig_atomic_t interrupted;
};

/* A run directory with one host whose plan has n steps; run.json saved whole. */
static void rig_up(struct rig *r, const char *name, int n)
{
	struct plan_host ph;
	struct strbuf err = STRBUF_INIT;
	cJSON *root = cJSON_Parse("{\"status\": \"running\", \"hosts\": [{\"name\": \"h1\", "
				  "\"status\": \"pending\", \"error\": null, \"phases\": [], "
				  "\"builds\": [], \"steps\": []}]}");
	memset(r, 0, sizeof(*r));
	r->s = spec_of(n);
	r->dir = xstrfmt("%s/%s", tmp, name);
	fs_mkdir_p(r->dir, 0755, &err);
	record_init(&r->rec, r->dir, root);
	r->h.name = "h1";
	r->ctx.spec = r->s;
	r->ctx.rec = &r->rec;
	r->ctx.interrupted = &r->interrupted;
	hostrun_init(&r->hr, 0, &r->h, &r->ctx, cJSON_GetArrayItem(cJSON_GetObjectItem(root, "hosts"), 0));
	memset(&ph, 0, sizeof(ph));
	ph.workdir = "/w";
	ph.content_id = "c0ffee";
	ph.run_id = "run1";
	ph.archs = archs;
	ph.narchs = 1;
	ph.run_arch = "sm_90a";
	ph.nvcc = "/usr/local/cuda/bin/nvcc";
	ph.nvcc_version = "13.0";
	plan_make(&r->hr.plan, r->s, &ph);
	r->hr.have_plan = 1;
	r->hr.cur_step = -1;
	CHECK(record_save(&r->rec, &err) == GO_OK, "the run starts: run.json whole", "%s", err.buf);
	strbuf_release(&err);
}

static void rig_down(struct rig *r)
{
	plan_release(&r->hr.plan);
	strbuf_release(&r->hr.out);
	record_release(&r->rec);
	spec_free(r->s);
	free(r->dir);
}

static long long journal_size(const struct rig *r)
{
	struct stat sb;
	char *p = xstrfmt("%s/%s", r->dir, RUNJOURNAL_NAME);
	long long n = stat(p, &sb) == 0 ? (long long)sb.st_size : -1;
	free(p);
	return n;
}

static int journal_lines(const struct rig *r, struct strbuf *text)
{
	struct strbuf err = STRBUF_INIT;
	char *p = xstrfmt("%s/%s", r->dir, RUNJOURNAL_NAME);
	int n = 0;
	size_t i;
	strbuf_reset(text);
	fs_read_file(p, text, &err);
	for (i = 0; i < text->len; i++)
		n += text->buf[i] == '\n';
	free(p);
	strbuf_release(&err);
	return n;
}

/* What a reader sees (run.json + journal) equals what the controller holds. */
static int reads_back_as_held(struct rig *r, struct strbuf *why)
{
	struct strbuf err = STRBUF_INIT;
	cJSON *back = NULL;
	int same;
	if (store_load_record(r->dir, &back, &err) != GO_OK) {
		strbuf_addf(why, "load: %s", err.buf);
		strbuf_release(&err);
		return 0;
	}
	same = cJSON_Compare(cJSON_GetObjectItem(back, "hosts"),
			     cJSON_GetObjectItem(r->rec.root, "hosts"), 1);
	if (!same) {
		char *a = cJSON_PrintUnformatted(cJSON_GetObjectItem(back, "hosts"));
		strbuf_addf(why, "read back: %.300s", a);
		cJSON_free(a);
	}
	cJSON_Delete(back);
	strbuf_release(&err);
	return same;
}

/* Steps 0..n-1 end one at a time, each saved as it ends (hr_step_ended on
 * a step_skipped event: the runner's own record path). */
static void end_steps(struct rig *r, int from, int n)
{
	struct journal_event e;
	int i;
	memset(&e, 0, sizeof(e));
	e.ev = "step_skipped";
	for (i = from; i < from + n; i++)
		hr_step_ended(&r->hr, i, &e);
}

static void linear_tests(void)
{
	struct rig r;
	struct strbuf why = STRBUF_INIT, text = STRBUF_INIT;
	long long at20, at200;

	rig_up(&r, "linear", 200);
	end_steps(&r, 0, 20);
	at20 = journal_size(&r);
	end_steps(&r, 20, 180);
	at200 = journal_size(&r);
	/* a line per step of about one step's size: 10 times the steps, about 10
	 * times the bytes (the whole host each time would be ~100 times) */
	CHECK(at20 > 0 && at200 < 12 * at20, "200 steps journal at most 12 times the bytes of 20",
	      "%lld bytes at 20 steps, %lld at 200 (%.1f times)", at20, at200,
	      at20 > 0 ? (double)at200 / (double)at20 : 0.0);
	CHECK(journal_lines(&r, &text) == 201 && !strncmp(text.buf, "{\"ev\":\"base\",", 13),
	      "a base line, then one line per step", "%d lines: '%.80s'", journal_lines(&r, &text),
	      text.buf);
	CHECK(reads_back_as_held(&r, &why), "run.json plus the journal is the record as held",
	      "%s", why.buf);
	rig_down(&r);
	strbuf_release(&why);
	strbuf_release(&text);
}

static void interrupt_tests(void)
{
	struct rig r;
	struct strbuf why = STRBUF_INIT, text = STRBUF_INIT;
	int before;

	rig_up(&r, "interrupt", 50);
	end_steps(&r, 0, 3);
	before = journal_lines(&r, &text);
	/* the run is interrupted while step 3 runs: it and the 46 after it */
	r.hr.cur_step = 3;
	r.hr.cur_started_t = 1.5;
	hr_steps_flush(&r.hr, "interrupted", "not run: the run was interrupted");
	CHECK(journal_lines(&r, &text) == before + 1, "the 47 unrun steps are one journal line",
	      "%d lines before, %d after", before, journal_lines(&r, &text));
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(r.hr.hj, "steps")) == 50 &&
	      reads_back_as_held(&r, &why), "and the record reads back with all 50 steps", "%s",
	      why.buf);
	hostrun_status(&r.hr, HOST_FAILED, "interrupted");
	CHECK(reads_back_as_held(&r, &why), "a status change after them reads back too", "%s",
	      why.buf);
	rig_down(&r);
	strbuf_release(&why);
	strbuf_release(&text);
}

/* Inserts in the middle (the Slurm runner records steps in plan order as
 * jobs end in any order), keys set and deleted, an item removed. */
static void replay_tests(void)
{
	struct rig r;
	struct strbuf why = STRBUF_INIT, err = STRBUF_INIT, text = STRBUF_INIT, old = STRBUF_INIT;
	cJSON *steps, *hj;
	char *jpath;
	int fd;

	rig_up(&r, "replay", 4);
	hj = cJSON_GetArrayItem(cJSON_GetObjectItem(r.rec.root, "hosts"), 0);   /* the test writes it itself */
	steps = cJSON_GetObjectItem(hj, "steps");
	cJSON_AddItemToArray(steps, cJSON_CreateString("s3"));
	hostrun_save(&r.hr);
	json_array_insert(steps, 0, cJSON_CreateString("s0"));
	json_array_insert(steps, 1, cJSON_CreateString("s2"));
	hostrun_save(&r.hr);
	json_array_insert(steps, 1, cJSON_CreateString("s1"));
	cJSON_AddItemToArray(steps, cJSON_CreateString("s4"));
	hostrun_save(&r.hr);
	CHECK(reads_back_as_held(&r, &why), "inserts anywhere in an array replay in place", "%s",
	      why.buf);
	cJSON_AddItemToObject(hj, "scheduler", cJSON_CreateObject());
	cJSON_DeleteItemFromObject(hj, "error");
	hostrun_save(&r.hr);
	CHECK(reads_back_as_held(&r, &why), "a key added and a key deleted replay", "%s", why.buf);
	cJSON_DeleteItemFromArray(steps, 2);
	hostrun_save(&r.hr);
	CHECK(reads_back_as_held(&r, &why), "an item gone: the array is journaled whole", "%s",
	      why.buf);

	/* killed between writing run.json whole and emptying the journal: the
	 * old journal is left beside the new run.json, and must not apply again
	 * (its insert would be there twice) */
	jpath = xstrfmt("%s/%s", r.dir, RUNJOURNAL_NAME);
	CHECK(record_save(&r.rec, &err) == GO_OK, "a whole save", "%s", err.buf);
	cJSON_AddItemToArray(steps, cJSON_CreateString("s6"));
	hostrun_save(&r.hr);
	fs_read_file(jpath, &old, &err);
	CHECK(record_save(&r.rec, &err) == GO_OK, "another whole save", "%s", err.buf);
	fd = open(jpath, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0 && write(fd, old.buf, old.len) == (ssize_t)old.len,
	      "the journal from before it put back", "fd %d", fd);
	if (fd >= 0)
		close(fd);
	CHECK(reads_back_as_held(&r, &why), "a journal of an earlier run.json is ignored", "%s",
	      why.buf);
	/* the journal could not be emptied: the next lines follow the stale ones */
	cJSON_AddItemToArray(steps, cJSON_CreateString("s5"));
	r.rec.based = 0;
	hostrun_save(&r.hr);
	CHECK(reads_back_as_held(&r, &why),
	      "lines after a new base apply, those before it (an earlier run.json's) do not", "%s",
	      why.buf);

	/* the earlier format: a host's whole object per line, the last one wins */
	fd = open(jpath, O_WRONLY | O_TRUNC);
	strbuf_reset(&text);
	strbuf_addstr(&text, "{\"ev\":\"host\",\"host\":0,\"at\":1,\"record\":{\"name\":\"h1\",\"steps\":[1]}}\n"
			     "{\"ev\":\"host\",\"host\":0,\"at\":2,\"record\":{\"name\":\"h1\",\"steps\":[1,2]}}\n");
	CHECK(fd >= 0 && write(fd, text.buf, text.len) == (ssize_t)text.len, "an earlier-format journal",
	      "fd %d", fd);
	if (fd >= 0)
		close(fd);
	{
		cJSON *back = NULL;
		CHECK(store_load_record(r.dir, &back, &err) == GO_OK &&
		      cJSON_GetArraySize(json_path(back, "hosts.0.steps")) == 2,
		      "an earlier-format journal still applies (last line per host)", "%s", err.buf);
		cJSON_Delete(back);
	}
	free(jpath);
	rig_down(&r);
	strbuf_release(&why);
	strbuf_release(&err);
	strbuf_release(&text);
	strbuf_release(&old);
}

/* Appends the record is told of (record_host_append, as record_step does)
 * are journaled without walking the array; an item nobody told of at either
 * end sends the diff back to the walk; one in the middle, which the ends
 * cannot show, is caught by GPUORCH_CHECK_DELTA (set in main). */
static void told_tests(void)
{
	struct rig r;
	struct strbuf why = STRBUF_INIT;
	cJSON *steps, *hj;
	pid_t pid;
	int status = 0;

	rig_up(&r, "told", 4);
	hj = cJSON_GetArrayItem(cJSON_GetObjectItem(r.rec.root, "hosts"), 0);   /* the test writes it itself */
	steps = cJSON_GetObjectItem(hj, "steps");
	record_host_append(&r.rec, 0, hj, "steps", cJSON_CreateString("t0"));
	hostrun_save(&r.hr);
	record_host_append(&r.rec, 0, hj, "steps", cJSON_CreateString("t1"));
	record_host_append(&r.rec, 0, hj, "steps", cJSON_CreateString("t2"));
	hostrun_save(&r.hr);
	CHECK(reads_back_as_held(&r, &why), "told appends, one and two at a save, replay in order",
	      "%s", why.buf);
	record_host_append(&r.rec, 0, hj, "steps", cJSON_CreateString("t3"));
	cJSON_AddItemToArray(steps, cJSON_CreateString("u4"));
	hostrun_save(&r.hr);
	CHECK(reads_back_as_held(&r, &why), "an untold item after a told one: the walk finds both",
	      "%s", why.buf);
	json_array_insert(steps, 0, cJSON_CreateString("u0"));
	record_host_append(&r.rec, 0, hj, "steps", cJSON_CreateString("t5"));
	hostrun_save(&r.hr);
	CHECK(reads_back_as_held(&r, &why), "an untold item at the front: the walk finds it too",
	      "%s", why.buf);
	hostrun_save(&r.hr);
	CHECK(reads_back_as_held(&r, &why) && cJSON_GetArraySize(steps) == 7,
	      "a save with nothing new changes nothing", "%s", why.buf);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {   /* the ends as told, an untold item in the middle */
		json_array_insert(steps, 3, cJSON_CreateString("u-mid"));
		record_host_append(&r.rec, 0, hj, "steps", cJSON_CreateString("t6"));
		hostrun_save(&r.hr);
		_exit(0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) &&
	      WTERMSIG(status) == SIGABRT,
	      "an untold item in the middle, the ends as told: GPUORCH_CHECK_DELTA ends the process",
	      "wait status %d", status);
	strbuf_release(&why);
	rig_down(&r);
}

int main(void)
{
	setenv("GPUORCH_CHECK_DELTA", "1", 1);
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	linear_tests();
	interrupt_tests();
	replay_tests();
	told_tests();
	fs_remove_tree(tmp);
	return check_summary();
}
