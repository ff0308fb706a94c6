#!/bin/sh
# cost: 120
# asan: yes
test_description='the NCCL all-reduce example (issue 32): experiments/allreduce-nccl.json builds and is SKIPPED without GPUs; on a stand-in 2-GPU host a "gpus": 2 step names both GPUs, busbw is shown against the link peak, over the peak is IMPOSSIBLE, a busbw gate passes exactly at its threshold and fails one below'
# The 2-GPU host's nvidia-smi is tests/lib/gpupool.sh's stand-in. The
# program on it is a stand-in too (a Python script, so no GPU is needed):
# it prints the result allreduce_nccl prints (docs/result-contract.md:
# figures with "bound": "link", the link topology NVML gave) with the busbw
# and NVLink count its problem names, and logs the GPUs it was given.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"
. "$SRCDIR/tests/lib/gpupool.sh"

run_requires_sshd_nvcc 'all-reduce tests'
if ! test_have_cmd cc || ! test_have_cmd flock || ! test_have_cmd python3; then
	test_skip 'all-reduce tests' 'no C compiler (cc) for the host agent, no flock or no python3'
	test_done
fi

uuid() { gpupool_uuid a11e "$1"; }

# prob NAME BUSBW NVLINKS: a problem of the stand-in
prob() {
	printf '{"name": "%s", "params": {"tag": "%s", "log": "%s", "busbw": %s, "nvlinks": %s}}' \
		"$1" "$1" "$TRASH/ar.log" "$2" "$3"
}
run() {   # SPEC HOSTS: gpuorch run in proj
	(cd proj && "$GPUORCH" run "experiments/$1.json" --hosts "../$2" --plain)
}
# step_of RUN PROBLEM FIELD [--len]: a field of the step that ran PROBLEM
step_of() {
	_r=$1 _p=$2 _f=$3
	shift 3
	_k=0
	while [ $_k -lt "$(jq_ "$_r/run.json" hosts.0.steps --len)" ]; do
		if [ "$(jq_ "$_r/run.json" hosts.0.steps.$_k.problem)" = "$_p" ]; then
			jq_ "$_r/run.json" "hosts.0.steps.$_k.$_f" "$@"
			return
		fi
		_k=$((_k + 1))
	done
	return 1
}
# gate_of RUN PROBLEM FIELD: a field of the gate judged on PROBLEM
gate_of() {
	_k=0
	while [ $_k -lt "$(jq_ "$1/run.json" hosts.0.gates --len)" ]; do
		if [ "$(jq_ "$1/run.json" hosts.0.gates.$_k.problem)" = "$2" ]; then
			jq_ "$1/run.json" "hosts.0.gates.$_k.$3"
			return
		fi
		_k=$((_k + 1))
	done
	return 1
}

test_expect_success 'setup: host g with two H100s, host n with none; the real example and a stand-in project' '
	gpupool_smi smi2 a11e "NVIDIA H100 80GB HBM3" 9.0 "0 1" &&
	sshd_start_with_path g "$TRASH/smi2" &&
	sshd_start n &&
	sshd_write_hosts_json g.json g &&
	sshd_write_hosts_json n.json n &&
	project_init &&
	mkdir -p proj/kernels proj/standin &&
	cp -R "$SRCDIR/kernels/harness" "$SRCDIR/kernels/nccl" proj/kernels/ &&
	cp "$SRCDIR/experiments/allreduce-nccl.json" proj/experiments/ &&
	cat >proj/standin/allreduce.py <<-\EOF &&
	# allreduce.py: stands in for kernels/nccl/allreduce_nccl (t2270)
	import json, os, sys
	a = dict(x[2:].split("=", 1) for x in sys.argv[1:] if x.startswith("--") and "=" in x)
	with open(a["log"], "a") as f:
	    f.write("%s %s\n" % (a["tag"], os.environ.get("CUDA_VISIBLE_DEVICES", "")))
	bw, links, nbytes = float(a["busbw"]), int(a["nvlinks"]), 1 << 30
	med = nbytes / (bw * 1e3)   # algbw = busbw on 2 GPUs
	fig = lambda v, b: dict(value=v, unit="GB/s", better="higher", **({"bound": b} if b else {}))
	print(json.dumps({
	    "schema": "gpuorch.result/1", "program": "allreduce_nccl", "mode": a["mode"],
	    "status": "pass", "reason": None,
	    "problem": {"ranks": 2, "busbw": bw, "nvlinks": links},
	    "device": {"name": "NVIDIA H100 80GB HBM3", "cc": "9.0", "sm_count": 132},
	    "nccl": {"version": 22105, "library": "stand-in", "ranks": 2},
	    "link": {"source": "stand-in", "gpus": [
	        {"rank": r, "pci_bus_id": "0000:0%d:00.0" % r, "nvlinks_active": links,
	         "pcie_gen": 5, "pcie_width": 16} for r in (0, 1)]},
	    "correctness": {"pass": True},
	    "sizes": [{"bytes": nbytes, "median_us": med, "busbw_gbps": bw, "algbw_gbps": bw, "wrong": 0}],
	    "busbw_gbps": bw, "algbw_gbps": bw,
	    "figures": {"busbw_gbps": fig(bw, "link"), "algbw_gbps": fig(bw, None)},
	    "timing": {"n": 3, "min_us": med, "p10_us": med, "median_us": med, "mean_us": med,
	               "p90_us": med, "max_us": med, "cv_pct": 0, "stop_rule": "max_samples",
	               "samples_total": 3, "samples_kept": "all", "samples_us": [med, med, med]}}))
	EOF
	cat >proj/experiments/ar.json <<-EOF &&
	{"schema": 1, "name": "ar", "phase": "all-reduce stand-in",
	 "sources": ["standin/allreduce.py"], "targets": {"H100": "sm_90a"},
	 "programs": {"allreduce_nccl": {"script": "standin/allreduce.py"}},
	 "problems": [$(prob at-gate 270 18), $(prob below 269.9 18), $(prob at-peak 450 18),
	              $(prob over 450.5 18), $(prob pcie 50 0)],
	 "steps": [{"kind": "benchmark", "program": "allreduce_nccl", "gpus": 2, "timeout_s": 120}],
	 "gates": [{"program": "allreduce_nccl", "metric": "figures.busbw_gbps.pct_of_peak", "op": ">=", "value": 60}]}
	EOF
	(cd proj && git add -A && git commit -qm allreduce)
'

test_expect_success 'spec check passes the example and the stand-in; a figure field it does not know is refused' '
	"$GPUORCH" spec check proj/experiments/allreduce-nccl.json --root proj &&
	"$GPUORCH" spec check proj/experiments/ar.json --root proj &&
	sed "s/busbw_gbps.pct_of_peak/busbw_gbps.pct/" proj/experiments/ar.json >proj/experiments/bad.json &&
	test_expect_code 2 "$GPUORCH" spec check proj/experiments/bad.json --root proj 2>err &&
	cat err &&
	grep "unknown metric .figures.busbw_gbps.pct. for program .allreduce_nccl.: a figure the program prints is .figures.NAME.value., .figures.NAME.pct_of_peak. or .figures.NAME.peak." err
'

test_expect_success 'without a GPU the example builds for every arch it lists, its steps are SKIPPED with the reason, its gate fails as not measured' '
	test_expect_code 1 run allreduce-nccl n.json >none.out 2>&1 || { cat none.out; false; } &&
	cat none.out &&
	grep "gate ❌ busbw at 1 GiB >= 60 % of the link peak (figures.busbw_gbps.pct_of_peak >= 60) \\[allreduce_nccl, 2gpu-8K-1G\\]: not measured: the benchmark step benchmark.allreduce_nccl.2gpu-8K-1G SKIPPED: no CUDA device on this host" none.out &&
	run=$(last_run_dir) &&
	test "$(jq_ "$run/run.json" hosts.0.builds --len)" = 2 &&
	test "$(jq_ "$run/run.json" hosts.0.builds.0.status)" = PASS &&
	test "$(jq_ "$run/run.json" hosts.0.builds.1.status)" = PASS &&
	: "the ptxas report of its kernels (fill, check) is recorded" &&
	jq_ "$run/run.json" hosts.0.builds.0.resources.0.registers | grep "^[0-9]" &&
	test "$(jq_ "$run/run.json" hosts.0.steps.0.status)" = SKIPPED &&
	test "$(jq_ "$run/run.json" hosts.0.steps.1.status)" = SKIPPED &&
	jq_ "$run/run.json" hosts.0.steps.1.reason >why && cat why && test -s why &&
	"$SRCDIR/scripts/check-records.sh" "$run/run.json"
'

test_expect_success 'on 2 GPUs (a first run: under runner.sh): each step holds both, the record names them; busbw judged against the link peak' '
	test_expect_code 1 run ar g.json >ar.out 2>&1 || { cat ar.out; false; } &&
	cat ar.out ar.log &&
	run=$(last_run_dir) &&
	for p in at-gate below at-peak over pcie; do
		grep "^$p $(uuid 0),$(uuid 1)\$" ar.log &&
		test "$(step_of "$run" $p gpus --len)" = 2 &&
		test "$(step_of "$run" $p gpus.0.uuid)" = "$(uuid 0)" &&
		test "$(step_of "$run" $p gpus.1.uuid)" = "$(uuid 1)" || return 1
	done &&
	: "NVLink 4: 18 links x 25 GB/s; PCIe gen 5 x16 where no link is active" &&
	test "$(step_of "$run" at-gate result.roofline.peaks.link_gbps)" = 450 &&
	test "$(step_of "$run" at-gate result.figures.busbw_gbps.pct_of_peak)" = 60 &&
	test "$(step_of "$run" at-gate result.figures.busbw_gbps.peak)" = 450 &&
	test "$(step_of "$run" at-peak result.figures.busbw_gbps.pct_of_peak)" = 100 &&
	test "$(step_of "$run" at-peak status)" = PASS &&
	: "16 lanes x 32 GT/s x 128/130 / 8 = 63.0154 GB/s" &&
	awk -v v="$(step_of "$run" pcie result.roofline.peaks.link_gbps)" "BEGIN { exit !(v > 63.01538 && v < 63.01540) }" &&
	step_of "$run" pcie result.roofline.link_source | grep "^link: PCIe gen 5 x16 (3.93846 GB/s a lane) = 63.0154 GB/s per direction" &&
	step_of "$run" at-gate result.roofline.link_source | grep "^link: 18 NVLink links x 25 GB/s = 450 GB/s per direction (the least of 2 GPUs: GPU 0; topology: stand-in)\$" &&
	"$SRCDIR/scripts/check-records.sh" "$run/run.json"
'

test_expect_success 'a busbw over the link peak is IMPOSSIBLE: the step fails, and the gate does not take it' '
	run=$(last_run_dir) &&
	test "$(step_of "$run" over status)" = FAIL &&
	step_of "$run" over reason >why && cat why &&
	grep "IMPOSSIBLE: figure .busbw_gbps. 450.5 GB/s is over the physical peak 450 GB/s (the GPUs. link; link: 18 NVLink links x 25 GB/s" why &&
	test "$(step_of "$run" over result.figures.busbw_gbps.impossible)" = true &&
	test "$(gate_of "$run" over verdict)" = FAIL &&
	gate_of "$run" over reason | grep "over the GPU.s physical peak (impossible)"
'

test_expect_success 'the busbw gate: exactly at 60 % of the peak passes (>=), just below fails' '
	run=$(last_run_dir) &&
	test "$(gate_of "$run" at-gate verdict)" = PASS &&
	test "$(gate_of "$run" at-gate measured)" = 60 &&
	test "$(gate_of "$run" below verdict)" = FAIL &&
	test "$(gate_of "$run" at-peak verdict)" = PASS &&
	test "$(gate_of "$run" pcie verdict)" = PASS
'

test_expect_success 'the report shows busbw against the link peak, and the impossible one as such' '
	run=$(last_run_dir) &&
	grep "busbw_gbps" "$run/report.md" >rows && cat rows &&
	grep "\.at-gate | busbw_gbps | 270 (60.0% of the link.s 450 GB/s) | GB/s | higher | link: 18 NVLink links x 25 GB/s = 450 GB/s per direction" rows &&
	grep "\.over | busbw_gbps | 450 ⚠️ \*\*IMPOSSIBLE\*\* (over the physical peak) |" rows &&
	grep "\.pcie | busbw_gbps | 50 (79.3% of the link.s 63.0154 GB/s) |" rows &&
	: "the table by size: the stand-in reports one, 1 GiB (1.00 GiB: rpt_fmt_bytes)" &&
	grep "^| g | benchmark.allreduce_nccl.at-gate | 1.00 GiB | 3977 | — | 270 | 270 | 60.0 % | ✅ |\$" "$run/report.md" &&
	grep "^| g | benchmark.allreduce_nccl.over | 1.00 GiB | .* | 450.5 | 450.5 | 100.1 % ⚠️ \*\*IMPOSSIBLE\*\* | ✅ |\$" "$run/report.md"
'

test_done
