#!/bin/sh
# cost: 20
# asan: yes
test_description='a host entry'"'"'s "env" (PATH for a newer cmake): checked, applied to builds and steps, shown by hosts check; a failed build names its tools'
# Issue 32: the repository needed cmake >= 3.28, the host's SSH PATH had
# 3.25.1 and a newer one elsewhere. Stand-ins: old/cmake (3.25.1, first on
# the session's PATH) fails as CMake does when too old; new/cmake (3.30.2)
# makes build/tool. A host's "env" puts new/ first. Checks are && chains.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'host env tests'

# hosts_with_env FILE ENV-JSON: hosts.json with "env": ENV-JSON on host a
hosts_with_env() {
	sed "s|\"connect_timeout_s\": 20}|\"connect_timeout_s\": 20, \"env\": $2}|" hosts.json >"$1" &&
	grep -F "\"env\": $2" "$1" >/dev/null
}

test_expect_success 'setup: an old and a new cmake, a project built by cmake' '
	mkdir -p old new proj/experiments &&
	cat >old/cmake <<-\EOF &&
	#!/bin/sh
	if [ "$1" = --version ]; then echo "cmake version 3.25.1"; echo; echo "CMake suite"; exit 0; fi
	echo "CMake Error at CMakeLists.txt:1 (cmake_minimum_required):" >&2
	echo "  CMake 3.28 or higher is required.  You are running version 3.25.1" >&2
	exit 1
	EOF
	cat >new/cmake <<-\EOF &&
	#!/bin/sh
	if [ "$1" = --version ]; then echo "cmake version 3.30.2"; exit 0; fi
	mkdir -p build && printf "#!/bin/sh\necho \"x=1 PATH=\$PATH MARK=\$MARK\"\n" >build/tool && chmod +x build/tool
	EOF
	chmod +x old/cmake new/cmake &&
	sshd_start_with_path a "$TRASH/old" &&
	sshd_write_hosts_json hosts.json a &&
	hosts_with_env env.json "{\"PATH\": \"$TRASH/new:\$PATH\", \"BASE\": \"x y\", \"MARK\": \"a b\$\$c \${BASE}-\$BASE\"}" &&
	cat >proj/experiments/cm.json <<-\EOF &&
	{
	  "schema": 1, "name": "host-env", "phase": "Test phase: host env",
	  "sources": ["."],
	  "targets": {"H100": "sm_90a"},
	  "programs": {
	    "tool": {"build": {"command": ["cmake", "-S", ".", "-B", "build"], "outputs": ["build/tool"]},
	             "run": ["build/tool"], "figures": {"x": {"regex": "x=([0-9]+)"}}, "needs_gpu": false}
	  },
	  "problems": [{"name": "one"}],
	  "steps": [{"kind": "benchmark", "program": "tool"}]
	}
	EOF
	echo "project(p)" >proj/CMakeLists.txt &&
	(cd proj && git init -q && git config user.email t@example.com && git config user.name t &&
	 git add -A && git commit -qm "a cmake project")
'

test_expect_success 'bad env entries: what, where and how to fix; exit 2' '
	hosts_with_env bad1.json "{\"1PATH\": \"x\"}" &&
	test_expect_code 2 "$GPUORCH" hosts list --hosts bad1.json 2>bad1.err &&
	cat bad1.err &&
	grep "hosts\[0\]\.env\.1PATH.*not a variable name: use letters, digits and ._." bad1.err &&
	hosts_with_env bad2.json "{\"PATH\": \"\$(id)\"}" &&
	test_expect_code 2 "$GPUORCH" hosts list --hosts bad2.json 2>bad2.err &&
	cat bad2.err &&
	grep "hosts\[0\]\.env\.PATH.*the .\$. at offset 0 starts no \$NAME or \${NAME} (write \$\$ for a .\$. itself" bad2.err &&
	hosts_with_env bad3.json "{\"GPUORCH_X\": \"1\"}" &&
	test_expect_code 2 "$GPUORCH" hosts list --hosts bad3.json 2>bad3.err &&
	grep "env\.GPUORCH_X.*set by gpuorch itself" bad3.err &&
	hosts_with_env bad4.json "{\"N\": 3}" &&
	test_expect_code 2 "$GPUORCH" hosts list --hosts bad4.json 2>bad4.err &&
	grep "env\.N.*expected a string, found a number" bad4.err &&
	hosts_with_env bad5.json "[\"PATH\"]" &&
	test_expect_code 2 "$GPUORCH" hosts list --hosts bad5.json 2>bad5.err &&
	grep "\.env.*expected an object of variables" bad5.err
'

test_expect_success 'hosts check: cmake, make and ninja as the builds find them, with the env and without' '
	"$GPUORCH" hosts check --hosts hosts.json >chk.out &&
	cat chk.out &&
	grep "^    cmake              3\.25\.1  $TRASH/old/cmake$" chk.out &&
	grep -E "^    make               ([0-9.]+  /.*/make|absent)$" chk.out &&
	grep -E "^    ninja              ([0-9.]+  /.*/ninja|absent)$" chk.out &&
	"$GPUORCH" hosts check --hosts env.json >chk2.out &&
	cat chk2.out &&
	grep "^    cmake              3\.30\.2  $TRASH/new/cmake  (with the host.s env)$" chk2.out &&
	"$GPUORCH" hosts check --hosts env.json --json >chk2.json &&
	test "$(jq_ chk2.json 0.build_tools.cmake.version)" = 3.30.2 &&
	test "$(jq_ chk2.json 0.build_tools.cmake.path)" = "$TRASH/new/cmake"
'

test_expect_success 'a build that fails on the old cmake says which tools it ran and what the output asks for' '
	test_expect_code 1 sh -c "cd proj && \"$GPUORCH\" run experiments/cm.json --hosts ../hosts.json" >run1.out 2>&1;
	cat run1.out &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.builds.0.status)" = FAIL &&
	reason=$(jq_ $run/run.json hosts.0.builds.0.reason) &&
	echo "$reason" &&
	echo "$reason" | grep -E "; the build ran cmake 3\.25\.1 \($TRASH/old/cmake; the output asks for 3\.28 or higher\), make ([0-9.]+ \(/[^)]*make\)|absent)$"
'

test_expect_success 'with the env: the new cmake builds it, the step sees the env (expanded as documented)' '
	(cd proj && "$GPUORCH" run experiments/cm.json --hosts ../env.json) >run2.out 2>&1 ||
		{ cat run2.out; false; } &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.builds.0.status)" = PASS &&
	test "$(run_step $run benchmark.tool.one status)" = PASS &&
	log=$run/$(run_step $run benchmark.tool.one stdout_log) &&
	cat "$log" &&
	case "$(cat "$log")" in "x=1 PATH=$TRASH/new:"*"$TRASH/old:/usr/bin:/bin MARK=a b\$c x y-x y") ;; *) false ;; esac
'

test_expect_success 'the env is part of the build key: without it the build is not reused' '
	(cd proj && "$GPUORCH" run experiments/cm.json --hosts ../env.json --dry-run) >dry-env.out &&
	(cd proj && "$GPUORCH" run experiments/cm.json --hosts ../hosts.json --dry-run) >dry.out &&
	k1=$(sed -n "s/^    build tool for sm_90a (key \([0-9a-f]*\))$/\1/p" dry-env.out) &&
	k2=$(sed -n "s/^    build tool for sm_90a (key \([0-9a-f]*\))$/\1/p" dry.out) &&
	test -n "$k1" && test -n "$k2" && test "$k1" != "$k2" &&
	grep -F "\"\${PATH}\" && export PATH && BASE=" dry-env.out
'

test_done
