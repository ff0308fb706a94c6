#!/bin/sh
# cost: 10
# asan: yes
test_description='--json on summarize, push, pull, site and init: one document on stdout, valid against its schema, the values of the text; the empty case; an error prints nothing on stdout, with the exit code of the text'
. "$(dirname "$0")/lib/testlib.sh"
GPUORCH_RECORDS_UNCHECKED='its runs are made from tests/fixtures/runs records, older than the schema (no host start and end times)'
. "$SRCDIR/tests/lib/runlib.sh"

. "$SRCDIR/tests/lib/resultslib.sh"

check_json() {
	"$SRCDIR/scripts/check-json.sh" "$@"
}

# clone DIR RECORD RUN-ID: a reports directory DIR holding one run made
# from a fixture record (t3060's setup, smaller), with no summary yet
fixture_clone() {
	d=$1/$EXP/$3 &&
	mkdir -p $d/logs &&
	cp "$F/$2" $d/run.json &&
	echo "step 1 median_us 3" >$d/logs/bench.stdout
}

test_expect_success 'setup: clone a with two runs, an empty clone' '
	fixture_clone a pass-2host.json $R1 &&
	fixture_clone a failed-host.json $R2 &&
	mkdir empty && cp -R a pristine
'

test_expect_success 'summarize --json of an empty reports directory: 0 runs, exit 0' '
	"$GPUORCH" summarize --reports empty --json >sum0.out &&
	cat sum0.out && check_json cli-summarize.schema.json sum0.out &&
	test "$(jq -r .summarised sum0.out)" = 0 && test "$(jq -c .runs sum0.out)" = "[]" &&
	test "$(jq -r .exit_code sum0.out)" = 0
'

test_expect_success 'summarize --json: the runs it summarised, as the text counts them' '
	"$GPUORCH" summarize --reports pristine >sum.txt &&
	"$GPUORCH" summarize --reports a --json >sum.out 2>sum.err &&
	cat sum.txt sum.out && check_json cli-summarize.schema.json sum.out &&
	test ! -s sum.err &&
	test "$(jq -r .summarised sum.out) runs summarised under $(jq -r .reports sum.out)" = "$(sed s/pristine/a/ sum.txt)" &&
	jq -r ".runs[]" sum.out | sort >ids && printf "%s\n" $R1 $R2 | sort >want && test_cmp want ids &&
	test -f a/$EXP/$R1/summary.json && test -f a/$EXP/$R2/summary.json &&
	: "a second time: every summary is current, each run counted as the text does" &&
	"$GPUORCH" summarize --reports a --json >sum2.out &&
	test "$(jq -r .summarised sum2.out)" = 2
'

test_expect_success 'summarize --json with an unreadable record: exit 1, the warning in the document and on stderr' '
	mkdir -p bad/$EXP/20261122-090000-bad000 && echo "{" >bad/$EXP/20261122-090000-bad000/run.json &&
	test_expect_code 1 "$GPUORCH" summarize --reports bad --json >sumbad.out 2>sumbad.err &&
	cat sumbad.out sumbad.err && check_json cli-summarize.schema.json sumbad.out &&
	test "$(jq -r .exit_code sumbad.out)" = 1 &&
	test "$(jq -r ".warnings | length" sumbad.out)" = 1 &&
	jq -r ".warnings[0]" sumbad.out >w1 && test_cmp w1 sumbad.err
'

test_expect_success 'push --json with nothing to push: no runs, exit 0' '
	"$GPUORCH" push --reports empty --all --json >push0.out 2>push0.err &&
	cat push0.out && check_json cli-push.schema.json push0.out &&
	test "$(jq -r .pushed push0.out)" = 0 && test "$(jq -c .runs push0.out)" = "[]" &&
	test "$(jq -r .pruned push0.out)" = null && test ! -s push0.err
'

test_expect_success 'push --json: each run and the totals of the text; the run lines on stderr' '
	"$GPUORCH" push --reports a --all --json >push.out 2>push.err &&
	cat push.out push.err && check_json cli-push.schema.json push.out &&
	test "$(jq -r .pushed push.out)" = 2 && test "$(jq -r .exit_code push.out)" = 0 &&
	test "$(jq -r .store push.out)" = "$TRASH/store" &&
	jq -r ".runs[] | \"\(.run): \(.files) files, \(.objects_sent) new objects (\(.bytes_sent) bytes)\"" push.out >from-json &&
	test_cmp from-json push.err &&
	test "$(jq "[.runs[].objects_sent] | add" push.out)" = "$(jq .objects_sent push.out)" &&
	test "$(jq "[.runs[].bytes_sent] | add" push.out)" = "$(jq .bytes_sent push.out)" &&
	: "the text of the same push, now that the store has it all" &&
	"$GPUORCH" push --reports a --all >push2.txt &&
	"$GPUORCH" push --reports a --all --json >push2.out &&
	check_json cli-push.schema.json push2.out &&
	test "$(jq -r "[.runs[].store_had_it] | all" push2.out)" = true &&
	test "pushed $(jq .pushed push2.out) runs to $(jq -r .store push2.out): $(jq .objects_sent push2.out) new objects, $(jq .bytes_sent push2.out) bytes" = "$(tail -n 1 push2.txt)"
'

test_expect_success 'push --prune --json: what each run lost and kept' '
	cp -R a pr &&
	"$GPUORCH" push --reports pr --all --prune --json >prune.out 2>prune.err &&
	cat prune.out && check_json cli-push.schema.json prune.out &&
	test "$(jq -r .pruned.runs prune.out)" = 2 &&
	test "$(jq "[.runs[].pruned.removed] | add" prune.out)" = "$(jq .pruned.removed prune.out)" &&
	test ! -e pr/$EXP/$R1/run.json &&
	: "again: the raw records are gone, the store holds them" &&
	"$GPUORCH" push --reports pr --all --prune --json >prune2.out &&
	check_json cli-push.schema.json prune2.out &&
	test "$(jq -r "[.runs[].status] | unique | join(\" \")" prune2.out)" = pruned_before
'

test_expect_success 'push --json with a run id not found: exit 1 as the text, the id in not_found' '
	test_expect_code 1 "$GPUORCH" push --reports a nonesuch --json >pushnf.out 2>pushnf.err &&
	check_json cli-push.schema.json pushnf.out &&
	test "$(jq -r ".not_found | join(\" \")" pushnf.out)" = nonesuch &&
	test "$(jq -r .exit_code pushnf.out)" = 1 && grep "^error: no run .nonesuch." pushnf.err
'

test_expect_success 'push --json with no results store: exit 2, nothing on stdout' '
	test_expect_code 2 env GPUORCH_RESULTS_STORE=none "$GPUORCH" push --reports a --all --json \
		>pushoff.out 2>pushoff.err &&
	test ! -s pushoff.out && grep "^error: no results store is configured" pushoff.err
'

test_expect_success 'pull --json: each run restored, the numbers of the text' '
	"$GPUORCH" pull --reports c $R1 >pull.txt &&
	"$GPUORCH" pull --reports d $R1 $EXP/$R2 --json >pull.out 2>pull.err &&
	cat pull.txt pull.out pull.err && check_json cli-pull.schema.json pull.out &&
	test "$(jq -r .pulled pull.out)" = 2 &&
	jq -r ".runs[] | \"\(.experiment)/\(.run_id): \(.files) files, \(.written) written, \(.already_here) already here, into \(.dir) (from \(.from))\"" pull.out >from-json &&
	test_cmp pull.err from-json &&
	sed "s/into c\//into d\//" pull.txt >from-text && head -n 1 from-json >first && test_cmp from-text first &&
	cmp pristine/$EXP/$R2/run.json d/$EXP/$R2/run.json &&
	: "a second time: all already here" &&
	"$GPUORCH" pull --reports d $R1 --json >pull2.out &&
	test "$(jq -r ".runs[0].written" pull2.out)" = 0
'

test_expect_success 'pull --json: a run not found among runs that came back: its entry failed, the exit code of the text' '
	"$GPUORCH" pull --reports e 20990101-000000-ffffff >/dev/null 2>nf.txt; want=$? &&
	test $want = 2 &&
	test_expect_code 2 "$GPUORCH" pull --reports e $R1 20990101-000000-ffffff --json >pullnf.out 2>pullnf.err &&
	cat pullnf.out && check_json cli-pull.schema.json pullnf.out &&
	test "$(jq -r .exit_code pullnf.out)" = 2 &&
	test "$(jq -r ".runs[1].status" pullnf.out)" = failed &&
	test "error: $(jq -r ".runs[1].error" pullnf.out)" = "$(tail -n 1 pullnf.err)" &&
	: "none came back: nothing on stdout" &&
	test_expect_code 2 "$GPUORCH" pull --reports e 20990101-000000-ffffff --json >pullnone.out 2>pullnone.err &&
	test ! -s pullnone.out && test_cmp nf.txt pullnone.err &&
	test_expect_code 2 "$GPUORCH" pull --reports e ../x --json >pullbad.out 2>/dev/null &&
	test ! -s pullbad.out
'

test_expect_success 'site --json: the numbers of the text line; an empty store; a bad --out' '
	git init -q repo &&
	"$GPUORCH" site --reports a --root repo --out s1 >site.txt &&
	"$GPUORCH" site --reports a --root repo --out s2 --json >site.out &&
	cat site.txt site.out && check_json cli-site.schema.json site.out &&
	test "site: $(jq .runs site.out) runs, $(jq ".experiments | length" site.out) experiment in s2 (open $(jq -r .index site.out))" = "$(sed s/s1/s2/g site.txt)" &&
	test -f "$(jq -r .index site.out)" &&
	"$GPUORCH" site --reports empty --root repo --out s3 --json >site0.out &&
	check_json cli-site.schema.json site0.out && test "$(jq .runs site0.out)" = 0 &&
	test "$(jq -c .experiments site0.out)" = "[]" &&
	test_expect_code 2 "$GPUORCH" site --reports a --root repo --out a --json >sitebad.out 2>sitebad.err &&
	test ! -s sitebad.out && grep "^error: " sitebad.err &&
	test_expect_code 2 "$GPUORCH" site --reports a --out s4 --quiet --json >siteq.out 2>siteq.err &&
	test ! -s siteq.out && grep "drop --json" siteq.err
'

test_expect_success 'init --json: the spec written and the guesses of the text' '
	mkdir -p p && (cd p && git init -q &&
	for k in $(seq 1 14); do echo "__global__ void k$k(float *a) {}"; done >kern.cuh &&
	printf "#include \"kern.cuh\"\nint main() { return 0; }\n" >m.cu && git add -A) &&
	"$GPUORCH" init --root p --name t >init.txt &&
	"$GPUORCH" init --root p --name j --json >init.out &&
	cat init.out && check_json cli-init.schema.json init.out &&
	test "$(jq -r .spec init.out)" = p/experiments/j.json && test -f p/experiments/j.json &&
	test "$(jq -r .build_system init.out)" = nvcc &&
	test "$(jq -r ".kernels | length" init.out)" = 14 &&
	grep "^  kernels        14 found" init.txt &&
	jq -r ".programs[] | \"  program        \(.name): builds \(.builds), runs \(.runs)\"" init.out >from-json &&
	grep "^  program" init.txt >from-text && test_cmp from-text from-json &&
	test "$(jq -r .next init.out)" = "gpuorch spec check p/experiments/j.json"
'

test_expect_success 'init --json when the spec exists, or no git repository: exit 2, nothing on stdout' '
	test_expect_code 2 "$GPUORCH" init --root p --name j --json >init2.out 2>init2.err &&
	test ! -s init2.out && grep "never overwrites" init2.err &&
	mkdir nogit &&
	test_expect_code 2 "$GPUORCH" init --root nogit --json >init3.out 2>init3.err &&
	test ! -s init3.out && grep "^error: " init3.err
'

test_done
