/* fsutil.h -- local files: whole-file reads, atomic writes, directories. */
#ifndef GPUORCH_FSUTIL_H
#define GPUORCH_FSUTIL_H

#include <stddef.h>
#include <sys/stat.h>
#include "core/error.h"

/* Read a whole file into sb (appends). */
enum go_status fs_read_file(const char *path, struct strbuf *sb, struct strbuf *err);
/* The same, with *st the fstat of the file it read (its size and mtime
 * describe exactly the bytes read, whatever is renamed over path meanwhile). */
enum go_status fs_read_file_stat(const char *path, struct strbuf *sb, struct stat *st,
				 struct strbuf *err);
/* Write data to path atomically: temp file in the same directory, fsync,
 * rename, fsync of the directory. On error nothing is left behind. */
enum go_status fs_write_atomic(const char *path, const void *data, size_t len,
			       struct strbuf *err);
/* The same without either fsync, for a file rebuilt from others when it is
 * lost (a cache: report/runsum.h's summaries): a reader still sees the old
 * file or the new one whole, never a part; after a power loss it may be
 * missing or empty, which its reader must take as "not there". */
enum go_status fs_write_derived(const char *path, const void *data, size_t len,
				struct strbuf *err);
/* fs_write_atomic, but never replacing a file: GO_ERR_USAGE when path exists
 * (the new file is linked into place, so two writers cannot both win). */
enum go_status fs_write_new(const char *path, const void *data, size_t len, struct strbuf *err);
/* mkdir -p with the given mode. */
enum go_status fs_mkdir_p(const char *path, int mode, struct strbuf *err);
int fs_is_dir(const char *path);
int fs_is_file(const char *path);
/* Remove a directory tree (used to clean up failed, never-published output). */
void fs_remove_tree(const char *path);
/* "a/b/c.txt" -> "a/b" (new string); "c.txt" -> "." */
char *fs_dirname(const char *path);

#endif
