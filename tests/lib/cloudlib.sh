# shellcheck shell=sh
# cloudlib.sh -- a loopback "cloud instance" for the tests: a real sshd
# (tests/lib/sshd.sh) that runs only while tests/fixtures/cloud/fakecloud.sh
# says the instance is RUNNING. Source after sshd.sh.
#
#   cloud_init NAME            start sshd NAME once (keys, known_hosts), stop
#                              it, and make $TRASH/cloud-NAME the instance's
#                              state (TERMINATED); exports FAKECLOUD_DIR
#   cloud_hosts FILE NAME 'EXTRA'  a hosts file whose host NAME has an
#                              "instance" of provider command running
#                              fakecloud.sh; EXTRA is more JSON members of it
#                              (', "idle_stop_min": 0.05')
#   cloud_bin                  $TRASH/bin with gcloud and aws links to fakecloud.sh
#   cloud_reachable NAME       the instance's sshd answers
#   cloud_guard_pid NAME       the pid of the guard on it, or nothing

FAKECLOUD=$SRCDIR/tests/fixtures/cloud/fakecloud.sh

cloud_init() {
	sshd_start "$1" || return 1
	FAKECLOUD_DIR=$TRASH/cloud-$1
	export FAKECLOUD_DIR
	mkdir -p "$FAKECLOUD_DIR" &&
	cp "$(sshd_var "$1" DIR)/sshd_config" "$FAKECLOUD_DIR/sshd_config" &&
	sshd_var "$1" WORKDIR >"$FAKECLOUD_DIR/workdir" &&
	sshd_stop "$1" &&
	echo TERMINATED >"$FAKECLOUD_DIR/state" &&
	test_at_exit "cloud_cleanup_ $1"
}

cloud_cleanup_() {
	_d=$TRASH/cloud-$1
	[ -f "$_d/sshd.pid" ] && kill "$(cat "$_d/sshd.pid")" 2>/dev/null
	_g=$(cloud_guard_pid "$1")
	[ -n "$_g" ] && kill "$_g" 2>/dev/null
	return 0
}

cloud_hosts() {
	_n=$2
	cat >"$1" <<EOT
{"hosts": [
  {"name": "$_n", "address": "127.0.0.1", "port": $(sshd_var "$_n" PORT), "user": "$(id -un)",
   "identity": "$(sshd_var "$_n" IDENTITY)", "known_hosts": "$(sshd_var "$_n" KNOWN_HOSTS)",
   "workdir": "$(sshd_var "$_n" WORKDIR)", "connect_timeout_s": 15,
   "instance": {"provider": "command",
                "start": ["$FAKECLOUD", "start"], "stop": ["$FAKECLOUD", "stop"],
                "status": ["$FAKECLOUD", "status"], "address": ["$FAKECLOUD", "address"],
                "check": ["$FAKECLOUD", "check"],
                "poll_s": 0.2, "timeout_s": 20, "retries": 0, "start_timeout_s": 60,
                "ssh_timeout_s": 60, "price_per_hour": 3.6$3}}
]}
EOT
}

cloud_bin() {
	mkdir -p "$TRASH/bin" &&
	ln -sf "$FAKECLOUD" "$TRASH/bin/gcloud" &&
	ln -sf "$FAKECLOUD" "$TRASH/bin/aws"
}

cloud_reachable() {
	sshd_ssh "$1" true 2>/dev/null
}

cloud_guard_pid() {
	_w=$(sshd_var "$1" WORKDIR)
	[ -s "$_w/guard/pid" ] && cat "$_w/guard/pid"
	return 0
}
