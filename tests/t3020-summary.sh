#!/bin/sh
# cost: 120
# timeout: 1800
# asan: yes
test_description='the per-run summary: written by a real run, read by runs and history, fallen back from'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'summary tests'

test_expect_success 'setup: one host, a project, two runs' '
	sshd_start a && sshd_write_hosts_json hosts.json a && project_init &&
	(cd proj && "$GPUORCH" run experiments/basic.json --hosts ../hosts.json) >run1.out 2>&1 &&
	(cd proj && "$GPUORCH" run experiments/basic.json --hosts ../hosts.json) >run2.out 2>&1 &&
	test $(ls -d reports/*/*/ | wc -l) = 2 &&
	: "both runs measured the figures the tests below read (else say what the runs printed)" &&
	for d in reports/*/*/; do
		test "$(jq_ $d/run.json outcome)" = passed &&
		grep -q "\"samples_n\":[[:space:]]*[1-9]" $d/summary.json ||
		{ cat run1.out run2.out; return 1; }
	done
'

test_expect_success 'a run writes summary.json and samples.txt beside run.json' '
	run=$(last_run_dir) &&
	test -f $run/summary.json && test -s $run/samples.txt &&
	test "$(jq_ $run/summary.json schema)" = gpuorch.summary/5 &&
	test "$(jq_ $run/summary.json run_id)" = "$(jq_ $run/run.json run_id)" &&
	test "$(jq_ $run/summary.json outcome)" = "$(jq_ $run/run.json outcome)" &&
	test "$(jq_ $run/summary.json of.size)" = "$(wc -c <$run/run.json | tr -d " ")" &&
	n=$(grep -o "\"samples_n\":[[:space:]]*[0-9]*" $run/summary.json | head -1 | grep -o "[0-9]*\$") &&
	test "$n" -ge 2 &&
	python3 "$SRCDIR/tests/lib/samples.py" $run/samples.txt >decoded.txt &&
	test "$n" = "$(sed -n 1p decoded.txt | wc -w | tr -d " ")"
'

test_expect_success 'run.json stores every sample, packed (timing.samples), and the summary says all were kept' '
	run=$(last_run_dir) &&
	! grep "\"samples_us\"" $run/run.json &&
	grep "\"encoding\":[[:space:]]*\"ns-delta-zigzag-varint/zlib/base64\"" $run/run.json &&
	i=0 && while test "$(jq_ $run/run.json hosts.0.steps.$i.kind)" != benchmark; do
		i=$((i + 1)) && test $i -lt 20 || return 1
	done &&
	total=$(jq_ $run/run.json hosts.0.steps.$i.result.timing.n) &&
	test "$(jq_ $run/run.json hosts.0.steps.$i.result.timing.samples.n)" = "$total" &&
	j=0 && while test "$(jq_ $run/summary.json hosts.0.steps.$j.kind)" != benchmark; do
		j=$((j + 1)) && test $j -lt 20 || return 1
	done &&
	test "$(jq_ $run/summary.json hosts.0.steps.$j.result.timing.samples_n)" = "$total" &&
	test "$(jq_ $run/summary.json hosts.0.steps.$j.result.timing.n)" = "$total"
'

# hist ARGS: gpuorch history in proj; its exit 1 (the newest run is a
# regression: these runs time a CPU loop on a loaded machine) is a verdict,
# not a failure of the listing these tests compare
hist() {
	(cd proj && "$GPUORCH" history "$@")
	_rc=$?
	[ $_rc -le 1 ] || { echo "gpuorch history $* exited $_rc" >&2; return 1; }
}

test_expect_success 'runs and history print the same from summaries as from run.json' '
	exp=$(jq_ $(last_run_dir)/run.json experiment.name) &&
	"$GPUORCH" runs >runs.sum &&
	hist "$exp" --reports ../reports >hist.sum &&
	# a directory where summary.json would go: it cannot be written, so
	# the listing comes from run.json in memory (samples inline)
	mkdir -p keep && for d in reports/*/*/; do
		mv $d/summary.json keep/$(basename $d).json && mkdir $d/summary.json || return 1
	done &&
	"$GPUORCH" runs >runs.full &&
	hist "$exp" --reports ../reports >hist.full &&
	diff -u runs.full runs.sum &&
	diff -u hist.full hist.sum &&
	{ grep "n=[0-9]" hist.sum || { echo "history printed no sample count:"; cat hist.sum; false; }; } &&
	for d in reports/*/*/; do
		test -d $d/summary.json && rmdir $d/summary.json &&
		mv keep/$(basename $d).json $d/summary.json || return 1
	done
'

test_expect_success 'a run without a summary gets one the first time it is listed; the next listing reads it' '
	run=$(last_run_dir) &&
	"$GPUORCH" runs >before.out &&
	rm $run/summary.json $run/samples.txt &&
	"$GPUORCH" runs >first.out &&
	test -f $run/summary.json && test -f $run/samples.txt &&
	test "$(jq_ $run/summary.json schema)" = gpuorch.summary/5 &&
	test "$(jq_ $run/summary.json of.size)" = "$(wc -c <$run/run.json | tr -d " ")" &&
	"$GPUORCH" runs >again.out &&
	diff -u before.out first.out && diff -u before.out again.out
'

# summaries are written without fsync (a cache of run.json): after a power
# loss samples.txt may be there but empty; its size in the summary's "of"
# makes the pair stale, so it is rebuilt rather than read as no samples
test_expect_success 'a summary whose samples.txt was emptied (a power loss) is rebuilt from run.json' '
	exp=$(jq_ $(last_run_dir)/run.json experiment.name) &&
	run=$(last_run_dir) &&
	hist "$exp" --reports ../reports >hist.kept &&
	cp $run/samples.txt samples.kept && test -s samples.kept &&
	test "$(jq_ $run/summary.json of.samples_size)" = "$(wc -c <samples.kept | tr -d " ")" &&
	: >$run/samples.txt &&
	hist "$exp" --reports ../reports >hist.rebuilt &&
	cmp samples.kept $run/samples.txt &&
	diff -u hist.kept hist.rebuilt
'

# limited ARGS: gpuorch in at most $LIMIT_KB (default 120,000) KiB of address space (not under ASan,
# which reserves terabytes of shadow: there the listing still runs)
# shellcheck disable=SC3045 # ulimit -v: dash and bash have it
limited() {
	case "$GPUORCH" in
	*/asan/*) "$GPUORCH" "$@" ;;
	*) (ulimit -v "${LIMIT_KB:-120000}" && exec "$GPUORCH" "$@") ;;
	esac
}

# rss_under KB ARGS: gpuorch ARGS, then its peak resident memory (GNU time)
# is at most KB KiB; the threads of a parallel pass reserve 64 MiB of address
# space each for malloc (glibc's arenas), so resident memory is what says how
# much a parallel listing holds (no check under ASan, or without GNU time)
rss_under() {
	lim=$1 && shift &&
	case "$GPUORCH" in
	*/asan/*) "$GPUORCH" "$@" ;;
	*) if test -x /usr/bin/time; then
		/usr/bin/time -f %M -o rss.kb "$GPUORCH" "$@" &&
		echo "peak RSS $(cat rss.kb) KiB (at most $lim)" >&2 &&
		test "$(cat rss.kb)" -le "$lim"
	   else
		echo "no /usr/bin/time: peak RSS not checked" >&2 && "$GPUORCH" "$@"
	   fi ;;
	esac
}

# 2,000 records without summaries (hard links of one committed record): a
# listing holds one record at a time per thread, so its memory is what a
# handful of records cost, not 2,000 of them (the listing before kept every
# run's summary, samples inline, until the end: ~190 MB here for these 2,000)
test_expect_success 'runs over 2,000 records without summaries: on a pool of threads, bounded in memory, the same as on one thread' '
	src=$(ls -d "$SRCDIR"/tests/fixtures/reports/demo/20261122-090041-7b0011) &&
	: "under ASan (no address-space limit there) 200 records: 2,000 took 745 s at CI load" &&
	case "$GPUORCH" in */asan/*) N=200 ;; *) N=2000 ;; esac &&
	mkdir -p big/demo && i=1000 &&
	while test $i -lt $((1000 + N)); do
		mkdir big/demo/20260101-000000-$i && ln $src/run.json big/demo/20260101-000000-$i/run.json || return 1
		i=$((i + 1))
	done &&
	cp -R big big-serial &&
	: "one thread under 120 MB of address space: the listing itself is bounded" &&
	(GPUORCH_JOBS=1 && export GPUORCH_JOBS && limited runs --reports big-serial --limit 3) >serial.out &&
	: "four threads (test_parmap: items made at once), at most 60 MiB resident" &&
	(GPUORCH_JOBS=4 && export GPUORCH_JOBS && rss_under 61440 runs --reports big --limit 3) >big.out &&
	cat big.out &&
	test "$(grep -c "^2026" big.out)" = 3 &&
	head -n 1 big.out | grep "^20260101-000000-$((999 + N)) " &&
	test "$(ls big/demo/*/summary.json | wc -l)" = $N &&
	test "$(ls big/demo/*/samples.txt | wc -l)" = $N &&
	diff -u serial.out big.out &&
	: "the same summaries from one thread as from four (but for the mtime of each copy)" &&
	(cd big && cat demo/*/summary.json demo/*/samples.txt) | grep -v "\"mtime_" >par.sums &&
	(cd big-serial && cat demo/*/summary.json demo/*/samples.txt) | grep -v "\"mtime_" >serial.sums &&
	cmp par.sums serial.sums &&
	rm -rf big-serial &&
	limited runs --reports big --limit 3 >big2.out &&
	diff -u big.out big2.out &&
	GPUORCH_JOBS=1 "$GPUORCH" runs --reports big --limit 1000000 --json >all-serial.json &&
	GPUORCH_JOBS=4 "$GPUORCH" runs --reports big --limit 1000000 --json >all-par.json &&
	test "$(grep -c "\"run_id\"" all-par.json)" = $N &&
	cmp all-serial.json all-par.json
'

# history over the same 2,000 (their summaries written by runs above): it
# reads one summary at a time and keeps what it prints (a row a run, a
# point's figure; the samples of a series' last point), so 80 MB of address
# space is enough (gpuorch's own mappings are ~45 MB of it); the history that
# kept every run's summary and figures needed ~115 MB here. One thread
# under the limit; the summaries and samples read on a pool of threads give
# the same output, in at most 40 MiB resident
test_expect_success 'history over 2,000 runs with summaries stays under 80 MB of address space' '
	N=$(ls -d big/demo/*/ | wc -l) &&
	(GPUORCH_JOBS=1 && export GPUORCH_JOBS && LIMIT_KB=80000 limited history demo --reports big) >bighist.out &&
	(GPUORCH_JOBS=4 && export GPUORCH_JOBS && rss_under 40960 history demo --reports big) >parhist.out &&
	diff -u bighist.out parhist.out &&
	grep "over commits (oldest first), $N runs\." bighist.out &&
	test "$(grep -c "^| [0-9]* | " bighist.out)" = "$N" &&
	grep "^| $N | .* | 20260101-000000-$((999 + N)) | " bighist.out &&
	test "$(grep -c "^| [0-9]* | .*regression" bighist.out)" = 0
'

# A store whose summaries cannot be written (summary.json a directory: a
# read-only store): each run's summary is built in memory, its samples
# inline. History keeps of each run its figures but not those samples (it
# reads them again for a point): 150 runs of ~2,000 samples a figure in
# 30 MiB resident (holding them all took ~45 MiB, ~0.22 MiB a run)
test_expect_success 'history over runs whose summaries cannot be written: their inline samples are not all kept; the same output as from written summaries' '
	src=$(ls -d "$SRCDIR"/tests/fixtures/reports/attention-wgmma/*/ | head -n 1) && src=${src%/} &&
	old=$(basename "$src") && i=0 &&
	while [ $i -lt 150 ]; do
		id=$(printf "20261201-%06d-%06x" $i $i) &&
		mkdir -p ro/attention-wgmma/$id/summary.json rw/attention-wgmma/$id &&
		sed "s/$old/$id/g" "$src/run.json" >ro/attention-wgmma/$id/run.json &&
		cp ro/attention-wgmma/$id/run.json rw/attention-wgmma/$id/ || return 1
		i=$((i + 1))
	done &&
	(GPUORCH_JOBS=1 && export GPUORCH_JOBS &&
	 rss_under 30720 history attention-wgmma --reports ro --json) >ro.json &&
	test -d ro/attention-wgmma/$id/summary.json &&
	"$GPUORCH" history attention-wgmma --reports rw --json >rw.json &&
	test -f rw/attention-wgmma/$id/summary.json &&
	sed "s|ro/attention-wgmma/|rw/attention-wgmma/|g" ro.json | diff -u rw.json - &&
	test "$(jq "[.points[] | select(.nsamples_stored > 0)] | length" rw.json)" -ge 150
'

test_expect_success 'run.json changed after its summary: the change shows (run.json is read)' '
	run=$(last_run_dir) &&
	sed "s/\"outcome\":[[:space:]]*\"passed\"/\"outcome\": \"PLANTED\"/" $run/run.json >edited.json &&
	cp $run/run.json unplanted.json &&
	grep PLANTED edited.json && cp edited.json $run/run.json &&
	"$GPUORCH" runs >runs.edited &&
	grep PLANTED runs.edited &&
	"$GPUORCH" summarize >sum.out && grep "2 runs summarised" sum.out &&
	test "$(jq_ $run/summary.json outcome)" = PLANTED &&
	: "the record as the run wrote it again (the file'"'"'s records are checked at its end)" &&
	cp unplanted.json $run/run.json && "$GPUORCH" runs >/dev/null &&
	test "$(jq_ $run/summary.json outcome)" = passed
'

test_expect_success 'runs --limit 1 shows one run' '
	"$GPUORCH" runs --limit 1 >one.out &&
	test $(grep -c "^[0-9]\{8\}-" one.out) = 1
'

test_expect_success 'history --metric speaks the spec names; the old name still works' '
	exp=$(jq_ $(last_run_dir)/run.json experiment.name) &&
	hist "$exp" --reports ../reports --metric latency_us >m1.out &&
	hist "$exp" --reports ../reports --metric latency >m2.out &&
	diff -u m1.out m2.out &&
	(cd proj && test_expect_code 2 "$GPUORCH" history "$exp" --reports ../reports --metric p50) 2>m3.err &&
	{ grep "latency_us, tflops or gbps" m3.err || { echo "history --metric p50 said:"; cat m3.err; false; }; }
'

test_expect_success 'a copy of the committed runs (every run.json a new mtime, same bytes): each summary stays current, none rewritten' '
	fixture_runs copied &&
	find copied -name run.json -exec touch -d "2001-02-03 04:05:06" {} + &&
	n=$(ls -d copied/*/*/ | wc -l) && test "$n" -ge 1 &&
	test "$(ls copied/*/*/summary.json | wc -l)" = "$n" &&
	(cd copied && find . -name summary.json -o -name samples.txt | sort | xargs sha256sum) >sums.before &&
	: >marker && sleep 1 &&
	"$GPUORCH" runs --reports copied --limit 1000 >cp.out 2>cp.err &&
	test ! -s cp.err && test $(grep -c "^[0-9]\{8\}-" cp.out) = "$n" &&
	(cd copied && find . -name summary.json -o -name samples.txt | sort | xargs sha256sum) >sums.after &&
	diff -u sums.before sums.after &&
	test -z "$(find copied -newer marker -type f)"
'

test_expect_success 'a run.json edited to the same size after its summary (another mtime, other bytes): read afresh, its summary rewritten' '
	run=$(ls -d copied/*/*/ | head -n 1) && run=${run%/} &&
	grep -q "\"outcome\":[[:space:]]*\"passed\"" $run/run.json &&
	size=$(wc -c <$run/run.json) &&
	sed "s/\"outcome\":\([[:space:]]*\)\"passed\"/\"outcome\":\1\"failed\"/" $run/run.json >same-size.json &&
	test "$(wc -c <same-size.json)" = "$size" && ! cmp -s same-size.json $run/run.json &&
	cp same-size.json $run/run.json &&
	"$GPUORCH" runs --reports copied --limit 1000 >ed.out &&
	test "$(jq_ $run/summary.json outcome)" = failed &&
	test "$(jq_ $run/summary.json of.sha256)" = "$(sha256sum <$run/run.json | cut -d" " -f1)"
'

# samples.txt's lines are written ascending since 2026-11-29 (history sorts
# none of them); the committed summaries have them in the order taken. The
# verdicts, ratios and notes of history are the same from either, from one
# thread or many: the committed experiments with steps and gains in them
test_expect_success 'history: the same output from committed (unsorted) samples.txt as from rebuilt (sorted) ones' '
	fixture_runs fmt &&
	unsorted=0 &&
	for f in fmt/*/*/samples.txt; do
		tr " " "\n" <"$f" | grep . >one.col || continue
		sort -g one.col | cmp -s - one.col || unsorted=$((unsorted + 1))
	done &&
	test "$unsorted" -ge 1 &&
	for e in demo gemm-wgmma bsr-wgmma attention-wgmma; do
		"$GPUORCH" history $e --reports fmt >"old-$e.out" || return 1
	done &&
	grep -q "gain" old-gemm-wgmma.out && grep -q "gain" old-bsr-wgmma.out &&
	find fmt -name summary.json -exec rm {} + &&
	"$GPUORCH" summarize --reports fmt >/dev/null &&
	for f in fmt/*/*/samples.txt; do
		python3 "$SRCDIR/tests/lib/samples.py" "$f" >decoded.txt || return 1
		while read -r line; do
			echo "$line" | tr " " "\n" | grep . >one.col || continue
			sort -g one.col | cmp -s - one.col || { echo "not ascending: $f"; return 1; }
		done <decoded.txt
	done &&
	for e in demo gemm-wgmma bsr-wgmma attention-wgmma; do
		"$GPUORCH" history $e --reports fmt >"new-$e.out" &&
		GPUORCH_JOBS=1 "$GPUORCH" history $e --reports fmt >"serial-$e.out" &&
		diff -u "old-$e.out" "new-$e.out" && diff -u "old-$e.out" "serial-$e.out" || return 1
	done
'

test_expect_success 'every committed run under reports/ lists and charts without a summary' '
	fixture_runs committed &&
	find committed -name summary.json -exec rm {} + ;
	"$GPUORCH" runs --reports committed --limit 1000 >c.full 2>c.err &&
	test ! -s c.err &&
	test $(grep -c "^[0-9]\{8\}-" c.full) = $(ls -d committed/*/*/ | wc -l) &&
	"$GPUORCH" history demo --reports committed >ch.full &&
	"$GPUORCH" summarize --reports committed >/dev/null &&
	"$GPUORCH" runs --reports committed --limit 1000 >c.sum &&
	"$GPUORCH" history demo --reports committed >ch.sum &&
	diff -u c.full c.sum && diff -u ch.full ch.sum
'

# samesamples OLD NEW: each step of each run's summary under OLD that has
# samples has the same ones in NEW's summary of the run (as sets: an old line
# may be in the order taken; the new one ascending), each read from its
# samples.txt (tests/lib/samples.py); NEW may hold more steps (a sweep's)
samesamples() {
	python3 - "$SRCDIR/tests/lib" "$1" "$2" <<-\PY
	import glob, json, os, sys
	sys.path.insert(0, sys.argv[1])
	import samples
	def steps(d):
	    s = json.load(open(os.path.join(d, "summary.json")))
	    p = os.path.join(d, "samples.txt")
	    raw = open(p, "rb").read() if os.path.exists(p) else b""
	    out = {}
	    for h in s["hosts"]:
	        for st in h.get("steps", []):
	            at = st.get("result", {}).get("timing", {}).get("samples_at")
	            if at:
	                out[h["name"] + " " + st["id"]] = samples.line_samples(raw[at[0]:at[0] + at[1]].decode())
	    return out
	n = packed = 0
	for d in sorted(glob.glob(os.path.join(sys.argv[2], "*", "*", ""))):
	    new = d.replace(sys.argv[2], sys.argv[3], 1)
	    a, b = steps(d), steps(new)
	    for i, x in a.items():
	        assert sorted(x) == b[i], (d, i)
	        n += 1
	    if b:
	        packed += open(os.path.join(new, "samples.txt")).read().count("zlib/base64 ")
	print("%d steps the same, %d lines packed" % (n, packed))
	assert n > 0 and packed > 0
	PY
}

test_expect_success 'summarize rebuilds a summary of schema 4 as 5 where run.json is here: the same samples (lines packed), the same history, smaller; without run.json it stays 4 and is read as it is' '
	fixture_runs up4 &&
	test "$(grep -l "gpuorch.summary/4" up4/*/*/summary.json | wc -l)" = "$(ls up4/*/*/summary.json | wc -l)" &&
	for e in demo gemm-wgmma bsr-wgmma attention-wgmma; do
		"$GPUORCH" history $e --reports up4 >"h4-$e.out" || return 1
	done &&
	"$GPUORCH" runs --reports up4 --limit 1000 >r4.out &&
	cp -R up4 up4.orig && cp -R up4 norec &&
	"$GPUORCH" summarize --reports up4 >sum.out && cat sum.out &&
	test "$(grep -l "gpuorch.summary/5" up4/*/*/summary.json | wc -l)" = "$(ls up4/*/*/summary.json | wc -l)" &&
	samesamples up4.orig up4 &&
	for e in demo gemm-wgmma bsr-wgmma attention-wgmma; do
		"$GPUORCH" history $e --reports up4 >"h5-$e.out" &&
		diff -u "h4-$e.out" "h5-$e.out" || return 1
	done &&
	"$GPUORCH" runs --reports up4 --limit 1000 | diff -u r4.out - &&
	old=$(cat up4.orig/*/*/samples.txt | wc -c) && new=$(cat up4/*/*/samples.txt | wc -c) &&
	echo "samples.txt: $old -> $new bytes" && test $((new * 4)) -lt $old &&
	(cd up4 && find . -type f | sort | xargs sha256sum) >up4.sums &&
	"$GPUORCH" summarize --reports up4 >/dev/null &&
	(cd up4 && find . -type f | sort | xargs sha256sum) | diff -u up4.sums - &&
	find norec -name run.json -exec rm {} + &&
	"$GPUORCH" summarize --reports norec >/dev/null &&
	test "$(grep -l "gpuorch.summary/4" norec/*/*/summary.json | wc -l)" = "$(ls norec/*/*/summary.json | wc -l)" &&
	"$GPUORCH" history attention-wgmma --reports norec | sed "s|norec/|up4/|g" | diff -u h4-attention-wgmma.out -
'

test_expect_success 'a summary beside another samples.txt (an older one, of another size): not current; rebuilt from run.json, or skipped with a warning without it' '
	fixture_runs cut5 &&
	r=cut5/gemm-wgmma/20261127-224959-f0aed9 &&
	cp $r/samples.txt old-samples.txt &&
	"$GPUORCH" summarize --reports cut5 >/dev/null &&
	grep -q "gpuorch.summary/5" $r/summary.json &&
	cp $r/samples.txt new-samples.txt && ! cmp -s old-samples.txt new-samples.txt &&
	cp old-samples.txt $r/samples.txt &&
	"$GPUORCH" history gemm-wgmma --reports cut5 >cut-h.out &&
	cmp new-samples.txt $r/samples.txt &&
	cp old-samples.txt $r/samples.txt && rm $r/run.json &&
	{ "$GPUORCH" runs --reports cut5 --limit 1000 >cut-r.out 2>cut-r.err; true; } &&
	cat cut-r.err &&
	grep -q "20261127-224959-f0aed9" cut-r.err &&
	! grep -q "20261127-224959-f0aed9" cut-r.out
'

test_done
