# shellcheck shell=sh
# runlib.sh -- helpers for the `gpuorch run` tests: a scratch project copied
# from tests/fixtures/project, hosts from tests/lib/sshd.sh, JSON queries.
#
#   project_init            copy the fixture project into $TRASH/proj (a git repo)
#   jq_ FILE PATH [--len]   print a value of a JSON file (build/tests/jsonq)
#   last_run_dir            the newest run directory under $TRASH/reports
#   nvcc_path               print the nvcc that a host would find, or fail
#   run_requires_sshd_nvcc WHAT   skip the whole file unless sshd and nvcc are here

JSONQ=${JSONQ:-$SRCDIR/build/tests/jsonq}
GPUORCH_REPORTS=$TRASH/reports
export GPUORCH_REPORTS
# the controller's kept probes (orchestrator/remote/probecache.h) stay here
GPUORCH_CACHE_DIR=$TRASH/cache
export GPUORCH_CACHE_DIR

jq_() {
	"$JSONQ" "$@"
}

project_init() {
	rm -rf "$TRASH/proj" &&
	cp -R "$SRCDIR/tests/fixtures/project" "$TRASH/proj" &&
	(cd "$TRASH/proj" && git init -q && git config user.email t@example.com &&
	 git config user.name test && git add -A && git commit -qm "fixture project")
}

# fixture_runs DEST: a copy of tests/fixtures/reports, the runs the tests
# read (small copies of runs this repository recorded on real GPUs, chosen
# by the tests that name them: their run.json, summary.json, samples.txt and
# report.md; logs, profiles and diffs left out; made by
# tests/tools/shrink-fixtures.sh, docs/results-store.md). Never the live reports/:
# it grows with every run, and keeps only summaries once its raw records
# are in the results store (docs/results-store.md)
fixture_runs() {
	rm -rf "$1" && mkdir -p "$1" && cp -R "$SRCDIR/tests/fixtures/reports/." "$1"
}

# run_step RUN ID FIELD: a field of the first host's step with that id
run_step() {
	_rs_i=0
	while [ $_rs_i -lt "$(jq_ "$1/run.json" hosts.0.steps --len)" ]; do
		if [ "$(jq_ $1/run.json hosts.0.steps.$_rs_i.id)" = "$2" ]; then
			jq_ $1/run.json hosts.0.steps.$_rs_i.$3
			return
		fi
		_rs_i=$((_rs_i + 1))
	done
	echo "no step $2" >&2
	return 1
}

last_run_dir() {
	ls -dt "$TRASH"/reports/*/*/ 2>/dev/null | head -n 1 | sed 's:/$::'
}

# run_requires_sshd_nvcc WHAT: skip this whole test file (and exit) unless a
# test sshd can start here and nvcc is installed
run_requires_sshd_nvcc() {
	if ! _why=$(sshd_available); then
		test_skip "$1" "$_why"
		test_done
	fi
	if ! nvcc_path >/dev/null; then
		test_skip "$1" 'no nvcc on this machine (install the CUDA toolkit)'
		test_done
	fi
}

# The same search as the probe's, under the test sshd's session PATH
# (/usr/bin:/bin, see sshd.sh), not the PATH of the shell running the tests.
nvcc_path() {
	for _n in "$(PATH=/usr/bin:/bin; command -v nvcc 2>/dev/null)" /usr/local/cuda/bin/nvcc \
		$(ls -d /usr/local/cuda-*/bin/nvcc 2>/dev/null | sort -V -r); do
		[ -n "$_n" ] && [ -x "$_n" ] && { echo "$_n"; return 0; }
	done
	return 1
}
