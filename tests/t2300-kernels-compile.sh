#!/bin/sh
test_description='every kernel of every experiment builds with nvcc through gpuorch on a GPU-less host (ptxas report recorded, GPU steps skipped with the reason)'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

if ! why=$(sshd_available); then
	test_skip 'kernel builds' "$why"
	test_done
fi
if ! nvcc_path >/dev/null; then
	test_skip 'kernel builds' 'no nvcc on this machine (install the CUDA toolkit)'
	test_done
fi
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
	test_skip 'kernel builds' 'this machine has a GPU: the compile-only path is not what runs here'
	test_done
fi

test_expect_success 'setup: one loopback host' '
	sshd_start k && sshd_write_hosts_json hosts.json k
'

for spec in "$SRCDIR"/experiments/*.json; do
	name=$(basename "$spec" .json)
	test_expect_success "experiments/$name.json: every build passes for every listed arch" "
		(cd \"\$SRCDIR\" && \"\$GPUORCH\" run experiments/$name.json --hosts \"\$TRASH/hosts.json\" --plain) >$name.out 2>&1 &&
		run=\$(last_run_dir) &&
		test \"\$(jq_ \$run/run.json outcome)\" = passed &&
		n=\$(jq_ \$run/run.json hosts.0.builds --len) && test \$n -gt 0 &&
		i=0 && while [ \$i -lt \$n ]; do
			st=\$(jq_ \$run/run.json hosts.0.builds.\$i.status) &&
			if [ \$st = PASS ]; then
				test \$(jq_ \$run/run.json hosts.0.builds.\$i.resources --len) -gt 0 &&
				jq_ \$run/run.json hosts.0.builds.\$i.resources.0.registers | grep -q '^[0-9]' || return 1
			else
				test \$st = SKIPPED && jq_ \$run/run.json hosts.0.builds.\$i.reason | grep -q 'needs sm_' || return 1
			fi
			i=\$((i + 1))
		done &&
		jq_ \$run/run.json hosts.0.steps >steps.json &&
		! grep -q '\"status\":\"FAIL\"' steps.json &&
		grep -q 'no CUDA device' steps.json
	"
done

test_done
