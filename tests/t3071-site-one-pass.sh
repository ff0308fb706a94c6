#!/bin/sh
# cost: 60
# timeout: 300
# asan: yes
test_description='gpuorch site reads the store once (--trace counts the summary loads): with --every-figure one load a run, not one a run and page; samples only for the points drawn; history reads each summary once'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/runlib.sh"

# points_stored FILE...: the run id of each point with stored samples, one a
# line, of the history data files (gpuorchData(JSON);) or --json outputs
points_stored() {
	for _f in "$@"; do
		sed -e "s/^gpuorchData(//" -e "s/);\$//" "$_f" |
		jq -r ".points[] | select(.nsamples_stored > 0) | .run_id" || return 1
	done
}

# trace_of NAME FILE: the detail (the run's folder) of each NAME span, sorted
trace_of() {
	jq -r "select(.name == \"$1\") | .args.detail" "$2" | sort
}

test_expect_success 'setup: the fixture store (runs of 14 experiments)' '
	fixture_runs reports &&
	ls -d reports/*/*/ | sed "s|/\$||" | sort >rundirs &&
	test $(wc -l <rundirs) -ge 25 &&
	ls reports | wc -l >nexp && test $(cat nexp) -ge 10
'

test_expect_success 'site --every-figure loads each summary once, however many history pages' '
	"$GPUORCH" site --reports reports --root "$SRCDIR" --every-figure --out site \
		--trace trace.jsonl >out &&
	grep "^site: $(wc -l <rundirs) runs" out &&
	ls site/history/*.html >pages &&
	: "the pages: several a run folder would cost several loads each, if a page read the store" &&
	test $(wc -l <pages) -ge $((3 * $(cat nexp))) &&
	trace_of load trace.jsonl >loaded &&
	test_cmp rundirs loaded &&
	jq -e -s "all(.[] | select(.name == \"load\"); .args.status == \"ok\" and .ph == \"X\")" trace.jsonl
'

test_expect_success 'site reads samples only for the points it draws, each once a page' '
	points_stored site/data/history-*.js | sort >drawn &&
	test -s drawn &&
	jq -r "select(.name == \"samples\") | .args.detail" trace.jsonl |
		sed "s|.*/||" | sort >read &&
	test_cmp drawn read
'

test_expect_success 'the default site loads each summary once too' '
	"$GPUORCH" site --reports reports --root "$SRCDIR" --out site2 --trace trace2.jsonl >out &&
	trace_of load trace2.jsonl >loaded2 &&
	test_cmp rundirs loaded2
'

test_expect_success 'a page per figure has the points history --program --problem (--figure) --json gives' '
	n=0 && named=0 &&
	for d in site/data/history-*--*.js; do
		stem=$(basename "$d" .js) && stem=${stem#history-} && slug=${stem%--*} &&
		sed -e "s/^gpuorchData(//" -e "s/);\$//" "$d" >page.json &&
		: "a named figure'"'"'s page: its data says which is better" &&
		if jq -e "has(\"better\")" page.json >/dev/null; then
			set -- --figure "$(jq -r .metric page.json)" && named=$((named + 1))
		else
			set --
		fi &&
		"$GPUORCH" history --reports reports --root "$SRCDIR" "$slug" --json "$@" \
			--program "$(jq -r .program page.json)" --problem "$(jq -r .problem page.json)" \
			>hist.json 2>hist.err
		rc=$? && test $rc -le 1 || { cat hist.err; return 1; }
		jq -S "[.points[] | del(.key)]" page.json >a &&
		jq -S "[.points[]]" hist.json >b &&
		test_cmp b a &&
		jq -S ".runs_without_figure | map(del(.key))" page.json >a &&
		jq -S ".runs_without_figure" hist.json >b &&
		test_cmp b a || return 1
		n=$((n + 1))
	done &&
	test $n -ge 10 && test $named -ge 5
'

test_expect_success 'history loads each summary of the store once, and samples for its points' '
	"$GPUORCH" history --reports reports --root "$SRCDIR" attention-wgmma --json \
		--trace htrace.jsonl >h.json &&
	trace_of load htrace.jsonl >hloaded &&
	test_cmp rundirs hloaded &&
	points_stored h.json | sort >hdrawn && test -s hdrawn &&
	jq -r "select(.name == \"samples\") | .args.detail" htrace.jsonl | sed "s|.*/||" | sort >hread &&
	test_cmp hdrawn hread
'

test_expect_success 'a summary whose samples_at is an object of two members: its point has no stored samples (not read as an offset pair)' '
	rm -rf objat && mkdir -p objat && cp -R reports/attention-wgmma objat/ &&
	find objat -name run.json -exec rm {} + &&
	r=$(ls -d objat/attention-wgmma/*/ | head -n 1) && r=${r%/} &&
	python3 - "$r/summary.json" <<-\PY &&
	import json, sys
	s = json.load(open(sys.argv[1]))
	for h in s["hosts"]:
	    for st in h.get("steps", []):
	        t = st.get("result", {}).get("timing", {})
	        if "samples_at" in t:
	            t["samples_at"] = {"a": t["samples_at"][0], "b": t["samples_at"][1]}
	json.dump(s, open(sys.argv[1], "w"), indent="\t")
	PY
	"$GPUORCH" history attention-wgmma --reports objat --json >objat.json &&
	id=$(basename "$r") &&
	jq ".points[] | select(.run_id == \"$id\") | .nsamples_stored" objat.json >stored &&
	test -s stored && ! grep -v "^0\$" stored
'

test_expect_success 'site --trace to a file that cannot be written: exit 2, no site' '
	test_expect_code 2 "$GPUORCH" site --reports reports --out site3 \
		--trace nodir/trace.jsonl 2>err &&
	grep "nodir/trace.jsonl" err && test ! -e site3
'

test_done
