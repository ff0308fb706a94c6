/* cmd-options.c -- a command's declared options (struct cmd_option) as
 * getopt_long's table, and its usage text made from them. */
#include "cmd/commands.h"
#include "core/error.h"
#include "core/strbuf.h"
#include "core/trace.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

/* the most options one command declares, with room to grow */
#define MAX_OPTIONS 48

int cmd_usage_error(const struct cmd_entry *c, const char *fmt, ...)
{
	va_list ap;
	fputs("error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n\n", stderr);
	cmd_print_usage(c, stderr);
	return GO_EXIT_USAGE;
}

int cmd_getopt(const struct cmd_entry *c, int argc, char **argv)
{
	/* one command parses per process; the table is made again for another */
	static struct option table[MAX_OPTIONS + 1];
	static const struct cmd_entry *made_for;
	int i;

	if (made_for != c) {
		for (i = 0; c->options && c->options[i].name; i++) {
			if (i == MAX_OPTIONS) {
				/* a programming error, met by the first run of the command */
				fprintf(stderr, "BUG: command '%s' declares more than %d options; raise "
					"MAX_OPTIONS in cmd-options.c\n", c->name, MAX_OPTIONS);
				abort();
			}
			table[i].name = c->options[i].name;
			table[i].has_arg = c->options[i].arg ? required_argument : no_argument;
			table[i].flag = NULL;
			table[i].val = c->options[i].code;
		}
		memset(&table[i], 0, sizeof(table[i]));
		made_for = c;
	}
	opterr = 0;
	i = getopt_long(argc, argv, ":", table, NULL);
	if (i == CMD_OPT_TRACE) {
		struct strbuf err = STRBUF_INIT;
		if (trace_open(optarg, &err)) {
			cmd_usage_error(c, "%s", err.buf);
			strbuf_release(&err);
			return CMD_OPT_ERROR;
		}
		return cmd_getopt(c, argc, argv);
	}
	if (i == ':') {
		cmd_usage_error(c, "option '%s' needs a value", argv[optind - 1]);
		return CMD_OPT_ERROR;
	}
	if (i == '?') {
		cmd_usage_error(c, "unknown option '%s'", argv[optind - 1]);
		return CMD_OPT_ERROR;
	}
	return i;
}

int cmd_option_failed(const struct cmd_entry *c, int code)
{
	if (code != CMD_OPT_ERROR) {
		/* a programming error: a declared option without its case */
		fprintf(stderr, "BUG: command '%s' declares option code %d but its switch has no "
			"case for it\n", c->name, code);
		abort();
	}
	return GO_EXIT_USAGE;
}

void cmd_option_label(const struct cmd_option *o, struct strbuf *sb)
{
	strbuf_addf(sb, "--%s", o->name);
	if (o->arg)
		strbuf_addf(sb, " %s", o->arg);
}

/* "    --name ARG   help", each further line of help under the first */
static void print_option(const struct cmd_option *o, FILE *out)
{
	struct strbuf sb = STRBUF_INIT;
	const char *line = o->help, *nl;
	strbuf_addstr(&sb, "    ");
	cmd_option_label(o, &sb);
	if (sb.len + 1 > CMD_HELP_COLUMN) {
		fprintf(out, "%s\n", sb.buf);
		strbuf_reset(&sb);
	}
	while (sb.len < CMD_HELP_COLUMN)
		strbuf_addch(&sb, ' ');
	for (;;) {
		nl = strchr(line, '\n');
		fprintf(out, "%s%.*s\n", sb.buf, nl ? (int)(nl - line) : (int)strlen(line), line);
		if (!nl)
			break;
		line = nl + 1;
		strbuf_reset(&sb);
		while (sb.len < CMD_HELP_COLUMN)
			strbuf_addch(&sb, ' ');
	}
	strbuf_release(&sb);
}

void cmd_print_usage(const struct cmd_entry *c, FILE *out)
{
	const char *form = c->synopsis, *nl;
	int first = 1, i;

	for (;;) {
		nl = strchr(form, '\n');
		fprintf(out, "%s gpuorch %s%s%.*s\n", first ? "usage:" : "   or:", c->name,
			*form ? " " : "", nl ? (int)(nl - form) : (int)strlen(form), form);
		first = 0;
		if (!nl)
			break;
		form = nl + 1;
	}
	if (c->about)
		fprintf(out, "\n%s", c->about);
	if (c->options && c->options[0].name) {
		fputc('\n', out);
		for (i = 0; c->options[i].name; i++)
			print_option(&c->options[i], out);
	}
	if (c->after)
		fprintf(out, "\n%s", c->after);
}
