# shellcheck shell=sh
# sshd.sh -- real OpenSSH servers for the tests (after curl's test sshserver).
#
# Source after testlib.sh:   . "$SRCDIR/tests/lib/sshd.sh"
#
#   sshd_start NAME        start /usr/sbin/sshd on a free port of 127.0.0.1, as
#                          the current user, with its own ed25519 host key,
#                          config, authorized_keys and client key, all under
#                          $TRASH/sshd-NAME. NAME is [A-Za-z0-9_]+. Exports
#                            SSHD_<NAME>_PORT, SSHD_<NAME>_PID,
#                            SSHD_<NAME>_KNOWN_HOSTS  ("[127.0.0.1]:PORT key"),
#                            SSHD_<NAME>_IDENTITY     (client private key),
#                            SSHD_<NAME>_LOG, SSHD_<NAME>_DIR,
#                            SSHD_<NAME>_WORKDIR      (a per-server remote workdir)
#   sshd_stop NAME         SIGTERM the listener, wait for it to go
#   sshd_kill NAME         SIGKILL the listener and its per-connection sshd
#                          processes (as if the host's sshd crashed); the
#                          users' processes are left alone
#   sshd_restart NAME      start it again on the same port with the same keys
#   sshd_forget_workdir NAME   empty its remote workdir, as on a host never
#                          used (after the execd a run left there has gone)
#   sshd_write_hosts_json FILE NAME...   a gpuorch hosts inventory for them
#   sshd_var NAME FIELD    prints SSHD_<NAME>_<FIELD> (empty when unset, also under set -u)
#   sshd_ssh NAME CMD...   run CMD on it with the OpenSSH client (for checks)
#   sshd_sshtool NAME ARGS...  run build/tests/sshtool against it
#
# Ports are picked at random and checked by host key, so files running in
# parallel cannot end up talking to each other's servers; SSHD_TRY_PORTS
# (space-separated) are tried first.
#
# The session's PATH is set to /usr/bin:/bin (SetEnv) so tests see what a
# non-login SSH PATH on a GPU host looks like: /usr/local/cuda/bin is not on
# it. A server can get DIR:/usr/bin:/bin instead (a directory of stand-in
# tools such as a fake nvidia-smi, for a "GPU host" without a GPU):
#   sshd_start_with_path NAME DIR
# (the PATH is kept across sshd_restart). More session variables (e.g. a
# HOME of its own, for an "account" with its own ~/.bashrc):
#   SSHD_<NAME>_EXTRA_ENV="HOME=/some/dir" sshd_start NAME
# (set and exported before sshd_start; space-separated NAME=VALUE words, no
# spaces inside a value). Lines for its sshd_config (e.g. one that turns a
# kind of forwarding off): SSHD_<NAME>_EXTRA_CONFIG="AllowStreamLocalForwarding no".
# All servers are stopped at exit.

SSHD_BIN=${SSHD_BIN:-/usr/sbin/sshd}
_want_sftp=${SSHD_SFTP:-}   # a server elsewhere (e.g. unpacked from .debs) may be named
SSHD_SFTP=
for _p in ${_want_sftp:+"$_want_sftp"} /usr/lib/openssh/sftp-server /usr/libexec/openssh/sftp-server \
	/usr/libexec/sftp-server /usr/lib/ssh/sftp-server; do
	if [ -x "$_p" ]; then
		SSHD_SFTP=$_p
		break
	fi
done
sshd_started_names=

sshd_var() {
	eval "echo \"\${SSHD_$1_$2:-}\""
}

sshd_setvar_() {
	eval "SSHD_$1_$2=\$3; export SSHD_$1_$2"
}

# sshd_available: prints why not and returns 1 when no sshd can be run here.
sshd_available() {
	if [ ! -x "$SSHD_BIN" ]; then
		echo "no OpenSSH server at $SSHD_BIN (apt-get install openssh-server)"
		return 1
	fi
	if [ -z "$SSHD_SFTP" ]; then
		echo "no sftp-server (apt-get install openssh-sftp-server)"
		return 1
	fi
	if ! command -v ssh-keygen >/dev/null 2>&1; then
		echo "no ssh-keygen (apt-get install openssh-client)"
		return 1
	fi
	return 0
}

# sshd_alive_ PID: running and not a zombie (the servers are not our
# children, and the host's init may be slow to reap them)
sshd_alive_() {
	_st=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
	case "$_st" in
	Z*|"") return 1 ;;
	esac
	return 0
}

# sshd_port_is_ours_ PORT DIR: the server answering on PORT has the host
# key of DIR. Files run in parallel: another file's sshd may hold a port we
# picked at random (ours then dies on bind), and a banner alone would have
# us talk to it. bash's /dev/tcp is not in POSIX sh: the ssh client's
# keyscan asks for the key.
sshd_port_is_ours_() {
	_key=$(cut -d' ' -f2 "$2/host_ed25519.pub") || return 1
	ssh-keyscan -T 1 -t ed25519 -p "$1" 127.0.0.1 2>/dev/null | grep -qF " $_key"
}

sshd_write_config_() {
	_d=$1
	_port=$2
	cat >"$_d/sshd_config" <<EOF
Port $_port
ListenAddress 127.0.0.1
AddressFamily inet
HostKey $_d/host_ed25519
PidFile $_d/sshd.pid
AuthorizedKeysFile $_d/authorized_keys
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PermitRootLogin yes
MaxStartups 100
MaxSessions 100
LogLevel VERBOSE
SetEnv PATH=$3/usr/bin:/bin$4
Subsystem sftp $SSHD_SFTP
EOF
	if [ -n "${5:-}" ]; then
		printf '%s\n' "$5" >>"$_d/sshd_config"
	fi
}

# sshd_launch_ NAME PORT: start the daemon; returns 1 if it died (port taken).
sshd_launch_() {
	_d=$(sshd_var "$1" DIR)
	_env=$(sshd_var "$1" EXTRA_ENV)
	# a probe cache of its own (gpuorch keeps the host side of the probe in
	# $XDG_CACHE_HOME/gpuorch): servers of tests running side by side must not
	# overwrite one another's, unless the test gave the account a HOME of its own
	case " $_env" in
	*" HOME="*|*" XDG_CACHE_HOME="*) ;;
	*) _env="${_env:+$_env }XDG_CACHE_HOME=$_d/cache" ;;
	esac
	sshd_write_config_ "$_d" "$2" "$(sshd_var "$1" EXTRA_PATH)" "${_env:+ $_env}" \
		"$(sshd_var "$1" EXTRA_CONFIG)"
	rm -f "$_d/sshd.pid"
	# started from a subshell so it is not a child of the test script:
	# a test's bare `wait` must not wait for the servers
	rm -f "$_d/launch.pid"
	( "$SSHD_BIN" -D -e -f "$_d/sshd_config" >>"$_d/sshd.log" 2>&1 </dev/null &
	  echo $! >"$_d/launch.pid" )
	_pid=$(cat "$_d/launch.pid")
	_i=0
	while [ $_i -lt 100 ]; do
		if ! sshd_alive_ "$_pid"; then
			return 1
		fi
		if sshd_port_is_ours_ "$2" "$_d"; then
			sshd_setvar_ "$1" PID "$_pid"
			sshd_setvar_ "$1" PORT "$2"
			return 0
		fi
		sleep 0.1
		_i=$((_i + 1))
	done
	kill -9 "$_pid" 2>/dev/null
	echo "sshd_start: sshd on port $2 did not accept connections within 10 s; log:" >&2
	cat "$_d/sshd.log" >&2
	return 1
}

sshd_start() {
	_name=$1
	_why=$(sshd_available) || {
		echo "sshd_start: $_why" >&2
		return 1
	}
	_d="$TRASH/sshd-$_name"
	mkdir -p "$_d" "$TRASH/work-$_name" || return 1
	# privilege separation needs this directory when sshd runs as root
	if [ "$(id -u)" = 0 ] && [ ! -d /run/sshd ]; then
		mkdir -p /run/sshd && chmod 755 /run/sshd
	fi
	if [ ! -f "$_d/host_ed25519" ]; then
		ssh-keygen -q -t ed25519 -N '' -C "gpuorch-test-host-$_name" -f "$_d/host_ed25519" || return 1
		ssh-keygen -q -t ed25519 -N '' -C "gpuorch-test-client-$_name" -f "$_d/id_ed25519" || return 1
		cp "$_d/id_ed25519.pub" "$_d/authorized_keys"
		chmod 600 "$_d/authorized_keys"
	fi
	sshd_setvar_ "$_name" DIR "$_d"
	sshd_setvar_ "$_name" IDENTITY "$_d/id_ed25519"
	sshd_setvar_ "$_name" LOG "$_d/sshd.log"
	sshd_setvar_ "$_name" WORKDIR "$TRASH/work-$_name"
	sshd_setvar_ "$_name" KNOWN_HOSTS "$_d/known_hosts"
	_try=0
	_first=${SSHD_TRY_PORTS:-}
	while [ $_try -lt 30 ]; do
		# the ports of $SSHD_TRY_PORTS first (tests of this library), then
		# a pseudo-random port in 20000..26999 (no $RANDOM in POSIX sh):
		# below the kernel's ephemeral ports (32768.. here), which a client
		# connection could hold when sshd_restart wants its port back, and
		# apart from slurm.sh's 27000.. (tests/lib/slurm.sh)
		if [ -n "$_first" ]; then
			_port=${_first%% *}
			_first=${_first#"$_port"}
			_first=${_first# }
		else
			_port=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
			_port=$((20000 + _port % 7000))
		fi
		if sshd_launch_ "$_name" "$_port"; then
			break
		fi
		_try=$((_try + 1))
	done
	if [ $_try -ge 30 ]; then
		echo "sshd_start: could not start sshd '$_name' on a free port; log:" >&2
		tail -n 20 "$_d/sshd.log" >&2
		return 1
	fi
	echo "[127.0.0.1]:$_port $(cut -d' ' -f1,2 "$_d/host_ed25519.pub")" >"$_d/known_hosts"
	case " $sshd_started_names " in
	*" $_name "*) ;;
	*) sshd_started_names="$sshd_started_names $_name" ;;
	esac
	return 0
}

# sshd_start_with_path NAME DIR: sshd_start, with DIR first on the session's PATH.
sshd_start_with_path() {
	sshd_setvar_ "$1" EXTRA_PATH "$2:" &&
	sshd_start "$1"
}

sshd_stop() {
	_pid=$(sshd_var "$1" PID)
	[ -n "$_pid" ] || return 0
	kill -TERM "$_pid" 2>/dev/null
	_i=0
	while sshd_alive_ "$_pid" && [ $_i -lt 50 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	kill -KILL "$_pid" 2>/dev/null
	sshd_setvar_ "$1" PID ""
	return 0
}

sshd_kill() {
	_pid=$(sshd_var "$1" PID)
	[ -n "$_pid" ] || return 0
	# the per-connection sshd processes are the listener's children (and
	# theirs: "sshd", or "sshd-session" and "sshd-auth" from OpenSSH 9.8 on);
	# the user's shells are not sshd and are left running. The listener is
	# stopped first, so that it accepts and forks nothing between the
	# listing and the kill (a connection child made then would live on)
	kill -STOP "$_pid" 2>/dev/null
	_i=0
	while [ $_i -lt 50 ]; do
		case $(ps -o stat= -p "$_pid" 2>/dev/null) in
		T* | Z* | "") break ;;
		esac
		sleep 0.02
		_i=$((_i + 1))
	done
	_kids=$(ps -eo pid=,ppid=,comm= | awk -v p="$_pid" '
		{ pp[$1] = $2; c[$1] = $3 }
		END {
			for (i in pp) {
				j = i; n = 0
				while (j != "" && j != 1 && n < 10) {
					if (pp[j] == p && c[i] ~ /^sshd(-session|-auth)?$/) { print i; break }
					j = pp[j]; n++
				}
			}
		}')
	kill -KILL "$_pid" $_kids 2>/dev/null
	_i=0
	while sshd_alive_ "$_pid" && [ $_i -lt 50 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	sshd_setvar_ "$1" PID ""
	return 0
}

sshd_restart() {
	_port=$(sshd_var "$1" PORT)
	sshd_stop "$1"
	_i=0
	while [ $_i -lt 50 ]; do
		if sshd_launch_ "$1" "$_port"; then
			return 0
		fi
		sleep 0.2
		_i=$((_i + 1))
	done
	echo "sshd_restart: could not restart sshd '$1' on port $_port" >&2
	return 1
}

# sshd_forget_workdir NAME: a run's start command builds the host's execd in
# the background once the run's runner has ended (cc, then the execd starts
# and binds its socket there), so a test that removes the workdir right after
# a run races with those writes ("rm: Directory not empty"). Waits (60 s at
# most) until no process of that workdir's execd is left, stopping each
# execd that has started, then removes and recreates the directory.
sshd_forget_workdir() {
	_w=$(sshd_var "$1" WORKDIR)
	[ -n "$_w" ] || { echo "sshd_forget_workdir: no server '$1'" >&2; return 1; }
	_i=0
	while pgrep -f "$_w/execd/gpuorch-execd-" >/dev/null; do
		if [ $_i -ge 600 ]; then
			echo "sshd_forget_workdir: $1's execd still running after 60 s:" >&2
			pgrep -af "$_w/execd/gpuorch-execd-" >&2
			return 1
		fi
		pkill -TERM -f "$_w/execd/gpuorch-execd-[0-9a-f]* start " 2>/dev/null
		sleep 0.1
		_i=$((_i + 1))
	done
	rm -rf "$_w" && mkdir "$_w"
}

sshd_stop_all_() {
	for _n in $sshd_started_names; do
		sshd_stop "$_n"
	done
}
test_at_exit sshd_stop_all_

# sshd_write_hosts_json FILE NAME...
sshd_write_hosts_json() {
	_f=$1
	shift
	{
		echo '{"hosts": ['
		_sep=
		for _n in "$@"; do
			printf '%s  {"name": "%s", "address": "127.0.0.1", "port": %s, "user": "%s",\n' \
				"$_sep" "$_n" "$(sshd_var "$_n" PORT)" "$(id -un)"
			printf '   "identity": "%s", "known_hosts": "%s",\n' \
				"$(sshd_var "$_n" IDENTITY)" "$(sshd_var "$_n" KNOWN_HOSTS)"
			printf '   "workdir": "%s", "connect_timeout_s": 20}' "$(sshd_var "$_n" WORKDIR)"
			_sep=",
"
		done
		echo
		echo ']}'
	} >"$_f"
}

# sshd_ssh NAME CMD...: the OpenSSH client, for setting up and checking.
sshd_ssh() {
	_n=$1
	shift
	ssh -q -o BatchMode=yes -o StrictHostKeyChecking=yes \
		-o UserKnownHostsFile="$(sshd_var "$_n" KNOWN_HOSTS)" \
		-o IdentitiesOnly=yes -i "$(sshd_var "$_n" IDENTITY)" \
		-o ConnectTimeout=5 -p "$(sshd_var "$_n" PORT)" \
		"$(id -un)@127.0.0.1" "$@"
}

# sshd_sshtool NAME ARGS...: tests/tools/sshtool ($SSHTOOL) against it, with
# its key and known_hosts; the label is NAME.
sshd_sshtool() {
	_n=$1
	shift
	"$SSHTOOL" --label "$_n" --port "$(sshd_var "$_n" PORT)" \
		--key "$(sshd_var "$_n" IDENTITY)" \
		--known-hosts "$(sshd_var "$_n" KNOWN_HOSTS)" "$@"
}
