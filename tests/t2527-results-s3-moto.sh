#!/bin/sh
# asan: yes
test_description='the results store in an S3 bucket, against moto'"'"'s S3 on loopback: push and pull byte-identical, a second push sends nothing, two clones sharing one bucket, a corrupt object, a raw record fetched on demand, a missing bucket'
# moto_server (Python moto) answers S3 path-style on 127.0.0.1 (it does not
# check signatures); the requests it logs (werkzeug) show what was sent.
. "$(dirname "$0")/lib/testlib.sh"
GPUORCH_RECORDS_UNCHECKED='its runs are made from tests/fixtures/runs records, older than the schema (no host start and end times)'
. "$SRCDIR/tests/lib/runlib.sh"

if ! command -v moto_server >/dev/null 2>&1 || ! command -v curl >/dev/null 2>&1; then
	test_skip 'moto S3 tests' 'moto_server (Python moto) or curl is not installed'
	test_done
fi
F=$SRCDIR/tests/fixtures/runs
R1=20261122-051000-a1b2c3
R2=20261122-061500-d4e5f6
EXP=attention-wmma
AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing-secret-7f3a AWS_REGION=us-east-1
export AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_REGION
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_SHARED_CREDENTIALS_FILE AWS_DEFAULT_REGION
GPUORCH_RESULTS_STORE=s3://gpuorch-team/results
export GPUORCH_RESULTS_STORE

# s3 METHOD PATH [curl args]: a signed request to moto
s3() {
	_m=$1 _p=$2
	shift 2
	curl -s --aws-sigv4 aws:amz:us-east-1:s3 --user testing:testing-secret-7f3a -X "$_m" \
		"http://127.0.0.1:$MOTO_PORT/$_p" "$@"
}
# keys PREFIX: the bucket's keys under PREFIX, one a line
keys() {
	s3 GET "gpuorch-team?list-type=2&prefix=$1" | tr "<" "\n" | sed -n "s/^Key>//p"
}
puts() {
	grep -c "\"PUT /gpuorch-team/" moto.log
}

# fixture_clone DIR RECORD RUN-ID (as t3060's)
fixture_clone() {
	d=$1/$EXP/$3 &&
	mkdir -p $d/logs/h100 &&
	cp "$F/$2" $d/run.json &&
	awk "BEGIN { for (i = 0; i < 20000; i++) print \"step\", i, \"median_us\", i % 97 }" >$d/logs/h100/bench.stdout &&
	head -c 150000 /dev/urandom >$d/logs/h100/kernel.ncu-rep &&
	: >$d/logs/h100/empty.stderr &&
	printf "#!/bin/sh\necho hi\n" >$d/logs/rerun.sh && chmod 755 $d/logs/rerun.sh &&
	"$GPUORCH" runs --reports $1 >/dev/null &&
	"$GPUORCH" report --reports $1 $3 >/dev/null
}

same_tree() {
	diff -r "$1" "$2" &&
	(cd "$1" && find . -type f -exec stat -c "%n %a %s" {} + | sort) >tree-a &&
	(cd "$2" && find . -type f -exec stat -c "%n %a %s" {} + | sort) >tree-b &&
	test_cmp tree-a tree-b
}

test_expect_success 'setup: moto on a free port, a bucket, clones a (run 1) and b (run 2)' '
	MOTO_PORT=$(python3 -c "import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])") &&
	{ moto_server -H 127.0.0.1 -p $MOTO_PORT >moto.log 2>&1 & } && mpid=$! &&
	test_at_exit "kill $mpid" &&
	wait_for 120 "s3 PUT gpuorch-team -o /dev/null -w %{http_code} | grep -q 200" &&
	GPUORCH_RESULTS_S3_ENDPOINT=http://127.0.0.1:$MOTO_PORT && export GPUORCH_RESULTS_S3_ENDPOINT &&
	fixture_clone a pass-2host.json $R1 && fixture_clone b failed-host.json $R2 &&
	cp -R a pristine-a
'

test_expect_success 'push puts the objects and the manifest in the bucket; pull brings the run back byte-identical' '
	"$GPUORCH" push --reports a $R1 >push1.out && cat push1.out &&
	test_grep "pushed 1 run to s3://gpuorch-team/results" push1.out &&
	keys results/runs/ >runs.keys && test "$(cat runs.keys)" = "results/runs/$R1/$EXP.json" &&
	h=$(sha256sum a/$EXP/$R1/logs/h100/kernel.ncu-rep | cut -d" " -f1) &&
	keys results/objects/ | grep -x "results/objects/$(echo $h | cut -c1-2)/$h" &&
	test "$(keys results/objects/ | wc -l)" = "$(find a/$EXP/$R1 -type f -exec sha256sum {} + | cut -d" " -f1 | sort -u | wc -l)" &&
	"$GPUORCH" pull --reports c $R1 >pull.out && cat pull.out &&
	same_tree a/$EXP/$R1 c/$EXP/$R1
'

test_expect_success 'a second push sends no object and no manifest' '
	before=$(puts) &&
	"$GPUORCH" push --reports a --all >push2.out && cat push2.out &&
	test_grep "0 new objects (0 bytes), the store had it" push2.out &&
	test "$(puts)" = "$before"
'

test_expect_success 'two clones sharing one bucket see each other'"'"'s runs after pull' '
	"$GPUORCH" push --reports b --all &&
	"$GPUORCH" pull --reports a $R2 && "$GPUORCH" pull --reports b $R1 &&
	"$GPUORCH" runs --reports a >runs-a.out && "$GPUORCH" runs --reports b >runs-b.out &&
	for f in runs-a.out runs-b.out; do test_grep "^$R1 " $f && test_grep "^$R2 " $f || return 1; done &&
	same_tree a/$EXP b/$EXP
'

test_expect_success 'a report in a clone with only summaries fetches its raw record from the bucket' '
	mkdir -p thin && cp -R pristine-a/$EXP thin/ && (cd thin/$EXP/$R1 && rm -rf run.json logs) &&
	"$GPUORCH" runs --reports thin >thin-runs.out && test_grep "^$R1 " thin-runs.out &&
	test ! -e thin/$EXP/$R1/run.json &&
	"$GPUORCH" report --reports thin $R1 >/dev/null 2>thin.err && cat thin.err &&
	test_grep "fetched run $R1.s raw record from the results store s3://gpuorch-team/results" thin.err &&
	same_tree pristine-a/$EXP/$R1 thin/$EXP/$R1
'

test_expect_success 'a corrupt object in the bucket is found by its hash; nothing of it is written' '
	l=$(sha256sum a/$EXP/$R1/logs/h100/bench.stdout | cut -d" " -f1) &&
	s3 PUT gpuorch-team/results/objects/$(echo $l | cut -c1-2)/$l -H "Content-Type: application/octet-stream" --data-binary "not the log" -o /dev/null &&
	test_must_fail "$GPUORCH" pull --reports d $R1 >corrupt.out 2>&1 && cat corrupt.out &&
	test_grep "object $l in the results store s3://gpuorch-team/results is corrupt" corrupt.out &&
	test ! -e d/$EXP/$R1/logs/h100/bench.stdout
'

test_expect_success 'a bucket that is not there, and a run that is not in the bucket: clear errors' '
	test_must_fail env GPUORCH_RESULTS_STORE=s3://no-such-bucket "$GPUORCH" push --reports a $R1 >nob.out 2>&1 &&
	cat nob.out && test_grep "results store s3://no-such-bucket: .*NoSuchBucket.*create the bucket first" nob.out &&
	test_expect_code 2 "$GPUORCH" pull --reports e 20990101-000000-ffffff >nope.out 2>&1 &&
	test_grep "run 20990101-000000-ffffff is not in the results store s3://gpuorch-team/results" nope.out &&
	test_expect_code 2 env GPUORCH_RESULTS_STORE=s3://Bad_Bucket "$GPUORCH" pull --reports e $R1 >bad.out 2>&1 &&
	test_grep "the bucket name is not" bad.out
'

test_done
