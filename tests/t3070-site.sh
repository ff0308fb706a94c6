#!/bin/sh
# cost: 30
# timeout: 600
# asan: yes
test_description='gpuorch site: a static site of the store, checked in a real headless Chromium over WebDriver (index filter, run page, history chart points and clicks, compare), replaced whole, and its errors'
. "$(dirname "$0")/lib/testlib.sh"
GPUORCH_RECORDS_UNCHECKED='its runs are made from tests/fixtures/runs records, older than the schema (no host start and end times)'
. "$SRCDIR/tests/lib/runlib.sh"
. "$SRCDIR/tests/lib/webdriver.sh"

F=$SRCDIR/tests/fixtures/runs
EXP=attention-wmma
P1=20261122-051000-a1b2c3 P2=20261123-051000-a1b2c4 P3=20261124-051000-a1b2c5
F1=20261122-061500-d4e5f6 I1=20261122-070000-0f0f0f

# fixture_run RECORD RUN-ID STARTED: reports/EXP/RUN-ID from a fixture record
# under another id and start time, with its summary, report and charts; each
# timing gets three samples around its median (the records have none), so
# the history has a p10-p90 band to draw
fixture_run() {
	d=reports/$EXP/$2 && mkdir -p $d &&
	sed -e "0,/\"run_id\": \"[^\"]*\"/s//\"run_id\": \"$2\"/" \
	    -e "0,/\"started_at\": \"[^\"]*\"/s//\"started_at\": \"$3\"/" "$F/$1" |
	awk "/^ *\"median_us\": [0-9.]+,\$/ { v = \$2 + 0; print; printf \"\\\"samples_us\\\": [%g, %g, %g],\\n\", v * 0.97, v, v * 1.04; next } { print }" >$d/run.json &&
	"$GPUORCH" report --reports reports $2 >/dev/null && test -f $d/report.md
}

test_expect_success 'setup: five runs of one experiment (three passed, one failed, one incomplete)' '
	fixture_run pass-2host.json $P1 2026-11-22T05:10:00Z &&
	fixture_run pass-2host.json $P2 2026-11-23T05:10:00Z &&
	fixture_run pass-2host.json $P3 2026-11-24T05:10:00Z &&
	fixture_run failed-host.json $F1 2026-11-22T06:15:00Z &&
	mkdir -p reports/$EXP/$I1 && cp "$F/incomplete.json" reports/$EXP/$I1/run.json &&
	"$GPUORCH" runs --reports reports --json >runs.json &&
	test "$(jq_ runs.json . --len)" = 5 &&
	ls reports/$EXP/$P1/charts/*.svg >charts &&
	test -s charts
'

test_expect_success 'gpuorch site -h prints its usage' '
	"$GPUORCH" site -h >out &&
	grep "^usage: gpuorch site" out && grep -- "--out DIR" out
'

test_expect_success 'site writes every page: index, one per run with its charts, history, compare' '
	"$GPUORCH" site --reports reports --root . --out site >out &&
	grep "site: 5 runs, 1 experiment in site" out &&
	for f in index.html compare.html site.js site.css data/runs.js history/index.html \
		history/$EXP.html data/history-$EXP.js .gpuorch-site; do
		test -s site/$f || { echo "missing site/$f"; return 1; }
	done &&
	for r in $P1 $P2 $P3 $F1 $I1; do
		test -s site/run/$EXP/$r/index.html && test -s site/run/$EXP/$r/figures.js || return 1
	done &&
	for c in $(cat charts); do
		cmp $c site/run/$EXP/$P1/charts/$(basename $c) || return 1
	done &&
	: "the report is HTML (its tables too), not Markdown" &&
	grep "<table>" site/run/$EXP/$P1/index.html &&
	! grep "^| " site/run/$EXP/$P1/index.html &&
	ls site.new-* 2>/dev/null | wc -l >left && test "$(cat left)" = 0
'

webdriver_requires 'the site in headless Chromium'

U=file://$TRASH/site

test_expect_success 'setup: chromedriver and a headless Chromium session' '
	wd_start
'

# page_clean: the page loaded and the browser logged no error
page_clean() {
	wd_wait_for "return document.readyState === \"complete\";" &&
	wd_severe_log severe && { test ! -s severe || { cat severe; return 1; }; }
}

test_expect_success 'the index lists every run, without console errors' '
	wd_url "$U/index.html" && page_clean &&
	test "$(wd_exec "return document.querySelectorAll(\"#runs tbody tr\").length;")" = 5 &&
	wd_exec "return document.getElementById(\"count\").textContent;" >count &&
	grep "^5 of 5 runs" count
'

# filter_status STATUS: pick STATUS in the status filter (a click on its option)
filter_status() {
	wd_click "$(wd_find "#filter-status option[value=\"$1\"]")"
}

test_expect_success 'filtering the index by status shows exactly the matching runs' '
	filter_status failed &&
	wd_exec "return Array.from(document.querySelectorAll(\"#runs tbody tr\")).map(r => r.cells[1].textContent).join(\" \");" >shown &&
	test "$(cat shown)" = $F1 &&
	filter_status passed &&
	wd_exec "return Array.from(document.querySelectorAll(\"#runs tbody tr\")).map(r => r.cells[1].textContent).join(\" \");" >shown &&
	test "$(cat shown)" = "$P3 $P2 $P1" &&
	filter_status incomplete &&
	test "$(wd_exec "return document.querySelectorAll(\"#runs tbody tr\").length;")" = 1 &&
	filter_status "" &&
	test "$(wd_exec "return document.querySelectorAll(\"#runs tbody tr\").length;")" = 5 &&
	page_clean
'

test_expect_success 'a run page shows its report and its charts, without console errors' '
	wd_url "$U/run/$EXP/$P1/index.html" && page_clean &&
	wd_exec "return document.querySelectorAll(\"main table\").length > 0;" >tables &&
	test "$(cat tables)" = true &&
	n=$(wc -l <charts) &&
	wd_wait_for "return Array.from(document.images).filter(i => i.complete && i.naturalWidth > 0 && /charts\\//.test(i.src)).length === $n;"
'

test_expect_success 'the history chart has exactly the points history --json has, without console errors' '
	{ "$GPUORCH" history --reports reports --root . --json $EXP >hist.json; test $? -le 1; } &&
	want=$(jq_ hist.json points --len) &&
	echo "history --json: $want points" && test "$want" = 6 &&
	test "$(grep -c "\"p10\":" hist.json)" = 6 &&
	wd_url "$U/history/$EXP.html" && page_clean &&
	wd_exec "return document.querySelectorAll(\"#history-svg circle.pt\").length + \" \" + document.querySelectorAll(\"#history-svg polyline.median\").length + \" \" + document.querySelectorAll(\"#history-svg polygon.band\").length;" >drawn && cat drawn &&
	test "$(cat drawn)" = "$want 2 2" &&
	: "the points link to their runs" &&
	wd_exec "return Array.from(document.querySelectorAll(\"#history-svg a.pt-link\")).map(a => a.getAttribute(\"href\")).sort().join(\" \");" >links &&
	test "$(tr " " "\n" <links | sort -u | wc -l)" = 3 &&
	grep "../run/$EXP/$P1/index.html" links
'

test_expect_success 'a wheel over the chart zooms in (fewer runs on the axis), all runs again after reset' '
	wd_exec "var s = document.getElementById(\"history-svg\"), r = s.getBoundingClientRect();
		 for (var i = 0; i < 4; i++) s.dispatchEvent(new WheelEvent(\"wheel\", {deltaY: -100, clientX: r.left + r.width / 2, clientY: r.top + r.height / 2, bubbles: true, cancelable: true}));
		 return document.querySelector(\"#history-svg\").textContent;" >zoomed &&
	grep "run, in commit order (2-3 of 4)" zoomed &&
	wd_click "$(wd_find "#zoom-reset")" &&
	test "$(wd_exec "return document.querySelectorAll(\"#history-svg circle.pt\").length;")" = 6
'

test_expect_success 'clicking a point of the chart opens that run'"'"'s page' '
	run=$(wd_exec "return document.querySelectorAll(\"#history-svg circle.pt\")[0].getAttribute(\"data-run\");") &&
	test -n "$run" &&
	wd_click "$(wd_find "#history-svg circle.pt")" &&
	wd_wait_for "return location.href.endsWith(\"/run/$EXP/$run/index.html\");" &&
	page_clean
'

test_expect_success 'picking two runs in the index opens their compare page, without console errors' '
	wd_url "$U/index.html" && page_clean &&
	wd_click "$(wd_find "#runs input[value=\"$EXP/$P1\"]")" &&
	wd_click "$(wd_find "#runs input[value=\"$EXP/$F1\"]")" &&
	wd_click "$(wd_find "#compare")" &&
	wd_wait_for "return document.querySelectorAll(\"#compare-table tbody tr\").length > 0;" &&
	wd_exec "return location.search;" >search &&
	grep "a=$EXP%2F$P1&b=$EXP%2F$F1" search &&
	page_clean
'

test_expect_success '--every-figure: a history page per timed figure, each with the points history --json has for it' '
	"$GPUORCH" site --reports reports --root . --out site2 --every-figure >out &&
	n=$(ls site2/history/$EXP--*.html | wc -l) &&
	echo "$n figure pages" && test "$n" -ge 2 &&
	wd_url "file://$TRASH/site2/history/$EXP.html" && page_clean &&
	test "$(wd_exec "return document.querySelectorAll(\"a.figure-link\").length;")" = "$n" &&
	k=1 && while test $k -le $n; do
		wd_url "file://$TRASH/site2/history/$EXP--$k.html" && page_clean &&
		prog=$(wd_exec "return GPUORCH.data.history.program;") &&
		prob=$(wd_exec "return GPUORCH.data.history.problem;") &&
		{ "$GPUORCH" history --reports reports --root . --json --program "$prog" --problem "$prob" \
			$EXP >hk.json 2>/dev/null; test $? -le 1; } &&
		want=$(jq_ hk.json points --len) && test "$want" -gt 0 &&
		got=$(wd_exec "return document.querySelectorAll(\"#history-svg circle.pt\").length;") &&
		echo "$prog $prob: $got points drawn, history --json has $want" &&
		test "$got" = "$want" || return 1
		k=$((k + 1))
	done &&
	: "without the option, no such pages" && test ! -e site/history/$EXP--1.html
'

test_expect_success '--every-figure: a page per named figure (history --figure), drawn without console errors' '
	fixture_runs named && rm -rf named/*/*/history.* &&
	ls named/sgemm-cuda >/dev/null &&
	"$GPUORCH" site --reports named --root "$SRCDIR" --out site3 --every-figure >out &&
	wd_url "file://$TRASH/site3/history/sgemm-cuda.html" && page_clean &&
	n=$(wd_exec "return document.querySelectorAll(\"a.figure-link\").length;") &&
	test "$n" = "$(ls site3/history/sgemm-cuda--*.html | wc -l)" && test "$n" -ge 2 &&
	k=1 && named=0 && while test $k -le $n; do
		wd_url "file://$TRASH/site3/history/sgemm-cuda--$k.html" && page_clean &&
		: "a named figure: its data says which way is better (a timed one: none)" &&
		fig=$(wd_exec "var h = GPUORCH.data.history; return h.better ? h.metric : \"-\";") &&
		prog=$(wd_exec "return GPUORCH.data.history.program;") &&
		prob=$(wd_exec "return GPUORCH.data.history.problem;") &&
		if test "$fig" = -; then set --; else set -- --figure "$fig" && named=$((named + 1)); fi &&
		{ "$GPUORCH" history --reports named --root "$SRCDIR" --json "$@" \
			--program "$prog" --problem "$prob" sgemm-cuda >hk.json 2>hk.err; test $? -le 1 ||
			{ cat hk.err; false; }; } &&
		want=$(jq_ hk.json points --len) && test "$want" -gt 0 &&
		got=$(wd_exec "return document.querySelectorAll(\"#history-svg circle.pt\").length;") &&
		echo "$prog $prob $fig: $got points drawn, history --figure --json has $want" &&
		test "$got" = "$want" || return 1
		k=$((k + 1))
	done &&
	test $named -ge 2
'

test_expect_success 'served by a web server (python3 -m http.server), every page type loads without console errors' '
	test_have_cmd python3 || { echo "no python3 to serve the site"; return 1; }
	: "port 0: the server takes a free port and says which" &&
	(cd site && exec python3 -u -m http.server 0 --bind 127.0.0.1) >httpd.log 2>&1 &
	httpd=$!
	test_when_finished "kill $httpd" &&
	wait_for 20 "grep -q \"port [0-9]\" httpd.log" &&
	port=$(sed -n "s/.* port \([0-9]*\) .*/\1/p" httpd.log | head -1) &&
	wait_for 20 "curl -sf -o /dev/null http://127.0.0.1:$port/index.html" &&
	H=http://127.0.0.1:$port &&
	wd_url "$H/index.html" && page_clean &&
	test "$(wd_exec "return document.querySelectorAll(\"#runs tbody tr\").length;")" = 5 &&
	wd_url "$H/history/$EXP.html" && page_clean &&
	test "$(wd_exec "return document.querySelectorAll(\"#history-svg circle.pt\").length;")" = 6 &&
	wd_url "$H/run/$EXP/$P2/index.html" && page_clean &&
	wd_url "$H/compare.html?a=$EXP/$P1&b=$EXP/$P2" &&
	wd_wait_for "return document.querySelectorAll(\"#compare-table tbody tr\").length > 0;" && page_clean &&
	wd_url "$H/history/index.html" && page_clean &&
	: "every request answered (200, or 304 for a file the browser has)" &&
	grep -c "\"GET " httpd.log && ! grep "\"GET .*\" [45][0-9][0-9] " httpd.log
'

test_expect_success 'a second site replaces the first whole (a file of the old one is gone)' '
	mkdir -p site/run/gone && echo old >site/run/gone/index.html &&
	"$GPUORCH" site --reports reports --root . --out site --quiet >out &&
	test ! -s out &&
	test ! -e site/run/gone && test -s site/index.html && test -f site/.gpuorch-site
'

test_expect_success 'a folder of other files, a file and an unwritable place are refused, nothing touched' '
	mkdir mine && echo keep >mine/notes.txt &&
	test_expect_code 2 "$GPUORCH" site --reports reports --out mine 2>err &&
	grep "error: .mine. holds files of its own" err && test "$(cat mine/notes.txt)" = keep &&
	echo x >afile &&
	test_expect_code 2 "$GPUORCH" site --reports reports --out afile 2>err &&
	grep "is not a folder" err &&
	test_expect_code 4 "$GPUORCH" site --reports reports --out afile/site 2>err &&
	grep "error: cannot write the site to .afile/site.: Not a directory" err
'

test_done
