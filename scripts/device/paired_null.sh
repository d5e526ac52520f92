#!/usr/bin/env bash
# Issue 23, section 5: the paired null false-alarm study of one GPU gather point, as gpu-fused and gpu-fused-bf16 were
# measured: 60 null trials of about 1.2 s of paired samples from fresh worker pairs, at factors 1.03/1.05/1.10,
# within the device call's 10 minutes. Into $OUT: power.json, power.md, log.txt, machine.txt, work.tgz.
#   PLACEMENT=gpu-compact-a16-fused PAIRED_SECONDS=1.6 bash scripts/device/paired_null.sh   (a worker pair makes 7
# calls a side: PAIRED_SECONDS must exceed 14 x one track call, 0.11 s for this point)
source "$(dirname "$0")/common.sh"
: "${PLACEMENT:?PLACEMENT must name the replay placement whose 2^20-row GPU point is studied}"
W=$WORK/null
mkdir -p "$W"
python3 -m rlperf gate-power study --repo "$PWD" --base main --target gpu-fused --null-only --blocks 1 \
  --trials-per-block 60 --paired-seconds "${PAIRED_SECONDS:-1.2}" --factors 1.03,1.05,1.10 --machine nvidia-h200x1-16vcpu-intel-xeon \
  --bench "ReplayGpuSample\.track_ms\(20, '$PLACEMENT', 1\)" --work-dir "$W/work" --out-json "$OUT/power.json" \
  --out-md "$OUT/power.md" --deadline-min "${DEADLINE_MIN:-9.0}" > "$OUT/log.txt" 2>&1
echo "study rc=$?" | tee -a "$OUT/log.txt"
cp "$WORK/machine.txt" "$OUT/machine.txt"
tar czf "$OUT/work.tgz" -C "$W" . 2>/dev/null
