/* httpsink.c -- a one-request HTTP server on 127.0.0.1 for the --notify tests.
 *
 *   httpsink PORTFILE OUTFILE STATUS [SECONDS]
 *
 * Listens on 127.0.0.1 on a free port and writes that port to PORTFILE (once
 * it is listening). Serves one request: the request line, the headers and
 * the body (Content-Length bytes) go to OUTFILE, and the answer is STATUS
 * with a short body. Exits 0 after that one request, 1 on error, and gives
 * up after SECONDS (default 60; alarm) so a test can never hang on it. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_REQUEST (1 << 20)

static int write_port(const char *path, int port)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d\n", port) < 0 || fclose(f) != 0)
		return -1;
	return rename(tmp, path);
}

/* Content-Length of the header block hdr (0 when absent). */
static long content_length(const char *hdr)
{
	const char *p = hdr;

	while ((p = strchr(p, '\n')) != NULL) {
		p++;
		if (!strncasecmp(p, "Content-Length:", 15))
			return strtol(p + 15, NULL, 10);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	char *req, *end;
	size_t len = 0;
	long want = -1;
	int ls, cs, status, one = 1;
	FILE *out;
	char answer[256];
	const char *body;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: httpsink PORTFILE OUTFILE STATUS [SECONDS]\n");
		return 2;
	}
	status = atoi(argv[3]);
	alarm(argc == 5 ? (unsigned)atoi(argv[4]) : 60);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 4) ||
	    getsockname(ls, (struct sockaddr *)&a, &alen) ||
	    write_port(argv[1], ntohs(a.sin_port))) {
		perror("httpsink: listen");
		return 1;
	}
	cs = accept(ls, NULL, NULL);
	if (cs < 0) {
		perror("httpsink: accept");
		return 1;
	}
	req = malloc(MAX_REQUEST + 1);
	if (!req)
		return 1;
	for (;;) {
		ssize_t n = read(cs, req + len, MAX_REQUEST - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		req[len] = '\0';
		end = strstr(req, "\r\n\r\n");
		if (end && want < 0)
			want = (long)(end + 4 - req) + content_length(req);
		if (want >= 0 && (long)len >= want)
			break;
		if (len == MAX_REQUEST)
			break;
	}
	req[len] = '\0';
	out = fopen(argv[2], "w");
	if (!out || fwrite(req, 1, len, out) != len || fclose(out) != 0) {
		perror("httpsink: write");
		return 1;
	}
	body = status >= 200 && status < 300 ? "ok\n" : "the sink was told to fail\n";
	snprintf(answer, sizeof(answer), "HTTP/1.1 %d Status\r\nContent-Type: text/plain\r\n"
		 "Content-Length: %zu\r\nConnection: close\r\n\r\n%s", status, strlen(body), body);
	if (write(cs, answer, strlen(answer)) < 0)
		perror("httpsink: answer");
	close(cs);
	close(ls);
	free(req);
	return 0;
}
