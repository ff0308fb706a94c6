#!/bin/bash
# gpu-e2e.sh -- gpuorch end to end on a real GPU machine (the device tool's H100):
# bring up an OpenSSH server on its loopback from carried Debian packages
# (shared/gpu-host/start-loopback-sshd.sh, copied into DEBS), then let the
# controller built on the development machine check the host and run
# experiments through that server. Reports land in REPORTS and are packed into
# $OUT/reports.tgz so they can be committed under reports/.
#
#   scripts/gpu-e2e.sh DEBS REPORTS SPEC...      (runs as root)
#   NHOSTS=2, SPEC_TIMEOUT=S, NOTIFY_SINK=build/tests/httpsink: see below
#   A SPEC of the form DIR=SPEC runs a foreign project (docs/byo.md): SPEC is
#   copied into DIR/experiments/ (DIR is a clone of that project, unchanged)
#   and gpuorch runs there. CMAKE_DEBS=DIR: when the SSH PATH has no cmake,
#   the Debian cmake packages in DIR are unpacked into /opt/cmakeroot and a
#   wrapper is put in /usr/local/bin (on the SSH session's PATH).
set -u
debs=$1 reports=$2
shift 2
out=${OUT:-/tmp/gpuorch-out}
mkdir -p "$out" "$reports"
# The device tool carries at most 64 MiB of the tree, and reports/ alone is
# ~55 MiB: it stays behind. Tell git so, or every run's provenance records
# the deletion of reports/ as its dirty diff (48 MB on 2026-11-25).
git ls-files -z --deleted -- reports | xargs -0 -r git update-index --skip-worktree
bash "$debs/start-loopback-sshd.sh" "$debs" 2222 >"$out/sshd.txt" 2>&1 || {
	cat "$out/sshd.txt"; exit 1; }
export LD_LIBRARY_PATH=/opt/sshroot/usr/lib/x86_64-linux-gnu:/opt/sshroot/lib/x86_64-linux-gnu
py=$(command -v python3)
# kernels/nccl's allreduce_nccl loads NCCL at run time; the SSH session's PATH
# does not reach this python's prefix, so put the lib directory of its
# nvidia-nccl wheel (torch's) on LD_LIBRARY_PATH in the host's env, which
# allreduce_nccl searches first (none: it finds the toolkit's or the
# system's, else its steps are SKIPPED saying where it looked)
nccl=$("$py" -c 'import os, nvidia.nccl; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null) || nccl=
envj=
if [ -n "$nccl" ] && [ -e "$nccl/libnccl.so.2" ]; then
	envj=", \"env\": {\"LD_LIBRARY_PATH\": \"$nccl:\$LD_LIBRARY_PATH\"}"
	echo "nccl: $nccl"
else
	echo "nccl: no nvidia-nccl wheel under $py"
fi
# NHOSTS=2: two inventory entries for the same GPU machine (own work
# directories), to see them run in parallel and share the GPU one step at a time
n=${NHOSTS:-1}
{
	echo '{"hosts": ['
	i=1
	while [ "$i" -le "$n" ]; do
		name=h100; [ "$n" -gt 1 ] && name=h100-$i
		[ "$i" -gt 1 ] && echo ','
		printf '{"name": "%s", "address": "127.0.0.1", "port": 2222, "user": "%s",\n' "$name" "$(id -un)"
		printf ' "identity": "/tmp/gpuorch-sshd/userkey", "known_hosts": "/tmp/gpuorch-sshd/known_hosts",\n'
		printf ' "workdir": ".gpuorch-%s", "python": "%s", "connect_timeout_s": 10%s}' "$name" "$py" "$envj"
		i=$((i + 1))
	done
	echo ']}'
} >"$out/hosts.json"
ldd build/gpuorch | grep -i "not found"
# the SSH session's PATH is /usr/local/bin:/usr/bin:/bin...: a cmake elsewhere
# (the H100 machine has one in /opt/torch/.venv/bin) is not seen by builds
if [ ! -x /usr/bin/cmake ] && [ ! -x /usr/local/bin/cmake ] && [ -n "${CMAKE_DEBS:-}" ]; then
	for f in "$CMAKE_DEBS"/*.deb; do dpkg -x "$f" /opt/cmakeroot; done
	# its libraries: its own, and libarchive/libcurl from the sshd's packages
	printf '#!/bin/sh\nLD_LIBRARY_PATH=/opt/cmakeroot/usr/lib/x86_64-linux-gnu:%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec /opt/cmakeroot/usr/bin/cmake "$@"\n' \
		"$LD_LIBRARY_PATH" \
		>/usr/local/bin/cmake
	chmod +x /usr/local/bin/cmake
	echo "cmake: carried $(/usr/local/bin/cmake --version | head -1)"
else
	echo "cmake: $(command -v cmake || echo none)"
fi
root=$(pwd)
build/gpuorch hosts check --hosts "$out/hosts.json" 2>&1 | tee "$out/hosts-check.txt"
for spec in "$@"; do
	echo "=== $spec"
	notify=
	# NOTIFY_SINK=path/to/httpsink: each run POSTs its summary to a one-request
	# HTTP server on loopback; the request lands in $out/notify-<spec>.txt
	if [ -n "${NOTIFY_SINK:-}" ]; then
		rm -f "$out/sink.port"
		"$NOTIFY_SINK" "$out/sink.port" "$out/notify-$(basename "$spec" .json).txt" 200 \
			$((${SPEC_TIMEOUT:-500} + 60)) &
		for _ in $(seq 50); do [ -s "$out/sink.port" ] && break; sleep 0.1; done
		notify="--notify=http://127.0.0.1:$(cat "$out/sink.port")/gpuorch-e2e"
	fi
	# SIGTERM at the limit: gpuorch records the run as incomplete
	dir=.
	case $spec in
	*=*)
		dir=${spec%%=*} spec=${spec#*=}
		mkdir -p "$dir/experiments" && cp "$spec" "$dir/experiments/" || exit 1
		spec=experiments/$(basename "$spec")
		;;
	esac
	case $reports in /*) rdir=$reports ;; *) rdir=$root/$reports ;; esac
	(cd "$dir" && timeout -s TERM "${SPEC_TIMEOUT:-500}" "$root/build/gpuorch" run "$spec" \
		--hosts "$out/hosts.json" --reports "$rdir" --plain $notify) \
		>"$out/run-$(basename "$spec" .json).txt" 2>&1
	echo "exit $?"
	tail -n 25 "$out/run-$(basename "$spec" .json).txt"
	# a host's first run builds its agent after it (docs/runner.md): let that
	# build end, so that the next SPEC runs under the agent (bounded: 60 s)
	for _ in $(seq 120); do
		ls -d "$HOME"/.gpuorch-*/agent/*.src.* >/dev/null 2>&1 || break
		sleep 0.5
	done
	ls "$HOME"/.gpuorch-*/agent/ 2>/dev/null | sed 's/^/agent dir: /'
	tar czf "$out/reports.tgz" "$reports"
done
build/gpuorch runs --reports "$reports" | tee "$out/runs.txt"
