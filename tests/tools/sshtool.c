/* sshtool.c -- a small CLI over ssh.h, remote.h and probe.h for the shell tests.
 *
 *   sshtool [options] COMMAND ARGS...
 *     --address A (127.0.0.1)  --port N  --user U ($USER)  --key FILE
 *     --known-hosts FILE  --accept-new  --label NAME (test)
 *     --connect-timeout-ms N (5000)  --timeout-ms N (30000)
 *   commands:
 *     check                      connect, print "fingerprint SHA256:..."
 *     exec CMD                   stdin is sent; remote stdout/stderr copied;
 *                                exits with the remote exit code, or prints
 *                                "sshtool: signal NAME" and exits 99
 *     upload LOCAL REMOTE        prints "sent N"
 *     download REMOTE LOCAL [MAX]
 *     step-start DIR CMD TIMEOUT_S [CWD [LOCK LOCKWAIT_S]]
 *     step-poll DIR WAIT_MS      prints remote_describe(), e.g. "exit 3"
 *     step-kill DIR
 *     step-output DIR MAX        stdout to stdout, stderr to stderr
 *     probe [WORKDIR [CUDA_HOME]]  prints the info JSON
 * An error prints "error: MESSAGE" and exits 10 + the go_status number
 * (GO_ERR_CONNECT 16, GO_ERR_HOSTKEY 17, GO_ERR_AUTH 18, GO_ERR_SSH 19,
 * GO_ERR_TIMEOUT 20, GO_ERR_REMOTE 21, GO_ERR_NOT_FOUND 22). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "transport/ssh.h"
#include "remote/remote.h"
#include "remote/probe.h"
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
		"check|exec|upload|download|step-start|step-poll|step-kill|step-output|probe ...\n");
	exit(2);
}

static void read_stdin(struct strbuf *sb)
{
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0)
		strbuf_add(sb, buf, n);
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
		struct remote_step s = { 0 };
		s.dir = argv[1];
		s.command = argv[2];
		s.timeout_s = atoi(argv[3]);
		s.cwd = argc >= 5 ? argv[4] : NULL;
		if (argc == 7) {
			s.lock_path = argv[5];
			s.lock_wait_s = atoi(argv[6]);
		}
		st = remote_step_start(c, &s, err);
		return st ? fail(st, err) : 0;
	}
	if (!strcmp(cmd, "step-poll") && argc == 3) {
		struct remote_status rs;
		struct strbuf d = STRBUF_INIT;
		st = remote_step_poll(c, argv[1], atoi(argv[2]), &rs, err);
		if (st)
			return fail(st, err);
		remote_describe(&rs, &d);
		printf("%s\n", d.buf);
		strbuf_release(&d);
		return 0;
	}
	if (!strcmp(cmd, "step-kill") && argc == 2) {
		st = remote_step_kill(c, argv[1], err);
		return st ? fail(st, err) : 0;
	}
	if (!strcmp(cmd, "step-output") && argc == 3) {
		struct strbuf out = STRBUF_INIT, eout = STRBUF_INIT;
		st = remote_step_output(c, argv[1], &out, &eout, (size_t)strtoull(argv[2], NULL, 10), err);
		fwrite(out.buf, 1, out.len, stdout);
		fwrite(eout.buf, 1, eout.len, stderr);
		if (out.truncated)
			printf("\n[stdout truncated]\n");
		strbuf_release(&out);
		strbuf_release(&eout);
		return st ? fail(st, err) : 0;
	}
	if (!strcmp(cmd, "probe") && argc <= 3) {
		struct host_info hi;
		cJSON *j;
		char *text;
		st = probe_host(c, argc == 3 ? argv[2] : NULL, NULL, argc >= 2 ? argv[1] : NULL, 0, &hi, err);
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

	o.label = "test";
	o.address = "127.0.0.1";
	o.port = 22;
	o.user = getenv("USER") ? getenv("USER") : "root";
	o.connect_timeout_ms = 5000;
	for (i = 1; i < argc && !strncmp(argv[i], "--", 2); i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--accept-new")) {
			o.accept_new_hostkey = 1;
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
		rc = run(c, argc - i, argv + i, timeout_ms, &err);
	}
	ssh_disconnect(c);
	ssh_global_cleanup();
	strbuf_release(&err);
	if (fflush(stdout) || ferror(stdout))
		return 1;
	return rc;
}
