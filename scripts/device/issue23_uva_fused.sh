#!/usr/bin/env bash
# Issue 23, uva-bf16 (wall 1.42-1.48 ms against <= 1.4) and the fp32 kernel, one device call (< 9.5 minutes), into
# $OUT (summary.txt, tests.log, ab-20.*, all.tgz):
#   1. tests: the kernel probe's (CPU and GPU), every placement and combination on the GPU (uva-fused and
#      uva-fused-bf16 among them: the rows they return are the rows written), the registry's;
#   2. CUDA-event A/B of the whole-row kernels at 2^20 rows, 5 interleaved rounds: rows split into 2 or 4 warps,
#      now with a P-th of the registers (kernel_probe.PARTS), and the unsplit row in half the registers
#      (kernel_probe.UNROLLS), beside the rest; the registers a thread of each kernel;
#   3. the pass probe for uva-fused-bf16 (1 process): its device time held and unheld, one launch a pass;
#   4. 3 fresh `rlperf replay` processes at 2^20 rows of uva-bf16 and uva-fused-bf16 (then uva and uva-fused), the
#      order reversed every other process;
#   5. the sweep of the two new placements for the report: 2^20, 2^22, 2^24, 2^26 (2^26 refused by the host memory
#      guard, with the bytes), with ceilings;
#   6. with the time left, the 2^24 slowdown's bisection, next step (2026-12-05: the host placements then gpu-fused,
#      and gpu, gpu-padded then gpu-fused, were fast; the whole prefix was slow): the host placements and uva, then
#      gpu-fused; the host placements, gpu and gpu-padded, then gpu-fused.
source "$(dirname "$0")/common.sh"
R=$WORK/uva
mkdir -p "$R"
git rev-parse HEAD >> "$OUT/summary.txt" 2>&1
timeout 150 python3 -m pytest -q -o addopts="" -p no:cacheprovider tests/replay/test_kernel_probe.py \
  tests/replay/test_registry.py tests/replay/test_transfer.py tests/report/test_ncu_table.py 2>&1 | tail -15 \
  > "$OUT/tests.log"
log "tests: $(tail -1 "$OUT/tests.log") after $((SECONDS - START)) s"
timeout 120 python3 scripts/device/compact_ncu.py ab --placements gpu-fused,gpu-fused-bf16 --capacity-exponent 20 \
  --rounds 5 --out "$OUT/ab-20.jsonl" > "$OUT/ab-20.md" 2> "$R/ab-20.log"
log "ab 2^20: rc=$? after $((SECONDS - START)) s"
timeout 60 python3 scripts/device/probe_pass.py --placement uva-fused-bf16 --out "$R/pass-uva-fused-bf16.json" \
  > "$R/pass-uva-fused-bf16.md" 2> "$R/pass-uva-fused-bf16.log"
log "pass probe uva-fused-bf16: rc=$? after $((SECONDS - START)) s"
cat "$R/pass-uva-fused-bf16.md" >> "$OUT/summary.txt"
for k in 1 2 3; do
  order=uva-bf16,uva-fused-bf16,uva,uva-fused
  [ $((k % 2)) = 0 ] && order=uva-fused-bf16,uva-bf16,uva-fused,uva
  replay "run$k" "$order" 20 --no-ceilings
done
python3 scripts/run_noise.py "$R"/run*/results.json --out-md "$R/noise.md" >> "$R/noise.log" 2>&1
cat "$R/noise.md" >> "$OUT/summary.txt"
replay sweep uva-fused,uva-fused-bf16 20,22,24,26
replay bisect4 host,host-pageable,host-pipelined,uva,gpu-fused 24 --no-ceilings
replay bisect5 host,host-pageable,host-pipelined,gpu,gpu-padded,gpu-fused 24 --no-ceilings
cp "$WORK/machine.txt" "$OUT/summary.txt" "$R/"
tar czf "$OUT/all.tgz" -C "$R" .
