#!/bin/sh
# cost: 10
# asan: yes
test_description='--json on hosts clean, disconnect and list: one document on stdout against its schema, the values of the text (on stderr), a host that is down, an empty clean, and a bad inventory (nothing on stdout)'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"

if ! why=$(sshd_available); then
	test_skip 'hosts --json tests' "$why"
	test_done
fi
if ! command -v jq >/dev/null 2>&1; then
	test_skip 'hosts --json tests' 'jq is not installed (apt-get install jq)'
	test_done
fi

check_json() {
	"$SRCDIR/scripts/check-json.sh" "$@"
}

test_expect_success 'setup: host a up; host b'"'"'s port closed' '
	sshd_start a && sshd_start b && sshd_stop b &&
	sshd_write_hosts_json hosts.json a b &&
	sshd_write_hosts_json one.json a
'

test_expect_success 'hosts clean --json of a work directory with nothing old: zeros, exit 0' '
	"$GPUORCH" hosts clean --hosts one.json --json >c0.out 2>c0.err &&
	cat c0.out c0.err && check_json cli-hosts-clean.schema.json c0.out &&
	test "$(jq -r .exit_code c0.out)" = 0 && test "$(jq -r .dry_run c0.out)" = false &&
	test "$(jq -r .older_than_days c0.out)" = 14 &&
	test "$(jq -r ".hosts[0] | [.name, .status, .runs, .sources, .builds, .shipped_files, .objects, .kib] | join(\" \")" c0.out)" = "a ok 0 0 0 0 0 0" &&
	grep "^a  removed from .*: 0 runs, 0 source trees, 0 builds, 0 shipped files, 0 objects, 0.0 MiB" c0.err
'

test_expect_success 'hosts clean --dry-run --json: what would go, the numbers of the text; nothing removed' '
	W=$(sshd_var a WORKDIR) &&
	mkdir -p "$W/runs/20260101-000000-000001" "$W/runs/20260101-000000-000002" &&
	head -c 300000 /dev/urandom >"$W/runs/20260101-000000-000001/big" &&
	find "$W/runs" -exec touch -d "30 days ago" {} + &&
	"$GPUORCH" hosts clean --hosts one.json --older-than 7 --dry-run >dry.txt &&
	"$GPUORCH" hosts clean --hosts one.json --older-than 7 --dry-run --json >dry.out 2>dry.err &&
	cat dry.txt dry.out && check_json cli-hosts-clean.schema.json dry.out &&
	test_cmp dry.txt dry.err &&
	test "$(jq -r .dry_run dry.out)" = true && test "$(jq -r .older_than_days dry.out)" = 7 &&
	test "$(jq -r ".hosts[0].runs" dry.out)" = 2 &&
	jq -r ".hosts[0] | \"\(.name)  would remove from \(.workdir): \(.runs) runs, \(.sources) source trees, \(.builds) builds, \(.shipped_files) shipped files, \(.objects) objects, \" " dry.out >from-json &&
	head -n 1 dry.txt | cut -c1-$(($(wc -c <from-json) - 1)) >from-text && test_cmp from-json from-text &&
	head -n 1 dry.txt | grep ", $(jq -r ".hosts[0].kib / 1024 * 10 | round / 10" dry.out) MiB (unused for 7 days)$" &&
	test -d "$W/runs/20260101-000000-000001" &&
	jq -r ".hosts[0].log[]" dry.out >log-json && sed -n "s/^    //p" dry.txt >log-text &&
	test_cmp log-text log-json
'

test_expect_success 'hosts clean --json with host b down: exit 1, b failed with its error, a cleaned' '
	W=$(sshd_var a WORKDIR) &&
	test_expect_code 1 "$GPUORCH" hosts clean --hosts hosts.json --older-than 7 --json >c1.out 2>c1.err &&
	cat c1.out && check_json cli-hosts-clean.schema.json c1.out &&
	test "$(jq -r .exit_code c1.out)" = 1 &&
	test "$(jq -r "[.hosts[] | .name + \" \" + .status] | join(\",\")" c1.out)" = "a ok,b failed" &&
	test "$(jq -r ".hosts[0].runs" c1.out)" = 2 && test ! -e "$W/runs/20260101-000000-000001" &&
	test "b  FAILED: $(jq -r ".hosts[1].error" c1.out)" = "$(grep "^b  " c1.err)" &&
	: "b alone: no host usable, exit 3, still a document" &&
	test_expect_code 3 "$GPUORCH" hosts clean --hosts hosts.json --host b --json >c3.out 2>/dev/null &&
	check_json cli-hosts-clean.schema.json c3.out && test "$(jq -r .exit_code c3.out)" = 3
'

test_expect_success 'hosts disconnect --json: each host, the text on stderr; b down: exit 1' '
	"$GPUORCH" hosts disconnect --hosts one.json >d.txt &&
	"$GPUORCH" hosts disconnect --hosts one.json --json >d.out 2>d.err &&
	cat d.txt d.out && check_json cli-hosts-disconnect.schema.json d.out &&
	test_cmp d.txt d.err &&
	test "$(jq -r ".hosts[0] | [.name, .status, .execds_stopped, .keeper_stopped] | join(\" \")" d.out)" = "a ok 0 false" &&
	test "a  $(jq -r ".hosts[0].keeper" d.out)" = "$(head -n 1 d.txt)" &&
	test "a  0 execds stopped" = "$(tail -n 1 d.txt)" &&
	test_expect_code 1 "$GPUORCH" hosts disconnect --hosts hosts.json --json >d1.out 2>d1.err &&
	check_json cli-hosts-disconnect.schema.json d1.out &&
	test "$(jq -r ".hosts[1].status" d1.out)" = failed &&
	grep "^b  execds: FAILED: $(jq -r ".hosts[1].error" d1.out | cut -c1-30)" d1.err
'

test_expect_success 'hosts list --json: the inventory as the text shows it' '
	"$GPUORCH" hosts list --hosts hosts.json >l.txt &&
	"$GPUORCH" hosts list --hosts hosts.json --json >l.out 2>l.err &&
	cat l.out && check_json cli-hosts-list.schema.json l.out && test ! -s l.err &&
	test "$(jq -r .inventory l.out)" = hosts.json &&
	jq -r ".hosts[] | \"\(.name)  \(.user)@\(.address):\(.port)  key \(.identity)  known_hosts \(.known_hosts)  workdir \(.workdir)\"" l.out >from-json &&
	test_cmp l.txt from-json
'

test_expect_success 'a bad inventory or an unknown host with --json: exit 2, nothing on stdout' '
	echo "{" >bad.json &&
	for v in clean disconnect list; do
		test_expect_code 2 "$GPUORCH" hosts $v --hosts bad.json --json >bad.out 2>bad.err &&
		test ! -s bad.out && grep "^error: " bad.err &&
		test_expect_code 2 "$GPUORCH" hosts $v --hosts hosts.json --host nonesuch --json >bad.out 2>bad.err &&
		test ! -s bad.out && grep "^error: " bad.err || return 1
	done &&
	test_expect_code 2 "$GPUORCH" hosts list --hosts hosts.json --dry-run --json >bad.out 2>bad.err &&
	test ! -s bad.out && grep "options of .hosts clean." bad.err
'

test_done
