/* error.h -- gpuorch's one status enum, its messages and the exit codes.
 *
 * Library code returns an enum go_status and writes a one-line message
 * ("what, where, how to fix", lowercase, no trailing period) into a caller's
 * struct strbuf *err. Only the command layer prints and exits; it maps a
 * status to a process exit code with go_exit_code(). The table of exit codes
 * is documented in docs/exit-codes.md: keep the two in step. */
#ifndef GPUORCH_ERROR_H
#define GPUORCH_ERROR_H

#include "core/strbuf.h"

enum go_status {
	GO_OK = 0,
	GO_ERR_USAGE,        /* bad command line */
	GO_ERR_SPEC,         /* experiment spec invalid */
	GO_ERR_HOSTS,        /* hosts inventory invalid */
	GO_ERR_IO,           /* local file system */
	GO_ERR_GIT,          /* git commit / repository */
	GO_ERR_CONNECT,      /* TCP connect, DNS, timeout */
	GO_ERR_HOSTKEY,      /* unknown or changed host key */
	GO_ERR_AUTH,         /* authentication refused */
	GO_ERR_SSH,          /* any other SSH / SFTP failure */
	GO_ERR_TIMEOUT,      /* a deadline passed */
	GO_ERR_REMOTE,       /* remote command failed in a way that is not a step result */
	GO_ERR_NOT_FOUND,    /* no such run, file, host */
	GO_ERR_INTERRUPTED,  /* SIGINT/SIGTERM arrived: stop, record what there is */
	GO_ERR_INTERNAL,     /* a bug: should not happen */
	GO_STATUS_COUNT
};

/* Exit codes (docs/exit-codes.md). */
enum go_exit {
	GO_EXIT_OK = 0,          /* everything ran and passed */
	GO_EXIT_FAILED = 1,      /* ran, but a step failed / timed out / a host failed */
	GO_EXIT_USAGE = 2,       /* bad input: command line, spec, hosts file; nothing was sent */
	GO_EXIT_INFRA = 3,       /* no host could be used (connect/auth/host key) */
	GO_EXIT_LOCAL = 4,       /* local error: file system, git, internal */
	GO_EXIT_INTERRUPTED = 130/* SIGINT/SIGTERM: the run is recorded as incomplete */
};

const char *go_strerror(enum go_status st);
int go_exit_code(enum go_status st);

/* Convenience: reset err, write a formatted message, return st. */
enum go_status go_fail(struct strbuf *err, enum go_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Map an errno value to a go_status for file-system calls. */
enum go_status go_from_errno(int e);

#endif
