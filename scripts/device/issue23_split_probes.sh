#!/usr/bin/env bash
# Issue 23, one device call (< 8 minutes), into $OUT:
#   1. the GPU tests of replay and measure (they cover measure.cupy_stream, moved last session without a GPU run,
#      and the pass probe's CUDA modes): gpu-tests.log;
#   2. the pass probe (scripts/device/probe_pass.py, rlperf.replay.pass_probe) in 3 fresh processes each for `host`
#      (CPU sample+H2D read 0.7-1.3 ms above its parts) and `uva-bf16` (wall 1.34-1.57 ms against 1.24 ms of device
#      time), 2^20 rows, 16 threads, every mode interleaved;
#   3. the batch-scaling probe (scripts/device/probe_batch_scaling.py, rlperf.replay.scaling_probe) in 2 fresh
#      processes: gpu-fused and gpu-fused-bf16 against a device copy of the same bytes at 4K-128K rows, each fitted
#      as bytes / rate + a fixed cost a launch (is fp32's 0.90 of the copy a rate or a launch's ramp and tail?);
#   4. summary.txt and probes.tgz (every record, the Markdown of each, logs, machine.txt, the commit).
source "$(dirname "$0")/common.sh"
START=$SECONDS
R=$WORK/pass
mkdir -p "$R"
log() { echo "$*" | tee -a "$OUT/summary.txt"; }
git rev-parse HEAD > "$R/commit.txt" 2>&1
timeout 200 python3 -m pytest -q -m gpu tests/replay tests/measure -p no:cacheprovider > "$R/gpu-tests.log" 2>&1
log "gpu tests: rc=$? after $((SECONDS - START)) s: $(tail -1 "$R/gpu-tests.log")"
for k in 1 2 3; do
  for placement in host uva-bf16; do
    timeout 60 python3 scripts/device/probe_pass.py --placement "$placement" --out "$R/$placement-$k.json" \
      > "$R/$placement-$k.md" 2> "$R/$placement-$k.log"
    log "$placement $k: rc=$? after $((SECONDS - START)) s"
  done
done
for placement in host uva-bf16; do
  python3 scripts/device/probe_pass.py --summarize "$R/$placement"-*.json --out-md "$R/$placement.md"
done
cat "$R/host.md" "$R/uva-bf16.md" >> "$OUT/summary.txt"
for k in 1 2; do
  timeout 120 python3 scripts/device/probe_batch_scaling.py --out "$R/scaling-$k.json" > "$R/scaling-$k.md" \
    2> "$R/scaling-$k.log"
  log "scaling $k: rc=$? after $((SECONDS - START)) s"
done
python3 scripts/device/probe_batch_scaling.py --summarize "$R"/scaling-*.json --out-md "$R/scaling.md"
cat "$R/scaling.md" >> "$OUT/summary.txt"
cp "$WORK/machine.txt" "$R/"
cp "$OUT/summary.txt" "$R/"
tar czf "$OUT/probes.tgz" -C "$R" .
