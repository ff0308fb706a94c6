#!/bin/sh
# cost: 35
# asan: yes
test_description='reproduce, compare, history and find on a scratch git history with a planted slowdown'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'reproduce tests'

# commit MSG: commit everything staged and tracked in proj
commit() {
	(cd proj && git add -A && git commit -qm "$1" && git rev-parse HEAD)
}

# rev N: the commit recorded as number N of the chain
rev() {
	sed -n "$(($1 + 1))p" "$TRASH/chain"
}

run_count() {
	ls -d "$TRASH"/reports/cpu/*/ 2>/dev/null | wc -l
}

test_expect_success 'setup: one host, and a chain of 9 commits, the 6th 10x slower' '
	sshd_start a &&
	sshd_write_hosts_json hosts.json a &&
	project_init &&
	cat >proj/experiments/cpu.json <<-\JSON &&
	{"schema": 1, "name": "cpu", "phase": "CPU busy loop",
	 "sources": ["cpu/cputimer.c"],
	 "targets": {"H100": "sm_90a"},
	 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
	 "problems": [{"name": "w20k", "params": {"work": 20000, "reps": 25}}],
	 "steps": [{"kind": "correctness", "program": "cputimer", "timeout_s": 60},
	           {"kind": "benchmark", "program": "cputimer", "timeout_s": 60}]}
	JSON
	commit "cpu experiment" >chain &&
	for i in 1 2 3 4; do
		echo "note $i" >>proj/notes.txt && commit "note $i" >>chain || return 1
	done &&
	sed "s/^	if (reps < 1 || reps > 1000)/	work *= 10; \/* planted slowdown *\/\n&/" \
		proj/cpu/cputimer.c >slow.c && mv slow.c proj/cpu/cputimer.c &&
	grep "planted slowdown" proj/cpu/cputimer.c &&
	commit "cputimer: more work" >>chain &&
	for i in 6 7 8; do
		echo "note $i" >>proj/notes.txt && commit "note $i" >>chain || return 1
	done &&
	test $(wc -l <chain) = 9
'

test_expect_success 'every new command answers -h' '
	for c in reproduce compare history find; do
		"$GPUORCH" $c -h >help.out && grep "^usage: gpuorch $c" help.out || return 1
	done
'

test_expect_success 'find names the commit that made the figure slower' '
	# --factor 3 here and below: the planted step is 10x, and noise (up to 1.4x seen) on a
	# loaded CPU must not make a fast commit "bad"
	(cd proj && "$GPUORCH" find "$(rev 0)..$(rev 8)" cpu --hosts ../hosts.json \
		--spec experiments/cpu.json --factor 3) >find.out 2>find.err &&
	grep "^first slower commit: $(rev 5) cputimer: more work" find.out &&
	grep "evidence: cputimer w20k median" find.out &&
	grep "bad (slower)" find.out && grep "good (same as GOOD)" find.out &&
	test $(run_count) -le 6
'

test_expect_success 'find again reuses the recorded runs: nothing is run' '
	before=$(run_count) &&
	(cd proj && "$GPUORCH" find "$(rev 0)..$(rev 8)" cpu --hosts ../hosts.json --factor 3) >find2.out 2>&1 &&
	grep "^first slower commit: $(rev 5)" find2.out &&
	grep "(recorded)" find2.out &&
	! grep "find: measuring" find2.out &&
	test $(run_count) = $before
'

test_expect_success 'find over runs whose raw records are in the results store: fetched on demand, or said missing' '
	rm -rf thin && cp -R "$TRASH/reports" thin &&
	n=$(ls -d thin/cpu/*/ | wc -l) &&
	"$GPUORCH" push --prune --all --reports thin --store "$TRASH/rstore" >prune.out &&
	test_grep "^pruned $n runs" prune.out && test -z "$(find thin -name run.json)" &&
	(cd proj && test_must_fail env GPUORCH_RESULTS_STORE="$TRASH/empty" GPUORCH_REPORTS="$TRASH/thin" \
		"$GPUORCH" find "$(rev 0)..$(rev 8)" cpu --hosts ../hosts.json --factor 3) >find3.out 2>&1 &&
	cat find3.out &&
	test_grep "raw record is not here (.*has only its summary): .*Get it with .gpuorch pull " find3.out &&
	! grep "find: measuring" find3.out &&
	(cd proj && GPUORCH_RESULTS_STORE="$TRASH/rstore" GPUORCH_REPORTS="$TRASH/thin" \
		"$GPUORCH" find "$(rev 0)..$(rev 8)" cpu --hosts ../hosts.json --factor 3) >find4.out 2>&1 &&
	cat find4.out &&
	test_grep "^fetched run .* raw record from the results store $TRASH/rstore" find4.out &&
	grep "^first slower commit: $(rev 5)" find4.out && grep "(recorded)" find4.out &&
	! grep "find: measuring" find4.out &&
	test "$(ls -d thin/cpu/*/ | wc -l)" = $n
'

test_expect_success 'find --json: the result and the evidence table of the text' '
	(cd proj && "$GPUORCH" find "$(rev 0)..$(rev 8)" cpu --hosts ../hosts.json --factor 3 \
		--json) >fj.out 2>fj.err &&
	"$SRCDIR/scripts/check-json.sh" cli-find.schema.json fj.out &&
	test "$(jq -r .result fj.out)" = found && test "$(jq -r .exit_code fj.out)" = 0 &&
	test "$(jq -r .first fj.out)" = "$(rev 5)" &&
	grep "^first $(jq -r .direction fj.out) commit: $(jq -r .first fj.out) " fj.err &&
	grep "^| " fj.err | sed 1d >rows.text &&
	jq -r ".points[] | \"\(.commit[0:12]) \(.run // \"-\") \(.state_text)\"" fj.out >rows.json &&
	sed "s/^| \([0-9a-f]*\) | [^|]* | \([^ |]*\)[^|]* | .* | \([^|:]*\)[^|]* |$/\1 \2 \3/; s/ *$//" rows.text >rows.text2 &&
	test_cmp rows.text2 rows.json
'

test_expect_success 'find --json: nothing to find is exit 1 and result nothing; a bad range prints nothing' '
	(cd proj && test_expect_code 1 "$GPUORCH" find "$(rev 0)..$(rev 4)" cpu --hosts ../hosts.json \
		--factor 3 --json) >fjs.out 2>fjs.err &&
	"$SRCDIR/scripts/check-json.sh" cli-find.schema.json fjs.out &&
	test "$(jq -r .result fjs.out)" = nothing && grep "nothing to find" fjs.err &&
	(cd proj && test_expect_code 2 "$GPUORCH" find "$(rev 0)" cpu --hosts ../hosts.json --json) \
		>fjr.out 2>fjr.err &&
	test ! -s fjr.out && grep "not a range" fjr.err
'

test_expect_success 'find: BAD no different from GOOD exits 1; a bad range exits 2' '
	(cd proj && test_expect_code 1 "$GPUORCH" find "$(rev 0)..$(rev 4)" cpu --hosts ../hosts.json \
		--factor 3) >same.out 2>&1 &&
	grep "nothing to find" same.out &&
	(cd proj && test_expect_code 2 "$GPUORCH" find "$(rev 0)" cpu --hosts ../hosts.json) 2>range.err &&
	grep "not a range" range.err
'

find_run() {
	# the id of the recorded run of cpu at commit $1
	for _r in "$TRASH"/reports/cpu/*/; do
		if [ "$(jq_ $_r/run.json provenance.git.commit)" = "$1" ]; then
			basename "$_r"
			return 0
		fi
	done
	return 1
}

test_expect_success 'compare: the slow commit is slower (exit 1), the reverse faster (exit 0)' '
	A=$(find_run $(rev 0)) && B=$(find_run $(rev 8)) && test -n "$A" && test -n "$B" &&
	test_expect_code 1 "$GPUORCH" compare $A $B >cmp.out &&
	grep "cputimer w20k" cmp.out | grep "\*\*slower\*\*" &&
	grep "REGRESSION" cmp.out &&
	"$GPUORCH" compare $B $A --output cmp.md >cmp2.out &&
	grep "\*\*faster\*\*" cmp2.out && grep "no regression" cmp.md &&
	"$GPUORCH" compare $A $B --factor 20 >cmp3.out &&
	grep "\*\*same\*\*" cmp3.out && grep "within the factor" cmp3.out
'

test_expect_success 'compare: --pair, unknown runs and nothing in common exit 2' '
	test_expect_code 2 "$GPUORCH" compare $A nosuchrun 2>e1 && grep nosuchrun e1 &&
	test_expect_code 2 "$GPUORCH" compare $A $B --pair x:y 2>e2 && grep "in common" e2 &&
	test_expect_code 2 "$GPUORCH" compare $A $B --factor 0.5 2>e3 && grep "factor" e3 &&
	"$GPUORCH" compare $A $A --pair cputimer:cputimer >pair.out &&
	grep "cputimer vs cputimer w20k" pair.out && grep "\*\*same\*\*" pair.out
'

test_expect_success 'reproduce a recorded run at its commit; the dirty work tree is untouched' '
	echo "/* local edit */" >>proj/cpu/cputimer.c &&
	(cd proj && git status --porcelain && sha256sum cpu/cputimer.c) >tree.before &&
	(cd proj && "$GPUORCH" reproduce $A --hosts ../hosts.json --factor 3) >rep.out 2>rep.err &&
	(cd proj && git status --porcelain && sha256sum cpu/cputimer.c) >tree.after &&
	test_cmp tree.before tree.after &&
	rep=$(sed -n "s/^reproduction: //p" rep.out) && test -f "$rep" &&
	new=$(dirname "$rep") &&
	test "$(jq_ $new/run.json provenance.content_id)" = "$(jq_ reports/cpu/$A/run.json provenance.content_id)" &&
	test "$(jq_ $new/run.json provenance.git.commit)" = "$(rev 0)" &&
	test "$(jq_ $new/run.json provenance.source)" = commit &&
	grep "^\*\*REPRODUCED\*\*" "$rep" && grep "identical to the recorded" "$rep" &&
	grep "\*\*reproduced\*\*" "$rep"
'

test_expect_success 'reproduce --commit REV EXPERIMENT finds the recorded run there' '
	(cd proj && "$GPUORCH" reproduce --commit $(rev 8) cpu --hosts ../hosts.json --factor 3) >rc.out 2>&1 &&
	grep "reproducing run $B" rc.out && grep "REPRODUCED" rc.out &&
	(cd proj && test_expect_code 2 "$GPUORCH" reproduce --commit $(rev 2) cpu --hosts ../hosts.json) 2>none.err &&
	grep "no complete run of .cpu. at commit" none.err
'

test_expect_success 'reproduce --json: the verdict of reproduction.md, valid against its schema' '
	(cd proj && "$GPUORCH" reproduce $A --hosts ../hosts.json --factor 3 --json) >rj.out 2>rj.err &&
	"$SRCDIR/scripts/check-json.sh" cli-reproduce.schema.json rj.out &&
	test "$(jq -r .verdict rj.out)" = reproduced && test "$(jq -r .exit_code rj.out)" = 0 &&
	test "$(jq -r .recorded_run rj.out)" = "$A" && test "$(jq -r .faithful rj.out)" = true &&
	rep=$(jq -r .reproduction rj.out) && test -f "$rep" &&
	test "$(dirname "$rep")" = "$(jq -r .rerun_dir rj.out)" &&
	grep "^reproduction: $rep$" rj.err &&
	grep "^\*\*REPRODUCED\*\*: $(jq -r .figures.reproduced rj.out) of $(jq -r .figures.total rj.out) figure" "$rep" &&
	test "$(jq -r ".comparison.rows | length" rj.out)" = "$(jq -r .figures.total rj.out)"
'

test_expect_success 'reproduce --json with no such run: exit 2, nothing on stdout' '
	(cd proj && test_expect_code 2 "$GPUORCH" reproduce 19990101-000000-000000 --hosts ../hosts.json \
		--json) >rjn.out 2>rjn.err &&
	test ! -s rjn.out && grep "^error: " rjn.err
'

test_expect_success 'reproduce against a faster record: not reproduced, exit 1' '
	mkdir -p reports/cpu/20990101-000000-aaaaaa &&
	sed "s/\"run_id\":[[:space:]]*\"$B\"/\"run_id\": \"20990101-000000-aaaaaa\"/" reports/cpu/$B/run.json |
		sed "s/\"commit\":[[:space:]]*\"$(rev 8)\"/\"commit\": \"$(rev 0)\"/" >reports/cpu/20990101-000000-aaaaaa/run.json &&
	(cd proj && test_expect_code 1 "$GPUORCH" reproduce 20990101-000000-aaaaaa --hosts ../hosts.json) >slow.out 2>&1 &&
	grep "NOT REPRODUCED" slow.out && grep "\*\*faster\*\*" slow.out &&
	(cd proj && test_expect_code 1 "$GPUORCH" reproduce 20990101-000000-aaaaaa --hosts ../hosts.json \
		--json) >slow.json 2>slow.err &&
	"$SRCDIR/scripts/check-json.sh" cli-reproduce.schema.json slow.json &&
	test "$(jq -r .verdict slow.json)" = not_reproduced && test "$(jq -r .exit_code slow.json)" = 1 &&
	grep "^\*\*NOT REPRODUCED\*\*: $(jq -r .figures.reproduced slow.json) of" slow.err &&
	rm -rf reports/cpu/20990101-000000-aaaaaa
'

test_expect_success 'reproduce says when no host has the recorded GPU, and names the closest' '
	mkdir -p reports/cpu/20990101-000000-bbbbbb &&
	sed "s/\"gpu_name\":[[:space:]]*null/\"gpu_name\": \"NVIDIA H100 80GB HBM3\"/; s/\"compute_cap\":[[:space:]]*null/\"compute_cap\": \"9.0\"/; s/\"run_id\":[[:space:]]*\"$A\"/\"run_id\": \"20990101-000000-bbbbbb\"/" \
		reports/cpu/$A/run.json >reports/cpu/20990101-000000-bbbbbb/run.json &&
	before=$(run_count) &&
	(cd proj && test_expect_code 3 "$GPUORCH" reproduce 20990101-000000-bbbbbb --hosts ../hosts.json) 2>gpu.err &&
	grep "no host in .* has NVIDIA H100 80GB HBM3" gpu.err &&
	grep "closest: .a." gpu.err &&
	test $(run_count) = $before &&
	rm -rf reports/cpu/20990101-000000-bbbbbb
'

test_expect_success 'a run from a dirty tree is reproduced with its recorded diff, in a scratch worktree' '
	(cd proj && "$GPUORCH" run experiments/cpu.json --hosts ../hosts.json) >dirty.out 2>&1 &&
	D=$(basename $(last_run_dir)) &&
	test "$(jq_ reports/cpu/$D/run.json provenance.git.dirty)" = true &&
	test -f reports/cpu/$D/source.diff &&
	echo "$D" >dirty.id &&
	(cd proj && "$GPUORCH" reproduce $D --hosts ../hosts.json --factor 3) >rd.out 2>&1 || { cat rd.out; false; } &&
	rep=$(sed -n "s/^reproduction: //p" rd.out) &&
	test "$(jq_ $(dirname $rep)/run.json provenance.content_id)" = "$(jq_ reports/cpu/$D/run.json provenance.content_id)" &&
	grep "recorded source.diff was applied" "$rep" &&
	test "$(cd proj && git worktree list | wc -l)" = 1 &&
	(cd proj && git status --porcelain && sha256sum cpu/cputimer.c) >tree.after2 &&
	test_cmp tree.before tree.after2
'

test_expect_success 'a dirty run is its commit and its diff: a source.diff that does not hash to the recorded diff_sha256 is not the same sources (NOT REPRODUCED)' '
	# the dirty run of the test above (not its reproduction: both are dirty,
	# and in one second their ids sort by their random suffix)
	D=$(cat dirty.id) &&
	test -n "$D" && T=20991231-000000-d1ff00 && cp -R reports/cpu/$D reports/cpu/$T &&
	rm -f reports/cpu/$T/summary.json &&
	sed -i -e "s/\"run_id\":[[:space:]]*\"[0-9a-f-]*\"/\"run_id\": \"$T\"/" \
	       -e "s/\"diff_sha256\":[[:space:]]*\"[0-9a-f]*\"/\"diff_sha256\": \"$(printf %064d 0)\"/" reports/cpu/$T/run.json &&
	(cd proj && test_expect_code 1 "$GPUORCH" reproduce $T --hosts ../hosts.json --factor 3) >rt.out 2>&1 ||
		{ cat rt.out; false; } &&
	grep "reproducing run $T (commit [0-9a-f]* + its recorded diff 000000000000)" rt.out &&
	rep=$(sed -n "s/^reproduction: //p" rt.out) &&
	grep "^\*\*NOT REPRODUCED\*\*: .*; the rerun is not of the same sources or spec\.$" "$rep" &&
	grep "The recorded source.diff has sha256 $(sha256sum reports/cpu/$D/source.diff | cut -c1-12), not the 000000000000 the run recorded" "$rep" &&
	rm -rf reports/cpu/$T $(dirname $rep)
'

test_expect_success 'history: a table in commit order and an SVG chart with the step marked' '
	(cd proj && git checkout -q cpu/cputimer.c) &&
	# --factor 3: the planted step is 10x; run-to-run noise on a loaded CPU
	# between two slow commits must not count as a step (history exits 1 then)
	(cd proj && test_expect_code 0 "$GPUORCH" history cpu --factor 3) >hist.out 2>hist.err &&
	cat hist.out hist.err reports/cpu/history.md &&
	test -f reports/cpu/history.md && test -f reports/cpu/history.svg &&
	grep "!\[history chart\](history.svg)" reports/cpu/history.md &&
	test $(grep -c "^| [0-9]" reports/cpu/history.md) -ge 5 &&
	grep "cputimer: more work" reports/cpu/history.md | grep "regression" &&
	grep "<svg" reports/cpu/history.svg && grep "regression" reports/cpu/history.svg &&
	grep ">$(rev 5 | cut -c1-7)<" reports/cpu/history.svg &&
	first=$(grep -n "^| [0-9]" reports/cpu/history.md | head -1) &&
	echo "$first" | grep "$(rev 0 | cut -c1-7)" &&
	if test_have_cmd rsvg-convert; then
		rsvg-convert -o hist.png reports/cpu/history.svg && test -s hist.png
	fi &&
	test_expect_code 2 "$GPUORCH" history nosuch 2>h.err && grep "no complete run" h.err
'

test_done
