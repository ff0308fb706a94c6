# shellcheck shell=sh
# probe-sig.sh -- the host's signature, the first part of the host probe
# (probe.sh) and, alone, of a run's start command, which checks that a
# probe the controller kept still holds (probe.c: probe_sig_script).
#
# Silent; sets $sig from the boot id, the tool paths and each tool file's
# size, mtime and inode (and the parameters), and $smi, $nvcc_p, $ncu_p,
# $san_p, $py_p (the tools' paths, empty when not found) and $boot for
# probe.sh. The C side sets its parameters in lines before it:
#   cuda_home  the host's CUDA_HOME (hosts.json "cuda_home"; may be empty)
#   python     the python the host names (hosts.json "python"; may be empty)
#   gpu        the GPU's index, as nvidia-smi -i counts
# Embedded in gpuorch by scripts/embed.sh --sh: comment lines are not sent.
# SC2154: cuda_home, python and gpu are set by the lines the C side puts
# before this; SC2034: sig, boot and the paths are read by what follows it.
# shellcheck disable=SC2154,SC2034
smi=$(command -v nvidia-smi 2>/dev/null)
case "$smi" in /*) ;; *) smi= ;; esac
for c in /usr/bin/nvidia-smi /usr/local/nvidia/bin/nvidia-smi; do
  if [ -z "$smi" ] && [ -x "$c" ]; then smi=$c; fi
done
# find_tool NAME: sets $_ft (no subshell, so the versioned directories are
# listed once, and only when a tool is not found before them). Looked up on
# PATH, then CUDA_HOME/bin, /usr/local/cuda/bin, the newest
# /usr/local/cuda-*/bin and the newest /opt/nvidia/nsight-compute/VERSION:
# a non-login SSH session usually has a PATH without CUDA.
_fdirs=-
find_tool() {
  _ft=$(command -v "$1" 2>/dev/null)
  case "$_ft" in /*) return 0 ;; esac
  _ft=
  if [ -n "$cuda_home" ] && [ -x "$cuda_home/bin/$1" ]; then _ft=$cuda_home/bin/$1; return 0; fi
  if [ -x "/usr/local/cuda/bin/$1" ]; then _ft=/usr/local/cuda/bin/$1; return 0; fi
  [ "$_fdirs" != - ] || _fdirs=$(ls -d /usr/local/cuda-*/bin /opt/nvidia/nsight-compute/*/ 2>/dev/null | sort -V -r)
  for _fd in $_fdirs; do
    _fd=${_fd%/}
    if [ -x "$_fd/$1" ]; then _ft=$_fd/$1; return 0; fi
  done
  return 1
}
find_tool nvcc; nvcc_p=$_ft; find_tool ncu; ncu_p=$_ft; find_tool compute-sanitizer; san_p=$_ft
if [ -n "$python" ]; then py_p=$python; else py_p=$(command -v python3 2>/dev/null); fi
case "$py_p" in /*) ;; *) py_p= ;; esac
# no fork where a builtin does (a re-run's start command runs this)
boot=; read -r boot 2>/dev/null </proc/sys/kernel/random/boot_id
set --; for f in "$smi" "$nvcc_p" "$ncu_p" "$san_p" "$py_p"; do [ -z "$f" ] || set -- "$@" "$f"; done
sig="probe-v2|$boot|$gpu|$cuda_home|$python|$([ $# -eq 0 ] || stat -L --printf '%n %s %Y %i|' "$@" 2>/dev/null)"
set --
[ -n "$boot" ] || sig=
