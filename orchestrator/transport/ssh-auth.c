/* ssh-auth.c -- authentication: ssh-agent keys or a key file, and why an RSA key fails (SHA-1). */
#include "transport/ssh-int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <openssl/evp.h>
#include "core/strbuf.h"
#include "core/banned.h"

/* ------------------------------------------------------------------ */
/* authentication                                                      */

/* Does the key file (or its .pub) hold an RSA key? */
static int key_is_rsa(const char *identity)
{
	struct strbuf path = STRBUF_INIT;
	char head[4096];
	size_t n = 0;
	FILE *f;
	int rsa = 0;

	strbuf_addf(&path, "%s.pub", identity);
	f = fopen(path.buf, "r");
	strbuf_release(&path);
	if (f) {
		n = fread(head, 1, sizeof(head) - 1, f);
		fclose(f);
		head[n] = '\0';
		return !strncmp(head, "ssh-rsa ", 8);
	}
	f = fopen(identity, "r");
	if (!f)
		return 0;
	n = fread(head, 1, sizeof(head) - 1, f);
	fclose(f);
	head[n] = '\0';
	if (strstr(head, "BEGIN RSA PRIVATE KEY"))
		return 1;
	if (strstr(head, "BEGIN OPENSSH PRIVATE KEY")) {
		/* openssh-key-v1: the public key's type string comes early */
		const char *b = strchr(head, '\n');
		unsigned char bin[1024];
		char b64[1024];
		size_t k = 0;
		int m;
		if (!b)
			return 0;
		for (b++; *b && *b != '-' && k + 4 < sizeof(b64) - 1; b++)
			if (*b != '\n' && *b != '\r')
				b64[k++] = *b;
		k -= k % 4;
		b64[k] = '\0';
		m = EVP_DecodeBlock(bin, (const unsigned char *)b64, (int)k);
		if (m > 7 && mem_find(bin, (size_t)m, "ssh-rsa", 7))
			rsa = 1;
	}
	return rsa;
}

/* OpenSSH >= 8.8 refuses ssh-rsa (SHA-1) signatures. */
static int server_refuses_sha1_rsa(struct ssh_conn *c)
{
	const char *banner = libssh2_session_banner_get(c->session);
	const char *p;
	int major = 0, minor = 0;

	if (!banner || !(p = strstr(banner, "OpenSSH_")))
		return 0;
	if (sscanf(p + 8, "%d.%d", &major, &minor) < 1)
		return 0;
	return major > 8 || (major == 8 && minor >= 8);
}

enum go_status ssh_auth_agent(struct ssh_conn *c, int64_t deadline, int timeout_ms,
			      struct strbuf *err)
{
	LIBSSH2_AGENT *agent = libssh2_agent_init(c->session);
	struct libssh2_agent_publickey *id = NULL, *prev = NULL;
	int rc, tried = 0;
	enum go_status st;

	if (!agent)
		return ssh_map_error(c, LIBSSH2_ERROR_ALLOC, "cannot use ssh-agent", err);
	if (libssh2_agent_connect(agent)) {
		libssh2_agent_free(agent);
		return go_fail(err, GO_ERR_AUTH,
			       "%s: no identity file given and cannot reach ssh-agent (SSH_AUTH_SOCK); "
			       "set \"identity\" for this host or start an agent", c->where);
	}
	SSH_RETRY(c, deadline, rc, libssh2_agent_list_identities(agent));
	if (rc) {
		st = ssh_map_error(c, rc, "cannot list ssh-agent identities", err);
		goto out;
	}
	for (;;) {
		rc = libssh2_agent_get_identity(agent, &id, prev);
		if (rc)
			break;
		tried++;
		SSH_RETRY(c, deadline, rc, libssh2_agent_userauth(agent, c->user, id));
		if (!rc) {
			st = GO_OK;
			goto out;
		}
		if (rc == LIBSSH2_ERROR_TIMEOUT) {
			st = ssh_fail_timeout(c, "authentication", timeout_ms, err);
			goto out;
		}
		if (ssh_is_socket_error(rc)) {
			st = ssh_map_error(c, rc, "authentication", err);
			goto out;
		}
		prev = id;
	}
	st = go_fail(err, GO_ERR_AUTH,
		     "%s: authentication as '%s' refused for all %d ssh-agent keys; "
		     "add one of them to ~%s/.ssh/authorized_keys on the host or set \"identity\"",
		     c->where, c->user, tried, c->user);
out:
	libssh2_agent_disconnect(agent);
	libssh2_agent_free(agent);
	return st;
}

enum go_status ssh_auth_keyfile(struct ssh_conn *c, const char *identity, int64_t deadline,
				int timeout_ms, struct strbuf *err)
{
	struct strbuf pub = STRBUF_INIT;
	const char *pubpath = NULL;
	int rc;
	enum go_status st = GO_OK;

	if (access(identity, R_OK) < 0)
		return go_fail(err, GO_ERR_AUTH, "%s: cannot read identity file '%s': %s",
			       c->where, identity, strerror(errno));
	strbuf_addf(&pub, "%s.pub", identity);
	if (access(pub.buf, R_OK) == 0)
		pubpath = pub.buf;
	SSH_RETRY(c, deadline, rc,
		  libssh2_userauth_publickey_fromfile_ex(c->session, c->user,
							 (unsigned int)strlen(c->user),
							 pubpath, identity, NULL));
	if (rc == 0)
		goto out;
	if (rc == LIBSSH2_ERROR_TIMEOUT) {
		st = ssh_fail_timeout(c, "authentication", timeout_ms, err);
	} else if (ssh_is_socket_error(rc)) {
		st = ssh_map_error(c, rc, "authentication", err);
	} else if (key_is_rsa(identity) && server_refuses_sha1_rsa(c)) {
		st = go_fail(err, GO_ERR_AUTH,
			     "%s: authentication as '%s' with key '%s' failed: "
			     "libssh2 1.10 (Debian 12) cannot log in with an RSA key to OpenSSH 8.8 or later "
			     "(it only signs with ssh-rsa/SHA-1, which the server refuses); use an ed25519 key",
			     c->where, c->user, identity);
	} else if (rc == LIBSSH2_ERROR_FILE) {
		char *msg = NULL;
		libssh2_session_last_error(c->session, &msg, NULL, 0);
		st = go_fail(err, GO_ERR_AUTH,
			     "%s: cannot use identity file '%s' (%s); is it a passphrase-less private key?",
			     c->where, identity, msg ? msg : "unreadable");
	} else {
		st = go_fail(err, GO_ERR_AUTH,
			     "%s: authentication as '%s' with key '%s' was refused; "
			     "add '%s' to ~%s/.ssh/authorized_keys on the host",
			     c->where, c->user, identity, pubpath ? pubpath : "its public key", c->user);
	}
out:
	strbuf_release(&pub);
	return st;
}
