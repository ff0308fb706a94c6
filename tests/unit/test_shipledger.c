/* test_shipledger.c -- unit tests of shipledger.c: an unknown host has an
 * empty ledger; what is added is found again after a reload (sorted, each
 * hash once); lines that are not a sha256 are ignored; a host with another
 * work directory has a ledger of its own; a ledger past its cap starts
 * again from the latest pack; what was sent and not yet seen held is kept
 * apart until a pack holding it is added. */
#include "remote/shipledger.h"
#include "remote/probecache.h"
#include "core/fsutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "core/banned.h"

/* a fake pack of n files whose hashes are 64 hex digits made from seed+i */
static void fake_pack(struct pack *p, int n, int seed)
{
	int i;
	memset(p, 0, sizeof(*p));
	p->files = xcalloc((size_t)n, sizeof(*p->files));
	p->nfiles = n;
	for (i = 0; i < n; i++)
		snprintf(p->files[i].sha256, sizeof(p->files[i].sha256), "%064x", seed + i);
}

static void free_pack(struct pack *p)
{
	free(p->files);
}

static char *hex(int v)
{
	return xstrfmt("%064x", v);
}

int main(void)
{
	char tmpl[] = "/tmp/gpuorch-ledger.XXXXXX";
	char *dir = mkdtemp(tmpl), *h0, *h2, *h3, *path;
	struct host h, other;
	struct shipledger l;
	struct pack p, q, big;
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	FILE *f;
	int i, all;

	if (!dir || setenv("GPUORCH_CACHE_DIR", dir, 1))
		return 1;
	memset(&h, 0, sizeof(h));
	h.name = "a";
	h.address = "127.0.0.1";
	h.port = 22;
	other = h;
	other.workdir = "/elsewhere";
	h0 = hex(100);
	h2 = hex(102);
	h3 = hex(103);

	shipledger_load(&h, &l);
	CHECK(l.n == 0 && !shipledger_has(&l, h0), "a host never shipped to has an empty ledger",
	      "n %d", l.n);

	fake_pack(&p, 3, 100);                         /* 100, 101, 102 */
	memcpy(p.files[1].sha256, p.files[0].sha256, sizeof(p.files[1].sha256));   /* the same content twice */
	shipledger_add_pack(&h, &l, &p);
	CHECK(l.n == 2, "a pack's hashes go in once each", "n %d", l.n);
	shipledger_release(&l);
	shipledger_load(&h, &l);
	CHECK(l.n == 2 && shipledger_has(&l, h0) && shipledger_has(&l, h2) &&
	      !shipledger_has(&l, h3), "after a reload the host holds what was added, and no more",
	      "n %d", l.n);
	CHECK(strcmp(l.hashes[0], l.hashes[1]) < 0, "the ledger is sorted", "%s %s",
	      l.hashes[0], l.hashes[1]);

	fake_pack(&q, 2, 102);                         /* 102 again, 103 new */
	shipledger_add_pack(&h, &l, &q);
	shipledger_release(&l);
	shipledger_load(&h, &l);
	CHECK(l.n == 3 && shipledger_has(&l, h3), "a second pack adds only what is new",
	      "n %d", l.n);
	shipledger_release(&l);

	/* a hand-edited or torn file: only whole sha256 lines count */
	path = host_cache_path(&h, "ledger");
	f = fopen(path, "a");
	if (f) {
		fprintf(f, "not a hash\n%063x\n%064X\n%s", 7, 0xabcdef, h0);   /* short, upper case, no newline */
		fclose(f);
	}
	shipledger_load(&h, &l);
	CHECK(l.n == 3, "lines that are not a lower-case sha256 are ignored, a repeat counted once",
	      "n %d", l.n);
	shipledger_release(&l);

	shipledger_load(&other, &l);
	CHECK(l.n == 0, "another work directory on the same host has its own ledger", "n %d", l.n);
	shipledger_release(&l);

	/* sent, not yet seen held: kept across a reload (a controller killed
	 * with SIGKILL), until a pack holding them is added */
	{
		char *v[2] = { hex(200), hex(201) };
		struct pack s200;
		shipledger_load(&other, &l);
		shipledger_sending(&other, &l, v, 2);
		shipledger_release(&l);
		shipledger_load(&other, &l);
		CHECK(shipledger_was_sent(&l, v[0]) && shipledger_was_sent(&l, v[1]) &&
		      !shipledger_has(&l, v[0]) && !shipledger_was_sent(&l, h0),
		      "what was sent is known after a reload, as sent, not held", "nsent %d", l.nsent);
		fake_pack(&s200, 1, 200);              /* 200 held now; 201 not */
		shipledger_add_pack(&other, &l, &s200);
		shipledger_release(&l);
		shipledger_load(&other, &l);
		CHECK(shipledger_has(&l, v[0]) && !shipledger_was_sent(&l, v[0]) &&
		      shipledger_was_sent(&l, v[1]) && l.nsent == 1,
		      "a sent file seen held is sent no more; the others stay sent", "nsent %d", l.nsent);
		shipledger_release(&l);
		shipledger_load(&h, &l);
		CHECK(l.nsent == 0, "another host knows nothing sent", "nsent %d", l.nsent);
		shipledger_release(&l);
		free_pack(&s200);
		free(v[0]);
		free(v[1]);
	}

	/* the cap: 65536 hashes; a pack that would pass it starts the ledger again */
	fake_pack(&big, 65535, 1000000);
	shipledger_load(&h, &l);
	shipledger_add_pack(&h, &l, &big);             /* 3 + 65535 > 65536 */
	CHECK(l.n == 65535 && !shipledger_has(&l, h0) && shipledger_has(&l, big.files[0].sha256),
	      "past the cap the ledger keeps only the latest pack", "n %d", l.n);
	shipledger_release(&l);
	free_pack(&q);
	fake_pack(&q, 1, 50);
	shipledger_load(&h, &l);
	shipledger_add_pack(&h, &l, &q);               /* 65535 + 1 = 65536: at the cap, kept */
	all = l.n == 65536;
	for (i = 0; all && i < 100; i++)
		all = shipledger_has(&l, big.files[i].sha256);
	CHECK(all, "a ledger exactly at the cap keeps everything", "n %d", l.n);
	shipledger_release(&l);

	if (fs_read_file(path, &text, &err) == GO_OK)
		CHECK(text.len == 65536u * 65, "the file is one hash and a newline a line",
		      "%zu bytes", text.len);
	free_pack(&p);
	free_pack(&q);
	free_pack(&big);
	free(path);
	free(h0);
	free(h2);
	free(h3);
	strbuf_release(&text);
	strbuf_release(&err);
	fs_remove_tree(dir);
	return check_summary();
}
