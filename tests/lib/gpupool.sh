# shellcheck shell=sh
# gpupool.sh -- stand-in GPUs for the tests of a host's several GPUs
# (t2260, t2265, t2270): an nvidia-smi that lists N GPUs of one model, and
# a step program that logs which GPUs it was given, so a test asserts what
# ran where and in what order, never a time.
#
# Source after testlib.sh:   . "$SRCDIR/tests/lib/gpupool.sh"
#
#   gpupool_uuid TAG I         the UUID of GPU I of stand-in TAG:
#                              GPU-<TAG>0000-0000-0000-0000-00000000000<I>
#   gpupool_smi DIR TAG MODEL CC "I..."
#                              DIR/nvidia-smi listing GPUs I... of MODEL
#                              (capability CC), as `-L`, the probe's
#                              --query-gpu=index,... and per-GPU -i queries
#                              answer (start the host with
#                              sshd_start_with_path NAME DIR)
#   gpupool_step_sh FILE       FILE: step.sh TAG LOG WANT, a timed step that
#                              appends "start TAG $CUDA_VISIBLE_DEVICES" to
#                              LOG, waits (bounded: 30 s) until LOG holds
#                              WANT starts (steps that must run at once meet
#                              there), then appends "end TAG GPUS held=N"
#                              (N: how many of its GPUs' locks were held,
#                              /tmp/gpuorch-gpu-<UUID>.lock) and prints
#                              "GFLOPS: 1.0"
#   gpupool_prob NAME WANT     a problem {"name": NAME, "params": {"tag":
#                              NAME, "log": "$TRASH/$LOG", "want": WANT}}
#   gpupool_overlap LOG        the lines of LOG where a step starts on a GPU
#                              another step still holds (none: no output)

gpupool_uuid() {
	echo "GPU-${1}0000-0000-0000-0000-00000000000$2"
}

gpupool_smi() {
	mkdir -p "$1" &&
	cat >"$1/nvidia-smi" <<-EOF &&
	#!/bin/sh
	case " \$* " in
	*" -L "*) for i in $5; do echo "GPU \$i: $3 (UUID: GPU-${2}0000-0000-0000-0000-00000000000\$i)"; done ;;
	*"--query-gpu=index,"*) for i in $5; do echo "\$i, GPU-${2}0000-0000-0000-0000-00000000000\$i, 81559, 1980, $3"; done ;;
	*) i=${5%% *}; while [ \$# -gt 0 ]; do [ "\$1" = -i ] && i=\$2; shift; done
	   echo "$3, GPU-${2}0000-0000-0000-0000-00000000000\$i, $4, 580.159.04, 1980, 1980, 2619, 81559, 2619" ;;
	esac
	EOF
	chmod +x "$1/nvidia-smi"
}

gpupool_step_sh() {
	cat >"$1" <<-\EOF
	# step.sh TAG LOG WANT: a timed step stand-in (tests/lib/gpupool.sh)
	tag=$1 log=$2 want=$3
	echo "start $tag $CUDA_VISIBLE_DEVICES" >>"$log"
	held=0
	for u in $(echo "$CUDA_VISIBLE_DEVICES" | tr , " "); do
		flock -n "/tmp/gpuorch-gpu-$u.lock" true || held=$((held + 1))
	done
	i=0
	while [ "$(grep -c "^start" "$log")" -lt "$want" ] && [ $i -lt 300 ]; do
		sleep 0.1; i=$((i + 1))
	done
	echo "end $tag $CUDA_VISIBLE_DEVICES held=$held" >>"$log"
	echo "GFLOPS: 1.0"
	EOF
}

gpupool_prob() {
	printf '{"name": "%s", "params": {"tag": "%s", "log": "%s", "want": %s}}' "$1" "$1" "$TRASH/$LOG" "$2"
}

gpupool_overlap() {
	awk '{ n = split($3, g, ",") }
	$1 == "start" { for (i = 1; i <= n; i++) { if (g[i] in busy) print "overlap: " $0; busy[g[i]] = 1 } }
	$1 == "end" { for (i = 1; i <= n; i++) delete busy[g[i]] }' "$1"
}
