#!/bin/sh
# asan: yes
test_description='tests/tools/fixtrim, which tests/tools/shrink-fixtures.sh makes the fixtures with: packed samples read back the same in gpuorch, a sample that would not is refused, a record it leaves alone keeps its bytes, --headline keeps the figure history reads'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/runlib.sh"

# the ASan pass runs the ASan build of the tool too
case "$GPUORCH" in
*/asan/*) FIXTRIM=$SRCDIR/build/asan/tests/fixtrim ;;
*) FIXTRIM=$SRCDIR/build/tests/fixtrim ;;
esac

test_expect_success 'setup: the fixture runs, some with plain samples_us arrays' '
	fixture_runs plain &&
	grep -l "\"samples_us\"" plain/*/*/run.json >with-arrays &&
	test "$(wc -l <with-arrays)" -ge 3
'

test_expect_success 'a record fixtrim leaves alone (--plain) is written back byte for byte' '
	cp -R plain same && "$FIXTRIM" --plain same/*/*/run.json >same.out &&
	test "$(grep -c " 0 steps, 0 trials and 0 builds dropped" same.out)" = "$(ls same/*/*/run.json | wc -l)" &&
	for f in plain/*/*/run.json; do cmp "$f" "same/${f#plain/}" || return 1; done
'

test_expect_success 'packed: no samples_us left, and gpuorch reads every sample the same (samples.txt)' '
	cp -R plain packed &&
	"$FIXTRIM" $(sed "s|^plain/|packed/|" with-arrays) >packed.out &&
	cat packed.out &&
	test "$(grep -c "samples_us arrays packed (.*, each read back the same)" packed.out)" = "$(wc -l <with-arrays)" &&
	! grep -l "\"samples_us\"" packed/*/*/run.json &&
	find plain packed \( -name summary.json -o -name samples.txt \) -exec rm {} + &&
	"$GPUORCH" summarize --reports plain >/dev/null && "$GPUORCH" summarize --reports packed >/dev/null &&
	for f in $(sed "s|/run.json\$|/samples.txt|" with-arrays); do
		test -s "$f" && cmp "$f" "packed/${f#plain/}" || return 1
	done
'

test_expect_success 'a sample that is not a whole nanosecond: refused, naming the step and the sample; the file left as it was' '
	src=$(head -n 1 with-arrays) && mkdir -p odd &&
	sed "0,/\"samples_us\":\([[:space:]]*\)\[[0-9.]*/s//\"samples_us\":\1[1.0005/" "$src" >odd/run.json &&
	! cmp -s "$src" odd/run.json && cp odd/run.json odd.before &&
	test_expect_code 1 "$FIXTRIM" odd/run.json 2>odd.err &&
	cat odd.err &&
	grep "^error: odd/run.json: step .benchmark\.[^ ]*.: sample 1 of [0-9]* does not read back the same once packed: 1.0004999999999999, packed 1.0009999999999999" odd.err &&
	grep "refused, the file is left as it was\$" odd.err &&
	cmp odd/run.json odd.before
'

test_expect_success '--headline keeps the step history reads (the figure of the runs headline); --builds drops the builds of variants no step left uses' '
	id=20261127-224959-f0aed9 && mkdir -p one/gemm-wgmma && cp -R plain/gemm-wgmma/$id one/gemm-wgmma/ &&
	one=one/gemm-wgmma/$id && rm -f $one/summary.json $one/samples.txt &&
	test "$(jq_ $one/run.json hosts.0.steps --len)" -ge 2 &&
	nb=$(jq_ $one/run.json hosts.0.builds --len) &&
	"$FIXTRIM" --headline --builds $one/run.json >one.out && cat one.out &&
	test "$(jq_ $one/run.json hosts.0.steps --len)" = 1 &&
	test "$(jq_ $one/run.json hosts.0.steps.0.id)" = benchmark.gemm_wgmma.M8192-N8192-K8192 &&
	left=$(jq_ $one/run.json hosts.0.builds --len) && test "$left" -ge 1 && test "$left" -lt "$nb" &&
	grep " $((nb - left)) builds dropped" one.out &&
	k=0 && while test $k -lt "$left"; do
		{ ! jq_ $one/run.json hosts.0.builds.$k.variant 2>/dev/null ||
		  test "$(jq_ $one/run.json hosts.0.builds.$k.variant)" = null; } || return 1
		k=$((k + 1))
	done &&
	"$GPUORCH" runs --reports plain --limit 1000 --json >before.json &&
	"$GPUORCH" runs --reports one --json >after.json &&
	i=0 && while test "$(jq_ before.json $i.run_id)" != $id; do i=$((i + 1)) && test $i -lt 1000 || return 1; done &&
	hb=$(jq_ before.json $i.headline) && ha=$(jq_ after.json 0.headline) &&
	echo "$hb" && echo "$ha" &&
	: "the same figure; the comparisons with steps dropped (a baseline, expectations) are gone" &&
	case "$hb" in "${ha%% \[*}, "*) ;; *) false ;; esac &&
	case "$ha" in "h100: gemm_wgmma M8192-N8192-K8192 "*" us, "*" TFLOPS ["*) ;; *) false ;; esac
'

test_expect_success 'fixtrim --max KIND=0 drops those steps and still counts the others (40 sweep steps dropped, then correctness=1 keeps one of three)' '
	python3 - <<-\PY &&
	import json
	steps = [{"id": "s%d" % i, "kind": "sweep", "status": "PASS"} for i in range(40)]
	steps += [{"id": "c%d" % i, "kind": "correctness", "status": "PASS"} for i in range(3)]
	json.dump({"run_id": "20260101-000000-aaaaaa", "hosts": [{"name": "h", "steps": steps}]},
	          open("many.json", "w"), indent=1)
	PY
	"$FIXTRIM" --plain --max sweep=0 --max correctness=1 many.json &&
	jq -r ".hosts[0].steps[].id" many.json >kept &&
	echo c0 >want && test_cmp want kept
'

test_expect_success 'bad arguments: usage, exit 2' '
	test_expect_code 2 "$FIXTRIM" --max sweep x.json 2>e1 && grep "usage: fixtrim" e1 &&
	test_expect_code 2 "$FIXTRIM" --trials two x.json 2>e2 && grep "expected a count" e2 &&
	test_expect_code 2 "$FIXTRIM" 2>e3 && grep "no run.json named" e3 &&
	test_expect_code 1 "$FIXTRIM" nosuch.json 2>e4 && grep "nosuch.json: No such file" e4
'

test_done
