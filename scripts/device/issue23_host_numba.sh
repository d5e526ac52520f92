#!/usr/bin/env bash
# Issue 23 on the H200 in one short device call (< 3 minutes), into $OUT:
#   1. the device-copy ceiling from a cold GPU, as the ceilings measured it before their warm-up and after it
#      (scripts/device/ceiling_clocks.py, 3 fresh processes, 5 s of idle GPU before each): ceilings.jsonl;
#   2. host-numba against host and reference-host in the same process, 5 fresh `rlperf replay` processes at
#      2^20 rows (the order rotates), no ceilings; the pairs' table by scripts/run_noise.py: noise.md;
#   3. everything else in runs.tgz.
source "$(dirname "$0")/common.sh"
R=$WORK/runs
mkdir -p "$R"
for k in 1 2 3; do
  sleep 5
  timeout 40 python3 scripts/device/ceiling_clocks.py >> "$OUT/ceilings.jsonl" 2>> "$R/ceilings.log"
  echo "ceilings $k rc=$? after ${SECONDS}s"
done
cat "$OUT/ceilings.jsonl"
ORDERS=(host,host-numba,reference-host host-numba,reference-host,host reference-host,host,host-numba)
for k in 1 2 3 4 5; do
  P=${ORDERS[$(( (k - 1) % 3 ))]}
  timeout 60 python3 -m rlperf replay --task g1_motion_tracking --sim motrix --placements "$P" --capacity-exponents 20 \
    --gpu-counts 1 --no-plots --no-ceilings --out-json "$R/run$k/results.json" > "$R/run$k.log" 2>&1
  echo "run $k ($P) rc=$? after ${SECONDS}s"
done
python3 scripts/run_noise.py "$R"/run*/results.json --out-md "$OUT/noise.md" --pair host-numba reference-host \
  --pair host-numba host --pair host reference-host > /dev/null
cat "$OUT/noise.md"
cp "$WORK/machine.txt" "$R/machine.txt"
tar czf "$OUT/runs.tgz" -C "$R" .
