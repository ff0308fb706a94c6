/* agent-files.c -- gpuorch-agent's file system and clock primitives: the
 * run directory's small files (first lines, atomic writes), mkdir -p and
 * rm -rf without a process, `date +%s.%N`, and flock with a time limit. */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* xclose: close, saying so when it fails (a descriptor this program owns) */
void xclose(int fd)
{
	if (fd >= 0 && close(fd) < 0 && errno != EINTR)
		fprintf(stderr, "runner: close(%d): %s\n", fd, strerror(errno));
}

int exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 || stat(path, &st) == 0;
}

int is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int nonempty(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && st.st_size > 0;
}

/* first_line: `read -r V <FILE`: its first line, without the blanks around it */
int first_line(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	char *s, *e;

	buf[0] = '\0';
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	if (close(fd) < 0 || n < 0) {
		buf[0] = '\0';
		return -1;
	}
	buf[n] = '\0';
	if ((e = strchr(buf, '\n')))
		*e = '\0';
	for (s = buf; *s == ' ' || *s == '\t'; s++)
		;
	memmove(buf, s, strlen(s) + 1);
	e = buf + strlen(buf);
	while (e > buf && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return 0;
}

int write_file(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	size_t off = 0;

	if (fd < 0)
		return -1;
	while (off < len) {
		ssize_t n = write(fd, data + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			xclose(fd);
			return -1;
		}
		off += (size_t)n;
	}
	return close(fd);
}

/* write_atomic: DATA into TMP, renamed to PATH (echo X >TMP && mv -f TMP PATH) */
int write_atomic(const char *path, const char *tmp, const char *data)
{
	if (write_file(tmp, data, strlen(data)) < 0)
		return -1;
	return rename(tmp, path);
}

/* touch_file: `: >FILE` where FILE does not exist, else its mtime now */
int touch_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return -1;
	if (futimens(fd, NULL) < 0) {
		xclose(fd);
		return -1;
	}
	return close(fd);
}

int mkdir_p(const char *path)
{
	char *p = xstrdup(path), *s;
	int rc = 0;

	for (s = p + 1; *s && !rc; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0777) < 0 && errno != EEXIST)
			rc = -1;
		*s = '/';
	}
	if (!rc && mkdir(p, 0777) < 0 && errno != EEXIST)
		rc = -1;
	free(p);
	return rc;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) < 0 && errno != ENOENT ? -1 : 0;
	return unlink(path) < 0 && errno != ENOENT ? -1 : 0;
}

int rm_rf(const char *path)
{
	if (!exists(path))
		return 0;
	return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int read_all(const char *path, struct sb *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char buf[65536];
	ssize_t n;

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			xclose(fd);
			return -1;
		}
		sb_add(out, buf, (size_t)n);
	}
	return close(fd);
}

void now_str(char *buf, size_t size)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
		ts.tv_sec = time(NULL), ts.tv_nsec = 0;
	snprintf(buf, size, "%lld.%09ld", (long long)ts.tv_sec, ts.tv_nsec);
}

long now_s(void)
{
	return (long)time(NULL);
}

void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* flock_wait: flock -w SECONDS on FD (0: one try), by an interval timer
 * whose signal interrupts the wait */
int flock_wait(int fd, long seconds)
{
	struct sigaction sa, old;
	struct itimerval it = { { 0, 0 }, { seconds, 0 } }, off = { { 0, 0 }, { 0, 0 } };
	sigset_t set, oldset;
	int rc;

	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (seconds <= 0 || errno != EWOULDBLOCK)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	if (sigaction(SIGALRM, &sa, &old) < 0 || sigprocmask(SIG_UNBLOCK, &set, &oldset) < 0)
		return -1;
	if (setitimer(ITIMER_REAL, &it, NULL) < 0)
		rc = -1;
	else
		rc = flock(fd, LOCK_EX);
	if (setitimer(ITIMER_REAL, &off, NULL) < 0 || sigprocmask(SIG_SETMASK, &oldset, NULL) < 0 ||
	    sigaction(SIGALRM, &old, NULL) < 0)
		rc = -1;
	return rc;
}

/* open_lock: `exec N>>FILE` for a lock file */
int open_lock(const char *path)
{
	return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
}

int held(const char *rd)
{
	char *p = xfmt("%s/runner.lock", rd);
	int fd = open_lock(p), h = 0;

	free(p);
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		h = errno == EWOULDBLOCK;
	xclose(fd);
	return h;
}
