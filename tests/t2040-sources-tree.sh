#!/bin/sh
# asan: yes
test_description='sources as a tree: directories and globs resolved through git, in the work tree and at a commit'
# "sources" may name directories and globs ("src/**", "."); they select the
# files git tracks (remote/pack.c, store/gitinfo.c), so ignored files, build
# outputs and secrets never ship, and untracked files ship only when listed
# by their own path. --dry-run lists what ships. Checks are && chains.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'sources tree tests'

# spec NAME SOURCES: the cputimer program with the given top-level sources
spec() {
	cat >proj/experiments/$1.json <<-JSON
	{
	  "schema": 1, "name": "tree-$1", "phase": "Test phase: sources as a tree",
	  "sources": $2,
	  "targets": {"H100": "sm_90a"},
	  "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
	  "problems": [{"name": "small", "params": {"work": 2000}}],
	  "steps": [{"kind": "correctness", "program": "cputimer", "timeout_s": 60}]
	}
	JSON
}

# shipped OUT: the file list of a dry run's output (one path a line, sorted)
shipped() {
	sed -n 's/^ *[0-9][0-9]*  [0-9a-f]\{12\}  //p' "$1" | sort
}

test_expect_success 'setup: a project with a header tree, an ignored secret, a build output and an untracked file' '
	sshd_start a &&
	sshd_write_hosts_json hosts.json a &&
	project_init &&
	mkdir -p proj/cpu/inc/deep proj/build &&
	echo "#define DEEP 1" >proj/cpu/inc/deep/deep.h &&
	echo "#define TOP 1" >proj/cpu/inc/top.h &&
	printf "SECRET=hunter2\n" >proj/cpu/.env &&
	printf ".env\nbuild/\n" >proj/.gitignore &&
	echo junk >proj/build/cputimer.o &&
	spec dir "[\"cpu\"]" &&
	spec glob "[\"cpu/**\"]" &&
	spec dot "[\".\"]" &&
	spec star "[\"cpu/*.c\", \"cpu/inc/*.h\"]" &&
	spec none "[\"cpu/**/*.cuh\", \"cpu/cputimer.c\"]" &&
	spec explicit "[\"cpu\", \"notes.txt\"]" &&
	spec missing "[\"cpu/inc/**\"]" &&
	(cd proj && git add -A && git commit -qm "tree") &&
	echo "not committed" >proj/notes.txt &&
	echo "/* untracked */" >proj/cpu/untracked.c
'

test_expect_success 'a directory ships the tracked files under it, never ignored or untracked ones' '
	(cd proj && "$GPUORCH" run experiments/dir.json --hosts ../hosts.json --dry-run) >dir.out &&
	shipped dir.out >dir.files &&
	printf "%s\n" cpu/cpusweep.c cpu/cputimer.c cpu/inc/deep/deep.h cpu/inc/top.h >want &&
	test_cmp want dir.files &&
	! grep -e "\.env" -e untracked -e build/ dir.out
'

test_expect_success '"cpu/**" selects the same files; the plan says how much ships' '
	(cd proj && "$GPUORCH" run experiments/glob.json --hosts ../hosts.json --dry-run) >glob.out &&
	shipped glob.out >glob.files &&
	test_cmp want glob.files &&
	grep "content id .* (4 files, [0-9]* bytes archive" glob.out
'

test_expect_success '"." selects every tracked file of the repository, the .gitignore too' '
	(cd proj && "$GPUORCH" run experiments/dot.json --hosts ../hosts.json --dry-run) >dot.out &&
	shipped dot.out >dot.files &&
	grep -x .gitignore dot.files &&
	grep -x experiments/basic.json dot.files &&
	grep -x gpu/scale.cu dot.files &&
	grep -x cpu/inc/deep/deep.h dot.files &&
	! grep -e "\.env" -e untracked -e "^build/" -e notes.txt dot.files
'

test_expect_success 'a star does not cross a slash' '
	(cd proj && "$GPUORCH" run experiments/star.json --hosts ../hosts.json --dry-run) >star.out &&
	shipped star.out >star.files &&
	printf "%s\n" cpu/cpusweep.c cpu/cputimer.c cpu/inc/top.h >want.star &&
	test_cmp want.star star.files
'

test_expect_success 'an untracked file ships when it is listed by its own path' '
	(cd proj && "$GPUORCH" run experiments/explicit.json --hosts ../hosts.json --dry-run) >explicit.out &&
	shipped explicit.out >explicit.files &&
	grep -x notes.txt explicit.files &&
	! grep untracked explicit.files
'

test_expect_success 'a glob that selects nothing is a spec error (exit 2) naming it' '
	test_expect_code 2 sh -c "cd proj && \"$GPUORCH\" run experiments/none.json --hosts ../hosts.json --dry-run" 2>none.err &&
	cat none.err &&
	grep "cpu/\*\*/\*.cuh.* selects no file" none.err
'

test_expect_success 'a program source outside what the globs select is a spec error' '
	test_expect_code 2 sh -c "cd proj && \"$GPUORCH\" run experiments/missing.json --hosts ../hosts.json --dry-run" 2>missing.err &&
	cat missing.err &&
	grep "programs.cputimer.sources\[0\].*cpu/cputimer.c.* is not among the files" missing.err
'

test_expect_success 'at a commit, a glob selects the files of that commit' '
	(cd proj && git rm -q cpu/inc/top.h && git commit -qm "no top.h" &&
	 "$GPUORCH" run experiments/glob.json --hosts ../hosts.json --dry-run --commit HEAD~1) >c1.out &&
	shipped c1.out >c1.files &&
	test_cmp want c1.files &&
	(cd proj && "$GPUORCH" run experiments/glob.json --hosts ../hosts.json --dry-run --commit HEAD) >c2.out &&
	shipped c2.out >c2.files &&
	printf "%s\n" cpu/cpusweep.c cpu/cputimer.c cpu/inc/deep/deep.h >want.c2 &&
	test_cmp want.c2 c2.files
'

test_expect_success 'a tracked file deleted from the work tree does not ship from it' '
	rm proj/cpu/cpusweep.c &&
	(cd proj && "$GPUORCH" run experiments/glob.json --hosts ../hosts.json --dry-run) >del.out &&
	shipped del.out >del.files &&
	printf "%s\n" cpu/cputimer.c cpu/inc/deep/deep.h >want.del &&
	test_cmp want.del del.files &&
	(cd proj && git checkout -q cpu/cpusweep.c)
'

test_expect_success 'over the total limit: a clear error, exit non-zero, nothing sent' '
	test_expect_code 1 sh -c "cd proj && GPUORCH_SOURCES_LIMIT_MIB=1 && export GPUORCH_SOURCES_LIMIT_MIB && head -c 1100000 /dev/zero >cpu/inc/big.h && git add cpu/inc/big.h && \"$GPUORCH\" run experiments/glob.json --hosts ../hosts.json" 2>big.err ;
	cat big.err &&
	grep "more than the 1 MiB limit in all" big.err &&
	grep "dry-run" big.err &&
	test ! -e "$SSHD_a_WORKDIR/content" &&
	(cd proj && git rm -q --cached cpu/inc/big.h && rm cpu/inc/big.h)
'

test_expect_success 'a real run ships the selected tree and builds from it' '
	(cd proj && "$GPUORCH" run experiments/glob.json --hosts ../hosts.json) >run.out 2>&1 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS &&
	cid=$(jq_ $run/run.json provenance.content_id) &&
	test -f "$SSHD_a_WORKDIR/content/$cid/src/cpu/inc/deep/deep.h" &&
	test ! -e "$SSHD_a_WORKDIR/content/$cid/src/cpu/.env" &&
	test ! -e "$SSHD_a_WORKDIR/content/$cid/src/cpu/untracked.c"
'

test_done
