/* ssh.c -- SSH through libssh2: connect, verify the host key, authenticate, run, copy.
 *
 * DESIGN
 * One struct ssh_conn per host thread owns one TCP socket, one libssh2
 * session (non-blocking) and, lazily, one SFTP session. Nothing is shared
 * between threads except libssh2's global state (ssh_global_init, once, in
 * main before any thread).
 *
 * Every libssh2 call runs in a loop "call; on EAGAIN wait_socket(); until the
 * deadline". wait_socket() polls the socket in the directions libssh2 says
 * it is blocked on (libssh2_session_block_directions), never longer than the
 * deadline, and sends keepalives while only reading is pending (sending one
 * while an outgoing packet is half-written would interleave packets).
 *
 * The connection goes NEW -> TCP -> HANDSHAKE -> VERIFIED -> READY, or to
 * BROKEN after a lost socket; conn_set_state() is the one place that
 * changes it. Host key checking happens before authentication: a changed
 * key stops everything (no credentials are offered, nothing is run); an
 * unknown key is refused unless accept_new_hostkey, and then the new line
 * is appended to the known_hosts file (appending keeps the user's other
 * lines and comments, which libssh2_knownhost_writefile would rewrite).
 *
 * ssh_map_error() is the one function that turns a libssh2 (or SFTP) error
 * into an enum go_status and a message that names the host. */
#include "ssh.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <libssh2.h>
#include <libssh2_sftp.h>
#include <openssl/evp.h>
#include "timeutil.h"
#include "banned.h"

#define SSH_DEFAULT_CONNECT_MS 10000
#define SSH_DEFAULT_KEEPALIVE_S 15
#define SSH_IO_CHUNK (256 * 1024)
#define SSH_CLOSE_GRACE_MS 2000
#define SSH_ABANDON_GRACE_MS 200

enum conn_state {
	CONN_NEW = 0,
	CONN_TCP,
	CONN_HANDSHAKE,
	CONN_VERIFIED,
	CONN_READY,
	CONN_BROKEN
};

struct ssh_conn {
	enum conn_state state;
	int sock;
	LIBSSH2_SESSION *session;
	LIBSSH2_SFTP *sftp;
	char *where;            /* "label (address:port)" for messages */
	char *label;
	char *address;
	int port;
	char *user;
	char fingerprint[64];   /* "SHA256:..." */
	char *notice;           /* e.g. host key added; NULL when none */
	int keepalive_s;
};

static int global_ready;

/* ------------------------------------------------------------------ */
/* state, global init                                                  */

static void conn_set_state(struct ssh_conn *c, enum conn_state st)
{
	/* BROKEN is final: a lost session cannot be revived */
	if (c->state == CONN_BROKEN)
		return;
	c->state = st;
}

enum go_status ssh_global_init(struct strbuf *err)
{
	int rc;

	if (global_ready)
		return GO_OK;
	rc = libssh2_init(0);
	if (rc)
		return go_fail(err, GO_ERR_SSH, "cannot initialise libssh2 (error %d)", rc);
	global_ready = 1;
	return GO_OK;
}

void ssh_global_cleanup(void)
{
	if (global_ready)
		libssh2_exit();
	global_ready = 0;
}

const char *ssh_fingerprint(const struct ssh_conn *c)
{
	return c ? c->fingerprint : "";
}

const char *ssh_notice(const struct ssh_conn *c)
{
	return c ? c->notice : NULL;
}

/* ------------------------------------------------------------------ */
/* errors                                                              */

static const char *sftp_status_text(unsigned long st)
{
	switch (st) {
	case LIBSSH2_FX_EOF: return "end of file";
	case LIBSSH2_FX_NO_SUCH_FILE: return "no such file";
	case LIBSSH2_FX_PERMISSION_DENIED: return "permission denied";
	case LIBSSH2_FX_FAILURE: return "failure";
	case LIBSSH2_FX_BAD_MESSAGE: return "bad message";
	case LIBSSH2_FX_NO_CONNECTION: return "no connection";
	case LIBSSH2_FX_CONNECTION_LOST: return "connection lost";
	case LIBSSH2_FX_OP_UNSUPPORTED: return "operation unsupported";
	case LIBSSH2_FX_INVALID_HANDLE: return "invalid handle";
	case LIBSSH2_FX_NO_SUCH_PATH: return "no such path";
	case LIBSSH2_FX_FILE_ALREADY_EXISTS: return "file already exists";
	case LIBSSH2_FX_WRITE_PROTECT: return "write protected";
	case LIBSSH2_FX_NO_MEDIA: return "no media";
	case LIBSSH2_FX_NO_SPACE_ON_FILESYSTEM: return "no space left on device";
	case LIBSSH2_FX_QUOTA_EXCEEDED: return "quota exceeded";
	case LIBSSH2_FX_UNKNOWN_PRINCIPAL: return "unknown principal";
	case LIBSSH2_FX_LOCK_CONFLICT: return "lock conflict";
	case LIBSSH2_FX_DIR_NOT_EMPTY: return "directory not empty";
	case LIBSSH2_FX_NOT_A_DIRECTORY: return "not a directory";
	case LIBSSH2_FX_INVALID_FILENAME: return "invalid file name";
	case LIBSSH2_FX_LINK_LOOP: return "link loop";
	default: return "unknown SFTP status";
	}
}

static int is_socket_error(int rc)
{
	switch (rc) {
	case LIBSSH2_ERROR_SOCKET_NONE:
	case LIBSSH2_ERROR_BANNER_RECV:
	case LIBSSH2_ERROR_BANNER_SEND:
	case LIBSSH2_ERROR_SOCKET_SEND:
	case LIBSSH2_ERROR_SOCKET_DISCONNECT:
	case LIBSSH2_ERROR_SOCKET_TIMEOUT:
	case LIBSSH2_ERROR_SOCKET_RECV:
	case LIBSSH2_ERROR_BAD_SOCKET:
		return 1;
	default:
		return 0;
	}
}

/* The one map from a libssh2 error code to a go_status and message.
 * what: the operation, e.g. "cannot open an exec channel". */
static enum go_status ssh_map_error(struct ssh_conn *c, int rc, const char *what,
				    struct strbuf *err)
{
	char *msg = NULL;
	int len = 0;
	enum go_status st;

	if (c->session)
		libssh2_session_last_error(c->session, &msg, &len, 0);
	if (!msg || !*msg)
		msg = "unknown error";

	if (rc == LIBSSH2_ERROR_SFTP_PROTOCOL && c->sftp) {
		unsigned long fx = libssh2_sftp_last_error(c->sftp);
		st = fx == LIBSSH2_FX_NO_SUCH_FILE || fx == LIBSSH2_FX_NO_SUCH_PATH
			? GO_ERR_NOT_FOUND : GO_ERR_SSH;
		return go_fail(err, st, "%s: %s: %s (SFTP status %lu)", c->where, what,
			       sftp_status_text(fx), fx);
	}
	if (is_socket_error(rc)) {
		conn_set_state(c, CONN_BROKEN);
		return go_fail(err, GO_ERR_CONNECT,
			       "%s: %s: connection lost (%s); check that the host is up and sshd is running",
			       c->where, what, msg);
	}
	switch (rc) {
	case LIBSSH2_ERROR_TIMEOUT:
		st = GO_ERR_TIMEOUT;
		break;
	case LIBSSH2_ERROR_AUTHENTICATION_FAILED:
	case LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED:
	case LIBSSH2_ERROR_KEYFILE_AUTH_FAILED:
	case LIBSSH2_ERROR_METHOD_NONE:
		st = GO_ERR_AUTH;
		break;
	case LIBSSH2_ERROR_FILE:
		st = GO_ERR_IO;
		break;
	case LIBSSH2_ERROR_KEX_FAILURE:
	case LIBSSH2_ERROR_KEY_EXCHANGE_FAILURE:
	case LIBSSH2_ERROR_HOSTKEY_INIT:
	case LIBSSH2_ERROR_HOSTKEY_SIGN:
	case LIBSSH2_ERROR_INVALID_MAC:
	case LIBSSH2_ERROR_DECRYPT:
	case LIBSSH2_ERROR_PROTO:
		conn_set_state(c, CONN_BROKEN);
		st = GO_ERR_SSH;
		break;
	default:
		st = GO_ERR_SSH;
		break;
	}
	return go_fail(err, st, "%s: %s: %s (libssh2 error %d)", c->where, what, msg, rc);
}

static enum go_status fail_timeout(struct ssh_conn *c, const char *what, int timeout_ms,
				   struct strbuf *err)
{
	return go_fail(err, GO_ERR_TIMEOUT, "%s: %s: timed out after %d.%01d s",
		       c->where, what, timeout_ms / 1000, (timeout_ms % 1000) / 100);
}

/* ------------------------------------------------------------------ */
/* waiting                                                             */

/* Wait until the socket is ready in the direction libssh2 is blocked on,
 * or until the deadline. Returns 0 when ready or worth retrying, -1 past
 * the deadline. Sends keepalives while only reading is pending. */
static int wait_socket(struct ssh_conn *c, int64_t deadline)
{
	struct pollfd pfd;
	int dir, ms, rc;
	int64_t left = deadline - time_mono_ms();

	if (left <= 0)
		return -1;
	dir = libssh2_session_block_directions(c->session);
	pfd.fd = c->sock;
	pfd.events = 0;
	pfd.revents = 0;
	if (dir & LIBSSH2_SESSION_BLOCK_INBOUND)
		pfd.events |= POLLIN;
	if (dir & LIBSSH2_SESSION_BLOCK_OUTBOUND)
		pfd.events |= POLLOUT;
	if (!pfd.events)
		pfd.events = POLLIN;
	ms = left > 1000 ? 1000 : (int)left;
	if (!(dir & LIBSSH2_SESSION_BLOCK_OUTBOUND) && c->state == CONN_READY) {
		int next = 0;
		if (libssh2_keepalive_send(c->session, &next) == 0 && next > 0 &&
		    next * 1000 < ms)
			ms = next * 1000;
	}
	rc = poll(&pfd, 1, ms);
	if (rc < 0 && errno != EINTR)
		time_sleep_ms(10);
	return 0;
}

/* Run EXPR (a libssh2 call returning int) until it is not EAGAIN or the
 * deadline passes; leaves the result in RC, LIBSSH2_ERROR_TIMEOUT past the
 * deadline. */
#define SSH_RETRY(c, deadline, rc, expr)                                   \
	do {                                                               \
		for (;;) {                                                 \
			(rc) = (expr);                                     \
			if ((rc) != LIBSSH2_ERROR_EAGAIN)                  \
				break;                                     \
			if (wait_socket((c), (deadline)) < 0) {            \
				(rc) = LIBSSH2_ERROR_TIMEOUT;              \
				break;                                     \
			}                                                  \
		}                                                          \
	} while (0)

/* ------------------------------------------------------------------ */
/* TCP                                                                 */

static enum go_status tcp_connect(struct ssh_conn *c, int64_t deadline, int timeout_ms,
				  struct strbuf *err)
{
	struct addrinfo hints, *res = NULL, *ai;
	char portstr[16];
	int rc, last_errno = 0, timed_out = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	snprintf(portstr, sizeof(portstr), "%d", c->port);
	rc = getaddrinfo(c->address, portstr, &hints, &res);
	if (rc)
		return go_fail(err, GO_ERR_CONNECT, "%s: cannot resolve '%s': %s",
			       c->where, c->address, gai_strerror(rc));

	for (ai = res; ai; ai = ai->ai_next) {
		struct pollfd pfd;
		int fd, soerr = 0, one = 1;
		socklen_t sl = sizeof(soerr);
		int64_t left;

		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			last_errno = errno;
			continue;
		}
		if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
			last_errno = errno;
			close(fd);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
			c->sock = fd;
			break;
		}
		if (errno != EINPROGRESS) {
			last_errno = errno;
			close(fd);
			continue;
		}
		pfd.fd = fd;
		pfd.events = POLLOUT;
		pfd.revents = 0;
		for (;;) {
			left = deadline - time_mono_ms();
			if (left <= 0) {
				rc = 0;
				break;
			}
			rc = poll(&pfd, 1, left > 1000 ? 1000 : (int)left);
			if (rc != 0 && !(rc < 0 && errno == EINTR))
				break;
		}
		if (rc == 0) {
			timed_out = 1;
			close(fd);
			break;
		}
		if (rc < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0) {
			last_errno = errno;
			close(fd);
			continue;
		}
		if (soerr) {
			last_errno = soerr;
			close(fd);
			continue;
		}
		c->sock = fd;
		break;
	}
	freeaddrinfo(res);
	if (c->sock >= 0) {
		conn_set_state(c, CONN_TCP);
		return GO_OK;
	}
	if (timed_out)
		return go_fail(err, GO_ERR_CONNECT,
			       "%s: connection timed out after %d s; check the address, port and firewall",
			       c->where, (timeout_ms + 999) / 1000);
	if (last_errno == ECONNREFUSED)
		return go_fail(err, GO_ERR_CONNECT,
			       "%s: connection refused; is sshd listening on port %d?",
			       c->where, c->port);
	return go_fail(err, GO_ERR_CONNECT, "%s: cannot connect: %s", c->where,
		       strerror(last_errno ? last_errno : EHOSTUNREACH));
}

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

/* memmem(3) is a GNU extension: a small portable one. */
static const void *mem_find(const void *hay, size_t hlen, const void *needle, size_t nlen)
{
	const char *h = hay;
	size_t i;

	if (!nlen || nlen > hlen)
		return NULL;
	for (i = 0; i + nlen <= hlen; i++)
		if (h[i] == *(const char *)needle && !memcmp(h + i, needle, nlen))
			return h + i;
	return NULL;
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

static enum go_status verify_host_key(struct ssh_conn *c, const struct ssh_opts *o,
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
		conn_set_state(c, CONN_VERIFIED);
	return st;
}

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

static enum go_status auth_agent(struct ssh_conn *c, int64_t deadline, int timeout_ms,
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
			st = fail_timeout(c, "authentication", timeout_ms, err);
			goto out;
		}
		if (is_socket_error(rc)) {
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

static enum go_status auth_keyfile(struct ssh_conn *c, const char *identity, int64_t deadline,
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
		st = fail_timeout(c, "authentication", timeout_ms, err);
	} else if (is_socket_error(rc)) {
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

/* ------------------------------------------------------------------ */
/* connect / disconnect                                                */

enum go_status ssh_connect(const struct ssh_opts *o, struct ssh_conn **out,
			   struct strbuf *err)
{
	struct ssh_conn *c;
	int timeout_ms = o->connect_timeout_ms > 0 ? o->connect_timeout_ms : SSH_DEFAULT_CONNECT_MS;
	int64_t deadline = time_mono_ms() + timeout_ms;
	enum go_status st;
	int rc;

	*out = NULL;
	if (!global_ready && (st = ssh_global_init(err)))
		return st;
	c = xcalloc(1, sizeof(*c));
	c->sock = -1;
	c->label = xstrdup(o->label ? o->label : o->address);
	c->address = xstrdup(o->address ? o->address : "");
	c->port = o->port > 0 ? o->port : 22;
	c->user = xstrdup(o->user ? o->user : "");
	c->keepalive_s = o->keepalive_s > 0 ? o->keepalive_s : SSH_DEFAULT_KEEPALIVE_S;
	c->where = xstrfmt("%s (%s:%d)", c->label, c->address, c->port);

	if (!o->address || !*o->address) {
		st = go_fail(err, GO_ERR_HOSTS, "%s: no address to connect to", c->label);
		goto fail;
	}
	if (!*c->user) {
		st = go_fail(err, GO_ERR_HOSTS, "%s: no user to log in as", c->where);
		goto fail;
	}
	st = tcp_connect(c, deadline, timeout_ms, err);
	if (st)
		goto fail;

	c->session = libssh2_session_init();
	if (!c->session) {
		st = go_fail(err, GO_ERR_SSH, "%s: cannot create an SSH session", c->where);
		goto fail;
	}
	libssh2_session_set_blocking(c->session, 0);
	libssh2_keepalive_config(c->session, 1, (unsigned)c->keepalive_s);
	SSH_RETRY(c, deadline, rc, libssh2_session_handshake(c->session, c->sock));
	if (rc == LIBSSH2_ERROR_TIMEOUT) {
		st = fail_timeout(c, "SSH handshake", timeout_ms, err);
		goto fail;
	}
	if (rc) {
		st = ssh_map_error(c, rc, "SSH handshake failed", err);
		goto fail;
	}
	conn_set_state(c, CONN_HANDSHAKE);

	st = verify_host_key(c, o, err);
	if (st)
		goto fail;

	if (o->identity && *o->identity)
		st = auth_keyfile(c, o->identity, deadline, timeout_ms, err);
	else
		st = auth_agent(c, deadline, timeout_ms, err);
	if (st)
		goto fail;
	conn_set_state(c, CONN_READY);
	*out = c;
	return GO_OK;
fail:
	ssh_disconnect(c);
	return st;
}

void ssh_disconnect(struct ssh_conn *c)
{
	if (!c)
		return;
	if (c->session) {
		int64_t deadline = time_mono_ms() + SSH_CLOSE_GRACE_MS;
		int rc, i;
		if (c->state == CONN_BROKEN && c->sock >= 0)
			shutdown(c->sock, SHUT_RDWR);
		if (c->sftp)
			SSH_RETRY(c, deadline, rc, libssh2_sftp_shutdown(c->sftp));
		c->sftp = NULL;
		if (c->state != CONN_BROKEN && c->state >= CONN_HANDSHAKE)
			SSH_RETRY(c, deadline, rc,
				  libssh2_session_disconnect(c->session, "gpuorch: done"));
		(void)rc;
		/* Once the socket is shut down, libssh2 sees the disconnect and
		 * frees channels still waiting for the server's close (see
		 * channel_discard) instead of answering EAGAIN for ever. */
		if (c->sock >= 0)
			shutdown(c->sock, SHUT_RDWR);
		for (i = 0; i < 1000; i++)
			if (libssh2_session_free(c->session) != LIBSSH2_ERROR_EAGAIN)
				break;
	}
	if (c->sock >= 0)
		close(c->sock);
	free(c->where);
	free(c->label);
	free(c->address);
	free(c->user);
	free(c->notice);
	free(c);
}

static enum go_status check_usable(struct ssh_conn *c, struct strbuf *err)
{
	if (c->state == CONN_READY)
		return GO_OK;
	return go_fail(err, GO_ERR_CONNECT,
		       "%s: the SSH connection was lost earlier; reconnect", c->where);
}

/* ------------------------------------------------------------------ */
/* exec                                                                */

/* Close and free a channel, waiting at most grace_ms. sshd answers our
 * close only once the command has exited, so a channel of a command that
 * still runs (a timed-out exec) is left in the session: the remote command
 * goes on (long work belongs in remote.h's detached steps) and
 * ssh_disconnect() frees the channel with the session. */
static void channel_discard(struct ssh_conn *c, LIBSSH2_CHANNEL *ch, int grace_ms)
{
	int64_t deadline = time_mono_ms() + grace_ms;
	int rc;

	if (c->state == CONN_BROKEN)
		return;   /* freed with the session */
	SSH_RETRY(c, deadline, rc, libssh2_channel_close(ch));
	if (rc)
		return;
	deadline = time_mono_ms() + SSH_CLOSE_GRACE_MS;
	SSH_RETRY(c, deadline, rc, libssh2_channel_free(ch));
	(void)rc;
}

enum go_status ssh_exec(struct ssh_conn *c, const char *cmd,
			const void *stdin_data, size_t stdin_len,
			struct strbuf *out, struct strbuf *errout,
			struct ssh_exec_result *res, int timeout_ms, struct strbuf *err)
{
	int64_t deadline = time_mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	LIBSSH2_CHANNEL *ch = NULL;
	char *buf = NULL;
	size_t sent = 0;
	int eof_sent = 0, rc;
	enum go_status st = GO_OK;

	if (res) {
		res->exit_code = -1;
		res->signal[0] = '\0';
	}
	if ((st = check_usable(c, err)))
		return st;

	for (;;) {
		ch = libssh2_channel_open_session(c->session);
		if (ch)
			break;
		rc = libssh2_session_last_errno(c->session);
		if (rc != LIBSSH2_ERROR_EAGAIN)
			return ssh_map_error(c, rc, "cannot open an SSH channel", err);
		if (wait_socket(c, deadline) < 0)
			return fail_timeout(c, "opening an SSH channel", timeout_ms, err);
	}
	SSH_RETRY(c, deadline, rc, libssh2_channel_exec(ch, cmd));
	if (rc == LIBSSH2_ERROR_TIMEOUT) {
		st = fail_timeout(c, "starting a remote command", timeout_ms, err);
		goto out;
	}
	if (rc) {
		st = ssh_map_error(c, rc, "cannot start a remote command", err);
		goto out;
	}
	if (!stdin_data)
		stdin_len = 0;

	buf = xmalloc(SSH_IO_CHUNK);
	for (;;) {
		int progress = 0;
		ssize_t n;

		/* stdin, interleaved with reading so neither side stalls */
		if (!eof_sent && sent < stdin_len) {
			size_t chunk = stdin_len - sent;
			if (chunk > SSH_IO_CHUNK)
				chunk = SSH_IO_CHUNK;
			n = libssh2_channel_write(ch, (const char *)stdin_data + sent, chunk);
			if (n > 0) {
				sent += (size_t)n;
				progress = 1;
			} else if (n < 0 && n != LIBSSH2_ERROR_EAGAIN) {
				/* the command closed its stdin: stop feeding it */
				if (n == LIBSSH2_ERROR_CHANNEL_EOF_SENT ||
				    n == LIBSSH2_ERROR_CHANNEL_CLOSED || libssh2_channel_eof(ch)) {
					sent = stdin_len;
				} else {
					st = ssh_map_error(c, (int)n, "cannot send input to a remote command", err);
					goto out;
				}
			}
		}
		if (!eof_sent && sent >= stdin_len) {
			rc = libssh2_channel_send_eof(ch);
			if (rc == 0 || rc != LIBSSH2_ERROR_EAGAIN) {
				/* an error here (channel closed already) is not fatal */
				eof_sent = 1;
				progress = 1;
			}
		}

		n = libssh2_channel_read(ch, buf, SSH_IO_CHUNK);
		if (n > 0) {
			if (out)
				strbuf_add(out, buf, (size_t)n);
			progress = 1;
		} else if (n < 0 && n != LIBSSH2_ERROR_EAGAIN) {
			st = ssh_map_error(c, (int)n, "cannot read the output of a remote command", err);
			goto out;
		}
		n = libssh2_channel_read_stderr(ch, buf, SSH_IO_CHUNK);
		if (n > 0) {
			if (errout)
				strbuf_add(errout, buf, (size_t)n);
			progress = 1;
		} else if (n < 0 && n != LIBSSH2_ERROR_EAGAIN) {
			st = ssh_map_error(c, (int)n, "cannot read the output of a remote command", err);
			goto out;
		}
		if (progress) {
			if (time_mono_ms() >= deadline) {
				st = fail_timeout(c, "remote command", timeout_ms, err);
				goto out;
			}
			continue;
		}
		/* no data now: finished only when the remote side sent EOF
		 * and both streams are drained (0-byte reads above) */
		if (libssh2_channel_eof(ch))
			break;
		if (wait_socket(c, deadline) < 0) {
			st = fail_timeout(c, "remote command", timeout_ms, err);
			goto out;
		}
	}

	SSH_RETRY(c, deadline, rc, libssh2_channel_close(ch));
	if (!rc)
		SSH_RETRY(c, deadline, rc, libssh2_channel_wait_closed(ch));
	if (rc == LIBSSH2_ERROR_TIMEOUT) {
		st = fail_timeout(c, "remote command", timeout_ms, err);
		goto out;
	}
	if (rc) {
		st = ssh_map_error(c, rc, "cannot close a remote command's channel", err);
		goto out;
	}
	if (res) {
		char *sig = NULL;
		size_t siglen = 0;
		res->exit_code = libssh2_channel_get_exit_status(ch);
		if (libssh2_channel_get_exit_signal(ch, &sig, &siglen, NULL, NULL, NULL, NULL) == 0 &&
		    sig) {
			snprintf(res->signal, sizeof(res->signal), "%.*s", (int)siglen, sig);
			libssh2_free(c->session, sig);
		}
	}
	SSH_RETRY(c, deadline, rc, libssh2_channel_free(ch));
	ch = NULL;
out:
	free(buf);
	if (ch)
		channel_discard(c, ch, SSH_ABANDON_GRACE_MS);
	return st;
}

/* ------------------------------------------------------------------ */
/* SFTP                                                                */

static enum go_status sftp_ready(struct ssh_conn *c, int64_t deadline, int timeout_ms,
				 struct strbuf *err)
{
	enum go_status st;
	int rc;

	if ((st = check_usable(c, err)))
		return st;
	while (!c->sftp) {
		c->sftp = libssh2_sftp_init(c->session);
		if (c->sftp)
			break;
		rc = libssh2_session_last_errno(c->session);
		if (rc != LIBSSH2_ERROR_EAGAIN)
			return ssh_map_error(c, rc,
					     "cannot start SFTP (is the sftp subsystem enabled in sshd_config?)",
					     err);
		if (wait_socket(c, deadline) < 0)
			return fail_timeout(c, "starting SFTP", timeout_ms, err);
	}
	return GO_OK;
}

static LIBSSH2_SFTP_HANDLE *sftp_open(struct ssh_conn *c, const char *path, unsigned long flags,
				      long mode, int64_t deadline, int *rcp)
{
	LIBSSH2_SFTP_HANDLE *h;

	for (;;) {
		h = libssh2_sftp_open_ex(c->sftp, path, (unsigned int)strlen(path), flags, mode,
					 LIBSSH2_SFTP_OPENFILE);
		if (h) {
			*rcp = 0;
			return h;
		}
		*rcp = libssh2_session_last_errno(c->session);
		if (*rcp != LIBSSH2_ERROR_EAGAIN)
			return NULL;
		if (wait_socket(c, deadline) < 0) {
			*rcp = LIBSSH2_ERROR_TIMEOUT;
			return NULL;
		}
	}
}

static void sftp_close(struct ssh_conn *c, LIBSSH2_SFTP_HANDLE *h)
{
	int64_t deadline = time_mono_ms() + SSH_CLOSE_GRACE_MS;
	int rc;
	SSH_RETRY(c, deadline, rc, libssh2_sftp_close_handle(h));
	(void)rc;
}

static void sftp_remove(struct ssh_conn *c, const char *path)
{
	int64_t deadline = time_mono_ms() + SSH_CLOSE_GRACE_MS;
	int rc;
	if (c->state == CONN_BROKEN)
		return;
	SSH_RETRY(c, deadline, rc,
		  libssh2_sftp_unlink_ex(c->sftp, path, (unsigned int)strlen(path)));
	(void)rc;
}

/* A failed write: say "no space left on device" when that is why. SFTP v3
 * servers (OpenSSH) report ENOSPC as a plain FAILURE, so ask df. */
static enum go_status upload_write_failed(struct ssh_conn *c, int rc, const char *remote_path,
					  size_t remaining, struct strbuf *err)
{
	unsigned long fx = rc == LIBSSH2_ERROR_SFTP_PROTOCOL ? libssh2_sftp_last_error(c->sftp) : 0;
	long long avail_kib = -1;

	if (rc == LIBSSH2_ERROR_SFTP_PROTOCOL &&
	    (fx == LIBSSH2_FX_FAILURE || fx == LIBSSH2_FX_NO_SPACE_ON_FILESYSTEM ||
	     fx == LIBSSH2_FX_QUOTA_EXCEEDED)) {
		struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, e2 = STRBUF_INIT;
		struct ssh_exec_result r;
		char *dir = xstrdup(remote_path);
		char *slash = strrchr(dir, '/');
		if (slash && slash != dir)
			*slash = '\0';
		else if (slash)
			dir[1] = '\0';
		else {
			free(dir);
			dir = xstrdup(".");
		}
		strbuf_addstr(&cmd, "df -Pk ");
		strbuf_add_shell_quoted(&cmd, dir);
		strbuf_addstr(&cmd, " | awk 'NR==2 {print $4}'");
		out.max = 256;
		if (!ssh_exec(c, cmd.buf, NULL, 0, &out, NULL, &r, 10000, &e2) && r.exit_code == 0)
			avail_kib = strtoll(out.buf, NULL, 10);
		if (fx == LIBSSH2_FX_NO_SPACE_ON_FILESYSTEM || fx == LIBSSH2_FX_QUOTA_EXCEEDED ||
		    (avail_kib >= 0 && (unsigned long long)avail_kib * 1024 < remaining + 65536)) {
			enum go_status st = go_fail(err, GO_ERR_REMOTE,
				"%s: cannot write '%s': no space left on device (%lld KiB free in '%s', %zu bytes still to write); free space on the host or choose another workdir",
				c->where, remote_path, avail_kib < 0 ? 0 : avail_kib, dir, remaining);
			free(dir);
			strbuf_release(&cmd);
			strbuf_release(&out);
			strbuf_release(&e2);
			return st;
		}
		free(dir);
		strbuf_release(&cmd);
		strbuf_release(&out);
		strbuf_release(&e2);
		return go_fail(err, GO_ERR_REMOTE, "%s: cannot write '%s': write failed (SFTP status %s)",
			       c->where, remote_path, sftp_status_text(fx));
	}
	{
		struct strbuf what = STRBUF_INIT;
		enum go_status st;
		strbuf_addf(&what, "cannot write '%s'", remote_path);
		st = ssh_map_error(c, rc, what.buf, err);
		strbuf_release(&what);
		return st;
	}
}

/* Rename TMP over DST. SFTP v3 servers (OpenSSH) refuse to rename over an
 * existing file and libssh2 1.10 has no posix-rename: fall back to mv -f,
 * which is rename(2), i.e. atomic. */
static enum go_status sftp_rename_over(struct ssh_conn *c, const char *tmp, const char *dst,
				       int64_t deadline, int timeout_ms, struct strbuf *err)
{
	int rc;
	struct strbuf cmd = STRBUF_INIT, eout = STRBUF_INIT;
	struct ssh_exec_result r;
	enum go_status st;
	int64_t left;

	SSH_RETRY(c, deadline, rc,
		  libssh2_sftp_rename_ex(c->sftp, tmp, (unsigned int)strlen(tmp), dst,
					 (unsigned int)strlen(dst),
					 LIBSSH2_SFTP_RENAME_OVERWRITE | LIBSSH2_SFTP_RENAME_ATOMIC |
					 LIBSSH2_SFTP_RENAME_NATIVE));
	if (rc == 0)
		return GO_OK;
	if (rc == LIBSSH2_ERROR_TIMEOUT)
		return fail_timeout(c, "renaming an upload", timeout_ms, err);
	if (rc != LIBSSH2_ERROR_SFTP_PROTOCOL) {
		struct strbuf what = STRBUF_INIT;
		strbuf_addf(&what, "cannot rename '%s' to '%s'", tmp, dst);
		st = ssh_map_error(c, rc, what.buf, err);
		strbuf_release(&what);
		return st;
	}
	strbuf_addstr(&cmd, "mv -f -- ");
	strbuf_add_shell_quoted(&cmd, tmp);
	strbuf_addch(&cmd, ' ');
	strbuf_add_shell_quoted(&cmd, dst);
	eout.max = 4096;
	left = deadline - time_mono_ms();
	st = ssh_exec(c, cmd.buf, NULL, 0, NULL, &eout, &r, left > 1000 ? (int)left : 1000, err);
	if (!st && (r.signal[0] || r.exit_code != 0)) {
		strbuf_trim(&eout);
		st = go_fail(err, GO_ERR_REMOTE, "%s: cannot rename '%s' to '%s': %s", c->where,
			     tmp, dst, eout.len ? eout.buf : "mv failed");
	}
	strbuf_release(&cmd);
	strbuf_release(&eout);
	return st;
}

enum go_status ssh_upload(struct ssh_conn *c, const void *data, size_t len,
			  const char *remote_path, int mode, uint64_t *bytes_sent,
			  int timeout_ms, struct strbuf *err)
{
	int64_t deadline = time_mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	struct strbuf part = STRBUF_INIT;
	LIBSSH2_SFTP_HANDLE *h = NULL;
	const char *p = data;
	size_t done = 0;
	enum go_status st;
	int rc;

	if (bytes_sent)
		*bytes_sent = 0;
	if ((st = sftp_ready(c, deadline, timeout_ms, err)))
		return st;
	strbuf_addf(&part, "%s.part", remote_path);
	sftp_remove(c, part.buf);   /* a leftover from an earlier attempt */
	h = sftp_open(c, part.buf, LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | LIBSSH2_FXF_TRUNC,
		      mode > 0 ? mode : 0644, deadline, &rc);
	if (!h) {
		if (rc == LIBSSH2_ERROR_TIMEOUT) {
			st = fail_timeout(c, "opening an upload", timeout_ms, err);
		} else {
			struct strbuf what = STRBUF_INIT;
			strbuf_addf(&what, "cannot create '%s'", part.buf);
			st = ssh_map_error(c, rc, what.buf, err);
			strbuf_release(&what);
		}
		goto out;
	}
	while (done < len) {
		size_t chunk = len - done;
		ssize_t n;
		if (chunk > SSH_IO_CHUNK)
			chunk = SSH_IO_CHUNK;
		/* on EAGAIN libssh2 wants the same buffer again; on a short
		 * write the unchanged tail is sent next round */
		n = libssh2_sftp_write(h, p + done, chunk);
		if (n == LIBSSH2_ERROR_EAGAIN) {
			if (wait_socket(c, deadline) < 0) {
				st = fail_timeout(c, "upload", timeout_ms, err);
				goto fail;
			}
			continue;
		}
		if (n < 0) {
			st = upload_write_failed(c, (int)n, remote_path, len - done, err);
			goto fail;
		}
		done += (size_t)n;
		if (bytes_sent)
			*bytes_sent = done;
		if (time_mono_ms() >= deadline && done < len) {
			st = fail_timeout(c, "upload", timeout_ms, err);
			goto fail;
		}
	}
	SSH_RETRY(c, deadline, rc, libssh2_sftp_fsync(h));
	if (rc == LIBSSH2_ERROR_SFTP_PROTOCOL &&
	    libssh2_sftp_last_error(c->sftp) == LIBSSH2_FX_OP_UNSUPPORTED)
		rc = 0;   /* the server has no fsync@openssh.com: nothing to do */
	if (rc) {
		st = rc == LIBSSH2_ERROR_TIMEOUT ? fail_timeout(c, "upload", timeout_ms, err)
			: upload_write_failed(c, rc, remote_path, 0, err);
		goto fail;
	}
	SSH_RETRY(c, deadline, rc, libssh2_sftp_close_handle(h));
	h = NULL;
	if (rc) {
		/* close reports a write error the server saw late */
		st = rc == LIBSSH2_ERROR_TIMEOUT ? fail_timeout(c, "upload", timeout_ms, err)
			: upload_write_failed(c, rc, remote_path, 0, err);
		goto fail;
	}
	st = sftp_rename_over(c, part.buf, remote_path, deadline, timeout_ms, err);
	if (st)
		goto fail;
	goto out;
fail:
	if (h)
		sftp_close(c, h);
	h = NULL;
	sftp_remove(c, part.buf);
out:
	if (h)
		sftp_close(c, h);
	strbuf_release(&part);
	return st;
}

enum go_status ssh_download(struct ssh_conn *c, const char *remote_path,
			    struct strbuf *data, size_t max, int timeout_ms,
			    struct strbuf *err)
{
	int64_t deadline = time_mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	LIBSSH2_SFTP_HANDLE *h;
	char *buf;
	size_t got = 0;
	enum go_status st;
	int rc;

	if ((st = sftp_ready(c, deadline, timeout_ms, err)))
		return st;
	h = sftp_open(c, remote_path, LIBSSH2_FXF_READ, 0, deadline, &rc);
	if (!h) {
		struct strbuf what = STRBUF_INIT;
		if (rc == LIBSSH2_ERROR_TIMEOUT)
			return fail_timeout(c, "opening a download", timeout_ms, err);
		strbuf_addf(&what, "cannot open '%s'", remote_path);
		st = ssh_map_error(c, rc, what.buf, err);
		strbuf_release(&what);
		return st;
	}
	buf = xmalloc(SSH_IO_CHUNK);
	for (;;) {
		ssize_t n = libssh2_sftp_read(h, buf, SSH_IO_CHUNK);
		if (n == LIBSSH2_ERROR_EAGAIN) {
			if (wait_socket(c, deadline) < 0) {
				st = fail_timeout(c, "download", timeout_ms, err);
				break;
			}
			continue;
		}
		if (n < 0) {
			struct strbuf what = STRBUF_INIT;
			strbuf_addf(&what, "cannot read '%s'", remote_path);
			st = ssh_map_error(c, (int)n, what.buf, err);
			strbuf_release(&what);
			break;
		}
		if (n == 0)
			break;   /* end of file */
		if (max && got + (size_t)n > max) {
			st = go_fail(err, GO_ERR_REMOTE,
				     "%s: '%s' is larger than the %zu bytes allowed", c->where,
				     remote_path, max);
			break;
		}
		strbuf_add(data, buf, (size_t)n);
		got += (size_t)n;
		if (time_mono_ms() >= deadline) {
			st = fail_timeout(c, "download", timeout_ms, err);
			break;
		}
	}
	free(buf);
	sftp_close(c, h);
	return st;
}
