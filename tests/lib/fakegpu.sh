# shellcheck shell=sh
# fakegpu.sh -- stand-in GPU tools that replay real H100 captures, so that
# the code turning nvidia-smi, ncu and compute-sanitizer output into a run
# record executes in CI without a GPU.
#
# Source after testlib.sh:   . "$SRCDIR/tests/lib/fakegpu.sh"
#
#   fakegpu_install DIR   writes
#     DIR/smi/nvidia-smi   prints an H100's --query-gpu line (start the host
#                          with sshd_start_with_path NAME DIR/smi)
#     DIR/cuda/bin/ncu     profile: writes the captured --log-file and a report
#                          file, prints the program's result line, exits 0;
#                          --import REP --csv: prints the captured 3-launch
#                          export (tests/fixtures/gpu-tools/ncu-3launch-*.csv):
#                          the base-units one only when --print-units base is
#                          given, as the real ncu does
#     DIR/cuda/bin/compute-sanitizer
#                          writes the captured report of its --tool into
#                          --log-file, prints the program's result line from
#                          the capture and exits as the real run did:
#                          memcheck  memcheck-oob1.txt (3 errors, exit 99)
#                          racecheck racecheck-race0.txt (clean, exit 0)
#                          synccheck / initcheck: the clean captures, exit 0
#                          (point the host's "cuda_home" at DIR/cuda)
#   Every call is appended to DIR/calls.log (one line: tool and arguments).
# Neither tool runs the program: there is no GPU to run it on.

fakegpu_install() {
	_fg=$1
	_fix=$SRCDIR/tests/fixtures/gpu-tools
	mkdir -p "$_fg/smi" "$_fg/cuda/bin" || return 1
	cat >"$_fg/smi/nvidia-smi" <<EOF
#!/bin/sh
echo "nvidia-smi \$*" >>'$_fg/calls.log'
case " \$* " in
*" -L "*) echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-00000000-0000-0000-0000-fa4e00000000)" ;;
*) echo "NVIDIA H100 80GB HBM3, GPU-00000000-0000-0000-0000-fa4e00000000, 9.0, 580.159.04, 1980, 1980, 2619, 81559" ;;
esac
EOF
	cat >"$_fg/cuda/bin/ncu" <<EOF
#!/bin/sh
echo "ncu \$*" >>'$_fg/calls.log'
case " \$* " in
*" --version "*)
	echo "NVIDIA (R) Nsight Compute Command Line Profiler"
	echo "Version 2025.3.1.0 (build 36398880) (public-release)"
	exit 0 ;;
esac
if [ "\$1" = --import ]; then
	[ -f "\$2" ] || { echo "==ERROR== Failed to open \$2" >&2; exit 1; }
	case " \$* " in
	*" --print-units base "*) cat '$_fix/ncu-3launch-base.csv' ;;
	*) cat '$_fix/ncu-3launch-nobase.csv' ;;
	esac
	exit 0
fi
log= out=
while [ \$# -gt 0 ]; do
	case "\$1" in
	--log-file) log=\$2; shift ;;
	-o) out=\$2; shift ;;
	esac
	shift
done
[ -n "\$log" ] && cp '$_fix/ncu-3launch.log' "\$log"
[ -n "\$out" ] && echo "stand-in for an .ncu-rep (tests/lib/fakegpu.sh)" >"\$out.ncu-rep"
echo '{"schema":"gpuorch.result/1","status":"pass"}'
exit 0
EOF
	cat >"$_fg/cuda/bin/compute-sanitizer" <<EOF
#!/bin/sh
echo "compute-sanitizer \$*" >>'$_fg/calls.log'
case " \$* " in
*" --version "*)
	echo "NVIDIA (R) Compute Sanitizer"
	echo "Version 2025.3.1.0 (build 36398880) (public-release)"
	exit 0 ;;
esac
tool=memcheck log=
while [ \$# -gt 0 ]; do
	case "\$1" in
	--tool) tool=\$2; shift ;;
	--log-file) log=\$2; shift ;;
	esac
	shift
done
case "\$tool" in
memcheck) f=memcheck-oob1.txt rc=99 ;;
racecheck) f=racecheck-race0.txt rc=0 ;;
synccheck) f=synccheck-clean.txt rc=0 ;;
initcheck) f=initcheck-clean.txt rc=0 ;;
*) echo "========= Error: invalid tool \$tool" >&2; exit 1 ;;
esac
if [ -n "\$log" ]; then cp "$_fix/\$f" "\$log"; else cat "$_fix/\$f" >&2; fi
grep '^{"schema"' "$_fix/\$f" | tail -n 1
exit \$rc
EOF
	chmod +x "$_fg/smi/nvidia-smi" "$_fg/cuda/bin/ncu" "$_fg/cuda/bin/compute-sanitizer"
}
