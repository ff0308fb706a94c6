/* ec2fake.c -- a stand-in for EC2's Query API on 127.0.0.1, for the tests of
 * the native "aws" provider. It checks every request's SigV4 signature
 * itself, with libcrypto (the canonical request, the string to sign and the
 * HMAC-SHA256 key chain of the AWS documentation), so a request signed with
 * the wrong secret is refused with SignatureDoesNotMatch, as EC2 would.
 *
 *   ec2fake DIR AKID SECRET TOKEN|- LIFETIME_S ID=STATE...
 *
 * Writes its port to DIR/port; appends one line per request to DIR/log
 * ("ACTION ID sig=ok|bad token=yes|no"); keeps each instance's state in
 * memory (pending -> running and stopping -> stopped after one
 * DescribeInstances). Faults, read from DIR before each request: a file
 * DIR/throttle, DIR/truncate or DIR/error holding a count N answers the next
 * N requests with RequestLimitExceeded (503), half an XML answer, or
 * InternalError (500). Exits after LIFETIME_S seconds.
 *
 *   ec2fake --selftest   checks the verifier against AWS's published SigV4
 *                        example (exit 0 when it agrees). */
#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXI 8

static const char *dir, *akid, *secret, *token;
static struct { char id[64]; char state[32]; } inst[MAXI];
static int ninst;

static void hex(const unsigned char *d, size_t n, char *out)
{
	size_t i;
	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static void sha256_hex(const void *d, size_t n, char out[65])
{
	unsigned char md[32];
	size_t mdlen = 0;
	EVP_Q_digest(NULL, "SHA256", NULL, d, n, md, &mdlen);
	hex(md, 32, out);
}

static void hmac(const void *key, size_t klen, const char *msg, unsigned char out[32])
{
	size_t outlen = 0;
	EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, key, klen, (const unsigned char *)msg,
		  strlen(msg), out, 32, &outlen);
}

static int take_fault(const char *name)
{
	char path[512];
	FILE *f;
	int n = 0;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (!(f = fopen(path, "r")))
		return 0;
	if (fscanf(f, "%d", &n) != 1)
		n = 0;
	fclose(f);
	if (n <= 0)
		return 0;
	if (!(f = fopen(path, "w")))
		return 0;
	fprintf(f, "%d\n", n - 1);
	fclose(f);
	return 1;
}

struct req {
	char head[16384];
	char *hname[64], *hval[64];
	int nh;
	char body[4096];
	size_t blen;
};

static const char *header(struct req *r, const char *name)
{
	int i;
	for (i = 0; i < r->nh; i++)
		if (!strcmp(r->hname[i], name))
			return r->hval[i];
	return NULL;
}

/* 1: the SigV4 signature of request r is right for key id kid, secret
 * sec, service svc; query is the canonical query string ("" for a POST). */
static int check_sig_with(struct req *r, const char *method, const char *path, const char *query,
			  const char *kid, const char *sec, const char *svc, const char *want_tok)
{
	const char *auth = header(r, "authorization"), *date = header(r, "x-amz-date");
	char cred[256], signed_h[512], sig[80], scope[256], canon[16384], sts[1024];
	char bodyhash[65], canonhash[65], mine[65], *tok, *save = NULL, keybuf[300];
	char d8[16], region[64], service[64];
	unsigned char k1[32], k2[32], k3[32], k4[32], s[32];
	size_t off = 0;

	if (!auth || !date || sscanf(auth, "AWS4-HMAC-SHA256 Credential=%255[^,], SignedHeaders=%511[^,], Signature=%79s",
				     cred, signed_h, sig) != 3)
		return 0;
	if (sscanf(cred, "%*[^/]/%15[^/]/%63[^/]/%63[^/]/aws4_request", d8, region, service) != 3)
		return 0;
	if (strncmp(cred, kid, strlen(kid)) || cred[strlen(kid)] != '/' || strcmp(service, svc))
		return 0;
	if (want_tok && (!strstr(signed_h, "x-amz-security-token") || !header(r, "x-amz-security-token") ||
		    strcmp(header(r, "x-amz-security-token"), want_tok)))
		return 0;
	off += (size_t)snprintf(canon + off, sizeof canon - off, "%s\n%s\n%s\n", method, path, query);
	{
		char sh[512];
		snprintf(sh, sizeof sh, "%s", signed_h);
		for (tok = strtok_r(sh, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
			const char *v = header(r, tok);
			off += (size_t)snprintf(canon + off, sizeof canon - off, "%s:%s\n", tok, v ? v : "");
		}
	}
	sha256_hex(r->body, r->blen, bodyhash);
	off += (size_t)snprintf(canon + off, sizeof canon - off, "\n%s\n%s", signed_h, bodyhash);
	sha256_hex(canon, off, canonhash);
	snprintf(scope, sizeof scope, "%s/%s/%s/aws4_request", d8, region, service);
	snprintf(sts, sizeof sts, "AWS4-HMAC-SHA256\n%s\n%s\n%s", date, scope, canonhash);
	snprintf(keybuf, sizeof keybuf, "AWS4%s", sec);
	hmac(keybuf, strlen(keybuf), d8, k1);
	hmac(k1, 32, region, k2);
	hmac(k2, 32, service, k3);
	hmac(k3, 32, "aws4_request", k4);
	hmac(k4, 32, sts, s);
	hex(s, 32, mine);
	return !strcmp(mine, sig);
}

static int check_sig(struct req *r, const char *method, const char *path)
{
	return check_sig_with(r, method, path, "", akid, secret, "ec2", token);
}

/* The verifier itself against AWS's published SigV4 example (IAM ListUsers,
 * AKIDEXAMPLE, 20150830T123600Z): the right signature passes, one changed
 * digit fails. */
static int selftest(void)
{
	static const char *const good = "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7";
	struct req r;
	char auth[512];
	int ok_good, ok_bad;
	memset(&r, 0, sizeof r);
	r.hname[0] = "content-type";
	r.hval[0] = "application/x-www-form-urlencoded; charset=utf-8";
	r.hname[1] = "host";
	r.hval[1] = "iam.amazonaws.com";
	r.hname[2] = "x-amz-date";
	r.hval[2] = "20150830T123600Z";
	r.hname[3] = "authorization";
	r.hval[3] = auth;
	r.nh = 4;
	snprintf(auth, sizeof auth, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, "
		 "SignedHeaders=content-type;host;x-amz-date, Signature=%s", good);
	ok_good = check_sig_with(&r, "GET", "/", "Action=ListUsers&Version=2010-05-08", "AKIDEXAMPLE",
				 "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "iam", NULL);
	auth[strlen(auth) - 1] = auth[strlen(auth) - 1] == '7' ? '8' : '7';
	ok_bad = check_sig_with(&r, "GET", "/", "Action=ListUsers&Version=2010-05-08", "AKIDEXAMPLE",
				"wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "iam", NULL);
	printf("selftest: published vector %s, changed signature %s\n", ok_good ? "accepted" : "REJECTED",
	       ok_bad ? "ACCEPTED" : "rejected");
	return ok_good && !ok_bad ? 0 : 1;
}

static const char *param(const char *body, const char *key, char *out, size_t n)
{
	size_t kl = strlen(key);
	const char *p = body;
	while (p && *p) {
		if (!strncmp(p, key, kl) && p[kl] == '=') {
			size_t l = strcspn(p + kl + 1, "&");
			snprintf(out, n, "%.*s", (int)l, p + kl + 1);
			return out;
		}
		p = strchr(p, '&');
		if (p)
			p++;
	}
	return NULL;
}

static void reply(int fd, int code, const char *body, int truncate)
{
	char head[256];
	size_t len = strlen(body);
	snprintf(head, sizeof head, "HTTP/1.1 %d X\r\nContent-Type: text/xml;charset=UTF-8\r\n"
		 "Content-Length: %zu\r\nConnection: close\r\n\r\n", code, truncate ? len / 2 : len);
	if (write(fd, head, strlen(head)) < 0 || write(fd, body, truncate ? len / 2 : len) < 0)
		return;
}

static void error_reply(int fd, int code, const char *ecode, const char *msg)
{
	char b[8192];
	snprintf(b, sizeof b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error>"
		 "<Code>%s</Code><Message>%s</Message></Error></Errors><RequestID>r-1</RequestID>"
		 "</Response>", ecode, msg);
	reply(fd, code, b, 0);
}

static void serve(int fd)
{
	struct req r;
	char action[64] = "", id[64] = "", version[32] = "", *p, *line, *save = NULL, b[4096];
	size_t got = 0;
	long clen = 0;
	int ok, i, k = -1;
	FILE *log;
	char logpath[512];

	memset(&r, 0, sizeof r);
	while (got < sizeof r.head - 1 && !strstr(r.head, "\r\n\r\n")) {
		ssize_t n = read(fd, r.head + got, sizeof r.head - 1 - got);
		if (n <= 0)
			return;
		got += (size_t)n;
	}
	p = strstr(r.head, "\r\n\r\n");
	if (!p)
		return;
	*p = '\0';
	r.blen = got - (size_t)(p + 4 - r.head);
	memcpy(r.body, p + 4, r.blen < sizeof r.body ? r.blen : sizeof r.body - 1);
	line = strtok_r(r.head, "\r\n", &save);  /* request line */
	for (line = strtok_r(NULL, "\r\n", &save); line && r.nh < 64; line = strtok_r(NULL, "\r\n", &save)) {
		char *c = strchr(line, ':');
		if (!c)
			continue;
		*c++ = '\0';
		for (p = line; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		while (*c == ' ')
			c++;
		r.hname[r.nh] = line;
		r.hval[r.nh++] = c;
		if (!strcmp(line, "content-length"))
			clen = atol(c);
	}
	while ((long)r.blen < clen && r.blen < sizeof r.body - 1) {
		ssize_t n = read(fd, r.body + r.blen, sizeof r.body - 1 - r.blen);
		if (n <= 0)
			return;
		r.blen += (size_t)n;
	}
	ok = strncmp(r.head, "POST / ", 7) == 0 && check_sig(&r, "POST", "/");
	param(r.body, "Action", action, sizeof action);
	param(r.body, "InstanceId.1", id, sizeof id);
	param(r.body, "Version", version, sizeof version);
	snprintf(logpath, sizeof logpath, "%s/log", dir);
	if ((log = fopen(logpath, "a"))) {
		fprintf(log, "%s %s sig=%s token=%s\n", action, id, ok ? "ok" : "bad",
			header(&r, "x-amz-security-token") ? "yes" : "no");
		fclose(log);
	}
	if (!ok) {
		error_reply(fd, 403, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided.");
		return;
	}
	if (strcmp(version, "2016-11-15")) {
		error_reply(fd, 400, "InvalidParameterValue", "unsupported Version");
		return;
	}
	if (take_fault("throttle")) {
		error_reply(fd, 503, "RequestLimitExceeded", "Request limit exceeded.");
		return;
	}
	if (take_fault("error")) {
		error_reply(fd, 500, "InternalError", "An internal error has occurred.");
		return;
	}
	for (i = 0; i < ninst; i++)
		if (!strcmp(inst[i].id, id))
			k = i;
	if (k < 0) {
		snprintf(b, sizeof b, "The instance ID '%s' does not exist", id);
		error_reply(fd, 400, "InvalidInstanceID.NotFound", b);
		return;
	}
	if (!strcmp(action, "DescribeInstances")) {
		const char *st = inst[k].state;
		if (!strcmp(st, "pending"))
			snprintf(inst[k].state, sizeof inst[k].state, "running");
		else if (!strcmp(st, "stopping"))
			snprintf(inst[k].state, sizeof inst[k].state, "stopped");
		snprintf(b, sizeof b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			 "<DescribeInstancesResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">"
			 "<requestId>r-1</requestId><reservationSet><item><reservationId>r-0a</reservationId>"
			 "<instancesSet><item><instanceId>%s</instanceId><instanceType>g6.xlarge</instanceType>"
			 "<instanceState><code>16</code><name>%s</name></instanceState>%s</item></instancesSet>"
			 "</item></reservationSet></DescribeInstancesResponse>", id, st,
			 strcmp(st, "running") ? "" : "<ipAddress>127.0.0.1</ipAddress>");
	} else if (!strcmp(action, "StartInstances") || !strcmp(action, "StopInstances")) {
		int start = !strcmp(action, "StartInstances");
		const char *prev = inst[k].state;
		char before[32];
		snprintf(before, sizeof before, "%s", prev);
		if (start && !strcmp(prev, "stopped"))
			snprintf(inst[k].state, sizeof inst[k].state, "pending");
		if (!start && (!strcmp(prev, "running") || !strcmp(prev, "pending")))
			snprintf(inst[k].state, sizeof inst[k].state, "stopping");
		snprintf(b, sizeof b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<%sResponse "
			 "xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\"><requestId>r-1</requestId>"
			 "<instancesSet><item><instanceId>%s</instanceId><currentState><name>%s</name>"
			 "</currentState><previousState><name>%s</name></previousState></item>"
			 "</instancesSet></%sResponse>", action, id, inst[k].state, before, action);
	} else {
		error_reply(fd, 400, "InvalidAction", "unknown action");
		return;
	}
	reply(fd, 200, b, take_fault("truncate"));
}

int main(int argc, char **argv)
{
	struct sockaddr_in a;
	socklen_t al = sizeof a;
	time_t end;
	char path[512];
	FILE *f;
	int s, i, one = 1;

	if (argc == 2 && !strcmp(argv[1], "--selftest"))
		return selftest();
	if (argc < 7) {
		fprintf(stderr, "usage: ec2fake DIR AKID SECRET TOKEN|- LIFETIME_S ID=STATE...\n");
		return 2;
	}
	dir = argv[1];
	akid = argv[2];
	secret = argv[3];
	token = strcmp(argv[4], "-") ? argv[4] : NULL;
	end = time(NULL) + atoi(argv[5]);
	for (i = 6; i < argc && ninst < MAXI; i++, ninst++)
		if (sscanf(argv[i], "%63[^=]=%31s", inst[ninst].id, inst[ninst].state) != 2)
			return 2;
	s = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 16) < 0 ||
	    getsockname(s, (struct sockaddr *)&a, &al) < 0)
		return 1;
	snprintf(path, sizeof path, "%s/port.tmp", dir);
	if (!(f = fopen(path, "w")))
		return 1;
	fprintf(f, "%d\n", ntohs(a.sin_port));
	fclose(f);
	{
		char final[512];
		snprintf(final, sizeof final, "%s/port", dir);
		rename(path, final);
	}
	while (time(NULL) < end) {
		struct pollfd pf = { s, POLLIN, 0 };
		int c;
		if (poll(&pf, 1, 500) <= 0)
			continue;
		c = accept(s, NULL, NULL);
		if (c < 0)
			continue;
		serve(c);
		close(c);
	}
	close(s);
	return 0;
}
