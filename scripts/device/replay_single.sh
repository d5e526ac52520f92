#!/usr/bin/env bash
# Section 4 of issue 23: the single-GPU replay sweep in one device call, in two rlperf processes so that a
# slow large-capacity half cannot take the rest with it: 2^20, 2^22, 2^26, 2^28, 2^30 first, then 2^24 (the
# host tables of 31-62 GB). Each writes its results JSON straight into $OUT; the report merges them.
source "$(dirname "$0")/common.sh"
START=$SECONDS
LIMIT=${LIMIT_S:-560}
for part in "a 20,22,26,28,30" "b 24"; do
  set -- $part
  left=$((LIMIT - (SECONDS - START)))
  timeout "$left" python3 -m rlperf replay --task g1_motion_tracking --sim motrix --capacity-exponents "$2" \
    --gpu-counts 1 --no-plots --out-json "$WORK/$1/results.json" > "$WORK/replay-$1.log" 2>&1
  echo "part $1 ($2) rc=$? after $((SECONDS - START)) s"
  cp "$WORK/$1/results.json" "$OUT/results-$1.json" 2>/dev/null
done
cp "$WORK/machine.txt" "$OUT/machine.txt"
tar czf "$OUT/logs.tgz" -C "$WORK" machine.txt replay-a.log replay-b.log
