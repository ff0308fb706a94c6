#!/bin/sh
# cost: 120
# asan: yes
test_description='run --spread: the steps dealt over every GPU of the hosts of one GPU model, each once, one per GPU at a time, each row recording its host and GPU; each GPU model gets the whole experiment; without --spread every host runs everything (issue 32 part 2)'
# The hosts are loopback sshds on one machine, with one /tmp: their GPUs'
# locks are told apart by UUID (/tmp/gpuorch-gpu-<UUID>.lock), as on three
# machines; each host numbers its GPUs from 0. The step program is the
# stand-in of tests/lib/gpupool.sh: it logs "start TAG GPU" and "end TAG
# GPU held=N" and may wait (bounded) until the log holds WANT starts, so
# steps that must run at once meet there: the test asserts the order of
# lines, never a time.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"
. "$SRCDIR/tests/lib/gpupool.sh"

run_requires_sshd_nvcc 'spread tests'
if ! test_have_cmd cc || ! test_have_cmd flock; then
	test_skip 'spread tests' 'no C compiler (cc) for the host agent, or no flock'
	test_done
fi

uuid() { gpupool_uuid "$1" "$2"; }

# spec NAME PROBLEMS: one stand-in program, one benchmark step, the problems
spec() {
	cat >"proj/experiments/$1.json" <<JSON
{"schema": 1, "name": "$1", "phase": "spread $1",
 "sources": ["slot"], "targets": {"H100": "sm_90a", "A100": "sm_80"},
 "programs": {"s": {"run": ["sh", "slot/step.sh", "{tag}", "{log}", "{want}"],
                    "figures": {"gflops": {"regex": "^GFLOPS: ([0-9.]+)$", "unit": "GFLOP/s"}}}},
 "problems": [$2],
 "steps": [{"kind": "benchmark", "program": "s", "timeout_s": 120}]$3}
JSON
}
run() {   # SPEC HOSTS [OPTION...]: gpuorch run in proj
	_s=$1 _h=$2
	shift 2
	(cd proj && "$GPUORCH" run "experiments/$_s.json" --hosts "../$_h" --plain "$@")
}
# rows RUN: "host tag uuid status" of every step of every host, host order
rows() {
	for _h in 0 1; do
		_n=$(jq_ "$1/run.json" hosts.$_h.steps --len) || return 1
		_k=0
		while [ $_k -lt "$_n" ]; do
			echo "$(jq_ "$1/run.json" hosts.$_h.name) $(jq_ "$1/run.json" hosts.$_h.steps.$_k.problem)" \
			     "$(jq_ "$1/run.json" hosts.$_h.steps.$_k.gpus.0.uuid)" \
			     "$(jq_ "$1/run.json" hosts.$_h.steps.$_k.status)"
			_k=$((_k + 1))
		done
	done
}

test_expect_success 'setup: hosts a and b with four H100s each, host c with two A100s; a stand-in step program' '
	gpupool_smi smia aaaa "NVIDIA H100 80GB HBM3" 9.0 "0 1 2 3" &&
	gpupool_smi smib bbbb "NVIDIA H100 80GB HBM3" 9.0 "0 1 2 3" &&
	gpupool_smi smic cccc "NVIDIA A100-SXM4-80GB" 8.0 "0 1" &&
	sshd_start_with_path a "$TRASH/smia" &&
	sshd_start_with_path b "$TRASH/smib" &&
	sshd_start_with_path c "$TRASH/smic" &&
	sshd_write_hosts_json ab.json a b &&
	sshd_write_hosts_json ac.json a c &&
	sshd_write_hosts_json abc.json a b c &&
	project_init &&
	mkdir -p proj/slot &&
	gpupool_step_sh proj/slot/step.sh &&
	cat >proj/slot/build.sh <<-EOF &&
	# build.sh NAME: a stand-in project build, logged with its host work directory
	echo "\$(pwd | sed "s:^$TRASH/::; s:/.*::") \$1" >>"$TRASH/builds.log"
	mkdir -p bin && printf "#!/bin/sh\necho GFLOPS: 2.0\n" >"bin/\$1" && chmod +x "bin/\$1"
	EOF
	cat >proj/experiments/builds.json <<-EOF &&
	{"schema": 1, "name": "builds", "phase": "spread builds",
	 "sources": ["slot"], "targets": {"H100": "sm_90a"},
	 "programs": {
	   "ta": {"build": {"command": ["sh", "slot/build.sh", "ta"], "outputs": ["bin/ta"]}, "run": ["bin/ta"],
	          "figures": {"gflops": {"regex": "^GFLOPS: ([0-9.]+)\$", "unit": "GFLOP/s"}}},
	   "tb": {"build": {"command": ["sh", "slot/build.sh", "tb"], "outputs": ["bin/tb"]}, "run": ["bin/tb"],
	          "figures": {"gflops": {"regex": "^GFLOPS: ([0-9.]+)\$", "unit": "GFLOP/s"}}}},
	 "problems": [{"name": "one"}],
	 "steps": [{"kind": "benchmark", "program": "ta"}, {"kind": "benchmark", "program": "tb"}]}
	EOF
	LOG=warm.log && spec warm "$(gpupool_prob w 0)" &&
	LOG=sweep.log && spec sweep "$(gpupool_prob p1 8), $(gpupool_prob p2 8), $(gpupool_prob p3 8), $(gpupool_prob p4 8), $(gpupool_prob p5 8), $(gpupool_prob p6 8), $(gpupool_prob p7 8), $(gpupool_prob p8 8)" &&
	LOG=flat.log && spec flat "$(gpupool_prob f1 0), $(gpupool_prob f2 0), $(gpupool_prob f3 0), $(gpupool_prob f4 0)" &&
	LOG=models.log && spec models "$(gpupool_prob m1 0), $(gpupool_prob m2 0), $(gpupool_prob m3 0), $(gpupool_prob m4 0)" ", \"spread\": true" &&
	(cd proj && git add -A && git commit -qm spread)
'

test_expect_success 'a first run on every host (under runner.sh) builds the host agents' '
	run warm abc.json >warm.out 2>&1 || { cat warm.out; false; } &&
	for h in a b c; do
		W=$(sshd_var $h WORKDIR) &&
		wait_for 300 "find \"$W/agent\" -name \"gpuorch-agent-*\" ! -name \"*.*\" -perm -100 | grep -q ." || return 1
	done
'

test_expect_success 'spread: 8 steps over 2 hosts x 4 GPUs run each once, all 8 at once, one per GPU, each row with its host and GPU' '
	run sweep ab.json --spread >sweep.out 2>&1 || { cat sweep.out; false; } &&
	cat sweep.out sweep.log &&
	grep "spread: 4 of the 8 units (program x problem x variant) here, 4 steps; pool .NVIDIA H100 80GB HBM3.: 2 hosts, 8 GPUs" sweep.out &&
	: "the first eight lines are the eight starts: they met, at once" &&
	test "$(head -n 8 sweep.log | grep -c "^start")" = 8 &&
	test "$(wc -l <sweep.log)" = 16 &&
	gpupool_overlap sweep.log >ov && test ! -s ov &&
	! grep "held=0" sweep.log &&
	for k in 1 2 3 4 5 6 7 8; do
		test "$(grep -c "^start p$k " sweep.log)" = 1 || return 1
	done &&
	test "$(grep "^start" sweep.log | cut -d" " -f3 | sort -u | wc -l)" = 8 &&
	run=$(last_run_dir) &&
	rows "$run" >rows &&
	cat rows &&
	: "dealt round robin, GPU position first, host second, in plan order" &&
	cat >want <<-EOF &&
	a p1 $(uuid aaaa 0) PASS
	a p3 $(uuid aaaa 1) PASS
	a p5 $(uuid aaaa 2) PASS
	a p7 $(uuid aaaa 3) PASS
	b p2 $(uuid bbbb 0) PASS
	b p4 $(uuid bbbb 1) PASS
	b p6 $(uuid bbbb 2) PASS
	b p8 $(uuid bbbb 3) PASS
	EOF
	test_cmp want rows &&
	while read -r h tag u st; do
		grep "^start $tag $u\$" sweep.log || return 1
	done <rows &&
	"$SRCDIR/scripts/check-records.sh" "$run/run.json"
'

test_expect_success 'the report shows each row'"'"'s host and GPU' '
	run=$(last_run_dir) &&
	grep "ran on GPU" "$run/report.md" >rep && cat rep &&
	test "$(wc -l <rep)" = 8 &&
	grep "^- .s. benchmark ran on GPU 2 .$(uuid bbbb 2). (--spread)\$" rep &&
	grep -c "Another host of the pool ran this problem" "$run/report.md" >n && test "$(cat n)" = 8
'

test_expect_success 'without --spread every host runs every step, as before' '
	run flat ab.json >flat.out 2>&1 || { cat flat.out; false; } &&
	! grep "spread:" flat.out &&
	run=$(last_run_dir) &&
	test "$(jq_ "$run/run.json" hosts.0.steps --len)" = 4 &&
	test "$(jq_ "$run/run.json" hosts.1.steps --len)" = 4 &&
	for k in 1 2 3 4; do
		test "$(grep -c "^start f$k " flat.log)" = 2 || return 1
	done
'

test_expect_success 'compare takes each row'"'"'s own GPU: a row that ran on another GPU instance is judged by the cross-instance rule' '
	run flat ab.json --spread >fs.out 2>&1 || { cat fs.out; false; } &&
	spread_run=$(last_run_dir) &&
	run flat ab.json --host a >fa.out 2>&1 || { cat fa.out; false; } &&
	one_run=$(last_run_dir) &&
	(cd proj && "$GPUORCH" compare "$(basename "$spread_run")" "$(basename "$one_run")" --json \
		--reports ../reports) >cmp.json 2>cmp.err || { cat cmp.err; false; } &&
	cat cmp.json &&
	: "f1: GPU 0 of a in both runs; f2: GPU 0 of b, then GPU 1 of a" &&
	for k in 0 1 2 3; do
		echo "$(jq_ cmp.json rows.$k.problem) $(jq_ cmp.json rows.$k.gpu_uuid_a) $(jq_ cmp.json rows.$k.gpu_uuid_b) $(jq_ cmp.json rows.$k.notes)" || return 1
	done | sort >pairs &&
	cat pairs &&
	grep "^f1 $(uuid aaaa 0) $(uuid aaaa 0) null\$" pairs &&
	grep "^f2 $(uuid bbbb 0) $(uuid aaaa 1) GPU instances differ (GPU-bbbb0000 vs GPU-aaaa0000): the same within x1.08 across instances\$" pairs
'

test_expect_success 'spec "spread": true over hosts of two GPU models: each model gets the whole experiment, spread over its GPUs' '
	run models ac.json >models.out 2>&1 || { cat models.out; false; } &&
	cat models.out models.log &&
	grep "spread: 4 of the 4 units .*pool .NVIDIA H100 80GB HBM3.: 1 host, 4 GPUs" models.out &&
	grep "spread: 4 of the 4 units .*pool .NVIDIA A100-SXM4-80GB.: 1 host, 2 GPUs" models.out &&
	run=$(last_run_dir) &&
	rows "$run" >rows &&
	cat rows &&
	cat >want <<-EOF &&
	a m1 $(uuid aaaa 0) PASS
	a m2 $(uuid aaaa 1) PASS
	a m3 $(uuid aaaa 2) PASS
	a m4 $(uuid aaaa 3) PASS
	c m1 $(uuid cccc 0) PASS
	c m2 $(uuid cccc 1) PASS
	c m3 $(uuid cccc 0) PASS
	c m4 $(uuid cccc 1) PASS
	EOF
	test_cmp want rows
'

test_expect_success 'hosts with no kept probe (the start command probes, then waits for the deal) spread alike' '
	: >flat.log &&
	(GPUORCH_CACHE_DIR=$TRASH/cache-fresh && export GPUORCH_CACHE_DIR && run flat ab.json --spread) >fresh.out 2>&1 ||
		{ cat fresh.out; false; } &&
	cat fresh.out flat.log &&
	test "$(grep -c "spread: 2 of the 4 units .*pool .NVIDIA H100 80GB HBM3.: 2 hosts, 8 GPUs" fresh.out)" = 2 &&
	run=$(last_run_dir) &&
	rows "$run" >rows &&
	cat >want <<-EOF &&
	a f1 $(uuid aaaa 0) PASS
	a f3 $(uuid aaaa 1) PASS
	b f2 $(uuid bbbb 0) PASS
	b f4 $(uuid bbbb 1) PASS
	EOF
	test_cmp want rows &&
	test "$(wc -l <flat.log)" = 8
'

test_expect_success 'each host builds only what its own steps need' '
	rm -f builds.log &&
	run builds ab.json --spread >builds.out 2>&1 || { cat builds.out; false; } &&
	cat builds.out builds.log &&
	sort builds.log >got &&
	printf "work-a ta\nwork-b tb\n" >want &&
	test_cmp want got &&
	run=$(last_run_dir) &&
	test "$(jq_ "$run/run.json" hosts.0.builds --len)" = 1 &&
	test "$(jq_ "$run/run.json" hosts.0.builds.0.program)" = ta &&
	test "$(jq_ "$run/run.json" hosts.1.builds --len)" = 1 &&
	test "$(jq_ "$run/run.json" hosts.1.builds.0.program)" = tb &&
	test "$(jq_ "$run/run.json" hosts.1.steps.0.program)" = tb &&
	test "$(jq_ "$run/run.json" hosts.1.steps.0.status)" = PASS
'

test_expect_success 'gates: one whose rows a host holds is judged there only; a speedup whose kernel and baseline ran on two hosts is judged once for the pool, naming both rows' '
	cat >proj/slot/timed.py <<-\EOF &&
	# timed.py --median=US: a result with that median; as base.py, twice it (t2265)
	import json, os, sys
	a = dict(x[2:].split("=", 1) for x in sys.argv[1:] if "=" in x)
	m = float(a["median"]) * (2 if os.path.basename(sys.argv[0]) == "base.py" else 1)
	print(json.dumps({"schema": "gpuorch.result/1", "program": "t", "mode": a["mode"], "status": "pass",
	                  "reason": None, "problem": {}, "device": None, "correctness": {"pass": True},
	                  "timing": {"median_us": m, "n": 3, "samples_us": [m, m, m]}}))
	EOF
	cp proj/slot/timed.py proj/slot/base.py &&
	cat >proj/experiments/pg.json <<-EOF &&
	{"schema": 1, "name": "pg", "phase": "pool gates",
	 "sources": ["slot"], "targets": {"H100": "sm_90a"},
	 "programs": {"k": {"script": "slot/timed.py"}, "base": {"script": "slot/base.py"},
	              "s": {"run": ["sh", "slot/step.sh", "{tag}", "{log}", "{want}"],
	                    "figures": {"gflops": {"regex": "^GFLOPS: ([0-9.]+)\$", "unit": "GFLOP/s"}}}},
	 "problems": [{"name": "q", "params": {"median": 50, "tag": "q", "log": "$TRASH/pg.log", "want": 0}},
	              {"name": "r", "params": {"median": 100, "tag": "r", "log": "$TRASH/pg.log", "want": 0}}],
	 "steps": [{"kind": "benchmark", "program": "k", "problems": ["q"]},
	           {"kind": "benchmark", "program": "base", "role": "baseline", "problems": ["q"]},
	           {"kind": "benchmark", "program": "s", "problems": ["r"]}],
	 "gates": [{"program": "s", "problem": "r", "metric": "gflops", "op": ">=", "value": 1},
	           {"program": "k", "metric": "speedup", "op": ">=", "value": 2},
	           {"program": "k", "problem": "q", "metric": "speedup", "op": ">", "value": 2}]}
	EOF
	(cd proj && git add -A && git commit -qm pool-gates) &&
	test_expect_code 1 run pg ab.json --spread >pg.out 2>&1 || { cat pg.out; false; } &&
	cat pg.out &&
	run=$(last_run_dir) &&
	rows "$run" >rows && cat rows &&
	: "dealt: k.q to a GPU 0, base.q to b GPU 0, s.r to a GPU 1" &&
	grep "^a q $(uuid aaaa 0) PASS\$" rows && grep "^b q $(uuid bbbb 0) PASS\$" rows &&
	grep "^a r $(uuid aaaa 1) PASS\$" rows &&
	: "the gflops gate: host a ran s on r and judged it; b did not and does not fail it" &&
	test "$(jq_ "$run/run.json" hosts.0.gates --len)" = 1 &&
	test "$(jq_ "$run/run.json" hosts.0.gates.0.metric)" = gflops &&
	test "$(jq_ "$run/run.json" hosts.0.gates.0.verdict)" = PASS &&
	test "$(jq_ "$run/run.json" hosts.1.gates --len)" = 0 &&
	: "the speedups: once, for the pool, 100 / 50 = 2: exactly at >= 2 passes, > 2 fails" &&
	test "$(jq_ "$run/run.json" pool_gates --len)" = 1 &&
	test "$(jq_ "$run/run.json" pool_gates.0.pool)" = "NVIDIA H100 80GB HBM3" &&
	test "$(jq_ "$run/run.json" pool_gates.0.gates --len)" = 2 &&
	test "$(jq_ "$run/run.json" pool_gates.0.gates.0.measured)" = 2 &&
	test "$(jq_ "$run/run.json" pool_gates.0.gates.0.verdict)" = PASS &&
	test "$(jq_ "$run/run.json" pool_gates.0.gates.1.verdict)" = FAIL &&
	test "$(jq_ "$run/run.json" pool_gates.0.gates.0.rows.0.host)" = a &&
	test "$(jq_ "$run/run.json" pool_gates.0.gates.0.rows.0.step)" = benchmark.k.q &&
	test "$(jq_ "$run/run.json" pool_gates.0.gates.0.rows.0.gpus.0.uuid)" = "$(uuid aaaa 0)" &&
	test "$(jq_ "$run/run.json" pool_gates.0.gates.0.rows.1.host)" = b &&
	test "$(jq_ "$run/run.json" pool_gates.0.gates.0.rows.1.step)" = benchmark.base.q &&
	grep "^pool NVIDIA H100 80GB HBM3 (2 hosts): gate ✅ speedup >= 2 .*(rows: benchmark.k.q on a, benchmark.base.q on b)\$" pg.out &&
	grep "^pool NVIDIA H100 80GB HBM3 (2 hosts): gate ❌ speedup > 2 .*(rows: benchmark.k.q on a, benchmark.base.q on b)\$" pg.out &&
	grep "1 gate failed)\$" pg.out &&
	grep "| ✅ pass | speedup | pool NVIDIA H100 80GB HBM3 (a, b) | .k. · q | .speedup. | 2× | >= 2 | read .benchmark.k.q. on a, .benchmark.base.q. on b |" "$run/report.md" &&
	"$SRCDIR/scripts/check-records.sh" "$run/run.json"
'

test_expect_success 'a host lost before its plan: the pool is dealt among the hosts that came, nothing missing' '
	sshd_stop b &&
	: >flat.log &&
	test_must_fail run flat ab.json --spread >lost.out 2>&1 &&
	cat lost.out flat.log &&
	grep "spread: 4 of the 4 units .*pool .NVIDIA H100 80GB HBM3.: 1 host, 4 GPUs" lost.out &&
	run=$(last_run_dir) &&
	test "$(jq_ "$run/run.json" hosts.1.status)" = unreachable &&
	test "$(jq_ "$run/run.json" hosts.0.steps --len)" = 4 &&
	for k in 1 2 3 4; do
		test "$(grep -c "^start f$k " flat.log)" = 1 || return 1
	done
'

test_expect_success 'the dry run says the steps will be dealt, and sends nothing' '
	(cd proj && "$GPUORCH" run experiments/flat.json --hosts ../ab.json --spread --dry-run) >dry.out 2>&1 ||
		{ cat dry.out; false; } &&
	grep "^spread: each host shown runs only the units (program x problem x variant) dealt to it,\$" dry.out &&
	(cd proj && "$GPUORCH" run experiments/flat.json --hosts ../ab.json --dry-run) >dry2.out 2>&1 &&
	! grep "^spread:" dry2.out
'

test_expect_success 'run -h names --spread' '
	"$GPUORCH" run -h >h.out 2>&1 &&
	grep -- "--spread" h.out
'

test_done
