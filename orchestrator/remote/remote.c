/* remote.c -- steps that run detached on a host and survive the SSH link.
 *
 * DESIGN
 * Every remote script here is a constant POSIX sh text; the only variable
 * parts are assignments at its top built with strbuf_add_shell_quoted, and
 * the whole is run as `sh -c 'SCRIPT'` so the user's login shell (bash, zsh,
 * fish) does not matter.
 *
 * remote_step_start() sends the step's command on stdin into DIR/cmd, then
 * starts WRAPPER under setsid in the background, its stdio on /dev/null, so
 * the exec channel closes at once and nothing ties the step to the SSH
 * connection. The wrapper (session leader, sid = its pid, saved in
 * DIR/pgid):
 *   - optionally takes the GPU lock with flock -w WAIT -E 75; the command
 *     marks DIR/locked once it holds it, so "75 without DIR/locked" means
 *     the lock wait ran out, and a command exiting 75 is still an exit;
 *   - runs `timeout -k 5 T sh DIR/cmd` (timeout(1) puts itself and the
 *     command in their own process group and kills that group at T);
 *   - when the command has ended, SIGKILLs whatever the step left behind in
 *     its session (background grandchildren, processes that changed their
 *     process group), so no process of a step outlives its rc; with the GPU
 *     lock this is done while the lock is still held, and DIR/t_end is
 *     stamped then too, so nothing of one step runs (or is recorded as
 *     running) once the next step on that GPU has the lock;
 *   - writes rc last and atomically (rc.tmp, mv): the exit status, or
 *     "timeout" (124/137 and T seconds elapsed), or "lock-timeout".
 * remote_step_poll() is one exec of a bounded server-side loop; it answers
 * "rc=...", "running", "vanished" (no rc and no process left in the
 * session; zombies do not count, since a host's init may be slow to reap
 * them) or "missing". remote_step_kill() TERMs the session but its
 * leader (so the wrapper records the end), then KILLs everything left and
 * checks that nothing remains. */
#include "remote/remote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

#define REMOTE_EXEC_MARGIN_MS 20000
#define REMOTE_OUTPUT_TIMEOUT_MS 60000

static const char wrapper_script[] =
	"d=$1; t=$2; lock=$3; lw=$4\n"
	"echo $$ > \"$d/pgid\"\n"
	"if [ -n \"$lock\" ]; then\n"
	"  flock -w \"$lw\" -E 75 \"$lock\" sh -c '\n"
	"    date +%s > \"$1/locked\"; date +%s.%N > \"$1/t_run\"\n"
	"    timeout -k 5 \"$2\" sh \"$1/cmd\"; r=$?\n"
	"    for p in $(ps -eo pid=,sid= | awk -v s=\"$3\" -v a=$$ -v b=$PPID \"\\$2 == s && \\$1 != s && \\$1 != a && \\$1 != b {print \\$1}\"); do\n"
	"      kill -KILL \"$p\" 2>/dev/null\n"
	"    done\n"
	"    date +%s.%N > \"$1/t_end\"; exit $r' gpuorch-locked \"$d\" \"$t\" $$ > \"$d/stdout\" 2> \"$d/stderr\"\n"
	"  rc=$?\n"
	"  if [ ! -s \"$d/locked\" ] && [ \"$rc\" = 75 ]; then rc=lock-timeout; fi\n"
	"  start=$(cat \"$d/locked\" 2>/dev/null)\n"
	"else\n"
	"  start=$(date +%s)\n"
	"  date +%s.%N > \"$d/t_run\"\n"
	"  timeout -k 5 \"$t\" sh \"$d/cmd\" > \"$d/stdout\" 2> \"$d/stderr\"\n"
	"  rc=$?\n"
	"fi\n"
	"[ -s \"$d/t_end\" ] || date +%s.%N > \"$d/t_end\"\n"
	"if [ \"$rc\" = 124 ] || [ \"$rc\" = 137 ]; then\n"
	"  if [ -n \"$start\" ] && [ $(( $(date +%s) - start )) -ge \"$t\" ]; then rc=timeout; fi\n"
	"fi\n"
	"for p in $(ps -eo pid=,sid= | awk -v s=$$ '$2 == s && $1 != s {print $1}'); do\n"
	"  kill -KILL \"$p\" 2>/dev/null\n"
	"done\n"
	"echo \"$rc\" > \"$d/rc.tmp\" && mv -f \"$d/rc.tmp\" \"$d/rc\"\n";

/* Idempotent: the first start of a step directory claims it with an atomic
 * mkdir of .launch and launches the wrapper; a start asked again (after the
 * link dropped during the first) only waits for that wrapper's pgid, so a
 * step never runs twice. */
static const char start_script[] =
	"mkdir -p \"$d\" || exit 1\n"
	"d=$(cd \"$d\" && pwd) || exit 1\n"
	"for tool in setsid timeout ps; do\n"
	"  command -v $tool >/dev/null 2>&1 || { echo \"'$tool' is not installed on the host\" >&2; exit 1; }\n"
	"done\n"
	"if [ -n \"$lock\" ]; then\n"
	"  command -v flock >/dev/null 2>&1 || { echo \"'flock' is not installed on the host\" >&2; exit 1; }\n"
	"fi\n"
	"if mkdir \"$d/.launch\" 2>/dev/null; then\n"
	"  rm -f \"$d/rc\" \"$d/rc.tmp\" \"$d/pgid\" \"$d/stdout\" \"$d/stderr\" \"$d/locked\"\n"
	"  cat > \"$d/cmd\" || exit 1\n"
	"  if [ -n \"$cwd\" ]; then cd \"$cwd\" || exit 1; fi\n"
	"  setsid sh -c \"$wrapper\" gpuorch-step \"$d\" \"$t\" \"$lock\" \"$lw\" < /dev/null > /dev/null 2>&1 &\n"
	"else\n"
	"  cat > /dev/null\n"
	"fi\n"
	"i=0\n"
	"while [ ! -s \"$d/pgid\" ] && [ ! -f \"$d/rc\" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done\n"
	"if [ -s \"$d/pgid\" ]; then echo \"started $(cat \"$d/pgid\")\"; exit 0; fi\n"
	"echo 'the step wrapper did not start within 10 s' >&2\n"
	"exit 1\n";

static const char poll_script[] =
	"alive() { ps -eo sid=,stat= | awk -v s=\"$1\" '$1 == s && $2 !~ /^Z/ {f=1} END {exit !f}'; }\n"
	"i=0\n"
	"while :; do\n"
	"  if [ -f \"$d/rc\" ]; then echo \"rc=$(cat \"$d/rc\")\"; exit 0; fi\n"
	"  if [ ! -s \"$d/pgid\" ]; then echo missing; exit 0; fi\n"
	"  if ! alive \"$(cat \"$d/pgid\")\"; then\n"
	"    if [ -f \"$d/rc\" ]; then echo \"rc=$(cat \"$d/rc\")\"; else echo vanished; fi\n"
	"    exit 0\n"
	"  fi\n"
	"  if [ $i -ge \"$n\" ]; then echo running; exit 0; fi\n"
	"  sleep 0.2\n"
	"  i=$((i+1))\n"
	"done\n";

static const char kill_script[] =
	"if [ ! -s \"$d/pgid\" ]; then echo missing; exit 0; fi\n"
	"sid=$(cat \"$d/pgid\")\n"
	"list() { ps -eo pid=,sid=,stat= | awk -v s=\"$sid\" -v all=\"$1\" '$2 == s && $3 !~ /^Z/ && (all || $1 != s) {print $1}'; }\n"
	"waitgone() {\n"
	"  i=0\n"
	"  while [ -n \"$(list 1)\" ] && [ $i -lt \"$1\" ]; do sleep 0.1; i=$((i+1)); done\n"
	"}\n"
	"p=$(list 0); [ -n \"$p\" ] && kill -TERM $p 2>/dev/null\n"
	"waitgone 30\n"
	"p=$(list 1); [ -n \"$p\" ] && kill -KILL $p 2>/dev/null\n"
	"waitgone 30\n"
	"p=$(list 1)\n"
	"if [ -n \"$p\" ]; then echo \"survivors:\" $p; exit 1; fi\n"
	"if [ ! -f \"$d/rc\" ]; then echo 137 > \"$d/rc.tmp\" && mv -f \"$d/rc.tmp\" \"$d/rc\"; fi\n"
	"echo killed\n";

/* "sh -c 'ASSIGNMENTS SCRIPT'" */
static void build_sh(struct strbuf *cmd, const struct strbuf *assign, const char *script)
{
	struct strbuf body = STRBUF_INIT;

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

/* Run a helper script; fails unless it exits 0. */
static enum go_status run_script(struct ssh_conn *c, const char *cmd, const void *in, size_t inlen,
				 struct strbuf *out, int timeout_ms, const char *what,
				 const char *dir, struct strbuf *err)
{
	struct strbuf eout = STRBUF_INIT;
	struct ssh_exec_result r;
	enum go_status st;

	out->max = 64 * 1024;
	eout.max = 4096;
	st = ssh_exec(c, cmd, in, inlen, out, &eout, &r, timeout_ms, err);
	if (!st && (r.signal[0] || r.exit_code != 0)) {
		strbuf_trim(&eout);
		strbuf_trim(out);
		if (r.signal[0])
			st = go_fail(err, GO_ERR_REMOTE, "cannot %s step '%s': killed by signal %s",
				     what, dir, r.signal);
		else
			st = go_fail(err, GO_ERR_REMOTE, "cannot %s step '%s': %s (exit %d)", what, dir,
				     eout.len ? eout.buf : out->len ? out->buf : "no message",
				     r.exit_code);
	}
	strbuf_release(&eout);
	return st;
}

enum go_status remote_step_start(struct ssh_conn *c, const struct remote_step *s,
				 struct strbuf *err)
{
	struct strbuf vars = STRBUF_INIT, cmd = STRBUF_INIT, out = STRBUF_INIT;
	struct strbuf text = STRBUF_INIT;
	char num[32];
	enum go_status st;

	if (!s->dir || !*s->dir || !s->command)
		return go_fail(err, GO_ERR_INTERNAL, "remote_step_start: no directory or command");
	if (s->timeout_s <= 0)
		return go_fail(err, GO_ERR_INTERNAL, "remote_step_start: timeout must be positive");
	assign(&vars, "d", s->dir);
	assign(&vars, "cwd", s->cwd);
	snprintf(num, sizeof(num), "%d", s->timeout_s);
	assign(&vars, "t", num);
	assign(&vars, "lock", s->lock_path);
	snprintf(num, sizeof(num), "%d", s->lock_wait_s > 0 ? s->lock_wait_s : 0);
	assign(&vars, "lw", num);
	assign(&vars, "wrapper", wrapper_script);
	build_sh(&cmd, &vars, start_script);

	strbuf_addstr(&text, s->command);
	strbuf_addch(&text, '\n');
	st = run_script(c, cmd.buf, text.buf, text.len, &out, 30000, "start", s->dir, err);
	if (!st && strncmp(out.buf, "started ", 8))
		st = go_fail(err, GO_ERR_REMOTE, "cannot start step '%s': unexpected answer '%s'",
			     s->dir, out.buf);
	strbuf_release(&vars);
	strbuf_release(&cmd);
	strbuf_release(&out);
	strbuf_release(&text);
	return st;
}

static void parse_rc(const char *rc, struct remote_status *st)
{
	char *end;
	long v;

	st->exit_code = 0;
	st->signal = 0;
	if (!strcmp(rc, "timeout")) {
		st->end = REMOTE_TIMED_OUT;
		st->exit_code = 124;
		return;
	}
	if (!strcmp(rc, "lock-timeout")) {
		st->end = REMOTE_LOCK_TIMEOUT;
		st->exit_code = 75;
		return;
	}
	v = strtol(rc, &end, 10);
	if (end == rc || *end) {
		/* an unreadable rc: the wrapper did not finish writing it */
		st->end = REMOTE_VANISHED;
		return;
	}
	if (v > 128 && v < 128 + 65) {
		st->end = REMOTE_SIGNALED;
		st->signal = (int)(v - 128);
		st->exit_code = (int)v;
		return;
	}
	st->end = REMOTE_EXITED;
	st->exit_code = (int)v;
}

enum go_status remote_step_poll(struct ssh_conn *c, const char *dir, int wait_ms,
				struct remote_status *st, struct strbuf *err)
{
	struct strbuf vars = STRBUF_INIT, cmd = STRBUF_INIT, out = STRBUF_INIT;
	char num[32];
	enum go_status rc;

	memset(st, 0, sizeof(*st));
	st->end = REMOTE_RUNNING;
	if (wait_ms < 0)
		wait_ms = 0;
	assign(&vars, "d", dir);
	snprintf(num, sizeof(num), "%d", wait_ms / 200);
	assign(&vars, "n", num);
	build_sh(&cmd, &vars, poll_script);
	rc = run_script(c, cmd.buf, NULL, 0, &out, wait_ms + REMOTE_EXEC_MARGIN_MS, "poll", dir, err);
	if (!rc) {
		strbuf_trim(&out);
		if (!strncmp(out.buf, "rc=", 3))
			parse_rc(out.buf + 3, st);
		else if (!strcmp(out.buf, "running"))
			st->end = REMOTE_RUNNING;
		else if (!strcmp(out.buf, "vanished"))
			st->end = REMOTE_VANISHED;
		else if (!strcmp(out.buf, "missing"))
			rc = go_fail(err, GO_ERR_NOT_FOUND,
				     "no step in '%s' on the host (never started, or its directory was removed)",
				     dir);
		else
			rc = go_fail(err, GO_ERR_REMOTE, "cannot poll step '%s': unexpected answer '%s'",
				     dir, out.buf);
	}
	strbuf_release(&vars);
	strbuf_release(&cmd);
	strbuf_release(&out);
	return rc;
}

enum go_status remote_step_kill(struct ssh_conn *c, const char *dir, struct strbuf *err)
{
	struct strbuf vars = STRBUF_INIT, cmd = STRBUF_INIT, out = STRBUF_INIT;
	enum go_status st;

	assign(&vars, "d", dir);
	build_sh(&cmd, &vars, kill_script);
	st = run_script(c, cmd.buf, NULL, 0, &out, REMOTE_EXEC_MARGIN_MS, "kill", dir, err);
	if (!st) {
		strbuf_trim(&out);
		if (!strcmp(out.buf, "missing"))
			st = go_fail(err, GO_ERR_NOT_FOUND, "no step in '%s' on the host to kill", dir);
		else if (strcmp(out.buf, "killed"))
			st = go_fail(err, GO_ERR_REMOTE, "cannot kill step '%s': unexpected answer '%s'",
				     dir, out.buf);
	}
	strbuf_release(&vars);
	strbuf_release(&cmd);
	strbuf_release(&out);
	return st;
}

enum go_status remote_step_output(struct ssh_conn *c, const char *dir, struct strbuf *out,
				  struct strbuf *errout, size_t max, struct strbuf *err)
{
	struct strbuf vars = STRBUF_INIT, cmd = STRBUF_INIT;
	struct ssh_exec_result r;
	char num[32];
	size_t omax = out->max, emax = errout->max;
	enum go_status st;

	if (!max)
		max = (size_t)64 << 20;
	assign(&vars, "d", dir);
	snprintf(num, sizeof(num), "%zu", max);
	assign(&vars, "m", num);
	snprintf(num, sizeof(num), "%zu", max / 2);
	assign(&vars, "h", num);
	/* A file over max keeps its head and its tail (the program's result is
	 * its last line) with one line between them saying what was dropped. */
	build_sh(&cmd, &vars,
		 "[ -d \"$d\" ] || { echo \"no step directory '$d'\"; exit 3; }\n"
		 "keep() {\n"
		 "  [ -f \"$1\" ] || return 0\n"
		 "  s=$(wc -c < \"$1\")\n"
		 "  if [ \"$s\" -le \"$m\" ]; then cat \"$1\"; return 0; fi\n"
		 "  head -c \"$h\" \"$1\"\n"
		 "  printf '\\n" REMOTE_DROPPED_MARK " %s bytes of %s dropped here: the first and the last %s are kept]\\n' "
		 "$((s - 2 * h)) \"$s\" \"$h\"\n"
		 "  tail -c \"$h\" \"$1\"\n"
		 "}\n"
		 "keep \"$d/stdout\"\n"
		 "keep \"$d/stderr\" >&2\n"
		 "exit 0\n");
	/* the head, the tail and the line between them; a cap beyond that marks
	 * the output truncated (a file that grew while it was read) */
	if (!out->max || out->len + max + 256 < out->max)
		out->max = out->len + max + 256;
	if (!errout->max || errout->len + max + 256 < errout->max)
		errout->max = errout->len + max + 256;
	st = ssh_exec(c, cmd.buf, NULL, 0, out, errout, &r, REMOTE_OUTPUT_TIMEOUT_MS, err);
	out->max = omax;
	errout->max = emax;
	if (!st && r.signal[0])
		st = go_fail(err, GO_ERR_REMOTE, "cannot read the output of step '%s': killed by signal %s",
			     dir, r.signal);
	else if (!st && r.exit_code == 3)
		st = go_fail(err, GO_ERR_NOT_FOUND, "no step directory '%s' on the host", dir);
	else if (!st && r.exit_code != 0)
		st = go_fail(err, GO_ERR_REMOTE, "cannot read the output of step '%s' (exit %d)",
			     dir, r.exit_code);
	strbuf_release(&vars);
	strbuf_release(&cmd);
	return st;
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
	}
}
