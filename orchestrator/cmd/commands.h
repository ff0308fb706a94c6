/* commands.h -- the table of gpuorch's subcommands.
 *
 * To add a command: write cmd-<name>.c defining `const struct cmd_entry
 * cmd_<name>_entry` (name, usage, summary, exec), declare it below and add
 * one row to the table in main.c. Every command answers -h/--help with its
 * usage (exit 0); bad usage prints what was not understood and the usage
 * (exit 2). exec returns the process exit code (docs/exit-codes.md). */
#ifndef GPUORCH_COMMANDS_H
#define GPUORCH_COMMANDS_H

/* What a command needs before it runs (git's RUN_SETUP, tmux's cmd_entry
 * flags): main.c initialises libssh2 only for a command that connects. */
enum cmd_needs {
	CMD_NEEDS_SSH = 1 << 0,      /* it connects to hosts over SSH */
	CMD_NEEDS_REPORTS = 1 << 1,  /* it reads or writes the reports directory */
};

struct cmd_entry {
	const char *name;
	const char *usage;     /* full usage text, first line "usage: gpuorch ..." */
	const char *summary;   /* one line for `gpuorch help` */
	int (*exec)(int argc, char **argv);
	unsigned needs;        /* enum cmd_needs bits */
};

extern const struct cmd_entry cmd_run_entry;
extern const struct cmd_entry cmd_hosts_entry;
extern const struct cmd_entry cmd_runs_entry;
extern const struct cmd_entry cmd_report_entry;
extern const struct cmd_entry cmd_reproduce_entry;
extern const struct cmd_entry cmd_compare_entry;
extern const struct cmd_entry cmd_history_entry;
extern const struct cmd_entry cmd_find_entry;
extern const struct cmd_entry cmd_summarize_entry;
extern const struct cmd_entry cmd_spec_entry;
extern const struct cmd_entry cmd_init_entry;
extern const struct cmd_entry cmd_push_entry;
extern const struct cmd_entry cmd_pull_entry;

/* The options of every command that runs steps (run, reproduce, find): put
 * CMD_RUN_STEP_OPTIONS in its getopt table and CMD_RUN_STEP_USAGE in its
 * usage, and hand each option to cmd_run_step_option first: 1 when it was
 * one of them (stored in *o), 0 when not, -1 after a usage error was printed
 * (return GO_EXIT_USAGE). */
struct run_step_opts;
/* a long option's getopt code above any character, so no command's own letters clash */
#define CMD_OPT_QUEUE_TIMEOUT 1001
#define CMD_RUN_STEP_OPTIONS \
	{ "accept-new-host-key", no_argument, NULL, 'a' }, \
	{ "plain", no_argument, NULL, 'p' }, \
	{ "reconnect-timeout", required_argument, NULL, 'r' }, \
	{ "gpu-wait", required_argument, NULL, 'g' }, \
	{ "queue-timeout", required_argument, NULL, CMD_OPT_QUEUE_TIMEOUT }
#define CMD_RUN_STEP_USAGE \
	"    --accept-new-host-key    trust and record an unknown host key (never a changed one)\n" \
	"    --plain                  progress as plain lines, even on a terminal\n" \
	"    --reconnect-timeout S    keep trying a lost host for S seconds (default 60)\n" \
	"    --gpu-wait S             how long a step waits for its GPU to be free (default 3600)\n" \
	"    --queue-timeout S        Slurm: cancel a job pending longer than S seconds (not for its\n" \
	"                             dependency); 0: no bound (default: the entry's queue_timeout_s)\n"
int cmd_run_step_option(const struct cmd_entry *e, int c, const char *arg, struct run_step_opts *o);

/* Shared by commands: print "error: MSG" and the usage, return 2. */
int cmd_usage_error(const struct cmd_entry *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* True when argv holds -h or --help before any "--". */
int cmd_wants_help(int argc, char **argv);
/* Parse a non-negative integer option value; -1 on error. */
int cmd_parse_int(const char *s, int min, int max);
/* Parse a --factor value (a ratio >= 1, at most 100) into *out; -1 on error
 * (cmd-compare.c). */
int cmd_parse_factor(const char *s, double *out);
/* Apply --reports DIR / $GPUORCH_REPORTS. */
void cmd_set_reports(const char *dir);
/* Check stdout was written without error before exiting 0 (git does this). */
int cmd_finish_stdout(int rc);

#endif
