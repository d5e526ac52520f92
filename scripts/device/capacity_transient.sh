#!/usr/bin/env bash
# The 2^24 slowdown of the 16-byte-load gathers as a time series (scripts/device/probe_capacity_transient.py), in
# fresh processes; into $OUT: series-K.jsonl, log.txt, machine.txt. HOST_GB=62 holds a host table's worth of
# written host memory first (the sweep's part b does), FREE_FIRST_GB=62 writes and frees that much device memory
# before the table is set up (the order of every slow case so far), PROCS sets the count (default 2).
source "$(dirname "$0")/common.sh"
for k in $(seq "${PROCS:-2}"); do
  timeout 150 python3 scripts/device/probe_capacity_transient.py --host-gb "${HOST_GB:-0}" \
    --free-first-gb "${FREE_FIRST_GB:-0}" \
    --out "$OUT/series-$k.jsonl" >> "$OUT/log.txt" 2>&1
  echo "process $k rc=$? after ${SECONDS} s" | tee -a "$OUT/log.txt"
done
cp "$WORK/machine.txt" "$OUT/machine.txt"
