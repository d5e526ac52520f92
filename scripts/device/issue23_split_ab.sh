#!/usr/bin/env bash
# Issue 23, the fp32 target (0.0661 ms against <= 0.065), one device call (< 5 minutes), into $OUT:
#   1. the kernel probe's tests, CPU and GPU (every checked variant, the new row splits among them, must write the
#      default launch's batch byte for byte): tests.log;
#   2. CUDA-event A/B of the whole-row kernels at 2^20 rows, 5 interleaved rounds, for gpu-fused and
#      gpu-fused-bf16: the default against each row split into 2 or 4 warps (kernel_probe.PARTS: shorter work units,
#      a shorter launch tail), beside the cache hints and thread counts measured before: ab-20.jsonl/.md.
# With the batch-scaling probe's fit (issue23_split_probes.sh) it tells a launch's tail from the DRAM rate.
source "$(dirname "$0")/common.sh"
git rev-parse HEAD >> "$OUT/summary.txt" 2>&1
timeout 150 python3 -m pytest -q -o addopts="" -p no:cacheprovider tests/replay/test_kernel_probe.py 2>&1 \
  | tail -15 > "$OUT/tests.log"
log "tests: $(tail -1 "$OUT/tests.log") after $((SECONDS - START)) s"
timeout 200 python3 scripts/device/compact_ncu.py ab --placements gpu-fused,gpu-fused-bf16 --capacity-exponent 20 \
  --rounds 5 --out "$OUT/ab-20.jsonl" > "$OUT/ab-20.md" 2> "$OUT/ab-20.log"
log "ab 2^20: rc=$? after $((SECONDS - START)) s"
cat "$OUT/ab-20.md" >> "$OUT/summary.txt"
cp "$WORK/machine.txt" "$OUT/"
