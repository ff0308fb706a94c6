/* test_diskspace.c -- unit tests of diskspace.c (issue 31, item 10): a build
 * or step whose output says the disk was full is named "no space left on
 * device" with the line that says so (not ld's "collect2: error"), others
 * keep their reason; the estimate of what a run needs, at its edges. */
#include "remote/diskspace.h"

#include <string.h>
#include "check.h"
#include "core/banned.h"

static const char ld_full[] =
	"/usr/bin/ld: final link failed: No space left on device\n"
	"collect2: error: ld returned 1 exit status\n";

int main(void)
{
	struct strbuf r = STRBUF_INIT;
	struct plan p;
	struct plan_build b[3];
	struct plan_step st[2];
	struct pack_file f[2];
	struct pack pk;
	long long s, bu, o, need;

	CHECK(disk_full_in(ld_full), "ld's ENOSPC is a full disk", "no");
	CHECK(disk_full_in("write error: Disk quota exceeded"), "EDQUOT is a full disk", "no");
	CHECK(!disk_full_in("collect2: error: ld returned 1 exit status\n"),
	      "ld's symptom alone is not", "yes");
	CHECK(!disk_full_in("no space left on device"), "the lower-case words a program might print "
	      "are not strerror's", "yes");
	CHECK(!disk_full_in(NULL) && !disk_full_in(""), "no text, no full disk", "yes");

	strbuf_addstr(&r, "collect2: error: ld returned 1 exit status");
	CHECK(disk_full_reason(&r, ld_full, NULL, -1) == 1, "a full disk rewrites the reason", "0");
	CHECK(!strcmp(r.buf, "no space left on device on the host: /usr/bin/ld: final link failed: "
			     "No space left on device"),
	      "the reason names the cause and the line that says so", "'%s'", r.buf);
	strbuf_reset(&r);
	strbuf_addstr(&r, "exit code 1");
	CHECK(disk_full_reason(&r, "", "cp: error writing 'x': No space left on device", 9999) == 1 &&
	      !strcmp(r.buf, "no space left on device on the host: cp: error writing 'x': No space "
			     "left on device"),
	      "found on stdout when stderr has nothing", "'%s'", r.buf);
	strbuf_reset(&r);
	strbuf_addstr(&r, "exit code 1");
	CHECK(disk_full_reason(&r, "segfault\n", "bad result\n", -1) == 0 && !strcmp(r.buf, "exit code 1"),
	      "another failure keeps its reason", "'%s'", r.buf);
	strbuf_reset(&r);
	strbuf_addstr(&r, "exit code 1");
	CHECK(disk_full_reason(&r, "No space left on device", NULL, 0) == 1 &&
	      !strcmp(r.buf, "no space left on device on the host: No space left on device"),
	      "a message with no newline, at the start of the text", "'%s'", r.buf);

	strbuf_reset(&r);
	strbuf_addstr(&r, "exit code 1");
	CHECK(disk_full_reason(&r, "segfault\n", NULL, DISK_FULL_KIB) == 0 &&
	      !strcmp(r.buf, "exit code 1"), "DISK_FULL_KIB free at the end is not full", "'%s'", r.buf);
	CHECK(disk_full_reason(&r, "collect2: error: ld returned 1 exit status\n", NULL,
			       DISK_FULL_KIB - 1) == 1 &&
	      !strcmp(r.buf, "no space left on device on the host: 255 KiB free in its file system "
			     "when it ended (exit code 1)"),
	      "one KiB less is: the message lost on the full disk, the old reason kept", "'%s'",
	      r.buf);
	strbuf_reset(&r);
	CHECK(disk_full_reason(&r, NULL, NULL, 0) == 1 &&
	      !strcmp(r.buf, "no space left on device on the host: 0 KiB free in its file system "
			     "when it ended"),
	      "no old reason: none in parentheses", "'%s'", r.buf);

	memset(&p, 0, sizeof(p));
	memset(b, 0, sizeof(b));
	memset(st, 0, sizeof(st));
	memset(f, 0, sizeof(f));
	memset(&pk, 0, sizeof(pk));
	need = disk_need_kib(&p, &pk, &s, &bu, &o);
	CHECK(need == 0 && s == 0 && bu == 0 && o == 0, "an empty plan needs nothing", "%lld", need);
	f[0].size = 1;        /* rounds up to 1 KiB */
	f[1].size = 1024;
	pk.files = f;
	pk.nfiles = 2;
	b[1].skip_reason = (char *)"no GPU";
	p.builds = b;
	p.nbuilds = 3;
	st[0].skip_reason = (char *)"arch";
	p.steps = st;
	p.nsteps = 2;
	need = disk_need_kib(&p, &pk, &s, &bu, &o);
	CHECK(s == 2 * 2, "sources: 1025 bytes round up to 2 KiB, twice (store and src/)", "%lld", s);
	CHECK(bu == 2 * DISK_BUILD_KIB, "a build skipped by the plan needs nothing", "%lld", bu);
	CHECK(o == DISK_STEP_KIB, "a step skipped by the plan needs nothing", "%lld", o);
	CHECK(need == s + bu + o, "the need is the sum of its parts", "%lld", need);
	CHECK(need > 2048, "the issue's 2 MiB work directory is too small for two builds", "%lld",
	      need);
	strbuf_release(&r);
	return check_summary();
}
