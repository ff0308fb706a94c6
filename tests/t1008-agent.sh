#!/bin/sh
# cost: 25
# asan: yes
# t1008-agent.sh -- gpuorch-agent (orchestrator/host/), the host runner as a
# C program: every test of t1005 run against it (GPUORCH_RUNNER_BIN; the
# two that drive runner.sh's own parts are skipped there, saying why), then
# its own (tests/lib/agent-tests.sh: escaping, text_cap, bad plans, reopen,
# kill of a dead runner's items), before t1005's tests over sshd. The agent
# is the one beside $GPUORCH: build/gpuorch-agent, or build/asan/gpuorch-agent
# in the ASan pass.
test_description='gpuorch-agent: t1005 against the C runner, and its own tests'
GPUORCH_RUNNER_BIN=$(cd "$(dirname "$0")/.." && pwd)/build/gpuorch-agent
[ -z "${GPUORCH:-}" ] || GPUORCH_RUNNER_BIN=$(dirname "$GPUORCH")/gpuorch-agent
GPUORCH_RUNNER_MORE_TESTS=$(cd "$(dirname "$0")" && pwd)/lib/agent-tests.sh
GPUORCH_RUNNER_LAST_TESTS=agent_last_tests
export GPUORCH_RUNNER_BIN
# shellcheck source=tests/t1005-runner.sh
. "$(dirname "$0")/t1005-runner.sh"
