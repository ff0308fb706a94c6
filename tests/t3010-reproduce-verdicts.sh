#!/bin/sh
test_description='gpuorch reproduce: a same-commit record whose timings are 10x or 0.1x the truth (the factor 3: a loaded machine moves a 20 us busy loop by up to 1.4x) is not reproduced'
# The sources and spec of the altered records are those of the rerun (same
# commit), so only the figures can make the verdict: a record 3x slower
# than the rerun (the rerun is "faster") and one 3x faster (the rerun is
# "slower") must both be NOT REPRODUCED with exit 1; the unaltered record
# is REPRODUCED (the control). Checks are && chains without `return`.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'reproduce verdict tests'
if ! test_have_cmd python3; then
	test_skip 'reproduce verdict tests' 'python3 is not installed (used to rescale a record)'
	test_expect_success 'a record whose medians are x10 but whose samples are not: the record disagrees with itself, insufficient data, NOT REPRODUCED' '
	(cd proj && test_expect_code 1 "$GPUORCH" reproduce 20990101-000000-med10 --hosts ../hosts.json --factor 3) >m10.out 2>&1 &&
	rep=$(sed -n "s/^reproduction: //p" m10.out) && test -f "$rep" &&
	grep "^\*\*NOT REPRODUCED\*\*: 0 of 1 figure reproduced\.$" "$rep" &&
	grep "\*\*insufficient data\*\* (the stored samples do not represent the recorded medians)" "$rep" &&
	grep "the recorded medians give x0\.[0-9]*, the stored samples x[01]\.[0-9]*" "$rep"
'

test_expect_success 'a record from an H100 rerun (--host) where there is no such GPU: NOT COMPARABLE, both GPUs named, exit 0, never REPRODUCED' '
	(cd proj && "$GPUORCH" reproduce 20990101-000000-h100 --hosts ../hosts.json --host a --factor 3) >gpu.out 2>&1 ||
		{ cat gpu.out; false; } &&
	rep=$(sed -n "s/^reproduction: //p" gpu.out) && test -f "$rep" &&
	grep "^\*\*NOT COMPARABLE\*\*: recorded on NVIDIA H100 80GB HBM3, rerun on no GPU; 1 of 1 figure not comparable (see the table), none reproduced\.$" "$rep" &&
	! grep "^\*\*REPRODUCED" "$rep" &&
	grep "| a (NVIDIA H100 80GB HBM3 / no GPU) |" "$rep" &&
	grep "\*\*not comparable\*\*; different GPU models: NVIDIA H100 80GB HBM3 vs no GPU" "$rep"
'

test_done
fi

# scaled SRC_RUN_ID NEW_RUN_ID FACTOR [SAMPLES_FACTOR]: a copy of a recorded
# run with every benchmark timing (result.timing.*_us) times FACTOR and its
# samples (packed, tests/lib/samples.py) times SAMPLES_FACTOR (default FACTOR)
scaled() {
	mkdir -p reports/cpu/$2 &&
	python3 - reports/cpu/$1/run.json reports/cpu/$2/run.json "$2" "$3" "$SRCDIR/tests/lib" "${4:-$3}" <<-\PY
	import json, sys
	src, dst, new_id, f = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
	sys.path.insert(0, sys.argv[5])
	import samples
	fs = float(sys.argv[6])
	run = json.load(open(src))
	run["run_id"] = new_id
	n = 0
	for h in run["hosts"]:
	    for s in h["steps"]:
	        t = (s.get("result") or {}).get("timing")
	        if s["kind"] != "benchmark" or not t:
	            continue
	        for k, v in t.items():
	            if k.endswith("_us") and isinstance(v, (int, float)):
	                t[k] = v * f
	        samples.put(t, [x * fs for x in samples.get(t)])
	        n += 1
	assert n > 0, "no benchmark timing in the record"
	json.dump(run, open(dst, "w"), indent=1)
	PY
}

# on_gpu SRC_RUN_ID NEW_RUN_ID GPU: a copy of a recorded run whose host had GPU
on_gpu() {
	mkdir -p reports/cpu/$2 &&
	python3 - reports/cpu/$1/run.json reports/cpu/$2/run.json "$2" "$3" <<-\PY
	import json, sys
	src, dst, new_id, gpu = sys.argv[1:5]
	run = json.load(open(src))
	run["run_id"] = new_id
	for h in run["hosts"]:
	    h["info"]["gpu_name"] = gpu
	    h["info"]["gpu_uuid"] = "GPU-00000000-test"
	json.dump(run, open(dst, "w"), indent=1)
	PY
}

test_expect_success 'setup: one host, a committed CPU experiment, one recorded run' '
	sshd_start a &&
	sshd_write_hosts_json hosts.json a &&
	project_init &&
	cat >proj/experiments/cpu.json <<-\JSON &&
	{"schema": 1, "name": "cpu", "phase": "CPU busy loop",
	 "sources": ["cpu/cputimer.c"],
	 "targets": {"H100": "sm_90a"},
	 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
	 "problems": [{"name": "w20k", "params": {"work": 20000, "reps": 25}}],
	 "steps": [{"kind": "correctness", "program": "cputimer", "timeout_s": 60},
	           {"kind": "benchmark", "program": "cputimer", "timeout_s": 60}]}
	JSON
	(cd proj && git add -A && git commit -qm "cpu experiment") &&
	(cd proj && "$GPUORCH" run experiments/cpu.json --hosts ../hosts.json) >run.out 2>&1 &&
	R=$(basename $(last_run_dir)) && test -n "$R" &&
	scaled $R 20990101-000000-slow10 10 &&
	scaled $R 20990101-000000-fast01 0.1 &&
	scaled $R 20990101-000000-med10 10 1 &&
	on_gpu $R 20990101-000000-h100 "NVIDIA H100 80GB HBM3" &&
	test "$(jq_ reports/cpu/20990101-000000-slow10/run.json provenance.git.commit)" = "$(jq_ reports/cpu/$R/run.json provenance.git.commit)"
'

test_expect_success 'control: the unaltered record is REPRODUCED, exit 0' '
	(cd proj && "$GPUORCH" reproduce $R --hosts ../hosts.json --factor 3) >same.out 2>&1 &&
	grep "REPRODUCED" same.out && ! grep "NOT REPRODUCED" same.out
'

test_expect_success 'a record with timings x10 (the rerun is faster): NOT REPRODUCED, exit 1' '
	(cd proj && test_expect_code 1 "$GPUORCH" reproduce 20990101-000000-slow10 --hosts ../hosts.json --factor 3) >x10.out 2>&1 &&
	grep "NOT REPRODUCED" x10.out &&
	rep=$(sed -n "s/^reproduction: //p" x10.out) && test -f "$rep" &&
	grep "^\*\*NOT REPRODUCED\*\*: 0 of 1 figure reproduced\.$" "$rep" &&
	grep "\*\*faster\*\*" "$rep" &&
	grep "identical to the recorded" "$rep"
'

test_expect_success 'a record with timings x0.1 (the rerun is slower): NOT REPRODUCED, exit 1' '
	(cd proj && test_expect_code 1 "$GPUORCH" reproduce 20990101-000000-fast01 --hosts ../hosts.json --factor 3) >x01.out 2>&1 &&
	grep "NOT REPRODUCED" x01.out &&
	rep=$(sed -n "s/^reproduction: //p" x01.out) && test -f "$rep" &&
	grep "^\*\*NOT REPRODUCED\*\*: 0 of 1 figure reproduced\.$" "$rep" &&
	grep "\*\*slower\*\*" "$rep" &&
	grep "identical to the recorded" "$rep"
'

test_expect_success 'a record whose medians are x10 but whose samples are not: the record disagrees with itself, insufficient data, NOT REPRODUCED' '
	(cd proj && test_expect_code 1 "$GPUORCH" reproduce 20990101-000000-med10 --hosts ../hosts.json --factor 3) >m10.out 2>&1 &&
	rep=$(sed -n "s/^reproduction: //p" m10.out) && test -f "$rep" &&
	grep "^\*\*NOT REPRODUCED\*\*: 0 of 1 figure reproduced\.$" "$rep" &&
	grep "\*\*insufficient data\*\* (the stored samples do not represent the recorded medians)" "$rep" &&
	grep "the recorded medians give x0\.[0-9]*, the stored samples x[01]\.[0-9]*" "$rep"
'

test_expect_success 'a record from an H100 rerun (--host) where there is no such GPU: NOT COMPARABLE, both GPUs named, exit 0, never REPRODUCED' '
	(cd proj && "$GPUORCH" reproduce 20990101-000000-h100 --hosts ../hosts.json --host a --factor 3) >gpu.out 2>&1 ||
		{ cat gpu.out; false; } &&
	rep=$(sed -n "s/^reproduction: //p" gpu.out) && test -f "$rep" &&
	grep "^\*\*NOT COMPARABLE\*\*: recorded on NVIDIA H100 80GB HBM3, rerun on no GPU; 1 of 1 figure not comparable (see the table), none reproduced\.$" "$rep" &&
	! grep "^\*\*REPRODUCED" "$rep" &&
	grep "| a (NVIDIA H100 80GB HBM3 / no GPU) |" "$rep" &&
	grep "\*\*not comparable\*\*; different GPU models: NVIDIA H100 80GB HBM3 vs no GPU" "$rep"
'

test_done
