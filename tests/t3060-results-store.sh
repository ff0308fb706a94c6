#!/bin/sh
# asan: yes
test_description='the results store in a local directory: push and pull byte-identical, a second push sends nothing, two clones sharing one store, a corrupt or missing object, a raw record fetched on demand, and the errors when nothing has it'
. "$(dirname "$0")/lib/testlib.sh"
GPUORCH_RECORDS_UNCHECKED='its runs are made from tests/fixtures/runs records, older than the schema (no host start and end times)'
. "$SRCDIR/tests/lib/runlib.sh"

. "$SRCDIR/tests/lib/resultslib.sh"

# clone DIR RECORD RUN-ID: a reports directory DIR holding one run made from
# a fixture record: its summary, report and charts (written by gpuorch), a
# compressible log, an incompressible blob, an empty file, an executable
fixture_clone() {
	d=$1/$EXP/$3 &&
	mkdir -p $d/logs/h100 $d/profiles &&
	cp "$F/$2" $d/run.json &&
	awk "BEGIN { for (i = 0; i < 20000; i++) print \"step\", i, \"median_us\", i % 97 }" >$d/logs/h100/bench.stdout &&
	head -c 150000 /dev/urandom >$d/profiles/kernel.ncu-rep &&
	: >$d/logs/h100/empty.stderr &&
	printf "#!/bin/sh\necho hi\n" >$d/logs/rerun.sh && chmod 755 $d/logs/rerun.sh &&
	"$GPUORCH" runs --reports $1 >/dev/null &&
	"$GPUORCH" report --reports $1 $3 >/dev/null &&
	test -f $d/summary.json && test -f $d/report.md
}

test_expect_success 'setup: clone a with run 1, clone b with run 2' '
	fixture_clone a pass-2host.json $R1 &&
	fixture_clone b failed-host.json $R2 &&
	cp -R a pristine-a
'

test_expect_success 'push copies a run into the store: objects by hash, one manifest' '
	"$GPUORCH" push --reports a $R1 >push1.out &&
	cat push1.out &&
	test_grep "pushed 1 run to $TRASH/store" push1.out &&
	test -f store/runs/$R1/$EXP.json &&
	n=$(find a/$EXP/$R1 -type f | wc -l) &&
	test_grep "$EXP/$R1: $n files" push1.out &&
	h=$(sha256sum a/$EXP/$R1/profiles/kernel.ncu-rep | cut -d" " -f1) &&
	h2=$(echo $h | cut -c1-2) && test -f store/objects/$h2/$h &&
	: "the blob did not compress: stored as it is; the log did, and is smaller" &&
	cmp store/objects/$h2/$h a/$EXP/$R1/profiles/kernel.ncu-rep &&
	l=$(sha256sum a/$EXP/$R1/logs/h100/bench.stdout | cut -d" " -f1) &&
	test $(stat -c %s store/objects/$(echo $l | cut -c1-2)/$l) -lt $(($(stat -c %s a/$EXP/$R1/logs/h100/bench.stdout) / 2))
'

test_expect_success 'a second push sends nothing and writes nothing' '
	find store -type f | sort >before &&
	touch -d "2001-01-01" marker && find store -type f -exec touch -d "2001-01-01" {} + &&
	"$GPUORCH" push --reports a --all >push2.out &&
	cat push2.out &&
	test_grep "0 new objects (0 bytes), the store had it" push2.out &&
	test_grep "pushed 0 runs to .*: 0 new objects, 0 bytes" push2.out &&
	find store -type f | sort >after && test_cmp before after &&
	test -z "$(find store -type f -newer marker)"
'

test_expect_success 'pull restores the run in another clone byte-identical (content and mode)' '
	"$GPUORCH" pull --reports c $R1 >pull.out &&
	cat pull.out && test_grep "$EXP/$R1: .* written, 0 already here" pull.out &&
	same_tree a/$EXP/$R1 c/$EXP/$R1 &&
	test "$(stat -c %a c/$EXP/$R1/logs/rerun.sh)" = 755 &&
	"$GPUORCH" runs --reports c >runs-c.out && test_grep "^$R1 " runs-c.out
'

test_expect_success 'two clones sharing one store see each other'"'"'s runs after pull' '
	"$GPUORCH" push --reports b --all >pushb.out &&
	"$GPUORCH" pull --reports a $R2 &&
	"$GPUORCH" pull --reports b $EXP/$R1 &&
	"$GPUORCH" runs --reports a >runs-a.out && "$GPUORCH" runs --reports b >runs-b.out &&
	for f in runs-a.out runs-b.out; do test_grep "^$R1 " $f && test_grep "^$R2 " $f || return 1; done &&
	same_tree a/$EXP b/$EXP
'

test_expect_success 'pull refuses to overwrite a differing local file, and --force replaces it' '
	echo changed >>c/$EXP/$R1/logs/h100/bench.stdout && cp c/$EXP/$R1/logs/h100/bench.stdout changed &&
	rm c/$EXP/$R1/report.md &&
	test_expect_code 2 "$GPUORCH" pull --reports c $R1 >refuse.out 2>&1 &&
	cat refuse.out &&
	test_grep "1 file of run $EXP/$R1 differs from the results store.*bench.stdout.*--force" refuse.out &&
	: "nothing was written, not even the missing file" &&
	cmp changed c/$EXP/$R1/logs/h100/bench.stdout && test ! -e c/$EXP/$R1/report.md &&
	"$GPUORCH" pull --reports c --force $R1 &&
	same_tree pristine-a/$EXP/$R1 c/$EXP/$R1
'

test_expect_success 'a corrupt object is found by its hash on read; nothing of it is written' '
	l=$(sha256sum a/$EXP/$R1/logs/h100/bench.stdout | cut -d" " -f1) &&
	obj=store/objects/$(echo $l | cut -c1-2)/$l && cp $obj obj.saved &&
	printf "\170\234garbage" >$obj &&
	test_must_fail "$GPUORCH" pull --reports d $R1 >corrupt.out 2>&1 &&
	cat corrupt.out &&
	test_grep "object $l in the results store .* is corrupt" corrupt.out &&
	test ! -e d/$EXP/$R1/logs/h100/bench.stdout &&
	rm $obj &&
	test_must_fail "$GPUORCH" pull --reports e $R1 >missing.out 2>&1 &&
	test_grep "object $l is missing from the results store" missing.out &&
	cp obj.saved $obj
'

test_expect_success 'runs and history work in a clone that has only summaries; report and compare fetch the raw records on demand' '
	mkdir -p thin && cp -R a/$EXP thin/ &&
	for r in $R1 $R2; do (cd thin/$EXP/$r && rm -rf run.json logs profiles) || return 1; done &&
	"$GPUORCH" runs --reports thin >thin-runs.out 2>&1 && cat thin-runs.out &&
	test_grep "^$R1 " thin-runs.out && test_grep "^$R2 " thin-runs.out && ! grep skipping thin-runs.out &&
	"$GPUORCH" history --reports thin $EXP >thin-history.out 2>&1 && cat thin-history.out &&
	test_grep "$R1" thin-history.out && ! grep -i "skipping\|fetched" thin-history.out &&
	test -z "$(find thin -name run.json)" &&
	"$GPUORCH" report --reports thin $R1 >thin-report.out 2>thin-report.err &&
	cat thin-report.err &&
	test_grep "fetched run $R1.s raw record from the results store $TRASH/store" thin-report.err &&
	cmp pristine-a/$EXP/$R1/run.json thin/$EXP/$R1/run.json &&
	same_tree pristine-a/$EXP/$R1 thin/$EXP/$R1 &&
	: "compare reads both raw records: the one not here yet is fetched, the other is not again" &&
	test_might_fail "$GPUORCH" compare --reports thin $R1 $R2 >thin-compare.out 2>thin-compare.err &&
	cat thin-compare.err &&
	test "$(grep -c "^fetched run" thin-compare.err)" = 1 &&
	test_grep "fetched run $R2.s raw record" thin-compare.err &&
	test_grep "$R2" thin-compare.out &&
	same_tree a/$EXP/$R2 thin/$EXP/$R2
'

test_expect_success 'a raw record that neither the clone nor the store has: a clear error' '
	mkdir -p thin2/$EXP && cp -R pristine-a/$EXP/$R1 thin2/$EXP/ && rm thin2/$EXP/$R1/run.json &&
	test_must_fail env GPUORCH_RESULTS_STORE=$TRASH/empty-store "$GPUORCH" report --reports thin2 $R1 >none.out 2>&1 &&
	cat none.out &&
	test_grep "run $R1.s raw record is not here (thin2/$EXP/$R1 has only its summary): run $EXP/$R1 is not in the results store $TRASH/empty-store; nor is it in the repository.s history (.*). Get it with .gpuorch pull $R1 --store STORE. from a store that holds it" none.out &&
	test_must_fail env GPUORCH_RESULTS_STORE=none "$GPUORCH" report --reports thin2 $R1 >off.out 2>&1 &&
	test_grep "no results store is configured" off.out &&
	test_expect_code 2 env GPUORCH_RESULTS_STORE=none "$GPUORCH" pull --reports thin2 $R1 >off2.out 2>&1 &&
	test_grep "no results store is configured.*GPUORCH_RESULTS_STORE" off2.out &&
	test_expect_code 2 "$GPUORCH" pull --reports thin2 20990101-000000-ffffff >nope.out 2>&1 &&
	test_grep "run 20990101-000000-ffffff is not in the results store $TRASH/store" nope.out
'

test_expect_success 'a manifest naming a path outside the run directory is refused, nothing written' '
	mkdir -p hostile/runs/20990101-000000-aaaaaa &&
	printf "{\"schema\": \"gpuorch-results-manifest/1\", \"files\": [{\"path\": \"../../evil\", \"sha256\": \"%064d\", \"size\": 1, \"mode\": 420}]}" 0 \
		>hostile/runs/20990101-000000-aaaaaa/x.json &&
	test_expect_code 4 "$GPUORCH" pull --store hostile --reports h 20990101-000000-aaaaaa >hostile.out 2>&1 &&
	test_grep "the manifest of run x/20990101-000000-aaaaaa has a bad entry (path .../../evil.)" hostile.out &&
	test ! -e evil && test ! -e h
'

test_expect_success 'push leaves out the controller lock and a run without run.json; bad usage' '
	: >a/$EXP/$R1/controller.lock &&
	"$GPUORCH" push --reports a $R1 >lock.out && test_grep "the store had it" lock.out &&
	test_expect_code 1 "$GPUORCH" push --reports thin2 $R1 >thin-push.out 2>&1 &&
	test_grep "thin2/$EXP/$R1.* has no run.json" thin-push.out &&
	test_expect_code 2 "$GPUORCH" push --reports a >usage.out 2>&1 &&
	test_grep "which runs?" usage.out &&
	test_expect_code 2 "$GPUORCH" pull --reports a --all >usage2.out 2>&1
'

test_done
