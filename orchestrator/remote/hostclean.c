/* hostclean.c -- the one remote command that cleans a host's work directory (hostclean.h). */
#include "remote/hostclean.h"
#include "remote/remote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

#define CLEAN_TIMEOUT_MS 300000

/* Each running execd (W/execd/V.sock whose lock is held) loses its socket:
 * it takes no new command and exits within a second (gpuorch-execd.c: "when
 * its socket is removed"); commands it runs now finish. Variable dry (1/0):
 * say, do not remove. Prints "gpuorch-clean: stopped 0 SOCK" for each. */
#define STOP_EXECDS \
	"for s in execd/*.sock; do\n" \
	"  [ -S \"$s\" ] || continue\n" \
	"  [ -f \"$s.lock\" ] && ! flock -n \"$s.lock\" true 2>/dev/null || continue\n" \
	"  if [ \"$dry\" = 1 ] || rm -f \"$s\"; then echo \"gpuorch-clean: stopped 0 $s\"; fi\n" \
	"done\n"

/* Variables first: w (work dir), m (minutes), dry (1/0). Each removal prints
 * "gpuorch-clean: KIND KIB PATH"; live content dirs "gpuorch-clean: live PATH". */
static const char clean_script[] =
	"export LC_ALL=C\n"
	"cd \"$w\" 2>/dev/null || { echo 'gpuorch-clean: done'; exit 0; }\n"
	"old() { [ -e \"$1\" ] && [ -n \"$(find \"$1\" -maxdepth 0 -mmin +\"$m\" 2>/dev/null)\" ]; }\n"
	"gone() {\n"
	"  k=$(du -sk \"$2\" 2>/dev/null | cut -f1)\n"
	"  if [ \"$dry\" = 1 ] || rm -rf \"$2\"; then echo \"gpuorch-clean: $1 ${k:-0} $2\"; fi\n"
	"}\n"
	"live=' '\n"
	"for r in runs/*; do\n"
	"  [ -d \"$r\" ] || continue\n"
	"  if [ -f \"$r/runner.lock\" ] && ! flock -n \"$r/runner.lock\" true 2>/dev/null; then\n"
	"    c=$(sed -n \"s|^src_dir '\\(.*\\)/src'\\$|\\1|p\" \"$r/plan.sh\" 2>/dev/null | head -n 1)\n"
	"    live=\"$live${c##*/} $(grep -o 'builds/[0-9a-f]*' \"$r/plan.sh\" 2>/dev/null | sed 's|^builds/||' | tr '\\n' ' ')\"\n"
	"    live=\"$live$(grep -o 'gpuorch_obj [0-9a-f]*' \"$r/plan.sh\" 2>/dev/null | sed 's|^gpuorch_obj ||' | tr '\\n' ' ')\"\n"
	"    continue\n"
	"  fi\n"
	"  [ -z \"$(find \"$r\" -mindepth 1 -maxdepth 1 -mmin -\"$m\" 2>/dev/null | head -n 1)\" ] && old \"$r\" && gone run \"$r\"\n"
	"done\n"
	"keep=$(mktemp \"${TMPDIR:-/tmp}/gpuorch-keep.XXXXXX\") || exit 1\n"
	"for c in content/*; do\n"
	"  [ -d \"$c\" ] || continue\n"
	"  case $live in *\" ${c##*/} \"*) echo \"gpuorch-clean: live $c\"; cat \"$c/manifest\" >>\"$keep\" 2>/dev/null; continue;; esac\n"
	"  if [ -f \"$c/.complete\" ]; then t=\"$c/.complete\"; else t=$c; fi\n"
	"  if old \"$t\"; then gone content \"$c\"; else cat \"$c/manifest\" >>\"$keep\" 2>/dev/null; fi\n"
	"done\n"
	/* kb: the object lists (BUILD/objects) of the builds that stay */
	"kb=\n"
	"for b in builds/*; do\n"
	"  [ -d \"$b\" ] || continue\n"
	"  case $live in *\" ${b##*/} \"*) kb=\"$kb $b/objects\"; continue;; esac\n"
	"  if [ -f \"$b/rc\" ]; then t=\"$b/rc\"; else t=$b; fi\n"
	"  if old \"$t\"; then gone build \"$b\"; else kb=\"$kb $b/objects\"; fi\n"
	"done\n"
	"[ -z \"$kb\" ] || live=\"$live $(cat $kb 2>/dev/null | tr '\\n' ' ') \"\n"
	/* objects (W/objects/KEY.o, touched on every reuse) that neither a live
	 * run nor a build that stays was made from, with their replayed outputs
	 * and lock; then a killed compile's temporaries and lone locks */
	"for f in objects/*.o; do\n"
	"  [ -f \"$f\" ] || continue\n"
	"  k=${f#objects/}; k=${k%.o}\n"
	"  case $live in *\" $k \"*) continue;; esac\n"
	"  old \"$f\" && gone object \"$f\" && { [ \"$dry\" = 1 ] || rm -f \"objects/$k.out\" \"objects/$k.err\" \"objects/$k.lock\"; }\n"
	"done\n"
	"for f in objects/*; do\n"
	"  case $f in *.o) continue;; *.lock) [ ! -e \"${f%.lock}.o\" ] || continue;; *.out|*.err) [ ! -e \"${f%.*}.o\" ] || continue;; esac\n"
	"  [ -f \"$f\" ] && old \"$f\" && [ \"$dry\" != 1 ] && rm -f \"$f\"\n"
	"done\n"
	"if [ -d blobs ]; then\n"
	"  awk '{ print $1 }' \"$keep\" | sort -u >\"$keep.s\"\n"
	"  ls blobs | sort | comm -23 - \"$keep.s\" | while read -r h; do gone blob \"blobs/$h\"; done\n"
	"fi\n"
	"rm -f \"$keep\" \"$keep.s\"\n"
	STOP_EXECDS
	/* an execd version not running (its lock free) whose source beside it
	 * (touched whenever it is started) is old: binary, source, socket */
	"for x in execd/gpuorch-execd-*.c; do\n"
	"  [ -f \"$x\" ] || continue\n"
	"  b=${x%.c}; v=${b##*/gpuorch-execd-}\n"
	"  if [ -f \"execd/$v.sock.lock\" ] && ! flock -n \"execd/$v.sock.lock\" true 2>/dev/null; then continue; fi\n"
	"  old \"$x\" || continue\n"
	"  k=$(du -skc \"$b\" \"$x\" 2>/dev/null | tail -n 1 | cut -f1)\n"
	"  if [ \"$dry\" = 1 ] || rm -f \"$b\" \"$x\" \"$b.log\" \"$b.failed\" \"$b.build\" \"execd/$v.sock\" \"execd/$v.sock.lock\"; then\n"
	"    echo \"gpuorch-clean: execd ${k:-0} $b\"\n"
	"  fi\n"
	"done\n"
	/* a host agent of another version than this gpuorch's (av), old, and
	 * named by no run that is running (RD/runner.agent): binary, log, marks */
	"for b in agent/gpuorch-agent-*; do\n"
	"  [ -f \"$b\" ] || continue\n"
	"  case ${b##*/gpuorch-agent-} in *.*) continue;; \"$av\") continue;; esac\n"
	"  old \"$b\" || continue\n"
	"  u=0\n"
	"  for r in runs/*; do\n"
	"    [ -s \"$r/runner.agent\" ] && [ -f \"$r/runner.lock\" ] || continue\n"
	"    flock -n \"$r/runner.lock\" true 2>/dev/null && continue\n"
	"    [ \"$(cat \"$r/runner.agent\")\" != \"$w/$b\" ] || u=1\n"
	"  done\n"
	"  [ $u = 0 ] || continue\n"
	"  k=$(du -sk \"$b\" 2>/dev/null | cut -f1)\n"
	"  if [ \"$dry\" = 1 ] || rm -rf \"$b\" \"$b.log\" \"$b.failed\" \"$b.build\" \"$b\".src.*; then\n"
	"    echo \"gpuorch-clean: agent ${k:-0} $b\"\n"
	"  fi\n"
	"done\n"
	"echo 'gpuorch-clean: done'\n";

static void assign(struct strbuf *sb, const char *var, const char *val)
{
	strbuf_addf(sb, "%s=", var);
	strbuf_add_shell_quoted(sb, val);
	strbuf_addch(sb, '\n');
}

/* Run `sh -c BODY` on the host: its stdout in out; an exit other than 0 is
 * an error "cannot WHAT 'workdir' (how): stderr". */
static enum go_status run_script(struct ssh_conn *c, const char *body, const char *what,
				 const char *workdir, struct strbuf *out, struct strbuf *err)
{
	struct strbuf cmd = STRBUF_INIT, eout = STRBUF_INIT;
	struct ssh_exec_result xr;
	enum go_status st;

	strbuf_addstr(&cmd, "sh -c ");
	strbuf_add_shell_quoted(&cmd, body);
	out->max = 16 << 20;
	eout.max = 64 * 1024;
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
	strbuf_addstr(&body, clean_script);
	st = run_script(c, body.buf, "clean", workdir, &out, err);
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

/* The script of hostclean_execds: W/execd's running servers, stopped or
 * (dry) counted. */
static const char execds_script[] =
	"cd \"$w\" 2>/dev/null || { echo 'gpuorch-clean: done'; exit 0; }\n"
	STOP_EXECDS
	"echo 'gpuorch-clean: done'\n";

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
	strbuf_addstr(&body, execds_script);
	st = run_script(c, body.buf, stop ? "stop the execds of" : "list the execds of", workdir,
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
