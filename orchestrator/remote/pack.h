/* pack.h -- deterministic source archives and their content id.
 *
 * The archive is a tar made with libarchive from the spec's source list
 * only: entries sorted by path, mtime 0, uid/gid 0, no user/group names,
 * mode 0644 (0755 when executable); ustar, or pax when a name does not fit
 * ustar's fields (100 bytes, or a prefix of 155 and a name of 100 split at
 * a "/"), so a path of any length ships (a component of at most 255 bytes:
 * Linux's own limit). Same content -> same bytes -> same SHA-256, which is
 * the content id. */
#ifndef GPUORCH_PACK_H
#define GPUORCH_PACK_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "core/error.h"
#include "core/hash.h"
#include "spec/plan.h"

struct pack_file {
	char *path;
	size_t size;
	char sha256[SHA256_HEX_LEN + 1];
	/* what the file #includes, as written: "q:name" for "name", "a:name" for
	 * <name> (NULL-terminated); include_macro: an #include of a macro, whose
	 * target only the preprocessor knows (spec/plan.c's build keys) */
	char **includes;
	int include_macro;
	int exec;          /* shipped with mode 0755 (else 0644) */
	/* the file's bytes when it is at most PACK_TEXT_MAX (plan.c looks in
	 * them for the names a sweep defines), else NULL */
	char *text;
};
#define PACK_TEXT_MAX (1u << 20)

struct pack {
	unsigned char *data;
	size_t len;
	char content_id[SHA256_HEX_LEN + 1];
	struct pack_file *files;
	int nfiles;
};

/* files: NULL-terminated relative paths under root (the work tree). */
enum go_status pack_worktree(const char *root, char *const *files, struct pack *out,
			     struct strbuf *err);
/* The same files as they are in commit rev of the git repository at root;
 * the work tree is not touched. */
enum go_status pack_commit(const char *root, const char *rev, char *const *files,
			   struct pack *out, struct strbuf *err);
/* The files that the spec's 'sources' entries select (docs/spec.md): a file
 * path ships as it is (tracked or not); a directory, "." or a glob
 * (*.cu, ** for any depth) selects the files git tracks there (so ignored files,
 * build outputs and secrets never ship), or with commit (a full id) the
 * files of that commit. Sorted, unique, NULL-terminated; free with
 * pack_free_files. A pattern that selects nothing is GO_ERR_SPEC. */
enum go_status pack_resolve_sources(const char *root, const char *commit, char *const *entries,
				    char ***files, struct strbuf *err);
void pack_free_files(char **files);
void pack_release(struct pack *p);
/* The shipped files as plan.c keys builds by them (plan_host.sources), in
 * path order; the array only is the caller's to free (it points into p). */
struct plan_source *pack_plan_sources(const struct pack *p);
cJSON *pack_files_json(const struct pack *p);

#endif
