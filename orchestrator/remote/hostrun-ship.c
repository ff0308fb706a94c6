/* hostrun-ship.c -- how the sources reach a host: the files it lacks,
 * guessed from the controller's ledger of it (shipledger.h) or named by the
 * host, written by the host's execd straight into its blob store (checked
 * against their hashes there: ssh_execd_put), or where it has none as a tar
 * on the start's stdin (remote.h); and the record's ship entry once the
 * host has them. */
#include "remote/hostrun-int.h"
#include "remote/blobs.h"
#include "core/jsonutil.h"
#include "transport/ssh.h"
#include "core/timeutil.h"

#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

/* Files the ledger does not list go with the first start unasked up to
 * this many bytes (more, or one sent there before that the host was not
 * seen to hold: the host is asked which it lacks first). */
#define SEND_UNASKED_MAX (8u << 20)
/* A put of the blobs through the execd: bounded like a start's wait. */
#define SHIP_PUT_TIMEOUT_MS (10 * 60 * 1000)

static void drop_tar(struct hr_ship *sh)
{
	int i;
	free(sh->tar);
	sh->tar = NULL;
	sh->tar_len = 0;
	for (i = 0; i < sh->nwant; i++)
		free(sh->want[i]);
	free(sh->want);
	sh->want = NULL;
	sh->nwant = 0;
}

/* The host is to get these n blobs (hashes) next. */
static enum go_status carry(struct hostrun *hr, struct hr_ship *sh, char *const *hashes, int n,
			    struct strbuf *err)
{
	int i;
	(void)err;
	drop_tar(sh);
	if (!n)
		return GO_OK;
	sh->want = xcalloc((size_t)n, sizeof(*sh->want));
	for (i = 0; i < n; i++)
		sh->want[i] = xstrdup(hashes[i]);
	sh->nwant = n;
	shipledger_sending(hr->h, &sh->ledger, hashes, n);
	return GO_OK;
}

/* Through the host's execd: 1 when it stored them all (counted as
 * arrived), 0 when they go on the start (what it said is in hr->out). */
static int put_through_execd(struct hostrun *hr, struct hr_ship *sh)
{
	struct strbuf err = STRBUF_INIT, errout = STRBUF_INIT;
	struct ssh_exec_result res;
	unsigned char *data = NULL;
	size_t len = 0;
	int64_t t0 = time_mono_ms();
	enum go_status st;

	st = blobs_frames(hr->ctx->pack, sh->want, sh->nwant, &data, &len, &err);
	if (!st)
		st = ssh_execd_put(hr->conn, hr->plan.blobs_dir, data, len, &errout, &res,
				   SHIP_PUT_TIMEOUT_MS, &err);
	free(data);
	if (!st && res.exit_code == 0 && !res.signal[0]) {
		sh->upload_ms += time_mono_ms() - t0;
		sh->sent += len;
		sh->nblobs += sh->nwant;
		sh->via_execd = 1;
	} else if (st != GO_ERR_NOT_FOUND) {
		strbuf_trim(&errout);
		strbuf_addf(&hr->out, "  ship: the host's execd did not store them all (%s): they go "
			    "with the start\n", errout.len ? errout.buf : err.len ? err.buf : "no reason given");
	}
	strbuf_release(&err);
	strbuf_release(&errout);
	return !st && res.exit_code == 0 && !res.signal[0];
}

enum go_status hr_ship_tar(struct hostrun *hr, struct hr_ship *sh, struct strbuf *err)
{
	if (!sh->nwant || sh->tar)
		return GO_OK;
	return blobs_tar(hr->ctx->pack, sh->want, sh->nwant, &sh->tar, &sh->tar_len, err);
}

enum go_status hr_ship_prepare(struct hostrun *hr, struct hr_ship *sh, struct strbuf *err)
{
	if (!sh->nwant || sh->tar)
		return GO_OK;
	if (hr->conn && put_through_execd(hr, sh)) {
		drop_tar(sh);
		return GO_OK;
	}
	return hr_ship_tar(hr, sh, err);
}

enum go_status hr_ship_begin(struct hostrun *hr, struct hr_ship *sh, struct strbuf *err)
{
	const struct pack *pk = hr->ctx->pack;
	char **want = xcalloc((size_t)pk->nfiles + 1, sizeof(*want));
	size_t bytes = 0;
	int i, j, n = 0, resend = 0;
	enum go_status st = GO_OK;

	memset(sh, 0, sizeof(*sh));
	shipledger_load(hr->h, &sh->ledger);
	for (i = 0; i < pk->nfiles; i++) {
		const char *h = pk->files[i].sha256;
		if (shipledger_has(&sh->ledger, h))
			continue;
		for (j = 0; j < n && strcmp(want[j], h); j++)
			;
		if (j < n)
			continue;   /* the same content twice goes once */
		want[n++] = pk->files[i].sha256;
		bytes += pk->files[i].size;
		resend |= shipledger_was_sent(&sh->ledger, h);
	}
	if (n && bytes <= SEND_UNASKED_MAX && !resend)
		st = carry(hr, sh, want, n, err);
	free(want);
	return st;
}

enum go_status hr_ship_missing(struct hostrun *hr, struct hr_ship *sh, char *const *hashes, int n,
			       struct strbuf *err)
{
	sh->asked = 1;
	return carry(hr, sh, hashes, n, err);
}

void hr_ship_sending(struct hr_ship *sh, struct remote_runner *rr)
{
	sh->t_call = time_mono_ms();
	rr->blobs = sh->tar;
	rr->blobs_len = sh->tar_len;
}

void hr_ship_arrived(struct hr_ship *sh)
{
	if (!sh->tar)
		return;
	sh->upload_ms += time_mono_ms() - sh->t_call;
	sh->sent += sh->tar_len;
	sh->nblobs += sh->nwant;
	drop_tar(sh);
}

void hr_ship_host_has(struct hostrun *hr, struct hr_ship *sh)
{
	shipledger_add_pack(hr->h, &sh->ledger, hr->ctx->pack);
}

void hr_ship_record(struct hostrun *hr, struct hr_ship *sh, int reused, int64_t t0)
{
	const struct pack *pk = hr->ctx->pack;
	struct runw_ship rs;
	char *d;

	hr_ship_arrived(sh);   /* the start got past its sources: what it carried arrived */
	rs.bytes_sent = (double)sh->sent;
	rs.reused = reused;
	rs.remote_dir = hr->plan.content_dir;
	rs.files_sent = sh->nblobs;
	rs.files = pk->nfiles;
	rs.agent_source_bytes = (double)sh->agent_sent;
	rs.upload_s = (double)sh->upload_ms / 1000.0;
	runw_host_ship(hr->ctx->rec, hr->index, &rs);
	d = reused && sh->sent ? xstrfmt("content %.12s already on the host (%llu bytes sent with the "
					 "start, unasked: the controller had no record of them there)",
					 pk->content_id, (unsigned long long)sh->sent)
	    : reused ? xstrfmt("content %.12s already on the host: 0 bytes sent", pk->content_id)
		   : sh->nblobs < pk->nfiles
		   ? xstrfmt("%llu bytes sent (%d of %d files; the host had the others)",
			     (unsigned long long)sh->sent, sh->nblobs, pk->nfiles)
		   : xstrfmt("%llu bytes sent (%d file%s)", (unsigned long long)sh->sent, pk->nfiles,
			     pk->nfiles == 1 ? "" : "s");
	if (sh->via_execd) {
		char *dx = xstrfmt("%s, written by the host's execd", d);
		free(d);
		d = dx;
	}
	hostrun_phase(hr, "ship", ST_PASS, t0, d);
	strbuf_addf(&hr->out, "  ship: %s\n", d);
	free(d);
}

void hr_ship_end(struct hr_ship *sh)
{
	drop_tar(sh);
	shipledger_release(&sh->ledger);
}
