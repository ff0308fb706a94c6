#!/bin/sh
# agent-bundle.sh -- prints gpuorch-agent's sources (orchestrator/host/*.c
# and *.h) as one text that the start command splits on the host: each file
# after a line "#--gpuorch-agent-file-- NAME" (remote.c; docs/runner.md).
#   scripts/agent-bundle.sh FILE... > OUT
set -eu
[ $# -gt 0 ] || { echo "usage: agent-bundle.sh FILE..." >&2; exit 2; }
for f in "$@"; do
	n=$(basename "$f")
	case $n in
	*[!A-Za-z0-9._-]* | .*) echo "agent-bundle.sh: '$n' is not a plain file name" >&2; exit 1 ;;
	esac
	echo "#--gpuorch-agent-file-- $n"
	cat "$f"
	[ -z "$(tail -c 1 "$f")" ] || echo
done
