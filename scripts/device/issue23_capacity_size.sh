#!/usr/bin/env bash
# Issue 23: is the 2^24 slowdown the table's size? gpu-fused's fp32 table at 2^24 rows (62 GB) ran slow in both
# sweeps of 2026-12-04 (0.0735, 0.0733 ms) while gpu-fused-bf16 at 2^26 (124 GB) ran fast. Fresh processes, each
# one fused table timed 8 s from set-up (probe_capacity_transient.py --fresh-only), one after another:
# gpu-fused 2^24 (62 GB) x2, gpu-fused 2^23 (31 GB), gpu-fused-bf16 2^25 (62 GB) x2, gpu-fused-bf16 2^24 (31 GB).
# Into $OUT: sizes.tgz (series-*.jsonl, log.txt, machine.txt), summary.txt.
source "$(dirname "$0")/common.sh"
START=$SECONDS
R=$WORK/sizes
mkdir -p "$R"
left() { echo $((${LIMIT_S:-500} - (SECONDS - START))); }
for case in "gpu-fused 24 1" "gpu-fused 23 1" "gpu-fused-bf16 25 1" "gpu-fused 24 2" "gpu-fused-bf16 25 2" \
            "gpu-fused-bf16 24 1"; do
  set -- $case
  [ "$(left)" -lt 60 ] && { echo "$1 2^$2 #$3 not started: $(left) s left" | tee -a "$OUT/summary.txt"; continue; }
  timeout $(($(left) - 5)) python3 scripts/device/probe_capacity_transient.py --placement "$1" --exponent "$2" \
    --fresh-only --out "$R/series-$1-$2-$3.jsonl" >> "$R/log.txt" 2>&1
  echo "$1 2^$2 #$3 rc=$? after $((SECONDS - START)) s" | tee -a "$OUT/summary.txt"
done
cp "$WORK/machine.txt" "$OUT/summary.txt" "$R/"
tar czf "$OUT/sizes.tgz" -C "$R" .
