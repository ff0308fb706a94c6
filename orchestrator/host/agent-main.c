/* agent-main.c -- gpuorch-agent: the host runner as a C program (docs/runner.md;
 * orchestrator/remote/runner.sh is the same contract in POSIX sh, for hosts
 * without a C compiler). Its commands:
 *
 *   gpuorch-agent start RUNDIR          run detached; "started PID", "running
 *                                       PID" or "finished"
 *   gpuorch-agent run RUNDIR            the plan in the foreground (exit 0
 *                                       done, 2 bad plan, 3 killed or error)
 *   gpuorch-agent follow RUNDIR OFFSET  the journal from byte OFFSET, followed
 *                                       while the runner lives
 *   gpuorch-agent kill RUNDIR           stop the run for good; "killed"
 *   gpuorch-agent reopen RUNDIR         (--resume) what was stopped or lost
 *                                       runs again; "reopened N"
 *   gpuorch-agent attach KEY=VALUE...   a re-run's start command: start.sh's
 *                                       work in one process, then follow
 *                                       (agent-attach.c)
 *   gpuorch-agent sig KEY=VALUE...      the host's signature, as
 *                                       probe-sig.sh's $sig (agent-sig.c)
 *
 * Everything it writes is the user's alone (umask 077). */
#include "agent.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct agent A = { .jfd = -1, .sigfd = -1 };

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";
	int rc;

	umask(077);
	if (!strcmp(c, "start") && argc == 3)
		rc = cmd_start(argv[2]);
	else if (!strcmp(c, "run") && argc == 3)
		rc = cmd_run(argv[2], -1);
	else if (!strcmp(c, "follow") && argc == 4)
		rc = cmd_follow(argv[2], argv[3]);
	else if (!strcmp(c, "kill") && argc == 3)
		rc = cmd_kill(argv[2]);
	else if (!strcmp(c, "reopen") && argc == 3)
		rc = cmd_reopen(argv[2]);
	else if (!strcmp(c, "attach"))
		rc = cmd_attach(argv[0], argc - 2, argv + 2);
	else if (!strcmp(c, "sig"))
		rc = cmd_sig(argc - 2, argv + 2);
	else if (!strcmp(c, "start") || !strcmp(c, "run") || !strcmp(c, "kill") || !strcmp(c, "reopen"))
		die("usage: gpuorch-agent %s RUNDIR", c);
	else if (!strcmp(c, "follow"))
		die("usage: gpuorch-agent follow RUNDIR OFFSET");
	else
		die("usage: gpuorch-agent start|run|follow|kill|reopen RUNDIR [OFFSET], or attach|sig KEY=VALUE...");
	plan_free(&A.plan);
	free(A.jpath);
	free(A.msg);
	return rc;
}
