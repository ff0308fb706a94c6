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
#   tarlen      bytes of the blobs' tar at the head of stdin (0: none)
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
  # one mv for all, else one a file; src/ is copied out of the store
  unb() {
    ( cd "$t" && { set -- nb/*; [ ! -f "$1" ] || mv -f -- "$@" "$bdir/" 2>/dev/null ||
        for f in nb/*; do [ ! -f "$f" ] || mv -f "$f" "$bdir/" || exit 1; done; } && rm -rf nb ) ||
      { rm -rf "$t"; echo "cannot move the files sent into $bdir" >&2; exit 1; }
  }
  # lack: each blob the manifest lists that the store lacks, said; miss=1
  # when there is one
  lack() {
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
  # The tree, from the tree used last (the newest .complete): the files its
  # manifest lists copied with one tar pipe (not what a build left there;
  # each name as ./NAME, so tar never reads one as an option), every file
  # checked against the new manifest (sha256sum, find) and only what differs
  # fixed -- what a build changed in place included: files not in the
  # manifest go, files whose hash or exec bit differs come from the blobs.
  # About a dozen processes and one per changed file, where the edit loop of
  # a large tree paid one per file; its account is in CDIR/tree.txt.
  # Anything amiss: file by file.
  # The newest of several by ls; one or none without a process.
  set -- "${cdir%/*}"/*/.complete
  if [ $# -gt 1 ]; then prev=$(ls -t "$@" 2>/dev/null | head -n 1); elif [ -f "$1" ]; then prev=$1; else prev=; fi
  prev=${prev%/.complete}
  if [ -n "$prev" ] && [ "$prev" != "$cdir" ] && [ -d "$prev/src" ] &&
     command -v sha256sum >/dev/null 2>&1 &&
     [ -f "$prev/manifest" ] &&
     ( cd "$cdir" && set -f && n=src.new.$$ && rm -rf "$n" && mkdir "$n" &&
       ( cd "$prev/src" && awk '{ sub(/^[^ ]+ [^ ]+ /, ""); print "./" $0 }' ../manifest | tar -cf - -T - ) |
         ( cd "$n" && tar -xf - ) && cd "$n" && chmod -R go-rwx . &&
       find . -type f -exec sha256sum -- {} + > ../have.$$ && find . -type f -perm -100 > ../exec.$$ &&
       awk 'FILENAME == ARGV[1] { p = $0; sub(/^[^ ]+ [^ ]+ /, "", p); want[p] = $1; mode[p] = $2; next }
            FILENAME == ARGV[2] { p = substr($0, 67); sub(/^\.\//, "", p); have[p] = $1; next }
            { p = $0; sub(/^\.\//, "", p); isx[p] = 1 }
            END { for (p in have) if (!(p in want)) print "r - - " p
                  for (p in want) if (have[p] != want[p]) print "c " want[p] " " mode[p] " " p
                    else if ((mode[p] == "755") != (p in isx)) print "m " want[p] " " mode[p] " " p }' \
         ../manifest ../have.$$ ../exec.$$ > ../fix.$$ &&
       while read -r op h m p; do [ "$op" != r ] || rm -f -- "$p" || exit 1; done < ../fix.$$ &&
       { find . -mindepth 1 -type d -empty -delete 2>/dev/null; :; } &&
       while read -r op h m p; do
         case $op in
         c) d=${p%/*}; [ "$d" = "$p" ] || [ -d "$d" ] || mkdir -p -- "$d" || exit 1
            rm -f -- "$p" && cp "$bdir/$h" "$p" || exit 1
            [ "$m" = 644 ] || chmod 700 "$p" || exit 1 ;;
         m) if [ "$m" = 755 ]; then chmod 700 "$p"; else chmod 600 "$p"; fi || exit 1 ;;
         esac
       done < ../fix.$$ &&
       awk -v from="$prev" '{ n[$1]++ } END { printf "from %s: %d copied, %d modes set, %d removed\n", from, n["c"], n["m"], n["r"] }' \
         ../fix.$$ > ../tree.txt &&
       cd .. && rm -rf src && mv "$n" src && rm -f have.$$ exec.$$ fix.$$ && printf '' > .complete ); then
    :
  else
    [ -z "$prev" ] || rm -rf "$cdir"/src.new.$$ "$cdir"/have.$$ "$cdir"/exec.$$ "$cdir"/fix.$$
  # else every directory made and every file copied from its blob by one
  # perl process (builtins only: perl-base is in every Debian and Ubuntu; a
  # fresh host's first tree of N files was N cp processes, 4-6 s for 2,000
  # files); without perl, or should it fail (src/ made again: nothing it
  # wrote stays), one mkdir for every directory and a cp a file as before
  # (umask 077, build_sh: a file is 0600, chmod 700 for an executable one).
  # perl's errors go to $t (removed with it). GPUORCH_PERL: another perl
  # (tests).
  case $t in /*) pe=$t/perl.err ;; *) pe=$PWD/$t/perl.err ;; esac
  ( cd "$cdir" && { [ ! -e src ] || rm -rf src; } && set -f &&
    mksrc() {
      dirs=$(awk '{ p = $0; sub(/^[^ ]+ [^ ]+ /, "", p); if (sub(/\/[^\/]*$/, "", p) && !(p in s)) { s[p]; print "src/" p } }' manifest) &&
      mkdir src && { [ -z "$dirs" ] || ( IFS='
'; mkdir -p -- $dirs ); }
    } &&
    if "${GPUORCH_PERL:-perl}" -e 'my $b = shift; mkdir "src" or die "src: $!\n"; while (<STDIN>) { chomp; my ($h, $m, $p) = split / /, $_, 3;
         my @c = split m{/}, $p; pop @c; my $dd = "src"; for my $c (@c) { $dd .= "/$c"; -d $dd or mkdir $dd or die "$dd: $!\n" }
         open(my $i, "<:raw", "$b/$h") or die "$b/$h: $!\n"; open(my $o, ">:raw", "src/$p") or die "src/$p: $!\n";
         my $d; while (1) { my $r = sysread($i, $d, 1048576); defined $r or die "$b/$h: $!\n"; last if !$r;
           print $o $d or die "src/$p: $!\n" } close($o) or die "src/$p: $!\n"; close($i);
         $m eq "644" or chmod(0700, "src/$p") or die "src/$p: $!\n" }' "$bdir" < manifest 2> "$pe"; then
      echo 'in one process from the blobs (perl)' > tree.txt
    else
      # what a failed perl left goes first
      rm -rf src && mksrc &&
      while read -r h m p; do
        cp "$bdir/$h" "src/$p" || exit 1
        [ "$m" = 644 ] || chmod 700 "src/$p" || exit 1
      done < manifest && { echo 'file by file from the blobs'; [ ! -s "$pe" ] || head -n 2 "$pe"; } > tree.txt
    fi && printf '' > .complete ) ||
    { rm -rf "$t"; echo "cannot assemble the sources in $cdir" >&2; exit 1; }
  fi
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
      [ -x "$1" ] || { nice -n 19 cc -O1 -o "$1.tmp.$$" "$1.c" >"$1.log" 2>&1 &&
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
