#!/bin/sh
# cost: 35
test_description='gpuorch run: a re-run reuses the shipped sources and builds; a changed flag or define rebuilds'
# The build key (plan.c) must cover every input that changes the binary:
# a changed build.defines value or flag reuses nothing (a stale binary
# would be measured otherwise), while an unchanged re-run ships nothing and
# builds nothing. Checks are && chains without `return` (see tests/lib/testlib.sh).
. "$(dirname "$0")/lib/testlib.sh"
# the host's sessions run under umask 077 (sshd's own, inherited): the
# sources it assembles must still have their modes exactly (gpuorch's own
# on a host: 0700 for an executable file, a copy of its own; 0400 for
# another, a hard link to its read-only blob; issue 31)
printf '#!/bin/sh\numask 077\nexec "%s" "$@"\n' "${SSHD_BIN:-/usr/sbin/sshd}" >"$TRASH/sshd-umask077" &&
chmod +x "$TRASH/sshd-umask077" || exit 1
SSHD_BIN=$TRASH/sshd-umask077
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'build reuse tests'

# spec NAME BUILD: a one-program spec with the given "build" object
spec() {
	cat >proj/experiments/$1.json <<-JSON
	{
	  "schema": 1, "name": "reuse", "phase": "Test phase: build reuse",
	  "sources": ["cpu/cputimer.c"],
	  "build": $2,
	  "targets": {"H100": "sm_90a"},
	  "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
	  "problems": [{"name": "small", "params": {"work": 20000}}],
	  "steps": [{"kind": "correctness", "program": "cputimer", "timeout_s": 60}]
	}
	JSON
}

# built RUN: the one build of the run was made (not reused) and passed,
# and so did its step.
built() {
	test "$(jq_ $1/run.json hosts.0.builds --len)" = 1 &&
	test "$(jq_ $1/run.json hosts.0.builds.0.status)" = PASS &&
	{ test "$(jq_ $1/run.json hosts.0.builds.0.reused)" = false ||
	  { echo "the build was reused: $(jq_ $1/run.json hosts.0.builds.0.command)"; false; }; } &&
	test "$(jq_ $1/run.json hosts.0.steps.0.status)" = PASS
}

test_expect_success 'setup: one host, a project, three specs that differ in one define or flag' '
	sshd_start a &&
	sshd_write_hosts_json hosts.json a &&
	project_init &&
	spec base "{\"flags\": [\"-O2\"], \"defines\": {\"WIDTH\": 4}, \"timeout_s\": 300}" &&
	spec define "{\"flags\": [\"-O2\"], \"defines\": {\"WIDTH\": 8}, \"timeout_s\": 300}" &&
	spec flag "{\"flags\": [\"-O1\"], \"defines\": {\"WIDTH\": 8}, \"timeout_s\": 300}" &&
	(cd proj && git add -A && git commit -qm "reuse specs")
'

test_expect_success 'a first run ships the sources and builds' '
	(cd proj && "$GPUORCH" run experiments/base.json --hosts ../hosts.json) >run1.out 2>&1 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.ship.reused)" = false &&
	built $run &&
	jq_ $run/run.json hosts.0.builds.0.command | grep -- "-DWIDTH=4" &&
	jq_ $run/run.json hosts.0.builds.0.build_key >key1
'

test_expect_success 'an unchanged re-run ships nothing and reuses the build' '
	(cd proj && "$GPUORCH" run experiments/base.json --hosts ../hosts.json) >run2.out 2>&1 &&
	run=$(last_run_dir) &&
	{ test "$(jq_ $run/run.json hosts.0.ship.reused)" = true ||
	  { echo "re-shipped unchanged sources"; false; }; } &&
	test "$(jq_ $run/run.json hosts.0.ship.bytes_sent)" = 0 &&
	test "$(jq_ $run/run.json hosts.0.builds.0.reused)" = true &&
	test -s key1 && test "$(jq_ $run/run.json hosts.0.builds.0.build_key)" = "$(cat key1)" &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS
'

test_expect_success 'a changed build.defines value rebuilds (same sources: nothing re-shipped)' '
	(cd proj && "$GPUORCH" run experiments/define.json --hosts ../hosts.json) >run3.out 2>&1 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.ship.reused)" = true &&
	built $run &&
	jq_ $run/run.json hosts.0.builds.0.command | grep -- "-DWIDTH=8" &&
	jq_ $run/run.json hosts.0.builds.0.build_key >key2 &&
	! cmp -s key1 key2
'

test_expect_success 'a changed build flag rebuilds' '
	(cd proj && "$GPUORCH" run experiments/flag.json --hosts ../hosts.json) >run4.out 2>&1 &&
	run=$(last_run_dir) &&
	built $run &&
	jq_ $run/run.json hosts.0.builds.0.command | grep -- " .-O1. " &&
	jq_ $run/run.json hosts.0.builds.0.build_key >key3 &&
	! cmp -s key2 key3 && ! cmp -s key1 key3
'

# reused RUN PROGRAM: true when that program's build was reused (not built)
reused() {
	_i=0
	while [ $_i -lt "$(jq_ "$1/run.json" hosts.0.builds --len)" ]; do
		if [ "$(jq_ $1/run.json hosts.0.builds.$_i.program)" = "$2" ]; then
			test "$(jq_ $1/run.json hosts.0.builds.$_i.status)" = PASS || return 1
			test "$(jq_ $1/run.json hosts.0.builds.$_i.reused)" = true
			return
		fi
		_i=$((_i + 1))
	done
	echo "no build of $2"; return 1
}

test_expect_success 'setup: three programs; a header included by one, a header included by two' '
	mkdir -p proj/inc/sub &&
	echo "#define ONLY_A 1" >proj/inc/only_a.h &&
	echo "#include \"sub/deep.h\"" >proj/inc/shared.h &&
	echo "#define DEEP 2" >proj/inc/sub/deep.h &&
	cat >proj/cpu/a.c <<-\EOF &&
	#include "../inc/only_a.h"
	#include "../inc/shared.h"
	#include <stdio.h>
	int main(void) { printf("{\"schema\":\"gpuorch.result/1\",\"status\":\"pass\"}\n"); return ONLY_A - 1 + DEEP - 2; }
	EOF
	cat >proj/cpu/b.c <<-\EOF &&
	#include <shared.h>
	#include <stdio.h>
	int main(void) { printf("{\"schema\":\"gpuorch.result/1\",\"status\":\"pass\"}\n"); return DEEP - 2; }
	EOF
	cat >proj/cpu/c.c <<-\EOF &&
	#include <stdio.h>
	int main(void) { printf("{\"schema\":\"gpuorch.result/1\",\"status\":\"pass\"}\n"); return 0; }
	EOF
	cat >proj/experiments/deps.json <<-\JSON &&
	{
	  "schema": 1, "name": "deps", "phase": "Test phase: per-program build keys",
	  "sources": ["cpu/a.c", "cpu/b.c", "cpu/c.c", "inc/only_a.h", "inc/shared.h", "inc/sub/deep.h"],
	  "build": {"flags": ["-O2", "-Iinc"]},
	  "targets": {"H100": "sm_90a"},
	  "programs": {"a": {"sources": ["cpu/a.c"], "needs_gpu": false},
	               "b": {"sources": ["cpu/b.c"], "needs_gpu": false},
	               "c": {"sources": ["cpu/c.c"], "needs_gpu": false}},
	  "problems": [{"name": "p"}],
	  "steps": [{"kind": "correctness", "program": "c", "timeout_s": 60}]
	}
	JSON
	sed -i "s/\"program\": \"c\", \"timeout_s\": 60}/&, {\"kind\": \"correctness\", \"program\": \"a\"}, {\"kind\": \"correctness\", \"program\": \"b\"}/" proj/experiments/deps.json &&
	(cd proj && git add -A && git commit -qm deps) &&
	(cd proj && "$GPUORCH" run experiments/deps.json --hosts ../hosts.json) >d1.out 2>&1;
	cat d1.out && run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	! reused $run a && ! reused $run b && ! reused $run c
'

test_expect_success 'an edit to a header only a.c includes rebuilds a alone, and ships that file alone' '
	echo "/* edited */" >>proj/inc/only_a.h && (cd proj && git commit -qam "edit only_a.h") &&
	(cd proj && "$GPUORCH" run experiments/deps.json --hosts ../hosts.json) >d2.out 2>&1;
	cat d2.out && run=$(last_run_dir) &&
	! reused $run a && reused $run b && reused $run c &&
	test "$(jq_ $run/run.json hosts.0.ship.reused)" = false &&
	test "$(jq_ $run/run.json hosts.0.ship.files_sent)" = 1 &&
	test "$(jq_ $run/run.json hosts.0.ship.files)" = 6 &&
	sent=$(jq_ $run/run.json hosts.0.ship.bytes_sent) && echo "sent $sent bytes" &&
	test "$sent" -le 2048 &&
	grep "bytes sent (1 of 6 files; the host had the others)" d2.out &&
	cdir=$(jq_ $run/run.json hosts.0.ship.remote_dir) &&
	test -f "$cdir/.complete" && ! test -e "$cdir/blobs.tar" &&
	cmp "$cdir/src/inc/only_a.h" proj/inc/only_a.h &&
	cmp "$cdir/src/cpu/b.c" proj/cpu/b.c &&
	test "$(ls "$cdir/../../blobs" | wc -l)" -ge 7
'

test_expect_success 'a content directory removed from the host is assembled again from its blobs: no file ships' '
	run=$(last_run_dir) && cdir=$(jq_ $run/run.json hosts.0.ship.remote_dir) &&
	rm -rf "$cdir" &&
	(cd proj && "$GPUORCH" run experiments/deps.json --hosts ../hosts.json) >d2b.out 2>&1;
	cat d2b.out && run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	test "$(jq_ $run/run.json hosts.0.ship.files_sent)" = 0 &&
	test "$(jq_ $run/run.json hosts.0.ship.bytes_sent)" -le 1024 &&
	test -f "$cdir/.complete" && cmp "$cdir/src/cpu/a.c" proj/cpu/a.c &&
	reused $run a && reused $run b && reused $run c
'

test_expect_success 'an edit two levels down (inc/sub/deep.h, through shared.h) rebuilds a and b, not c' '
	echo "/* edited */" >>proj/inc/sub/deep.h && (cd proj && git commit -qam "edit deep.h") &&
	(cd proj && "$GPUORCH" run experiments/deps.json --hosts ../hosts.json) >d3.out 2>&1;
	cat d3.out && run=$(last_run_dir) &&
	! reused $run a && ! reused $run b && reused $run c
'

test_expect_success 'an #include of a macro: that program is keyed by everything shipped' '
	sed -i "s|^#include \"../inc/only_a.h\"|#define HDR \"../inc/only_a.h\"\\n#include HDR|" proj/cpu/a.c &&
	grep "^#include HDR" proj/cpu/a.c &&
	(cd proj && git commit -qam "macro include") &&
	(cd proj && "$GPUORCH" run experiments/deps.json --hosts ../hosts.json) >d4.out 2>&1;
	run=$(last_run_dir) && ! reused $run a && reused $run b &&
	echo "/* edited */" >>proj/cpu/c.c && (cd proj && git commit -qam "edit c.c") &&
	(cd proj && "$GPUORCH" run experiments/deps.json --hosts ../hosts.json) >d5.out 2>&1;
	cat d5.out && run=$(last_run_dir) &&
	! reused $run a && reused $run b && ! reused $run c
'

test_expect_success 'the host assembles the sources with their modes and directories, names with spaces too (host umask 077)' '
	mkdir -p "proj/to ols/deep er" &&
	printf "#!/bin/sh\necho ran\n" >"proj/to ols/deep er/run me.sh" && chmod 755 "proj/to ols/deep er/run me.sh" &&
	printf "x\n" >"proj/to ols/ro.txt" && chmod 600 "proj/to ols/ro.txt" &&
	: "git keeps 644 and 755 only: ro.txt ships as 644, on the host 600; run me.sh as 755, on the host 700" &&
	sed "s|\"sources\": \[\"cpu/a.c\", \"cpu/b.c\"|\"sources\": [\"to ols/deep er/run me.sh\", \"to ols/ro.txt\", \"cpu/a.c\", \"cpu/b.c\"|" \
		proj/experiments/deps.json >proj/experiments/modes.json &&
	grep -F "run me.sh" proj/experiments/modes.json &&
	(cd proj && git add -A && git commit -qm modes) &&
	test "$(sshd_ssh a umask)" = 0077 &&
	(cd proj && "$GPUORCH" run experiments/modes.json --hosts ../hosts.json) >m1.out 2>&1;
	cat m1.out && run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	cdir=$(jq_ $run/run.json hosts.0.ship.remote_dir) &&
	(cd "$cdir/src" && stat -c "%a %n" "to ols/deep er/run me.sh" "to ols/ro.txt" cpu/a.c) &&
	cmp "$cdir/src/to ols/deep er/run me.sh" "proj/to ols/deep er/run me.sh" &&
	test "$(stat -c %a "$cdir/src/to ols/deep er/run me.sh")" = 700 &&
	test "$(stat -c %a "$cdir/src/to ols/ro.txt")" = 400 &&
	test "$(stat -c %a "$cdir/src/cpu/a.c")" = 400 &&
	test "$("$cdir/src/to ols/deep er/run me.sh")" = ran &&
	(cd "$cdir/src" && find . -type f | sort) >files &&
	printf "%s\n" "./cpu/a.c" "./cpu/b.c" "./cpu/c.c" "./inc/only_a.h" "./inc/shared.h" "./inc/sub/deep.h" \
		"./to ols/deep er/run me.sh" "./to ols/ro.txt" >expect &&
	test_cmp expect files
'

# blobs_intact: every blob in the host's store holds the bytes its name is the hash of
blobs_intact() {
	for b in "$(sshd_var a WORKDIR)"/blobs/*; do
		test "$(sha256sum <"$b" | cut -c1-64)" = "${b##*/}" || { echo "blob ${b##*/} changed"; return 1; }
	done
}

test_expect_success 'a new content is linked from the blobs; a source a build wrote or chmodded in place (root: read-only does not stop it) is caught, its blob sent again: what the next run ships is the project'"'"'s' '
	run=$(last_run_dir) && prev=$(jq_ $run/run.json hosts.0.ship.remote_dir) &&
	echo junk >"$prev/src/cpu/junk.o" &&
	echo "/* changed in place by a build */" >>"$prev/src/cpu/b.c" &&
	chmod 755 "$prev/src/cpu/a.c" &&
	! blobs_intact &&
	echo "/* edited */" >>proj/cpu/c.c &&
	printf "new\n" >"proj/to ols/new.txt" &&
	sed "s|\"to ols/ro.txt\"|\"to ols/new.txt\"|" proj/experiments/modes.json >proj/experiments/modes2.json &&
	(cd proj && git add -A && git commit -qm "modes2") &&
	(cd proj && "$GPUORCH" run experiments/modes2.json --hosts ../hosts.json) >m2.out 2>&1;
	cat m2.out && run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	cdir=$(jq_ $run/run.json hosts.0.ship.remote_dir) && test "$cdir" != "$prev" &&
	cat "$cdir/tree.txt" &&
	: "the host agent made it (its run before built the agent there): no perl" &&
	echo "linked from the blobs (gpuorch-agent): 7 linked, 1 copied" >tree.want &&
	test_cmp tree.want "$cdir/tree.txt" &&
	(cd "$cdir/src" && find . -type f | sort) >files2 &&
	printf "%s\n" "./cpu/a.c" "./cpu/b.c" "./cpu/c.c" "./inc/only_a.h" "./inc/shared.h" "./inc/sub/deep.h" \
		"./to ols/deep er/run me.sh" "./to ols/new.txt" >expect2 &&
	test_cmp expect2 files2 &&
	while read -r f; do cmp "$cdir/src/$f" "proj/$f" || exit 1; done <expect2 &&
	blobs_intact &&
	test "$(stat -c %a "$cdir/src/cpu/a.c")" = 400 &&
	test "$(stat -c %a "$cdir/src/to ols/deep er/run me.sh")" = 700 &&
	test "$(stat -c %a "$cdir/src/to ols/new.txt")" = 400 &&
	: "c.c and new.txt were new; a.c and b.c went again (the host had removed their blobs)" &&
	test "$(jq_ $run/run.json hosts.0.ship.files_sent)" = 4
'

test_expect_success 'a content'"'"'s sources are hard links to the read-only blobs (nothing written twice), an executable one a copy of its own' '
	run=$(last_run_dir) && cdir=$(jq_ $run/run.json hosts.0.ship.remote_dir) && W=$(sshd_var a WORKDIR) &&
	while read -r h m p; do
		if [ "$m" = 644 ]; then
			test "$(stat -c %i "$cdir/src/$p")" = "$(stat -c %i "$W/blobs/$h")" || exit 1
		else
			test "$(stat -c %i "$cdir/src/$p")" != "$(stat -c %i "$W/blobs/$h")" || exit 1
		fi
	done <"$cdir/manifest" &&
	test "$(stat -c %a "$W/blobs/$(grep " cpu/a.c\$" "$cdir/manifest" | cut -c1-64)")" = 400
'

# modes2_run NAME: commit what changed, run modes2.json (output in NAME.out);
# the run passed; $cdir is its content directory
modes2_run() {
	(cd proj && git commit -qam "$1") &&
	{ (cd proj && "$GPUORCH" run experiments/modes2.json --hosts ../hosts.json) >"$1.out" 2>&1
	  cat "$1.out"; } &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	cdir=$(jq_ $run/run.json hosts.0.ship.remote_dir)
}

test_expect_success 'a file a build removed from the tree used last is there in the next content' '
	run=$(last_run_dir) && prev=$(jq_ $run/run.json hosts.0.ship.remote_dir) &&
	rm -f "$prev/src/cpu/c.c" &&
	echo "/* edited again */" >>proj/cpu/a.c && modes2_run m3 &&
	echo "linked from the blobs (gpuorch-agent): 7 linked, 1 copied" >tree3.want && test_cmp tree3.want "$cdir/tree.txt" &&
	cmp "$cdir/src/cpu/c.c" proj/cpu/c.c && cmp "$cdir/src/cpu/a.c" proj/cpu/a.c &&
	! ls "$cdir" | grep "perl\.err"
'

# fresh_host_env ENV: a fresh host (no workdir, no execd) whose commands see
# ENV (its sshd restarted with it)
fresh_host_env() {
	sshd_forget_workdir a &&
	SSHD_a_EXTRA_ENV=$1 && export SSHD_a_EXTRA_ENV &&
	sshd_restart a
}

# same_tree: the content directory $cdir holds modes2.json's sources, modes included
same_tree() {
	(cd "$cdir/src" && find . -type f | sort) >files5 && test_cmp expect2 files5 &&
	while read -r f; do cmp "$cdir/src/$f" "proj/$f" || exit 1; done <expect2 &&
	test "$(stat -c %a "$cdir/src/to ols/deep er/run me.sh")" = 700 &&
	test "$(stat -c %a "$cdir/src/cpu/a.c")" = 400 &&
	test "$("$cdir/src/to ols/deep er/run me.sh")" = ran &&
	! test -e "$cdir/perl.err"
}

test_expect_success 'a fresh host without perl: the first tree is assembled file by file, the same' '
	fresh_host_env "GPUORCH_PERL=/nonexistent/perl" &&
	echo "/* on a host without perl */" >>proj/cpu/b.c && modes2_run m7 &&
	head -n 1 "$cdir/tree.txt" >tree7 && echo "file by file from the blobs" >tree7.want && test_cmp tree7.want tree7 &&
	sed -n 2p "$cdir/tree.txt" | grep "/nonexistent/perl" &&
	same_tree
'

test_expect_success 'a perl that fails half way (a file written wrong): the file by file copy puts the tree right' '
	cat >fakeperl <<-\EOF &&
	#!/bin/sh
	mkdir -p src/cpu
	echo "half written" >src/cpu/a.c
	chmod 700 src/cpu/a.c
	echo "fake perl: gave up half way" >&2
	exit 1
	EOF
	chmod +x fakeperl &&
	fresh_host_env "GPUORCH_PERL=$TRASH/fakeperl" &&
	echo "/* after a failed perl */" >>proj/cpu/b.c && modes2_run m8 &&
	head -n 1 "$cdir/tree.txt" >tree8 && echo "file by file from the blobs" >tree8.want && test_cmp tree8.want tree8 &&
	grep "fake perl: gave up half way" "$cdir/tree.txt" &&
	same_tree
'

test_expect_success 'a fresh host with perl: the first tree in one process, the same' '
	fresh_host_env "" &&
	echo "/* with perl again */" >>proj/cpu/b.c && modes2_run m9 &&
	echo "linked from the blobs (perl): 7 linked, 1 copied" >tree9.want && test_cmp tree9.want "$cdir/tree.txt" &&
	same_tree
'

test_expect_success 'a top-level file named like an option ("--remove-files") is linked as a file; the content before keeps it' '
	printf "not an option\n" >proj/--remove-files &&
	sed "s|\"to ols/new.txt\"|\"to ols/new.txt\", \"--remove-files\"|" proj/experiments/modes2.json >proj/experiments/modes3.json &&
	(cd proj && git add -A -- . && git commit -qm "modes3") &&
	(cd proj && "$GPUORCH" run experiments/modes3.json --hosts ../hosts.json) >m5.out 2>&1;
	cat m5.out && run=$(last_run_dir) && test "$(jq_ $run/run.json outcome)" = passed &&
	prev=$(jq_ $run/run.json hosts.0.ship.remote_dir) &&
	echo "/* edited a fourth time */" >>proj/cpu/a.c && (cd proj && git commit -qam "edit a.c") &&
	(cd proj && "$GPUORCH" run experiments/modes3.json --hosts ../hosts.json) >m6.out 2>&1;
	cat m6.out && run=$(last_run_dir) && test "$(jq_ $run/run.json outcome)" = passed &&
	cdir=$(jq_ $run/run.json hosts.0.ship.remote_dir) &&
	cat "$cdir/tree.txt" && grep -E "^linked from the blobs \((perl|gpuorch-agent)\): 8 linked, 1 copied$" "$cdir/tree.txt" &&
	cmp "$cdir/src/--remove-files" proj/--remove-files &&
	cmp "$prev/src/--remove-files" proj/--remove-files && test -f "$prev/src/cpu/b.c"
'

# Per-source objects (plan.c, gpuorch_obj): two programs share lib.cu (a
# kernel, so its compile has a ptxas report); lib.h is read by lib.cu and
# m1.c, not m2.c. objs RUN FIELD: the sum of FIELD over the run's builds
# that ran (objects_compiled / objects_reused).
objs() {
	_i=0 _n=0
	while [ $_i -lt "$(jq_ "$1/run.json" hosts.0.builds --len)" ]; do
		_v=$(jq_ $1/run.json hosts.0.builds.$_i.$2 2>/dev/null) && _n=$((_n + _v))
		_i=$((_i + 1))
	done
	echo $_n
}
# build_of RUN PROGRAM: the index of PROGRAM's build
build_of() {
	_i=0
	while [ $_i -lt "$(jq_ "$1/run.json" hosts.0.builds --len)" ]; do
		[ "$(jq_ $1/run.json hosts.0.builds.$_i.program)" = "$2" ] && { echo $_i; return 0; }
		_i=$((_i + 1))
	done
	return 1
}

test_expect_success 'setup: two programs that share a source (lib.cu, a kernel); a header two of the three sources read' '
	printf "#define LIB_SCALE 3\n" >proj/inc/lib.h &&
	cat >proj/cpu/lib.cu <<-\EOF &&
	#include "lib.h"
	__global__ void lib_kernel(int *p) { p[threadIdx.x] *= LIB_SCALE; }
	extern "C" int lib_value(void) { return 7 * LIB_SCALE; }
	EOF
	cat >proj/cpu/m1.c <<-\EOF &&
	#include "lib.h"
	#include <stdio.h>
	int lib_value(void);
	int main(void) { printf("{\"schema\":\"gpuorch.result/1\",\"status\":\"%s\"}\n", lib_value() == 21 ? "pass" : "fail"); return 0; }
	EOF
	sed 1d proj/cpu/m1.c >proj/cpu/m2.c &&
	! grep lib.h proj/cpu/m2.c && grep "^int lib_value" proj/cpu/m2.c &&
	cat >proj/experiments/objs.json <<-\JSON &&
	{
	  "schema": 1, "name": "objs", "phase": "Test phase: per-source objects",
	  "sources": ["cpu/m1.c", "cpu/m2.c", "cpu/lib.cu", "inc/lib.h"],
	  "build": {"flags": ["-O2", "-Iinc"], "defines": {"EXTRA": 1}},
	  "targets": {"H100": "sm_90a"},
	  "programs": {"p1": {"sources": ["cpu/m1.c", "cpu/lib.cu"], "needs_gpu": false},
	               "p2": {"sources": ["cpu/m2.c", "cpu/lib.cu"], "needs_gpu": false}},
	  "problems": [{"name": "p"}],
	  "steps": [{"kind": "correctness", "program": "p1", "timeout_s": 60},
	            {"kind": "correctness", "program": "p2", "timeout_s": 60}]
	}
	JSON
	(cd proj && git add -A && git commit -qm objs)
'

test_expect_success 'programs that share a source compile it once: 3 objects for 4 sources, the shared one reused' '
	(cd proj && "$GPUORCH" run experiments/objs.json --hosts ../hosts.json) >o1.out 2>&1;
	cat o1.out && run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	test "$(objs $run objects_compiled)" = 3 && test "$(objs $run objects_reused)" = 1 &&
	b1=$(build_of $run p1) && b2=$(build_of $run p2) &&
	: "both builds carry lib_kernel in their ptxas report, compiled or replayed" &&
	jq_ $run/run.json hosts.0.builds.$b1.resources >r1 && grep lib_kernel r1 &&
	jq_ $run/run.json hosts.0.builds.$b2.resources >r2 && grep lib_kernel r2 &&
	cat "$run/$(jq_ $run/run.json hosts.0.builds.$b1.log)" "$run/$(jq_ $run/run.json hosts.0.builds.$b2.log)" >logs &&
	test "$(grep -c "cpu/lib.cu: object reused" logs)" = 1
'

test_expect_success 'an edit to one source recompiles that object alone; the other build is reused whole' '
	echo "/* edited */" >>proj/cpu/m2.c && (cd proj && git commit -qam "edit m2.c") &&
	(cd proj && "$GPUORCH" run experiments/objs.json --hosts ../hosts.json) >o2.out 2>&1;
	cat o2.out && run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	reused $run p1 && ! reused $run p2 &&
	b2=$(build_of $run p2) &&
	test "$(jq_ $run/run.json hosts.0.builds.$b2.objects_compiled)" = 1 &&
	test "$(jq_ $run/run.json hosts.0.builds.$b2.objects_reused)" = 1 &&
	jq_ $run/run.json hosts.0.builds.$b2.resources | grep lib_kernel &&
	grep "^| .p2. | sm_90a | .* | no (objects: 1 compiled, 1 reused) | 0 |" $run/report.md &&
	grep "^| .p1. | sm_90a | .* | reused | " $run/report.md
'

test_expect_success 'an edit to a header recompiles the objects that read it (lib.cu, m1.c), not m2.c' '
	echo "/* edited */" >>proj/inc/lib.h && (cd proj && git commit -qam "edit lib.h") &&
	(cd proj && "$GPUORCH" run experiments/objs.json --hosts ../hosts.json) >o3.out 2>&1;
	cat o3.out && run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	! reused $run p1 && ! reused $run p2 &&
	test "$(objs $run objects_compiled)" = 2 && test "$(objs $run objects_reused)" = 2
'

test_expect_success 'a changed define recompiles every object (the defines are in each object key)' '
	sed -i "s/\"EXTRA\": 1/\"EXTRA\": 2/" proj/experiments/objs.json && (cd proj && git commit -qam "EXTRA 2") &&
	(cd proj && "$GPUORCH" run experiments/objs.json --hosts ../hosts.json) >o4.out 2>&1;
	cat o4.out && run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	test "$(objs $run objects_compiled)" = 3 && test "$(objs $run objects_reused)" = 1
'

test_expect_success 'a failed compile leaves no object behind; the fixed source compiles and links' '
	W=$(sshd_var a WORKDIR) && ls "$W/objects" | sort >objs.before &&
	cp proj/cpu/m2.c m2.good && echo "int broken(" >>proj/cpu/m2.c && (cd proj && git commit -qam "break m2.c") &&
	(cd proj && "$GPUORCH" run experiments/objs.json --hosts ../hosts.json) >o5.out 2>&1;
	cat o5.out && run=$(last_run_dir) &&
	b2=$(build_of $run p2) && test "$(jq_ $run/run.json hosts.0.builds.$b2.status)" = FAIL &&
	ls "$W/objects" | sort >objs.after &&
	comm -13 objs.before objs.after >objs.new && cat objs.new &&
	: "only the failed compile s lock is new: no object, no temporary" &&
	! grep -v "\.lock$" objs.new &&
	{ cat m2.good; echo "/* fixed */"; } >proj/cpu/m2.c && (cd proj && git commit -qam "fix m2.c") &&
	(cd proj && "$GPUORCH" run experiments/objs.json --hosts ../hosts.json) >o6.out 2>&1;
	cat o6.out && run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	b2=$(build_of $run p2) && test "$(jq_ $run/run.json hosts.0.builds.$b2.objects_compiled)" = 1
'

test_expect_success 'a sweep that names its sources: lib.cu keeps one object for both variants, unless its files name a define' '
	cat >proj/experiments/sweepsrc.json <<-\JSON &&
	{
	  "schema": 1, "name": "sweepsrc", "phase": "Test phase: a sweep with sources",
	  "sources": ["cpu/m1.c", "cpu/lib.cu", "inc/lib.h"],
	  "build": {"flags": ["-O2", "-Iinc"]},
	  "targets": {"H100": "sm_90a"},
	  "programs": {"p1": {"sources": ["cpu/m1.c", "cpu/lib.cu"], "needs_gpu": false}},
	  "problems": [{"name": "p"}],
	  "steps": [{"kind": "sweep", "program": "p1", "sources": ["cpu/m1.c"], "defines": {"SWEEPKNOB": [1, 2]}}]
	}
	JSON
	(cd proj && git add -A && git commit -qm sweepsrc) &&
	(cd proj && "$GPUORCH" run experiments/sweepsrc.json --hosts ../hosts.json) >sw1.out 2>&1;
	cat sw1.out && run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	: "m1.c twice (one per variant), lib.cu once" &&
	test "$(objs $run objects_compiled)" = 3 && test "$(objs $run objects_reused)" = 1 &&
	jq_ $run/run.json hosts.0.builds.0.command | grep -- "-DSWEEPKNOB=[12]. -c .cpu/m1.c." &&
	! jq_ $run/run.json hosts.0.builds.0.command | grep -- "-DSWEEPKNOB=[12]. -c .cpu/lib.cu." &&
	echo "#define SWEEP_USES (SWEEPKNOB + 0)" >>proj/inc/lib.h && (cd proj && git commit -qam "lib.h names the knob") &&
	(cd proj && "$GPUORCH" run experiments/sweepsrc.json --hosts ../hosts.json) >sw2.out 2>&1;
	cat sw2.out && run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	: "lib.h (read by lib.cu and m1.c) names SWEEPKNOB: the define reaches lib.cu, an object per variant" &&
	jq_ $run/run.json hosts.0.builds.0.command | grep -- "-DSWEEPKNOB=[12]. -c .cpu/lib.cu." &&
	test "$(objs $run objects_compiled)" = 4 && test "$(objs $run objects_reused)" = 0
'

test_done
