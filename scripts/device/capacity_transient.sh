#!/usr/bin/env bash
# The 2^24 slowdown of the 16-byte-load gathers as a time series (scripts/device/probe_capacity_transient.py), in
# two fresh processes; into $OUT: series-1.jsonl, series-2.jsonl, log.txt, machine.txt.
source "$(dirname "$0")/common.sh"
for k in 1 2; do
  timeout 150 python3 scripts/device/probe_capacity_transient.py --out "$OUT/series-$k.jsonl" >> "$OUT/log.txt" 2>&1
  echo "process $k rc=$? after ${SECONDS} s" | tee -a "$OUT/log.txt"
done
cp "$WORK/machine.txt" "$OUT/machine.txt"
