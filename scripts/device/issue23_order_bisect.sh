#!/usr/bin/env bash
# Issue 23, the next step on the 2^24 slowdown: the sweep's part-b order, replayed in one `rlperf replay` process,
# made gpu-fused slow at 2^24 (0.0734 ms against 0.0664 fresh; 2026-12-04-capacity-2p24-transient/order/). Bisect it,
# each in a fresh process at 2^24, one GPU, no ceilings:
#   1. host,host-pageable,host-pipelined,gpu-fused   (the host placements' 62 GB pageable tables and 16 threads)
#   2. gpu,gpu-padded,gpu-fused                      (the GPU tables set up and released right before)
#   3. the whole prefix again (the control: it should be slow)
# Into $OUT: bisect.tgz (results-K.json, replay-K.log, machine.txt, nvidia-smi before and after each), summary.txt.
source "$(dirname "$0")/common.sh"
START=$SECONDS
R=$WORK/bisect
mkdir -p "$R"
left() { echo $((${LIMIT_S:-560} - (SECONDS - START))); }
smi() { nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv,noheader >> "$R/smi-$1.txt" 2>&1; }
k=0
for placements in host,host-pageable,host-pipelined,gpu-fused gpu,gpu-padded,gpu-fused \
                  host,host-pageable,host-pipelined,uva,gpu,gpu-padded,gpu-fused; do
  k=$((k + 1))
  [ "$(left)" -lt 60 ] && { echo "$k ($placements) not started: $(left) s left" | tee -a "$OUT/summary.txt"; continue; }
  smi "$k"
  timeout $(($(left) - 5)) python3 -m rlperf replay --task g1_motion_tracking --sim motrix --placements "$placements" \
    --capacity-exponents 24 --gpu-counts 1 --no-plots --no-ceilings --out-json "$R/results-$k.json" \
    > "$R/replay-$k.log" 2>&1
  echo "$k ($placements) rc=$? after $((SECONDS - START)) s" | tee -a "$OUT/summary.txt"
  smi "$k"
done
cp "$WORK/machine.txt" "$OUT/summary.txt" "$R/"
tar czf "$OUT/bisect.tgz" -C "$R" .
