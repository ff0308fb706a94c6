#!/bin/sh
# asan: yes
test_description='physical peaks by exact device: a figure over its peak is IMPOSSIBLE wherever it comes from (a program own output, a script result with no bound, a committed record), exactly at the peak is not; % of peak labelled, on an H200 too'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"
. "$SRCDIR/tests/lib/fakegpu.sh"

# edit FILE PYTHON: run a python edit of the JSON in FILE (r is the record)
edit() {
	python3 - "$1" "$2" <<-\EOF
	import json, sys
	r = json.load(open(sys.argv[1]))
	exec(sys.argv[2])
	json.dump(r, open(sys.argv[1], "w"), indent=1)
	EOF
}

# copy of a committed run into reports/EXP/ID (its report is ours to write)
copy_run() {
	mkdir -p reports/$1 && cp -R "$SRCDIR/tests/fixtures/reports/$1/$2" reports/$1/ &&
	rm -f reports/$1/$2/summary.json reports/$1/$2/report.md
}

H100=reports/attention-wgmma/20261127-211354-fbd6c4
H200=reports/attention-wgmma/20261127-023843-977378
SGEMM=reports/sgemm-cuda/20261123-212848-2f3e61

test_expect_success 'a committed H100 record: an sdpa_flash median set to 33,164 TFLOPS is IMPOSSIBLE, not 57x faster' '
	copy_run attention-wgmma 20261127-211354-fbd6c4 &&
	edit $H100/run.json "
for h in r[\"hosts\"]:
    for s in h[\"steps\"]:
        res = s.get(\"result\") or {}
        if s[\"program\"] == \"sdpa_flash\" and s[\"kind\"] == \"benchmark\" and s[\"problem\"] == \"B4-H16-S4096-D128\":
            f = res[\"model\"][\"flops\"]
            res[\"timing\"][\"median_us\"] = f / 33164e6
" &&
	"$GPUORCH" report 20261127-211354-fbd6c4 --reports reports --stdout >h100.md &&
	grep "sdpa_flash.*B4-H16-S4096-D128.*IMPOSSIBLE" h100.md &&
	grep "IMPOSSIBLE timing.*beats the physical bound of .* us (NVIDIA H100 80GB HBM3 (cc 9.0): 132 SMs" h100.md &&
	! grep "sdpa_flash\` B4-H16-S4096-D128: .*× vs" h100.md
'

test_expect_success 'a committed H200 record gets its own % of peak (DRAM; FP16/BF16 once its spec declares the datatype)' '
	copy_run attention-wgmma 20261127-023843-977378 &&
	"$GPUORCH" report 20261127-023843-977378 --reports reports --stdout >h200.md &&
	grep "% of the DRAM peak" h200.md && grep "| % of peak |" h200.md &&
	! grep "speed of light" h200.md &&
	! grep "FP16/BF16 peak" h200.md &&
	edit $H200/run.json "r[\"experiment\"][\"spec\"][\"programs\"][\"attn_wgmma\"][\"datatype\"] = \"fp16\"" &&
	"$GPUORCH" report 20261127-023843-977378 --reports reports --stdout >h200b.md &&
	grep "attn_wgmma.*TFLOPS\*\* ([0-9]* % of the FP16/BF16 peak)" h200b.md
'

test_expect_success 'an H100 PCIe is held to its own 2,039 GB/s, not the SXM 3,352: a 2,500 GB/s figure is IMPOSSIBLE there' '
	copy_run sgemm-cuda 20261123-212848-2f3e61 &&
	edit $SGEMM/run.json "
r[\"experiment\"][\"spec\"][\"programs\"][\"sgemm\"][\"figures\"][\"bw\"] = {\"regex\": \"x\", \"unit\": \"GB/s\"}
for h in r[\"hosts\"]:
    h[\"info\"][\"gpu_name\"] = \"NVIDIA H100 PCIe\"
    for s in h[\"steps\"]:
        if s[\"kind\"] == \"benchmark\" and s[\"problem\"] == \"k2-coalesce\":
            s[\"result\"][\"figures\"][\"bw\"] = {\"value\": 2500, \"unit\": \"GB/s\"}
" &&
	"$GPUORCH" report 20261123-212848-2f3e61 --reports reports --stdout >pcie.md &&
	grep "bw.*2500.*IMPOSSIBLE" pcie.md &&
	: "issue 30 item 11: the gate measured value has its unit" &&
	grep "^| ✅ pass | gflops_4096 | h100 | \`sgemm\` · k10-warptiling | \`gflops_4096\` | 36342 GFLOP/s |" pcie.md
'

test_expect_success 'a program off the harness names one of its own problems as its baseline: sgemm-cuda k10 against k0 (cuBLAS) by its figure' '
	edit $SGEMM/run.json "r[\"experiment\"][\"spec\"][\"programs\"][\"sgemm\"][\"baseline_problem\"] = \"k0-cublas\"" &&
	"$GPUORCH" report 20261123-212848-2f3e61 --reports reports --stdout >sgemm.md &&
	grep "\`sgemm\` k10-warptiling: .* — \*\*0.71×\*\* vs \`sgemm\` k0-cublas (gflops_4096) (measured)" sgemm.md &&
	grep "\`sgemm\` k0-cublas: .* — no measured baseline" sgemm.md
'

test_expect_success 'setup: a stand-in H100 host, a program printing its own GFLOP/s (FP32 declared) and a script result with no bound' '
	fakegpu_install "$TRASH/fg" &&
	sshd_start_with_path g "$TRASH/fg/smi" &&
	sshd_write_hosts_json hosts.json g &&
	mkdir -p pproj/experiments && cd pproj && git init -q &&
	git config user.email t@example.com && git config user.name t &&
	cat >fake.py <<-\EOF &&
	import json, sys
	# a Python baseline that claims 33,164 TFLOPS and no bound of its own (as _bench.py did)
	print(json.dumps({"schema": "gpuorch.result/1", "program": "fake", "mode": "bench", "status": "pass",
	                  "reason": None, "problem": {}, "device": None,
	                  "timing": {"median_us": 1.0, "n": 10, "samples_us": [1.0] * 10},
	                  "model": {"flops": 33164e6, "bytes": 1, "peak_source": "none", "impossible": False}}))
	EOF
	cat >experiments/p.json <<-\JSON &&
	{"schema": 1, "name": "peaks", "phase": "peaks",
	 "sources": ["fake.py"], "targets": {"H100": "sm_90a"},
	 "programs": {"fig": {"run": ["sh", "-c", "echo GFLOPS: {g}"], "datatype": "fp32",
	                      "figures": {"gflops": {"regex": "GFLOPS: ([0-9.]+)", "unit": "GFLOP/s", "better": "higher"}}},
	              "fake": {"script": "fake.py"}},
	 "problems": [{"name": "at-peak", "params": {"g": 66908.16}},
	              {"name": "over", "params": {"g": 66908.17}},
	              {"name": "cublas", "params": {"g": 50884}}],
	 "steps": [{"kind": "benchmark", "program": "fig"},
	           {"kind": "benchmark", "program": "fake", "problems": ["cublas"]}]}
	JSON
	git add -A && git commit -qm p && cd .. &&
	test_expect_code 1 sh -c "cd pproj && \"$GPUORCH\" run experiments/p.json --hosts ../hosts.json" >run.out 2>&1;
	cat run.out && run=$(last_run_dir) && test -n "$run" && echo "$run" >run.dir
'

test_expect_success 'a GFLOP/s figure exactly at the FP32 peak (132 x 256 x 1980 MHz = 66,908.16) passes; a hundredth over is IMPOSSIBLE and fails its step' '
	run=$(cat run.dir) &&
	edit $run/run.json "
st = {s[\"id\"]: s for s in r[\"hosts\"][0][\"steps\"]}
print(json.dumps({k: (v[\"status\"], v.get(\"reason\")) for k, v in st.items()}, indent=1))
" >steps.txt && cat steps.txt &&
	grep -A1 "benchmark.fig.at-peak\"" steps.txt | grep "\"PASS\"" &&
	grep -A2 "benchmark.fig.over\"" steps.txt | grep "\"FAIL\"" &&
	grep "IMPOSSIBLE: figure .gflops. 66908.17 GFLOP/s is over the physical peak 66908.16 GFLOP/s (FP32; NVIDIA H100 80GB HBM3" steps.txt &&
	grep -A1 "benchmark.fig.cublas\"" steps.txt | grep "\"PASS\""
'

test_expect_success 'a script result with no bound of its own is judged by the controller: IMPOSSIBLE, FAIL, model.impossible set' '
	run=$(cat run.dir) &&
	grep -A2 "benchmark.fake.cublas\"" steps.txt | grep "\"FAIL\"" &&
	grep "IMPOSSIBLE: the median 1 us beats the physical bound" steps.txt &&
	edit $run/run.json "
s = [s for s in r[\"hosts\"][0][\"steps\"] if s[\"program\"] == \"fake\"][0]
assert s[\"result\"][\"model\"][\"impossible\"] is True
assert s[\"result\"][\"roofline\"][\"impossible\"] is True
assert s[\"result\"][\"roofline\"][\"peaks\"][\"fp8_tflops\"] > 2000
" && grep "IMPOSSIBLE" $run/report.md
'

test_expect_success 'spec check: a reference or baseline must name its programs and problems; a datatype must be known' '
	cd pproj &&
	sed "s/\"steps\":/\"references\": [{\"name\": \"FA3\", \"gpu\": \"H100\", \"tflops\": 450}], \"steps\":/" experiments/p.json >experiments/r.json &&
	test_expect_code 2 "$GPUORCH" spec check experiments/r.json 2>err1 && cat err1 &&
	grep "references\[0\].: name the program it is for: .program. (one) or .programs. (several)" err1 &&
	sed "s/\"steps\":/\"references\": [{\"name\": \"FA3\", \"gpu\": \"H100\", \"program\": \"fig\", \"problems\": [\"over\", \"nope\"], \"tflops\": 450}], \"steps\":/" experiments/p.json >experiments/r.json &&
	test_expect_code 2 "$GPUORCH" spec check experiments/r.json 2>err2 && cat err2 &&
	grep "references\[0\].problems\[1\].: no problem named \"nope\"" err2 &&
	sed "s/\"steps\":/\"references\": [{\"name\": \"FA3\", \"gpu\": \"H100\", \"program\": \"fig\", \"problems\": [\"over\"], \"tflops\": 450}], \"steps\":/" experiments/p.json >experiments/r.json &&
	"$GPUORCH" spec check experiments/r.json &&
	sed "s/\"datatype\": \"fp32\"/\"datatype\": \"int4\"/" experiments/p.json >experiments/r.json &&
	test_expect_code 2 "$GPUORCH" spec check experiments/r.json 2>err3 && cat err3 &&
	grep "unknown datatype .int4." err3 &&
	sed "s/\"datatype\": \"fp32\"/\"datatype\": \"fp32\", \"baseline_problem\": \"k0\"/" experiments/p.json >experiments/r.json &&
	test_expect_code 2 "$GPUORCH" spec check experiments/r.json 2>err4 && cat err4 &&
	grep "programs.fig.baseline_problem.: no problem named \"k0\"" err4
'

test_expect_success 'the SDPA baseline records which backend PyTorch chose, from the kernels one call launched' '
	cat >fake_sdpa.py <<-\EOF &&
	import sys, types
	sys.path.insert(0, sys.argv[1])
	import sdpa
	def fake_torch(names):
	    class Ev:
	        def __init__(self, n, d): self.name, self.device_type, self.kernels = n, d, []
	    class Prof:
	        def __enter__(self): return self
	        def __exit__(self, *a): return False
	        def events(self): return [Ev("aten::scaled_dot_product_attention", "DeviceType.CPU")] + [Ev(n, "DeviceType.CUDA") for n in names]
	    prof = types.SimpleNamespace(ProfilerActivity=types.SimpleNamespace(CUDA=1), profile=lambda activities: Prof())
	    sys.modules["torch.profiler"] = prof
	    return types.SimpleNamespace(profiler=prof, cuda=types.SimpleNamespace(synchronize=lambda: None))
	cudnn = "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_kernel0_0"
	b = sdpa.chosen_backend(fake_torch([cudnn]), lambda: None, "default")
	assert b["chosen"] == "cudnn" and b["requested"] == "default" and b["kernels"] == [cudnn], b
	b = sdpa.chosen_backend(fake_torch(["void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4> >(pytorch_flash::Flash_fwd_params)"]), lambda: None, "flash")
	assert b["chosen"] == "flash", b
	b = sdpa.chosen_backend(fake_torch(["fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<>::Params)"]), lambda: None, "default")
	assert b["chosen"] == "efficient", b
	b = sdpa.chosen_backend(fake_torch(["sm90_xmma_gemm_f16f16_f16f32", "void at::native::(anonymous namespace)::cunn_SoftMaxForward<8>"]), lambda: None, "math")
	assert b["chosen"] == "math", b
	b = sdpa.chosen_backend(fake_torch([]), lambda: None, "default")
	assert b["chosen"] is None and "no CUDA kernel" in b["why"], b
	print("backends ok")
	EOF
	python3 fake_sdpa.py "$SRCDIR/kernels/baselines" >sdpa.out 2>&1 || { cat sdpa.out; false; } &&
	grep "backends ok" sdpa.out
'

test_done
