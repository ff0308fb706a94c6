#!/bin/sh
# cost: 30
test_description='report.md: names and free text from a record never become HTML, a link or an image (cmark)'
# Issue 31 item 11. Every string of a record may be a user's (program and
# problem names, the spec's phase and description) or a program's (tools'
# messages): the report writes names in code spans whose fence no backtick
# in the name can close, and free text escaped (report/report-format.c).
# The test renders the report of records whose every string carries a
# hostile payload with a real CommonMark renderer, cmark (--unsafe: raw HTML
# passes, as in markdown-it with html on), and checks the HTML
# (tests/lib/mdcheck.py). On the code before the fix (70a5877) the HTML
# held <img onerror> and a remote image hundreds of times.
. "$(dirname "$0")/lib/testlib.sh"
GPUORCH_RECORDS_UNCHECKED='its records are made hostile on purpose (names that are markup, statuses that are not)'
. "$SRCDIR/tests/lib/runlib.sh"

MDCHECK="python3 $SRCDIR/tests/lib/mdcheck.py"

if ! command -v cmark >/dev/null 2>&1; then
	test_skip 'hostile names in reports' 'no cmark here (apt-get install cmark; scripts/deps.sh --tests)'
	test_done
fi

# render_check MODE SRC...: the reports of the run.json files SRC, poisoned
# (MODE), rendered by cmark; fails listing any markup a report must not hold
# shellcheck disable=SC2046 # one file name per id, split on purpose
render_check() {
	_m=$1 && shift && _args= && _ids= &&
	for _src in "$@"; do
		_id=20990101-000000-$(printf %s "$_src$_m" | sha256sum | cut -c1-6) &&
		mkdir -p hostile/x/$_id &&
		_args="$_args $_src hostile/x/$_id/run.json" && _ids="$_ids $_id" || return 1
	done &&
	$MDCHECK poison $_m $_args &&
	for _id in $_ids; do
		"$GPUORCH" report $_id --reports hostile --stdout >$_id.md &&
		grep -q "evil.example" $_id.md &&
		cmark --unsafe $_id.md >$_id.html || return 1
	done &&
	(cd hostile/.. && $MDCHECK html $(for _id in $_ids; do echo $_id.html; done))
}

F=$SRCDIR/tests/fixtures/runs
test_expect_success 'the hand-made records, every string hostile' '
	render_check all $F/pass-2host.json $F/failed-host.json $F/incomplete.json $F/wrong-types.json &&
	render_check names $F/pass-2host.json $F/failed-host.json $F/incomplete.json $F/wrong-types.json
'

# runs of the repository that between them reach every section: gates,
# sweeps, profiles, sanitizers, alerts (spills), kernel timings, a cloud
# instance, Slurm jobs
R=$SRCDIR/tests/fixtures/reports
test_expect_success 'committed runs of every kind, their names and texts hostile' '
	render_check names $R/gemm-wgmma/20261127-224959-f0aed9/run.json \
		$R/attention-mma/20261123-212031-a14f67/run.json \
		$R/attention-tools/20261122-080919-e482d1/run.json \
		$R/cloud-moto/20261124-010435-e42387/run.json \
		$R/slurm-gpu-tools/20261127-234049-4fddef/run.json \
		$R/sanitizer-selftest/20261122-081102-da4490/run.json \
		$R/ktrace-demo/20261128-001233-2c7c3d/run.json \
		$R/llmc-dev-cuda/20261123-212439-39ab5f/run.json
'

test_expect_success 'the checker itself sees an image, a handler and a remote load' '
	printf "%s\n\n" "<img src=x onerror=alert(1)>" "![t](http://evil.example/t.png)" >bad.md &&
	cmark --unsafe bad.md >bad.html &&
	test_expect_code 1 $MDCHECK html bad.html >bad.out &&
	grep "bad.html: attribute onerror on <img>" bad.out &&
	grep "bad.html: src=http://evil.example/t.png on <img>" bad.out
'

test_done
