#!/bin/sh
# cost: 30
# timeout: 900
# asan: yes
test_description='summaries from the lean load of run.json (libyajl, samples as blocks) are byte for byte those of the full cJSON parse (GPUORCH_LEAN=0)'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/runlib.sh"

# both STORE: summarize and list STORE-full with the full parse, STORE-lean
# with the lean one (the stores are copies: the same bytes and mtimes)
both() {
	rm -rf "$1-full" "$1-lean" &&
	cp -a "$1" "$1-full" && cp -a "$1" "$1-lean" &&
	GPUORCH_LEAN=0 "$GPUORCH" summarize --reports "$1-full" >"$1-full.sum" 2>&1 &&
	"$GPUORCH" summarize --reports "$1-lean" >"$1-lean.sum" 2>&1 &&
	sed "s|$1-full|STORE|g" "$1-full.sum" >"$1-full.sum1" &&
	sed "s|$1-lean|STORE|g" "$1-lean.sum" >"$1-lean.sum1" &&
	diff -u "$1-full.sum1" "$1-lean.sum1" &&
	diff -r "$1-full" "$1-lean" &&
	"$GPUORCH" runs --reports "$1-full" --limit 1000 --json >"$1-full.json" &&
	"$GPUORCH" runs --reports "$1-lean" --limit 1000 --json >"$1-lean.json" &&
	sed "s|$1-full|STORE|g" "$1-full.json" >"$1-full.json1" &&
	sed "s|$1-lean|STORE|g" "$1-lean.json" >"$1-lean.json1" &&
	cmp "$1-full.json1" "$1-lean.json1"
}

test_expect_success 'setup: the fixture runs (trimmed committed runs), without their summaries' '
	fixture_runs c &&
	find c -name summary.json -exec rm {} + &&
	find c -name samples.txt -exec rm {} + &&
	test "$(find c -name run.json | wc -l)" -ge 10 &&
	grep -l "\"samples_us\"" c/*/*/run.json >with-blocks &&
	test -s with-blocks
'

test_expect_success 'every committed run without a summary: the same summary.json, samples.txt and runs --json' '
	both c &&
	test "$(find c-lean -name summary.json | wc -l)" = "$(find c -name run.json | wc -l)"
'

test_expect_success 'without a summary but with a stale samples.txt (another run'"'"'s), and with a stale summary: rebuilt the same' '
	rm -rf s && cp -a c s &&
	one=$(head -n 1 with-blocks) && one=${one#c/} && one=s/${one%/run.json} &&
	two=$(ls -d s/*/*/ | grep -v "$one" | head -n 1) &&
	"$GPUORCH" summarize --reports s >/dev/null &&
	cp "$two/samples.txt" "$one/samples.txt" && rm "$one/summary.json" &&
	: "a sample changed after the summary of another run with blocks" &&
	three=$(sed -n 2p with-blocks) && three=s/${three#c/} && three=${three%/run.json} &&
	sed "0,/\"samples_us\":\([[:space:]]*\)\[[0-9]/s//\"samples_us\":\1[9/" "$three/run.json" >r.tmp &&
	! cmp -s r.tmp "$three/run.json" && cat r.tmp >"$three/run.json" &&
	both s &&
	python3 "$SRCDIR/tests/lib/samples.py" s-lean/$(echo "$three" | cut -d/ -f2-)/samples.txt >three.txt &&
	grep -q "^9\| 9" three.txt
'

# edit.awk: the first three samples_us arrays become [], [2.5] and tied
# samples with numbers past 15 digits; the first gpu_name a string of escapes
# and non-ASCII characters
cat >edit.awk <<\EOF
/"samples_us":/ && k < 3 {
	k++
	v = k == 1 ? "[]" : k == 2 ? "[2.5]" : "[3, 1, 2, 2, 1e-3, 12345678901234567, 2, 0.30000000000000004]"
	sub(/\[.*\]/, v)
}
/"gpu_name":/ && !g {
	g = 1
	sub(/:[ \t]*"[^"]*"/, ": \"H100 na\\\\u00efve \\\\\"q\\\\\" \\\\\\\\ \\\\t \\\\/ – € \\\\u20ac\"")
}
{ print }
EOF

test_expect_success 'non-ASCII and escaped strings, 0 / 1 / tied samples, numbers strtod reads past 15 digits: the same' '
	src=$(head -n 1 with-blocks) && dir=e/${src#c/} && dir=${dir%/run.json} &&
	mkdir -p "$dir" && awk -f edit.awk "$src" >"$dir/run.json" &&
	grep -c "\"samples_us\":[[:space:]]*\[\]" "$dir/run.json" &&
	grep "gpu_name" "$dir/run.json" | head -n 1 &&
	both e &&
	cut -c1-80 e-lean/*/*/samples.txt | head -n 2 &&
	test "$(sed -n 1p e-lean/*/*/samples.txt)" = 2.5 &&
	test "$(sed -n 2p e-lean/*/*/samples.txt)" = "0.001 0.30000000000000004 1 2 2 2 3 12345678901234568" &&
	grep "H100 na" e-lean/*/*/summary.json
'

test_expect_success 'a cut run.json: skipped with a warning naming the file (both ways), the other runs listed' '
	rm -rf t && cp -a c t &&
	cut=$(head -n 1 with-blocks) && cut=t/${cut#c/} &&
	: "cut in the middle (the fixture records are small: tests/tools/shrink-fixtures.sh)" &&
	half=$(($(wc -c <"$cut") / 2)) && test "$half" -gt 1000 &&
	head -c "$half" "$cut" >r.tmp && cat r.tmp >"$cut" &&
	"$GPUORCH" runs --reports t --limit 1000 >t.out 2>t.err &&
	cat t.err &&
	grep "skipping run .*$cut:[0-9]*:[0-9]*: invalid JSON" t.err &&
	test "$(grep -c "^[0-9]\{8\}-" t.out)" = $(($(find c -name run.json | wc -l) - 1)) &&
	rm -rf t && cp -a c t &&
	cat r.tmp >"$cut" &&
	GPUORCH_LEAN=0 "$GPUORCH" runs --reports t --limit 1000 >t0.out 2>t0.err &&
	diff -u t0.err t.err &&
	rm -rf t
'

test_done
