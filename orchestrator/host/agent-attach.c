/* agent-attach.c -- gpuorch-agent's `attach KEY=VALUE...`: a re-run's start
 * command in one process, where the controller knows this agent is on the
 * host (remote.c: the agent's command). It does what start.sh does once the
 * agent is built and the content is there: the kept probe's check, the disk
 * check, the plan written (atomically), --resume's reopen, the start, the
 * execd started when the command did not come through it, and then the
 * journal followed -- no shell, awk or mv behind it (issue 33: a re-run's
 * host CPU). Its answers are start.sh's "gpuorch-start: ..." lines and exit
 * codes (3 no runner, 4 content absent, 5 probe stale, 7 disk short). A
 * content not made yet whose blobs are all in the store (a put of the
 * execd brought them) it makes itself (agent-tree.c: "gpuorch-start:
 * content unpacked"); through the execd, whose command's stdin came whole,
 * it names the blobs the store lacks ("missing H", "content absent"), as
 * start.sh does there. What it leaves to start.sh it declines before it
 * changes anything ("gpuorch-start: agent declines", exit 8; the
 * controller runs start.sh then): blobs missing on an exec channel (start.sh
 * asks for them on the same stdin), no manifest, an execd not built.
 *
 * KEYs (start.sh's variables): rd off send reopen need cdir bdir txtlen xd
 * xv xidle; sig (the kept probe's signature; absent: no check) with
 * cuda_home python gpu (host_sig's parameters). stdin: start.sh's text
 * (txtlen bytes: the manifest, then each part after its marker line), of
 * which it keeps the manifest and the plan: the command runs start.sh in
 * its place when the agent's file is not there, in the same shell
 * (remote.c: attach_cmd), so it is given what start.sh reads. The markers
 * are start-script.h's (t2290). */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

struct attach {
	const char *rd, *off, *cdir, *bdir, *xd, *xv, *xidle, *sig, *cuda_home, *python;
	int send, reopen, gpu, have_sig;
	long long need;
	size_t txtlen;
};

static int parse(struct attach *a, int argc, char **argv)
{
	int i;
	memset(a, 0, sizeof(*a));
	a->off = "0";
	a->cdir = a->bdir = a->xd = a->xv = a->xidle = a->cuda_home = a->python = "";
	for (i = 0; i < argc; i++) {
		const char *k = argv[i], *v = strchr(k, '=');
		size_t n;
		if (!v)
			return -1;
		n = (size_t)(v++ - k);
#define IS(name) (n == strlen(name) && !strncmp(k, name, n))
		if (IS("rd")) a->rd = v;
		else if (IS("off")) a->off = v;
		else if (IS("send")) a->send = !strcmp(v, "1");
		else if (IS("reopen")) a->reopen = !strcmp(v, "1");
		else if (IS("need")) a->need = atoll(v);
		else if (IS("cdir")) a->cdir = v;
		else if (IS("bdir")) a->bdir = v;
		else if (IS("txtlen")) a->txtlen = (size_t)strtoull(v, NULL, 10);
		else if (IS("xd")) a->xd = v;
		else if (IS("xv")) a->xv = v;
		else if (IS("xidle")) a->xidle = v;
		else if (IS("sig")) a->sig = v, a->have_sig = 1;
		else if (IS("cuda_home")) a->cuda_home = v;
		else if (IS("python")) a->python = v;
		else if (IS("gpu")) a->gpu = atoi(v);
		else return -1;
#undef IS
	}
	return a->rd && a->rd[0] ? 0 : -1;
}

#define PLAN_MARKER "#--gpuorch-plan--"
static const char *const after_plan[] = { "#--gpuorch-execd--", "#--gpuorch-agent--" };

/* the plan in start.sh's text: the lines after the plan marker line up to
 * the next marker line; "" when there is none */
static void plan_of(const struct sb *text, struct sb *plan)
{
	const char *t = text->buf ? text->buf : "", *p = t, *e;
	size_t i, n = strlen(PLAN_MARKER);

	for (; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
		if (!strncmp(p, PLAN_MARKER, n) && (p[n] == '\n' || !p[n]))
			break;
	p = *p ? p + n + (p[n] == '\n') : p;
	for (e = p; *e; e = strchr(e, '\n') ? strchr(e, '\n') + 1 : e + strlen(e))
		for (i = 0; i < sizeof(after_plan) / sizeof(*after_plan); i++)
			if (!strncmp(e, after_plan[i], strlen(after_plan[i])) &&
			    (e[strlen(after_plan[i])] == '\n' || !e[strlen(after_plan[i])]))
				goto end;
end:
	sb_add(plan, p, (size_t)(e - p));
	sb_add(plan, "", 0);
}

/* LEN bytes of stdin, no more: the controller may keep the channel open
 * (start.sh, in the agent's place, can ask it for blobs) until a start line
 * says the command reads no more (remote.c: told_enough) */
static int read_text(size_t len, struct sb *out)
{
	char buf[65536];
	size_t got = 0;
	while (got < len) {
		size_t want = len - got < sizeof(buf) ? len - got : sizeof(buf);
		ssize_t n = read(0, buf, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		sb_add(out, buf, (size_t)n);
		got += (size_t)n;
	}
	sb_add(out, "", 0);
	return got >= len ? 0 : -1;
}

/* the execd: "gpuorch-start: execd SOCK" when this command came through it
 * or it starts now (start.sh's `"$xb" start`); nothing without one */
static void execd(const struct attach *a, const char *via, const char *xb)
{
	char *sock, *c, *log;
	pid_t pid;
	int st;

	if (!a->xd[0])
		return;
	sock = xfmt("%s/%s.sock", a->xd, a->xv);
	if (via && !strcmp(via, sock)) {
		printf("gpuorch-start: execd %s\n", sock);
		free(sock);
		return;
	}
	c = xfmt("%s.c", xb);
	touch_file(c);   /* its last use, for gpuorch hosts clean */
	log = xfmt("%s/start.log", a->xd);
	fflush(NULL);
	if ((pid = fork()) == 0) {
		int null = open("/dev/null", O_RDWR), err = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		if (null < 0 || err < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(err, 2) < 0)
			_exit(127);
		execl(xb, xb, "start", sock, a->xidle[0] ? a->xidle : "1", (char *)NULL);
		_exit(127);
	}
	if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0)
		printf("gpuorch-start: execd %s\n", sock);
	free(sock), free(c), free(log);
}

/* the manifest in start.sh's text: its lines before the first marker line */
static void manifest_of(const struct sb *text, struct sb *m)
{
	const char *t = text->buf ? text->buf : "", *p = t;

	while (*p && strncmp(p, "#--gpuorch-", 11))
		p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p);
	sb_add(m, t, (size_t)(p - t));
}

/* the content: CONTENT_THERE (or none named), CONTENT_MAKE (from the blob
 * store: every blob it needs is there as sent), CONTENT_LACKS (blobs to
 * name, or to unpack), -1 no manifest came */
enum { CONTENT_THERE, CONTENT_MAKE, CONTENT_LACKS };
static int content_state(const struct attach *a, const struct sb *manifest)
{
	char *p;
	int there;

	if (!a->cdir[0])
		return CONTENT_THERE;
	p = xfmt("%s/.complete", a->cdir);
	there = is_file(p);
	free(p);
	if (there)
		return CONTENT_THERE;
	if (!a->bdir[0] || !manifest->len)
		return -1;
	switch (tree_lacks(a->bdir, manifest->buf, 0)) {
	case 0:
		return CONTENT_MAKE;
	case -1:
		return -1;
	default:
		return CONTENT_LACKS;
	}
}

/* an execd not built yet, where start.sh would build it: 1 (declined) */
static int declines(const struct attach *a, const char *via, const char *xb)
{
	int r = 0;
	if (a->xd[0]) {
		char *sock = xfmt("%s/%s.sock", a->xd, a->xv), *failed = xfmt("%s.failed", xb);
		r = !(via && !strcmp(via, sock)) && access(xb, X_OK) != 0 && !exists(failed);
		free(sock), free(failed);
	}
	return r;
}

/* a run not started yet: is there room for it (start.sh's df check)? */
static int disk_short(const struct attach *a)
{
	char *j = xfmt("%s/journal", a->rd);
	struct statvfs vf;
	long long kib;
	int short_ = 0;

	if (a->need > 0 && !nonempty(j) && statvfs(a->rd, &vf) == 0) {
		kib = (long long)((unsigned long long)vf.f_bavail * vf.f_frsize / 1024);
		if (kib < a->need) {
			char *b = xfmt("%s/.builds", a->rd);
			rmdir(b), rmdir(a->rd);
			free(b);
			printf("gpuorch-start: disk short %lld\n", kib);
			short_ = 1;
		}
	}
	free(j);
	return short_;
}

/* a run not started yet: its directory made, and 1 when the disk is short
 * for it (said) */
static int room(const struct attach *a)
{
	char *p = xfmt("%s/.builds", a->rd);
	if (mkdir_p(p) < 0)
		die("cannot create the run directory %s", a->rd);
	free(p);
	return disk_short(a);
}

/* the content's tree from the blob store (content_state said every blob is there) */
static void make_content(const struct attach *a, const struct sb *manifest)
{
	struct sb err = { 0 };
	if (tree_make(a->cdir, a->bdir, manifest->buf, &err) < 0)
		die("cannot assemble the sources in %s: %s%s", a->cdir, err.buf,
		    strstr(err.buf, strerror(ENOSPC)) ? " (free space there: gpuorch hosts clean)" : "");
	sb_free(&err);
	puts("gpuorch-start: content unpacked");
}

/* the content is there (content_state checked it): its last use, for gpuorch
 * hosts clean (an empty file, written again) */
static void content_present(const char *cdir)
{
	char *p = xfmt("%s/.complete", cdir);
	int fd = open(p, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd >= 0)
		xclose(fd);
	free(p);
	puts("gpuorch-start: content present");
}

static int write_plan(const char *rd, const char *text)
{
	char *p = xfmt("%s/plan.sh", rd), *t = xfmt("%s/plan.sh.tmp", rd);
	int rc = text[0] ? write_atomic(p, t, text) : -1;
	if (rc < 0)
		unlink(t);
	free(p), free(t);
	return rc;
}

/* forget what reopen read: start and follow read the run afresh */
static void reset_state(void)
{
	plan_free(&A.plan);
	free(A.jpath);
	A.jpath = NULL;
	A.rd = NULL;
}

int cmd_attach(const char *self, int argc, char **argv)
{
	const char *via = getenv("GPUORCH_EXECD");
	struct attach a;
	struct sb text = { 0 }, man = { 0 };
	char *xb, *p;
	int rc, content;

	if (parse(&a, argc, argv) < 0)
		die("usage: gpuorch-agent attach rd=RUNDIR [off=N send=0|1 reopen=0|1 need=KIB cdir=DIR "
		    "bdir=DIR txtlen=N xd=DIR xv=V xidle=S sig=SIG cuda_home=DIR python=PATH gpu=N]");
	if (a.have_sig) {
		struct sb sig = { 0 };
		host_sig(&sig, a.cuda_home, a.python, a.gpu);
		rc = strcmp(sig.buf ? sig.buf : "", a.sig);
		sb_free(&sig);
		if (rc) {
			puts("gpuorch-start: probe stale");
			read_text(a.txtlen, &text);
			sb_free(&text);
			return 5;
		}
	}
	rc = read_text(a.txtlen, &text);
	manifest_of(&text, &man);
	xb = xfmt("%s/gpuorch-execd-%s", a.xd, a.xv);
	/* blobs to unpack (a tar with the start) or to ask for on this
	 * command's stdin (an exec channel) are start.sh's; through the execd
	 * its stdin came whole, and the missing ones are named here */
	content = content_state(&a, &man);
	if (content < 0 || (content == CONTENT_LACKS && !(via && via[0])) || declines(&a, via, xb)) {
		puts("gpuorch-start: agent declines");
		sb_free(&text), sb_free(&man), free(xb);
		return 8;
	}
	if (rc < 0)
		die("the plan did not all arrive (%zu bytes expected)", a.txtlen);
	rc = a.send && room(&a) ? 7 : content == CONTENT_LACKS ? 4 : 0;
	if (rc == 4) {
		tree_lacks(a.bdir, man.buf, 1);
		puts("gpuorch-start: content absent");
	}
	if (rc) {
		sb_free(&text), sb_free(&man), free(xb);
		return rc;
	}
	if (content == CONTENT_MAKE)
		make_content(&a, &man);
	else if (a.cdir[0])
		content_present(a.cdir);
	sb_free(&man);
	if (a.send) {
		struct sb plan = { 0 };
		plan_of(&text, &plan);
		if (write_plan(a.rd, plan.buf) < 0)
			die("cannot write the plan into %s", a.rd);
		sb_free(&plan);
	}
	sb_free(&text);
	p = xfmt("%s/plan.sh", a.rd);
	if (!is_file(p)) {
		fprintf(stderr, "no runner in %s (the run was never started there)\n", a.rd);
		return 3;
	}
	free(p);
	if (a.reopen) {
		fputs("gpuorch-start: ", stdout);
		cmd_reopen(a.rd);
		reset_state();
	}
	execd(&a, via, xb);
	free(xb);
	/* runner.agent: the agent that started the run stops it (remote.c's kill) */
	p = xfmt("%s/runner.agent", a.rd);
	{
		char *line = xfmt("%s\n", self);
		if (write_file(p, line, strlen(line)) < 0)
			die("cannot write %s", p);
		free(line);
	}
	free(p);
	printf("gpuorch-start: agent %s\ngpuorch-start: runner ", self);
	cmd_start(a.rd);
	fflush(NULL);
	reset_state();
	return cmd_follow(a.rd, a.off);
}
