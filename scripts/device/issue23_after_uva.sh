#!/usr/bin/env bash
# Issue 23: does the 2^24 slowdown follow the uva placement? In both sweeps of 2026-12-04 part b timed gpu-fused
# at 2^24 slow (0.0735, 0.0733 ms) right after `uva` had pinned a 62.5 GB host table, while gpu-fused alone in
# fresh processes (issue23_capacity_size.sh) ran 0.0664. Fresh `rlperf replay` processes at 2^24, one GPU:
#   1. gpu-fused alone;  2. uva, then gpu-fused (part b's order);  3. uva-bf16, then gpu-fused-bf16.
# Into $OUT: after-uva.tgz (results-K.json, logs, machine.txt), summary.txt.
source "$(dirname "$0")/common.sh"
START=$SECONDS
R=$WORK/after-uva
mkdir -p "$R"
left() { echo $((${LIMIT_S:-420} - (SECONDS - START))); }
k=0
for placements in gpu-fused uva,gpu-fused uva-bf16,gpu-fused-bf16; do
  k=$((k + 1))
  [ "$(left)" -lt 40 ] && { echo "$k ($placements) not started: $(left) s left" | tee -a "$OUT/summary.txt"; continue; }
  timeout $(($(left) - 5)) python3 -m rlperf replay --task g1_motion_tracking --sim motrix --placements "$placements" \
    --capacity-exponents 24 --gpu-counts 1 --no-plots --no-ceilings --out-json "$R/results-$k.json" \
    > "$R/replay-$k.log" 2>&1
  echo "$k ($placements) rc=$? after $((SECONDS - START)) s" | tee -a "$OUT/summary.txt"
done
cp "$WORK/machine.txt" "$OUT/summary.txt" "$R/"
tar czf "$OUT/after-uva.tgz" -C "$R" .
