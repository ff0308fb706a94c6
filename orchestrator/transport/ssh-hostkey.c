/* ssh-hostkey.c -- the host key check: known_hosts loading, fingerprints, verify or append the key. */
#include "transport/ssh-int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/evp.h>
#include "core/strbuf.h"
#include "core/banned.h"

/* ------------------------------------------------------------------ */
/* host key                                                            */

static void compute_fingerprint(const char *key, size_t len, char out[64])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	unsigned char b64[64];
	int n;

	EVP_Digest(key, len, md, &mdlen, EVP_sha256(), NULL);
	n = EVP_EncodeBlock(b64, md, (int)mdlen);   /* 44 chars for 32 bytes */
	while (n > 0 && b64[n - 1] == '=')
		n--;
	b64[n] = '\0';
	snprintf(out, 64, "SHA256:%.50s", (const char *)b64);
}

static int knownhost_keybit(int hostkey_type, const char **name)
{
	switch (hostkey_type) {
	case LIBSSH2_HOSTKEY_TYPE_RSA:
		*name = "ssh-rsa";
		return LIBSSH2_KNOWNHOST_KEY_SSHRSA;
	case LIBSSH2_HOSTKEY_TYPE_DSS:
		*name = "ssh-dss";
		return LIBSSH2_KNOWNHOST_KEY_SSHDSS;
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_256:
		*name = "ecdsa-sha2-nistp256";
		return LIBSSH2_KNOWNHOST_KEY_ECDSA_256;
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_384:
		*name = "ecdsa-sha2-nistp384";
		return LIBSSH2_KNOWNHOST_KEY_ECDSA_384;
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_521:
		*name = "ecdsa-sha2-nistp521";
		return LIBSSH2_KNOWNHOST_KEY_ECDSA_521;
	case LIBSSH2_HOSTKEY_TYPE_ED25519:
		*name = "ssh-ed25519";
		return LIBSSH2_KNOWNHOST_KEY_ED25519;
	default:
		*name = "unknown";
		return LIBSSH2_KNOWNHOST_KEY_UNKNOWN;
	}
}

/* Load the known_hosts file line by line, skipping lines libssh2 cannot
 * parse (markers, key types it does not know) instead of giving up. A
 * missing file is an empty one. */
static enum go_status load_known_hosts(struct ssh_conn *c, LIBSSH2_KNOWNHOSTS *kh,
				       const char *path, struct strbuf *text,
				       struct strbuf *err)
{
	FILE *f = fopen(path, "r");
	char buf[8192];
	size_t n;

	if (!f) {
		if (errno == ENOENT)
			return GO_OK;
		return go_fail(err, GO_ERR_IO, "%s: cannot read known hosts file '%s': %s",
			       c->where, path, strerror(errno));
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(text, buf, n);
	if (ferror(f)) {
		int e = errno;
		fclose(f);
		return go_fail(err, GO_ERR_IO, "%s: cannot read known hosts file '%s': %s",
			       c->where, path, strerror(e));
	}
	fclose(f);

	{
		const char *p = text->buf, *end = text->buf + text->len;
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
			const char *q = p;
			while (q < p + len && (*q == ' ' || *q == '\t'))
				q++;
			if (q < p + len && *q != '#' && *q != '\n' && *q != '@')
				(void)libssh2_knownhost_readline(kh, p, len,
								 LIBSSH2_KNOWNHOST_FILE_OPENSSH);
			p += len;
		}
	}
	return GO_OK;
}

/* Does the host field of a known_hosts line (comma-separated patterns)
 * name host exactly? Hashed fields ("|1|...") count as a weak match (2). */
static int line_names_host(const char *line, size_t len, const char *host)
{
	size_t hl = strlen(host), i = 0, start = 0;

	while (i < len && line[i] != ' ' && line[i] != '\t')
		i++;
	if (i >= 3 && !memcmp(line, "|1|", 3))
		return 2;
	for (size_t j = 0; j <= i; j++) {
		if (j == i || line[j] == ',') {
			if (j - start == hl && !memcmp(line + start, host, hl))
				return 1;
			start = j + 1;
		}
	}
	return 0;
}

/* 1-based line of the file that holds the base64 key b64 for host (the
 * first line naming the host, else a hashed one, else any), 0 if none. */
static int find_key_line(const struct strbuf *text, const char *b64, const char *host)
{
	const char *p = text->buf, *end = text->buf + text->len;
	size_t klen = b64 ? strlen(b64) : 0;
	int line = 1, hashed = 0, any = 0;

	if (!klen)
		return 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (len >= klen && mem_find(p, len, b64, klen)) {
			int m = line_names_host(p, len, host);
			if (m == 1)
				return line;
			if (m == 2 && !hashed)
				hashed = line;
			if (!any)
				any = line;
		}
		if (!nl)
			break;
		p = nl + 1;
		line++;
	}
	return hashed ? hashed : any;
}

static enum go_status append_known_host(struct ssh_conn *c, LIBSSH2_KNOWNHOSTS *kh,
					struct libssh2_knownhost *entry, const char *path,
					struct strbuf *err)
{
	char line[4096];
	size_t outlen = 0;
	int fd, rc;
	struct stat stbuf;
	int need_nl = 0;

	rc = libssh2_knownhost_writeline(kh, entry, line, sizeof(line), &outlen,
					 LIBSSH2_KNOWNHOST_FILE_OPENSSH);
	if (rc)
		return ssh_map_error(c, rc, "cannot format the known hosts line", err);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return go_fail(err, GO_ERR_IO, "%s: cannot write known hosts file '%s': %s",
			       c->where, path, strerror(errno));
	if (fstat(fd, &stbuf) == 0 && stbuf.st_size > 0) {
		/* make sure the file ended with a newline */
		int rfd = open(path, O_RDONLY | O_CLOEXEC);
		char last = '\n';
		if (rfd >= 0) {
			if (pread(rfd, &last, 1, stbuf.st_size - 1) == 1 && last != '\n')
				need_nl = 1;
			close(rfd);
		}
	}
	if ((need_nl && write(fd, "\n", 1) != 1) ||
	    write(fd, line, outlen) != (ssize_t)outlen || fsync(fd) < 0) {
		int e = errno;
		close(fd);
		return go_fail(err, GO_ERR_IO, "%s: cannot write known hosts file '%s': %s",
			       c->where, path, strerror(e));
	}
	if (close(fd) < 0)
		return go_fail(err, GO_ERR_IO, "%s: cannot write known hosts file '%s': %s",
			       c->where, path, strerror(errno));
	return GO_OK;
}

enum go_status ssh_verify_host_key(struct ssh_conn *c, const struct ssh_opts *o,
				   struct strbuf *err)
{
	const char *key;
	size_t keylen = 0;
	int type = 0, keybit, check;
	const char *keyname;
	LIBSSH2_KNOWNHOSTS *kh;
	struct libssh2_knownhost *entry = NULL;
	struct strbuf text = STRBUF_INIT, hostpat = STRBUF_INIT;
	const char *khpath = o->known_hosts;
	enum go_status st = GO_OK;

	key = libssh2_session_hostkey(c->session, &keylen, &type);
	if (!key)
		return ssh_map_error(c, LIBSSH2_ERROR_HOSTKEY_INIT,
				     "the server sent no host key", err);
	compute_fingerprint(key, keylen, c->fingerprint);
	keybit = knownhost_keybit(type, &keyname);
	if (c->port == 22)
		strbuf_addstr(&hostpat, c->address);
	else
		strbuf_addf(&hostpat, "[%s]:%d", c->address, c->port);

	if (!khpath || !*khpath) {
		strbuf_release(&hostpat);
		return go_fail(err, GO_ERR_HOSTKEY,
			       "%s: no known hosts file to check the host key %s against; set \"known_hosts\" for this host",
			       c->where, c->fingerprint);
	}
	kh = libssh2_knownhost_init(c->session);
	if (!kh) {
		strbuf_release(&hostpat);
		return ssh_map_error(c, LIBSSH2_ERROR_ALLOC, "cannot check the host key", err);
	}
	st = load_known_hosts(c, kh, khpath, &text, err);
	if (st)
		goto out;

	check = libssh2_knownhost_checkp(kh, c->address, c->port, key, keylen,
					 LIBSSH2_KNOWNHOST_TYPE_PLAIN |
					 LIBSSH2_KNOWNHOST_KEYENC_RAW | keybit, &entry);
	switch (check) {
	case LIBSSH2_KNOWNHOST_CHECK_MATCH:
		break;
	case LIBSSH2_KNOWNHOST_CHECK_MISMATCH: {
		int line = find_key_line(&text, entry ? entry->key : NULL, hostpat.buf);
		struct strbuf at = STRBUF_INIT;
		if (line)
			strbuf_addf(&at, "%s:%d", khpath, line);
		else
			strbuf_addstr(&at, khpath);
		st = go_fail(err, GO_ERR_HOSTKEY,
			     "%s: host key for '%s' has CHANGED (someone may be intercepting the connection): "
			     "the server offers %s key fingerprint %s, expected the key at %s; "
			     "if the change is expected, remove that line",
			     c->where, hostpat.buf, keyname, c->fingerprint, at.buf);
		strbuf_release(&at);
		break;
	}
	case LIBSSH2_KNOWNHOST_CHECK_NOTFOUND:
		if (!o->accept_new_hostkey) {
			st = go_fail(err, GO_ERR_HOSTKEY,
				     "%s: host key for '%s' is not in '%s': the server offers %s key fingerprint %s; "
				     "if that is the host's key, run again with --accept-new-host-key to record it",
				     c->where, hostpat.buf, khpath, keyname, c->fingerprint);
			break;
		}
		if (keybit == LIBSSH2_KNOWNHOST_KEY_UNKNOWN) {
			st = go_fail(err, GO_ERR_HOSTKEY,
				     "%s: cannot record host key of unknown type %d for '%s'",
				     c->where, type, hostpat.buf);
			break;
		}
		{
			struct libssh2_knownhost *added = NULL;
			int rc = libssh2_knownhost_addc(kh, hostpat.buf, NULL, key, keylen,
							NULL, 0,
							LIBSSH2_KNOWNHOST_TYPE_PLAIN |
							LIBSSH2_KNOWNHOST_KEYENC_RAW | keybit,
							&added);
			if (rc) {
				st = ssh_map_error(c, rc, "cannot record the host key", err);
				break;
			}
			st = append_known_host(c, kh, added, khpath, err);
			if (st)
				break;
			free(c->notice);
			c->notice = xstrfmt("%s: added %s host key %s for '%s' to '%s'",
					    c->where, keyname, c->fingerprint, hostpat.buf, khpath);
		}
		break;
	default:
		st = go_fail(err, GO_ERR_HOSTKEY,
			     "%s: cannot check host key %s against '%s'", c->where,
			     c->fingerprint, khpath);
		break;
	}
out:
	libssh2_knownhost_free(kh);
	strbuf_release(&text);
	strbuf_release(&hostpat);
	if (!st)
		ssh_conn_set_state(c, CONN_VERIFIED);
	return st;
}
