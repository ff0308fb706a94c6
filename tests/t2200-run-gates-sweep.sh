#!/bin/sh
# asan: yes
test_description='gpuorch run: gates fail the run, sweeps rank variants, tool steps skip honestly'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'gate and sweep tests'

# Host b has stand-in ncu and compute-sanitizer in its cuda_home: found, but
# (no GPU here) never run.
fake_tool() {
	printf '#!/bin/sh\necho "NVIDIA (R) %s"\necho "Version 2025.3.1.0 (build 1) (public-release)"\n' "$1" >"$2" &&
	chmod +x "$2"
}

test_expect_success 'setup: two hosts (b with ncu and compute-sanitizer) and a project' '
	sshd_start a && sshd_start b &&
	sshd_write_hosts_json hosts.json a b &&
	mkdir -p fakecuda/bin &&
	fake_tool "Nsight Compute Command Line Profiler" fakecuda/bin/ncu &&
	fake_tool "Compute Sanitizer" fakecuda/bin/compute-sanitizer &&
	sed "/\"name\": \"b\"/s|\"name\": \"b\",|\"name\": \"b\", \"cuda_home\": \"$TRASH/fakecuda\",|" hosts.json >hosts2.json &&
	mv hosts2.json hosts.json && grep fakecuda hosts.json &&
	project_init
'

test_expect_success 'the dry run shows one build per sweep variant and the tool commands' '
	(cd proj && "$GPUORCH" run experiments/gates.json --hosts ../hosts.json --dry-run) >plan.out &&
	test $(grep -c "build cpusweep \[SCALE=" plan.out) = 10 &&
	grep -- "-DSCALE=4" plan.out &&
	grep "step sweep.cpusweep\[SCALE=0\].small.check" plan.out &&
	grep "step profile.scale.small" plan.out &&
	grep "step sanitize.scale.small.racecheck" plan.out
'

test_expect_success 'a failing gate makes gpuorch run exit 1' '
	(cd proj && test_expect_code 1 "$GPUORCH" run experiments/gates.json --hosts ../hosts.json) >run.out 2>run.err &&
	run=$(last_run_dir) && test -n "$run" &&
	test "$(jq_ $run/run.json outcome)" = failed &&
	test "$(jq_ $run/run.json exit_code)" = 1 &&
	grep "gate .*impossible latency" run.out
'

test_expect_success 'the record holds each gate with measured value, threshold, verdict, reason' '
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.gates --len)" = 6 &&
	test "$(jq_ $run/run.json hosts.0.gates.0.verdict)" = FAIL &&
	test "$(jq_ $run/run.json hosts.0.gates.0.threshold)" = 0.001 &&
	jq_ $run/run.json hosts.0.gates.0.measured >m && test -s m &&
	jq_ $run/run.json hosts.0.gates.0.reason | grep "measured .* us, needs < 0.001" &&
	test "$(jq_ $run/run.json hosts.0.gates.1.verdict)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.gates.1.reason)" = null &&
	test "$(jq_ $run/run.json hosts.0.gates.4.verdict)" = PASS &&
	test "$(jq_ $run/run.json hosts.0.gates.4.measured)" = 0 &&
	test "$(jq_ $run/run.json hosts.0.gates.5.verdict)" = N/A
'

test_expect_success 'a gate on a figure that was not measured fails and says why' '
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json hosts.0.gates.2.verdict)" = FAIL &&
	test "$(jq_ $run/run.json hosts.0.gates.2.measured)" = null &&
	jq_ $run/run.json hosts.0.gates.2.reason | grep "not measured: the profile step .* SKIPPED: no CUDA device" &&
	test "$(jq_ $run/run.json hosts.0.gates.3.verdict)" = FAIL &&
	jq_ $run/run.json hosts.0.gates.3.reason | grep "not measured"
'

test_expect_success 'profile and sanitize steps on a GPU-less host are SKIPPED with the reason' '
	run=$(last_run_dir) &&
	jq_ $run/run.json hosts.0.steps >steps_a.json &&
	jq_ $run/run.json hosts.1.steps >steps_b.json &&
	grep "\"id\":\"profile.scale.small\",\"kind\":\"profile\"" steps_a.json &&
	grep -o "no CUDA device on this host (nvidia-smi: not found[^;]*; ncu not found either" steps_a.json &&
	grep -o "compute-sanitizer not found either" steps_a.json &&
	grep -o "ncu found at $TRASH/fakecuda/bin/ncu" steps_b.json &&
	grep -o "compute-sanitizer found at $TRASH/fakecuda/bin/compute-sanitizer" steps_b.json &&
	test "$(jq_ $run/run.json hosts.1.info.ncu.version)" = 2025.3.1.0 &&
	test "$(jq_ $run/run.json hosts.1.steps.12.tool_settings.clock_control)" = base &&
	test "$(jq_ $run/run.json hosts.1.steps.12.status)" = SKIPPED
'

test_expect_success 'a sweep builds every variant and ranks the correct ones; a wrong one never wins' '
	run=$(last_run_dir) &&
	# ranked by median, fastest first; the timed order of SCALE=1,2,4,8 (2x
	# apart) is checked where it cannot flip under load: SCALE=8 never wins
	# and SCALE=1 always ranks above it (a CI run on a loaded 2-core machine
	# once saw SCALE=1 and 2 swap)
	for h in 0 1; do
		test "$(jq_ $run/run.json hosts.$h.sweeps --len)" = 1 &&
		w=$(jq_ $run/run.json hosts.$h.sweeps.0.winner) &&
		test "$w" = "$(jq_ $run/run.json hosts.$h.sweeps.0.variants.0.variant)" &&
		test "$w" != SCALE=8 && test "$w" != SCALE=0 &&
		test "$(jq_ $run/run.json hosts.$h.sweeps.0.variants.0.relative)" = 1 &&
		r1=$(jq_ $run/run.json hosts.$h.sweeps.0.variants.1.relative) &&
		r2=$(jq_ $run/run.json hosts.$h.sweeps.0.variants.2.relative) &&
		r3=$(jq_ $run/run.json hosts.$h.sweeps.0.variants.3.relative) &&
		awk "BEGIN { exit !(1 <= $r1 && $r1 <= $r2 && $r2 <= $r3) }" &&
		order=$(for i in 0 1 2 3; do jq_ $run/run.json hosts.$h.sweeps.0.variants.$i.variant; done | tr "\n" " ") &&
		echo "$order" | grep "SCALE=1 .*SCALE=8" &&
		test "$(jq_ $run/run.json hosts.$h.sweeps.0.variants.4.variant)" = SCALE=0 &&
		test "$(jq_ $run/run.json hosts.$h.sweeps.0.variants.4.ranked)" = false &&
		jq_ $run/run.json hosts.$h.sweeps.0.variants.4.reason | grep "correctness FAIL: SCALE=0 computes nothing" &&
		test "$(jq_ $run/run.json hosts.$h.sweeps.0.variants.0.vs_winner)" = null &&
		jq_ $run/run.json hosts.$h.sweeps.0.variants.1.vs_winner | grep -E "^(same|slower|insufficient data)$" &&
		jq_ $run/run.json hosts.$h.sweeps.0.winner_clear | grep -E "^(true|false)$" || return 1
	done &&
	grep "\"variant\":\"SCALE=8\"" $run/run.json >/dev/null 2>&1 || jq_ $run/run.json hosts.0.builds | grep "\"variant\":\"SCALE=8\""
'

test_expect_success 'the report opens with the gates, then details, profile, sanitizer and sweep sections' '
	run=$(last_run_dir) &&
	grep -n "^## " $run/report.md >sections &&
	head -n 1 sections | grep "Gates at a glance" &&
	grep "❌ .*impossible latency" $run/report.md &&
	grep "not measured" $run/report.md &&
	grep "^## Sweeps" $run/report.md &&
	# a clear winner (every other variant slower by compare'"'"'s rule) is a
	# trophy; a winner by median alone says which variants tie with it
	clear=$(jq_ $run/run.json hosts.0.sweeps.0.winner_clear) &&
	if test "$clear" = true; then grep "🏆 \*\*Winner\*\*" $run/report.md
	else test "$clear" = false && grep "🤝 \*\*No clear winner\*\*" $run/report.md; fi &&
	grep "SCALE=0" $run/report.md | grep "correctness FAIL" &&
	grep "^## Profiles" $run/report.md &&
	grep "^## Sanitizer" $run/report.md
'

test_expect_success 'a run whose gates all pass exits 0' '
	sed -e "/impossible latency/d" -e "/DRAM busy/d" -e "/no races/d" -e "/no spills/d" -e "/\"kind\": \"sweep\"/d" \
	    -e "/\"kind\": \"profile\"/d" -e "/\"kind\": \"sanitize\"/d" \
	    -e "s/\"kind\": \"benchmark\", \"program\": \"cputimer\", \"timeout_s\": 60},/\"kind\": \"benchmark\", \"program\": \"cputimer\", \"timeout_s\": 60}/" \
	    proj/experiments/gates.json >proj/experiments/gates-pass.json &&
	(cd proj && "$GPUORCH" run experiments/gates-pass.json --hosts ../hosts.json --host a) >pass.out 2>&1 &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	test "$(jq_ $run/run.json hosts.0.gates.0.verdict)" = PASS
'

test_done
