#!/bin/sh
# perf-slurm-cost.sh -- the controller's cost of a run on a Slurm cluster (docs/slurm.md).
# Not part of the test suite: run by hand, `sh tests/perf-slurm-cost.sh [VARIANTS]`.
# A sweep of VARIANTS (default 100) CPU variants on the test cluster
# (tests/lib/slurm.sh): VARIANTS build jobs + 2 x VARIANTS step jobs (check
# and benchmark). Prints the jobs, REST requests, and gpuorch's own CPU time
# (user + sys, /usr/bin/time) per job.
test_description='controller cost of a Slurm run'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/slurm.sh"
. "$SRCDIR/tests/lib/runlib.sh"

N=${1:-100}

test_expect_success "a $N-variant sweep on the test cluster: CPU time and requests per job" '
	slurm_start 8 &&
	mkdir -p bin &&
	printf "#!/bin/sh\nSLURM_CONF=%s exec /usr/bin/scontrol \"\$@\"\n" "$SLURM_CONF" >bin/scontrol &&
	chmod +x bin/scontrol &&
	sshd_start_with_path login "$TRASH/bin" &&
	cat >hosts.json <<-EOF &&
	{"hosts": [
	  {"name": "hpc",
	   "slurm": {"url": "$SLURM_REST_URL", "partition": "debug", "time_limit_min": 10, "max_jobs": 64},
	   "login": {"address": "127.0.0.1", "port": $(sshd_var login PORT), "user": "$(id -un)",
	             "identity": "$(sshd_var login IDENTITY)", "known_hosts": "$(sshd_var login KNOWN_HOSTS)"},
	   "workdir": "$(sshd_var login WORKDIR)"}
	]}
	EOF
	project_init &&
	vals=$(seq -s ", " 1 $N) &&
	cat >proj/experiments/cost.json <<-EOF &&
	{"schema": 1, "name": "cost", "phase": "controller cost",
	 "sources": ["cpu/cputimer.c"], "build": {"flags": ["-O2"], "timeout_s": 300},
	 "targets": {"H100": "sm_90a"},
	 "programs": {"cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
	 "problems": [{"name": "p", "params": {"work": 1000, "reps": 3}}],
	 "steps": [{"kind": "sweep", "program": "cputimer", "defines": {"V": [$vals]}, "timeout_s": 120}]}
	EOF
	(cd proj && git add -A && git commit -qm cost) &&
	tok=$(slurm_token 3600) &&
	(cd proj && SLURM_JWT=$tok /usr/bin/time -f "%U %S %e" -o ../time.txt \
		"$GPUORCH" run experiments/cost.json --hosts ../hosts.json --host hpc --plain) >run.out 2>run.err ||
		{ tail -20 run.out run.err; false; } &&
	run=$(last_run_dir) &&
	test "$(jq_ $run/run.json outcome)" = passed &&
	req=$(jq_ $run/run.json hosts.0.scheduler.rest_requests) &&
	nb=$(jq_ $run/run.json hosts.0.builds --len) && ns=$(jq_ $run/run.json hosts.0.steps --len) &&
	read u s e <time.txt &&
	awk -v u=$u -v s=$s -v e=$e -v nb=$nb -v ns=$ns -v req=$req "BEGIN {
		j = nb + ns
		printf \"jobs %d (%d builds, %d steps); wall %.1f s; controller CPU %.2f s (user %.2f, sys %.2f) = %.1f ms per job; %d REST requests = %.2f per job\n\",
			j, nb, ns, e, u + s, u, s, (u + s) * 1000 / j, req, req / j
	}" | tee cost.txt >&7
'

test_done
