#!/bin/sh
# asan: yes
test_description='push --prune moves a repository'"'"'s raw records into the results store: checked by hash before anything is removed, idempotent, a cut prune or a failing store loses nothing; a fresh clone pulls a pruned run from git history; each command on a summary-only run fetches its raw record or says how to get it'
. "$(dirname "$0")/lib/testlib.sh"
GPUORCH_RECORDS_UNCHECKED='its runs are made from tests/fixtures/runs records, older than the schema (no host start and end times)'
. "$SRCDIR/tests/lib/runlib.sh"

. "$SRCDIR/tests/lib/resultslib.sh"
GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com
export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL

# add_run REPORTS RECORD RUN-ID: a run made from a fixture record, with what
# a real run leaves: logs (one empty), a profile, a dirty tree's diff, the
# journal, and what gpuorch writes for readers (summary, samples, report, charts)
add_run() {
	d=$1/$EXP/$3 &&
	mkdir -p $d/logs/h100 $d/profiles &&
	sed "s/\"run_id\": *\"[0-9a-f-]*\"/\"run_id\": \"$3\"/" "$F/$2" >$d/run.json &&
	awk "BEGIN { for (i = 0; i < 2000; i++) print \"step\", i, \"median_us\", i % 97 }" >$d/logs/h100/bench.stdout &&
	: >$d/logs/h100/bench.stderr &&
	head -c 20000 /dev/urandom >$d/profiles/kernel.ncu-rep &&
	echo "diff --git a/k.cu b/k.cu ($3)" >$d/source.diff &&
	echo "{}" >$d/journal.jsonl &&
	printf "#!/bin/sh\necho hi\n" >$d/logs/rerun.sh && chmod 755 $d/logs/rerun.sh &&
	"$GPUORCH" runs --reports $1 >/dev/null &&
	"$GPUORCH" report --reports $1 $3 >/dev/null &&
	test -f $d/summary.json && test -f $d/report.md
}

# files DIR: the files under DIR, sorted, relative to it
files() {
	(cd "$1" && find . -type f | sed "s:^\./::" | sort)
}

test_expect_success 'setup: a repository that committed three runs whole' '
	git init -q repo &&
	add_run repo/reports pass-2host.json $R1 &&
	add_run repo/reports failed-host.json $R2 &&
	add_run repo/reports pass-2host.json $R3 &&
	(cd repo && git add -A && git commit -qm "three runs, raw records and all") &&
	cp -R repo/reports pristine &&
	files pristine/$EXP/$R1 >all-files && cat all-files &&
	test_grep "^run.json$" all-files && test_grep "^logs/h100/bench.stderr$" all-files
'

test_expect_success 'push --prune: every raw file checked in the store, then removed; the reader'"'"'s files stay' '
	"$GPUORCH" push --prune --all --reports repo/reports >prune1.out 2>&1 &&
	cat prune1.out &&
	test_grep "^pushed 3 runs to $TRASH/store" prune1.out &&
	test_grep "^pruned 3 runs: " prune1.out &&
	for r in $R1 $R2 $R3; do
		test -f store/runs/$r/$EXP.json &&
		files repo/reports/$EXP/$r >left-$r &&
		: "the reader keeps the report, its charts, the summary and the samples; nothing else" &&
		! grep -v "^report.md$\|^summary.json$\|^samples.txt$\|^charts/" left-$r &&
		test_grep "^report.md$" left-$r && test_grep "^summary.json$" left-$r &&
		test ! -d repo/reports/$EXP/$r/logs || return 1
	done &&
	n=$(($(wc -l <all-files) - $(wc -l <left-$R1))) &&
	test_grep "^$EXP/$R1: pruned $n raw files" prune1.out &&
	: "what was removed comes back byte-identical" &&
	"$GPUORCH" pull --reports back $R1 >pull1.out && cat pull1.out &&
	same_tree pristine/$EXP/$R1 back/$EXP/$R1
'

test_expect_success 'a second push --prune changes nothing, in the store or the reports' '
	find store -type f -exec touch -d "2001-01-01" {} + && touch -d "2001-01-01" marker &&
	files repo/reports >before &&
	"$GPUORCH" push --prune --all --reports repo/reports >prune2.out 2>&1 &&
	cat prune2.out &&
	test_grep "^pushed 0 runs to .*: 0 new objects, 0 bytes" prune2.out &&
	test_grep "^pruned 3 runs: 0 raw files removed (0 bytes)" prune2.out &&
	files repo/reports >after && test_cmp before after &&
	test -z "$(find store -type f -newer marker)"
'

test_expect_success 'runs, history, site and report --check work on the summaries alone, writing no raw file' '
	"$GPUORCH" runs --reports repo/reports >runs.out && cat runs.out &&
	for r in $R1 $R2 $R3; do test_grep "^$r " runs.out || return 1; done &&
	"$GPUORCH" history --reports repo/reports $EXP >hist.out 2>&1 && cat hist.out &&
	test_grep "$R3" hist.out && ! grep -i fetched hist.out &&
	"$GPUORCH" site --reports repo/reports --out site --quiet &&
	test -f site/run/$EXP/$R1/index.html &&
	"$GPUORCH" report --check --reports repo/reports >check.out 2>&1 && cat check.out &&
	test_grep "^3 reports checked, 0 stale" check.out &&
	test -z "$(find repo/reports -name run.json -o -name logs)"
'

test_expect_success 'a store that fails mid-way: that run keeps every file, the others are pruned' '
	rm -rf repo2 && cp -R pristine repo2 &&
	: "run 2 one object of which cannot be written (a directory holds its name)" &&
	h=$(sha256sum repo2/$EXP/$R2/source.diff | cut -d" " -f1) &&
	mkdir -p store2/objects/$(echo $h | cut -c1-2)/$h &&
	test_expect_code 1 env GPUORCH_RESULTS_STORE=$TRASH/store2 "$GPUORCH" push --prune --all --reports repo2 >fail.out 2>&1 &&
	cat fail.out &&
	test_grep "error: run $EXP/$R2: " fail.out &&
	test_grep "^pruned 2 runs: " fail.out &&
	same_tree pristine/$EXP/$R2 repo2/$EXP/$R2 &&
	test ! -e store2/runs/$R2 &&
	test ! -e repo2/$EXP/$R1/run.json && test ! -e repo2/$EXP/$R3/run.json &&
	: "the store mended, the same command finishes the job" &&
	rmdir store2/objects/$(echo $h | cut -c1-2)/$h &&
	env GPUORCH_RESULTS_STORE=$TRASH/store2 "$GPUORCH" push --prune --all --reports repo2 >fail2.out 2>&1 &&
	test_grep "^pruned 3 runs: " fail2.out && test ! -e repo2/$EXP/$R2/run.json
'

test_expect_success 'never prunes what the store does not hold: no manifest, a file not in it, a file that differs' '
	rm -rf repo3 && cp -R pristine repo3 &&
	: "a run directory without run.json (cut before) whose run no store has" &&
	rm repo3/$EXP/$R1/run.json && cp -R repo3/$EXP/$R1 keep1 &&
	test_expect_code 1 env GPUORCH_RESULTS_STORE=$TRASH/store3 "$GPUORCH" push --prune --reports repo3 $R1 >none.out 2>&1 &&
	cat none.out &&
	test_grep "error: run $EXP/$R1: the results store $TRASH/store3 does not hold run $EXP/$R1: nothing removed (push it first" none.out &&
	same_tree keep1 repo3/$EXP/$R1 &&
	: "a log written after the push, and a log changed after it: each refused, nothing removed" &&
	cp -R pristine/$EXP/$R2 r2 && mkdir -p repo4/$EXP && cp -R r2 repo4/$EXP/$R2 &&
	"$GPUORCH" push --reports repo4 $R2 >/dev/null &&
	rm repo4/$EXP/$R2/run.json && echo late >repo4/$EXP/$R2/logs/late.txt &&
	cp -R repo4/$EXP/$R2 keep2 &&
	test_expect_code 1 "$GPUORCH" push --prune --reports repo4 $R2 >late.out 2>&1 && cat late.out &&
	test_grep "logs/late.txt. is not in the results store.s copy of the run: nothing removed" late.out &&
	same_tree keep2 repo4/$EXP/$R2 &&
	rm repo4/$EXP/$R2/logs/late.txt && echo changed >>repo4/$EXP/$R2/logs/h100/bench.stdout &&
	test_expect_code 1 "$GPUORCH" push --prune --reports repo4 $R2 >diff.out 2>&1 &&
	test_grep "bench.stdout. is not the same as the results store.s copy" diff.out &&
	test -f repo4/$EXP/$R2/logs/h100/bench.stdout && test -f repo4/$EXP/$R2/source.diff
'

test_expect_success 'a prune cut after run.json went: the next one finishes it, and pull restores the whole run' '
	rm -rf repo5 && cp -R pristine repo5 &&
	"$GPUORCH" push --reports repo5 $R3 >/dev/null &&
	: "what a prune killed between its removals leaves: run.json and part of the raw files gone" &&
	rm repo5/$EXP/$R3/run.json repo5/$EXP/$R3/source.diff &&
	"$GPUORCH" push --prune --reports repo5 $EXP/$R3 >cut.out 2>&1 && cat cut.out &&
	test_grep "^$EXP/$R3: pruned" cut.out &&
	files repo5/$EXP/$R3 >left5 && test_cmp left-$R3 left5 &&
	"$GPUORCH" pull --reports repo5 $R3 >pull5.out && cat pull5.out &&
	same_tree pristine/$EXP/$R3 repo5/$EXP/$R3
'

test_expect_success 'a live run (its controller holds the lock) is neither pushed nor pruned' '
	rm -rf repo6 && mkdir -p repo6/$EXP && cp -R pristine/$EXP/$R1 repo6/$EXP/ &&
	: >repo6/$EXP/$R1/controller.lock &&
	{ flock repo6/$EXP/$R1/controller.lock sleep 60 & } &&
	holder=$! &&
	test_when_finished "kill $holder" &&
	n=0 && until ! flock -n repo6/$EXP/$R1/controller.lock true; do n=$((n + 1)); test $n -lt 500 || return 1; sleep 0.1; done &&
	test_expect_code 1 "$GPUORCH" push --prune --all --reports repo6 >live.out 2>&1 && cat live.out &&
	test_grep "skipping run $EXP/$R1: it is still running" live.out &&
	test -f repo6/$EXP/$R1/run.json
'

test_expect_success 'a fresh clone of the pruned repository pulls a run from git history, with no store' '
	(cd repo && git add -A && git commit -qm "raw records moved to the results store") &&
	(cd repo && git ls-files reports) >tracked && ! grep "run.json\|/logs/\|source.diff\|journal" tracked &&
	git clone -q repo clone &&
	(cd clone && GPUORCH_RESULTS_STORE=none "$GPUORCH" pull --reports reports $R1) >git-pull.out 2>&1 &&
	cat git-pull.out &&
	c=$(cd repo && git rev-parse HEAD~1 | cut -c1-12) &&
	test_grep "^$EXP/$R1: .* written, .* already here, into .*from the repository.s history (commit $c)" git-pull.out &&
	: "git keeps the executable bit, not the rest of the mode: the bytes and that bit" &&
	diff -r pristine/$EXP/$R1 clone/reports/$EXP/$R1 &&
	test -x clone/reports/$EXP/$R1/logs/rerun.sh &&
	: "--store git reads the history alone; a run no commit holds is said so" &&
	(cd clone && "$GPUORCH" pull --reports reports --store git $EXP/$R2) >git2.out && test -f clone/reports/$EXP/$R2/run.json &&
	(cd clone && test_expect_code 2 "$GPUORCH" pull --reports reports --store git 20990101-000000-ffffff) >git3.out 2>&1 &&
	test_grep "run 20990101-000000-ffffff is not in the repository.s history: no commit" git3.out
'

test_expect_success 'in a fresh clone report and compare fetch the raw record from git history on demand' '
	rm -rf clone2 && git clone -q repo clone2 &&
	(cd clone2 && GPUORCH_RESULTS_STORE=$TRASH/empty "$GPUORCH" report --reports reports $R3) >rep.out 2>rep.err &&
	cat rep.err &&
	test_grep "fetched run $R3.s raw record from the repository.s history" rep.err &&
	cmp pristine/$EXP/$R3/run.json clone2/reports/$EXP/$R3/run.json &&
	(cd clone2 && GPUORCH_RESULTS_STORE=$TRASH/empty test_might_fail "$GPUORCH" compare --reports reports $R1 $R3) >cmp.out 2>cmp.err &&
	cat cmp.err && test_grep "fetched run $R1.s raw record from the repository.s history" cmp.err &&
	test_grep "$R3" cmp.out &&
	: "what it fetched is new to the work tree; no tracked file changed" &&
	(cd clone2 && git status --porcelain) >st && cat st &&
	test_grep "^?? reports/$EXP/$R3/run.json" st && ! grep -v "^??" st
'

test_expect_success 'a summary-only run that no store and no history has: report, compare, reproduce and report --check say how to get it' '
	rm -rf thin && cp -R repo/reports thin &&
	for c in "report $R1" "compare $R1 $R2" "reproduce $R1 --hosts $SRCDIR/tests/fixtures/hosts/valid.json"; do
		test_must_fail env GPUORCH_RESULTS_STORE=$TRASH/empty "$GPUORCH" $c --reports thin >c.out 2>&1 &&
		cat c.out &&
		test_grep "run $R1.s raw record is not here (thin/$EXP/$R1 has only its summary): run $EXP/$R1 is not in the results store $TRASH/empty; nor is it in the repository.s history (.thin. is in no git work tree with commits). Get it with .gpuorch pull $R1 --store STORE." c.out || return 1
	done &&
	test_expect_code 1 env GPUORCH_RESULTS_STORE=$TRASH/empty "$GPUORCH" report --check --reports thin >chk.out 2>&1 &&
	cat chk.out &&
	test_grep "^unreadable: thin/$EXP/$R1: its raw record is not here (only its summary) and could not be read: .*gpuorch pull $EXP/$R1" chk.out &&
	test_grep "^3 reports checked, 3 stale" chk.out &&
	test -z "$(find thin -name run.json)"
'

test_done
