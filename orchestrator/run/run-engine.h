/* run-engine.h -- `gpuorch run`: one experiment on one or many hosts, to a report. */
#ifndef GPUORCH_RUNNER_H
#define GPUORCH_RUNNER_H

/* How steps are run: the options every command that runs steps shares
 * (run, reproduce, find; cmd_run_step_option parses them). */
struct run_step_opts {
	int accept_new_hostkey;     /* --accept-new-host-key */
	int plain;                  /* --plain: plain progress lines even on a terminal */
	int reconnect_timeout_s;    /* --reconnect-timeout S (default 60) */
	int lock_wait_s;            /* --gpu-wait S (default 3600) */
	int queue_timeout_s;        /* --queue-timeout S for Slurm jobs; -1: each entry's queue_timeout_s */
};
#define RUN_STEP_OPTS_INIT { 0, 0, 60, 3600, -1 }

struct run_opts {
	const char *spec_path;
	const char *hosts_path;
	char **host_names;          /* --host NAME ... (NULL-terminated, may be empty) */
	int nhost_names;
	const char *commit;         /* --commit REV, or NULL for the work tree */
	int dry_run;
	int spread;                 /* --spread: the steps dealt over the pool (remote/spread.h) */
	int accept_new_hostkey;
	int plain;                  /* plain progress lines even on a terminal */
	int reconnect_timeout_s;
	int lock_wait_s;
	int queue_timeout_s;        /* -1: each Slurm entry's queue_timeout_s; else overrides it */
	const char *root;           /* repository root that sources are relative to */
	const char *command_line;
	const char *notify_url;     /* --notify URL, else $GPUORCH_NOTIFY_URL, else none */
	const char *resume_id;      /* --resume RUN_ID: take up that unfinished run (resume.h) */
	char **run_dir_out;         /* when not NULL: set to the new run's directory
				       (caller frees), or NULL when none was made */
};

/* Runs it all and returns the process exit code (docs/exit-codes.md);
 * errors are printed on stderr. */
int runner_run(const struct run_opts *o);

#endif
