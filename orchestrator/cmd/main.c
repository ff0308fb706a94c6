/* main.c -- gpuorch's entry point: dispatch to a command of cmd_table (cmd-table.c). */
#include "cmd/commands.h"
#include "cmd/results-config.h"
#include "core/version.h"
#include "core/error.h"
#include "transport/ssh.h"
#include "store/store.h"
#include "core/strbuf.h"
#include "core/trace.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"


static void print_main_usage(FILE *out)
{
	int i;
	fprintf(out, "usage: gpuorch [--version] [--help] <command> [<args>]\n\n"
		     "Ship CUDA kernels to GPU hosts over SSH, build, check, time them and\n"
		     "write a phase report with measured numbers.\n\ncommands:\n");
	for (i = 0; i < cmd_ncommands; i++)
		fprintf(out, "   %-10s %s\n", cmd_table[i]->name, cmd_table[i]->summary);
	fprintf(out, "\n'gpuorch <command> -h' shows a command's options.\n"
		     "exit codes: docs/exit-codes.md\n");
}

int main(int argc, char **argv)
{
	struct strbuf err = STRBUF_INIT;
	int i;
	int rc;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		if (argc >= 3 && !strcmp(argv[1], "help")) {
			for (i = 0; i < cmd_ncommands; i++)
				if (!strcmp(argv[2], cmd_table[i]->name)) {
					cmd_print_usage(cmd_table[i], stdout);
					return cmd_finish_stdout(0);
				}
		}
		print_main_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? GO_EXIT_USAGE : cmd_finish_stdout(0);
	}
	if (!strcmp(argv[1], SSH_KEEPER_ARG)) {
		/* hidden: the session keeper that ssh_connect starts (ssh-mux.c) */
		if (ssh_global_init(&err) != GO_OK) {
			fprintf(stderr, "error: %s\n", err.buf);
			strbuf_release(&err);
			return GO_EXIT_LOCAL;
		}
		rc = ssh_keeper_main(argc - 2, argv + 2);
		ssh_global_cleanup();
		return rc;
	}
	if (!strcmp(argv[1], CMD_DOC_ARG))
		/* hidden: the man page, completions and README list (cmd-doc.c) */
		return cmd_finish_stdout(cmd_doc_main(argc - 2, argv + 2));
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("gpuorch %s\n", gpuorch_version);
		return cmd_finish_stdout(0);
	}
	for (i = 0; i < cmd_ncommands; i++) {
		if (strcmp(argv[1], cmd_table[i]->name))
			continue;
		if (cmd_wants_help(argc - 1, argv + 1)) {
			cmd_print_usage(cmd_table[i], stdout);
			return cmd_finish_stdout(0);
		}
		/* libssh2_init once, before any thread, and only for a command that connects */
		if ((cmd_table[i]->needs & CMD_NEEDS_SSH) && ssh_global_init(&err) != GO_OK) {
			fprintf(stderr, "error: %s\n", err.buf);
			strbuf_release(&err);
			return GO_EXIT_LOCAL;
		}
		/* a raw record not here comes from the results store when it is asked for;
		 * push and pull move runs themselves */
		if ((cmd_table[i]->needs & CMD_NEEDS_REPORTS) && cmd_table[i] != &cmd_push_entry &&
		    cmd_table[i] != &cmd_pull_entry)
			results_fetch_on_demand();
		if ((cmd_table[i]->needs & CMD_NEEDS_SSH) && getenv("GPUORCH_TRACE") &&
		    *getenv("GPUORCH_TRACE") && trace_open(getenv("GPUORCH_TRACE"), &err)) {
			fprintf(stderr, "error: GPUORCH_TRACE: %s\n", err.buf);
			strbuf_release(&err);
			return GO_EXIT_USAGE;
		}
		rc = cmd_table[i]->exec(argc - 1, argv + 1);
		trace_close();
		if (cmd_table[i]->needs & CMD_NEEDS_SSH)
			ssh_global_cleanup();
		return cmd_finish_stdout(rc);
	}
	fprintf(stderr, "error: '%s' is not a gpuorch command\n\n", argv[1]);
	print_main_usage(stderr);
	return GO_EXIT_USAGE;
}

