/* sshtool.c -- a small CLI over ssh.h, remote.h and probe.h for the shell tests.
 *
 *   sshtool [options] COMMAND ARGS...
 *     --address A (127.0.0.1)  --port N  --user U ($USER)  --key FILE
 *     --known-hosts FILE  --accept-new  --label NAME (test)
 *     --connect-timeout-ms N (5000)  --timeout-ms N (30000)
 *     --execd SOCK               commands go through the host's execd on SOCK
 *                                (ssh_use_execd); after each command
 *                                "sshtool: via execd" or "sshtool: via exec" is
 *                                printed on stderr
 *     --persist S                persist_s: through the host's session keeper
 *                                (started by the first connection); with
 *                                --execd, "sshtool: via keeper" when c had
 *                                no session of its own
 *     --repeat N                 run the command N times on the one
 *                                connection; then "sshtool: N runs, median
 *                                M ms, max X ms" on stderr (each run's wall
 *                                time, request to end)
 *     --timing                   "sshtool: run took N ms, TCP_NODELAY on|off" on stderr for each
 *                                run (the first: from the end of
 *                                authentication, so a stall between it and
 *                                the first command shows)
 *   commands:
 *     check                      connect, print "fingerprint SHA256:..."
 *     exec CMD                   stdin is sent; remote stdout/stderr copied;
 *                                exits with the remote exit code, or prints
 *                                "sshtool: signal NAME" and exits 99
 *     exec-until MARK CMD        stdout copied until a line MARK, where the
 *                                reader stops the command (as the runner's
 *                                follow stops at the journal's end); then
 *                                "sshtool: let go N ms after the mark, M close(s) pending" on
 *                                stderr (the mark's arrival to ssh_exec_stream's
 *                                return); exit 0 when the mark came
 *     upload LOCAL REMOTE        prints "sent N"
 *     download REMOTE LOCAL [MAX]
 *     step-start DIR CMD TIMEOUT_S [CWD [LOCK LOCKWAIT_S]]
 *                                a one-step plan run by the host runner
 *                                (remote.h) in DIR/.run, the step in DIR;
 *                                returns once the runner journaled its start
 *     step-poll DIR WAIT_MS      follows DIR/.run's journal for up to WAIT_MS;
 *                                prints remote_describe() of the step's end,
 *                                e.g. "exit 3", or "running" (WAIT_MS < 500:
 *                                a step with an rc file is waited for)
 *     step-kill DIR              runner.sh kill on DIR/.run
 *     step-output DIR MAX        DIR/stdout to stdout, DIR/stderr to stderr
 *     probe [WORKDIR [CUDA_HOME]]  prints the info JSON
 * An error prints "error: MESSAGE" and exits 10 + the go_status number
 * (GO_ERR_CONNECT 16, GO_ERR_HOSTKEY 17, GO_ERR_AUTH 18, GO_ERR_SSH 19,
 * GO_ERR_TIMEOUT 20, GO_ERR_REMOTE 21, GO_ERR_NOT_FOUND 22). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "transport/ssh.h"
#include "remote/hostjournal.h"
#include "remote/remote.h"
#include "remote/runplan.h"
#include "remote/probe.h"
#include "core/timeutil.h"
#include "core/stats.h"
#include "core/fsutil.h"
#include "core/banned.h"

static int fail(enum go_status st, struct strbuf *err)
{
	fprintf(stderr, "error: %s\n", err->buf);
	return 10 + (int)st;
}

static void usage(void)
{
	fprintf(stderr, "usage: sshtool [--port N --user U --key F --known-hosts F --accept-new] "
		"check|exec|exec-until|put|upload|download|step-start|step-poll|step-kill|step-output|probe ...\n");
	exit(2);
}

static void read_stdin(struct strbuf *sb)
{
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0)
		strbuf_add(sb, buf, n);
}

/* Following a one-step run: stop at the event wanted, or at the deadline. */
struct follow {
	struct journal j;
	const char *want;         /* "step_started" or "step_end" */
	int64_t wait_ms;          /* < 0: no deadline */
	int64_t deadline;         /* 0: not armed yet */
	const struct remote_start_info *info;
	int seen;
	struct remote_status rs;
	struct strbuf err;
	enum go_status st;
};

static int on_event(const struct journal_event *e, void *ctx)
{
	struct follow *f = ctx;
	if (!strcmp(e->ev, f->want) || !strcmp(e->ev, "step_end")) {
		f->seen = 1;
		if (!strcmp(e->ev, "step_end"))
			remote_end_from_event(e->json, &f->rs);
		return 1;
	}
	return 0;
}

static int on_bytes(const char *data, size_t len, void *ctx)
{
	struct follow *f = ctx;
	if (len && !f->seen && (f->st = journal_feed(&f->j, data, len, on_event, f, &f->err)))
		return 1;
	if (f->seen)
		return 1;
	/* the wait starts once the runner answered: what the journal already
	 * holds comes first */
	if (f->wait_ms >= 0 && !f->deadline && f->info->runner[0])
		f->deadline = time_mono_ms() + f->wait_ms;
	return !len && f->deadline && time_mono_ms() >= f->deadline;
}

static enum go_status follow_run(struct ssh_conn *c, const char *dir, const char *plan,
				 const char *want, int wait_ms, struct follow *f, struct strbuf *err)
{
	struct remote_runner rr;
	struct remote_start_info info;
	char *rd = xstrfmt("%s/.run", dir);
	enum go_status st;

	memset(f, 0, sizeof(*f));
	journal_init(&f->j, 0);
	strbuf_init(&f->err, 0);
	f->want = want;
	f->rs.end = REMOTE_RUNNING;
	f->wait_ms = wait_ms;
	f->info = &info;
	memset(&rr, 0, sizeof(rr));
	rr.content_dir = NULL;
	rr.run_dir = rd;
	rr.plan = plan;
	st = remote_runner_follow(c, &rr, 0, on_bytes, f, wait_ms >= 0 ? wait_ms + 30000 : 60000,
				  &info, err);
	if (f->st) {
		strbuf_reset(err);
		strbuf_add(err, f->err.buf, f->err.len);
		st = f->st;
	} else if (st == GO_ERR_INTERRUPTED) {
		st = GO_OK;   /* stopped by on_bytes: seen, or the wait is over */
	} else if (st == GO_ERR_NOT_FOUND || (st == GO_ERR_REMOTE && strstr(err->buf, "no runner in"))) {
		strbuf_reset(err);
		strbuf_addf(err, "no step in '%s' on the host (never started, or its directory was removed)",
			    dir);
		st = GO_ERR_NOT_FOUND;
	}
	journal_release(&f->j);
	strbuf_release(&f->err);
	free(rd);
	return st;
}

/* exec-until: stdout copied line by line until the mark */
struct until {
	const char *mark;
	struct strbuf line;
	int seen;
	int64_t t_seen;
};

static int until_out(const char *data, size_t len, void *ctx)
{
	struct until *u = ctx;
	size_t i;

	for (i = 0; i < len && !u->seen; i++) {
		if (data[i] != '\n') {
			strbuf_addch(&u->line, data[i]);
			continue;
		}
		printf("%s\n", u->line.buf);
		if (!strcmp(u->line.buf, u->mark)) {
			u->seen = 1;
			u->t_seen = time_mono_ms();
		}
		strbuf_reset(&u->line);
	}
	return u->seen;
}

/* put DIR: stdin (blobs, "SHA256 SIZE\n" and the bytes each) written by
 * the execd into DIR; its exit code, what it said on stderr, and on stdout
 * "acked N ahead-max M bound B" (ssh_exec_result's put_ fields) */
static int put(struct ssh_conn *c, const char *dir, int timeout_ms, struct strbuf *err)
{
	struct strbuf in = STRBUF_INIT, eout = STRBUF_INIT;
	struct ssh_exec_result r;
	enum go_status st;
	read_stdin(&in);
	st = ssh_execd_put(c, dir, in.buf, in.len, &eout, &r, timeout_ms, err);
	fwrite(eout.buf, 1, eout.len, stderr);
	if (!st)
		printf("acked %llu ahead-max %llu bound %llu\n", (unsigned long long)r.put_acked,
		       (unsigned long long)r.put_ahead_max, (unsigned long long)r.put_bound);
	strbuf_release(&in);
	strbuf_release(&eout);
	if (st)
		return fail(st, err);
	return r.signal[0] ? 99 : r.exit_code;
}

static int run(struct ssh_conn *c, int argc, char **argv, int timeout_ms, struct strbuf *err)
{
	const char *cmd = argv[0];
	enum go_status st;

	if (!strcmp(cmd, "check")) {
		printf("fingerprint %s\n", ssh_fingerprint(c));
		return 0;
	}
	if (!strcmp(cmd, "exec") && argc == 2) {
		struct strbuf in = STRBUF_INIT, out = STRBUF_INIT, eout = STRBUF_INIT;
		struct ssh_exec_result r;
		if (!isatty(0))
			read_stdin(&in);
		st = ssh_exec(c, argv[1], in.len ? in.buf : NULL, in.len, &out, &eout, &r,
			      timeout_ms, err);
		fwrite(out.buf, 1, out.len, stdout);
		fwrite(eout.buf, 1, eout.len, stderr);
		strbuf_release(&in);
		strbuf_release(&out);
		strbuf_release(&eout);
		if (st)
			return fail(st, err);
		if (r.signal[0]) {
			fprintf(stderr, "sshtool: signal %s\n", r.signal);
			return 99;
		}
		return r.exit_code;
	}
	if (!strcmp(cmd, "put") && argc == 2)
		return put(c, argv[1], timeout_ms, err);
	if (!strcmp(cmd, "exec-until") && argc == 3) {
		struct until u = { argv[1], STRBUF_INIT, 0, 0 };
		struct ssh_exec_result r;
		st = ssh_exec_stream(c, argv[2], NULL, 0, until_out, &u, NULL, &r, timeout_ms, err);
		if (u.seen) {
			fprintf(stderr, "sshtool: let go %lld ms after the mark, %d close(s) pending\n",
				(long long)(time_mono_ms() - u.t_seen), ssh_closes_pending(c));
			st = GO_OK;   /* stopped by its reader */
		} else if (!st) {
			st = go_fail(err, GO_ERR_REMOTE, "the command ended without a line '%s'", argv[1]);
		}
		strbuf_release(&u.line);
		return st ? fail(st, err) : 0;
	}
	if (!strcmp(cmd, "upload") && argc == 3) {
		struct strbuf data = STRBUF_INIT;
		uint64_t sent = 0;
		st = fs_read_file(argv[1], &data, err);
		if (!st)
			st = ssh_upload(c, data.buf, data.len, argv[2], 0644, &sent, timeout_ms, err);
		strbuf_release(&data);
		printf("sent %llu\n", (unsigned long long)sent);
		return st ? fail(st, err) : 0;
	}
	if (!strcmp(cmd, "download") && (argc == 3 || argc == 4)) {
		struct strbuf data = STRBUF_INIT;
		size_t max = argc == 4 ? (size_t)strtoull(argv[3], NULL, 10) : 0;
		st = ssh_download(c, argv[1], &data, max, timeout_ms, err);
		if (!st)
			st = fs_write_atomic(argv[2], data.buf, data.len, err);
		strbuf_release(&data);
		return st ? fail(st, err) : 0;
	}
	if (!strcmp(cmd, "step-start") && (argc == 4 || argc == 5 || argc == 7)) {
		struct runplan p;
		struct runplan_step s;
		struct strbuf plan = STRBUF_INIT;
		struct follow f;
		char *parent = xstrdup(argv[1]), *slash = strrchr(parent, '/');
		if (slash && slash != parent)
			*slash = '\0';
		memset(&p, 0, sizeof(p));
		memset(&s, 0, sizeof(s));
		s.id = "step";
		s.dir = argv[1];
		s.command = argv[2];
		s.timeout_s = atoi(argv[3]);
		if (argc == 7) {
			s.lock_path = argv[5];
			s.lock_wait_s = atoi(argv[6]);
		}
		p.src_dir = argc >= 5 && *argv[4] ? argv[4] : parent;
		p.max_builds = 1;
		p.steps = &s;
		p.nsteps = 1;
		st = runplan_write(&p, &plan, err);
		if (!st)
			st = follow_run(c, argv[1], plan.buf, "step_started", -1, &f, err);
		free(parent);
		strbuf_release(&plan);
		return st ? fail(st, err) : 0;
	}
	if (!strcmp(cmd, "step-poll") && argc == 3) {
		struct follow f;
		struct strbuf d = STRBUF_INIT;
		st = follow_run(c, argv[1], NULL, "step_end", atoi(argv[2]), &f, err);
		if (!st && f.rs.end == REMOTE_RUNNING && atoi(argv[2]) < 500) {
			/* the step's rc is written a moment before the runner journals
			 * its end: a poll too short to see that end in the journal
			 * looks at the rc file, so an ended step is not "running" */
			struct strbuf sh = STRBUF_INIT;
			struct ssh_exec_result r;
			strbuf_addstr(&sh, "test -f ");
			strbuf_add_shell_quoted(&sh, argv[1]);
			strbuf_addstr(&sh, "/rc");
			st = ssh_exec(c, sh.buf, NULL, 0, NULL, NULL, &r, timeout_ms, err);
			if (!st && !r.signal[0] && r.exit_code == 0)
				st = follow_run(c, argv[1], NULL, "step_end", 10000, &f, err);
			strbuf_release(&sh);
		}
		if (st)
			return fail(st, err);
		remote_describe(&f.rs, &d);
		printf("%s\n", d.buf);
		strbuf_release(&d);
		return 0;
	}
	if (!strcmp(cmd, "step-kill") && argc == 2) {
		char *rd = xstrfmt("%s/.run", argv[1]);
		st = remote_runner_kill(c, rd, err);
		free(rd);
		return st ? fail(st, err) : 0;
	}
	if (!strcmp(cmd, "step-output") && argc == 3) {
		struct strbuf out = STRBUF_INIT, eout = STRBUF_INIT, sh = STRBUF_INIT;
		struct ssh_exec_result r;
		size_t max = (size_t)strtoull(argv[2], NULL, 10);
		strbuf_addstr(&sh, "d=");
		strbuf_add_shell_quoted(&sh, argv[1]);
		strbuf_addf(&sh, "; [ -d \"$d\" ] || exit 3; head -c %zu \"$d/stdout\"; "
			    "head -c %zu \"$d/stderr\" >&2", max + 1, max + 1);
		out.max = eout.max = max;
		st = ssh_exec(c, sh.buf, NULL, 0, &out, &eout, &r, timeout_ms, err);
		if (!st && r.exit_code == 3)
			st = go_fail(err, GO_ERR_NOT_FOUND, "no step directory '%s' on the host", argv[1]);
		fwrite(out.buf, 1, out.len, stdout);
		fwrite(eout.buf, 1, eout.len, stderr);
		if (out.truncated)
			printf("\n[stdout truncated]\n");
		strbuf_release(&out);
		strbuf_release(&eout);
		strbuf_release(&sh);
		return st ? fail(st, err) : 0;
	}
	if (!strcmp(cmd, "probe") && argc <= 3) {
		struct host_info hi;
		cJSON *j;
		char *text;
		st = probe_host(c, argc == 3 ? argv[2] : NULL, NULL, argc >= 2 ? argv[1] : NULL, 0, &hi, NULL, err);
		if (st)
			return fail(st, err);
		j = probe_to_json(&hi);
		text = cJSON_Print(j);
		printf("%s\n", text);
		free(text);
		cJSON_Delete(j);
		probe_release(&hi);
		return 0;
	}
	usage();
	return 2;
}

int main(int argc, char **argv)
{
	struct ssh_opts o = { 0 };
	struct strbuf err = STRBUF_INIT;
	struct ssh_conn *c = NULL;
	enum go_status st;
	int i, rc, timeout_ms = 30000;
	const char *execd = NULL;
	int repeat = 1, timing = 0;

	o.label = "test";
	o.address = "127.0.0.1";
	o.port = 22;
	o.user = getenv("USER") ? getenv("USER") : "root";
	o.connect_timeout_ms = 5000;
	if (argc > 1 && !strcmp(argv[1], SSH_KEEPER_ARG)) {
		/* the keeper that --persist starts runs this binary (ssh-mux.c) */
		if ((st = ssh_global_init(&err)))
			return fail(st, &err);
		rc = ssh_keeper_main(argc - 2, argv + 2);
		ssh_global_cleanup();
		return rc;
	}
	for (i = 1; i < argc && !strncmp(argv[i], "--", 2); i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--accept-new")) {
			o.accept_new_hostkey = 1;
			continue;
		}
		if (!strcmp(a, "--timing")) {
			timing = 1;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--address"))
			o.address = v;
		else if (!strcmp(a, "--port"))
			o.port = atoi(v);
		else if (!strcmp(a, "--user"))
			o.user = v;
		else if (!strcmp(a, "--key"))
			o.identity = v;
		else if (!strcmp(a, "--known-hosts"))
			o.known_hosts = v;
		else if (!strcmp(a, "--label"))
			o.label = v;
		else if (!strcmp(a, "--connect-timeout-ms"))
			o.connect_timeout_ms = atoi(v);
		else if (!strcmp(a, "--timeout-ms"))
			timeout_ms = atoi(v);
		else if (!strcmp(a, "--execd"))
			execd = v;
		else if (!strcmp(a, "--persist"))
			o.persist_s = atoi(v);
		else if (!strcmp(a, "--repeat") && atoi(v) >= 1)
			repeat = atoi(v);
		else
			usage();
	}
	if (i >= argc)
		usage();
	o.use_agent = o.identity == NULL;
	if ((st = ssh_global_init(&err)))
		return fail(st, &err);
	st = ssh_connect(&o, &c, &err);
	if (st) {
		rc = fail(st, &err);
	} else {
		if (ssh_notice(c))
			fprintf(stderr, "note: %s\n", ssh_notice(c));
		if (execd)
			ssh_use_execd(c, execd);
		double *ms = xcalloc((size_t)repeat, sizeof(*ms));
		int r;
		for (r = 0, rc = 0; r < repeat && !rc; r++) {
			int64_t t0 = time_mono_ms();
			rc = run(c, argc - i, argv + i, timeout_ms, &err);
			ms[r] = (double)(time_mono_ms() - t0);
			if (timing)
				fprintf(stderr, "sshtool: run took %.0f ms, TCP_NODELAY %s\n", ms[r],
					ssh_nodelay(c) ? "on" : "off");
		}
		if (repeat > 1 && !rc) {
			stats_sort(ms, repeat);
			fprintf(stderr, "sshtool: %d runs, median %.0f ms, max %.0f ms\n", repeat,
				stats_median(ms, repeat), ms[repeat - 1]);
		}
		free(ms);
		if (execd)
			fprintf(stderr, "sshtool: via %s\n", ssh_via_execd(c) ? "execd" : "exec");
		if (execd && ssh_via_keeper(c))
			fprintf(stderr, "sshtool: via keeper\n");
	}
	ssh_disconnect(c);
	ssh_global_cleanup();
	strbuf_release(&err);
	if (fflush(stdout) || ferror(stdout))
		return 1;
	return rc;
}
