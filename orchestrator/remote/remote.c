/* remote.c -- a host's run over SSH through the host runner (remote.h).
 *
 * DESIGN
 * Every remote script here is a constant POSIX sh text; the only variable
 * parts are assignments at its top built with strbuf_add_shell_quoted, and
 * the whole is run as `sh -c 'SCRIPT'`, so the user's login shell (bash,
 * zsh, fish) does not matter. The start command's is start.sh, embedded
 * in the binary (start-script.h), where what it does is said. The runner
 * itself (runner.sh, embedded in the binary), the plan, the sources'
 * manifest and the blobs sent travel on the command's stdin (the blobs' tar
 * first, read by count; the text split by one awk at marker lines): no file
 * transfer of their own.
 *
 * One command per (re)attachment: unpack the blobs it carries (blobs.h),
 * list those the host still lacks when the content is absent (on an exec
 * channel, where a second command is a second login shell, it then waits
 * for them on the same stdin: remote_runner.on_missing), else
 * assemble it, write runner.sh and plan.sh (atomically), `runner.sh start`
 * (idempotent: "started PID", "running PID" or "finished"), then exec
 * `runner.sh follow RUNDIR OFFSET`, whose stdout is the journal. The start's
 * answers come first on stdout as "gpuorch-start: ..." lines, the last one
 * "gpuorch-start: runner ..."; anything before it (a chatty ~/.bashrc) is
 * dropped, everything after it is the journal.
 *
 * On a host with no kept probe the command probes first: the probe's lines,
 * then "gpuorch-start: probe end"; the controller plans from them and only
 * then writes the command's stdin (ssh_exec_talk): a line with a byte count,
 * that many bytes of the assignments above, then the stdin as above. */
#include "remote/remote.h"
#include "remote/runner-script.h"
#include "remote/execd-source.h"
#include "remote/agent-source.h"
#include "remote/start-script.h"
#include "core/hash.h"

#include <pthread.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/trace.h"
#include "core/banned.h"

#define REMOTE_KILL_TIMEOUT_MS 60000
#define SUN_PATH_MAX 107   /* sockaddr_un's sun_path less its NUL */

static const char kill_script[] =
	/* runner.sh, or only the agent's runner.agent (agent-attach.c) */
	"[ -f \"$rd/runner.sh\" ] || [ -s \"$rd/runner.agent\" ] || { echo \"no runner in $rd\" >&2; exit 3; }\n"
	/* the agent that started the run stops it (either would: one contract) */
	"if [ -s \"$rd/runner.agent\" ] && read -r ab < \"$rd/runner.agent\" && [ -x \"$ab\" ]; then\n"
	"  exec \"$ab\" kill \"$rd\"\n"
	"fi\n"
	"exec sh \"$rd/runner.sh\" kill \"$rd\"\n";

/* After probe-sig.sh: the kept probe holds, or nothing starts */
static const char sig_check[] =
	"if [ \"$sig\" != \"$expect_sig\" ]; then\n"
	"  echo 'gpuorch-start: probe stale'; cat > /dev/null; exit 5\n"
	"fi\n";

/* A shipped source's version: the first hex digits of its sha256. */
static void version_of(const unsigned char *src, size_t len, char out[EXECD_VERSION_LEN + 1])
{
	char hex[SHA256_HEX_LEN + 1];
	sha256_hex(src, len, hex);
	memcpy(out, hex, EXECD_VERSION_LEN);
	out[EXECD_VERSION_LEN] = '\0';
}

/* The agent's version (its sources'), computed once. */
static char agent_ver[EXECD_VERSION_LEN + 1];

static void agent_version_once(void)
{
	version_of(gpuorch_agent_src, gpuorch_agent_src_len, agent_ver);
}

const char *remote_agent_version(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, agent_version_once);
	return agent_ver;
}

/* The execd's version (its source's), computed once. */
static char execd_ver[EXECD_VERSION_LEN + 1];

static void execd_version_once(void)
{
	version_of(gpuorch_execd_c, gpuorch_execd_c_len, execd_ver);
}

/* "sh -c 'ASSIGNMENTS SCRIPT'" */
static void build_sh(struct strbuf *cmd, const struct strbuf *assign, const char *script)
{
	struct strbuf body = STRBUF_INIT;

	/* everything gpuorch writes on a host is its user's alone: 0700/0600 */
	strbuf_addstr(&body, "umask 077\n");
	strbuf_addstr(&body, assign->buf);
	strbuf_addstr(&body, script);
	strbuf_addstr(cmd, "sh -c ");
	strbuf_add_shell_quoted(cmd, body.buf);
	strbuf_release(&body);
}

static void assign(struct strbuf *sb, const char *var, const char *val)
{
	strbuf_addf(sb, "%s=", var);
	strbuf_add_shell_quoted(sb, val ? val : "");
	strbuf_addch(sb, '\n');
}

/* Splits the command's stdout: the start's lines, then the journal. */
struct follow_split {
	ssh_out_fn fn;
	void *ctx;
	struct remote_start_info *info;
	struct strbuf head;       /* stdout before the runner line */
	int passing;              /* the runner line was seen: the rest is the journal */
	/* probe first (remote_runner.probe_text): */
	struct remote_runner *r;
	uint64_t offset;
	int probing;              /* the probe's lines are still coming */
	struct strbuf probe_out;  /* its KEY=VALUE lines (and whatever a ~/.bashrc printed) */
	struct ssh_input *in;     /* the command's stdin, told once the probe is in */
	struct strbuf rest;       /* what it is told before the blobs (in's first part) */
	struct strbuf txt;        /* and after them */
	struct strbuf more;       /* the count of the blobs it asked for (on_missing) */
	int stopped;              /* on_probe said stop (1), on_missing failed (2) */
	struct strbuf ship_err;   /* on_missing's message */
};

static void start_line(struct remote_start_info *info, const char *v)
{
	if (!strcmp(v, "content unpacked"))
		info->content_unpacked = 1;
	else if (!strcmp(v, "content present"))
		info->content_present = 1;
	else if (!strcmp(v, "content absent"))
		info->content_absent = 1;
	else if (!strcmp(v, "probe stale"))
		info->probe_stale = 1;
	else if (!strncmp(v, "missing ", 8) && strlen(v + 8) == 64) {
		info->missing = xrealloc(info->missing, sizeof(*info->missing) * (size_t)(info->nmissing + 1));
		info->missing[info->nmissing++] = xstrdup(v + 8);
	}
	else if (!strcmp(v, "agent declines"))
		info->agent_declined = 1;
	else if (!strncmp(v, "agent /", 7))
		snprintf(info->agent, sizeof(info->agent), "%s", v + 6);
	else if (!strncmp(v, "execd ", 6))
		snprintf(info->execd, sizeof(info->execd), "%s", v + 6);
	else if (!strncmp(v, "disk short ", 11))
		info->disk_short_kib = strtoll(v + 11, NULL, 10) + 1;
	else if (!strncmp(v, "reopened ", 9))
		info->reopened = atoi(v + 9);
	else if (!strncmp(v, "runner ", 7))
		snprintf(info->runner, sizeof(info->runner), "%s", v + 7);
}

/* The command may ask for the blobs its content lacks (on_missing). */
static int asks(const struct remote_runner *r)
{
	return r->content_dir && r->on_missing;
}

static void add_follow_vars(struct strbuf *vars, const struct remote_runner *r, uint64_t offset,
			    size_t txtlen)
{
	char num[32];
	char *sock = r->execd_dir ? remote_execd_socket(r->execd_dir) : NULL;
	char ver[EXECD_VERSION_LEN + 1];

	assign(vars, "cdir", r->content_dir);
	assign(vars, "bdir", r->blobs_dir);
	assign(vars, "rd", r->run_dir);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)offset);
	assign(vars, "off", num);
	assign(vars, "send", r->plan ? "1" : "0");
	assign(vars, "reopen", r->plan && r->reopen ? "1" : "0");
	snprintf(num, sizeof(num), "%lld", r->plan && r->need_kib > 0 ? r->need_kib : 0LL);
	assign(vars, "need", num);
	snprintf(num, sizeof(num), "%zu", r->blobs ? r->blobs_len : 0);
	assign(vars, "tarlen", num);
	snprintf(num, sizeof(num), "%zu", txtlen);
	assign(vars, "txtlen", num);
	assign(vars, "ask", asks(r) ? "1" : "0");
	execd_version(ver);
	assign(vars, "xd", sock ? r->execd_dir : "");
	assign(vars, "xv", ver);
	assign(vars, "ad", r->agent_dir ? r->agent_dir : "");
	assign(vars, "av", remote_agent_version());
	snprintf(num, sizeof(num), "%d", r->execd_idle_s > 0 ? r->execd_idle_s : 1);
	assign(vars, "xidle", num);
	free(sock);
}

/* stdin's text as start.sh reads it (after the tar, txtlen bytes); the
 * bytes of the agent's sources in it into *agent */
static void add_follow_text(struct strbuf *in, const struct remote_runner *r, size_t *agent)
{
	*agent = 0;
	if (r->manifest)
		strbuf_addstr(in, r->manifest);
	if (r->plan) {
		strbuf_addstr(in, RUNNER_MARKER "\n");
		strbuf_add(in, gpuorch_runner_sh, gpuorch_runner_sh_len);
		if (in->len && in->buf[in->len - 1] != '\n')
			strbuf_addch(in, '\n');
		strbuf_addstr(in, PLAN_MARKER "\n");
		strbuf_addstr(in, r->plan);
		if (in->len && in->buf[in->len - 1] != '\n')
			strbuf_addch(in, '\n');
	}
	if (r->execd_dir) {
		strbuf_addstr(in, EXECD_MARKER "\n");
		strbuf_add(in, gpuorch_execd_c, gpuorch_execd_c_len);
		if (in->len && in->buf[in->len - 1] != '\n')
			strbuf_addch(in, '\n');
	}
	if (r->agent_dir && !r->agent_held) {
		strbuf_addstr(in, AGENT_MARKER "\n");
		strbuf_add(in, gpuorch_agent_src, gpuorch_agent_src_len);
		*agent = gpuorch_agent_src_len;
	}
}

/* The command's variables, into cmd_vars (the command itself) or, NULL,
 * onto its stdin by count (after the probe); then its stdin (fs->rest): the
 * tar of the blobs it carries, then the text. The stdin stays open while
 * the command may ask for more (on_missing). */
static void tell(struct follow_split *fs, struct strbuf *cmd_vars)
{
	struct strbuf vars = STRBUF_INIT;

	add_follow_text(&fs->txt, fs->r, &fs->info->agent_src_sent);
	add_follow_vars(&vars, fs->r, fs->offset, fs->txt.len);
	if (cmd_vars) {
		strbuf_add(cmd_vars, vars.buf, vars.len);
	} else {
		strbuf_addf(&fs->rest, "%zu\n", vars.len);
		strbuf_add(&fs->rest, vars.buf, vars.len);
	}
	/* the blobs as they are (the runner keeps them until the command
	 * ends): three parts, never one copy of them all */
	ssh_input_add(fs->in, fs->rest.buf, fs->rest.len);
	if (fs->r->blobs)
		ssh_input_add(fs->in, fs->r->blobs, fs->r->blobs_len);
	ssh_input_add(fs->in, fs->txt.buf, fs->txt.len);
	fs->in->more = asks(fs->r);
	strbuf_release(&vars);
}

/* The probe's output is in: the caller plans from it, and the command is
 * told the rest (its variables, by count, then its stdin). */
static int probe_done(struct follow_split *fs)
{
	fs->probing = 0;
	if (fs->r->on_probe(fs->probe_out.buf, fs->r, fs->r->ctx)) {
		fs->stopped = 1;
		return 1;
	}
	tell(fs, NULL);
	return 0;
}

/* The command waits for the blobs it named: their tar, by count, ends its stdin. */
static int send_missing(struct follow_split *fs)
{
	const unsigned char *tar = NULL;
	size_t len = 0;

	if (!fs->in->more)
		return 0;   /* it was told all there is (through the execd): it does not wait */
	if (fs->r->on_missing(fs->info->missing, fs->info->nmissing, &tar, &len, fs->r->ctx,
			      &fs->ship_err)) {
		fs->stopped = 2;
		return 1;
	}
	strbuf_addf(&fs->more, "%zu\n", len);
	/* tell() used three parts at most: two more fit (the tar is the
	 * runner's until the command ends) */
	if (ssh_input_add(fs->in, fs->more.buf, fs->more.len) || ssh_input_add(fs->in, tar, len)) {
		strbuf_addstr(&fs->ship_err, "the command's input has no room for them");
		fs->stopped = 2;
		return 1;
	}
	fs->in->more = 0;
	return 0;
}

/* A start line after which the command reads no more of its stdin. */
static int told_enough(const char *v)
{
	return !strcmp(v, "content present") || !strcmp(v, "content unpacked") ||
	       !strcmp(v, "content absent") || !strcmp(v, "probe stale") ||
	       !strcmp(v, "agent declines") ||
	       !strncmp(v, "disk short", 10) || !strncmp(v, "runner ", 7);
}

static int split_out(const char *data, size_t len, void *ctx)
{
	struct follow_split *fs = ctx;
	size_t start = 0, i;

	if (fs->passing || !len)
		return fs->fn(data, len, fs->ctx);
	strbuf_add(&fs->head, data, len);
	for (i = 0; i < fs->head.len && !fs->passing; i++) {
		if (fs->head.buf[i] != '\n')
			continue;
		fs->head.buf[i] = '\0';
		if (!strncmp(fs->head.buf + start, "gpuorch-start: ", 15)) {
			const char *v = fs->head.buf + start + 15;
			if (fs->probing && !strcmp(v, "probe end")) {
				if (probe_done(fs))
					return 1;
			} else if (!strcmp(v, "send missing")) {
				if (send_missing(fs))
					return 1;
			} else {
				start_line(fs->info, v);
				if (told_enough(v))
					fs->in->more = 0;
			}
			fs->passing = !strncmp(v, "runner ", 7);
		} else if (fs->probing) {
			strbuf_addstr(&fs->probe_out, fs->head.buf + start);
			strbuf_addch(&fs->probe_out, '\n');
		}
		start = i + 1;
	}
	if (fs->passing)
		return start < fs->head.len ? fs->fn(fs->head.buf + start, fs->head.len - start, fs->ctx)
					    : 0;
	if (start) {
		memmove(fs->head.buf, fs->head.buf + start, fs->head.len - start);
		strbuf_setlen(&fs->head, fs->head.len - start);
	}
	return 0;
}

/* The agent's own command will do (remote.h, no_attach): it is there, and
 * the command carries no blobs and no probe. */
static int attach_ok(const struct remote_runner *r)
{
	return r->agent_held && r->agent_dir && !r->no_attach && !r->probe_text &&
	       !(r->blobs && r->blobs_len);
}

static void arg(struct strbuf *cmd, const char *key, const char *val)
{
	struct strbuf kv = STRBUF_INIT;
	strbuf_addf(&kv, "%s=%s", key, val ? val : "");
	strbuf_addch(cmd, ' ');
	strbuf_add_shell_quoted(cmd, kv.buf);
	strbuf_release(&kv);
}

/* The held agent's command (orchestrator/host/agent-attach.c):
 *   exec sh -c 'umask 077; [ ! -x AGENT ] || exec AGENT attach KEY=VALUE...;
 *          ASSIGNMENTS; START.SH'
 * the variables start.sh gets, as arguments; its stdin start.sh's (of which
 * the agent keeps the plan). Where the agent's file is gone (a work
 * directory removed) the same shell runs start.sh: still one command, one
 * login shell at most (t1006). */
static void attach_cmd(struct follow_split *fs, struct strbuf *cmd)
{
	const struct remote_runner *r = fs->r;
	char num[32], ver[EXECD_VERSION_LEN + 1];
	char *sock = r->execd_dir ? remote_execd_socket(r->execd_dir) : NULL;
	struct strbuf ab = STRBUF_INIT, vars = STRBUF_INIT, body = STRBUF_INIT;

	tell(fs, &vars);   /* start.sh's stdin and assignments */
	strbuf_addf(&ab, "%s/gpuorch-agent-%s", r->agent_dir, remote_agent_version());
	strbuf_addstr(&body, "[ ! -x ");
	strbuf_add_shell_quoted(&body, ab.buf);
	strbuf_addstr(&body, " ] || exec ");
	strbuf_add_shell_quoted(&body, ab.buf);
	strbuf_addstr(&body, " attach");
	arg(&body, "rd", r->run_dir);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)fs->offset);
	arg(&body, "off", num);
	arg(&body, "send", r->plan ? "1" : "0");
	arg(&body, "reopen", r->plan && r->reopen ? "1" : "0");
	snprintf(num, sizeof(num), "%lld", r->plan && r->need_kib > 0 ? r->need_kib : 0LL);
	arg(&body, "need", num);
	arg(&body, "cdir", r->content_dir);
	arg(&body, "bdir", r->blobs_dir);
	snprintf(num, sizeof(num), "%zu", fs->txt.len);
	arg(&body, "txtlen", num);
	execd_version(ver);
	arg(&body, "xd", sock ? r->execd_dir : "");
	arg(&body, "xv", ver);
	snprintf(num, sizeof(num), "%d", r->execd_idle_s > 0 ? r->execd_idle_s : 1);
	arg(&body, "xidle", num);
	if (r->sig_script && r->expect_sig) {
		arg(&body, "sig", r->expect_sig);
		arg(&body, "cuda_home", r->sig_cuda_home);
		arg(&body, "python", r->sig_python);
		snprintf(num, sizeof(num), "%d", r->sig_gpu > 0 ? r->sig_gpu : 0);
		arg(&body, "gpu", num);
		assign(&vars, "expect_sig", r->expect_sig);
		strbuf_addstr(&vars, r->sig_script);
		strbuf_addstr(&vars, sig_check);
	}
	strbuf_addch(&body, '\n');
	strbuf_add(&body, vars.buf, vars.len);
	strbuf_addstr(cmd, "exec ");   /* the shell that runs it forks none */
	build_sh(cmd, &body, (const char *)gpuorch_start_sh);
	strbuf_release(&ab);
	strbuf_release(&vars);
	strbuf_release(&body);
	free(sock);
}

/* The agent's command left the start to start.sh: it said so (exit 8), or
 * the agent is gone (the shell's 126/127 before any start line). */
static int declined(struct remote_start_info *info, const struct ssh_exec_result *res)
{
	if (res->signal[0])
		return 0;
	if (res->exit_code == 8 && info->agent_declined)
		return 1;
	if ((res->exit_code == 126 || res->exit_code == 127) && !info->runner[0])
		return info->agent_declined = 1;
	return 0;
}

/* The command's end as the caller sees it: what failed, or GO_OK (with
 * info->agent_declined when the agent left the start to start.sh). */
static enum go_status follow_end(enum go_status st, struct follow_split *fs,
				 const struct ssh_exec_result *res, const struct strbuf *eout,
				 int attach, struct strbuf *err)
{
	if (fs->stopped == 2)
		st = go_fail(err, GO_ERR_IO, "cannot send the files the host asked for: %s",
			     fs->ship_err.buf);
	else if (fs->stopped)
		st = go_fail(err, GO_ERR_INTERRUPTED, "stopped after the host probe");
	else if (!st && attach && declined(fs->info, res))
		;   /* the caller runs start.sh */
	else if (!st && !res->signal[0] && res->exit_code == 4)
		st = go_fail(err, GO_ERR_NOT_FOUND, "the sources are not on the host yet ('%s')",
			     fs->r->content_dir);
	else if (!st && !res->signal[0] && res->exit_code == 7 && fs->info->disk_short_kib)
		st = go_fail(err, GO_ERR_REMOTE, "not enough free disk in '%s' for the run: %lld KiB "
			     "free", fs->r->run_dir, fs->info->disk_short_kib - 1);
	else if (!st && !res->signal[0] && res->exit_code == 5)
		st = go_fail(err, GO_ERR_NOT_FOUND, "the host changed since its probe was kept");
	else if (!st && fs->probing) {
		struct strbuf how = STRBUF_INIT;
		ssh_exec_add_end(&how, res);
		st = go_fail(err, GO_ERR_REMOTE, "the host probe did not complete (%s)%s%s", how.buf,
			     eout->len ? ": " : "", eout->buf);
		strbuf_release(&how);
	} else if (!st && (res->signal[0] || res->exit_code != 0)) {
		struct strbuf how = STRBUF_INIT;
		ssh_exec_add_end(&how, res);
		st = go_fail(err, GO_ERR_REMOTE, "cannot start or follow the runner in '%s' (%s): %s",
			     fs->r->run_dir, how.buf, eout->len ? eout->buf : "no message");
		strbuf_release(&how);
	}
	return st;
}

static enum go_status follow_once(struct ssh_conn *c, struct remote_runner *r, uint64_t offset,
				  ssh_out_fn on_out, void *ctx, int timeout_ms,
				  struct remote_start_info *info, struct strbuf *err, int attach)
{
	struct strbuf vars = STRBUF_INIT, cmd = STRBUF_INIT, eout = STRBUF_INIT;
	struct ssh_exec_result res;
	struct ssh_input talk;
	struct follow_split fs;
	enum go_status st;

	memset(info, 0, sizeof(*info));
	memset(&fs, 0, sizeof(fs));
	memset(&talk, 0, sizeof(talk));
	talk.more = 1;
	fs.fn = on_out;
	fs.ctx = ctx;
	fs.info = info;
	fs.r = r;
	fs.offset = offset;
	fs.in = &talk;
	strbuf_init(&fs.head, 0);
	strbuf_init(&fs.probe_out, 0);
	strbuf_init(&fs.rest, 0);
	strbuf_init(&fs.txt, 0);
	strbuf_init(&fs.more, 0);
	strbuf_init(&fs.ship_err, 0);
	eout.max = 64 * 1024;
	if (attach) {
		attach_cmd(&fs, &cmd);
		trace_label("start and follow");
		st = ssh_exec_offer(c, cmd.buf, &talk, split_out, &fs, &eout, &res, timeout_ms, err);
	} else if (r->probe_text) {
		/* the probe (its own tools never read the stdin that is still
		 * to come), then the variables by count, then the run */
		fs.probing = 1;
		strbuf_addstr(&vars, "( ");
		strbuf_addstr(&vars, r->probe_text);
		strbuf_addstr(&vars, ") </dev/null || { echo \"the host probe failed (exit $?)\" >&2; exit 6; }\n"
				     "echo 'gpuorch-start: probe end'\n"
				     "IFS= read -r n && v=$(head -c \"$n\") && eval \"$v\" ||\n"
				     "  { echo 'the rest of the start command did not come' >&2; exit 1; }\n");
		build_sh(&cmd, &vars, (const char *)gpuorch_start_sh);
		trace_label("start and follow");
		st = ssh_exec_talk(c, cmd.buf, &talk, split_out, &fs, &eout, &res, timeout_ms, err);
	} else {
		tell(&fs, &vars);
		if (r->sig_script && r->expect_sig) {
			/* its answer first: the controller ends the stdin it drains */
			assign(&vars, "expect_sig", r->expect_sig);
			strbuf_addstr(&vars, r->sig_script);
			strbuf_addstr(&vars, sig_check);
		}
		build_sh(&cmd, &vars, (const char *)gpuorch_start_sh);
		trace_label("start and follow");
		st = ssh_exec_offer(c, cmd.buf, &talk, split_out, &fs, &eout, &res, timeout_ms, err);
	}
	strbuf_trim(&eout);
	st = follow_end(st, &fs, &res, &eout, attach, err);
	info->probe_unanswered = fs.probing;
	info->attached = attach;
	strbuf_release(&vars);
	strbuf_release(&cmd);
	strbuf_release(&eout);
	strbuf_release(&fs.ship_err);
	strbuf_release(&fs.head);
	strbuf_release(&fs.probe_out);
	strbuf_release(&fs.rest);
	strbuf_release(&fs.txt);
	strbuf_release(&fs.more);
	return st;
}

enum go_status remote_runner_follow(struct ssh_conn *c, struct remote_runner *r,
				    uint64_t offset, ssh_out_fn on_out, void *ctx, int timeout_ms,
				    struct remote_start_info *info, struct strbuf *err)
{
	enum go_status st;

	if (attach_ok(r)) {
		st = follow_once(c, r, offset, on_out, ctx, timeout_ms, info, err, 1);
		if (!info->agent_declined)
			return st;
		remote_start_info_release(info);
		strbuf_reset(err);
		st = follow_once(c, r, offset, on_out, ctx, timeout_ms, info, err, 0);
		info->agent_declined = 1;
		return st;
	}
	return follow_once(c, r, offset, on_out, ctx, timeout_ms, info, err, 0);
}

void execd_version(char out[EXECD_VERSION_LEN + 1])
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, execd_version_once);
	memcpy(out, execd_ver, EXECD_VERSION_LEN + 1);
}

char *remote_execd_socket(const char *execd_dir)
{
	char ver[EXECD_VERSION_LEN + 1];
	char *sock;
	execd_version(ver);
	sock = xstrfmt("%s/%s.sock", execd_dir, ver);
	if (execd_dir[0] != '/' || strlen(sock) > SUN_PATH_MAX) {
		free(sock);
		return NULL;
	}
	return sock;
}

void remote_start_info_release(struct remote_start_info *info)
{
	int i;
	for (i = 0; i < info->nmissing; i++)
		free(info->missing[i]);
	free(info->missing);
	memset(info, 0, sizeof(*info));
}

enum go_status remote_runner_kill(struct ssh_conn *c, const char *run_dir, struct strbuf *err)
{
	struct strbuf vars = STRBUF_INIT, cmd = STRBUF_INIT, out = STRBUF_INIT, eout = STRBUF_INIT;
	struct ssh_exec_result res;
	enum go_status st;

	assign(&vars, "rd", run_dir);
	build_sh(&cmd, &vars, kill_script);
	out.max = 4096;
	eout.max = 4096;
	trace_label("kill");
	st = ssh_exec(c, cmd.buf, NULL, 0, &out, &eout, &res, REMOTE_KILL_TIMEOUT_MS, err);
	strbuf_trim(&out);
	strbuf_trim(&eout);
	if (!st && (res.signal[0] || res.exit_code != 0 || strcmp(out.buf, "killed"))) {
		struct strbuf how = STRBUF_INIT;
		ssh_exec_add_end(&how, &res);
		st = go_fail(err, res.exit_code == 3 ? GO_ERR_NOT_FOUND : GO_ERR_REMOTE,
			     "cannot stop the runner in '%s' (%s): %s", run_dir, how.buf,
			     eout.len ? eout.buf : out.len ? out.buf : "no message");
		strbuf_release(&how);
	}
	strbuf_release(&vars);
	strbuf_release(&cmd);
	strbuf_release(&out);
	strbuf_release(&eout);
	return st;
}

/* A file over max keeps its head and its tail (a program's result is its
 * last line) with one line between them saying what was dropped. */
static const char keep_script[] =
	"[ -f \"$f\" ] || { echo \"no file '$f' on the host\" >&2; exit 3; }\n"
	"s=$(wc -c < \"$f\")\n"
	"if [ \"$s\" -le \"$m\" ]; then exec cat \"$f\"; fi\n"
	"head -c \"$h\" \"$f\"\n"
	"printf '\\n" REMOTE_DROPPED_MARK " %s bytes of %s dropped here: the first and the last %s are kept]\\n' "
	"$((s - 2 * h)) \"$s\" \"$h\"\n"
	"tail -c \"$h\" \"$f\"\n";

enum go_status remote_fetch_kept(struct ssh_conn *c, const char *path, size_t max,
				 int timeout_ms, struct strbuf *out, struct strbuf *err)
{
	struct strbuf vars = STRBUF_INIT, cmd = STRBUF_INIT, eout = STRBUF_INIT;
	struct ssh_exec_result res;
	size_t omax = out->max;
	char num[32];
	enum go_status st;

	assign(&vars, "f", path);
	snprintf(num, sizeof(num), "%zu", max);
	assign(&vars, "m", num);
	snprintf(num, sizeof(num), "%zu", max / 2);
	assign(&vars, "h", num);
	build_sh(&cmd, &vars, keep_script);
	/* the head, the tail and the line between them; beyond that the cap
	 * marks the text truncated (a file that grew while it was read) */
	if (!out->max || out->len + max + 256 < out->max)
		out->max = out->len + max + 256;
	eout.max = 4096;
	trace_label("fetch");
	st = ssh_exec(c, cmd.buf, NULL, 0, out, &eout, &res, timeout_ms, err);
	out->max = omax;
	strbuf_trim(&eout);
	if (!st && (res.signal[0] || res.exit_code != 0)) {
		struct strbuf how = STRBUF_INIT;
		ssh_exec_add_end(&how, &res);
		st = go_fail(err, res.exit_code == 3 ? GO_ERR_NOT_FOUND : GO_ERR_REMOTE,
			     "cannot read '%s' (%s): %s", path, how.buf, eout.len ? eout.buf : "no message");
		strbuf_release(&how);
	}
	strbuf_release(&vars);
	strbuf_release(&cmd);
	strbuf_release(&eout);
	return st;
}

/* The file's size on a line, then all of it (at most m bytes) or its first
 * and its last h = m/2 bytes. */
static const char stream_script[] =
	"[ -f \"$f\" ] || { echo \"no file '$f' on the host\" >&2; exit 3; }\n"
	"s=$(wc -c < \"$f\") && echo $s || exit 1\n"
	"if [ \"$s\" -le \"$m\" ]; then exec cat \"$f\"; fi\n"
	"head -c \"$h\" \"$f\" && tail -c \"$h\" \"$f\"\n";

struct stream_state {
	const struct remote_stream_sink *sink;
	struct strbuf sizeline;
	int have_size;
	uint64_t size, max, half, seen, extra;
};

static int stream_out(const char *data, size_t len, void *ctx)
{
	struct stream_state *ss = ctx;
	if (!data)
		return 0;
	while (len && !ss->have_size) {
		char *end;
		if (*data == '\n') {
			ss->size = strtoull(ss->sizeline.buf, &end, 10);
			ss->have_size = ss->sizeline.len && *end == '\0';
			if (!ss->have_size)
				return 1;   /* not a size: stop */
			if (ss->sink->on_size)
				ss->sink->on_size(ss->size, ss->sink->ctx);
		} else if (ss->sizeline.len < 32) {
			strbuf_addch(&ss->sizeline, *data);
		}
		data++;
		len--;
	}
	while (len) {
		uint64_t want = ss->size <= ss->max ? ss->size : 2 * ss->half;
		uint64_t upto = want, n;
		if (ss->size > ss->max && ss->seen < ss->half)
			upto = ss->half;
		if (ss->seen >= want) {
			ss->extra += len;   /* the file grew while it was read */
			return 0;
		}
		n = upto - ss->seen < len ? upto - ss->seen : len;
		ss->sink->on_data(data, (size_t)n, ss->sink->ctx);
		ss->seen += n;
		data += n;
		len -= (size_t)n;
		if (ss->size > ss->max && ss->seen == ss->half && ss->sink->on_gap)
			ss->sink->on_gap(ss->size - 2 * ss->half, ss->sink->ctx);
	}
	return 0;
}

enum go_status remote_fetch_stream(struct ssh_conn *c, const char *path, uint64_t max,
				   int timeout_ms, const struct remote_stream_sink *sink,
				   struct strbuf *err)
{
	struct strbuf vars = STRBUF_INIT, cmd = STRBUF_INIT, eout = STRBUF_INIT;
	struct stream_state ss;
	struct ssh_exec_result res;
	char num[32];
	enum go_status st;

	memset(&ss, 0, sizeof(ss));
	ss.sink = sink;
	ss.max = max;
	ss.half = max / 2;
	strbuf_init(&ss.sizeline, 0);
	assign(&vars, "f", path);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)max);
	assign(&vars, "m", num);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)ss.half);
	assign(&vars, "h", num);
	build_sh(&cmd, &vars, stream_script);
	eout.max = 4096;
	trace_label("fetch stream");
	st = ssh_exec_stream(c, cmd.buf, NULL, 0, stream_out, &ss, &eout, &res, timeout_ms, err);
	strbuf_trim(&eout);
	if (st == GO_ERR_INTERRUPTED && !ss.have_size)
		st = go_fail(err, GO_ERR_REMOTE, "cannot read '%s': its size came as '%s'", path,
			     ss.sizeline.buf);
	else if (!st && (res.signal[0] || res.exit_code != 0)) {
		struct strbuf how = STRBUF_INIT;
		ssh_exec_add_end(&how, &res);
		st = go_fail(err, res.exit_code == 3 ? GO_ERR_NOT_FOUND : GO_ERR_REMOTE,
			     "cannot read '%s' (%s): %s", path, how.buf, eout.len ? eout.buf : "no message");
		strbuf_release(&how);
	} else if (!st && (!ss.have_size ||
			   ss.seen < (ss.size <= max ? ss.size : 2 * ss.half))) {
		st = go_fail(err, GO_ERR_REMOTE, "cannot read '%s': %llu of its %llu bytes came", path,
			     (unsigned long long)ss.seen, (unsigned long long)ss.size);
	} else if (!st && ss.extra && sink->on_gap) {
		sink->on_gap(ss.extra, sink->ctx);   /* what it grew by was not read */
	}
	strbuf_release(&ss.sizeline);
	strbuf_release(&vars);
	strbuf_release(&cmd);
	strbuf_release(&eout);
	return st;
}

void remote_dropped_line(struct strbuf *sb, uint64_t dropped, uint64_t size, uint64_t kept)
{
	strbuf_addf(sb, "\n" REMOTE_DROPPED_MARK " %llu bytes of %llu dropped here: the first and "
		    "the last %llu are kept]\n", (unsigned long long)dropped,
		    (unsigned long long)size, (unsigned long long)kept);
}

void remote_end_from_event(const cJSON *ev, struct remote_status *st)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(ev, "status");
	const cJSON *rc = cJSON_GetObjectItemCaseSensitive(ev, "rc");
	const char *status = cJSON_IsString(s) ? s->valuestring : "";
	int v = cJSON_IsNumber(rc) ? rc->valueint : -1;

	memset(st, 0, sizeof(*st));
	if (!strcmp(status, "timeout")) {
		st->end = REMOTE_TIMED_OUT;
		st->exit_code = 124;
	} else if (!strcmp(status, "lock-timeout")) {
		st->end = REMOTE_LOCK_TIMEOUT;
		st->exit_code = 75;
	} else if (!strcmp(status, "killed")) {
		st->end = REMOTE_KILLED;
		st->exit_code = v;
		if (v > 128 && v < 128 + 65)
			st->signal = v - 128;
	} else if (!strcmp(status, "exited") && v >= 0) {
		if (v > 128 && v < 128 + 65) {
			st->end = REMOTE_SIGNALED;
			st->signal = v - 128;
		} else {
			st->end = REMOTE_EXITED;
		}
		st->exit_code = v;
	} else {
		/* "lost", or anything this controller does not know */
		st->end = REMOTE_VANISHED;
	}
}

static const char *signal_name(int sig)
{
	static const char *const names[] = {
		NULL, "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL",
		"USR1", "SEGV", "USR2", "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT",
		"STOP", "TSTP", "TTIN", "TTOU", "URG", "XCPU", "XFSZ", "VTALRM", "PROF",
		"WINCH", "IO", "PWR", "SYS"
	};
	if (sig > 0 && sig < (int)(sizeof(names) / sizeof(names[0])))
		return names[sig];
	return NULL;
}

void remote_describe(const struct remote_status *st, struct strbuf *sb)
{
	switch (st->end) {
	case REMOTE_RUNNING:
		strbuf_addstr(sb, "running");
		break;
	case REMOTE_EXITED:
		strbuf_addf(sb, "exit %d", st->exit_code);
		break;
	case REMOTE_SIGNALED: {
		const char *name = signal_name(st->signal);
		if (name)
			strbuf_addf(sb, "signal %d (%s)", st->signal, name);
		else
			strbuf_addf(sb, "signal %d", st->signal);
		break;
	}
	case REMOTE_TIMED_OUT:
		strbuf_addstr(sb, "timeout");
		break;
	case REMOTE_LOCK_TIMEOUT:
		strbuf_addstr(sb, "lock timeout");
		break;
	case REMOTE_VANISHED:
		strbuf_addstr(sb, "vanished");
		break;
	case REMOTE_KILLED: {
		const char *name = signal_name(st->signal);
		if (st->signal)
			strbuf_addf(sb, "signal %d (%s), stopped by the runner", st->signal,
				    name ? name : "?");
		else
			strbuf_addstr(sb, "killed by the runner");
		break;
	}
	}
}
