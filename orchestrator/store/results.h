/* results.h -- the results store: runs' raw files kept out of git, content-addressed.
 *
 * A store is a set of keys, each a whole object (docs/results-store.md):
 *   objects/AB/ABCDEF...   a file's content, named by its SHA-256 (of the
 *                          content itself), zlib-compressed where that pays
 *   runs/RUN-ID/SLUG.json  a run's manifest: every file of the run
 *                          directory REPORTS/SLUG/RUN-ID by its path, with
 *                          its object, size and mode
 * Objects go in before the manifest that names them, so a manifest in the
 * store means its objects are there. Every write is whole (a local file is
 * written to a temporary name and renamed; an S3 PUT is whole), and two
 * machines writing one object write the same bytes, so they never conflict.
 *
 * Backends (a local directory here: results-local.c; an S3 bucket:
 * cloud/results-s3.c) implement struct results_ops; this file does the
 * rest: hashing, compression, manifests, push and pull. */
#ifndef GPUORCH_RESULTS_H
#define GPUORCH_RESULTS_H

#include <stddef.h>
#include "core/error.h"

struct results_ops {
	/* the whole object at key into out (appended); GO_ERR_NOT_FOUND when absent */
	enum go_status (*get)(void *ctx, const char *key, struct strbuf *out, struct strbuf *err);
	/* store data at key, whole (a reader never sees part of it) */
	enum go_status (*put)(void *ctx, const char *key, const void *data, size_t len,
			      struct strbuf *err);
	/* *yes = 1 when key is there */
	enum go_status (*exists)(void *ctx, const char *key, int *yes, struct strbuf *err);
	/* the names (the part after prefix, no '/') of the keys directly under
	 * prefix (which ends in '/'): *names NULL-terminated, freed by the caller */
	enum go_status (*list)(void *ctx, const char *prefix, char ***names, struct strbuf *err);
	void (*close)(void *ctx);
};

struct results_store {
	const struct results_ops *ops;
	void *ctx;
	char *where;          /* for messages: a directory, or s3://bucket/prefix */
};

/* A local directory store (results-local.c); the directory is made on the
 * first write. */
struct results_store *results_local_open(const char *dir);
void results_close(struct results_store *rs);

/* What push and pull did. */
struct results_counts {
	int files;            /* files of the run(s) */
	int objects_sent;     /* objects written to the store */
	int files_written;    /* files written into a run directory */
	int manifests_sent;   /* manifests written (0: the store had the run as it is) */
	long long bytes_sent; /* bytes of the objects written (compressed) */
};

/* Copy the files of the run directory dir (REPORTS/SLUG/RUN-ID) into the
 * store. A run that the store already has as it is sends nothing. The
 * controller lock is not a file of the run and is left out. */
enum go_status results_push_run(struct results_store *rs, const char *dir,
				struct results_counts *n, struct strbuf *err);

/* How results_pull_run treats a file that is already in the run directory
 * with other content. */
enum results_clash {
	RESULTS_REFUSE,       /* an error naming it, and nothing is written */
	RESULTS_OVERWRITE,    /* --force: the store's content replaces it */
	RESULTS_KEEP,         /* leave it, write only the missing files (on demand) */
};

/* Restore the run SLUG/RUN-ID from the store into dir, byte-identical
 * (content and mode), every object checked by its hash. GO_ERR_NOT_FOUND
 * when the store does not have the run. */
enum go_status results_pull_run(struct results_store *rs, const char *slug, const char *run_id,
				const char *dir, enum results_clash clash,
				struct results_counts *n, struct strbuf *err);

/* The experiment (SLUG) of run RUN-ID in the store: GO_ERR_NOT_FOUND when
 * the store has no such run, GO_ERR_USAGE when two experiments have it. */
enum go_status results_find_run(struct results_store *rs, const char *run_id, char **slug,
				struct strbuf *err);

/* One object: data stored under its SHA-256 (hex out), skipped when the
 * store has it (*sent 0); read back by hash, checked (GO_ERR_IO when the
 * stored bytes are not that content: corrupt). */
enum go_status results_put_object(struct results_store *rs, const void *data, size_t len,
				  char hex[65], int *sent, long long *bytes, struct strbuf *err);
enum go_status results_get_object(struct results_store *rs, const char *hex, struct strbuf *out,
				  struct strbuf *err);

#endif
