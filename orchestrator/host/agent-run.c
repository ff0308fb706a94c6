/* agent-run.c -- gpuorch-agent's `run` (the plan in the foreground, under
 * RD/runner.lock for the runner's life: runner_started, the build phase,
 * the deferred probe, the run phase, runner_ended; exit 0 done, 2 bad plan,
 * 3 killed or error) and `start` (the same, detached in a session of its
 * own with its output in RD/runner.log; answers once its pid is written). */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

static void print_running(const char *rd)
{
	char *p = xfmt("%s/runner.pid", rd);
	struct sb pid = { 0 };
	(void)read_all(p, &pid); /* none: "running " as runner.sh's $(cat) */
	while (pid.len && pid.buf[pid.len - 1] == '\n')
		pid.buf[--pid.len] = '\0';
	printf("running %s\n", pid.buf ? pid.buf : "");
	free(p);
	sb_free(&pid);
}

static int finished(const char *rd)
{
	char *d = xfmt("%s/runner.done", rd), *s = xfmt("%s/runner.stopped", rd);
	int r = exists(d) || exists(s);
	free(d), free(s);
	return r;
}

/* journal_open: "restart" when a journal exists; a torn last line is ended */
static int journal_open(void)
{
	int restart = nonempty(A.jpath);
	struct stat st;
	char last = '\n';

	if (!restart)
		return 0;
	A.jfd = open(A.jpath, O_RDWR | O_APPEND | O_CLOEXEC);
	if (A.jfd < 0 || fstat(A.jfd, &st) < 0 || pread(A.jfd, &last, 1, st.st_size - 1) != 1)
		fprintf(stderr, "runner: cannot read %s: %s\n", A.jpath, strerror(errno));
	else if (last != '\n' && write(A.jfd, "\n", 1) != 1)
		fprintf(stderr, "runner: cannot end the torn line of %s\n", A.jpath);
	return 1;
}

static void started_event(int restart)
{
	char host[256] = "";
	struct utsname u;
	struct sb f = { 0 };

	if (first_line("/proc/sys/kernel/hostname", host, sizeof(host)) < 0 && uname(&u) == 0)
		snprintf(host, sizeof(host), "%s", u.nodename);
	sb_addf(&f, ",\"pid\":%ld,\"host\":", (long)getpid());
	json_str(&f, host);
	sb_addf(&f, ",\"restart\":%s,\"version\":%d,\"builds\":%d,\"steps\":%d,\"max_builds\":%ld",
		restart ? "true" : "false", AGENT_VERSION, A.plan.nb, A.plan.ns, A.plan.maxb);
	sb_adds(&f, ",\"runner\":\"gpuorch-agent\"");
	ev("runner_started", f.buf);
	sb_free(&f);
}

static int bad_plan(void)
{
	struct sb f = { 0 };
	sb_adds(&f, ",\"status\":\"error\",\"message\":");
	json_str(&f, A.plan.err.buf);
	ev("runner_ended", f.buf);
	fprintf(stderr, "runner: %s\n", A.plan.err.buf);
	sb_free(&f);
	return 2;
}

static int the_end(void)
{
	struct sb f = { 0 };
	char *done;

	if (A.stop) {
		sb_addf(&f, ",\"status\":\"%s\",\"message\":", A.stop);
		json_str(&f, A.msg ? A.msg : "");
		ev("runner_ended", f.buf);
		sb_free(&f);
		return 3;
	}
	ev_again("runner_ended", ",\"status\":\"done\"");
	done = xfmt("%s/runner.done", A.rd);
	if (touch_file(done) < 0)
		fprintf(stderr, "runner: cannot write %s: %s\n", done, strerror(errno));
	free(done);
	return 0;
}

static int run_plan(void)
{
	char f[64];

	phase_builds();
	if (!A.stop)
		emit_later();
	if (!A.stop) {
		ev_again("phase_started", ",\"name\":\"run\"");
		wait_events(0);
		if (!A.stop)
			run_steps();
		snprintf(f, sizeof(f), ",\"name\":\"run\",\"status\":\"%s\"", A.stop ? A.stop : "done");
		ev_again("phase_ended", f);
	}
	return the_end();
}

/* write_pid: RD/runner.pid, atomically; then the start's handshake ends */
static void write_pid(int hsfd)
{
	char *p = xfmt("%s/runner.pid", A.rd), *tmp = xfmt("%s/runner.pid.tmp", A.rd);
	char line[32];
	snprintf(line, sizeof(line), "%ld\n", (long)getpid());
	if (write_atomic(p, tmp, line) < 0)
		fprintf(stderr, "runner: cannot write %s: %s\n", p, strerror(errno));
	if (hsfd >= 0)
		xclose(hsfd);
	free(p), free(tmp);
}

/* cmd_run RD HSFD: HSFD, when not -1, is closed once the pid is written */
int cmd_run(const char *rd, int hsfd)
{
	char *p = xfmt("%s/plan.sh", rd), *lk = xfmt("%s/runner.lock", rd), *bd;
	int lock, rc, restart;

	A.rd = rd;
	A.jpath = xfmt("%s/journal", rd);
	if (!is_file(p))
		die("no plan at '%s'", p);
	if ((lock = open_lock(lk)) < 0)
		die("cannot open %s: %s", lk, strerror(errno));
	if (flock(lock, LOCK_EX | LOCK_NB) < 0) {
		print_running(rd);
		rc = 0;
		goto out;
	}
	if (finished(rd)) {
		puts("finished");
		rc = 0;
		goto out;
	}
	write_pid(hsfd);
	restart = journal_open();
	bd = xfmt("%s/.builds", rd);
	if (mkdir_p(bd) < 0)
		fprintf(stderr, "runner: cannot make %s: %s\n", bd, strerror(errno));
	free(bd);
	plan_read(&A.plan, p);
	started_event(restart);
	if (A.plan.err.len) {
		rc = bad_plan();
		goto out;
	}
	signals_open();
	rc = run_plan();
out:
	free(p), free(lk);
	return rc;
}

/* start_child: the runner, in a session of its own, output to runner.log */
static void start_child(const char *rd, int hsfd)
{
	char *log = xfmt("%s/runner.log", rd);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int out = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);

	free(log);
	if (setsid() < 0 || null < 0 || out < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 ||
	    dup2(out, 2) < 0)
		_exit(3);
	xclose(null);
	xclose(out);
	fflush(NULL);
	exit(cmd_run(rd, hsfd));
}

int cmd_start(const char *rd)
{
	char *p = xfmt("%s/plan.sh", rd), *pidf = xfmt("%s/runner.pid", rd), *done;
	char buf[64];
	int hs[2], i;
	pid_t pid;

	if (!is_file(p))
		die("no plan at '%s'", p);
	free(p);
	if (finished(rd) || held(rd)) {
		if (finished(rd))
			puts("finished");
		else
			print_running(rd);
		free(pidf);
		return 0;
	}
	if (unlink(pidf) < 0 && errno != ENOENT)
		die("cannot remove %s: %s", pidf, strerror(errno));
	if (pipe2(hs, O_CLOEXEC) < 0)
		die("pipe: %s", strerror(errno));
	fflush(NULL);
	if ((pid = fork()) < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		xclose(hs[0]);
		free(pidf);
		start_child(rd, hs[1]);
	}
	xclose(hs[1]);
	for (;;) {
		ssize_t n = read(hs[0], buf, sizeof(buf));
		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
	xclose(hs[0]);
	done = xfmt("%s/runner.done", rd);
	for (i = 0; i < 500 && !nonempty(pidf) && !exists(done); i++)
		sleep_ms(20);
	if (nonempty(pidf) && first_line(pidf, buf, sizeof(buf)) == 0)
		printf("started %s\n", buf);
	else if (exists(done))
		puts("finished");
	else
		die("the runner did not start within 10 s (see %s/runner.log)", rd);
	free(pidf), free(done);
	return 0;
}
