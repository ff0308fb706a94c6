/* blobs.c -- the pack's manifest and the tar of the blobs a host lacks (blobs.h). */
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

enum go_status blobs_tar(const struct pack *p, char *const *missing, int n, unsigned char **data,
			 size_t *len, struct strbuf *err)
{
	struct strbuf out = STRBUF_INIT;
	struct archive *rd = NULL, *wr = NULL;
	struct archive_entry *in, *e = NULL;
	char *want = xcalloc((size_t)p->nfiles + 1, 1);   /* files to send (first of each hash) */
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
	    archive_write_set_bytes_in_last_block(wr, 1) != ARCHIVE_OK ||   /* no padding to 10 KiB */
	    archive_write_open(wr, &out, NULL, write_cb, NULL) != ARCHIVE_OK) {
		st = go_fail(err, GO_ERR_INTERNAL, "cannot set up the blob archive: %s",
			     rd && archive_error_string(rd) ? archive_error_string(rd)
			     : wr && archive_error_string(wr) ? archive_error_string(wr) : "out of memory");
		goto out;
	}
	/* the pack's entries are its files, in order */
	for (i = 0; i < p->nfiles && archive_read_next_header(rd, &in) == ARCHIVE_OK; i++) {
		struct strbuf body = STRBUF_INIT;
		char buf[65536];
		la_ssize_t r;
		if (!want[i])
			continue;
		while ((r = archive_read_data(rd, buf, sizeof(buf))) > 0)
			strbuf_add(&body, buf, (size_t)r);
		archive_entry_clear(e);
		archive_entry_set_pathname(e, p->files[i].sha256);
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_perm(e, 0600);   /* the host's blobs are its user's alone */
		archive_entry_set_size(e, (la_int64_t)body.len);
		archive_entry_set_mtime(e, 0, 0);
		if (r < 0 || body.len != p->files[i].size || archive_write_header(wr, e) != ARCHIVE_OK ||
		    (body.len && archive_write_data(wr, body.buf, body.len) != (la_ssize_t)body.len)) {
			st = go_fail(err, GO_ERR_INTERNAL, "cannot copy '%s' into the blob archive: %s",
				     p->files[i].path, r < 0 ? archive_error_string(rd) : archive_error_string(wr));
			strbuf_release(&body);
			goto out;
		}
		strbuf_release(&body);
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
