/* blobs.c -- the pack's manifest and the tar (or the execd's frames) of the blobs a host lacks (blobs.h). */
#include "remote/blobs.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdlib.h>
#include <string.h>
#include "core/strbuf.h"
#include "core/banned.h"

void blobs_manifest(const struct pack *p, struct strbuf *out)
{
	int i;
	for (i = 0; i < p->nfiles; i++)
		strbuf_addf(out, "%s %s %s\n", p->files[i].sha256, p->files[i].exec ? "755" : "644",
			    p->files[i].path);
}

static la_ssize_t write_cb(struct archive *a, void *ctx, const void *buf, size_t n)
{
	(void)a;
	strbuf_add(ctx, buf, n);
	return (la_ssize_t)n;
}

/* index of the first file with this hash, -1 when none */
static int file_of(const struct pack *p, const char *sha)
{
	int i;
	for (i = 0; i < p->nfiles; i++)
		if (!strcmp(p->files[i].sha256, sha))
			return i;
	return -1;
}

/* The entry rd is at (the pack's file f) into wr, named by its hash:
 * ARCHIVE_OK, or an error (no message of its own when the bytes read are
 * not f's size). */
static int copy_entry(struct archive *rd, struct archive *wr, struct archive_entry *e,
		      const struct pack_file *f)
{
	const void *block;
	size_t n, got = 0;
	la_int64_t at;
	int r;

	archive_entry_clear(e);
	archive_entry_set_pathname(e, f->sha256);
	archive_entry_set_filetype(e, AE_IFREG);
	/* the host's blobs are its user's alone, and read-only: a content's
	 * src/ links them (start.sh), so a build that writes into a shipped
	 * source in place fails (EACCES) rather than change the store; and
	 * their mtime is 0, so a write that got through anyway (root) is seen
	 * (start.sh removes such a blob: the host asks for it again) */
	archive_entry_set_perm(e, 0400);
	archive_entry_set_size(e, (la_int64_t)f->size);
	archive_entry_set_mtime(e, 0, 0);
	if ((r = archive_write_header(wr, e)) != ARCHIVE_OK)
		return r;
	while ((r = archive_read_data_block(rd, &block, &n, &at)) == ARCHIVE_OK) {
		if ((size_t)at != got || got + n > f->size)
			return ARCHIVE_FATAL;
		if (n && archive_write_data(wr, block, n) != (la_ssize_t)n)
			return ARCHIVE_FATAL;
		got += n;
	}
	return r == ARCHIVE_EOF && got == f->size ? ARCHIVE_OK : ARCHIVE_FATAL;
}

enum go_status blobs_tar(const struct pack *p, char *const *missing, int n, unsigned char **data,
			 size_t *len, struct strbuf *err)
{
	struct strbuf out = STRBUF_INIT;
	struct archive *rd = NULL, *wr = NULL;
	struct archive_entry *in, *e = NULL;
	char *want = xcalloc((size_t)p->nfiles + 1, 1);   /* files to send (first of each hash) */
	size_t total = 1024;   /* the archive's size: its end, and */
	enum go_status st = GO_OK;
	int i, k;

	*data = NULL;
	*len = 0;
	for (k = 0; k < n; k++) {
		if ((i = file_of(p, missing[k])) < 0) {
			st = go_fail(err, GO_ERR_REMOTE, "the host asked for blob %.64s, which is not "
				     "among the files shipped", missing[k]);
			goto out;
		}
		if (!want[i])
			total += 512 + (p->files[i].size + 511) / 512 * 512;   /* each file's header and bytes */
		want[i] = 1;
	}
	rd = archive_read_new();
	wr = archive_write_new();
	e = archive_entry_new();
	if (!rd || !wr || !e ||
	    archive_read_support_format_tar(rd) != ARCHIVE_OK ||
	    archive_read_open_memory(rd, p->data, p->len) != ARCHIVE_OK ||
	    archive_write_set_format_ustar(wr) != ARCHIVE_OK ||
	    archive_write_add_filter_none(wr) != ARCHIVE_OK ||
	    archive_write_set_bytes_per_block(wr, 0) != ARCHIVE_OK ||   /* unblocked: no copy, no padding */
	    archive_write_open(wr, &out, NULL, write_cb, NULL) != ARCHIVE_OK) {
		st = go_fail(err, GO_ERR_INTERNAL, "cannot set up the blob archive: %s",
			     rd && archive_error_string(rd) ? archive_error_string(rd)
			     : wr && archive_error_string(wr) ? archive_error_string(wr) : "out of memory");
		goto out;
	}
	strbuf_grow(&out, total);
	/* the pack's entries are its files, in order; each one's bytes go from
	 * the pack's memory to the new archive's as they lie there (read in
	 * blocks: no copy of each file, no copy of them all) */
	for (i = 0; i < p->nfiles && archive_read_next_header(rd, &in) == ARCHIVE_OK; i++) {
		if (want[i] && copy_entry(rd, wr, e, &p->files[i]) != ARCHIVE_OK) {
			st = go_fail(err, GO_ERR_INTERNAL, "cannot copy '%s' into the blob archive: %s",
				     p->files[i].path, archive_error_string(wr) ? archive_error_string(wr)
				     : archive_error_string(rd) ? archive_error_string(rd)
				     : "its size is not the pack's");
			goto out;
		}
	}
	if (i != p->nfiles || archive_write_close(wr) != ARCHIVE_OK) {
		st = go_fail(err, GO_ERR_INTERNAL, "cannot finish the blob archive (%d of %d files read)",
			     i, p->nfiles);
		goto out;
	}
	*len = out.len;
	*data = (unsigned char *)strbuf_detach(&out, NULL);
out:
	if (rd)
		archive_read_free(rd);
	if (wr)
		archive_write_free(wr);
	if (e)
		archive_entry_free(e);
	free(want);
	strbuf_release(&out);
	return st;
}

/* the pack's files that missing names (first of each hash) into want[];
 * *bytes: theirs */
static enum go_status wanted(const struct pack *p, char *const *missing, int n, char *want,
			     size_t *bytes, struct strbuf *err)
{
	int i, k;
	*bytes = 0;
	for (k = 0; k < n; k++) {
		if ((i = file_of(p, missing[k])) < 0)
			return go_fail(err, GO_ERR_REMOTE, "the host asked for blob %.64s, which is not "
				       "among the files shipped", missing[k]);
		if (!want[i])
			*bytes += 96 + p->files[i].size;
		want[i] = 1;
	}
	return GO_OK;
}

/* The entry rd is at (file f) onto out after its frame line: 0, or -1 when
 * its bytes are not f's size. */
static int frame_entry(struct archive *rd, const struct pack_file *f, struct strbuf *out)
{
	const void *block;
	size_t n, got = 0;
	la_int64_t at;
	int r;

	strbuf_addf(out, "%s %zu\n", f->sha256, f->size);
	while ((r = archive_read_data_block(rd, &block, &n, &at)) == ARCHIVE_OK) {
		if ((size_t)at != got || got + n > f->size)
			return -1;
		strbuf_add(out, block, n);
		got += n;
	}
	return r == ARCHIVE_EOF && got == f->size ? 0 : -1;
}

enum go_status blobs_frames(const struct pack *p, char *const *missing, int n,
			    unsigned char **data, size_t *len, struct strbuf *err)
{
	struct strbuf out = STRBUF_INIT;
	struct archive *rd = archive_read_new();
	struct archive_entry *in;
	char *want = xcalloc((size_t)p->nfiles + 1, 1);
	size_t total;
	enum go_status st;
	int i;

	*data = NULL;
	*len = 0;
	if ((st = wanted(p, missing, n, want, &total, err)))
		goto out;
	if (!rd || archive_read_support_format_tar(rd) != ARCHIVE_OK ||
	    archive_read_open_memory(rd, p->data, p->len) != ARCHIVE_OK) {
		st = go_fail(err, GO_ERR_INTERNAL, "cannot read the pack for the blobs: %s",
			     rd && archive_error_string(rd) ? archive_error_string(rd) : "out of memory");
		goto out;
	}
	strbuf_grow(&out, total);
	for (i = 0; i < p->nfiles && archive_read_next_header(rd, &in) == ARCHIVE_OK; i++) {
		if (want[i] && frame_entry(rd, &p->files[i], &out)) {
			st = go_fail(err, GO_ERR_INTERNAL, "cannot read '%s' from the pack: %s",
				     p->files[i].path, archive_error_string(rd) ? archive_error_string(rd)
				     : "its size is not the pack's");
			goto out;
		}
	}
	if (i != p->nfiles) {
		st = go_fail(err, GO_ERR_INTERNAL, "cannot read the pack for the blobs (%d of %d files "
			     "read)", i, p->nfiles);
		goto out;
	}
	*len = out.len;
	*data = (unsigned char *)strbuf_detach(&out, NULL);
out:
	if (rd)
		archive_read_free(rd);
	free(want);
	strbuf_release(&out);
	return st;
}
