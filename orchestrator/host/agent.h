/* agent.h -- gpuorch-agent, the host runner as a C program: the declarations
 * its files share. It implements orchestrator/remote/runner.sh's contract
 * (docs/runner.md): the same commands, run directory files, plan format and
 * journal lines. Only libc; built on a host with
 *   cc -O2 -o gpuorch-agent orchestrator/host/agent-*.c
 * (every .c file of this folder). */
#ifndef GPUORCH_AGENT_H
#define GPUORCH_AGENT_H

/* pipe2, signalfd, dprintf: built as `cc -O2` too, with no -D */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stddef.h>
#include <sys/types.h>

#define AGENT_VERSION 1
#define GRACE_S 10 /* a claimed item with no pgid after this long never started */

/* ---- a growing string (agent-util.c) ---- */
struct sb {
	char *buf;
	size_t len, cap;
};
void sb_add(struct sb *s, const char *p, size_t n);
void sb_adds(struct sb *s, const char *p);
void sb_addf(struct sb *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_free(struct sb *s);
char *xfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xstrdup(const char *s);
void *xrealloc(void *p, size_t n);
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* ---- files and clocks (agent-util.c, agent-files.c) ---- */
void xclose(int fd);
int exists(const char *path);
int is_file(const char *path);
int nonempty(const char *path);
int first_line(const char *path, char *buf, size_t size); /* 0: read (trimmed) */
int write_file(const char *path, const char *data, size_t len);
int write_atomic(const char *path, const char *tmp, const char *data);
int touch_file(const char *path);
int mkdir_p(const char *path);
int rm_rf(const char *path);
int read_all(const char *path, struct sb *out);
void now_str(char *buf, size_t size); /* date +%s.%N */
long now_s(void);
void sleep_ms(long ms);
int flock_wait(int fd, long seconds); /* 0: locked; -1: timed out or failed */
int open_lock(const char *path);
int held(const char *rd); /* 1: a runner holds RD/runner.lock */

/* ---- JSON and the journal (agent-journal.c) ---- */
void json_esc(struct sb *out, const char *s, size_t n);
void json_str(struct sb *out, const char *s);
void text_field(struct sb *out, const char *file, const char *name);
void ev(const char *name, const char *fields);
void ev_again(const char *name, const char *fields);

/* ---- the plan (agent-plan.c, agent-words.c) ---- */
struct build {
	char *id, *dir, *bin, *cmd;
	long t;
	int mayfail;
	pid_t pid;   /* its wrapper, while this runner waits for it */
	int killed;  /* this runner (or kill) stopped it */
	int running; /* in the build phase's running set */
};
struct step {
	char *id, *dir, *lock, *build, *cmd;
	long t, lw;
};
struct plan {
	char *version, *src, *plater;
	long maxb;
	int failfast;
	long textcap;
	struct build *b;
	int nb;
	struct step *s;
	int ns;
	struct sb err; /* the plan's mistakes, "; "-separated */
};
struct words {
	char **w;
	int n;
};
/* next_command: the next command of TEXT from *POS as words; 1: one, 0: the
 * end, -1: not a plan line (ERR says why, with LINE). */
int next_command(const char *text, size_t *pos, int *line, struct words *out, struct sb *err);
void words_free(struct words *w);
void plan_read(struct plan *p, const char *path);
void plan_free(struct plan *p);

/* ---- the run's state ---- */
struct agent {
	const char *rd;
	char *jpath;
	int jfd;
	char evt[40];       /* the last clock reading (ev_again) */
	const char *stop;   /* NULL, "killed" or "error" */
	char *msg;
	int killcmd;        /* in `kill` */
	int sigfd;          /* signalfd of TERM/INT/HUP/CHLD, -1 outside `run` */
	int bfailed;
	struct plan plan;
};
extern struct agent A;

/* ---- processes (agent-proc.c, agent-sweep.c) ---- */
int alive(pid_t sid);
int members(pid_t sid, int all, pid_t *out, int max);
void sweep(pid_t sid, pid_t keep);
void msweep(const char *dir);
void kill_item(const char *dir);
int stale(const char *dir);
void close_fds_from(int lowest);

/* ---- the item's own process and its start (agent-item.c, agent-spawn.c) ---- */
void item_main(const char *dir, long t, const char *lock, long lw, const char *cwd)
	__attribute__((noreturn));
int spawn(const char *dir, long t, const char *lock, long lw, const char *cmd, pid_t *pid);

/* ---- waiting and signals (agent-wait.c) ---- */
void signals_open(void);
int wait_events(long ms); /* handles signals; 1: a child ended */
void reap_children(void);
int child_gone(pid_t pid);

/* ---- the run (agent-build.c, agent-step.c, agent-end.c, agent-run.c) ---- */
void end_fields(const char *dir, int killed, struct sb *ef, struct sb *etf, const char **est,
		char *erc, size_t ercsize);
void build_end(int i);
void build_done(int i, const char *status);
void phase_builds(void);
void emit_later(void);
void run_steps(void);
void kill_builds(void);
void on_signal(const char *name);
int cmd_run(const char *rd, int hsfd);
int cmd_start(const char *rd);
int cmd_follow(const char *rd, const char *offset);
int cmd_kill(const char *rd);
int cmd_reopen(const char *rd);
int cmd_attach(const char *self, int argc, char **argv); /* agent-attach.c */

/* ---- the host's signature (agent-sig.c): probe-sig.sh's $sig; empty
 * without a boot id ---- */
void host_sig(struct sb *out, const char *cuda_home, const char *python, int gpu);
int cmd_sig(int argc, char **argv);

/* ---- a content's sources from the blob store (agent-tree.c) ---- */
/* tree_lacks: how many blobs MANIFEST names that BDIR does not hold as
 * sent (0: all there; without SAY it stops at the first), -1 MANIFEST is
 * not one; SAY: each said on stdout ("gpuorch-start: missing H"), one
 * changed there removed first */
int tree_lacks(const char *bdir, const char *manifest, int say);
/* tree_make: CDIR/manifest, CDIR/src, CDIR/tree.txt, CDIR/.complete last;
 * 0, or -1 with the path and the reason in ERR (no src/ left) */
int tree_make(const char *cdir, const char *bdir, const char *manifest, struct sb *err);
char *builds_path(int i); /* RD/.builds/<i> (1-based, as runner.sh) */
int owned(const char *dir); /* DIR/owner names this run */

#endif
