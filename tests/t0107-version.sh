#!/bin/sh
# cost: 5
test_description='the version comes from git at build time (scripts/version.sh), not a fixed 0.1.0; a tree without .git says so'
# Issue 34 part 3: every run.json said "0.1.0" across 669 commits. Checks
# are && chains.
. "$(dirname "$0")/lib/testlib.sh"

V="$SRCDIR/scripts/version.sh"

# commit_all DIR MESSAGE
commit_all() {
	(cd "$1" && git add -A && git -c user.email=t@example.com -c user.name=t commit -qm "$2")
}

test_expect_success 'gpuorch --version is the version of the tree it was built from' '
	"$GPUORCH" --version >v.out &&
	cat v.out &&
	echo "gpuorch $("$V" 0.1.0)" >v.want &&
	test_cmp v.want v.out &&
	! grep -x "gpuorch 0\.1\.0" v.out
'

test_expect_success 'without a tag: the release and the commit; -dirty for uncommitted changes' '
	mkdir repo && (cd repo && git init -q) && echo a >repo/f && commit_all repo one &&
	c=$(cd repo && git rev-parse --short=12 HEAD) &&
	test "$("$V" 0.1.0 repo)" = "0.1.0-g$c" &&
	echo b >repo/f &&
	test "$("$V" 0.1.0 repo)" = "0.1.0-g$c-dirty" &&
	commit_all repo two
'

test_expect_success 'a tag vX.Y.Z: git describe (commits since it and the commit)' '
	(cd repo && git tag v1.2.0) &&
	test "$("$V" 0.1.0 repo)" = 1.2.0 &&
	echo c >repo/f && commit_all repo three &&
	c=$(cd repo && git rev-parse --short=12 HEAD) &&
	test "$("$V" 0.1.0 repo)" = "1.2.0-1-g$c"
'

test_expect_success 'a tarball without .git, even unpacked inside another repository: BASE-unknown' '
	mkdir plain && echo x >plain/f &&
	test "$("$V" 0.1.0 plain)" = 0.1.0-unknown &&
	mkdir repo/sub && echo y >repo/sub/g && commit_all repo sub &&
	test "$("$V" 0.1.0 repo/sub)" = 0.1.0-unknown
'

test_expect_success 'the Makefile of a git archive (no .git) writes 0.1.0-unknown into the build' '
	mkdir tarball &&
	(cd "$SRCDIR" && git archive HEAD Makefile scripts/version.sh) | tar -x -C tarball &&
	(cd tarball && make -s build/gen/core/version.c) &&
	cat tarball/build/gen/core/version.c &&
	grep -x "const char gpuorch_version\[\] = \"0\.1\.0-unknown\";" tarball/build/gen/core/version.c
'

test_done
