# shellcheck shell=sh
# start.sh -- the start command: one SSH command per (re)attachment to a
# host's run (remote.c: remote_runner_follow). It unpacks the blobs it
# carries (blobs.h), lists those the host still lacks when the content is
# absent (on an exec channel, where a second command is a second login
# shell, it then waits for them on the same stdin), else assembles the
# sources' tree; writes runner.sh and plan.sh (atomically), starts the run
# (`runner.sh start`, or the host agent's: idempotent, "started PID",
# "running PID" or "finished"), then execs `follow RUNDIR OFFSET`, whose
# stdout is the journal. Its answers come first on stdout as
# "gpuorch-start: ..." lines (remote.c: start_line), the last one
# "gpuorch-start: runner ..."; everything after it is the journal.
#
# It runs as `sh -c 'umask 077; ASSIGNMENTS; THIS'` (remote.c: build_sh),
# after the kept probe's check (probe-sig.sh) or the probe itself
# (probe.sh, then the assignments come on stdin). The assignments
# (remote.c: add_follow_vars):
#   cdir, bdir  the content directory (W/content/CID; empty: none) and the
#               blob store (W/blobs)
#   rd          the run directory (W/runs/RUN-ID)
#   off         the journal offset to follow from
#   send        1: the runner and the plan come on stdin (a fresh start)
#   reopen      1: --resume, what was stopped or lost runs again
#   need        KiB the run needs free before it starts (0: no check)
#   tarlen      bytes of the blobs' tar at the head of stdin (0: none; a
#               host with an execd got them before, written by it: a put)
#   txtlen      bytes of the text after it (the parts below)
#   ask         1: the controller waits to send missing blobs on this stdin
#   xd, xv      the execd's directory (empty: none) and version
#   xidle       seconds an idle execd lives
#   ad, av      the host agent's directory (empty: none) and version
# stdin: the tar of the blobs sent ($tarlen bytes, none when 0; unpacked as
# it comes), then the
# manifest, the runner marker, runner.sh, the plan marker, the plan, the
# execd marker, the execd's source, the agent marker and the agent's files
# (each after a file marker line and its name); each part may be empty.
# The markers are remote.c's RUNNER_MARKER, PLAN_MARKER, EXECD_MARKER,
# AGENT_MARKER and AGENT_FILE (test_runplan checks they are the same here).
# The tar is read with head -c, which reads no further than its count; the
# rest is split once, into $t, but for the runner and the plan, which go
# straight to their .tmp names beside their places when sent (one rename
# each: every process counts on a re-run, docs/runner.md).
# Exit codes remote.c reads: 3 no runner, 4 content absent, 7 disk short.
# Embedded in gpuorch by scripts/embed.sh --sh: comment lines are not sent.
# SC2154: the assignments above are set before this text.
# shellcheck disable=SC2154
if [ "$send" = 1 ]; then
  t=$rd/.in.$$
  mkdir -p "$rd/.builds" "$t" || { echo "cannot create the run directory $rd" >&2; exit 1; }
  # a run not started yet: is there room for it (diskspace.h)?
  if [ "$need" -gt 0 ] && [ ! -s "$rd/journal" ]; then
    free=$(df -Pk "$rd" 2>/dev/null | awk 'NR == 2 {print $4}')
    if [ -n "$free" ] && [ "$free" -lt "$need" ]; then
      rm -rf "$t"; rmdir "$rd/.builds" "$rd" 2>/dev/null
      echo "gpuorch-start: disk short $free"; exit 7
    fi
  fi
else
  t=$(mktemp -d "${TMPDIR:-/tmp}/gpuorch-in.XXXXXX") || exit 1
fi
# untar N [WHAT]: the tar of N bytes at the head of stdin unpacked into
# $t/nb as it comes (each byte written once, where a copy of the tar was
# written first and read again); a tar cut short fails here, and a blob it
# never reached is one that lack names below. WHAT (the files asked for):
# the runner and the plan written so far go too.
untar() {
  { [ ! -e "$t/nb" ] || rm -rf "$t/nb"; } && mkdir "$t/nb" && head -c "$1" | tar -xf - -C "$t/nb" ||
    { rm -rf "$t"; [ -z "${2:-}" ] || rm -f "$rtmp" "$ptmp"
      echo "${2:-the files sent} did not all arrive (a tar of $1 bytes expected)" >&2; exit 1; }
}
[ "$tarlen" -eq 0 ] || untar "$tarlen"
rtmp=$t/runner ptmp=$t/plan
[ "$send" != 1 ] || rtmp=$rd/runner.sh.tmp ptmp=$rd/plan.sh.tmp
ab=
[ -z "$ad" ] || [ ! -x "$ad/gpuorch-agent-$av" ] || ab=$ad/gpuorch-agent-$av
mkdir "$t/agent" && head -c "$txtlen" | awk -v d="$t" -v ka="$ab" -v r="$rtmp" -v p="$ptmp" -v a='#--gpuorch-runner--' -v b='#--gpuorch-plan--' -v c='#--gpuorch-execd--' -v e='#--gpuorch-agent--' -v f='#--gpuorch-agent-file-- ' '$0 == a { s = 1; next } $0 == b { s = 2; next } $0 == c { s = 3; next } $0 == e { s = 4; next } s == 4 && ka != "" { next } s == 4 && index($0, f) == 1 { if (o != "") close(o); o = d "/agent/" substr($0, length(f) + 1); next } s == 4 { if (o != "") print > o; next } { print > (s == 3 ? d "/execd" : s == 2 ? p : s == 1 ? r : d "/manifest") }' || { rm -rf "$t"; exit 1; }
if [ -z "$cdir" ]; then
  :
elif [ -f "$cdir/.complete" ]; then
  # its last use, for gpuorch hosts clean (an empty file: no touch; not
  # `:`, whose failed redirection would end the shell)
  printf '' > "$cdir/.complete"
  echo 'gpuorch-start: content present'
else
  mkdir -p "$cdir" "$bdir" || { rm -rf "$t"; exit 1; }
  [ ! -s "$t/manifest" ] || mv -f "$t/manifest" "$cdir/manifest" || { rm -rf "$t"; exit 1; }
  [ -s "$cdir/manifest" ] ||
    { rm -rf "$t"; echo "no manifest of the sources came with the command" >&2; exit 1; }
  # unb: the blobs sent ($t/nb, untar) go into the store whole (renamed):
  # one mv for all, else one a file; src/ links them (below)
  unb() {
    ( cd "$t" && { set -- nb/*; [ ! -f "$1" ] || mv -f -- "$@" "$bdir/" 2>/dev/null ||
        for f in nb/*; do [ ! -f "$f" ] || mv -f "$f" "$bdir/" || exit 1; done; } && rm -rf nb ) ||
      { rm -rf "$t"; echo "cannot move the files sent into $bdir" >&2; exit 1; }
  }
  # lack: each blob the manifest lists that the store lacks, said; miss=1
  # when there is one. A blob is read-only with mtime 0 (the tar the
  # controller sends: blobs.c); one whose mtime or mode changed was written
  # through a content's src/, which links it (below): it goes, and is
  # asked for again like a lost one (one find over the store, POSIX:
  # -mtime +10000 is older than 1999)
  lack() {
    find "$bdir/." ! -name . -prune -type f \( ! -mtime +10000 -o ! -perm 400 \) -exec rm -f -- {} + ||
      { rm -rf "$t"; echo "cannot check the blobs in $bdir" >&2; exit 1; }
    miss=0
    while read -r h m p; do [ -f "$bdir/$h" ] || { echo "gpuorch-start: missing $h"; miss=1; }; done < "$cdir/manifest"
  }
  [ ! -d "$t/nb" ] || unb
  lack
  # on an exec channel (not the execd: its stdin came whole) the
  # controller waits with this command's stdin open: ask it for them here,
  # where a second command would be a second login shell
  if [ $miss = 1 ] && [ "$ask" = 1 ] && [ -z "${GPUORCH_EXECD:-}" ]; then
    echo 'gpuorch-start: send missing'
    IFS= read -r n && case $n in '' | *[!0-9]*) false ;; esac ||
      { rm -rf "$t" "$rtmp" "$ptmp"; echo "the files the host asked for did not all arrive" >&2; exit 1; }
    untar "$n" 'the files the host asked for'
    unb
    lack
  fi
  if [ $miss = 1 ]; then echo 'gpuorch-start: content absent'; rm -rf "$t" "$rtmp" "$ptmp"; exit 4; fi
  # The tree: every file a hard link to its blob (one link(2) a file, no
  # byte written twice; the blob is read-only, so is the file), an
  # executable one a copy of its own (chmod 700: the blob's mode is
  # shared by every link), made by one perl process (builtins only:
  # perl-base is in every Debian and Ubuntu) in a clean src/; where a link
  # cannot be made (another file system) a copy. Without perl, or should it
  # fail (src/ made again: nothing it wrote stays), one mkdir for every
  # directory and an ln or cp a file. (umask 077, build_sh: a copy is 0600,
  # an executable 0700.) perl's errors go to $t (removed with it).
  # GPUORCH_PERL: another perl (tests). Its account is in CDIR/tree.txt.
  case $t in /*) pe=$t/perl.err ;; *) pe=$PWD/$t/perl.err ;; esac
  ( cd "$cdir" && { [ ! -e src ] || rm -rf src; } && set -f &&
    mksrc() {
      dirs=$(awk '{ p = $0; sub(/^[^ ]+ [^ ]+ /, "", p); if (sub(/\/[^\/]*$/, "", p) && !(p in s)) { s[p]; print "src/" p } }' manifest) &&
      mkdir src && { [ -z "$dirs" ] || ( IFS='
'; mkdir -p -- $dirs ); }
    } &&
    if "${GPUORCH_PERL:-perl}" -e 'my $b = shift; my ($nl, $nc) = (0, 0); mkdir "src" or die "src: $!\n";
         sub cp { my ($f, $t) = @_; open(my $i, "<:raw", $f) or die "$f: $!\n"; open(my $o, ">:raw", $t) or die "$t: $!\n";
           my $d; while (1) { my $r = sysread($i, $d, 1048576); defined $r or die "$f: $!\n"; last if !$r;
             print $o $d or die "$t: $!\n" } close($o) or die "$t: $!\n"; close($i); $nc++ }
         while (<STDIN>) { chomp; my ($h, $m, $p) = split / /, $_, 3;
         my @c = split m{/}, $p; pop @c; my $dd = "src"; for my $c (@c) { $dd .= "/$c"; -d $dd or mkdir $dd or die "$dd: $!\n" }
         if ($m eq "644") { if (link("$b/$h", "src/$p")) { $nl++ } else { cp("$b/$h", "src/$p") } }
         else { cp("$b/$h", "src/$p"); chmod(0700, "src/$p") or die "src/$p: $!\n" } }
         print "linked from the blobs (perl): $nl linked, $nc copied\n"' "$bdir" < manifest > tree.txt 2> "$pe"; then
      :
    else
      # what a failed perl left goes first
      rm -rf src && mksrc &&
      while read -r h m p; do
        if [ "$m" = 644 ]; then ln "$bdir/$h" "src/$p" 2>/dev/null || cp "$bdir/$h" "src/$p" || exit 1
        else cp "$bdir/$h" "src/$p" && chmod 700 "src/$p" || exit 1; fi
      done < manifest && { echo 'file by file from the blobs'; [ ! -s "$pe" ] || head -n 2 "$pe"; } > tree.txt
    fi && printf '' > .complete ) ||
    { rm -rf "$t"; echo "cannot assemble the sources in $cdir" >&2; exit 1; }
  echo 'gpuorch-start: content unpacked'
fi
if [ "$send" = 1 ]; then
  [ -s "$rtmp" ] && [ -s "$ptmp" ] && mv -f "$rtmp" "$rd/runner.sh" && mv -f "$ptmp" "$rd/plan.sh" ||
    { rm -rf "$t"; echo "cannot write the runner and its plan into $rd" >&2; exit 1; }
fi
[ -f "$rd/runner.sh" ] || { rm -rf "$t"; echo "no runner in $rd (the run was never started there)" >&2; exit 3; }
# --resume: what was stopped or lost before it ended runs again (runner.sh
# reopen)
if [ "$reopen" = 1 ]; then
  if [ -n "$ab" ]; then a=$("$ab" reopen "$rd"); else a=$(sh "$rd/runner.sh" reopen "$rd"); fi ||
    { rm -rf "$t"; exit 1; }
  echo "gpuorch-start: $a"
fi
# the host agent runs the run once it is built there (runner.sh's contract
# in C: docs/runner.md); runner.sh until then, and where it cannot be built
if [ -n "$ab" ]; then
  # runner.agent: for the kill
  a=$("$ab" start "$rd") && printf '%s\n' "$ab" > "$rd/runner.agent"
elif [ "$send" = 1 ]; then
  # a runner this command wrote is sourced: its start and follow run in
  # this shell (two shells fewer). (SC2034: runner.sh, checked as a file
  # of its own, reads these two.)
  # shellcheck disable=SC2034
  RUNNER_SH=$rd/runner.sh GPUORCH_RUNNER_LIB=1
  # shellcheck source=/dev/null
  . "$rd/runner.sh"
  unset GPUORCH_RUNNER_LIB
  a=$(cmd_start "$rd")
else
  # one an earlier command left (another gpuorch's, maybe) runs as a
  # program of its own
  a=$(sh "$rd/runner.sh" start "$rd")
fi || { rm -rf "$t"; exit 1; }
# the execd: started when built; built once per version, in the
# background, after the run's runner has ended (flock on its lock) and at
# the lowest priority, so it never shares the CPU with the run's builds and
# timed steps (-O1: half of -O2's 0.4 CPU-s); never retried after a failed
# build (its log stays beside it). (SC2174: mkdir -p -m sets the mode of
# the last directory alone; its parents are made 0700 by the umask, 077:
# build_sh.)
# shellcheck disable=SC2174
if [ "${GPUORCH_EXECD:-}" = "$xd/$xv.sock" ]; then
  # this command came through it
  echo "gpuorch-start: execd $xd/$xv.sock"
elif [ -n "$xd" ] && [ -s "$t/execd" ] &&
     if [ -d "$xd" ]; then chmod 700 "$xd"; else mkdir -p -m 700 "$xd"; fi; then
  xb="$xd/gpuorch-execd-$xv"
  if [ -x "$xb" ]; then
    # its last use, for gpuorch hosts clean
    touch "$xb.c" 2>/dev/null
    "$xb" start "$xd/$xv.sock" "$xidle" >/dev/null 2>"$xd/start.log" &&
      echo "gpuorch-start: execd $xd/$xv.sock"
  elif [ ! -f "$xb.failed" ] && mv -f "$t/execd" "$xb.c"; then
    # one build at a time (BIN.build holds its flock): a second start while
    # the first builds leaves it to that one -- a second `mv` over the
    # binary made the first server see its binary replaced and leave, and
    # the second found its lock still held: no execd at all (t1006)
    setsid sh -c 'flock "$4" true; exec 9>"$1.build"; flock -n 9 || exit 0
      [ -x "$1" ] || { nice -n 19 cc -O1 -o "$1.tmp.$$" "$1.c" -ldl >"$1.log" 2>&1 &&
      mv -f "$1.tmp.$$" "$1" || { rm -f "$1.tmp.$$"; touch "$1.failed"; exit 1; }; }
      exec 9>&-; exec "$1" start "$2" "$3"' \
      sh "$xb" "$xd/$xv.sock" "$xidle" "$rd/runner.lock" </dev/null >/dev/null 2>&1 &
    echo 'gpuorch-start: execd building'
  fi
fi
# the agent: built once per version like the execd, after the run's runner
# has ended and at the lowest priority, from this start's copy of its
# sources (one a start: two starts never share one); never retried after a
# failed build (no cc: runner.sh stays). (SC2174: as for the execd.)
# shellcheck disable=SC2174
if [ -n "$ad" ] && [ -z "$ab" ] && [ -s "$t/agent/agent.h" ] &&
   if [ -d "$ad" ]; then chmod 700 "$ad"; else mkdir -p -m 700 "$ad"; fi; then
  ab1="$ad/gpuorch-agent-$av"
  if [ ! -f "$ab1.failed" ] && mv -f "$t/agent" "$ab1.src.$$"; then
    setsid sh -c 'flock "$3" true; exec 9>"$1.build"; flock -n 9 || { rm -rf "$2"; exit 0; }
      [ -x "$1" ] || { nice -n 19 cc -O2 -o "$1.tmp.$$" "$2"/*.c >"$1.log" 2>&1 &&
      mv -f "$1.tmp.$$" "$1" || { rm -f "$1.tmp.$$"; touch "$1.failed"; }; }; rm -rf "$2"' \
      sh "$ab1" "$ab1.src.$$" "$rd/runner.lock" </dev/null >/dev/null 2>&1 &
    echo 'gpuorch-start: agent building'
  fi
fi
rm -rf "$t"
[ -z "$ab" ] || echo "gpuorch-start: agent $ab"
echo "gpuorch-start: runner $a"
[ -z "$ab" ] || exec "$ab" follow "$rd" "$off"
# runner.sh's follow, sourced above: it execs tail
[ "$send" != 1 ] || cmd_follow "$rd" "$off"
exec sh "$rd/runner.sh" follow "$rd" "$off"
