#!/usr/bin/env bash
# Issue 23, one device call (< 9.5 minutes), into $OUT:
#   1. the device-copy ceiling's timing against the gathers' (probe_copy_ceiling.py): copy_ once per window (the
#      ceiling's method) vs 10 held (the gathers' method), an SM copy kernel, and gpu-fused(-bf16) beside them;
#   2. the uva gather's row stride and host memory kind (probe_uva_layout.py), in 2 fresh processes;
#   3. the 2^24 slowdown after a freed 62 GB allocation (probe_capacity_transient.py --free-first-gb 62), in 2 fresh
#      processes with torch's default allocator, 1 with expandable segments (cuMemCreate, 2 MiB granules) between them.
# Comes back: summary.txt and probes.tgz (every jsonl, md and log, machine.txt).
source "$(dirname "$0")/common.sh"
START=$SECONDS
R=$WORK/probes
mkdir -p "$R"
log() { echo "$*" | tee -a "$OUT/summary.txt"; }
left() { echo $((${LIMIT_S:-570} - (SECONDS - START))); }
timeout 150 python3 scripts/device/probe_copy_ceiling.py --out "$R/copy.jsonl" > "$R/copy.md" 2> "$R/copy.log"
log "copy ceiling: rc=$? after $((SECONDS - START)) s"
for k in 1 2; do
  timeout 120 python3 scripts/device/probe_uva_layout.py --out "$R/uva-$k.jsonl" > "$R/uva-$k.md" 2> "$R/uva-$k.log"
  log "uva $k: rc=$? after $((SECONDS - START)) s"
done
for k in default-1 expandable default-2; do
  [ "$(left)" -lt 100 ] && { log "free-first $k not started: $(left) s left"; continue; }
  conf=""; [ "$k" = expandable ] && conf=expandable_segments:True
  PYTORCH_CUDA_ALLOC_CONF=$conf timeout $(($(left) - 10)) python3 scripts/device/probe_capacity_transient.py \
    --free-first-gb 62 --out "$R/free-first-$k.jsonl" > "$R/free-first-$k.log" 2>&1
  log "free-first $k: rc=$? after $((SECONDS - START)) s"
done
cp "$WORK/machine.txt" "$R/"
cp "$OUT/summary.txt" "$R/"
tar czf "$OUT/probes.tgz" -C "$R" .
