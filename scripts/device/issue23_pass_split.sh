#!/usr/bin/env bash
# Issue 23, one device call (< 6 minutes), into $OUT:
#   1. the GPU tests of replay and measure (they cover measure.cupy_stream, moved last session without a GPU run,
#      and the pass probe's CUDA modes): gpu-tests.log;
#   2. the pass probe (scripts/device/probe_pass.py, rlperf.replay.pass_probe) in 3 fresh processes each for `host`
#      (CPU sample+H2D read 0.7-1.3 ms above its parts) and `uva-bf16` (wall 1.34-1.57 ms against 1.24 ms of device
#      time), 2^20 rows, 16 threads, every mode interleaved;
#   3. summary.txt and pass.tgz (every record, the Markdown of each family, logs, machine.txt, the commit).
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
cp "$WORK/machine.txt" "$R/"
cp "$OUT/summary.txt" "$R/"
tar czf "$OUT/pass.tgz" -C "$R" .
