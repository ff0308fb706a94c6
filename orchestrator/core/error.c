/* error.c -- messages and exit codes of enum go_status. */
#include "core/error.h"

#include <errno.h>
#include <stdarg.h>
#include "core/banned.h"

static const struct {
	const char *msg;
	int exit_code;
} table[GO_STATUS_COUNT] = {
	[GO_OK]            = { "ok", GO_EXIT_OK },
	[GO_ERR_USAGE]     = { "usage error", GO_EXIT_USAGE },
	[GO_ERR_SPEC]      = { "invalid experiment spec", GO_EXIT_USAGE },
	[GO_ERR_HOSTS]     = { "invalid hosts inventory", GO_EXIT_USAGE },
	[GO_ERR_IO]        = { "local file error", GO_EXIT_LOCAL },
	[GO_ERR_GIT]       = { "git error", GO_EXIT_LOCAL },
	[GO_ERR_CONNECT]   = { "cannot connect", GO_EXIT_INFRA },
	[GO_ERR_HOSTKEY]   = { "host key refused", GO_EXIT_INFRA },
	[GO_ERR_AUTH]      = { "authentication failed", GO_EXIT_INFRA },
	[GO_ERR_SSH]       = { "ssh error", GO_EXIT_INFRA },
	[GO_ERR_TIMEOUT]   = { "timed out", GO_EXIT_INFRA },
	[GO_ERR_REMOTE]    = { "remote command failed", GO_EXIT_INFRA },
	[GO_ERR_NOT_FOUND] = { "not found", GO_EXIT_USAGE },
	[GO_ERR_INTERRUPTED] = { "interrupted", GO_EXIT_INTERRUPTED },
	[GO_ERR_INTERNAL]  = { "internal error", GO_EXIT_LOCAL },
};

const char *go_strerror(enum go_status st)
{
	if ((int)st < 0 || st >= GO_STATUS_COUNT)
		return "unknown error";
	return table[st].msg;
}

int go_exit_code(enum go_status st)
{
	if ((int)st < 0 || st >= GO_STATUS_COUNT)
		return GO_EXIT_LOCAL;
	return table[st].exit_code;
}

enum go_status go_fail(struct strbuf *err, enum go_status st, const char *fmt, ...)
{
	va_list ap;
	if (!err)
		return st;
	strbuf_reset(err);
	va_start(ap, fmt);
	strbuf_vaddf(err, fmt, ap);
	va_end(ap);
	return st;
}

enum go_status go_from_errno(int e)
{
	switch (e) {
	case ENOENT:
		return GO_ERR_NOT_FOUND;
	default:
		return GO_ERR_IO;
	}
}
