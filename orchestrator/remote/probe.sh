# shellcheck shell=sh
# probe.sh -- the host probe: what a host has (GPU, driver, clocks, CUDA
# tools and their paths, cores, free disk), printed as KEY=VALUE lines, one
# a line, the last "done=1"; probe.c's parse_output reads them. It runs
# after probe-sig.sh (its $sig, $smi, $boot and the tools' paths) and the
# lines the C side puts before both (probe.c: probe_script_text):
#   workdir    the host's work directory (for its free disk and its execds)
#   later      1: probing for a run, the tools it only records go on in the
#              background (later_part below); 0: all at once (hosts check)
#   gpu_any    1: the plan can name the GPU's arch without nvidia-smi
#   gpu_names  the GPU names the spec knows an arch for, one a line
#   gpu_models the models gpuorch knows the compute capability of
#              (probe.c: known_models), separated by blanks
#   cuda_home, python, gpu   as probe-sig.sh says
# It is sent inside an `sh -c` command line (the probe command's, or the
# start command's on a fresh host: remote.c), with umask 077.
# Embedded in gpuorch by scripts/embed.sh --sh: comment lines are not sent.
# SC2154: the variables above are set before this text.
# shellcheck disable=SC2154
# kv KEY VALUE: one line; a value's newlines and CRs become spaces (a fork
# only for a value with a byte that is not printable: a fresh run waits for
# these lines)
kv() {
  case $2 in
  *[![:print:]]*) printf '%s=%s\n' "$1" "$(printf '%s' "$2" | tr '\n\r' '  ')" ;;
  *) printf '%s=%s\n' "$1" "$2" ;;
  esac
}
# to SECONDS COMMAND...: COMMAND under timeout(1) where there is one
to() { if command -v timeout >/dev/null 2>&1; then timeout "$@"; else shift; "$@"; fi; }
# hostname and `uname -sr` from /proc where it can be read (no fork)
h='' k1='' k2=''
{ read -r h </proc/sys/kernel/hostname; read -r k1 </proc/sys/kernel/ostype; read -r k2 </proc/sys/kernel/osrelease; } 2>/dev/null
[ -n "$h" ] || h=$(hostname 2>/dev/null || uname -n)
if [ -n "$k1" ] && [ -n "$k2" ]; then k="$k1 $k2"; else k=$(uname -sr); fi
kv hostname "$h"
kv kernel "$k"
kv home "$HOME"
# The slow part (nvidia-smi, tool versions, python -c 'import torch') is
# cached on the host while it is unchanged: same boot, same tool paths, each
# tool file the same size and mtime, same parameters ($sig). Its parts run
# at once, each into a file of its own beside the cache ($par.N), and are
# printed in order: a fresh host's probe takes the slowest tool's time, not
# the sum (serial when there is no cache directory).
probe_gpu() {
  if [ -z "$smi" ]; then
    kv has_gpu 0
    kv gpu_reason 'nvidia-smi: not found (looked on PATH, /usr/bin, /usr/local/nvidia/bin)'
    return 0
  fi
  out=$(to 30 "$smi" --query-gpu=name,uuid,compute_cap,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,clocks.max.memory --format=csv,noheader,nounits -i "$gpu" 2>&1)
  rc=$?
  if [ $rc -ne 0 ] || [ -z "$out" ]; then
    kv has_gpu 0
    kv gpu_reason "$smi failed (exit $rc): $(printf '%s' "$out" | head -n 3)"
  else
    kv has_gpu 1
    kv gpu "$(printf '%s' "$out" | head -n 1)"
    # every GPU of the host, one line each: the runner's slots (probe.c)
    to 30 "$smi" --query-gpu=index,uuid,memory.total,clocks.max.sm,name --format=csv,noheader,nounits 2>/dev/null |
      while IFS= read -r l; do kv gpu_slot "$l"; done
  fi
}
probe_nvcc() { kv nvcc_path "$nvcc_p"; kv nvcc_version "$(to 30 "$nvcc_p" --version 2>&1 | grep -E 'release|^Build' | tr '\n' ' ')"; }
probe_ncu() { kv ncu_version "$(to 30 "$ncu_p" --version 2>&1 | grep -E '^Version' | head -n 1)"; }
probe_san() { kv sanitizer_version "$(to 30 "$san_p" --version 2>&1 | grep -E '^Version' | head -n 1)"; }
probe_py() {
  kv python_version "$(to 20 "$py_p" --version 2>&1 | head -n 1)"
  tv=$(to 30 "$py_p" -c 'import torch; print(torch.__version__)' 2>/dev/null | tail -n 1) && [ -n "$tv" ] && kv torch "$tv"
  return 0
}
# proc_gpu: 0 when the NVIDIA driver's /proc files name GPU $gpu (the
# $gpu-th in PCI bus order, as nvidia-smi counts) and the plan can name its
# arch without nvidia-smi ($gpu_any, or the model holds one of $gpu_names);
# sets pm, pu, pd (model, UUID, the driver's version line). No fork.
# GPUORCH_NVPROC: another directory for those files (tests).
proc_gpu() {
  pm='' pu='' pd='' f=''
  [ -n "$smi" ] || return 1
  d=${GPUORCH_NVPROC:-/proc/driver/nvidia}
  i=0
  _lc=${LC_COLLATE-}; LC_COLLATE=C
  for g in "$d"/gpus/*/information; do
    if [ "$i" = "$gpu" ]; then f=$g; break; fi
    i=$((i + 1))
  done
  LC_COLLATE=$_lc
  [ -n "$f" ] && [ -r "$f" ] || return 1
  while IFS= read -r l; do
    case $l in Model:*) pm=${l#Model:} ;; 'GPU UUID:'*) pu=${l#GPU UUID:} ;; esac
  done < "$f"
  { read -r pd < "$d/version"; } 2>/dev/null
  # leading blanks (a blank or a tab) off the model and the UUID
  pm=${pm#"${pm%%[! 	]*}"} pu=${pu#"${pu%%[! 	]*}"}
  [ -n "$pm" ] || return 1
  [ "$gpu_any" != 1 ] || return 0
  # the names are split at newlines only
  set -f; _ifs=$IFS; IFS='
'
  for n in $gpu_names; do
    case $pm in *"$n"*) IFS=$_ifs; set +f; return 0 ;; esac
  done
  # the model's words (split at blanks, '-', '_'), one of them a model
  # gpuorch knows the compute capability of (probe.c: probe_model_cc)
  IFS=' 	-_'; set -- $pm; IFS=' '; _pw=" $* "; IFS=$_ifs; set +f
  for n in $gpu_models; do
    case $_pw in *" $n "*) return 0 ;; esac
  done
  return 1
}
# proc_slots: every GPU the driver's /proc files name, one gpu_proc_slot
# line each ("INDEX, UUID, , , MODEL", as gpu_slot's fields), in the order
# proc_gpu counts them. No fork.
proc_slots() {
  i=0
  _lc=${LC_COLLATE-}; LC_COLLATE=C
  for g in "${GPUORCH_NVPROC:-/proc/driver/nvidia}"/gpus/*/information; do
    [ -r "$g" ] || continue
    m='' u=''
    while IFS= read -r l; do
      case $l in Model:*) m=${l#Model:} ;; 'GPU UUID:'*) u=${l#GPU UUID:} ;; esac
    done < "$g"
    m=${m#"${m%%[! 	]*}"} u=${u#"${u%%[! 	]*}"}
    kv gpu_proc_slot "$i, $u, , , $m"
    i=$((i + 1))
  done
  LC_COLLATE=$_lc
}
# the paths of the tools found besides nvcc (known without running them)
tool_paths() {
  [ -z "$ncu_p" ] || kv ncu_path "$ncu_p"
  [ -z "$san_p" ] || kv sanitizer_path "$san_p"
  [ -z "$py_p" ] || kv python_path "$py_p"
}
# parts NAME...: those of the named parts whose tool was found
parts() {
  for p in "$@"; do
    case $p in nvcc) [ -n "$nvcc_p" ] ;; ncu) [ -n "$ncu_p" ] ;; san) [ -n "$san_p" ] ;; py) [ -n "$py_p" ] ;; esac &&
      printf '%s ' "$p"
  done
}
# run_parts NAME...: their lines, in order; at once, each into its
# $par.NAME, when there is a $par and more than one part
run_parts() {
  if [ -z "$par" ] || [ $# -le 1 ]; then
    for p in "$@"; do probe_$p; done
    return 0
  fi
  for p in "$@"; do probe_$p > "$par.$p" 2>/dev/null 8>&- & done
  wait
  # the parts' files, in order
  for p in "$@"; do set -- "$@" "$par.$p"; shift; done
  [ $# -eq 0 ] || { cat "$@" 2>/dev/null; rm -f "$@"; }
  return 0
}
# Probing for a run (later=1): what the plan needs (the GPU, nvcc) is
# answered first; the tools only recorded (ncu, compute-sanitizer, python,
# torch: up to seconds) go on in the background, overlapping the run's
# builds. That part holds $par.lock (flock) until its lines are in
# $par.later; the host runner waits for it before the run's first step and
# puts them in its journal (docs/runner.md, probe_later); the host's cache
# is written whole by it.
later_part() {
  run_parts "$@" > "$par.l"
  i=0
  while [ ! -f "$par.now" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
  if [ -f "$par.now" ]; then
    { printf '%s\n' "$sig"; cat "$par.now" "$par.l"; } > "$par.c" && mv -f "$par.c" "$cache"
  fi
  rm -f "$par.now"
  mv -f "$par.l" "$par.later"
  # what runs that never reached a runner left (interrupted mid-probe)
  find "${cache%/*}" -maxdepth 1 \( -name 'probe-*.later' -o -name 'probe-*.lock' \) -mmin +1440 \
    -exec rm -f {} + 2>/dev/null
}
# the main part: the cached lines, or the parts run now
kv sig "$sig"
cache=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/gpuorch/probe-$gpu
if [ -n "$boot" ] && [ -f "$cache" ] && [ "$(head -n 1 "$cache")" = "$sig" ]; then
  tail -n +2 "$cache"
  kv probe_cached 1
else
  par=
  if [ -n "$boot" ] && mkdir -p "${cache%/*}" 2>/dev/null; then par=$cache.$$; fi
  if [ -n "$par" ] && [ "$later" = 1 ] && command -v flock >/dev/null 2>&1 &&
     { : > "$par.lock"; } 2>/dev/null && exec 8>"$par.lock" && flock 8; then
    if proc_gpu; then now='nvcc' rest='gpu ncu san py'; else now='gpu nvcc' rest='ncu san py' pm=; fi
    # at the lowest priority (its own pid from /proc/self: no process to
    # learn it; renice before its first tool, which inherits it): on a host
    # of few CPUs its tools (ncu, python -c 'import torch') must not slow
    # the run's start and builds, which come before its lines are needed
    # (SC2046: parts prints the names of parts, words to split)
    # shellcheck disable=SC2046
    ( trap '' HUP
      { read -r me _ </proc/self/stat && renice -n 19 -p "$me"; } >/dev/null 2>&1
      later_part $(parts $rest) ) </dev/null >/dev/null 2>&1 &
    exec 8>&-
    # no nvidia-smi: its two lines need no process of their own
    [ -n "$smi" ] || now=${now#gpu }
    # shellcheck disable=SC2046
    out=$([ -n "$smi" ] || probe_gpu; run_parts $(parts $now); tool_paths
      [ -z "$pm" ] || { kv gpu_proc_name "$pm"; kv gpu_proc_uuid "$pu"; kv gpu_proc_driver "$pd"; proc_slots; })
    printf '%s\n' "$out"
    printf '%s\n' "$out" > "$par.n" && mv -f "$par.n" "$par.now"
    kv later "$par"
  else
    # shellcheck disable=SC2046
    out=$(run_parts $(parts gpu nvcc ncu san py); tool_paths)
    printf '%s\n' "$out"
    if [ -n "$par" ]; then
      printf '%s\n%s\n' "$sig" "$out" > "$cache.$$" && mv -f "$cache.$$" "$cache"
    fi
  fi
  kv probe_cached 0
fi
# what does not change the plan's tools: cores, the work directory's
# filesystem's free space (its nearest existing parent's)
kv cores "$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null)"
w=$workdir
while [ -n "$w" ] && [ ! -d "$w" ]; do
  case "$w" in */*) w=${w%/*} ;; *) w=. ;; esac
done
[ -n "$w" ] || w=/
kv disk_free_kib "$(df -Pk "$w" 2>/dev/null | awk 'NR == 2 {print $4}')"
# execds serving the work directory (their socket's lock held): `hosts
# disconnect` and `hosts clean` stop them
n=0
for s in "$workdir"/execd/*.sock; do
  [ -S "$s" ] && [ -f "$s.lock" ] && ! flock -n "$s.lock" true 2>/dev/null && n=$((n + 1))
done
kv execds_running $n
# the tools the runner uses where the host has them
for t in flock timeout setsid; do
  if command -v $t >/dev/null 2>&1; then kv has_$t 1; else kv has_$t 0; fi
done
kv 'done' 1
