/* commands.h -- the table of gpuorch's subcommands.
 *
 * To add a command: write cmd-<name>.c defining `const struct cmd_entry
 * cmd_<name>_entry` (name, synopsis, about, options, after, summary, exec),
 * declare it below and add one row to cmd_table in cmd-table.c. To add an
 * option: one row in its command's options[] (name, the code its switch
 * handles, value placeholder, completion, help) and its case in the
 * switch; usage, man page, completions and README follow (docs/cli.md).
 * Every command answers -h/--help with its usage (exit 0); bad usage
 * prints what was not understood and the usage (exit 2). exec returns the
 * process exit code (docs/exit-codes.md). */
#ifndef GPUORCH_COMMANDS_H
#define GPUORCH_COMMANDS_H

#include <stdio.h>
#include <cJSON.h>

struct strbuf;

/* What a command needs before it runs (git's RUN_SETUP, tmux's cmd_entry
 * flags): main.c initialises libssh2 only for a command that connects. */
enum cmd_needs {
	CMD_NEEDS_SSH = 1 << 0,      /* it connects to hosts over SSH */
	CMD_NEEDS_REPORTS = 1 << 1,  /* it reads or writes the reports directory */
};

/* One option of a command, declared once. Its getopt table (cmd_getopt),
 * the usage text (cmd_print_usage), the man page gpuorch(1), the bash and
 * zsh completions and the README's command list (cmd-doc.c) are all made
 * from these rows, so none of them can name an option the others lack. */
struct cmd_option {
	const char *name;     /* long name, without "--" */
	int code;             /* what cmd_getopt returns for it: a case of the command's switch */
	const char *arg;      /* its value's placeholder ("FILE"); NULL: a flag */
	const char *complete; /* how a shell completes the value: "@file", "@dir", a
			       * list of words ("a b c"), NULL: nothing to offer */
	const char *help;     /* what it does; '\n' between the lines of a longer text */
};

struct cmd_entry {
	const char *name;
	const char *synopsis;  /* what follows "gpuorch NAME" in each form, '\n' between forms */
	const char *about;     /* what it does (lines ending '\n'), before the options */
	const struct cmd_option *options;  /* ends with a row whose name is NULL */
	const char *after;     /* after the options (the exit codes), or NULL */
	const char *summary;   /* one line for `gpuorch help` */
	int (*exec)(int argc, char **argv);
	unsigned needs;        /* enum cmd_needs bits */
	const char *verbs;     /* the words its first argument may be ("check list"), or NULL */
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
extern const struct cmd_entry cmd_site_entry;

/* The options of every command that runs steps (run, reproduce, find): put
 * CMD_RUN_STEP_OPTIONS in its options[], and hand each option to cmd_run_step_option first: 1 when it was
 * one of them (stored in *o), 0 when not, -1 after a usage error was printed
 * (return GO_EXIT_USAGE). */
struct run_step_opts;
/* a long option's getopt code above any character, so no command's own letters clash */
#define CMD_OPT_QUEUE_TIMEOUT 1001
/* --trace FILE, of every command that connects (CMD_NEEDS_SSH): cmd_getopt
 * opens the trace itself and never returns CMD_OPT_TRACE (core/trace.h) */
#define CMD_OPT_TRACE 1002
#define CMD_TRACE_OPTION \
	{ "trace", CMD_OPT_TRACE, "FILE", "@file", \
	  "write a timed trace of SSH connects, remote commands,\n" \
	  "uploads and waits as JSON lines (default $GPUORCH_TRACE;\n" \
	  "docs/trace.md)" }
/* --trace FILE of a command that reads the store (site, history) */
#define CMD_TRACE_STORE_OPTION \
	{ "trace", CMD_OPT_TRACE, "FILE", "@file", \
	  "write a timed trace of each run summary and samples\n" \
	  "read as JSON lines (docs/trace.md)" }
#define CMD_RUN_STEP_OPTIONS \
	{ "accept-new-host-key", 'a', NULL, NULL, \
	  "trust and record an unknown host key (never a changed one)" }, \
	{ "plain", 'p', NULL, NULL, "progress as plain lines, even on a terminal" }, \
	{ "reconnect-timeout", 'r', "S", NULL, \
	  "keep trying a lost host for S seconds (default 60)" }, \
	{ "gpu-wait", 'g', "S", NULL, \
	  "how long a step waits for its GPU to be free (default 3600)" }, \
	{ "queue-timeout", CMD_OPT_QUEUE_TIMEOUT, "S", NULL, \
	  "Slurm: cancel a job pending longer than S seconds (not for its\n" \
	  "dependency); 0: no bound (default: the entry's queue_timeout_s)" }, \
	CMD_TRACE_OPTION
int cmd_run_step_option(const struct cmd_entry *e, int c, const char *arg, struct run_step_opts *o);

/* The table of commands, in the order `gpuorch help` lists them (cmd-table.c). */
extern const struct cmd_entry *const cmd_table[];
extern const int cmd_ncommands;

/* getopt_long over the command's declared options (cmd-options.c), from
 * argv[optind]: the option's code, -1 at the end, CMD_OPT_ERROR after it
 * printed the usage error for an option missing its value or an unknown
 * one. Set optind before the first call. A command's switch ends with
 * `default: return cmd_option_failed(&entry, c);` (freeing what it holds). */
#define CMD_OPT_ERROR (-2)
int cmd_getopt(const struct cmd_entry *c, int argc, char **argv);
/* The default case of a command's option switch: GO_EXIT_USAGE for
 * CMD_OPT_ERROR (the error is already printed); abort()s on a declared
 * option the switch forgot (a programming error). */
int cmd_option_failed(const struct cmd_entry *c, int code);
/* The column where an option's help starts in the usage text. */
#define CMD_HELP_COLUMN 29
/* The usage text: forms, about, the options, what comes after. */
void cmd_print_usage(const struct cmd_entry *c, FILE *out);
/* An option as the usage shows it: "--name ARG" (cmd-options.c). */
void cmd_option_label(const struct cmd_option *o, struct strbuf *sb);

/* `gpuorch __doc man|bash|zsh|readme`, hidden: print gpuorch(1), a
 * completion script or the README's command list, all made from cmd_table
 * (cmd-doc.c; the Makefile writes them at build time). Returns the exit code. */
#define CMD_DOC_ARG "__doc"
int cmd_doc_main(int argc, char **argv);

/* Shared by commands: print "error: MSG" and the usage, return 2. */
int cmd_usage_error(const struct cmd_entry *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A command's --json document (docs/cli.md): an object whose first key is
 * "schema": "gpuorch.cli.NAME/N", the $id of docs/schema/cli-NAME.schema.json. */
cJSON *cmd_json_doc(const char *schema);
/* Print doc on stdout, indented, and free it. */
void cmd_json_print(cJSON *doc);
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
