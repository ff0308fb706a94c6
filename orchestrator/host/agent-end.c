/* agent-end.c -- gpuorch-agent's end of an item: the end fields read from
 * its directory (status, rc, clocks, free disk when it did not pass, the
 * capped output texts), a build's end event and result for this run
 * (RD/.builds/<n>: pass|fail|skipped), and the journal text of a passed
 * build kept for its reuse (log.<cap>.json). As runner.sh's end_fields and
 * build_end. */
#include "agent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

char *builds_path(int i)
{
	return xfmt("%s/.builds/%d", A.rd, i);
}

/* owned: DIR/owner names this run (a build this run started) */
int owned(const char *dir)
{
	char *p = xfmt("%s/owner", dir), buf[4096];
	int r = nonempty(p) && first_line(p, buf, sizeof(buf)) == 0 && !strcmp(buf, A.rd);
	free(p);
	return r;
}

/* clock: DIR/NAME's first line when the file is not empty, else null */
static void clock_field(struct sb *ef, const char *dir, const char *name)
{
	char *p = xfmt("%s/%s", dir, name), buf[64];
	if (nonempty(p) && first_line(p, buf, sizeof(buf)) == 0 && buf[0])
		sb_adds(ef, buf);
	else
		sb_adds(ef, "null");
	free(p);
}

static const char *status_of(const char *rc, const char **rcj)
{
	if (!*rc) {
		*rcj = "null";
		return "lost";
	}
	if (!strcmp(rc, "timeout")) {
		*rcj = "124";
		return "timeout";
	}
	if (!strcmp(rc, "lock-timeout")) {
		*rcj = "75";
		return "lock-timeout";
	}
	if (strspn(rc, "0123456789") != strlen(rc)) {
		*rcj = "null";
		return "lost";
	}
	*rcj = rc;
	return "exited";
}

void end_fields(const char *dir, int killed, struct sb *ef, struct sb *etf, const char **est,
		char *erc, size_t ercsize)
{
	char *p = xfmt("%s/rc", dir), rc[64] = "";
	const char *st, *rcj;
	struct statvfs vfs;

	if (is_file(p))
		first_line(p, rc, sizeof(rc));
	free(p);
	st = status_of(rc, &rcj);
	if (killed)
		st = "killed";
	*est = st;
	snprintf(erc, ercsize, "%s", rc);
	sb_adds(ef, ",\"dir\":");
	json_str(ef, dir);
	sb_addf(ef, ",\"status\":\"%s\",\"rc\":%s,\"t_lock\":", st, rcj);
	clock_field(ef, dir, "locked");
	sb_adds(ef, ",\"t_run\":");
	clock_field(ef, dir, "t_run");
	sb_adds(ef, ",\"t_end\":");
	clock_field(ef, dir, "t_end");
	/* an item that did not pass: the free space it left (diskspace.h) */
	if (strcmp(rcj, "0") && statvfs(dir, &vfs) == 0)
		sb_addf(ef, ",\"disk_free_kib\":%llu",
			(unsigned long long)vfs.f_bavail * vfs.f_frsize / 1024);
	p = xfmt("%s/stdout", dir);
	text_field(etf, p, "stdout");
	free(p);
	p = xfmt("%s/stderr", dir);
	text_field(etf, p, "stderr");
	free(p);
	sb_add(ef, etf->buf ? etf->buf : "", etf->len);
}

void build_done(int i, const char *status)
{
	char *p = builds_path(i), *tmp = xfmt("%s.tmp", p), *line = xfmt("%s\n", status);
	if (write_atomic(p, tmp, line) < 0)
		fprintf(stderr, "runner: cannot write %s: %s\n", p, strerror(errno));
	free(p), free(tmp), free(line);
}

/* keep_log: a passed build's output texts, kept for every later reuse */
static void keep_log(const struct build *b, const struct sb *etf)
{
	char *p = xfmt("%s/log.%ld.json", b->dir, A.plan.textcap);
	char *tmp = xfmt("%s.%ld", p, (long)getpid());
	if (write_file(tmp, etf->buf ? etf->buf : "", etf->len) < 0 || rename(tmp, p) < 0)
		fprintf(stderr, "runner: cannot write %s: %s\n", p, strerror(errno));
	free(p), free(tmp);
}

/* build_end I: journal build I's end (1-based), mark it for this run */
void build_end(int i)
{
	struct build *b = &A.plan.b[i - 1];
	struct sb f = { 0 }, ef = { 0 }, etf = { 0 };
	const char *est;
	char erc[64];

	end_fields(b->dir, b->killed, &ef, &etf, &est, erc, sizeof(erc));
	sb_adds(&f, ",\"id\":");
	json_str(&f, b->id);
	sb_add(&f, ef.buf, ef.len);
	ev("build_end", f.buf);
	/* stopped (not by fail_fast) or lost: did not end; a resume builds it again */
	if ((!strcmp(est, "killed") && (A.stop || A.killcmd)) || !strcmp(est, "lost")) {
		char *r = xfmt("%s/.reopen", b->dir);
		if (touch_file(r) < 0)
			fprintf(stderr, "runner: cannot write %s: %s\n", r, strerror(errno));
		free(r);
	}
	if (!strcmp(est, "exited") && !strcmp(erc, "0") && access(b->bin, X_OK) == 0) {
		keep_log(b, &etf);
		build_done(i, "pass");
	} else {
		build_done(i, "fail");
		if (!b->mayfail)
			A.bfailed = 1;
	}
	sb_free(&f), sb_free(&ef), sb_free(&etf);
}
