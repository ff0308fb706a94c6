#!/bin/sh
# version.sh -- gpuorch's version, from git at build time (the Makefile
# writes it into build/gen/core/version.c; `gpuorch --version` and every
# record's gpuorch_version print it).
#   scripts/version.sh BASE [DIR]
# BASE is the release the Makefile names (VERSION, e.g. 0.1.0); DIR the
# source tree (default: this script's repository). Prints one line:
#   1.2.0, 1.2.0-3-g0123456789ab   a tag vX.Y.Z (git describe: commits since it)
#   BASE-g0123456789ab             no such tag: BASE and the commit
#   ...-dirty                      uncommitted changes to tracked files
#   BASE-unknown                   DIR is not the top of a git work tree (a
#                                  tarball), or git is missing
set -u
[ $# -ge 1 ] || { echo "usage: version.sh BASE [DIR]" >&2; exit 2; }
base=$1
dir=${2:-$(cd "$(dirname "$0")/.." && pwd -P)}
top=$(cd "$dir" 2>/dev/null && git rev-parse --show-toplevel 2>/dev/null) || top=
# a tarball unpacked inside another repository must not take that one's
# version: only a tree that is the top of its own work tree has one
if [ -z "$top" ] || [ "$(cd "$top" && pwd -P)" != "$(cd "$dir" && pwd -P)" ]; then
	echo "$base-unknown"
	exit 0
fi
if v=$(cd "$dir" && git describe --tags --match 'v[0-9]*' --dirty --abbrev=12 2>/dev/null); then
	echo "${v#v}"
	exit 0
fi
if c=$(cd "$dir" && git rev-parse --short=12 HEAD 2>/dev/null); then
	d=
	(cd "$dir" && git diff --quiet HEAD -- 2>/dev/null) || d=-dirty
	echo "$base-g$c$d"
	exit 0
fi
echo "$base-unknown"
