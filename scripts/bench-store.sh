#!/bin/sh
# bench-store.sh -- time and memory of `gpuorch runs`, `runs --limit 1` and
# `history` over a store of N runs (default 1000), with and without the
# per-run summaries (report/runsum.h).
#
#   scripts/bench-store.sh [N [RUN_DIR]]
#
# The store is N copies of one committed run (RUN_DIR, default the largest
# attention-tools run of tests/fixtures/reports: 0.37 MiB of run.json, 13 timed
# steps with 22,447 samples as plain samples_us arrays; 0.42 MiB with more
# correctness trials before tests/tools/shrink-fixtures.sh, so logs of
# earlier measurements are not comparable), each with its own run id and start time, in a
# scratch directory removed at the end. Each command runs three times (once
# without summaries); the line shows the slowest wall time, the most CPU
# time (user + system: what the command itself cost, whatever else the
# machine was doing) and the largest peak RSS (GNU time). BENCH_FULL=0 skips
# the slow pass without summaries.
# Prints one line per measurement; exits 1 when a command fails.
set -eu

N=${1:-1000}
SRC=${2:-}
G=${GPUORCH:-build/gpuorch}
[ -x "$G" ] || { echo "bench-store: no $G (run make)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-store: needs GNU time (/usr/bin/time)" >&2; exit 2; }
if [ -z "$SRC" ]; then
	SRC=$(ls -S tests/fixtures/reports/attention-tools/*/run.json | head -1)
	SRC=${SRC%/run.json}
fi
[ -f "$SRC/run.json" ] || { echo "bench-store: no run.json in '$SRC'" >&2; exit 2; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench-store.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP
STORE=$TMP/reports
slug=$(basename "$(dirname "$SRC")")
oldid=$(basename "$SRC")
exp=$(jq -r .experiment.name "$SRC/run.json")
# history writes REPORTS/<experiment's folder>/history.md: the copies go in a
# folder of that name, so RUN_DIR must sit in one (reports/EXP/RUN)
[ "$slug" = "$exp" ] || {
	echo "bench-store: '$SRC' is in folder '$slug', not in one named after its experiment '$exp':" \
		"copy it to DIR/$exp/$oldid and pass that" >&2
	exit 2
}

i=0
while [ "$i" -lt "$N" ]; do
	id=$(printf '20260101-%06d-%06x' "$i" "$i")
	ts=$(printf '2026-01-01T%02d:%02d:%02dZ' $((i / 3600 % 24)) $((i / 60 % 60)) $((i % 60)))
	mkdir -p "$STORE/$slug/$id"
	sed -e "s/$oldid/$id/g" -e "s/\"started_at\":\([[:space:]]*\)\"[^\"]*\"/\"started_at\":\1\"$ts\"/" \
		"$SRC/run.json" >"$STORE/$slug/$id/run.json"
	i=$((i + 1))
done
echo "store: $N runs of $exp ($(du -sh "$STORE" | cut -f1)), each a copy of $SRC"

measure() {
	label=$1
	shift
	worst_s=0 worst_cpu=0 worst_kb=0 k=0 reps=$REPS
	while [ "$k" -lt "$reps" ]; do
		/usr/bin/time -f '%e %U %S %M' -o "$TMP/time" "$@" >"$TMP/out" 2>"$TMP/err" ||
			{ echo "bench-store: '$*' failed:" >&2; cat "$TMP/err" >&2; exit 1; }
		read -r s us ss kb <"$TMP/time"
		worst_s=$(awk -v a="$worst_s" -v b="$s" 'BEGIN { print (b > a) ? b : a }')
		worst_cpu=$(awk -v a="$worst_cpu" -v b="$us" -v c="$ss" 'BEGIN { print (b + c > a) ? b + c : a }')
		[ "$kb" -gt "$worst_kb" ] && worst_kb=$kb
		k=$((k + 1))
	done
	printf '%-24s %7.2f s wall %7.2f s cpu %7.1f MiB\n' "$label" "$worst_s" "$worst_cpu" \
		"$(awk -v k="$worst_kb" 'BEGIN { print k / 1024 }')"
}

PHASES='"run.json only" "with summaries"'
[ "${BENCH_FULL:-1}" = 0 ] && PHASES='"with summaries"'
eval "set -- $PHASES"
for phase in "$@"; do
	REPS=1   # reading every run.json is slow: once is enough to see it
	if [ "$phase" = "with summaries" ]; then
		REPS=3
		/usr/bin/time -f '%e %U %S %M' -o "$TMP/time" "$G" summarize --reports "$STORE" >/dev/null
		read -r s us ss kb <"$TMP/time"
		printf '%-24s %7.2f s wall %7.2f s cpu %7.1f MiB (once)\n' "summarize" "$s" \
			"$(awk -v a="$us" -v b="$ss" 'BEGIN { print a + b }')" "$(awk -v k="$kb" 'BEGIN { print k / 1024 }')"
	fi
	echo "-- $phase"
	measure "runs" "$G" runs --reports "$STORE"
	measure "runs --limit 1" "$G" runs --limit 1 --reports "$STORE"
	measure "history" "$G" history "$exp" --reports "$STORE"
done
