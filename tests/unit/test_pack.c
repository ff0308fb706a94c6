/* test_pack.c -- unit tests of pack.c: deterministic archives from a work tree and a commit. */
#include "remote/pack.h"
#include "remote/blobs.h"
#include "core/fsutil.h"
#include "core/proc.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "core/banned.h"


static char tmp[] = "/tmp/test_pack.XXXXXX";
static char *root;

/* Setup helper: a shell snippet in dir (proc_run itself never uses a shell). */
static int sh(const char *dir, const char *script, struct strbuf *out)
{
	struct strbuf o = STRBUF_INIT, eo = STRBUF_INIT, err = STRBUF_INIT;
	const char *argv[] = { "sh", "-c", script, NULL };
	int code = -1;
	if (proc_run(dir, argv, out ? out : &o, &eo, &code, &err) != GO_OK)
		printf("# cannot run sh: %s\n", err.buf);
	else if (code != 0)
		printf("# '%s' exited %d: %s\n", script, code, eo.buf);
	strbuf_release(&o);
	strbuf_release(&eo);
	strbuf_release(&err);
	return code;
}

static void put(const char *rel, const char *text)
{
	struct strbuf err = STRBUF_INIT;
	char *path = xstrfmt("%s/%s", root, rel);
	char *dir = fs_dirname(path);
	if (fs_mkdir_p(dir, 0755, &err) != GO_OK ||
	    fs_write_atomic(path, text, strlen(text), &err) != GO_OK)
		printf("# cannot write %s: %s\n", path, err.buf);
	free(dir);
	free(path);
	strbuf_release(&err);
}

static enum go_status pack_wt(char *const *files, struct pack *p, struct strbuf *err)
{
	return pack_worktree(root, files, p, err);
}

static void test_worktree(void)
{
	char *files[] = { "kernels/b.cu", "a.h", "tools/run.sh", NULL };
	char *reversed[] = { "tools/run.sh", "a.h", "kernels/b.cu", NULL };
	struct strbuf err = STRBUF_INIT, listing = STRBUF_INIT;
	struct pack p1, p2, p3;
	enum go_status st;
	char *tarpath = xstrfmt("%s/out.tar", tmp);

	put("a.h", "#pragma once\n");
	put("kernels/b.cu", "__global__ void k() {}\n");
	put("tools/run.sh", "#!/bin/sh\necho hi\n");
	sh(root, "chmod 755 tools/run.sh && touch -d '2001-01-01 00:00:00' a.h", NULL);

	st = pack_wt(files, &p1, &err);
	CHECK(st == GO_OK && p1.len > 0 && p1.len % 512 == 0 && strlen(p1.content_id) == 64,
	      "pack_worktree makes a tar archive with a content id", "st=%d err=%s len=%zu", st,
	      err.buf, p1.len);
	CHECK(p1.nfiles == 3 && !strcmp(p1.files[0].path, "a.h") &&
	      !strcmp(p1.files[1].path, "kernels/b.cu") && !strcmp(p1.files[2].path, "tools/run.sh"),
	      "files are listed sorted by path", "nfiles=%d", p1.nfiles);
	{
		char want[SHA256_HEX_LEN + 1];
		sha256_hex("#pragma once\n", 13, want);
		CHECK(p1.nfiles == 3 && p1.files[0].size == 13 && !strcmp(p1.files[0].sha256, want),
		      "per-file size and sha256 are recorded", "size=%zu",
		      p1.nfiles ? p1.files[0].size : 0);
	}

	st = pack_wt(reversed, &p2, &err);
	CHECK(st == GO_OK && !strcmp(p1.content_id, p2.content_id) && p1.len == p2.len &&
	      !memcmp(p1.data, p2.data, p1.len),
	      "the same files in another order give the same bytes", "%s vs %s", p1.content_id,
	      p2.content_id);
	pack_release(&p2);

	sh(root, "touch -d '2030-06-01 12:00:00' a.h kernels/b.cu tools/run.sh", NULL);
	st = pack_wt(files, &p2, &err);
	CHECK(st == GO_OK && !strcmp(p1.content_id, p2.content_id),
	      "different mtimes give the same content id", "%s vs %s", p1.content_id,
	      p2.content_id);
	pack_release(&p2);

	put("kernels/b.cu", "__global__ void k() {}\r");
	st = pack_wt(files, &p3, &err);
	CHECK(st == GO_OK && strcmp(p1.content_id, p3.content_id) &&
	      strcmp(p1.files[1].sha256, p3.files[1].sha256) &&
	      !strcmp(p1.files[0].sha256, p3.files[0].sha256),
	      "one changed byte changes the content id and that file's hash only", "%s", err.buf);
	pack_release(&p3);
	put("kernels/b.cu", "__global__ void k() {}\n");

	/* What tar sees: exactly our files, sorted, root-owned, mtime 0, modes. */
	fs_write_atomic(tarpath, p1.data, p1.len, &err);
	{
		const char *argv[] = { "tar", "--numeric-owner", "--utc", "-tvf", tarpath, NULL };
		int code = -1;
		st = proc_run(NULL, argv, &listing, NULL, &code, &err);
		CHECK(st == GO_OK && code == 0, "tar reads the archive", "st=%d code=%d %s", st, code,
		      err.buf);
	}
	{
		const char *want[] = { "-rw-r--r-- 0/0", "a.h",
				       "-rw-r--r-- 0/0", "kernels/b.cu",
				       "-rwxr-xr-x 0/0", "tools/run.sh" };
		char *line = listing.buf;
		int i, ok = 1, lines = 0;
		for (i = 0; i < 3 && ok; i++) {
			char *nl = strchr(line, '\n');
			size_t len = nl ? (size_t)(nl - line) : strlen(line);
			char *l = xstrfmt("%.*s", (int)len, line);
			const char *name = strrchr(l, ' ');
			ok = !strncmp(l, want[2 * i], strlen(want[2 * i])) && name &&
			     !strcmp(name + 1, want[2 * i + 1]) && strstr(l, "1970-01-01 00:00");
			free(l);
			lines++;
			line = nl ? nl + 1 : line + len;
		}
		CHECK(ok && lines == 3 && *line == '\0',
		      "tar -tvf lists exactly the files: sorted, 0/0, mtime 0, 0644 / 0755",
		      "listing:\n%s", listing.buf);
	}
	{
		struct strbuf sums = STRBUF_INIT;
		char *cmd = xstrfmt("mkdir x && cd x && tar -xf %s && sha256sum kernels/b.cu", tarpath);
		sh(tmp, cmd, &sums);
		CHECK(!strncmp(sums.buf, p1.files[1].sha256, 64),
		      "an extracted file has the recorded sha256", "sha256sum: %s", sums.buf);
		free(cmd);
		strbuf_release(&sums);
	}
	{
		cJSON *j = pack_files_json(&p1);
		cJSON *f = cJSON_GetArrayItem(j, 2);
		CHECK(cJSON_GetArraySize(j) == 3 &&
		      !strcmp(cJSON_GetObjectItem(f, "path")->valuestring, "tools/run.sh") &&
		      cJSON_GetObjectItem(f, "size")->valuedouble == 18 &&
		      !strcmp(cJSON_GetObjectItem(f, "sha256")->valuestring, p1.files[2].sha256),
		      "pack_files_json lists path, size, sha256", "n=%d", cJSON_GetArraySize(j));
		cJSON_Delete(j);
	}

	/* Refusals. */
	{
		char *missing[] = { "a.h", "nope.cu", NULL };
		st = pack_wt(missing, &p2, &err);
		CHECK(st != GO_OK && strstr(err.buf, "'nope.cu'") && !p2.data && !p2.nfiles,
		      "a missing file is an error naming it, and nothing is returned", "st=%d err=%s",
		      st, err.buf);
	}
	{
		char *dotdot[] = { "../etc/passwd", NULL };
		char *abs[] = { "/etc/passwd", NULL };
		char *dup[] = { "a.h", "a.h", NULL };
		st = pack_wt(dotdot, &p2, &err);
		CHECK(st != GO_OK && strstr(err.buf, "../etc/passwd"), "'..' paths are refused",
		      "st=%d err=%s", st, err.buf);
		st = pack_wt(abs, &p2, &err);
		CHECK(st != GO_OK, "absolute paths are refused", "st=%d", st);
		st = pack_wt(dup, &p2, &err);
		CHECK(st != GO_OK && strstr(err.buf, "twice"), "duplicate paths are refused",
		      "st=%d err=%s", st, err.buf);
	}
	{
		char *in[] = { "link-in.h", NULL };
		char *out[] = { "link-out", NULL };
		char *dir[] = { "kernels", NULL };
		char *fifo[] = { "fifo", NULL };
		struct pack p4;
		sh(root, "ln -s a.h link-in.h && ln -s /etc/hostname link-out && mkfifo fifo", NULL);
		st = pack_wt(in, &p4, &err);
		CHECK(st == GO_OK && p4.nfiles == 1 && p4.files[0].size == 13,
		      "a symlink to a file inside the root is packed as that file", "st=%d err=%s", st,
		      err.buf);
		pack_release(&p4);
		st = pack_wt(out, &p2, &err);
		CHECK(st != GO_OK && strstr(err.buf, "outside"),
		      "a symlink pointing outside the root is refused", "st=%d err=%s", st, err.buf);
		st = pack_wt(dir, &p2, &err);
		CHECK(st != GO_OK && strstr(err.buf, "not a regular file"),
		      "a directory is refused", "st=%d err=%s", st, err.buf);
		st = pack_wt(fifo, &p2, &err);
		CHECK(st != GO_OK && strstr(err.buf, "not a regular file"),
		      "a FIFO is refused (without blocking on it)", "st=%d err=%s", st, err.buf);
	}
	{
		char *big[] = { "big.bin", NULL };
		char *path = xstrfmt("%s/big.bin", root);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || ftruncate(fd, ((off_t)64 << 20) + 1) < 0)
			printf("# cannot make big.bin\n");
		if (fd >= 0)
			close(fd);
		st = pack_wt(big, &p2, &err);
		CHECK(st != GO_OK && strstr(err.buf, "big.bin") && strstr(err.buf, "64 MiB"),
		      "a file over 64 MiB is refused with a clear error", "st=%d err=%s", st, err.buf);
		unlink(path);
		free(path);
	}
	{
		char *empty[] = { "empty.txt", NULL };
		struct pack p5;
		put("empty.txt", "");
		st = pack_wt(empty, &p5, &err);
		CHECK(st == GO_OK && p5.nfiles == 1 && p5.files[0].size == 0,
		      "an empty file packs", "st=%d err=%s", st, err.buf);
		pack_release(&p5);
	}
	pack_release(&p1);
	free(tarpath);
	strbuf_release(&listing);
	strbuf_release(&err);
}

static void test_commit(void)
{
	char *files[] = { "kernels/b.cu", "a.h", "tools/run.sh", NULL };
	struct strbuf err = STRBUF_INIT, before = STRBUF_INIT, after = STRBUF_INIT;
	struct pack wt, cm, cm2;
	enum go_status st;
	char *bpath = xstrfmt("%s/kernels/b.cu", root);

	sh(root, "git init -q -b main && git config user.email t@example.com && "
		 "git config user.name Test && git add a.h kernels/b.cu tools/run.sh && "
		 "git commit -q -m init", NULL);
	st = pack_wt(files, &wt, &err);
	CHECK(st == GO_OK, "pack the clean work tree", "%s", err.buf);
	st = pack_commit(root, "HEAD", files, &cm, &err);
	CHECK(st == GO_OK && !strcmp(wt.content_id, cm.content_id) && wt.len == cm.len,
	      "packing HEAD of a clean tree equals packing the work tree (modes included)",
	      "st=%d err=%s %s vs %s", st, err.buf, wt.content_id, cm.content_id);
	pack_release(&wt);

	put("kernels/b.cu", "__global__ void k() { /* dirty */ }\n");
	fs_read_file(bpath, &before, &err);
	st = pack_wt(files, &wt, &err);
	CHECK(st == GO_OK && strcmp(wt.content_id, cm.content_id),
	      "a dirty work tree packs differently from the commit", "%s", err.buf);
	st = pack_commit(root, "main", files, &cm2, &err);
	fs_read_file(bpath, &after, &err);
	CHECK(st == GO_OK && !strcmp(cm.content_id, cm2.content_id),
	      "packing the commit ignores the dirty work tree", "st=%d err=%s", st, err.buf);
	CHECK(!strcmp(before.buf, after.buf) && strstr(after.buf, "dirty"),
	      "pack_commit leaves the work tree untouched", "after=%s", after.buf);
	pack_release(&wt);
	pack_release(&cm2);

	{
		char *extra[] = { "a.h", "empty.txt", NULL };
		st = pack_commit(root, "HEAD", extra, &cm2, &err);
		CHECK(st == GO_ERR_NOT_FOUND && strstr(err.buf, "'empty.txt'") &&
		      strstr(err.buf, "commit") && !cm2.data,
		      "a file missing at the commit is an error naming file and commit",
		      "st=%d err=%s", st, err.buf);
	}
	{
		char *dir[] = { "kernels", NULL };
		st = pack_commit(root, "HEAD", dir, &cm2, &err);
		CHECK(st != GO_OK && strstr(err.buf, "kernels"), "a directory in a commit is refused",
		      "st=%d err=%s", st, err.buf);
	}
	st = pack_commit(root, "v9.9-missing", files, &cm2, &err);
	CHECK(st == GO_ERR_GIT && strstr(err.buf, "unknown revision 'v9.9-missing'"),
	      "an unknown revision is refused", "st=%d err=%s", st, err.buf);

	pack_release(&cm);
	free(bpath);
	strbuf_release(&before);
	strbuf_release(&after);
	strbuf_release(&err);
}

/* A tree whose names all fit ustar (a 166-byte path that splits into its
 * prefix and name fields, a short non-ASCII name, an executable) keeps its
 * bytes: its content id, pinned here, is what the ustar-only packer wrote
 * before names over 100 bytes could ship (issue 32), so a packer change
 * that moves any byte of a tree that shipped then shows. */
#define PINNED_CID "fd5d95d337bf22e86b2440544d13aa7e05a5e462e93f366081ed613e050120b2"

static char *repeat(char c, int n)
{
	char *s = xmalloc((size_t)n + 1);
	memset(s, c, (size_t)n);
	s[n] = '\0';
	return s;
}

static void test_ustar_names_pinned(void)
{
	char *p70 = repeat('p', 70), *q90 = repeat('q', 90);
	char *split = xstrfmt("n/%s/%s.cu", p70, q90);
	char *files[] = { "n/a.h", "n/run.sh", split, "n/\xc3\xbcmlaut-\xd1\x8f\xd0\xb4\xd1\x80\xd0\xbe.cu", NULL };
	struct strbuf err = STRBUF_INIT;
	struct pack p;
	enum go_status st;

	put("n/a.h", "#pragma once\n");
	put("n/run.sh", "#!/bin/sh\necho hi\n");
	put(split, "__global__ void k() {}\n");
	put(files[3], "// \xd1\x8f\xd0\xb4\xd1\x80\xd0\xbe\n");
	sh(root, "chmod 755 n/run.sh", NULL);
	st = pack_wt(files, &p, &err);
	CHECK(st == GO_OK && strlen(split) == 166 && !strcmp(p.content_id, PINNED_CID),
	      "a tree of names that fit ustar packs to the same bytes as before (pinned content id)",
	      "st=%d err=%s content id %s", st, err.buf, p.content_id);
	pack_release(&p);
	free(p70);
	free(q90);
	free(split);
	strbuf_release(&err);
}

/* Names ustar cannot hold (issue 32): a 250-byte path, a 101-byte name with
 * no "/" to split at, a non-ASCII name beside them. They pack (as pax),
 * tar extracts each at its name with its bytes, the blob archive of such a
 * pack is made, the commit packs the same, and a component over 255 bytes
 * (no Linux file system holds it) is refused before anything is read, as
 * is a newline in a name (the manifest, blobs.h, has a line a file). */
static void test_long_names(void)
{
	char *d120 = repeat('d', 120), *f123 = repeat('f', 123), *t98 = repeat('t', 98);
	char *c256 = repeat('c', 256);
	char *lng = xstrfmt("src/%s/%s.c", d120, f123);
	char *top = xstrfmt("%s.cu", t98);
	char *uml = "src/\xc3\xbcmlaut-\xd1\x8f\xd0\xb4\xd1\x80\xd0\xbe.cu";
	char *files[] = { lng, top, uml, "n/a.h", NULL };
	char *tarpath = xstrfmt("%s/long.tar", tmp);
	struct strbuf err = STRBUF_INIT, out = STRBUF_INIT;
	struct pack p, cm;
	enum go_status st;
	int i, same = 1;

	put(lng, "int long_one;\n");
	put(top, "int top_one;\n");
	put(uml, "// \xd1\x8f\xd0\xb4\xd1\x80\xd0\xbe\n");
	st = pack_wt(files, &p, &err);
	CHECK(st == GO_OK && strlen(lng) == 250 && strlen(top) == 101 && p.nfiles == 4,
	      "a 250-byte path, a 101-byte name and a non-ASCII name pack", "st=%d err=%s", st,
	      err.buf);
	fs_write_atomic(tarpath, p.data, p.len, &err);
	sh(tmp, "rm -rf xl && mkdir xl && cd xl && tar -xf ../long.tar 2>/dev/null && "
		"find . -type f | wc -l", &out);
	for (i = 0; i < p.nfiles; i++) {
		struct strbuf data = STRBUF_INIT, e2 = STRBUF_INIT;
		char *x = xstrfmt("%s/xl/%s", tmp, p.files[i].path);
		char sha[SHA256_HEX_LEN + 1] = "";
		if (fs_read_file(x, &data, &e2) == GO_OK)
			sha256_hex(data.buf, data.len, sha);
		same = same && !strcmp(sha, p.files[i].sha256);
		free(x);
		strbuf_release(&data);
		strbuf_release(&e2);
	}
	CHECK(st == GO_OK && same && atoi(out.buf) == 4,
	      "tar extracts each at its exact name with its bytes, and nothing else",
	      "same=%d files extracted: %s", same, out.buf);
	{
		char *missing[4];
		unsigned char *blobs = NULL;
		size_t len = 0;
		for (i = 0; i < 4 && i < p.nfiles; i++)
			missing[i] = p.files[i].sha256;
		st = p.nfiles == 4 ? blobs_tar(&p, missing, 4, &blobs, &len, &err) : GO_ERR_INTERNAL;
		CHECK(st == GO_OK && len > 4 * 512, "the blob archive of such a pack is made",
		      "st=%d err=%s", st, err.buf);
		free(blobs);
	}
	sh(root, "git add -- n/a.h src t*.cu && git commit -q -m long", NULL);
	st = pack_commit(root, "HEAD", files, &cm, &err);
	CHECK(st == GO_OK && !strcmp(cm.content_id, p.content_id),
	      "the commit packs to the same content id", "st=%d err=%s", st, err.buf);
	pack_release(&cm);
	pack_release(&p);
	{
		char *comp = xstrfmt("src/%s.cu", c256);
		char *bad[] = { comp, NULL };
		st = pack_wt(bad, &p, &err);
		CHECK(st != GO_OK && strstr(err.buf, "259 bytes") && strstr(err.buf, "255"),
		      "a component over 255 bytes is refused, saying so", "st=%d err=%s", st, err.buf);
		free(comp);
	}
	{
		char *nl[] = { "src/a\nb.cu", NULL };
		put(nl[0], "int nl;\n");
		st = pack_wt(nl, &p, &err);
		CHECK(st != GO_OK && strstr(err.buf, "a name with a newline cannot ship") && !p.nfiles,
		      "a name with a newline (the manifest's line break) is refused, saying so",
		      "st=%d err=%s", st, err.buf);
	}
	free(d120);
	free(f123);
	free(t98);
	free(c256);
	free(lng);
	free(top);
	free(tarpath);
	strbuf_release(&out);
	strbuf_release(&err);
}

int main(void)
{
	setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	umask(022);
	if (!mkdtemp(tmp)) {
		printf("not ok 1 - mkdtemp\n");
		return 1;
	}
	root = xstrfmt("%s/root", tmp);
	test_worktree();
	test_commit();
	test_ustar_names_pinned();
	test_long_names();
	fs_remove_tree(tmp);
	free(root);
	return check_summary();
}
