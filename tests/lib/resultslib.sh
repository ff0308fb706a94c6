# shellcheck shell=sh
# resultslib.sh -- what the results-store tests share (t3060, t3062, t3065):
# their fixture records and run ids, a local store in the trash directory
# (no S3), and same_tree. Source after testlib.sh and runlib.sh.
#   F            tests/fixtures/runs (the records runs are made from)
#   R1 R2 R3     run ids given to them; EXP the experiment's folder
#   same_tree A B   the same files, bytes and modes under A and B

F=$SRCDIR/tests/fixtures/runs
R1=20261122-051000-a1b2c3
R2=20261122-061500-d4e5f6
R3=20261122-071500-0c0ffe
EXP=attention-wmma
GPUORCH_RESULTS_STORE=$TRASH/store
export GPUORCH_RESULTS_STORE
unset GPUORCH_RESULTS_S3_ENDPOINT

same_tree() {
	diff -r "$1" "$2" &&
	(cd "$1" && find . -type f -exec stat -c "%n %a %s" {} + | sort) >tree-a &&
	(cd "$2" && find . -type f -exec stat -c "%n %a %s" {} + | sort) >tree-b &&
	test_cmp tree-a tree-b
}
