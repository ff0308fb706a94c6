/* gitinfo.h -- provenance from git, through the git command (no shell). */
#ifndef GPUORCH_GITINFO_H
#define GPUORCH_GITINFO_H

#include "core/error.h"

struct git_info {
	int is_repo;
	char commit[41];         /* HEAD, or the resolved --commit */
	int dirty;               /* work tree differs from HEAD (tracked files) */
	char *diff;              /* `git diff HEAD` text when dirty, else NULL */
	char diff_sha256[65];
	char *branch;            /* may be NULL */
};

enum go_status git_info_worktree(const char *root, struct git_info *gi, struct strbuf *err);
/* Resolve rev to a full commit id. */
enum go_status git_resolve(const char *root, const char *rev, char out[41], struct strbuf *err);
/* The bytes of path at commit rev. GO_ERR_NOT_FOUND when absent there. */
enum go_status git_show_file(const char *root, const char *rev, const char *path,
			     struct strbuf *out, struct strbuf *err);
void git_info_release(struct git_info *gi);

/* Run argv (no shell) in dir, capture stdout (capped) and the exit code.
 * The one place gpuorch starts a local program. dir NULL: the current one;
 * out/errout may be NULL (discarded). Each stream is capped at its ->max,
 * or 64 MiB, with ->truncated set. GO_ERR_NOT_FOUND: no such program;
 * GO_ERR_TIMEOUT: still running after 10 minutes (killed). With exit_code
 * NULL a non-zero exit is an error quoting stderr's first line. */
enum go_status proc_run(const char *dir, const char *const *argv, struct strbuf *out,
			struct strbuf *errout, int *exit_code, struct strbuf *err);

#endif
