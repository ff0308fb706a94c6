#!/bin/bash
# gpu-slurm.sh -- gpuorch through a single-node Slurm on a GPU machine that has
# no Slurm (the device tool's H100): unpack Debian 12's Slurm 22.05 and munge
# (scripts/fetch-slurm-debs.sh) into a prefix, start munged, slurmctld, slurmd
# (one node, Gres=gpu:1 on /dev/nvidia0 when there is one) and slurmrestd
# (rest_auth/jwt) with tests/lib/slurm.sh from that prefix, an OpenSSH server
# on the loopback as the login node (shared/gpu-host/start-loopback-sshd.sh,
# copied into DEBS, as scripts/gpu-e2e.sh does), then `gpuorch hosts check`
# and `gpuorch run` of each SPEC on the cluster entry.
#
#   scripts/gpu-slurm.sh DEBS SLURMDEBS REPORTS SPEC...      (runs as root)
#
# Output under $OUT (default /tmp/gpuorch-out): gpu-slurm.txt (everything
# printed), state.tgz (slurm.conf, gres.conf, hosts.json, the daemons' logs,
# squeue/sacct-less job list), reports.tgz (REPORTS). Environment:
#   SLURMROOT=/opt/slurmroot  where the packages are unpacked
#   SSHD_PORT=2222            the login node's port
#   SLURM_ARCH                the entry's arch (default sm_90a when
#                             /dev/nvidia0 exists, else none: GPU steps SKIPPED)
#   SLURM_CPUS                CPUs declared for the node (default nproc, max 16)
#   DEADLINE_S=280            all SPECs together; each gets what is left
#   SLURM_LIB                 slurm.sh to use (default: beside this script,
#                             else tests/lib/slurm.sh)
# Every daemon start is bounded (tests/lib/slurm.sh's wait_for); on a failure
# the daemons' log tails are printed and the script exits 1.
set -u
debs=${1:?usage: gpu-slurm.sh DEBS SLURMDEBS REPORTS SPEC...}
sdebs=${2:?usage: gpu-slurm.sh DEBS SLURMDEBS REPORTS SPEC...}
reports=${3:?usage: gpu-slurm.sh DEBS SLURMDEBS REPORTS SPEC...}
shift 3
here=$(cd "$(dirname "$0")" && pwd)
src=$(pwd)
out=${OUT:-/tmp/gpuorch-out}
root=${SLURMROOT:-/opt/slurmroot}
port=${SSHD_PORT:-2222}
t0=$(date +%s)
deadline=$((t0 + ${DEADLINE_S:-280}))
mkdir -p "$out" "$reports" || exit 1
exec > >(tee -a "$out/gpu-slurm.txt") 2>&1

say() { echo "gpu-slurm [$(($(date +%s) - t0)) s]: $*"; }

# The device tool carries at most 64 MiB of the tree, and reports/ stays
# behind: tell git so (as gpu-e2e.sh does), or the run's provenance is the
# deletion of reports/, a diff over gpuorch's 64 MiB limit, and the run
# stops there (exit 4; seen on the H100 on 2026-11-27).
git ls-files -z --deleted -- reports | xargs -0 -r git update-index --skip-worktree

# what tests/lib/slurm.sh needs from tests/lib/testlib.sh
TRASH=${TRASH:-/tmp/gpuorch-slurm}
rm -rf "$TRASH" && mkdir -p "$TRASH" || exit 1
test_now_ms() { echo $(($(date +%s%N) / 1000000)); }
wait_for() {
	_deadline=$(($(test_now_ms) + $1 * 1000))
	while ! eval "$2"; do
		if [ "$(test_now_ms)" -ge "$_deadline" ]; then
			echo "wait_for: timed out after $1 s waiting for: $2" >&2
			return 1
		fi
		sleep 0.1
	done
}
at_exit_=
test_at_exit() { at_exit_="$at_exit_; $*"; }

save_state() {
	{
		echo "--- slurm.conf"; cat "$TRASH/slurm/slurm.conf" 2>/dev/null
		echo "--- gres.conf"; cat "$TRASH/slurm/gres.conf" 2>/dev/null
		echo "--- cgroup.conf"; cat "$TRASH/slurm/cgroup.conf" 2>/dev/null
		echo "--- scontrol show node"; slurm_scontrol_ show node 2>&1
		echo "--- squeue"; "$SLURM_BIN/squeue" -a -t all -o '%i %j %T %S %e %R' 2>&1
	} >"$TRASH/slurm-state.txt" 2>&1
	tar czf "$out/state.tgz" -C "$TRASH" slurm-state.txt hosts.json slurm/log \
		slurm/munge/munged.log slurm/slurm.conf slurm/cgroup.conf 2>/dev/null
	[ -d "$reports" ] && tar czf "$out/reports.tgz" "$reports"
}
finish() {
	save_state
	eval "true $at_exit_"
}
trap finish EXIT

# 1. unpack
say "unpacking $(ls "$sdebs"/*.deb | wc -l) packages into $root ($(ls "$sdebs"/fallback/*.deb 2>/dev/null | wc -l) fallback libraries into $root/fallback)"
mkdir -p "$root/fallback" || exit 1
for f in "$sdebs"/*.deb; do dpkg -x "$f" "$root" || { say "dpkg -x $f failed"; exit 1; }; done
for f in "$sdebs"/fallback/*.deb; do dpkg -x "$f" "$root/fallback" || exit 1; done
# Debian names the daemons slurmctld-wlm ... and links slurmctld to them
# with update-alternatives in postinst, which dpkg -x does not run
for f in "$root"/usr/sbin/*-wlm; do
	[ -e "$f" ] && ln -sf "$(basename "$f")" "${f%-wlm}"
done
arch_dir=x86_64-linux-gnu
SLURM_SBIN=$root/usr/sbin
SLURM_BIN=$root/usr/bin
SLURM_PLUGIN_DIR=$root/usr/lib/$arch_dir/slurm-wlm
SLURM_MUNGED=$root/usr/sbin/munged
export SLURM_SBIN SLURM_BIN SLURM_PLUGIN_DIR SLURM_MUNGED
slurm_libs=$SLURM_PLUGIN_DIR:$root/usr/lib/$arch_dir:$root/lib/$arch_dir

# 2. libraries: the prefix's first (libslurmfull.so: the binaries' RUNPATH
# names /usr/lib/.../slurm-wlm, which LD_LIBRARY_PATH comes before); the
# fallback set only when something is missing without it
needed="$SLURM_SBIN/slurmctld $SLURM_SBIN/slurmd $SLURM_SBIN/slurmstepd $SLURM_SBIN/slurmrestd
	$SLURM_BIN/scontrol $SLURM_BIN/squeue $SLURM_BIN/scancel $SLURM_MUNGED"
# slurmd and slurmstepd load the cgroup plugin of the host's hierarchy even
# with proctrack/pgid and task/none: cgroup_v2.so needs libdbus-1.so.3, which
# the device's Ubuntu 24.04 image lacks (seen there: slurmd exited with
# "Unable to initialize cgroup plugin")
for p in auth_munge auth_jwt cred_munge rest_auth_jwt openapi_v0_0_38 gres_gpu select_cons_tres \
	sched_backfill proctrack_pgid task_none cgroup_v1 cgroup_v2; do
	needed="$needed $SLURM_PLUGIN_DIR/$p.so"
done
missing_libs() {
	for f in $needed; do
		[ -e "$f" ] || { echo "$f: not in the packages"; continue; }
		LD_LIBRARY_PATH=$1 ldd "$f" 2>&1 | grep "not found" | sed "s|^|$(basename "$f"): |"
	done
}
# a missing library is linked from the fallback set into $root/fblib, round
# by round (its own needs may be missing too): only what is missing is used
m=$(missing_libs "$slurm_libs")
if [ -n "$m" ]; then
	say "missing with the carried set alone:"; echo "$m" | sort -u | head -20
	mkdir -p "$root/fblib" || exit 1
	slurm_libs=$slurm_libs:$root/fblib
	round=0
	while [ -n "$m" ] && [ $round -lt 6 ]; do
		for so in $(echo "$m" | awk '/not found/ { for (i = 1; i < NF; i++) if ($(i + 1) == "=>") print $i }' | sort -u); do
			f=$(find "$root/fallback" -name "$so" | head -1)
			[ -n "$f" ] && ln -sf "$f" "$root/fblib/$so" && say "from the fallback set: $so"
		done
		m=$(missing_libs "$slurm_libs")
		round=$((round + 1))
	done
	if [ -n "$m" ]; then
		say "FAILED: still missing with the fallback libraries:"; echo "$m" | sort -u
		exit 1
	fi
fi
say "$(LD_LIBRARY_PATH=$slurm_libs "$SLURM_SBIN/slurmctld" -V 2>&1 | head -1) from $SLURM_SBIN"

# 3. the cluster (tests/lib/slurm.sh, from the prefix)
lib=${SLURM_LIB:-$here/slurm.sh}
[ -f "$lib" ] || lib=$src/tests/lib/slurm.sh
# shellcheck disable=SC1090 # tests/lib/slurm.sh, found at run time
. "$lib" || exit 1
if [ -e /dev/nvidia0 ]; then
	SLURM_NODE_EXTRA="Gres=gpu:1 "
	SLURM_CONF_EXTRA="GresTypes=gpu"
	SLURM_GRES_CONF=$(printf 'AutoDetect=off\nName=gpu File=/dev/nvidia0')
	export SLURM_NODE_EXTRA SLURM_CONF_EXTRA SLURM_GRES_CONF
	arch=${SLURM_ARCH:-sm_90a}
	say "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1); node gets Gres=gpu:1 (File=/dev/nvidia0)"
else
	arch=${SLURM_ARCH:-}
	say "no /dev/nvidia0: a CPU node (GPU steps are SKIPPED)"
fi
# Slurm 22.05's slurmd loads a cgroup plugin at start even with proctrack/pgid
# and task/none. On a cgroup v2 host (the device: seen there) autodetect picks
# cgroup/v2, whose init() wants systemd's D-Bus (no /run/dbus there) to make
# a scope for slurmstepd: slurmd exited with "Unable to initialize cgroup
# plugin". cgroup/v1's init() touches no file system, and nothing here uses
# cgroups, so it is named explicitly.
SLURM_CGROUP_CONF=${SLURM_CGROUP_CONF-CgroupPlugin=cgroup/v1}
export SLURM_CGROUP_CONF
say "cgroup file system: $(stat -fc %T /sys/fs/cgroup 2>&1); cgroup.conf: ${SLURM_CGROUP_CONF:-none}"
cpus=${SLURM_CPUS:-$(nproc)}
[ "$cpus" -gt 16 ] && cpus=16
ok=
LD_LIBRARY_PATH=$slurm_libs slurm_start "$cpus" && ok=1
# the daemons keep their environment; nothing else here needs the prefix's libraries
export LD_LIBRARY_PATH=$slurm_libs
if [ -z "$ok" ]; then
	say "FAILED: Slurm did not start (the daemons' logs above and in state.tgz)"
	exit 1
fi
for d in slurmctld slurmd slurmrestd; do
	eval "pid=\${SLURM_PID_$d:-}"
	# shellcheck disable=SC2154 # pid: set by the eval above
	say "$d pid $pid: $(grep -o '/[^ ]*libslurmfull.so' "/proc/$pid/maps" 2>/dev/null | sort -u | tr '\n' ' ')"
done
say "node: $(slurm_scontrol_ -o show node node1 | tr ' ' '\n' | grep -E '^(State|CPUTot|Gres|CfgTRES)=' | tr '\n' ' ')"
slurm_token 7200 >"$TRASH/token" && [ -s "$TRASH/token" ] || {
	say "FAILED: scontrol token gave nothing"; exit 1; }
chmod 600 "$TRASH/token"

# 4. the login node: an OpenSSH server on the loopback, from DEBS
unset LD_LIBRARY_PATH
bash "$debs/start-loopback-sshd.sh" "$debs" "$port" >"$TRASH/sshd.txt" 2>&1 || {
	cat "$TRASH/sshd.txt"; say "FAILED: the loopback sshd did not start"; exit 1; }
export LD_LIBRARY_PATH=/opt/sshroot/usr/lib/x86_64-linux-gnu:/opt/sshroot/lib/x86_64-linux-gnu
mkdir -p "$TRASH/shared" || exit 1
py=$(command -v python3)
cat >"$TRASH/hosts.json" <<EOF
{"hosts": [
  {"name": "h100-slurm",
   "slurm": {"url": "$SLURM_REST_URL", "partition": "debug", "gpus": "1",
             "token_file": "$TRASH/token", "time_limit_min": 20, "max_jobs": 16},
   "login": {"address": "127.0.0.1", "port": $port, "user": "$(id -un)",
             "identity": "/tmp/gpuorch-sshd/userkey", "known_hosts": "/tmp/gpuorch-sshd/known_hosts",
             "connect_timeout_s": 10},
   "workdir": "$TRASH/shared", "python": "$py"${arch:+, \"arch\": \"$arch\"}}
]}
EOF
cat "$TRASH/hosts.json"
say "gpuorch hosts check"
build/gpuorch hosts check --hosts "$TRASH/hosts.json"
echo "exit $?"
case $reports in /*) rdir=$reports ;; *) rdir=$src/$reports ;; esac
for spec in "$@"; do
	left=$((deadline - $(date +%s)))
	if [ "$left" -lt 20 ]; then
		say "$spec: not run, ${left} s left of DEADLINE_S"
		continue
	fi
	say "=== $spec (at most $left s)"
	timeout -s TERM "$left" build/gpuorch run "$spec" --hosts "$TRASH/hosts.json" \
		--host h100-slurm --reports "$rdir" --plain
	say "exit $?"
done
build/gpuorch runs --reports "$rdir"
say "done"
