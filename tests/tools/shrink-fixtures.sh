#!/bin/sh
# shrink-fixtures.sh -- make tests/fixtures/reports and tests/fixtures/records
# small, keeping what the tests read (docs/results-store.md, "Test fixtures").
#
#   tests/tools/shrink-fixtures.sh
#
# Each run.json is changed by build/tests/fixtrim (tests/tools/fixtrim.c:
# samples_us packed by gpuorch's own writer code and read back the same,
# steps and trials no test names dropped); then gpuorch itself writes what
# derives from the records: `summarize` (summary.json, samples.txt, where
# stale) and `report` (report.md; not its charts/, which no test reads), and
# `report --check` finds none stale.
# Re-running it (the same GPUORCH) changes nothing more. Which run gets what, and why:
set -eu
cd "$(dirname "$0")/../.."
make -j2 >/dev/null
make -f Makefile -f tests/tools/tools.mk build/tests/fixtrim >/dev/null
# GPUORCH: the gpuorch that writes the summaries and reports (default
# build/gpuorch). The committed fixtures' summaries are gpuorch.summary/4,
# written by the gpuorch of a5f4344e (its build/gpuorch given here): what a
# repository committed before schema 5 holds, which readers take as it is
# (t3020 rebuilds them as 5 and diffs history)
G=${GPUORCH:?"name the gpuorch that writes the fixtures' summaries: GPUORCH=DIR/build/gpuorch, built at a5f4344e (their summaries are gpuorch.summary/4)"}
T=build/tests/fixtrim
R=tests/fixtures/reports

# runs no test names or needs: history demo keeps two runs (7b0011, f53021),
# history gemm-wgmma its gain (d498b1 -> f0aed9)
for run in demo/20261122-052114-e96cd8 demo/20261122-052210-f98e14 \
	demo/20261122-060808-fcdab1 demo/20261122-080659-d05814 \
	gemm-wgmma/20261127-052038-21c15e; do
	rm -rf "${R:?}/$run"
done

# kept in the plain samples_us form, a reader of both forms stays tested:
# attention-tools e482d1 (test_jsonlean: 13 blocks), demo 7b0011 and f53021
# (untouched: t3030's compare and history, t3020's 2,000 copies and its
# unsorted samples.txt), attention-forward b8cc6a and 168f14 (t3021 plants
# samples in the first three arrays of the one, a sample in the other).
# b8cc6a keeps its benchmarks and builds: t3042 compares it with c75786
# against the output of the code before sweeps were compared
$T --plain --max correctness=0 --max sanitize=0 --max profile=0 --max sweep=0 --builds \
	$R/attention-forward/20261122-052342-b8cc6a/run.json
$T --plain --headline --max '*=0' --builds $R/attention-forward/20261122-054830-168f14/run.json

# history reads a run's headline step alone (t3050-compare-verdicts: the six
# attention-forward points; t3020: bsr-wgmma's gain); --builds: the builds of
# variants no step left uses go too
$T --headline --max '*=0' --builds \
	$R/attention-forward/20261122-080745-933efc/run.json \
	$R/attention-forward/20261123-074847-a0fdc6/run.json \
	$R/attention-forward/20261124-003603-ca76eb/run.json

# compare reads benchmark and sweep steps and builds: t3042 (attention-forward
# b8cc6a and c75786 as before sweeps were compared; bsr-wgmma's 26 variant
# rows), t3050-compare-verdicts (the figures of the H100 and H200 runs of one
# commit, of two gemm-wgmma runs, their sweeps' variants counted)
$T --max correctness=0 --max sanitize=0 --max profile=0 --builds \
	$R/attention-forward/20261122-055410-c75786/run.json $R/bsr-wgmma/*/run.json
$T --max correctness=0 --max sanitize=0 --max profile=0 --builds \
	$R/attention-wgmma/20261126-200027-3276e7/run.json \
	$R/attention-wgmma/20261126-205909-837be4/run.json \
	$R/gemm-wgmma/20261127-174947-2aa865/run.json $R/gemm-wgmma/20261127-184255-d498b1/run.json

# t3050-peaks and t3050-report-truth read the reports of these two at the
# headline problem (sdpa_flash against its baseline, attn_wgmma's % of peak)
$T --problem B4-H16-S4096-D128 --max sanitize=0 --max sweep=0 --trials 2 --builds \
	$R/attention-wgmma/20261127-023843-977378/run.json \
	$R/attention-wgmma/20261127-211354-fbd6c4/run.json

# t3050-report-hostile renders every section: every benchmark (the medians
# charts, f0aed9's headline: t3020's gemm-wgmma history gain) and build (the
# kernel table and its alerts), one or two steps of the other kinds
$T --max sweep=4 --max correctness=1 --max sanitize=1 --max profile=1 --trials 1 \
	$R/gemm-wgmma/20261127-224959-f0aed9/run.json \
	$R/attention-mma/20261123-212031-a14f67/run.json
$T --trials 2 $R/slurm-gpu-tools/20261127-234049-4fddef/run.json \
	$R/cloud-moto/20261124-010435-e42387/run.json
# t3030 compares and reads the reports of these at M64-N64-K16
$T --problem M64-N64-K16 --trials 2 --builds $R/wgmma-tile/*/run.json
# attention-tools stays plain (above); its trials go (t3050-report-truth
# counts its gates, builds and skipped steps, not trials)
$T --plain --trials 2 $R/attention-tools/20261122-080919-e482d1/run.json

# test_jsonlean: a record gpuorch wrote with packed samples (every one kept)
$T --max benchmark=3 --max '*=1' --trials 2 tests/fixtures/records/packed-samples.run.json

$G summarize --reports $R
for d in "$R"/*/*/; do
	d=${d%/}
	$G report "${d##*/}" --reports $R >/dev/null
	# the charts report writes beside report.md: no test reads them
	rm -rf "$d/charts"
done
$G report --check --reports $R
du -sb tests/fixtures $R tests/fixtures/records
