/* test_journal.c -- unit tests of hostjournal.c: whole, byte-by-byte and torn
 * feeds give the same events at the same offsets, a torn line closed by a
 * restarted runner is skipped, an item's repeated end event is delivered
 * once, a callback can stop and resume, a file is read from an offset. */
#include "remote/hostjournal.h"
#include "core/fsutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "core/banned.h"

static const char good[] =
	"{\"t\":1.5,\"ev\":\"runner_started\",\"pid\":7,\"restart\":false}\n"
	"{\"t\":2,\"ev\":\"build_end\",\"id\":\"k1\",\"status\":\"exited\",\"rc\":0,"
	"\"stderr_text\":\"ptxas info : Used 10 registers\\n\\u0001\"}\n"
	"{\"t\":3,\"ev\":\"step_started\",\"id\":\"s1\"}\n"
	"{\"t\":4,\"ev\":\"step_end\",\"id\":\"s1\",\"status\":\"exited\",\"rc\":0}\n"
	"{\"t\":5,\"ev\":\"runner_ended\",\"status\":\"done\"}\n";

struct seen {
	struct strbuf log;    /* "ev:id@offset-next\n" per event */
	int n;
	int stop_at;          /* stop after this many events (0: never) */
};

static int collect(const struct journal_event *e, void *ctx)
{
	struct seen *s = ctx;
	strbuf_addf(&s->log, "%s:%s@%llu-%llu\n", e->ev, e->id ? e->id : "-",
		    (unsigned long long)e->offset, (unsigned long long)e->next);
	s->n++;
	return s->stop_at && s->n == s->stop_at;
}

static void feed_all(struct journal *j, const char *text, size_t len, size_t chunk,
		     struct seen *s)
{
	struct strbuf err = STRBUF_INIT;
	size_t at = 0;
	while (at < len) {
		size_t n = len - at < chunk ? len - at : chunk;
		if (journal_feed(j, text + at, n, collect, s, &err) != GO_OK)
			printf("# feed: %s\n", err.buf);
		at += n;
	}
	strbuf_release(&err);
}

static void test_whole_and_bytewise(void)
{
	struct journal j1, j2;
	struct seen a = { STRBUF_INIT, 0, 0 }, b = { STRBUF_INIT, 0, 0 };
	const char *sl = strstr(good, "\n{\"t\":4") + 1;

	journal_init(&j1, 0);
	journal_init(&j2, 0);
	feed_all(&j1, good, strlen(good), strlen(good), &a);
	feed_all(&j2, good, strlen(good), 1, &b);
	CHECK(a.n == 5 && j1.offset == strlen(good) && j1.pending.len == 0 && j1.nbad == 0,
	      "a whole journal gives 5 events and ends at its length",
	      "n=%d offset=%llu bad=%d", a.n, (unsigned long long)j1.offset, j1.nbad);
	CHECK(!strcmp(a.log.buf, b.log.buf), "fed a byte at a time: the same events at the same offsets",
	      "\n%s---\n%s", a.log.buf, b.log.buf);
	CHECK(j1.ended && j1.end_status && !strcmp(j1.end_status, "done"),
	      "runner_ended and its status are kept", "ended=%d", j1.ended);
	{
		char want[64];
		snprintf(want, sizeof(want), "step_end:s1@%zu-", (size_t)(sl - good));
		CHECK(strstr(a.log.buf, want) != NULL, "an event's offset is its line's first byte",
		      "want '%s' in\n%s", want, a.log.buf);
	}
	journal_release(&j1);
	journal_release(&j2);
	strbuf_release(&a.log);
	strbuf_release(&b.log);
}

static void test_torn_resume(void)
{
	struct journal j, whole;
	struct seen a = { STRBUF_INIT, 0, 0 }, w = { STRBUF_INIT, 0, 0 };
	size_t cut = (size_t)(strstr(good, "\"ev\":\"step_end\"") - good);
	size_t line = (size_t)(strstr(good, "{\"t\":4") - good);

	journal_init(&whole, 0);
	feed_all(&whole, good, strlen(good), strlen(good), &w);
	/* the link drops in the middle of the step_end line */
	journal_init(&j, 0);
	feed_all(&j, good, cut, 7, &a);
	CHECK(a.n == 3 && j.offset == line && j.pending.len == cut - line,
	      "a torn last line is not delivered; the offset stays at its start",
	      "n=%d offset=%llu pending=%zu", a.n, (unsigned long long)j.offset, j.pending.len);
	journal_resync(&j);
	/* reconnected: the journal again from j.offset */
	feed_all(&j, good + j.offset, strlen(good) - (size_t)j.offset, 5, &a);
	CHECK(!strcmp(a.log.buf, w.log.buf) && j.offset == strlen(good) && j.nbad == 0,
	      "resumed at the offset: every event exactly once, as from one read",
	      "\n%s---\n%s", a.log.buf, w.log.buf);
	journal_release(&j);
	journal_release(&whole);
	strbuf_release(&a.log);
	strbuf_release(&w.log);
}

static void test_bad_and_dup(void)
{
	/* a runner killed mid-write, restarted: it closes the torn line and
	 * journals the step's end again */
	static const char text[] =
		"{\"t\":1,\"ev\":\"runner_started\"}\n"
		"{\"t\":2,\"ev\":\"step_end\",\"id\":\"s1\",\"status\":\"exi\n"
		"{\"t\":3,\"ev\":\"runner_started\",\"restart\":true}\n"
		"{\"t\":4,\"ev\":\"step_end\",\"id\":\"s1\",\"status\":\"exited\",\"rc\":0}\n"
		"{\"t\":5,\"ev\":\"step_end\",\"id\":\"s1\",\"status\":\"exited\",\"rc\":0}\n"
		"{\"t\":6,\"ev\":\"build_end\",\"id\":\"s1\",\"status\":\"exited\",\"rc\":0}\n"
		"[1,2]\n"
		"{\"ev\":\"step_end\",\"id\":\"s2\"}\n";
	struct journal j;
	struct seen a = { STRBUF_INIT, 0, 0 };

	journal_init(&j, 0);
	feed_all(&j, text, strlen(text), 10, &a);
	CHECK(j.nbad == 3 && j.last_bad && strstr(j.last_bad, "\"t\""),
	      "a torn line, an array and an event without t are skipped and counted",
	      "bad=%d last=%s", j.nbad, j.last_bad ? j.last_bad : "-");
	CHECK(a.n == 4 && j.ndup == 1 && strstr(a.log.buf, "step_end:s1@") &&
	      strstr(a.log.buf, "build_end:s1@"),
	      "a step's repeated end is delivered once; a build of the same id is another item",
	      "n=%d dup=%d\n%s", a.n, j.ndup, a.log.buf);
	CHECK(!j.ended && j.offset == strlen(text), "no runner_ended: the runner did not end",
	      "ended=%d", j.ended);
	journal_release(&j);
	strbuf_release(&a.log);
}

static void test_stop_and_file(void)
{
	char path[] = "/tmp/gpuorch-test-journal.XXXXXX";
	struct journal j;
	struct seen a = { STRBUF_INIT, 0, 2 }, b = { STRBUF_INIT, 0, 0 };
	struct strbuf err = STRBUF_INIT;
	size_t second_end = (size_t)(strstr(good, "{\"t\":3") - good);
	int fd = mkstemp(path);
	enum go_status st;

	if (fd < 0 || write(fd, good, strlen(good)) != (ssize_t)strlen(good))
		printf("# cannot write %s\n", path);
	if (fd >= 0)
		close(fd);
	journal_init(&j, 0);
	st = journal_read_file(&j, path, collect, &a, &err);
	CHECK(st == GO_OK && a.n == 2 && j.offset == second_end,
	      "a callback that stops leaves the offset just past its event",
	      "st=%d n=%d offset=%llu want %zu", st, a.n, (unsigned long long)j.offset, second_end);
	st = journal_read_file(&j, path, collect, &b, &err);
	CHECK(st == GO_OK && b.n == 3 && strstr(b.log.buf, "step_started:s1@") == b.log.buf &&
	      j.ended, "reading the file again from that offset gives the rest",
	      "st=%d n=%d\n%s", st, b.n, b.log.buf);
	unlink(path);
	st = journal_read_file(&j, path, collect, &b, &err);
	CHECK(st == GO_ERR_NOT_FOUND && strstr(err.buf, path), "a missing journal file is a clear error",
	      "st=%d %s", st, err.buf);
	journal_release(&j);
	strbuf_release(&a.log);
	strbuf_release(&b.log);
	strbuf_release(&err);
}

int main(void)
{
	test_whole_and_bytewise();
	test_torn_resume();
	test_bad_and_dup();
	test_stop_and_file();
	return check_summary();
}
