#!/bin/sh
# cost: 45
# asan: yes
test_description='a re-run on a host with the agent is one exec of it (gpuorch-agent attach): no tool process beside it, also where the content must be assembled from the blob store; its probe check is probe-sig.sh'"'"'s'
# Issue 33's figure: the host's CPU per re-run of a trivial experiment.
# The host's session PATH starts with a directory of counting wrappers for
# the tools start.sh uses (each appends its name to a log, then runs the
# real one): a re-run through the agent must start none of them, nor a run
# whose content the agent assembles from blobs the execd's put wrote (issue
# 35: a first run's host CPU).
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'agent attach tests'
if ! test_have_cmd cc; then
	test_skip 'agent attach tests' 'no C compiler (cc) to build the agent with'
	test_expect_success 'the agent finds the plan by start.sh'"'"'s marker lines (start-script.h'"'"'s)' '
	for m in plan execd agent; do
		grep -F "\"#--gpuorch-$m--\"" "$SRCDIR/orchestrator/remote/start-script.h" &&
		grep -F "\"#--gpuorch-$m--\"" "$SRCDIR/orchestrator/host/agent-attach.c" || exit 1
	done
'

test_done
fi
AGENT=$SRCDIR/build/gpuorch-agent
[ -z "${GPUORCH:-}" ] || AGENT=$(dirname "$GPUORCH")/gpuorch-agent

run() {   # SPEC [ARGS...]: gpuorch run in proj on host a
	_s=$1
	shift
	(cd proj && "$GPUORCH" run "experiments/$_s.json" --hosts ../hosts.json --plain "$@")
}

# the tools start.sh, probe-sig.sh and runner.sh run, counted
TOOLS="awk mv mkdir rm head df stat ls sort cp tar perl find mktemp chmod touch cat tail date sed flock setsid nice ln"

test_expect_success 'setup: a host whose PATH counts the tools it runs' '
	mkdir count &&
	for t in $TOOLS; do
		real=$(PATH=/usr/bin:/bin command -v $t) || continue
		printf "#!/bin/sh\necho %s >>%s\nexec %s \"\$@\"\n" "$t" "$TRASH/tools.log" "$real" >count/$t &&
		chmod +x count/$t || exit 1
	done &&
	sshd_start_with_path a "$TRASH/count" && sshd_write_hosts_json hosts.json a && project_init &&
	cat >proj/experiments/one.json <<-\JSON &&
	{"schema": 1, "name": "one", "phase": "attach test",
	 "sources": ["cpu/cputimer.c"], "targets": {"H100": "sm_90a"},
	 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
	 "problems": [{"name": "p", "params": {"work": 1000}}],
	 "steps": [{"kind": "benchmark", "program": "cputimer", "timeout_s": 120}]}
	JSON
	(cd proj && git add -A && git commit -qm spec)
'

test_expect_success 'a first run goes through start.sh (its tools are counted); the host builds the agent and the execd after it' '
	run one >r1.out 2>&1 && cat r1.out &&
	test_grep "^awk$" tools.log && test_grep "^perl$" tools.log &&
	W=$(sshd_var a WORKDIR) &&
	wait_for 300 "find \"$W/agent\" -name \"gpuorch-agent-*\" ! -name \"*.*\" -perm -100 | grep -q ." &&
	wait_for 300 "ls \"$W\"/execd/*.sock >/dev/null 2>&1" &&
	: "the next start says the agent is there: the controller keeps that" &&
	run one >r2.out 2>&1 && cat r2.out &&
	test "$(jq_ "$(last_run_dir)/run.json" hosts.0.runner)" = gpuorch-agent
'

test_expect_success 'a re-run is the agent alone on the host: no tool process, no runner.sh written, the same record' '
	: >tools.log &&
	run one >r3.out 2>&1 && cat r3.out &&
	d=$(last_run_dir) && id=$(basename "$d") &&
	test "$(jq_ "$d/run.json" outcome)" = passed &&
	test "$(jq_ "$d/run.json" hosts.0.runner)" = gpuorch-agent &&
	test "$(jq_ "$d/run.json" hosts.0.steps.0.status)" = PASS &&
	test "$(jq_ "$d/run.json" hosts.0.ship.files_sent)" = 0 &&
	test_grep "through the host'"'"'s execd" r3.out &&
	cat tools.log && ! test -s tools.log &&
	W=$(sshd_var a WORKDIR) &&
	test -s "$W/runs/$id/plan.sh" && test -s "$W/runs/$id/runner.agent" &&
	! test -e "$W/runs/$id/runner.sh" && ! test -e "$W/runs/$id/plan.sh.tmp" &&
	test_grep "\"ev\":\"runner_ended\",\"status\":\"done\"" "$W/runs/$id/journal"
'

test_expect_success 'a content the host must assemble again (its directory removed, the blobs kept): the agent makes it itself, no tool process, nothing ships' '
	d=$(last_run_dir) && cdir=$(jq_ "$d/run.json" hosts.0.ship.remote_dir) &&
	cp "$cdir/manifest" manifest.before &&
	rm -rf "$cdir" && : >tools.log &&
	run one >r4.out 2>&1 && cat r4.out &&
	d=$(last_run_dir) &&
	test "$(jq_ "$d/run.json" outcome)" = passed &&
	test "$(jq_ "$d/run.json" hosts.0.ship.files_sent)" = 0 &&
	test "$(jq_ "$d/run.json" hosts.0.ship.reused)" = false &&
	test "$(jq_ "$d/run.json" hosts.0.runner)" = gpuorch-agent &&
	test -f "$cdir/.complete" && test_cmp manifest.before "$cdir/manifest" &&
	echo "linked from the blobs (gpuorch-agent): 1 linked, 0 copied" >tree.want &&
	test_cmp tree.want "$cdir/tree.txt" &&
	cat tools.log && ! test -s tools.log &&
	: "and the next re-run is the agent alone again" &&
	: >tools.log && run one >r5.out 2>&1 &&
	test "$(jq_ "$(last_run_dir)/run.json" outcome)" = passed && ! test -s tools.log
'

# a250: a path of 250 bytes under data/
a250=data/$(printf "%0120d" 0 | tr 0 a)/$(printf "%0120d" 0 | tr 0 b).txt

test_expect_success 'a tree of a 250-byte path, an executable, a symlink, an empty file and one content twice: shipped by the execd'"'"'s put and made by the agent, no tool process, identical to the sender'"'"'s' '
	test ${#a250} = 250 &&
	mkdir -p "proj/$(dirname "$a250")" proj/data/sub &&
	echo "two hundred and fifty" >"proj/$a250" &&
	printf "#!/bin/sh\necho ran\n" >proj/data/sub/run.sh && chmod 755 proj/data/sub/run.sh &&
	echo "the target" >proj/data/target.txt && ln -s target.txt proj/data/link.txt &&
	: >proj/data/empty && echo same >proj/data/dup1 && echo same >proj/data/dup2 &&
	cat >proj/experiments/tree.json <<-\JSON &&
	{"schema": 1, "name": "tree", "phase": "a tree the agent makes",
	 "sources": ["cpu/cputimer.c", "data"], "targets": {"H100": "sm_90a"},
	 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
	 "problems": [{"name": "p", "params": {"work": 1000}}],
	 "steps": [{"kind": "benchmark", "program": "cputimer", "timeout_s": 120}]}
	JSON
	(cd proj && git add -A && git commit -qm tree) &&
	: >tools.log && run tree >t1.out 2>&1 && cat t1.out &&
	d=$(last_run_dir) && cdir=$(jq_ "$d/run.json" hosts.0.ship.remote_dir) && W=$(sshd_var a WORKDIR) &&
	test "$(jq_ "$d/run.json" outcome)" = passed &&
	test_grep "written by the host'"'"'s execd" t1.out &&
	cat tools.log && ! test -s tools.log &&
	echo "linked from the blobs (gpuorch-agent): 7 linked, 1 copied" >tree.want &&
	test_cmp tree.want "$cdir/tree.txt" &&
	(cd "$cdir/src" && find . ! -type d | sort) >files.host &&
	(cd proj && { echo cpu/cputimer.c; find data ! -type d; } | sed "s|^|./|" | sort) >files.sent &&
	test_cmp files.sent files.host &&
	while read -r f; do cmp "proj/$f" "$cdir/src/$f" || return 1; done <files.sent &&
	test -f "$cdir/src/data/link.txt" && ! test -L "$cdir/src/data/link.txt" &&
	test "$(stat -c %a "$cdir/src/data/sub/run.sh")" = 700 && test "$("$cdir/src/data/sub/run.sh")" = ran &&
	test "$(stat -c %a "$cdir/src/$a250")" = 400 && ! test -s "$cdir/src/data/empty" &&
	while read -r h m p; do
		if [ "$m" = 644 ]; then
			test "$(stat -c %i "$cdir/src/$p")" = "$(stat -c %i "$W/blobs/$h")" || return 1
		else
			test "$(stat -c %i "$cdir/src/$p")" != "$(stat -c %i "$W/blobs/$h")" || return 1
		fi
	done <"$cdir/manifest" &&
	test "$(stat -c %i "$cdir/src/data/dup1")" = "$(stat -c %i "$cdir/src/data/dup2")"
'

test_expect_success 'the blobs removed with the content (the controller thinks the host has them): the agent names them, the put resends them, the agent makes the tree; no tool process' '
	W=$(sshd_var a WORKDIR) && rm -rf "$W/blobs" "$W/content" &&
	: >tools.log && run tree >t2.out 2>&1 && cat t2.out &&
	d=$(last_run_dir) && cdir=$(jq_ "$d/run.json" hosts.0.ship.remote_dir) &&
	test "$(jq_ "$d/run.json" outcome)" = passed &&
	: "six contents: link.txt has the bytes of target.txt, dup2 those of dup1" &&
	test "$(jq_ "$d/run.json" hosts.0.ship.files_sent)" = 6 &&
	test_grep "written by the host'"'"'s execd" t2.out &&
	cat tools.log && ! test -s tools.log &&
	test_cmp tree.want "$cdir/tree.txt" &&
	while read -r f; do cmp "proj/$f" "$cdir/src/$f" || return 1; done <files.sent
'

test_expect_success 'a blob written through a tree (its mtime and mode changed): the agent removes it and names it, it is sent again; the others are not' '
	W=$(sshd_var a WORKDIR) && d=$(last_run_dir) && cdir=$(jq_ "$d/run.json" hosts.0.ship.remote_dir) &&
	h=$(grep " data/target.txt\$" "$cdir/manifest" | cut -c1-64) &&
	chmod 600 "$W/blobs/$h" && echo "changed by a build" >>"$cdir/src/data/target.txt" &&
	rm -rf "$cdir" && : >tools.log && run tree >t3.out 2>&1 && cat t3.out &&
	d=$(last_run_dir) &&
	test "$(jq_ "$d/run.json" outcome)" = passed &&
	test "$(jq_ "$d/run.json" hosts.0.ship.files_sent)" = 1 &&
	cat tools.log && ! test -s tools.log &&
	test "$(sha256sum <"$W/blobs/$h" | cut -c1-64)" = "$h" &&
	test "$(stat -c %a "$W/blobs/$h")" = 400 &&
	while read -r f; do cmp "proj/$f" "$cdir/src/$f" || return 1; done <files.sent
'

test_expect_success 'a host whose agent binary is gone: start.sh runs that start (runner.sh), the run passes' '
	W=$(sshd_var a WORKDIR) &&
	mkdir keep && mv "$W"/agent/gpuorch-agent-* keep/ &&
	run one >r6.out 2>&1 && cat r6.out &&
	d=$(last_run_dir) &&
	test "$(jq_ "$d/run.json" outcome)" = passed &&
	test "$(jq_ "$d/run.json" hosts.0.runner)" = runner.sh &&
	mv keep/* "$W"/agent/
'

# sig_sh CUDA_HOME PYTHON GPU: probe-sig.sh's $sig under this PATH
sig_sh() {
	{ printf "cuda_home=%s\npython=%s\ngpu=%s\n" "$1" "$2" "$3" &&
	  grep -v "^#" "$SRCDIR/orchestrator/remote/probe-sig.sh" &&
	  echo "printf \"%s\\n\" \"\$sig\""; } >sig.sh &&
	sh sig.sh
}

test_expect_success 'the agent'"'"'s host signature is probe-sig.sh'"'"'s (tools on PATH or not, CUDA_HOME, python, GPU index)' '
	nv=$(dirname "$(nvcc_path)") &&
	for p in "/usr/bin:/bin" "$nv:/usr/bin:/bin" "$TRASH/count:/usr/bin:/bin"; do
		for ch in "" "$(dirname "$nv")" /nonexistent; do
			for py in "" /usr/bin/python3 python3; do
				PATH=$p sig_sh "$ch" "$py" 1 >want &&
				PATH=$p "$AGENT" sig "cuda_home=$ch" "python=$py" gpu=1 >got &&
				test_cmp want got || exit 1
			done
		done
	done &&
	grep "^probe-v2|" got &&
	test_must_fail "$AGENT" sig nonsense=1 2>err && test_grep "usage: gpuorch-agent sig" err
'

test_expect_success 'the agent finds the plan by start.sh'"'"'s marker lines (start-script.h'"'"'s)' '
	for m in plan execd agent; do
		grep -F "\"#--gpuorch-$m--\"" "$SRCDIR/orchestrator/remote/start-script.h" &&
		grep -F "\"#--gpuorch-$m--\"" "$SRCDIR/orchestrator/host/agent-attach.c" || exit 1
	done
'

test_done
