/* cmd-common.c -- helpers every command uses: options, numbers, stdout (usage errors: cmd-options.c). */
#include "cmd/commands.h"
#include "core/jsonutil.h"
#include "run/run-engine.h"
#include "core/error.h"
#include "store/store.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

int cmd_wants_help(int argc, char **argv)
{
	int i;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return 0;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return 1;
	}
	return 0;
}

int cmd_parse_int(const char *s, int min, int max)
{
	char *end;
	long v;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	return (int)v;
}

cJSON *cmd_json_doc(const char *schema)
{
	cJSON *doc = cJSON_CreateObject();
	json_add_str(doc, "schema", schema);
	return doc;
}

void cmd_json_print(cJSON *doc)
{
	char *text = cJSON_Print(doc);
	if (text)
		puts(text);
	free(text);
	cJSON_Delete(doc);
}

int cmd_finish_stdout(int rc)
{
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "error: cannot write to standard output: %s\n", strerror(errno));
		return rc ? rc : GO_EXIT_LOCAL;
	}
	return rc;
}

void cmd_set_reports(const char *dir)
{
	const char *env = getenv("GPUORCH_REPORTS");
	if (dir)
		store_set_root(dir);
	else if (env && *env)
		store_set_root(env);
}

int cmd_run_step_option(const struct cmd_entry *e, int c, const char *arg, struct run_step_opts *o)
{
	switch (c) {
	case 'a':
		o->accept_new_hostkey = 1;
		return 1;
	case 'p':
		o->plain = 1;
		return 1;
	case 'r':
		o->reconnect_timeout_s = cmd_parse_int(arg, 0, 86400);
		if (o->reconnect_timeout_s < 0) {
			cmd_usage_error(e, "--reconnect-timeout: '%s' is not a number of seconds "
					"(0-86400)", arg);
			return -1;
		}
		return 1;
	case 'g':
		o->lock_wait_s = cmd_parse_int(arg, 0, 7 * 86400);
		if (o->lock_wait_s < 0) {
			cmd_usage_error(e, "--gpu-wait: '%s' is not a number of seconds", arg);
			return -1;
		}
		return 1;
	case CMD_OPT_QUEUE_TIMEOUT:
		o->queue_timeout_s = cmd_parse_int(arg, 0, 31536000);
		if (o->queue_timeout_s < 0) {
			cmd_usage_error(e, "--queue-timeout: '%s' is not a number of seconds (0-31536000; "
					"0: no bound)", arg);
			return -1;
		}
		return 1;
	}
	return 0;
}
