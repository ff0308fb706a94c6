#!/bin/sh
# cost: 20
# asan: yes
test_description='two programs with one build command are one build: made once, both programs run its outputs'
# Issue 32: a repository whose one CMake build makes two profilers was
# built twice at once, one build per program (the program's name was part
# of the build key). Now the key is what makes the build's output: programs
# built alike share one build (docs/byo.md), and another command is another
# build in another directory. build.sh logs each run (its directory and
# arguments) to a file outside the host's work directory: the count is what
# ran, not what the record says. Checks are && chains.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'shared build tests'

test_expect_success 'setup: a project whose build.sh makes two tools (and a third with "other")' '
	sshd_start a &&
	sshd_write_hosts_json hosts.json a &&
	mkdir -p proj/experiments &&
	cat >proj/build.sh <<-EOF &&
	# a stand-in for "cmake --build": logs each run, makes the tools
	echo "\$(pwd) \$*" >>"$TRASH/builds.log"
	sleep 1
	mkdir -p bin
	if [ "\$1" = other ]; then
		printf "#!/bin/sh\necho x=3\n" >bin/c && chmod +x bin/c
		exit 0
	fi
	printf "#!/bin/sh\necho x=1\n" >bin/a && chmod +x bin/a
	printf "#!/bin/sh\necho x=2\n" >bin/b && chmod +x bin/b
	EOF
	cat >proj/experiments/shared.json <<-EOF &&
	{
	  "schema": 1, "name": "shared-build", "phase": "Test phase: shared builds",
	  "sources": ["."],
	  "targets": {"H100": "sm_90a"},
	  "programs": {
	    "tool_a": {"build": {"command": ["sh", "build.sh"], "outputs": ["bin/a"]},
	               "run": ["bin/a"], "figures": {"x": {"regex": "x=([0-9]+)"}}, "needs_gpu": false},
	    "tool_b": {"build": {"command": ["sh", "build.sh"], "outputs": ["bin/b"]},
	               "run": ["bin/b"], "figures": {"x": {"regex": "x=([0-9]+)"}}, "needs_gpu": false},
	    "tool_c": {"build": {"command": ["sh", "build.sh", "other"], "outputs": ["bin/c"]},
	               "run": ["bin/c"], "figures": {"x": {"regex": "x=([0-9]+)"}}, "needs_gpu": false}
	  },
	  "problems": [{"name": "one"}],
	  "steps": [
	    {"kind": "benchmark", "program": "tool_a"},
	    {"kind": "benchmark", "program": "tool_b"},
	    {"kind": "benchmark", "program": "tool_c"}
	  ]
	}
	EOF
	(cd proj && git init -q && git config user.email t@example.com && git config user.name t &&
	 git add -A && git commit -qm "two tools, one build")
'

test_expect_success 'the dry run shows one key for tool_a and tool_b, another for tool_c' '
	(cd proj && "$GPUORCH" run experiments/shared.json --hosts ../hosts.json --dry-run) >plan.out &&
	cat plan.out &&
	ka=$(sed -n "s/^    build tool_a for sm_90a (key \([0-9a-f]*\))$/\1/p" plan.out) &&
	kb=$(sed -n "s/^    build tool_b for sm_90a (key \([0-9a-f]*\)); the same build as tool_a, made once$/\1/p" plan.out) &&
	kc=$(sed -n "s/^    build tool_c for sm_90a (key \([0-9a-f]*\))$/\1/p" plan.out) &&
	test -n "$ka" && test "$ka" = "$kb" && test -n "$kc" && test "$kc" != "$ka"
'

test_expect_success 'a run builds the shared command once and tool_c once, in two directories' '
	(cd proj && "$GPUORCH" run experiments/shared.json --hosts ../hosts.json) >run1.out 2>&1 ||
		{ cat run1.out; false; } &&
	cat run1.out &&
	cat builds.log &&
	test "$(wc -l <builds.log)" -eq 2 &&
	grep -c "/tree \$" builds.log >n.shared && echo 1 >n.want && test_cmp n.want n.shared &&
	grep -c "/tree other\$" builds.log >n.other && test_cmp n.want n.other &&
	d1=$(sed -n "1s/ .*//p" builds.log) && d2=$(sed -n "2s/ .*//p" builds.log) &&
	test "$d1" != "$d2" &&
	case "$d1" in "$SSHD_a_WORKDIR"/builds/*/tree) ;; *) false ;; esac &&
	case "$d2" in "$SSHD_a_WORKDIR"/builds/*/tree) ;; *) false ;; esac
'

test_expect_success 'the record shows each program'"'"'s build, both pointing at the one build; every step passed' '
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.builds --len)" = 3 &&
	test "$(jq_ $run/run.json provenance.gpuorch_version)" = "$("$GPUORCH" --version | sed "s/^gpuorch //")" &&
	test "$(jq_ $run/run.json provenance.gpuorch_version)" != 0.1.0 &&
	test "$(jq_ $run/run.json hosts.0.builds.0.program)" = tool_a &&
	test "$(jq_ $run/run.json hosts.0.builds.1.program)" = tool_b &&
	test "$(jq_ $run/run.json hosts.0.builds.0.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.builds.1.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.builds.2.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.builds.0.build_key)" = "$(jq_ $run/run.json hosts.0.builds.1.build_key)" &&
	test "$(jq_ $run/run.json hosts.0.builds.1.same_build_as)" = tool_a &&
	! jq_ $run/run.json hosts.0.builds.0.same_build_as 2>/dev/null &&
	test "$(jq_ $run/run.json hosts.0.builds.2.build_key)" != "$(jq_ $run/run.json hosts.0.builds.0.build_key)" &&
	jq_ $run/run.json hosts.0.builds.0.command | grep "for o in .bin/a. .bin/b.; do" &&
	test "$(run_step $run benchmark.tool_a.one status)" = PASS &&
	test "$(run_step $run benchmark.tool_b.one status)" = PASS &&
	test "$(run_step $run benchmark.tool_c.one status)" = PASS &&
	test "$(run_step $run benchmark.tool_a.one result.x)" = 1 &&
	test "$(run_step $run benchmark.tool_b.one result.x)" = 2 &&
	test "$(run_step $run benchmark.tool_c.one result.x)" = 3 &&
	grep "^  build tool_a sm_90a: PASS$" run1.out &&
	grep "^  build tool_b sm_90a: PASS$" run1.out
'

test_expect_success 'a second run reuses both builds: nothing is built again' '
	(cd proj && "$GPUORCH" run experiments/shared.json --hosts ../hosts.json) >run2.out 2>&1 ||
		{ cat run2.out; false; } &&
	test "$(wc -l <builds.log)" -eq 2 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.builds.0.reused)" = true &&
	test "$(jq_ $run/run.json hosts.0.builds.1.reused)" = true &&
	test "$(run_step $run benchmark.tool_b.one result.x)" = 2
'

test_done
