#!/bin/sh
# test.sh -- the README's second command (and what CI runs, via .ci/run):
# install what is missing, then build and run every test. Ends with
# "N passed, N failed".
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh
deps_install --tests
exec tests/run-tests.sh "$@"
