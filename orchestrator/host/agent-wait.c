/* agent-wait.c -- gpuorch-agent's waiting: the runner's stop signals (TERM,
 * INT, HUP) and its items' ends (CHLD) arrive through one signalfd, read
 * where it waits (between looks at the builds, while a step runs), so a
 * build's end is seen as its process exits, with no FIFO and no timer
 * process. Its ended children are reaped here and remembered. */
#include "agent.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#define NREAPED 256
static pid_t reaped[NREAPED];
static int nreaped;

static sigset_t watched(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	return set;
}

void signals_open(void)
{
	sigset_t set = watched();
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0 ||
	    (A.sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		fprintf(stderr, "runner: signalfd: %s\n", strerror(errno));
		A.sigfd = -1;
	}
}

void reap_children(void)
{
	pid_t pid;
	int st;
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		reaped[nreaped++ % NREAPED] = pid;
}

/* child_gone: PID, a child of this runner, has ended (and is reaped) */
int child_gone(pid_t pid)
{
	int i;
	reap_children();
	for (i = 0; i < NREAPED && i < nreaped; i++)
		if (reaped[i] == pid)
			return 1;
	return 0;
}

static const char *sig_name(int sig)
{
	return sig == SIGTERM ? "TERM" : sig == SIGINT ? "INT" : "HUP";
}

/* wait_events: up to MS ms, until a signal; a stop signal runs on_signal.
 * 1: a child ended (or a stop), 0: the time ran out. */
int wait_events(long ms)
{
	struct pollfd pfd;
	struct signalfd_siginfo si;
	int woke = 0;

	if (A.sigfd < 0) {
		sleep_ms(ms);
		return 0;
	}
	pfd.fd = A.sigfd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, (int)ms) < 0 && errno != EINTR)
		sleep_ms(ms);
	while (read(A.sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		woke = 1;
		if (si.ssi_signo == SIGCHLD)
			reap_children();
		else
			on_signal(sig_name((int)si.ssi_signo));
	}
	return woke;
}
