/* guard.c -- install, feed and disarm the watchdog on an instance (guard.h).
 *
 * The guard is a POSIX sh loop (guard.sh, embedded in the binary:
 * guard-script.h) started detached with setsid. Every poll it checks, in
 * this order: disarmed (heartbeat file gone) or replaced (pid file names
 * another guard) -> exit quietly; max lifetime passed -> fire; a step or
 * build running (a pgid file under W without an rc beside it, whose
 * session leader is alive) -> that counts as activity; no heartbeat and no
 * activity for idle_s -> fire. Firing writes W/guard/fired ("idle T" or
 * "max_lifetime T") first, then runs W/guard/action. Times are the
 * instance's own clock on both sides (heartbeat mtime vs date +%s). */
#include "cloud/guard.h"
#include "cloud/guard-script.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/trace.h"
#include "core/banned.h"

#define GUARD_CMD_TIMEOUT_MS 30000

/* "G=<workdir>/guard" as a shell assignment (relative workdirs are
 * relative to the login directory, where SSH commands start). */
static void add_guard_dir(struct strbuf *cmd, const struct host *h)
{
	char *w = host_workdir(h, ".");
	struct strbuf g = STRBUF_INIT;
	strbuf_addf(&g, "%s/guard", w);
	strbuf_addstr(cmd, "G=");
	strbuf_add_shell_quoted(cmd, g.buf);
	strbuf_addstr(cmd, "; ");
	strbuf_release(&g);
	free(w);
}

static enum go_status exec_checked(struct ssh_conn *c, const struct host *h, const char *cmd,
				   const char *what, struct strbuf *out, struct strbuf *err)
{
	struct strbuf eo = STRBUF_INIT;
	struct ssh_exec_result res;
	enum go_status st;
	memset(&res, 0, sizeof(res));
	trace_label("guard");
	st = ssh_exec(c, cmd, NULL, 0, out, &eo, &res, GUARD_CMD_TIMEOUT_MS, err);
	if (st == GO_OK && (res.signal[0] || res.exit_code != 0)) {
		struct strbuf end = STRBUF_INIT;
		ssh_exec_add_end(&end, &res);
		strbuf_trim(&eo);
		st = go_fail(err, GO_ERR_REMOTE, "%s: cannot %s the instance guard (%s)%s%.*s",
			     h->name, what, end.buf, eo.len ? ": " : "",
			     (int)strcspn(eo.buf, "\n"), eo.buf);
		strbuf_release(&end);
	}
	strbuf_release(&eo);
	return st;
}

double guard_beat_interval_s(const struct instance *in)
{
	double s = in->idle_stop_min * 60.0 / 4.0;
	if (in->idle_stop_min <= 0)
		s = 60;
	return s < 1 ? 1 : s > 60 ? 60 : s;
}

enum go_status guard_install(struct ssh_conn *c, const struct host *h,
			     const struct instance *in, struct strbuf *err)
{
	return guard_install_left(c, h, in, in->max_lifetime_min * 60.0, err);
}

enum go_status guard_install_left(struct ssh_conn *c, const struct host *h,
				  const struct instance *in, double life_left_s, struct strbuf *err)
{
	struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	long idle = (long)(in->idle_stop_min * 60.0 + 0.5);
	long life = in->max_lifetime_min > 0 ? (long)(life_left_s + 0.5) : 0;
	long poll = idle > 0 ? idle / 10 : 15;
	enum go_status st;

	if (in->max_lifetime_min > 0 && life < 1)
		life = 1;   /* the cap has passed: fire at the first look */
	if (life > 0 && life / 10 < poll)
		poll = life / 10;
	if (poll < 1)
		poll = 1;
	if (poll > 15)
		poll = 15;
	add_guard_dir(&cmd, h);
	strbuf_addstr(&cmd, "mkdir -p \"$G\" && G=$(cd \"$G\" && pwd) && "
			    "command -v setsid >/dev/null && rm -f \"$G/fired\" \"$G/pid\" && ");
	strbuf_addf(&cmd, "echo %ld >\"$G/idle_s\" && echo %ld >\"$G/poll_s\" && ", idle, poll);
	if (life > 0) {
		/* the deadline on the controller's clock, where the instance's agrees
		 * with it within a minute (the SSH command's own latency is not added
		 * to the cap); else the instance's own clock plus what is left */
		long sent = (long)time(NULL);
		strbuf_addf(&cmd, "now=$(date +%%s) && d=%ld && s=$((now - %ld)) && "
			    "{ [ $s -le 60 ] && [ $s -ge -60 ] || d=$((now + %ld)); } && "
			    "echo $d >\"$G/deadline\" && ", sent + life, sent, life);
	} else {
		strbuf_addstr(&cmd, "echo 0 >\"$G/deadline\" && ");
	}
	strbuf_addstr(&cmd, "printf '%s\\n' ");
	strbuf_add_shell_quoted(&cmd, in->guard_action);
	strbuf_addstr(&cmd, " >\"$G/action\" && touch \"$G/heartbeat\" && "
			    "(setsid sh -c ");
	strbuf_add_shell_quoted(&cmd, (const char *)gpuorch_guard_sh);
	strbuf_addstr(&cmd, " gpuorch-guard \"$G\" </dev/null >/dev/null 2>&1 &) && i=0 && "
			    "while [ ! -s \"$G/pid\" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; "
			    "cat \"$G/pid\"");
	st = exec_checked(c, h, cmd.buf, "install", &out, err);
	if (st == GO_OK && !out.len)
		st = go_fail(err, GO_ERR_REMOTE, "%s: the instance guard did not start within 10 s "
			     "(is setsid there?)", h->name);
	strbuf_release(&cmd);
	strbuf_release(&out);
	return st;
}

enum go_status guard_beat(struct ssh_conn *c, const struct host *h, int *fired,
			  struct strbuf *err)
{
	struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	enum go_status st;
	add_guard_dir(&cmd, h);
	strbuf_addstr(&cmd, "if [ -f \"$G/fired\" ]; then echo fired; "
			    "elif [ -f \"$G/heartbeat\" ]; then touch \"$G/heartbeat\" && echo ok; "
			    "else echo disarmed; fi");
	st = exec_checked(c, h, cmd.buf, "feed", &out, err);
	*fired = st == GO_OK && !strncmp(out.buf, "fired", 5);
	strbuf_release(&cmd);
	strbuf_release(&out);
	return st;
}

enum go_status guard_alive(struct ssh_conn *c, const struct host *h, int *alive,
			   struct strbuf *err)
{
	struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	enum go_status st;
	add_guard_dir(&cmd, h);
	strbuf_addstr(&cmd, "p=; read -r p <\"$G/pid\" 2>/dev/null; "
			    "if [ -n \"$p\" ] && [ -f \"$G/heartbeat\" ] && kill -0 \"$p\" 2>/dev/null; "
			    "then echo alive; else echo none; fi");
	st = exec_checked(c, h, cmd.buf, "look at", &out, err);
	*alive = st == GO_OK && !strncmp(out.buf, "alive", 5);
	strbuf_release(&cmd);
	strbuf_release(&out);
	return st;
}

enum go_status guard_disarm(struct ssh_conn *c, const struct host *h, struct strbuf *err)
{
	struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	enum go_status st;
	add_guard_dir(&cmd, h);
	strbuf_addstr(&cmd, "p=; read -r p <\"$G/pid\" 2>/dev/null; rm -f \"$G/heartbeat\" \"$G/pid\"; "
			    "[ -n \"$p\" ] && kill \"$p\" 2>/dev/null; exit 0");
	st = exec_checked(c, h, cmd.buf, "disarm", &out, err);
	strbuf_release(&cmd);
	strbuf_release(&out);
	return st;
}
