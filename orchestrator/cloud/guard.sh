# shellcheck shell=sh
# guard.sh -- the instance guard: the dead-man switch on a cloud instance
# that stops it when the controller has gone quiet (guard.c, docs/cloud.md).
#
#   sh -c GUARD.SH gpuorch-guard W/guard
#
# guard.c's install command writes W/guard/{idle_s, deadline, poll_s,
# action, heartbeat} and starts this detached (setsid). Every poll_s it
# checks, in this order: disarmed (heartbeat file gone) or replaced (pid
# file names another guard) -> exit quietly; the deadline (seconds since the
# epoch; 0: none) passed -> fire; a step or build running (a pgid file
# under W without an rc beside it, whose process group is alive) -> that
# counts as activity; no heartbeat (its mtime) and no activity for idle_s
# (0: never idle) -> fire. Firing writes W/guard/fired ("idle T" or
# "max_lifetime T") first, then runs W/guard/action (its output in
# action.log). Times are the instance's own clock (date +%s).
# Embedded in gpuorch by scripts/embed.sh --sh: comment lines are not sent.
G=$1; W=${G%/guard}
read -r idle <"$G/idle_s"; read -r deadline <"$G/deadline"; read -r poll <"$G/poll_s"
echo $$ >"$G/pid.tmp" && mv -f "$G/pid.tmp" "$G/pid" || exit 1
# seen: when a step or build was last seen running
seen=0
while :; do
  sleep "$poll"
  [ -f "$G/heartbeat" ] || exit 0
  owner=; read -r owner <"$G/pid" 2>/dev/null
  [ "$owner" = $$ ] || exit 0
  now=$(date +%s)
  # "busy" when a step or build runs: the pgid files read one a line (the
  # work directory's path may have blanks)
  busy=$(find "$W" -maxdepth 5 -name pgid ! -path "$G/*" 2>/dev/null | while IFS= read -r p; do
    d=${p%/pgid}; [ -f "$d/rc" ] && continue
    g=; read -r g <"$p" 2>/dev/null
    [ -n "$g" ] && kill -0 "$g" 2>/dev/null && { echo busy; break; }
  done)
  [ -z "$busy" ] || seen=$now
  hb=$(stat -c %Y "$G/heartbeat" 2>/dev/null) || exit 0
  last=$hb; [ "$seen" -gt "$last" ] && last=$seen
  why=
  if [ "$deadline" -gt 0 ] && [ "$now" -ge "$deadline" ]; then why=max_lifetime
  elif [ "$idle" -gt 0 ] && [ $((now - last)) -ge "$idle" ]; then why=idle; fi
  if [ -n "$why" ]; then
    echo "$why $now" >"$G/fired.tmp" && mv -f "$G/fired.tmp" "$G/fired"
    rm -f "$G/pid"
    sh "$G/action" >"$G/action.log" 2>&1
    exit 0
  fi
done
