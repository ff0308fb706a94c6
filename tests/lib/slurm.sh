# shellcheck shell=sh
# slurm.sh -- a real single-node Slurm cluster on 127.0.0.1 for the tests.
#
# Source after testlib.sh:   . "$SRCDIR/tests/lib/slurm.sh"
#
#   slurm_available        prints why not and returns 1 when Debian's Slurm
#                          (slurmctld, slurmd, slurmrestd, scontrol, munged,
#                          the auth/jwt plugin) is not installed here
#   slurm_start [CPUS]     start munged (own key and socket), slurmctld, slurmd
#                          (node "node1", CPUS CPUs, default 8, declared with
#                          SlurmdParameters=config_overrides so a 2-core CI box
#                          runs 8 one-CPU jobs at once) and slurmrestd
#                          (rest_auth/jwt on 127.0.0.1), all with their own
#                          config, state and log files under $TRASH/slurm, on
#                          free ports; waits (bounded) until the node is idle
#                          and the REST daemon answers. Exports
#                            SLURM_CONF        (scontrol, squeue, scancel use it)
#                            SLURM_DIR         $TRASH/slurm
#                            SLURM_REST_URL    http://127.0.0.1:PORT
#                            SLURM_REST_PORT, SLURM_PARTITION (debug),
#                            SLURM_NODE (node1), SLURM_TEST_USER
#   slurm_token [LIFESPAN] prints a fresh JWT (scontrol token, default 600 s)
#   slurm_rest_stop        stop slurmrestd only (a REST outage mid-run)
#   slurm_rest_start       start it again on the same port (the OpenAPI
#                          plugins: $SLURM_REST_PLUGINS, default v0.0.36-38)
#   slurm_rest_start_unix PATH   another slurmrestd on unix:PATH (local auth)
#   slurm_login_start NAME [DIRS]
#                          start the test sshd NAME (tests/lib/sshd.sh) as the
#                          cluster's login node: its PATH has a scontrol that
#                          reads this cluster's slurm.conf (to mint tokens),
#                          and DIRS (colon-separated) when given;
#                          its work dir is the "shared" dir the node sees too
#   slurm_cluster_json FILE LOGIN [EXTRA]   an inventory with one cluster entry
#                          "hpc" (partition debug, time_limit_min 5, max_jobs 8,
#                          EXTRA appended to its "slurm" object, e.g.
#                          ', "max_jobs": 2'); SLURM_URL overrides the url
#   slurm_logs             print the tails of the daemons' logs (for failures)
#   slurm_stop             stop everything (also run at exit)
#
# The daemons run as the current user: as root, slurmrestd needs
# SLURMRESTD_SECURITY=disable_user_check (it refuses root otherwise). Jobs
# run with proctrack/pgid and task/none: no cgroups, so containers work.
# Finished jobs stay visible for MinJobAge (600 s here, 300 s by default).
#
# Where Slurm comes from (defaults: Debian's packages installed system-wide);
# scripts/gpu-slurm.sh sets them to a prefix where the packages were unpacked
# (dpkg -x), with LD_LIBRARY_PATH naming the prefix's libraries:
#   SLURM_SBIN        slurmctld, slurmd, slurmstepd, slurmrestd (/usr/sbin)
#   SLURM_BIN         scontrol, scancel (/usr/bin)
#   SLURM_PLUGIN_DIR  PluginDir= in slurm.conf (unset: the compiled-in one)
#   SLURM_MUNGED      munged (default: the one on PATH, else $SLURM_SBIN/munged)
# and what the node has besides CPUs:
#   SLURM_NODE_EXTRA  appended to the NodeName line, e.g. "Gres=gpu:1 "
#   SLURM_CONF_EXTRA  lines appended to slurm.conf, e.g. GresTypes=gpu
#   SLURM_GRES_CONF   the text of gres.conf beside slurm.conf (unset: none)
#   SLURM_CGROUP_CONF the text of cgroup.conf (unset: none; slurmd then loads
#                     the cgroup plugin of the host's hierarchy, and 22.05's
#                     cgroup/v2 wants systemd over D-Bus: see docs/slurm.md)

SLURM_SBIN=${SLURM_SBIN:-/usr/sbin}
SLURM_BIN=${SLURM_BIN:-/usr/bin}
slurm_pids_=

slurm_available() {
	for _b in slurmctld slurmd slurmrestd; do
		if [ ! -x "$SLURM_SBIN/$_b" ]; then
			echo "no $_b in $SLURM_SBIN (apt-get install slurmctld slurmd slurmrestd slurm-client munge slurm-wlm-jwt-plugin)"
			return 1
		fi
	done
	for _b in scontrol squeue scancel; do
		if [ ! -x "$SLURM_BIN/$_b" ]; then
			echo "no $_b in $SLURM_BIN (apt-get install slurm-client)"
			return 1
		fi
	done
	if [ -z "$(slurm_munged_)" ]; then
		echo "no munged (apt-get install munge)"
		return 1
	fi
	_pd=
	for _d in ${SLURM_PLUGIN_DIR:-/usr/lib/x86_64-linux-gnu/slurm-wlm /usr/lib/aarch64-linux-gnu/slurm-wlm \
		/usr/lib/slurm-wlm /usr/lib64/slurm /usr/lib/slurm}; do
		[ -f "$_d/auth_jwt.so" ] && _pd=$_d
	done
	if [ -z "$_pd" ]; then
		echo "no auth/jwt plugin for Slurm (apt-get install slurm-wlm-jwt-plugin)"
		return 1
	fi
	return 0
}

slurm_munged_() {
	if [ -n "${SLURM_MUNGED:-}" ]; then
		[ -x "$SLURM_MUNGED" ] && echo "$SLURM_MUNGED"
	elif command -v munged 2>/dev/null; then
		:
	elif [ -x "$SLURM_SBIN/munged" ]; then
		echo "$SLURM_SBIN/munged"
	fi
}

slurm_scontrol_() {
	"$SLURM_BIN/scontrol" "$@"
}

# slurm_rest_answers_ URL [CURL-ARGS]: slurmrestd answers (curl, else python3)
slurm_rest_answers_() {
	_u=$1
	shift
	if command -v curl >/dev/null 2>&1; then
		curl -s -o /dev/null "$@" "$_u"
	else
		python3 -c 'import sys, urllib.request, urllib.error
try: urllib.request.urlopen(sys.argv[1], timeout=2)
except urllib.error.HTTPError: pass' "$_u" 2>/dev/null
	fi
}

# slurm_port_free_ PORT: nothing listens on PORT (tcp4 or tcp6)
slurm_port_free_() {
	_hex=$(printf ':%04X ' "$1")
	! cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '$4 == "0A" { print $2 " " }' |
		grep -q "$_hex"
}

# slurm_free_port_: prints a free pseudo-random port from 27000 (below it: sshd.sh's) up to the
# kernel's ephemeral range (ip_local_port_range, usually from 32768): a port
# in that range can be taken by any outgoing connection between the check
# and the daemon's bind (it happened: "Address already in use" under load)
slurm_free_port_() {
	_lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
	case $_lo in ''|*[!0-9]*) _lo=32768 ;; esac
	[ "$_lo" -gt 28000 ] || _lo=60000
	_i=0
	while [ $_i -lt 50 ]; do
		_p=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
		_p=$((27000 + _p % (_lo - 27000)))   # sshd.sh takes 20000..26999
		if slurm_port_free_ "$_p"; then
			echo "$_p"
			return 0
		fi
		_i=$((_i + 1))
	done
	return 1
}

slurm_write_conf_() {
	_d=$SLURM_DIR
	_user=$(id -un)
	cat >"$_d/slurm.conf" <<EOF
# generated by tests/lib/slurm.sh: a single-node cluster on 127.0.0.1
ClusterName=gpuorchtest
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$1
SlurmdPort=$2
SlurmUser=$_user
SlurmdUser=$_user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$_d/munge/munge.socket
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$_d/jwt.key
StateSaveLocation=$_d/state
SlurmdSpoolDir=$_d/spool/%n
SlurmctldPidFile=$_d/slurmctld.pid
SlurmdPidFile=$_d/slurmd.pid
SlurmctldLogFile=$_d/log/slurmctld.log
SlurmdLogFile=$_d/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2,bf_interval=2
ReturnToService=2
MinJobAge=600
MaxJobCount=10000
KillWait=2
InactiveLimit=0
Waittime=0
SlurmdTimeout=60
SlurmdParameters=config_overrides
NodeName=node1 NodeHostname=$(hostname -s) NodeAddr=127.0.0.1 CPUs=$3 RealMemory=4000 ${SLURM_NODE_EXTRA:-}State=UNKNOWN
PartitionName=debug Nodes=node1 Default=YES MaxTime=60 State=UP
EOF
	if [ -n "${SLURM_PLUGIN_DIR:-}" ]; then
		echo "PluginDir=$SLURM_PLUGIN_DIR" >>"$_d/slurm.conf" || return 1
	fi
	if [ -n "${SLURM_CONF_EXTRA:-}" ]; then
		printf '%s\n' "$SLURM_CONF_EXTRA" >>"$_d/slurm.conf" || return 1
	fi
	if [ -n "${SLURM_GRES_CONF:-}" ]; then
		printf '%s\n' "$SLURM_GRES_CONF" >"$_d/gres.conf" || return 1
	fi
	if [ -n "${SLURM_CGROUP_CONF:-}" ]; then
		printf '%s\n' "$SLURM_CGROUP_CONF" >"$_d/cgroup.conf" || return 1
	fi
}

slurm_launch_() {
	# $1 = name, rest = command; started from a subshell so that it is not
	# a child of the test shell (a bare `wait` must not wait for it)
	_name=$1
	shift
	( "$@" >>"$SLURM_DIR/log/$_name.out" 2>&1 </dev/null &
	  echo $! >"$SLURM_DIR/$_name.launch" )
	_lp=$(cat "$SLURM_DIR/$_name.launch")
	slurm_pids_="$slurm_pids_ $_lp"
	eval "SLURM_PID_$_name=$_lp"
}

slurm_start_munge_() {
	_m=$SLURM_DIR/munge
	mkdir -p "$_m" && chmod 755 "$_m" || return 1
	dd if=/dev/urandom of="$_m/munge.key" bs=1 count=1024 2>/dev/null &&
	chmod 400 "$_m/munge.key" || return 1
	_munged=$(slurm_munged_)
	"$_munged" --force --key-file="$_m/munge.key" --socket="$_m/munge.socket" \
		--pid-file="$_m/munged.pid" --log-file="$_m/munged.log" \
		--seed-file="$_m/munged.seed" --num-threads=2 >>"$_m/munged.out" 2>&1 || {
		echo "slurm_start: munged did not start:" >&2
		cat "$_m/munged.out" "$_m/munged.log" >&2 2>/dev/null
		return 1
	}
	wait_for 10 "test -S '$_m/munge.socket' && test -s '$_m/munged.pid'" || return 1
	slurm_pids_="$slurm_pids_ $(cat "$_m/munged.pid")"
}

slurm_rest_start() {
	_env=
	[ "$(id -u)" = 0 ] && _env=SLURMRESTD_SECURITY=disable_user_check
	slurm_launch_ slurmrestd env $_env SLURM_JWT=daemon SLURM_CONF="$SLURM_CONF" \
		"$SLURM_SBIN/slurmrestd" -f "$SLURM_CONF" -a rest_auth/jwt \
		-s "${SLURM_REST_PLUGINS:-openapi/v0.0.36,openapi/v0.0.37,openapi/v0.0.38}" \
		"127.0.0.1:$SLURM_REST_PORT"
	wait_for 20 "slurm_rest_answers_ http://127.0.0.1:$SLURM_REST_PORT/openapi" || {
		echo "slurm_start: slurmrestd does not answer on port $SLURM_REST_PORT" >&2
		slurm_logs >&2
		return 1
	}
}

# slurm_rest_start_unix PATH: a second slurmrestd on a unix socket, with
# rest_auth/local (the peer's uid is the user; no token)
slurm_rest_start_unix() {
	_env=
	[ "$(id -u)" = 0 ] && _env=SLURMRESTD_SECURITY=disable_user_check
	slurm_launch_ slurmrestd_unix env $_env SLURM_CONF="$SLURM_CONF" \
		"$SLURM_SBIN/slurmrestd" -f "$SLURM_CONF" -a rest_auth/local \
		-s openapi/v0.0.38 "unix:$1"
	wait_for 20 "slurm_rest_answers_ http://localhost/openapi --unix-socket '$1'" || {
		echo "slurm_rest_start_unix: slurmrestd does not answer on $1" >&2
		slurm_logs >&2
		return 1
	}
}

slurm_rest_stop() {
	[ -n "${SLURM_PID_slurmrestd:-}" ] || return 0
	kill -TERM "$SLURM_PID_slurmrestd" 2>/dev/null
	_i=0
	while kill -0 "$SLURM_PID_slurmrestd" 2>/dev/null && [ $_i -lt 50 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	kill -KILL "$SLURM_PID_slurmrestd" 2>/dev/null
	SLURM_PID_slurmrestd=
}

slurm_node_state_() {
	slurm_scontrol_ -o show node node1 2>/dev/null | tr ' ' '\n' | sed -n 's/^State=//p'
}

# shellcheck disable=SC2154 # SLURM_PID_slurmd: set by slurm_launch_, through eval
slurm_start() {
	_cpus=${1:-8}
	_why=$(slurm_available) || {
		echo "slurm_start: $_why" >&2
		return 1
	}
	SLURM_DIR=$TRASH/slurm
	SLURM_CONF=$SLURM_DIR/slurm.conf
	SLURM_PARTITION=debug
	SLURM_NODE=node1
	SLURM_TEST_USER=$(id -un)
	export SLURM_DIR SLURM_CONF SLURM_PARTITION SLURM_NODE SLURM_TEST_USER
	mkdir -p "$SLURM_DIR/state" "$SLURM_DIR/spool/node1" "$SLURM_DIR/log" || return 1
	dd if=/dev/urandom of="$SLURM_DIR/jwt.key" bs=32 count=1 2>/dev/null &&
	chmod 600 "$SLURM_DIR/jwt.key" || return 1
	test_at_exit slurm_stop
	slurm_start_munge_ || return 1
	_try=0
	while [ $_try -lt 5 ]; do
		_cp=$(slurm_free_port_) && _dp=$(slurm_free_port_) && _rp=$(slurm_free_port_) ||
			return 1
		[ "$_cp" != "$_dp" ] && [ "$_dp" != "$_rp" ] && [ "$_cp" != "$_rp" ] && break
		_try=$((_try + 1))
	done
	SLURM_REST_PORT=$_rp
	SLURM_REST_URL=http://127.0.0.1:$_rp
	export SLURM_REST_PORT SLURM_REST_URL
	slurm_write_conf_ "$_cp" "$_dp" "$_cpus" || return 1
	slurm_launch_ slurmctld "$SLURM_SBIN/slurmctld" -D -i -f "$SLURM_CONF"
	wait_for 30 'slurm_scontrol_ ping 2>/dev/null | grep -q UP' || {
		echo "slurm_start: slurmctld did not come up" >&2
		slurm_logs >&2
		return 1
	}
	slurm_launch_ slurmd "$SLURM_SBIN/slurmd" -D -N node1 -f "$SLURM_CONF" \
		-d "$SLURM_SBIN/slurmstepd"
	# slurmd runs in the foreground (-D): when it exits, stop waiting
	wait_for 60 '! kill -0 "$SLURM_PID_slurmd" 2>/dev/null ||
		case "$(slurm_node_state_)" in IDLE*) true ;; *) false ;; esac' &&
	kill -0 "$SLURM_PID_slurmd" 2>/dev/null || {
		kill -0 "$SLURM_PID_slurmd" 2>/dev/null ||
			echo "slurm_start: slurmd exited while starting (its log below)" >&2
		echo "slurm_start: node1 did not become IDLE (state $(slurm_node_state_))" >&2
		slurm_logs >&2
		return 1
	}
	slurm_rest_start
}

slurm_token() {
	slurm_scontrol_ token lifespan="${1:-600}" | sed -n 's/^SLURM_JWT=//p'
}

slurm_login_start() {
	mkdir -p "$TRASH/slurm-bin" &&
	printf '#!/bin/sh\nSLURM_CONF=%s exec %s/scontrol "$@"\n' "$SLURM_CONF" "$SLURM_BIN" \
		>"$TRASH/slurm-bin/scontrol" &&
	chmod +x "$TRASH/slurm-bin/scontrol" &&
	sshd_start_with_path "$1" "$TRASH/slurm-bin${2:+:$2}"
}

slurm_cluster_json() {
	cat >"$1" <<EOF
{"hosts": [
  {"name": "hpc",
   "slurm": {"url": "${SLURM_URL:-$SLURM_REST_URL}", "partition": "debug", "time_limit_min": 5, "max_jobs": 8${3:-}},
   "login": {"address": "127.0.0.1", "port": $(sshd_var "$2" PORT), "user": "$(id -un)",
             "identity": "$(sshd_var "$2" IDENTITY)", "known_hosts": "$(sshd_var "$2" KNOWN_HOSTS)"},
   "workdir": "$(sshd_var "$2" WORKDIR)"}
]}
EOF
}

slurm_logs() {
	for _f in "$SLURM_DIR"/log/* "$SLURM_DIR"/munge/munged.log; do
		[ -f "$_f" ] || continue
		echo "--- $_f"
		tail -n 30 "$_f"
	done
}

slurm_stop() {
	[ -n "$slurm_pids_" ] || return 0
	# jobs first, so no job step outlives the test
	"$SLURM_BIN/scancel" --full --quiet -u "$(id -un)" 2>/dev/null
	for _p in $slurm_pids_; do
		kill -TERM "$_p" 2>/dev/null
	done
	_i=0
	while [ $_i -lt 50 ]; do
		_alive=
		for _p in $slurm_pids_; do
			kill -0 "$_p" 2>/dev/null && _alive=1
		done
		[ -z "$_alive" ] && break
		sleep 0.1
		_i=$((_i + 1))
	done
	for _p in $slurm_pids_; do
		kill -KILL "$_p" 2>/dev/null
	done
	slurm_pids_=
}
