/* gitinfo.h -- provenance from git, through the git command (no shell). */
#ifndef GPUORCH_GITINFO_H
#define GPUORCH_GITINFO_H

#include "core/error.h"

struct git_info {
	int is_repo;
	char commit[41];         /* HEAD, or the resolved --commit */
	int dirty;               /* work tree differs from HEAD (tracked files) */
	char *diff;              /* `git diff HEAD` text when dirty, else NULL */
	char *withheld;          /* changed paths with a secret's name, one a line, not in
				  * diff (given paths only); else NULL */
	char diff_sha256[65];
	char *branch;            /* may be NULL */
};

/* The work tree's commit, branch, and whether it differs from its commit
 * (tracked files) and how: of all of it (paths NULL), or of the given paths
 * only (NULL-terminated, relative to root: what a run ships), where a
 * changed path with a secret's name is listed in withheld, not diffed. */
enum go_status git_info_worktree(const char *root, char *const *paths, struct git_info *gi,
				 struct strbuf *err);
/* 1 when path's last component is a secret's by convention: .env, .env.*,
 * *.env, *.pem, *.key, *.p12, *.pfx, id_*, credentials, credentials.*, .netrc, .pgpass */
int git_secret_name(const char *path);
/* Run git with argv in root (gpuorch's one way to run git): stdout into
 * out (one trailing newline trimmed when trim; out->max bounds it), stderr
 * into errout (NULL: dropped), the exit status in *code. */
enum go_status git_run(const char *root, const char *const *argv, struct strbuf *out,
		       struct strbuf *errout, int *code, int trim, struct strbuf *err);
/* Resolve rev to a full commit id. */
enum go_status git_resolve(const char *root, const char *rev, char out[41], struct strbuf *err);
/* The bytes of path at commit rev. GO_ERR_NOT_FOUND when absent there. */
enum go_status git_show_file(const char *root, const char *rev, const char *path,
			     struct strbuf *out, struct strbuf *err);
/* The files that a source pattern selects, through git's own pathspec
 * matching with glob magic (*.cu, ** for any depth, a directory, "."): the tracked
 * files of the work tree at root (commit NULL; ignored and untracked files
 * never), or the files of commit (a full id). Appends NUL-terminated paths,
 * relative to root, to out. */
enum go_status git_list_files(const char *root, const char *commit, const char *pattern,
			      struct strbuf *out, struct strbuf *err);
void git_info_release(struct git_info *gi);

#endif
