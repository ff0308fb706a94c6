#!/bin/sh
test_description='run records against their JSON Schemas (docs/schema/, scripts/check-records.sh): the fixture runs and what reports/ keeps in git pass, a planted defect is named'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/runlib.sh"

CHECK="$SRCDIR/scripts/check-records.sh"
GPUORCH_RECORDS_UNCHECKED='this file plants broken records on purpose'
if ! /usr/bin/python3 -c "import jsonschema" 2>/dev/null && ! python3 -c "import jsonschema" 2>/dev/null; then
	test_skip 'record schema checks' 'no python3 with jsonschema (scripts/deps.sh --tests installs python3-jsonschema)'
	test_done
fi

test_expect_success 'every fixture run.json and summary.json matches its schema' '
	fixture_runs committed &&
	n=$(find committed -name run.json | wc -l) && test "$n" -ge 1 &&
	"$CHECK" committed >out 2>&1 || { cat out; false; } &&
	test_grep "^records: ok ($n run.json, $n summary.json)$" out
'

# reports/ keeps a summary per run in git (its raw record is in the results
# store: docs/results-store.md); a run.json there is a run not pushed yet
test_expect_success 'the summaries (and any run.json) git keeps under reports/ match their schemas' '
	mkdir -p kept &&
	if git -C "$SRCDIR" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		(cd "$SRCDIR/reports" && git ls-files -z -- "*/summary.json" "*/run.json" | tar --null -T - -cf -) | tar -xf - -C kept
	else
		cp -R "$SRCDIR/reports/." kept
	fi &&
	s=$(find kept -name summary.json | wc -l) && test "$s" -ge 1 &&
	r=$(find kept -name run.json | wc -l) &&
	"$CHECK" kept >kept.out 2>&1 || { cat kept.out; false; } &&
	test_grep "^records: ok ($r run.json, $s summary.json)$" kept.out
'

test_expect_success 'git tracks no empty file and no raw record under reports/ (.gitignore, docs/results-store.md)' '
	if ! git -C "$SRCDIR" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		echo "not a git work tree: nothing tracked to check" && return 0
	fi &&
	git -C "$SRCDIR" ls-files -s -- reports >tracked &&
	: "the empty blob" &&
	! grep " e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 " tracked &&
	! grep "	reports/[^/]*/[^/]*/\(run.json\|logs/\|source.diff\|journal.jsonl\|controller.lock\)" tracked
'

# plant FIELD-EDIT: a copy of one committed record with one sed edit
plant() {
	rm -rf planted && mkdir -p planted &&
	src=$(find committed -name run.json | sort | head -n 1) &&
	sed "$1" "$src" >planted/run.json &&
	! cmp -s "$src" planted/run.json
}

test_expect_success 'an unknown top-level key, a step status outside the vocabulary, a run id of the wrong shape: each named with its path' '
	plant "s/^\t\"run_id\":/\t\"runid_typo\": 1,\n\t\"run_id\":/" &&
	test_expect_code 1 "$CHECK" planted/run.json >o1 &&
	test_grep "planted/run.json: (top): Additional properties are not allowed (.runid_typo. was unexpected)" o1 &&
	test_grep "^records: 1 problems in 1 files$" o1 &&
	plant "s/\"status\":\([[:space:]]*\)\"PASS\"/\"status\":\1\"PASSED\"/g" &&
	test_expect_code 1 "$CHECK" planted/run.json >o2 &&
	test_grep "planted/run.json: hosts/0/.*/status: .PASSED. is not one of" o2 &&
	plant "s/\"run_id\":[[:space:]]*\"\([0-9]*-[0-9]*\)-[0-9a-f]*\"/\"run_id\": \"\1-XYZ\"/" &&
	test_expect_code 1 "$CHECK" planted/run.json >o3 &&
	test_grep "planted/run.json: run_id: .* does not match" o3
'

test_expect_success 'a summary.json whose of lacks its sha256 fails; a file that is not JSON is said so' '
	s=$(find committed -name summary.json | sort | head -n 1) &&
	mkdir -p sum && sed "s/\"sha256\":/\"sha_256\":/" "$s" >sum/summary.json &&
	test_expect_code 1 "$CHECK" sum >o4 &&
	test_grep "sum/summary.json: of: .sha256. is a required property" o4 &&
	mkdir -p trunc && head -c 100 "$(find committed -name run.json | sort | head -n 1)" >trunc/run.json &&
	test_expect_code 1 "$CHECK" trunc >o5 &&
	test_grep "trunc/run.json: cannot be read as JSON" o5 &&
	test_expect_code 2 "$CHECK" nosuch 2>o6 && test_grep "no such file or folder" o6
'

test_done
