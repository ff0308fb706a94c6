# shellcheck shell=sh
# kernels-compile.sh -- the body of t2300..t2303: every kernel of every
# experiment builds with nvcc through gpuorch on a GPU-less host (ptxas report
# recorded, GPU steps skipped with the reason). nvcc is most of the suite's
# CPU time, so the experiments are dealt out over KC_SHARDS files by their
# number of builds (what `gpuorch run --dry-run` lists: 34 for one spec, 3 for
# another), the largest first, each to the shard with the fewest builds so far
# (ties: the lower shard, then name order); shard KC_SHARD (0-based) takes its
# own. A new spec joins a shard by itself, and the test runner runs the shards
# side by side. Each shard still builds ~37 programs with nvcc: on a loaded CI
# machine (four files at a time on two cores) that is more than the default
# 900 s a file, hence the shards' "# timeout:" line.
#
#   test_description='...'; KC_SHARD=N; KC_SHARDS=4; . "$(dirname "$0")/lib/kernels-compile.sh"
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'kernel builds'
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
	test_skip 'kernel builds' 'this machine has a GPU: the compile-only path is not what runs here'
	test_done
fi

test_expect_success 'setup: one loopback host' '
	sshd_start k && sshd_write_hosts_json hosts.json k
'

# A sweep variant may be refused by the kernel's own static_assert (that is
# how a tile configuration says it cannot exist); every other build must pass,
# or be skipped because the program needs a newer arch (a sweep variant of a
# min_arch program too: skipped for the older arch, built for its own). On a GPU-less host
# the GPU steps are SKIPPED with the reason and nothing FAILs; a spec with
# gates still fails its run (a gate on a figure never measured fails), so the
# run's outcome is only required to be "passed" for specs without gates.
# kc_weights: "BUILDS NAME" a spec, the largest first (then name order)
kc_weights() {
	for _s in "$SRCDIR"/experiments/*.json; do
		_n=$(basename "$_s" .json)
		_b=$(cd "$SRCDIR" && "$GPUORCH" run "experiments/$_n.json" --hosts "$TRASH/hosts.json" --dry-run 2>/dev/null |
			grep -c "^    build ")
		echo "${_b:-0} $_n"
	done | sort -k1,1nr -k2,2
}
# kc_deal: "SHARD NAME" a spec (the shard with the fewest builds so far)
kc_deal() {
	kc_weights | awk -v n="$KC_SHARDS" '{
		best = 0
		for (i = 1; i < n; i++) if (load[i] < load[best]) best = i
		load[best] += ($1 > 0 ? $1 : 1)
		print best, $2
	}'
}
kc_deal >"$TRASH/deal" && test -s "$TRASH/deal" || {
	echo "kernels-compile.sh: cannot deal the experiments out" >&2
	exit 1
}
echo "the shards (shard, experiment; this file is shard $KC_SHARD of $KC_SHARDS):"
cat "$TRASH/deal"
for name in $(awk -v k="$KC_SHARD" '$1 == k { print $2 }' "$TRASH/deal"); do
	test_expect_success "experiments/$name.json: every build passes for every listed arch" "
		(cd \"\$SRCDIR\" && \"\$GPUORCH\" run experiments/$name.json --hosts \"\$TRASH/hosts.json\" --plain) >$name.out 2>&1;
		run=\$(last_run_dir) &&
		test \"\$(jq_ \$run/run.json status)\" = complete ||
		{ echo \"run not complete; the last lines gpuorch printed:\"; tail -20 $name.out; return 1; }
		if ! jq_ \$run/run.json experiment.spec.gates >/dev/null 2>&1; then
			test \"\$(jq_ \$run/run.json outcome)\" = passed || return 1
		fi &&
		n=\$(jq_ \$run/run.json hosts.0.builds --len) && test \$n -gt 0 &&
		i=0 && while [ \$i -lt \$n ]; do
			b=hosts.0.builds.\$i &&
			st=\$(jq_ \$run/run.json \$b.status) &&
			if [ \$st = PASS ] && [ \"\$(jq_ \$run/run.json \$b.program)\" = gpuorch_ktrace ]; then
				: # the CUPTI library of kernel_timing steps: cc, a host C library, no ptxas
			elif [ \$st = PASS ]; then
				test \$(jq_ \$run/run.json \$b.resources --len) -gt 0 &&
				jq_ \$run/run.json \$b.resources.0.registers | grep -q '^[0-9]' ||
				{ echo \"\$b: PASS without a ptxas resource report\"; return 1; }
			elif [ \$st = SKIPPED ]; then
				jq_ \$run/run.json \$b.reason | grep -q 'needs sm_' ||
				{ echo \"\$b: SKIPPED, not for its arch: \$(jq_ \$run/run.json \$b.reason)\"; return 1; }
			else
				test \$st = FAIL && jq_ \$run/run.json \$b.variant >/dev/null 2>&1 &&
				jq_ \$run/run.json \$b.reason | grep -q 'static assertion' ||
				{ echo \"\$b: \$st: \$(jq_ \$run/run.json \$b.reason)\"; return 1; }
			fi
			i=\$((i + 1))
		done &&
		jq_ \$run/run.json hosts.0.steps >steps.json &&
		! grep -q '\"status\":\"FAIL\"' steps.json ||
		{ echo \"a step FAILED on a GPU-less host:\"; grep -o '\"id\":\"[^\"]*\",\"status\":\"FAIL\"' steps.json; return 1; }
		grep -q 'no CUDA device\\|not found' steps.json
	"
done

test_done
