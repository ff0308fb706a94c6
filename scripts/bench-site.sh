#!/bin/sh
# bench-site.sh -- time, memory and size of `gpuorch site` over a store of N
# runs (default 10000).
#
#   scripts/bench-site.sh [N [RUN_DIR]]
#
# The store is N copies of one committed run (RUN_DIR, default the newest
# attention-wgmma run under reports/), made as scripts/bench-store.sh makes
# its copies (its own run id and start time each), but of what git keeps of
# a run (summary.json, samples.txt, report.md, charts/: docs/results-store.md),
# in a scratch directory removed at the end (the same files hard-linked).
# `gpuorch site` runs three times: the site, the same again (replacing the
# first), and with --every-figure (a history page per figure); the lines show
# each run's wall time, CPU time (user + system), peak RSS (GNU time) and
# history pages, then the size of the index's data (data/runs.js), of
# index.html and of the whole site (the last: --every-figure's). GPUORCH
# names the binary (default build/gpuorch), e.g. an older build to compare.
# Exits 1 when a command fails.
set -eu

N=${1:-10000}
SRC=${2:-}
G=${GPUORCH:-build/gpuorch}
[ -x "$G" ] || { echo "bench-site: no $G (run make)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-site: needs GNU time (/usr/bin/time)" >&2; exit 2; }
if [ -z "$SRC" ]; then
	SRC=$(ls -d reports/attention-wgmma/*/ | tail -1)
	SRC=${SRC%/}
fi
[ -f "$SRC/summary.json" ] || { echo "bench-site: no summary.json in '$SRC'" >&2; exit 2; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench-site.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP
STORE=$TMP/reports
slug=$(basename "$(dirname "$SRC")")
oldid=$(basename "$SRC")

i=0
while [ "$i" -lt "$N" ]; do
	id=$(printf '20260101-%06d-%06x' "$i" "$i")
	ts=$(printf '2026-01-01T%02d:%02d:%02dZ' $((i / 3600 % 24)) $((i / 60 % 60)) $((i % 60)))
	d=$STORE/$slug/$id
	mkdir -p "$d"
	sed -e "s/$oldid/$id/g" -e "s/\"started_at\":\([[:space:]]*\)\"[^\"]*\"/\"started_at\":\1\"$ts\"/" \
		"$SRC/summary.json" >"$d/summary.json"
	# the same bytes in every copy: hard links (a store of 10,000 is then
	# ~0.2 GiB of summaries, not 17 GiB); gpuorch reads each as its own file
	cp -l "$SRC/samples.txt" "$SRC/report.md" "$d/"
	[ -d "$SRC/charts" ] && cp -Rl "$SRC/charts" "$d/"
	i=$((i + 1))
done
echo "store: $N runs of $slug ($(du -sh "$STORE" | cut -f1)), each a copy of $SRC (summary, samples, report, charts)"

# the site, the same again (it replaces the first), then with a history
# page per figure (--every-figure, replacing it too)
for pass in first replacing every-figure; do
	opt=
	[ "$pass" = every-figure ] && opt=--every-figure
	/usr/bin/time -f '%e %U %S %M' -o "$TMP/time" "$G" site --reports "$STORE" --out "$TMP/site" \
		--quiet $opt >"$TMP/out" 2>"$TMP/err" ||
		{ echo "bench-site: gpuorch site failed:" >&2; cat "$TMP/err" >&2; exit 1; }
	read -r s us ss kb <"$TMP/time"
	printf 'site (%s)%*s %7.2f s wall %7.2f s cpu %7.1f MiB  %4d history pages\n' "$pass" \
		$((12 - ${#pass})) "" "$s" "$(awk -v a="$us" -v b="$ss" 'BEGIN { print a + b }')" \
		"$(awk -v k="$kb" 'BEGIN { print k / 1024 }')" "$(find "$TMP/site/history" -name '*.html' ! -name index.html | wc -l)"
done
printf 'data/runs.js   %8.1f KiB (%d runs: %.0f bytes a run)\n' \
	"$(awk -v b="$(wc -c <"$TMP/site/data/runs.js")" 'BEGIN { print b / 1024 }')" "$N" \
	"$(awk -v b="$(wc -c <"$TMP/site/data/runs.js")" -v n="$N" 'BEGIN { print b / n }')"
printf 'index.html     %8.1f KiB\n' "$(awk -v b="$(wc -c <"$TMP/site/index.html")" 'BEGIN { print b / 1024 }')"
echo "whole site     $(du -sh "$TMP/site" | cut -f1) in $(find "$TMP/site" -type f | wc -l) files"
