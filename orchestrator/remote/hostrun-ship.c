/* hostrun-ship.c -- what a host's start commands carry of the sources: the
 * files the host lacks, guessed from the controller's ledger of it
 * (shipledger.h) or named by the host, as a tar on the start's stdin
 * (remote.h); and the record's ship entry once the host has them. */
#include "remote/hostrun-int.h"
#include "remote/blobs.h"
#include "core/jsonutil.h"
#include "core/timeutil.h"

#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

/* Files the ledger does not list go with the first start unasked up to
 * this many bytes (more, or one sent there before that the host was not
 * seen to hold: the host is asked which it lacks first). */
#define SEND_UNASKED_MAX (8u << 20)

static void drop_tar(struct hr_ship *sh)
{
	free(sh->tar);
	sh->tar = NULL;
	sh->tar_len = 0;
	sh->tar_n = 0;
}

/* The next start carries these n blobs (hashes). */
static enum go_status carry(struct hostrun *hr, struct hr_ship *sh, char *const *hashes, int n,
			    struct strbuf *err)
{
	enum go_status st;
	drop_tar(sh);
	if (!n)
		return GO_OK;
	st = blobs_tar(hr->ctx->pack, hashes, n, &sh->tar, &sh->tar_len, err);
	if (!st) {
		sh->tar_n = n;
		shipledger_sending(hr->h, &sh->ledger, hashes, n);
	}
	return st;
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
	sh->nblobs += sh->tar_n;
	drop_tar(sh);
}

void hr_ship_host_has(struct hostrun *hr, struct hr_ship *sh)
{
	shipledger_add_pack(hr->h, &sh->ledger, hr->ctx->pack);
}

void hr_ship_record(struct hostrun *hr, struct hr_ship *sh, int reused, int64_t t0)
{
	const struct pack *pk = hr->ctx->pack;
	cJSON *ship;
	char *d;

	hr_ship_arrived(sh);   /* the start got past its sources: what it carried arrived */
	record_lock(hr->ctx->rec);
	ship = cJSON_CreateObject();
	json_add_num(ship, "bytes_sent", (double)sh->sent);
	json_add_bool(ship, "reused", reused);
	json_add_str(ship, "remote_dir", hr->plan.content_dir);
	json_add_num(ship, "files_sent", sh->nblobs);
	json_add_num(ship, "files", pk->nfiles);
	json_add_num(ship, "agent_source_bytes", (double)sh->agent_sent);
	if (sh->nblobs)
		json_add_num(ship, "upload_s", (double)sh->upload_ms / 1000.0);
	cJSON_ReplaceItemInObject(hr->hj, "ship", ship);
	record_unlock(hr->ctx->rec);
	d = reused && sh->sent ? xstrfmt("content %.12s already on the host (%llu bytes sent with the "
					 "start, unasked: the controller had no record of them there)",
					 pk->content_id, (unsigned long long)sh->sent)
	    : reused ? xstrfmt("content %.12s already on the host: 0 bytes sent", pk->content_id)
		   : sh->nblobs < pk->nfiles
		   ? xstrfmt("%llu bytes sent (%d of %d files; the host had the others)",
			     (unsigned long long)sh->sent, sh->nblobs, pk->nfiles)
		   : xstrfmt("%llu bytes sent (%d file%s)", (unsigned long long)sh->sent, pk->nfiles,
			     pk->nfiles == 1 ? "" : "s");
	hostrun_phase(hr, "ship", ST_PASS, t0, d);
	strbuf_addf(&hr->out, "  ship: %s\n", d);
	free(d);
}

void hr_ship_end(struct hr_ship *sh)
{
	drop_tar(sh);
	shipledger_release(&sh->ledger);
}
