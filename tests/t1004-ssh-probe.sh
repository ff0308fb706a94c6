#!/bin/sh
# asan: yes
test_description='probe.c on this machine through a real sshd: no GPU, CUDA tools found off PATH'
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"

if ! why=$(sshd_available); then
	test_skip 'probe tests' "$why"
	test_done
fi
if ! test_have_cmd jq; then
	test_skip 'probe tests' 'jq is not installed (apt-get install jq)'
	test_done
fi

test_expect_success 'start sshd; probe the host' '
	sshd_start a &&
	sshd_sshtool a probe "$SSHD_a_WORKDIR" >info.json &&
	jq . info.json
'

test_expect_success 'hostname, kernel and disk space are reported' '
	test "$(jq -r .hostname info.json)" = "$(hostname)" &&
	test "$(jq -r .kernel info.json)" = "$(uname -sr)" &&
	free=$(jq -r .disk_free_kib info.json) &&
	test "$free" -gt 0
'

if test_have_cmd nvidia-smi || [ -x /usr/bin/nvidia-smi ] || [ -x /usr/local/nvidia/bin/nvidia-smi ]; then
	test_expect_success 'this host has nvidia-smi: has_gpu agrees with it' '
		if nvidia-smi -L >/dev/null 2>&1; then
			test "$(jq -r .has_gpu info.json)" = true &&
			jq -r .arch info.json | grep "^sm_[0-9]*$"
		else
			test "$(jq -r .has_gpu info.json)" = false &&
			jq -r .gpu_reason info.json | grep "failed"
		fi
	'
else
	test_expect_success 'no nvidia-smi: has_gpu is false, with the reason' '
		test "$(jq -r .has_gpu info.json)" = false &&
		jq -r .gpu_reason info.json >reason &&
		test_grep "nvidia-smi: not found" reason &&
		test "$(jq -r .gpu_name info.json)" = null &&
		test "$(jq -r .arch info.json)" = null &&
		test "$(jq -r .sm_clock_mhz info.json)" = null
	'
fi

if [ -x /usr/local/cuda/bin/nvcc ]; then
	test_expect_success 'nvcc is found in /usr/local/cuda/bin though the SSH PATH lacks it' '
		test_must_fail sshd_sshtool a exec "command -v nvcc" &&
		test "$(jq -r .nvcc.path info.json)" = /usr/local/cuda/bin/nvcc &&
		want=$(/usr/local/cuda/bin/nvcc --version | sed -n "s/.*, V\([0-9.]*\).*/\1/p") &&
		echo "nvcc says $want" &&
		test -n "$want" &&
		test "$(jq -r .nvcc.version info.json)" = "$want"
	'
else
	test_skip 'nvcc is found off PATH' 'no CUDA toolkit at /usr/local/cuda on this machine'
fi

test_expect_success 'a CUDA_HOME with a bin/nvcc is used when nothing is on PATH' '
	mkdir -p fakecuda/bin &&
	cat >fakecuda/bin/nvcc <<-\EOS &&
	#!/bin/sh
	echo "nvcc: NVIDIA (R) Cuda compiler driver"
	echo "Cuda compilation tools, release 12.4, V12.4.131"
	echo "Build cuda_12.4.r12.4/compiler.34097967_0"
	EOS
	chmod +x fakecuda/bin/nvcc &&
	sshd_sshtool a probe "$SSHD_a_WORKDIR" "$TRASH/fakecuda" >info2.json &&
	test "$(jq -r .nvcc.path info2.json)" = "$TRASH/fakecuda/bin/nvcc" &&
	test "$(jq -r .nvcc.version info2.json)" = 12.4.131
'

test_expect_success 'a fresh probe runs its tools at once: three tools of 2 s each all start before one ends, in order, leaving no part files' '
	mkdir -p slowcuda/bin home-b &&
	for t in nvcc ncu compute-sanitizer; do
		case $t in
		nvcc) v="Cuda compilation tools, release 12.4, V12.4.131" ;;
		ncu) v="Version 2024.1.0.0 (build 33681293)" ;;
		*) v="Version 2024.1.0 (build 33617286)" ;;
		esac &&
		printf "#!/bin/sh\necho \"start \$(date +%%s%%N)\" >>\"%s\"\nsleep 2\necho \"end \$(date +%%s%%N)\" >>\"%s\"\necho \"%s\"\n" \
			"$TRASH/slow-$t.log" "$TRASH/slow-$t.log" "$v" >slowcuda/bin/$t &&
		chmod +x slowcuda/bin/$t || return 1
	done &&
	SSHD_b_EXTRA_ENV=HOME=$TRASH/home-b && export SSHD_b_EXTRA_ENV &&
	sshd_start b &&
	sshd_sshtool b probe "$SSHD_b_WORKDIR" "$TRASH/slowcuda" >info4.json &&
	# at once: each tool started before any of them ended (timed by the
	# tools themselves, so no SSH connection or loaded CPU is in the figure)
	cat "$TRASH"/slow-*.log &&
	test $(cat "$TRASH"/slow-*.log | wc -l) = 6 &&
	cat "$TRASH"/slow-*.log | awk "
		\$1 == \"start\" && \$2 > ls { ls = \$2 }
		\$1 == \"end\" && (fe == \"\" || \$2 < fe) { fe = \$2 }
		END { exit !(ls < fe) }" &&
	test "$(jq -r .nvcc.version info4.json)" = 12.4.131 &&
	test "$(jq -r .ncu.path info4.json)" = "$TRASH/slowcuda/bin/ncu" &&
	jq -r .ncu.version info4.json | grep "^2024\.1\.0" &&
	jq . info4.json && test "$(jq -r .compute_sanitizer.path info4.json)" = "$TRASH/slowcuda/bin/compute-sanitizer" &&
	ls -a home-b/.cache/gpuorch >left &&
	cat left &&
	test "$(grep -c "^probe-" left)" = 1 &&
	! grep "\." left | grep -v "^\.\.\?$"
'

test_expect_success 'a workdir that does not exist yet still gets its disk space' '
	sshd_sshtool a probe "$SSHD_a_WORKDIR/not/yet" >info3.json &&
	test "$(jq -r .disk_free_kib info3.json)" -gt 0
'

test_expect_success 'python3 is reported with its version when present' '
	if sshd_sshtool a exec "command -v python3" >py; then
		test "$(jq -r .python.path info.json)" = "$(cat py)" &&
		jq -r .python.version info.json | grep "^3\.[0-9]*\.[0-9]*$"
	else
		test "$(jq -r .python.path info.json)" = null
	fi
'

test_expect_success 'a tool answering over several lines (a CR, a newline) is one line in the record' '
	mkdir -p badsmi home-c &&
	cat >badsmi/nvidia-smi <<-\EOS &&
	#!/bin/sh
	printf "NVIDIA-SMI has failed\r\nbecause it could not talk to the driver\n"
	exit 9
	EOS
	chmod +x badsmi/nvidia-smi &&
	SSHD_c_EXTRA_ENV=HOME=$TRASH/home-c && export SSHD_c_EXTRA_ENV &&
	sshd_start_with_path c "$TRASH/badsmi" &&
	sshd_sshtool c probe "$SSHD_c_WORKDIR" >info5.json &&
	test "$(jq -r .has_gpu info5.json)" = false &&
	jq -r .gpu_reason info5.json >reason5 &&
	cat reason5 &&
	test "$(wc -l <reason5)" = 1 &&
	test_grep "badsmi/nvidia-smi failed (exit 9): NVIDIA-SMI has failed  because it could not talk to the driver\$" reason5
'

test_expect_success 'a probe killed by a signal says which signal, not "signal 0"' '
	mkdir -p killcuda/bin &&
	# nvcc runs under timeout(1), in a process group of its own: kill the
	# whole SSH session, so the probe script itself dies by SIGKILL
	printf "#!/bin/sh\nsid=\$(cut -d\" \" -f6 /proc/\$\$/stat)\nkill -KILL -\$sid\n" >killcuda/bin/nvcc &&
	cat killcuda/bin/nvcc &&
	chmod +x killcuda/bin/nvcc &&
	test_must_fail sshd_sshtool a probe "$SSHD_a_WORKDIR" "$TRASH/killcuda" 2>err &&
	cat err &&
	test_grep "the host probe did not complete (signal KILL)" err &&
	! grep "signal KILL\?0" err
'

test_done
