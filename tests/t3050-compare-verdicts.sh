#!/bin/sh
# asan: yes
test_description='compare and history on edited copies of committed runs: other GPU models are not comparable, two GPU instances of one model are judged at the instance factor, a record whose medians and samples disagree is never "same", a run without a commit is placed by its time'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/runlib.sh"

if ! test_have_cmd python3; then
	test_skip 'compare verdict tests' 'python3 is not installed (used to edit records)'
	test_done
fi

# edited EXP SRC_ID NEW_ID PYTHON: a copy of committed run SRC_ID of
# experiment EXP as NEW_ID (SRC_ID itself when the same; no summary: run.json
# is read), PYTHON run on it
# with `run` (the record), `bench(run)` (its benchmark timings, a sweep's too) and `samples`
# (tests/lib/samples.py: the samples in either form) at hand
edited() {
	{ test "$2" = "$3" || { rm -rf store/$1/$3 && cp -R store/$1/$2 store/$1/$3; }; } &&
	rm -f store/$1/$3/summary.json store/$1/$3/samples.txt &&
	python3 - store/$1/$3/run.json "$3" "$SRCDIR/tests/lib" "$4" <<-\PY
	import json, sys
	path, new_id, lib, code = sys.argv[1:5]
	sys.path.insert(0, lib)
	import samples
	def bench(run):
	    return [s["result"]["timing"] for h in run["hosts"] for s in h["steps"]
	            if (s.get("kind") == "benchmark" or (s.get("kind") == "sweep" and s.get("mode") == "bench"))
	            and (s.get("result") or {}).get("timing")]
	def scale(run, f, medians=True, stored=True):
	    for t in bench(run):
	        if medians:
	            for k in ("median_us", "min_us", "max_us", "p10_us", "p90_us", "mean_us"):
	                if isinstance(t.get(k), (int, float)):
	                    t[k] *= f
	        if stored:
	            samples.put(t, [x * f for x in samples.get(t)])
	run = json.load(open(path))
	run["run_id"] = new_id
	exec(code)
	json.dump(run, open(path, "w"), indent=1)
	PY
}

test_expect_success 'setup: a copy of the committed runs' '
	fixture_runs store && GPUORCH_REPORTS=$TRASH/store && export GPUORCH_REPORTS
'

H100=20261126-205909-837be4
H200=20261126-200027-3276e7
test_expect_success 'compare H100 vs H200 at one commit: not comparable, both GPUs named, exit 0' '
	test "$(jq_ store/attention-wgmma/$H100/run.json provenance.git.commit)" = \
	     "$(jq_ store/attention-wgmma/$H200/run.json provenance.git.commit)" &&
	"$GPUORCH" compare $H100 $H200 >gpu.md &&
	grep "^| attn_wgmma B4-H16-S4096-D128 | h100 (NVIDIA H100 80GB HBM3 / NVIDIA H200) | .* | \*\*not comparable\*\*; different GPU models: NVIDIA H100 80GB HBM3 vs NVIDIA H200 (give --cross-gpu to compare them anyway) |$" gpu.md &&
	grep "^32 figures: 0 same, .* 0 missing, 32 not comparable; no regression$" gpu.md &&
	"$GPUORCH" compare $H100 $H200 --json >gpu.json &&
	test "$(jq_ gpu.json rows.0.verdict)" = "not comparable" &&
	test "$(jq_ gpu.json rows.0.gpu_b)" = "NVIDIA H200" && test "$(jq_ gpu.json regressions)" = 0
'

test_expect_success 'the H200 run made x1.3 slower is still not comparable (exit 0); --cross-gpu asks for the verdict: slower, exit 1' '
	edited attention-wgmma $H200 20261126-200027-5105e7 "scale(run, 1.3)" &&
	"$GPUORCH" compare $H100 20261126-200027-5105e7 >slow.md &&
	! grep "REGRESSION" slow.md && grep "32 not comparable; no regression" slow.md &&
	test_expect_code 1 "$GPUORCH" compare $H100 20261126-200027-5105e7 --cross-gpu >cross.md &&
	grep "^| attn_wgmma B4-H16-S4096-D128 | h100 (NVIDIA H100 80GB HBM3 / NVIDIA H200) | .* | \*\*slower\*\*.*GPU differs: NVIDIA H100 80GB HBM3 vs NVIDIA H200 (--cross-gpu); REGRESSION |$" cross.md
'

A=20261127-174947-2aa865
B=20261127-184255-d498b1
test_expect_success 'two H100 instances, one source tree: the same (x1.046 on gemm_wgmma 8192), both instances and each row'"'"'s clock named, exit 0' '
	test "$(jq_ store/gemm-wgmma/$A/run.json provenance.content_id)" = \
	     "$(jq_ store/gemm-wgmma/$B/run.json provenance.content_id)" &&
	"$GPUORCH" compare $A $B >inst.md &&
	grep "^| gemm_wgmma M8192-N8192-K8192 | h100 (NVIDIA H100 80GB HBM3) | 1560 us \[1457-1802, n=318\] at 1890 MHz | 1632 us \[1437-1689, n=314\] at 1575 MHz | x1.046 | .* | \*\*same\*\*; GPU instances differ (GPU-e5130b51 vs GPU-e683d179): the same within x1.08 across instances |$" inst.md &&
	grep "^37 figures: 31 same, .* 6 missing; no regression$" inst.md
'

test_expect_success 'across instances x1.072 (machine noise) is the same, x1.1 is slower (exit 1); on one instance x1.072 is slower' '
	edited gemm-wgmma $A 20261127-174947-a1072e "scale(run, 1.072); run[\"hosts\"][0][\"info\"][\"gpu_uuid\"] = \"GPU-d3fe6ac3-0000\"" &&
	edited gemm-wgmma $A 20261127-174947-a1100e "scale(run, 1.1); run[\"hosts\"][0][\"info\"][\"gpu_uuid\"] = \"GPU-d3fe6ac3-0000\"" &&
	edited gemm-wgmma $A 20261127-174947-a10720 "scale(run, 1.072)" &&
	"$GPUORCH" compare $A 20261127-174947-a1072e >n1072.md &&
	grep "^| gemm_wgmma M8192-N8192-K8192 | .* | x1.072 | .* | \*\*same\*\*.*GPU instances differ (GPU-e5130b51 vs GPU-d3fe6ac3)" n1072.md &&
	grep "^31 figures: 31 same, .*; no regression$" n1072.md &&
	test_expect_code 1 "$GPUORCH" compare $A 20261127-174947-a1100e >n1100.md &&
	grep "^| gemm_wgmma M4096-N4096-K4096 | .* | x1.100 | .* | \*\*slower\*\*; GPU instances differ .*REGRESSION |$" n1100.md &&
	test_expect_code 1 "$GPUORCH" compare $A 20261127-174947-a10720 >s1072.md &&
	grep "^| gemm_wgmma M4096-N4096-K4096 | .* | x1.072 | .* | \*\*slower\*\*.*REGRESSION |$" s1072.md &&
	! grep "GPU instances differ" s1072.md &&
	"$GPUORCH" compare $A 20261127-174947-a1100e --instance-factor 1.2 >wide.md &&
	grep "^31 figures: 31 same" wide.md
'

test_expect_success 'B median x1.30 over the same stored samples: not same (insufficient data, the recorded medians named), REGRESSION, exit 1' '
	edited gemm-wgmma $A 20261127-174947-b1300e "scale(run, 1.3, stored=False)" &&
	test_expect_code 1 "$GPUORCH" compare $A 20261127-174947-b1300e >m130.md &&
	grep "^| gemm_wgmma M8192-N8192-K8192 | .* | x1.000 | 1.0000 | \*\*insufficient data\*\* (the stored samples do not represent the recorded medians); the recorded medians give x1.300, the stored samples x1.000; REGRESSION |$" m130.md &&
	! grep "\*\*same\*\*" m130.md
'

test_expect_success 'history: the oldest run has no commit; made x1.2 slower it is placed first by its time, not newest (exit 0); a dirty run is commit+diff' '
	old=20261122-052342-b8cc6a &&
	test "$(jq_ store/attention-forward/$old/run.json provenance.git.commit)" = null &&
	edited attention-forward $old $old "scale(run, 1.2)" &&
	"$GPUORCH" history attention-forward --root "$SRCDIR" >hist.md &&
	cat hist.md &&
	grep "^| 1 | (none) | - | (commit unknown here) | $old |" hist.md &&
	! grep "^| 6 | (none)" hist.md &&
	grep "^| 5 | c8a09f6+eb50819 | " hist.md &&
	! grep "regression" hist.md &&
	"$GPUORCH" history attention-forward --root "$SRCDIR" --json >hist.json &&
	test "$(jq_ hist.json points.0.run_id)" = $old
'

test_expect_success 'history: a step between two GPU instances names them and is judged at the instance factor' '
	grep "^| 3 | 9dec0ad | .* at 1980 MHz | .* | GPU instances differ (GPU-2fd92959 vs GPU-87fcaa12): the same within x1.08 across instances |$" hist.md &&
	grep "^| 2 | 9dec0ad | .* | \*\*gain\*\* x0.836; GPU instances differ (GPU-55d069e7 vs GPU-2fd92959)" hist.md
'

test_done
