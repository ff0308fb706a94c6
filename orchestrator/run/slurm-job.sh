# shellcheck shell=sh
# slurm-job.sh -- the batch script of one Slurm job of a run (run/slurmrun.c,
# docs/slurm.md): the node's GPU facts into node.txt, then the job's plan
# (plan.sh in its run directory, hostrun_write_plan) run in the foreground
# by the host agent (docs/runner.md) -- by runner.sh only where the agent
# cannot be built on the compute node (no cc, or its build failed once).
#
# The login node never compiles: it was sent the agent's sources as one
# bundle (W/agent/gpuorch-agent-V.bundle, scripts/agent-bundle.sh); the
# first job on a kind of node (uname -m) builds the agent from it into the
# shared W/agent/gpuorch-agent-V-MACHINE under a flock, and every later job
# (of this run and the next ones) runs that binary. A job that comes while
# another builds waits for that build (one compile, not one per job). A
# failed build leaves MACHINE.failed and its log beside it and is never
# retried: runner.sh runs the jobs.
#
# It runs as `#!/bin/sh`, then the assignments (slurmrun.c: submit), then
# this text (embedded by scripts/embed.sh --sh: comment lines are not sent):
#   rd      the job's run directory (W/runs/RUN-ID/slurm/JOB[.try2])
#   runner  W/runs/RUN-ID/runner.sh, the fallback
#   ad, av  the agent's directory (W/agent) and version
#   build   1: a build job (it fails when its build did, for afterok)
# SC2154: the assignments above are set before this text.
# shellcheck disable=SC2154
cd "$rd" || exit 3
{ uname -n; echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-}"
  nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1 || true
} >node.txt 2>&1
ab=$ad/gpuorch-agent-$av-$(uname -m)
# mkagent: the agent from the bundle into $ab (a temporary name first: a
# job never runs half a binary), else $ab.failed -- but not when a signal
# stopped the compiler (a job cancelled or preempted meanwhile): the next
# job tries again
mkagent() {
  [ ! -x "$ab" ] && [ ! -f "$ab.failed" ] || return 0
  s=$ab.src.$$
  rm -rf "$s" && mkdir "$s" &&
    awk -v d="$s" -v f='#--gpuorch-agent-file-- ' 'index($0, f) == 1 { if (o != "") close(o); o = d "/" substr($0, length(f) + 1); next } o != "" { print > o }' "$ad/gpuorch-agent-$av.bundle" ||
    { rm -rf "$s"; return 0; }
  nice -n 19 cc -O2 -o "$ab.tmp.$$" "$s"/*.c >"$ab.log" 2>&1
  rc=$?
  rm -rf "$s"
  if [ "$rc" = 0 ] && mv -f "$ab.tmp.$$" "$ab"; then
    return 0
  fi
  rm -f "$ab.tmp.$$"
  [ "$rc" -gt 128 ] || : >"$ab.failed"
}
if [ ! -x "$ab" ] && [ ! -f "$ab.failed" ] && [ -s "$ad/gpuorch-agent-$av.bundle" ] &&
   command -v cc >/dev/null 2>&1; then
  if command -v flock >/dev/null 2>&1; then
    ( flock 9 && mkagent ) 9>"$ab.build"
  else
    mkagent
  fi
fi
if [ -x "$ab" ]; then
  "$ab" run "$rd"
else
  /bin/sh "$runner" run "$rd"
fi || exit $?
# the runner exits 0 when it ran its plan, whatever the build did: a build
# job must fail when its build did, or afterok would start the step jobs of
# a failed build
[ "$build" != 1 ] || { read -r b <.builds/1 && [ "$b" = pass ]; } || exit 1
