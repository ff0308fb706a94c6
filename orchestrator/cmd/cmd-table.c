/* cmd-table.c -- the table of gpuorch's commands, in the order `gpuorch help`
 * lists them: main.c dispatches from it, cmd-doc.c documents it. */
#include "cmd/commands.h"
#include "core/banned.h"

const struct cmd_entry *const cmd_table[] = {
	&cmd_run_entry,
	&cmd_hosts_entry,
	&cmd_runs_entry,
	&cmd_report_entry,
	&cmd_reproduce_entry,
	&cmd_compare_entry,
	&cmd_history_entry,
	&cmd_site_entry,
	&cmd_find_entry,
	&cmd_summarize_entry,
	&cmd_spec_entry,
	&cmd_init_entry,
	&cmd_push_entry,
	&cmd_pull_entry,
};
const int cmd_ncommands = (int)(sizeof(cmd_table) / sizeof(cmd_table[0]));
