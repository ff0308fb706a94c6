# shellcheck shell=sh
# agent-tests.sh -- gpuorch-agent's own tests (t1008), sourced by
# t1005-runner.sh in its context (plan, pstep, events, runner, $TRASH).
