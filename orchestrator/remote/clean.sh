# shellcheck shell=sh
# clean.sh -- cleans a host's work directory (`gpuorch hosts clean`), or
# only stops its execds (`gpuorch hosts disconnect`): hostclean.c runs it
# as `sh -c`, with these variables set in lines before it:
#   w     the work directory (relative: to the login directory)
#   dry   1: say what would go, remove nothing; 0: remove
#   what  execds: only stop the running execds; clean: everything below
#   m     (clean) minutes: what is older goes
#   av    (clean) this gpuorch's host agent version, which stays
# Each removal prints "gpuorch-clean: KIND KIB PATH" (KIND: run, content,
# build, object, blob, stopped, execd, agent); a live run's content
# "gpuorch-clean: live PATH"; the last line is "gpuorch-clean: done".
# hostclean.c reads those lines and ignores any other.
# Embedded in gpuorch by scripts/embed.sh --sh: comment lines are not sent.
# SC2154: the variables above are set before this text.
# shellcheck disable=SC2154
#
# stop_execds: each running execd (W/execd/V.sock whose lock is held) loses
# its socket: it takes no new command and exits within a second
# (gpuorch-execd.c: "when its socket is removed"); commands it runs now
# finish. Prints "gpuorch-clean: stopped 0 SOCK" for each.
stop_execds() {
  for s in execd/*.sock; do
    [ -S "$s" ] || continue
    [ -f "$s.lock" ] && ! flock -n "$s.lock" true 2>/dev/null || continue
    if [ "$dry" = 1 ] || rm -f "$s"; then echo "gpuorch-clean: stopped 0 $s"; fi
  done
}
export LC_ALL=C
cd "$w" 2>/dev/null || { echo 'gpuorch-clean: done'; exit 0; }
# hosts disconnect: the execds only
if [ "$what" = execds ]; then
  stop_execds
  echo 'gpuorch-clean: done'
  exit 0
fi
# old PATH: PATH is older than $m minutes
old() { [ -e "$1" ] && [ -n "$(find "$1" -maxdepth 0 -mmin +"$m" 2>/dev/null)" ]; }
# gone KIND PATH: removes PATH (dry: does not) and says so
gone() {
  k=$(du -sk "$2" 2>/dev/null | cut -f1)
  if [ "$dry" = 1 ] || rm -rf "$2"; then echo "gpuorch-clean: $1 ${k:-0} $2"; fi
}
# live: the content and build ids that running runs use (their
# runner.lock held), blank-separated; their run directories stay
live=' '
for r in runs/*; do
  [ -d "$r" ] || continue
  if [ -f "$r/runner.lock" ] && ! flock -n "$r/runner.lock" true 2>/dev/null; then
    c=$(sed -n "s|^src_dir '\(.*\)/src'\$|\1|p" "$r/plan.sh" 2>/dev/null | head -n 1)
    live="$live${c##*/} $(grep -o 'builds/[0-9a-f]*' "$r/plan.sh" 2>/dev/null | sed 's|^builds/||' | tr '\n' ' ')"
    live="$live$(grep -o 'gpuorch_obj [0-9a-f]*' "$r/plan.sh" 2>/dev/null | sed 's|^gpuorch_obj ||' | tr '\n' ' ')"
    continue
  fi
  [ -z "$(find "$r" -mindepth 1 -maxdepth 1 -mmin -"$m" 2>/dev/null | head -n 1)" ] && old "$r" && gone run "$r"
done
# contents: a live run's stays; else an old one goes; the manifests of
# those that stay list the blobs that stay
keep=$(mktemp "${TMPDIR:-/tmp}/gpuorch-keep.XXXXXX") || exit 1
for c in content/*; do
  [ -d "$c" ] || continue
  case $live in *" ${c##*/} "*) echo "gpuorch-clean: live $c"; cat "$c/manifest" >>"$keep" 2>/dev/null; continue;; esac
  if [ -f "$c/.complete" ]; then t="$c/.complete"; else t=$c; fi
  if old "$t"; then gone content "$c"; else cat "$c/manifest" >>"$keep" 2>/dev/null; fi
done
# kb: the object lists (BUILD/objects) of the builds that stay
kb=
for b in builds/*; do
  [ -d "$b" ] || continue
  case $live in *" ${b##*/} "*) kb="$kb $b/objects"; continue;; esac
  if [ -f "$b/rc" ]; then t="$b/rc"; else t=$b; fi
  if old "$t"; then gone build "$b"; else kb="$kb $b/objects"; fi
done
[ -z "$kb" ] || live="$live $(cat $kb 2>/dev/null | tr '\n' ' ') "
# objects (W/objects/KEY.o, touched on every reuse) that neither a live
# run nor a build that stays was made from, with their replayed outputs and
# lock; then a killed compile's temporaries and lone locks
for f in objects/*.o; do
  [ -f "$f" ] || continue
  k=${f#objects/}; k=${k%.o}
  case $live in *" $k "*) continue;; esac
  old "$f" && gone object "$f" && { [ "$dry" = 1 ] || rm -f "objects/$k.out" "objects/$k.err" "objects/$k.lock"; }
done
for f in objects/*; do
  case $f in *.o) continue;; *.lock) [ ! -e "${f%.lock}.o" ] || continue;; *.out|*.err) [ ! -e "${f%.*}.o" ] || continue;; esac
  [ -f "$f" ] && old "$f" && [ "$dry" != 1 ] && rm -f "$f"
done
# blobs that no content that stays lists
if [ -d blobs ]; then
  awk '{ print $1 }' "$keep" | sort -u >"$keep.s"
  ls blobs | sort | comm -23 - "$keep.s" | while read -r h; do gone blob "blobs/$h"; done
fi
rm -f "$keep" "$keep.s"
stop_execds
# an execd version not running (its lock free) whose source beside it
# (touched whenever it is started) is old: binary, source, socket
for x in execd/gpuorch-execd-*.c; do
  [ -f "$x" ] || continue
  b=${x%.c}; v=${b##*/gpuorch-execd-}
  if [ -f "execd/$v.sock.lock" ] && ! flock -n "execd/$v.sock.lock" true 2>/dev/null; then continue; fi
  old "$x" || continue
  k=$(du -skc "$b" "$x" 2>/dev/null | tail -n 1 | cut -f1)
  if [ "$dry" = 1 ] || rm -f "$b" "$x" "$b.log" "$b.failed" "$b.build" "execd/$v.sock" "execd/$v.sock.lock"; then
    echo "gpuorch-clean: execd ${k:-0} $b"
  fi
done
# a host agent of another version than this gpuorch's ($av), old, and
# named by no run that is running (RD/runner.agent): binary, log, marks
for b in agent/gpuorch-agent-*; do
  [ -f "$b" ] || continue
  case ${b##*/gpuorch-agent-} in *.*) continue;; "$av") continue;; esac
  old "$b" || continue
  u=0
  for r in runs/*; do
    [ -s "$r/runner.agent" ] && [ -f "$r/runner.lock" ] || continue
    flock -n "$r/runner.lock" true 2>/dev/null && continue
    [ "$(cat "$r/runner.agent")" != "$w/$b" ] || u=1
  done
  [ $u = 0 ] || continue
  k=$(du -sk "$b" 2>/dev/null | cut -f1)
  if [ "$dry" = 1 ] || rm -rf "$b" "$b.log" "$b.failed" "$b.build" "$b".src.*; then
    echo "gpuorch-clean: agent ${k:-0} $b"
  fi
done
echo 'gpuorch-clean: done'
