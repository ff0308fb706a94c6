#!/bin/sh
# cost: 40
# asan: yes
test_description='a fresh host is probed by the run'"'"'s one start command: planned from that probe on the same channel; the tools only recorded are asked beside the builds and in the record before the first step; a link lost mid-probe reconnects and probes again; a host lost for good is unreachable with its probe phase saying why; SIGINT mid-probe starts nothing'
# The host's nvidia-smi is a stand-in that prints an H100 once a gate file
# exists (so each test holds the probe for as long as it needs), and marks
# each call it gets in a log; its ncu answers --version once another gate
# file exists.
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'probe-first tests'

SMI=$TRASH/smi
GATE=$TRASH/smi-go
CALLS=$TRASH/smi-calls
NCU_GATE=$TRASH/ncu-go
# a fake tool waits on its gate (up to 300 s, for a loaded machine): a test
# that fails before opening one must not leave it waiting
test_at_exit "touch '$GATE' '$NCU_GATE'"
# the driver's /proc files as the host's probe reads them (GPUORCH_NVPROC):
# absent unless a test writes them (fake_nvproc MODEL [UUID])
NVPROC=$TRASH/nvproc
fake_nvproc() {
	mkdir -p "$NVPROC/gpus/0000:18:00.0" "$NVPROC/gpus/0000:2a:00.0" &&
	printf "Model: \t\t %s\nIRQ:   \t\t 150\nGPU UUID: \t %s\n" "$1" "${2:-GPU-00000000-0000-0000-0000-fa4e00000001}" \
		>"$NVPROC/gpus/0000:18:00.0/information" &&
	printf "Model: \t\t NVIDIA L4\nGPU UUID: \t GPU-00000000-0000-0000-0000-fa4e00000002\n" \
		>"$NVPROC/gpus/0000:2a:00.0/information" &&
	printf "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U16)  Thu Jul 10 2025\nGCC version:  gcc version 12.3.0\n" \
		>"$NVPROC/version"
}

XHOME=$TRASH/home

# a fresh host for each case: no workdir or probe cache there, no kept probe here
forget_host() {
	sshd_forget_workdir a && rm -rf "$XHOME/.cache" "$GPUORCH_CACHE_DIR"
}

# held_probe NAME RECONNECT_S: a run on a fresh host, in the background,
# until its probe is held in nvidia-smi; its output in NAME.out, its exit
# status in NAME.rc once it ends
held_probe() {
	forget_host && rm -f "$GATE" && : >"$CALLS" &&
	{ (cd proj && "$GPUORCH" run experiments/cpu1.json --hosts ../hosts.json --plain \
		--reconnect-timeout "$2" >"../$1.out" 2>&1; echo $? >"../$1.rc") & } &&
	wait_for 60 "test -s \"$CALLS\""
}

# run_passed NAME: the run started in the background as NAME ends (120 s at
# most) with exit 0 and a passed record; $run is its directory
run_passed() {
	wait_for 120 "test -f $1.rc" &&
	cat "$1.out" &&
	test "$(cat "$1.rc")" = 0 &&
	run=$(last_run_dir) &&
	test "$(jq_ "$run"/run.json outcome)" = passed
}

# smi_beside_builds NAME: a run on a fresh host, in the background, with
# nvidia-smi held at its gate: the builds end while it is held, and no step
# starts nor the deferred tools' event is journaled before it answers; then
# it is let go and the run passes ($run; its output in NAME.out)
smi_beside_builds() {
	forget_host && : >"$CALLS" && rm -f "$GATE" && touch "$NCU_GATE" &&
	{ (cd proj && "$GPUORCH" run experiments/cpu1.json --hosts ../hosts.json --plain \
		>"../$1.out" 2>&1; echo $? >"../$1.rc") & } &&
	wait_for 120 "host_journal_has \"\$EV_BUILT\"" &&
	sleep 0.5 &&
	! host_journal_has "$EV_STEP" && ! host_journal_has "$EV_LATER" &&
	test -s "$CALLS" &&
	touch "$GATE" &&
	run_passed "$1"
}

test_expect_success 'setup: a host whose nvidia-smi waits for a gate; a CPU experiment' '
	mkdir -p "$SMI" &&
	cat >"$SMI/nvidia-smi" <<-EOF &&
	#!/bin/sh
	echo "called \$\$ nice \$(ps -o ni= -p \$\$ | tr -d " ")" >>"$CALLS"
	i=0
	while [ ! -f "$GATE" ] && [ \$i -lt 6000 ]; do sleep 0.05; i=\$((i + 1)); done
	echo "NVIDIA H100 80GB HBM3, GPU-00000000-0000-0000-0000-fa4e00000001, 9.0, 580.159.04, 1980, 1980, 2619, 81559"
	EOF
	chmod +x "$SMI/nvidia-smi" &&
	cat >"$SMI/ncu" <<-EOF &&
	#!/bin/sh
	echo "nice \$(ps -o ni= -p \$\$ | tr -d " ")" >>"$TRASH/ncu-calls"
	i=0
	while [ ! -f "$NCU_GATE" ] && [ \$i -lt 6000 ]; do sleep 0.05; i=\$((i + 1)); done
	echo "NVIDIA (R) Nsight Compute Command Line Profiler"
	echo "Version 2025.3.1.0 (build 36398880) (public-release)"
	EOF
	chmod +x "$SMI/ncu" && touch "$NCU_GATE" &&
	mkdir -p "$XHOME" &&
	SSHD_a_EXTRA_ENV="HOME=$XHOME GPUORCH_NVPROC=$NVPROC" && export SSHD_a_EXTRA_ENV &&
	sshd_start_with_path a "$SMI" &&
	sshd_write_hosts_json hosts.json a &&
	project_init &&
	cat >proj/experiments/cpu1.json <<-JSON &&
	{"schema": 1, "name": "cpu1", "phase": "probe-first test",
	 "sources": ["cpu/cputimer.c"], "targets": {"H100": "sm_90a"},
	 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
	 "problems": [{"name": "p", "params": {"work": 1000, "reps": 3}}],
	 "steps": [{"kind": "benchmark", "program": "cputimer", "timeout_s": 60}]}
	JSON
	(cd proj && git add -A && git commit -qm cpu1)
'

test_expect_success 'a fresh host: the probe and the run on one command; the plan is made from that probe' '
	forget_host && : >"$CALLS" && touch "$GATE" &&
	(cd proj && "$GPUORCH" run experiments/cpu1.json --hosts ../hosts.json --plain) >fresh.out 2>&1 &&
	cat fresh.out &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	jq_ $run/run.json hosts.0.info.gpu_name | grep "H100" &&
	test "$(jq_ $run/run.json hosts.0.info.arch)" = sm_90a &&
	test "$(jq_ $run/run.json hosts.0.phases.1.name)" = probe &&
	test "$(jq_ $run/run.json hosts.0.phases.1.status)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.ship.files_sent)" = 1 &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS &&
	# one probe: nvidia-smi asked for its GPU, then for every GPU (the slots)
	test "$(wc -l <"$CALLS")" = 2 &&
	grep " nice $(ps -o ni= -p $$ | tr -d " ")$" "$CALLS" &&
	test -s "$GPUORCH_CACHE_DIR"/probe-*.txt
'

# the host runner's journal events that the deferred probe is ordered by
EV_BUILT='"ev":"phase_ended","name":"build"'
EV_LATER='"ev":"probe_later"'
EV_STEP='"ev":"step_started"'
# host_journal_has TEXT: the host's run journal has a line with TEXT in it
host_journal_has() {
	grep -qF "$1" "$(sshd_var a WORKDIR)"/runs/*/journal 2>/dev/null
}

test_expect_success 'a fresh host: the tools only recorded are asked beside the builds, at the lowest priority; the first step waits for them; all of it is recorded and kept' '
	forget_host && : >"$CALLS" && touch "$GATE" && rm -f "$NCU_GATE" && : >"$TRASH/ncu-calls" &&
	{ (cd proj && "$GPUORCH" run experiments/cpu1.json --hosts ../hosts.json --plain \
		>../later.out 2>&1; echo $? >../later.rc) & } &&
	wait_for 120 "host_journal_has \"\$EV_BUILT\"" &&
	sleep 0.5 &&
	! host_journal_has "$EV_STEP" && ! host_journal_has "$EV_LATER" &&
	! test -f later.rc &&
	touch "$NCU_GATE" &&
	run_passed later &&
	test "$(jq_ $run/run.json hosts.0.info.ncu.version)" = 2025.3.1.0 &&
	test "$(jq_ $run/run.json hosts.0.info.ncu.path)" = "$SMI/ncu" &&
	jq_ $run/run.json hosts.0.info.python.version | grep "^3\." &&
	grep -oF -e "$EV_BUILT" -e "$EV_LATER" -e "$EV_STEP" "$(sshd_var a WORKDIR)"/runs/*/journal >order &&
	printf "%s\n" "$EV_BUILT" "$EV_LATER" "$EV_STEP" >order.want &&
	test_cmp order.want order &&
	grep "^ncu_version=Version 2025.3.1.0" "$XHOME"/.cache/gpuorch/probe-0 &&
	grep "^gpu=NVIDIA H100" "$XHOME"/.cache/gpuorch/probe-0 &&
	ls "$XHOME"/.cache/gpuorch >left &&
	echo probe-0 >left.want &&
	test_cmp left.want left &&
	grep "^ncu_version=Version 2025.3.1.0" "$GPUORCH_CACHE_DIR"/probe-*.txt &&
	! grep "^later=" "$GPUORCH_CACHE_DIR"/probe-*.txt &&
	echo "nice 19" >ncu.want && test_cmp ncu.want "$TRASH/ncu-calls"
'

test_expect_success 'a re-run on that host: the kept probe has every tool; nothing is asked again' '
	: >"$CALLS" && rm -f "$NCU_GATE" &&
	(cd proj && "$GPUORCH" run experiments/cpu1.json --hosts ../hosts.json --plain) >again.out 2>&1 &&
	touch "$NCU_GATE" &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.info.ncu.version)" = 2025.3.1.0 &&
	test ! -s "$CALLS"
'

test_expect_success 'a fresh host whose driver names a GPU the spec knows: nvidia-smi is asked beside the builds too; its answer is recorded before the first step' '
	fake_nvproc "NVIDIA H100 80GB HBM3" &&
	smi_beside_builds proc &&
	test "$(jq_ $run/run.json hosts.0.info.arch)" = sm_90a &&
	test "$(jq_ $run/run.json hosts.0.info.compute_cap)" = 9.0 &&
	test "$(jq_ $run/run.json hosts.0.info.gpu_uuid)" = GPU-00000000-0000-0000-0000-fa4e00000001 &&
	test "$(jq_ $run/run.json hosts.0.info.sm_clock_mhz)" = 1980 &&
	test "$(jq_ $run/run.json hosts.0.info.driver)" = 580.159.04 &&
	jq_ $run/run.json hosts.0.phases.1.detail | grep "NVIDIA H100 80GB HBM3 (sm_90a, as /proc/driver/nvidia names it" &&
	! grep "warning" proc.out &&
	# one probe: nvidia-smi asked for its GPU, then for every GPU (the slots)
	test "$(wc -l <"$CALLS")" = 2 &&
	grep " nice 19$" "$CALLS" &&
	grep "^compute_cap\|^gpu=NVIDIA H100" "$GPUORCH_CACHE_DIR"/probe-*.txt
'

test_expect_success 'planned from /proc, then nvidia-smi names another GPU: the run says so' '
	fake_nvproc "NVIDIA H100 80GB HBM3" GPU-00000000-0000-0000-0000-fa4e00000009 &&
	forget_host && : >"$CALLS" && touch "$GATE" &&
	(cd proj && "$GPUORCH" run experiments/cpu1.json --hosts ../hosts.json --plain) >other.out 2>&1 &&
	cat other.out &&
	grep "warning: /proc/driver/nvidia.s GPU 0 (GPU-00000000-0000-0000-0000-fa4e00000009) is not nvidia-smi.s GPU 0 (GPU-00000000-0000-0000-0000-fa4e00000001, NVIDIA H100 80GB HBM3)" other.out &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.info.gpu_uuid)" = GPU-00000000-0000-0000-0000-fa4e00000001
'

test_expect_success 'planned from /proc, then nvidia-smi fails: the run says so, and records no GPU' '
	fake_nvproc "NVIDIA H100 80GB HBM3" &&
	forget_host && mv "$SMI/nvidia-smi" smi.kept &&
	printf "#!/bin/sh\necho \"No devices were found\"\nexit 9\n" >"$SMI/nvidia-smi" &&
	chmod +x "$SMI/nvidia-smi" &&
	(cd proj && "$GPUORCH" run experiments/cpu1.json --hosts ../hosts.json --plain) >smifail.out 2>&1;
	rc=$? && mv -f smi.kept "$SMI/nvidia-smi" && test $rc = 0 &&
	cat smifail.out &&
	grep "warning: the plan was made for the GPU that /proc/driver/nvidia names, but nvidia-smi then failed: .*nvidia-smi failed (exit 9): No devices were found" smifail.out &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.info.has_gpu)" = false
'

test_expect_success 'a driver naming a GPU gpuorch knows by its model (no spec target): planned from the name, nvidia-smi beside the builds' '
	fake_nvproc "NVIDIA H200" &&
	smi_beside_builds known &&
	test "$(jq_ $run/run.json hosts.0.archs.0)" = sm_90 &&
	test "$(jq_ $run/run.json hosts.0.info.arch)" = sm_90 &&
	test "$(jq_ $run/run.json hosts.0.info.compute_cap)" = 9.0 &&
	jq_ $run/run.json hosts.0.phases.1.detail | grep "NVIDIA H200 (sm_90, as /proc/driver/nvidia names it" &&
	! grep "warning" known.out
'

test_expect_success 'a known model whose compute capability nvidia-smi contradicts: the run says so' '
	fake_nvproc "NVIDIA A100-SXM4-80GB" &&
	forget_host && : >"$CALLS" && touch "$GATE" &&
	(cd proj && "$GPUORCH" run experiments/cpu1.json --hosts ../hosts.json --plain) >ccwarn.out 2>&1 &&
	cat ccwarn.out &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.archs.0)" = sm_80 &&
	grep "warning: the run was built for sm_80, the compute capability 8.0 that gpuorch knows NVIDIA A100-SXM4-80GB by, but nvidia-smi says 9.0: its programs may not run there" ccwarn.out
'

test_expect_success 'a driver naming a GPU the spec does not know: nvidia-smi is asked before the plan' '
	fake_nvproc "NVIDIA Foo 9000" &&
	forget_host && : >"$CALLS" && rm -f "$GATE" &&
	{ (cd proj && "$GPUORCH" run experiments/cpu1.json --hosts ../hosts.json --plain \
		>../unknown.out 2>&1; echo $? >../unknown.rc) & } &&
	wait_for 60 "test -s \"$CALLS\"" &&
	sleep 1 &&
	! host_journal_has "\"ev\":\"runner_started\"" &&
	touch "$GATE" &&
	run_passed unknown &&
	test "$(jq_ $run/run.json hosts.0.info.arch)" = sm_90a &&
	test "$(jq_ $run/run.json hosts.0.info.gpu_name)" = "NVIDIA H100 80GB HBM3" &&
	rm -rf "$NVPROC"
'

test_expect_success 'the link lost mid-probe: the controller reconnects, probes again and the run passes' '
	held_probe relink 30 &&
	sshd_kill a && sshd_restart a &&
	touch "$GATE" &&
	run_passed relink &&
	test "$(jq_ $run/run.json hosts.0.steps.0.status)" = PASS &&
	grep "reconnect" relink.out &&
	test "$(wc -l <"$CALLS")" -ge 2
'

test_expect_success 'the host lost for good mid-probe: it is unreachable, its probe phase says why, nothing else is recorded' '
	held_probe lost 3 &&
	sshd_kill a &&
	touch "$GATE" &&
	wait_for 120 "test -f lost.rc" &&
	cat lost.out &&
	test "$(cat lost.rc)" = 3 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json status)" = complete &&
	test "$(jq_ $run/run.json hosts.0.status)" = unreachable &&
	test "$(jq_ $run/run.json hosts.0.phases --len)" = 2 &&
	test "$(jq_ $run/run.json hosts.0.phases.1.name)" = probe &&
	test "$(jq_ $run/run.json hosts.0.phases.1.status)" = INFRA_ERROR &&
	jq_ $run/run.json hosts.0.error | grep -i "connect" &&
	! test -e "$GPUORCH_CACHE_DIR"/probe-*.txt
'

test_expect_success 'SIGINT mid-probe: nothing starts on the host, the run is incomplete' '
	sshd_restart a &&
	forget_host && rm -f "$GATE" && : >"$CALLS" &&
	{ (cd proj && exec "$GPUORCH" run experiments/cpu1.json --hosts ../hosts.json \
		--plain >../int.out 2>&1) & } &&
	pid=$! &&
	wait_for 60 "test -s \"$CALLS\"" &&
	kill -INT $pid &&
	wait $pid; rc=$? &&
	cat int.out &&
	test $rc = 130 &&
	touch "$GATE" &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json status)" = incomplete &&
	! ls "$(sshd_var a WORKDIR)"/runs/*/runner.pid 2>/dev/null
'

test_done
