#!/bin/sh
# demo.sh -- the README's first command: build gpuorch, start an OpenSSH server
# on 127.0.0.1 for this machine, run experiments/demo.json through it, and say
# where the report is. Installs missing Debian packages first.
#
#   scripts/demo.sh [SPEC.json]        (default experiments/demo.json)
#
# State (keys, server config, remote work directory) lives in build/demo/, so a
# second run finds its sources already shipped and its build reused.
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh
deps_install
make -s
spec=${1:-experiments/demo.json}

TRASH=$(pwd)/build/demo
mkdir -p "$TRASH"
# shellcheck disable=SC2064 # the command is expanded now, on purpose
test_at_exit() { trap "$1" EXIT; trap 'exit 130' INT TERM; }
. tests/lib/sshd.sh
sshd_start demo
sshd_write_hosts_json "$TRASH/hosts.json" demo
# shellcheck disable=SC2154 # set by sshd_start (tests/lib/sshd.sh), through eval
echo "sshd for the demo: 127.0.0.1:$SSHD_demo_PORT (hosts file $TRASH/hosts.json)"

build/gpuorch hosts check --hosts "$TRASH/hosts.json"
set +e
build/gpuorch run "$spec" --hosts "$TRASH/hosts.json"
rc=$?
set -e
echo
echo "past runs: build/gpuorch runs"
exit $rc
