/* agent-spawn.c -- gpuorch-agent's start of one build or step (runner.sh's
 * spawn): writes DIR/cmd, stamps DIR/queued at the clock reading that the
 * caller's started event shares (ev_again), forks the item's own process
 * (agent-item.c) and waits, about 10 s at most, for its session to exist
 * (its pgid), unless it is already gone. */
#include "agent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int spawn(const char *dir, long t, const char *lock, long lw, const char *cmd, pid_t *pidp)
{
	char *p = xfmt("%s/cmd", dir), *pg = xfmt("%s/pgid", dir), *rc = xfmt("%s/rc", dir);
	char *text = xfmt("%s\n", cmd), line[48];
	pid_t pid = -1;
	int i, r = -1;

	if (mkdir_p(dir) < 0 || write_file(p, text, strlen(text)) < 0)
		goto out;
	free(p);
	p = xfmt("%s/queued", dir);
	now_str(A.evt, sizeof(A.evt));
	snprintf(line, sizeof(line), "%ld\n", atol(A.evt));
	if (write_file(p, line, strlen(line)) < 0)
		goto out;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "runner: fork: %s\n", strerror(errno));
		goto out;
	}
	if (pid == 0)
		item_main(dir, t, lock, lw, A.plan.src);
	r = 0;
	for (i = 0; i < 1000 && !nonempty(pg) && !is_file(rc) && !child_gone(pid); i++)
		sleep_ms(i < 5 ? 2 : 10);
out:
	*pidp = pid;
	free(p), free(pg), free(rc), free(text);
	return r;
}
