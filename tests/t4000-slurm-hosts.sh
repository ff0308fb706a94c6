#!/bin/sh
# asan: yes
# waits: yes
test_description='Slurm cluster entries: hosts.json validation and `gpuorch hosts check` against a real slurmrestd'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/slurm.sh"
. "$SRCDIR/tests/lib/runlib.sh"

HTTPSINK=${HTTPSINK:-$SRCDIR/build/tests/httpsink}

if ! _why=$(sshd_available) || ! _why=$(slurm_available); then
	test_skip 'Slurm cluster tests' "$_why"
	test_done
fi

# cluster_json FILE URL [EXTRA_SLURM_FIELDS]: cluster "hpc" whose login node is sshd "login"
cluster_json() {
	SLURM_URL=$2 slurm_cluster_json "$1" login "${3:-}"
}

# no_token_in FILE...: the current token appears in none of them
no_token_in() {
	for _f in "$@"; do
		# shellcheck disable=SC2154 # tok: set by the setup test body
		if grep -F -- "$tok" "$_f" >/dev/null; then
			echo "the token leaked into $_f"
			return 1
		fi
	done
}

test_expect_success 'setup: a single-node Slurm and a login node (sshd) that has scontrol' '
	slurm_start 8 &&
	slurm_login_start login &&
	cluster_json hosts.json "$SLURM_REST_URL" &&
	tok=$(slurm_token 3600) && test -n "$tok"
'

test_expect_success 'a cluster entry: bad ones exit 2 naming the field and the fix' '
	cat >bad1.json <<-EOF &&
	{"hosts": [{"name": "c", "slurm": {"url": "http://x:6820", "partition": "gpu"}}]}
	EOF
	test_expect_code 2 "$GPUORCH" hosts list --hosts bad1.json 2>bad1.err &&
	grep "bad1.json: .hosts\[0\].: a cluster entry (with \"slurm\") needs \"login\"" bad1.err &&
	cat >bad2.json <<-EOF &&
	{"hosts": [{"name": "c", "address": "10.0.0.1", "slurm": {"url": "http://x:6820", "partition": "gpu"},
	  "login": {"address": "x"}}]}
	EOF
	test_expect_code 2 "$GPUORCH" hosts list --hosts bad2.json 2>bad2.err &&
	grep "hosts\[0\].address.: a cluster entry .* move .address. into \"login\"" bad2.err &&
	cat >bad3.json <<-EOF &&
	{"hosts": [{"name": "c", "slurm": {"url": "ftp://x:6820", "partition": "gpu"}, "login": {"address": "x"}}]}
	EOF
	test_expect_code 2 "$GPUORCH" hosts list --hosts bad3.json 2>bad3.err &&
	grep "hosts\[0\].slurm.url.: .ftp://x:6820. is not a slurmrestd address; expected http://HOST:PORT" bad3.err &&
	cat >bad4.json <<-EOF &&
	{"hosts": [{"name": "c", "slurm": {"url": "http://x:1"}, "login": {"address": "x"}}]}
	EOF
	test_expect_code 2 "$GPUORCH" hosts list --hosts bad4.json 2>bad4.err &&
	grep "hosts\[0\].slurm.: missing required key .partition." bad4.err &&
	cat >bad5.json <<-EOF &&
	{"hosts": [{"name": "c", "slurm": {"url": "http://x:1", "partition": "p", "max_job": 3}, "login": {"address": "x"}}]}
	EOF
	test_expect_code 2 "$GPUORCH" hosts list --hosts bad5.json 2>bad5.err &&
	grep "unknown key .max_job. (did you mean .max_jobs.?)" bad5.err &&
	cat >bad6.json <<-EOF &&
	{"hosts": [{"name": "c", "address": "x", "login": {"address": "y"}}]}
	EOF
	test_expect_code 2 "$GPUORCH" hosts list --hosts bad6.json 2>bad6.err &&
	grep "hosts\[0\].login.: .login. is for a Slurm cluster entry only" bad6.err &&
	cat >bad7.json <<-EOF &&
	{"hosts": [{"name": "c", "slurm": {"url": "http://x:1", "partition": "p", "token_file": "nope.jwt"}, "login": {"address": "x"}}]}
	EOF
	test_expect_code 2 "$GPUORCH" hosts list --hosts bad7.json 2>bad7.err &&
	grep "slurm.token_file.: cannot read token file .*nope.jwt.: No such file" bad7.err &&
	cat >bad8.json <<-EOF &&
	{"hosts": [{"name": "c", "slurm": {"url": "http://x:1", "partition": "p", "time_limit_min": 0}, "login": {"address": "x"}}]}
	EOF
	test_expect_code 2 "$GPUORCH" hosts list --hosts bad8.json 2>bad8.err &&
	grep "slurm.time_limit_min.: expected an integer from 1 to 525600, found 0" bad8.err
'

test_expect_success 'hosts list shows the cluster and its login node' '
	"$GPUORCH" hosts list --hosts hosts.json >list.out &&
	grep "^hpc  cluster: slurmrestd $SLURM_REST_URL  partition debug  login  $(id -un)@127.0.0.1:$(sshd_var login PORT)" list.out
'

test_expect_success 'hosts check with SLURM_JWT: REST, API version, token, partition, node, GPUs; the token is never printed' '
	SLURM_JWT=$tok "$GPUORCH" hosts check --hosts hosts.json >check.out 2>check.err &&
	cat check.out &&
	grep "^hpc  cluster: slurmrestd $SLURM_REST_URL, login .*  ok  " check.out &&
	grep "^    api  *v0.0.38 (Slurm 22.05" check.out &&
	grep "^    token  *valid, from SLURM_JWT, expires in [0-9]* s" check.out &&
	grep "^    partition  *debug: UP, 1 node, 8 CPUs" check.out &&
	grep "^    node  *node1: idle, CPUs 0/8 used, GPUs 0/0 used" check.out &&
	grep "^    gpus  *0 free / 0 total (no gpu GRES in the partition: CPU-only jobs)" check.out &&
	SLURM_JWT=$tok "$GPUORCH" hosts check --hosts hosts.json --json >check.json &&
	test "$(jq_ check.json 0.kind)" = slurm &&
	test "$(jq_ check.json 0.status)" = ok &&
	test "$(jq_ check.json 0.api_version)" = v0.0.38 &&
	test "$(jq_ check.json 0.partition.total_cpus)" = 8 &&
	test "$(jq_ check.json 0.nodes.0.name)" = node1 &&
	test "$(jq_ check.json 0.cpus_free)" = 8 &&
	test "$(jq_ check.json 0.token_source)" = SLURM_JWT &&
	no_token_in check.out check.err check.json
'

test_expect_success 'hosts check counts a busy node: CPUs in use by a job show' '
	jid=$(sbatch --parsable -p debug -c 3 -o /dev/null --wrap "sleep 60") &&
	wait_for 30 "squeue -h -j $jid -o %T | grep -q RUNNING" &&
	SLURM_JWT=$tok "$GPUORCH" hosts check --hosts hosts.json >busy.out &&
	scancel $jid &&
	grep "^    node  *node1: mixed, CPUs 3/8 used" busy.out
'

test_expect_success 'with no SLURM_JWT the token is minted on the login node over SSH' '
	(unset SLURM_JWT; "$GPUORCH" hosts check --hosts hosts.json --json) >mint.json 2>mint.err &&
	test "$(jq_ mint.json 0.status)" = ok &&
	test "$(jq_ mint.json 0.token_source)" = "scontrol token over SSH" &&
	ttl=$(jq_ mint.json 0.token_ttl_s) && test "$ttl" -gt 3500 && test "$ttl" -le 3600 &&
	grep "Accepted publickey for $(id -un)" "$(sshd_var login LOG)" &&
	no_token_in mint.json mint.err
'

test_expect_success 'a token file is read; one with no JWT in it is a clear error' '
	echo "SLURM_JWT=$tok" >tok.jwt &&
	cluster_json tf.json "$SLURM_REST_URL" ", \"token_file\": \"tok.jwt\"" &&
	(unset SLURM_JWT; "$GPUORCH" hosts check --hosts tf.json --json) >tf.out &&
	test "$(jq_ tf.out 0.token_source)" = token_file &&
	echo "not a token!" >tok.jwt &&
	(unset SLURM_JWT; test_expect_code 3 "$GPUORCH" hosts check --hosts tf.json) >tf2.out &&
	grep "error: token file .*tok.jwt. for cluster .hpc. holds no JWT" tf2.out
'

test_expect_success 'a bad token: a clear error that says how to get one, and the bad token is not echoed' '
	SLURM_JWT="${tok}x" test_expect_code 3 "$GPUORCH" hosts check --hosts hosts.json >bad.out 2>bad.err &&
	grep "error: slurmrestd $SLURM_REST_URL: GET /slurm/v0.0.38/ping: .*the token is probably invalid or expired (get one with .scontrol token. on the login node" bad.out &&
	no_token_in bad.out bad.err
'

test_expect_success 'an expired SLURM_JWT says it has expired' '
	old=$(slurm_token 1) && sleep 2 &&
	SLURM_JWT=$old test_expect_code 3 "$GPUORCH" hosts check --hosts hosts.json >exp.out &&
	grep "error: the token in SLURM_JWT has expired; get a new one with .scontrol token lifespan=N. on the login node, or unset SLURM_JWT" exp.out
'

test_expect_success 'an unknown partition is named' '
	sed "s/\"partition\": \"debug\"/\"partition\": \"nosuch\"/" hosts.json >np.json &&
	SLURM_JWT=$tok test_expect_code 3 "$GPUORCH" hosts check --hosts np.json >np.out &&
	grep "error: cluster .hpc.: partition .nosuch. does not exist on $SLURM_REST_URL; fix \"partition\"" np.out
'

test_expect_success 'a reply that is not JSON (not a slurmrestd) is a clear error' '
	rm -f port.txt req.txt &&
	{ "$HTTPSINK" port.txt req.txt 200 & } &&
	sink=$! &&
	wait_for 10 "test -s port.txt" &&
	cluster_json sink.json "http://127.0.0.1:$(cat port.txt)" &&
	SLURM_JWT=$tok test_expect_code 3 "$GPUORCH" hosts check --hosts sink.json >sink.out &&
	wait $sink &&
	grep "error: slurmrestd http://127.0.0.1:[0-9]*: GET /openapi: the reply is not JSON (HTTP 200, 3 bytes: .ok.); is \"url\" a slurmrestd?" sink.out &&
	grep "^GET /openapi HTTP/1.1" req.txt &&
	grep -i "^X-SLURM-USER-NAME: $(id -un)" req.txt
'

test_expect_success 'slurmrestd down: retried with backoff, then a clear error' '
	slurm_rest_stop &&
	start=$(test_now_ms) &&
	SLURM_JWT=$tok test_expect_code 3 "$GPUORCH" hosts check --hosts hosts.json >down.out &&
	el=$(test_elapsed_ms $start) &&
	slurm_rest_start &&
	grep "error: slurmrestd $SLURM_REST_URL: GET /openapi: .*([0-9]* tries in [0-9]* s); is slurmrestd running" down.out &&
	test "$el" -ge 2500
'

test_expect_success 'a daemon serving only an API gpuorch does not speak: the error names what it offers' '
	slurm_rest_stop &&
	SLURM_REST_PLUGINS=openapi/v0.0.37 slurm_rest_start &&
	SLURM_JWT=$tok test_expect_code 3 "$GPUORCH" hosts check --hosts hosts.json >ver.out &&
	slurm_rest_stop && slurm_rest_start &&
	grep "error: slurmrestd $SLURM_REST_URL serves Slurm API v0.0.37; gpuorch speaks v0.0.44, v0.0.43, v0.0.42, v0.0.41, v0.0.40, v0.0.39, v0.0.38 (start slurmrestd with -s openapi/vX for one its Slurm release serves: v0.0.38 is Slurm 22.05'"'"'s, v0.0.39 23.02'"'"'s, v0.0.40 23.11'"'"'s" ver.out
'

test_expect_success 'unix:/ socket: local auth, no token' '
	slurm_rest_start_unix "$SLURM_DIR/rest.sock" &&
	cluster_json ux.json "unix:$SLURM_DIR/rest.sock" &&
	(unset SLURM_JWT; "$GPUORCH" hosts check --hosts ux.json --json) >ux.out &&
	test "$(jq_ ux.out 0.status)" = ok &&
	test "$(jq_ ux.out 0.token_source)" = "unix socket (local auth)" &&
	test "$(jq_ ux.out 0.api_version)" = v0.0.38
'

test_done
