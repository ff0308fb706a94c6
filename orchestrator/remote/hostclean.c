/* hostclean.c -- the one remote command that cleans a host's work directory
 * (hostclean.h): clean.sh, embedded in the binary (clean-script.h), with its
 * variables in lines before it. */
#include "remote/hostclean.h"
#include "remote/clean-script.h"
#include "remote/remote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/trace.h"
#include "core/banned.h"

#define CLEAN_TIMEOUT_MS 300000

static void assign(struct strbuf *sb, const char *var, const char *val)
{
	strbuf_addf(sb, "%s=", var);
	strbuf_add_shell_quoted(sb, val);
	strbuf_addch(sb, '\n');
}

/* Run `sh -c 'VARS clean.sh'` on the host: its stdout in out; an exit
 * other than 0 is an error "cannot WHAT 'workdir' (how): stderr". */
static enum go_status run_script(struct ssh_conn *c, struct strbuf *vars, const char *what,
				 const char *workdir, struct strbuf *out, struct strbuf *err)
{
	struct strbuf cmd = STRBUF_INIT, eout = STRBUF_INIT;
	struct ssh_exec_result xr;
	enum go_status st;

	strbuf_add(vars, gpuorch_clean_sh, gpuorch_clean_sh_len);
	strbuf_addstr(&cmd, "sh -c ");
	strbuf_add_shell_quoted(&cmd, vars->buf);
	out->max = 16 << 20;
	eout.max = 64 * 1024;
	trace_label("clean");
	st = ssh_exec(c, cmd.buf, NULL, 0, out, &eout, &xr, CLEAN_TIMEOUT_MS, err);
	strbuf_trim(&eout);
	if (st == GO_OK && (xr.signal[0] || xr.exit_code != 0)) {
		struct strbuf how = STRBUF_INIT;
		ssh_exec_add_end(&how, &xr);
		st = go_fail(err, GO_ERR_REMOTE, "cannot %s '%s' (%s): %s", what, workdir, how.buf,
			     eout.len ? eout.buf : "no message");
		strbuf_release(&how);
	}
	strbuf_release(&cmd);
	strbuf_release(&eout);
	return st;
}

enum go_status hostclean_run(struct ssh_conn *c, const char *workdir, long older_than_min,
			     int dry_run, struct hostclean_result *res, struct strbuf *log,
			     struct strbuf *err)
{
	struct strbuf body = STRBUF_INIT, out = STRBUF_INIT;
	char num[32], *line, *save = NULL;
	enum go_status st;
	int done = 0;

	memset(res, 0, sizeof(*res));
	assign(&body, "w", workdir);
	snprintf(num, sizeof(num), "%ld", older_than_min);
	assign(&body, "m", num);
	assign(&body, "dry", dry_run ? "1" : "0");
	assign(&body, "av", remote_agent_version());
	assign(&body, "what", "clean");
	st = run_script(c, &body, "clean", workdir, &out, err);
	for (line = st == GO_OK ? strtok_r(out.buf, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		char kind[16], path[4096];
		long long kib;
		if (strncmp(line, "gpuorch-clean: ", 15))
			continue;   /* a chatty ~/.bashrc */
		line += 15;
		if (!strcmp(line, "done")) {
			done = 1;
		} else if (!strncmp(line, "live ", 5)) {
			res->kept_live++;
			strbuf_addf(log, "kept (a live run uses it): %s\n", line + 5);
		} else if (sscanf(line, "%15s %lld %4095[^\n]", kind, &kib, path) == 3) {
			int *n = !strcmp(kind, "run") ? &res->runs : !strcmp(kind, "content") ? &res->contents
				 : !strcmp(kind, "build") ? &res->builds : !strcmp(kind, "blob") ? &res->blobs
				 : !strcmp(kind, "execd") ? &res->execds
				 : !strcmp(kind, "agent") ? &res->agents
				 : !strcmp(kind, "stopped") ? &res->execds_stopped
				 : !strcmp(kind, "object") ? &res->objects : NULL;
			if (n)
				(*n)++;
			res->kib += kib;
			if (!strcmp(kind, "stopped"))
				strbuf_addf(log, "%s the execd at %s\n", dry_run ? "would stop" : "stopped", path);
			else
				strbuf_addf(log, "%s %s (%lld KiB)\n", dry_run ? "would remove" : "removed",
					    path, kib);
		}
	}
	if (st == GO_OK && !done)
		st = go_fail(err, GO_ERR_REMOTE, "cleaning '%s' ended before it said done", workdir);
	strbuf_release(&body);
	strbuf_release(&out);
	return st;
}

enum go_status hostclean_execds(struct ssh_conn *c, const char *workdir, int stop, int *n,
				struct strbuf *err)
{
	struct strbuf body = STRBUF_INIT, out = STRBUF_INIT;
	char *line, *save = NULL;
	enum go_status st;
	int done = 0;

	*n = 0;
	assign(&body, "w", workdir);
	assign(&body, "dry", stop ? "0" : "1");
	assign(&body, "what", "execds");
	st = run_script(c, &body, stop ? "stop the execds of" : "list the execds of", workdir,
			&out, err);
	for (line = st == GO_OK ? strtok_r(out.buf, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strcmp(line, "gpuorch-clean: done"))
			done = 1;
		else if (!strncmp(line, "gpuorch-clean: stopped ", 23))
			(*n)++;
	}
	if (st == GO_OK && !done)
		st = go_fail(err, GO_ERR_REMOTE, "listing the execds of '%s' ended before it said done",
			     workdir);
	strbuf_release(&body);
	strbuf_release(&out);
	return st;
}
