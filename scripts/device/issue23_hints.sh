#!/usr/bin/env bash
# Issue 23 §1 and the fp32 target, one device call (< 9.5 minutes), into $OUT:
#   1. GPU tests: the device-copy ceiling as the best of several allocations (never run on a GPU before), and
#      every checked kernel-probe variant writing the default batch (the cache hints among them);
#   2. CUDA-event A/B of the whole-row kernels' cache hints (kernel_probe.HINTS) against the default, threads a
#      block beside them, for gpu-fused (fp32, 2 % over its 0.065 ms target) and gpu-fused-bf16, 5 interleaved
#      rounds at 2^20 rows, then at 2^24 (where the 16-byte-load gathers slow down, unexplained so far);
#   3. 5 fresh `rlperf replay` processes of every rlperf GPU gather at 2^20 rows (the 7 of the bimodality fix and
#      the two fused compact ones, never run in 5 processes), and their run-to-run table (scripts/run_noise.py).
# Comes back: summary.txt, gpu-tests.log, ab-20.jsonl/.md, ab-24.jsonl/.md, noise.md, runs.tgz (results, logs).
source "$(dirname "$0")/common.sh"
START=$SECONDS
GPU_PLACEMENTS=gpu,gpu-padded,gpu-fused,gpu-fused-padded,gpu-bf16,gpu-fused-bf16,gpu-compact,gpu-compact-fused,\
gpu-compact-a16-fused
R=$WORK/runs
mkdir -p "$R"
log() { echo "$*" | tee -a "$OUT/summary.txt"; }
left() { echo $((${LIMIT_S:-560} - (SECONDS - START))); }

timeout 120 python3 -m pytest -q -o addopts="" -p no:cacheprovider -m gpu tests/measure/test_ceilings.py \
  tests/replay/test_kernel_probe.py 2>&1 | tail -15 > "$OUT/gpu-tests.log"
log "tests: $(tail -1 "$OUT/gpu-tests.log") after $((SECONDS - START)) s"

for e in 20 24; do
  timeout $(($(left) - 200)) python3 scripts/device/compact_ncu.py ab --placements gpu-fused,gpu-fused-bf16 \
    --capacity-exponent "$e" --rounds 5 --out "$OUT/ab-$e.jsonl" > "$OUT/ab-$e.md" 2> "$R/ab-$e.log"
  log "ab 2^$e: rc=$? after $((SECONDS - START)) s"
done

for k in 1 2 3 4 5; do
  [ "$(left)" -lt 40 ] && { log "run $k not started: $(left) s left"; break; }
  timeout $(($(left) - 10)) python3 -m rlperf replay --task g1_motion_tracking --sim motrix \
    --placements "$GPU_PLACEMENTS" --capacity-exponents 20 --gpu-counts 1 --no-plots --no-ceilings \
    --out-json "$R/run$k/results.json" > "$R/run$k.log" 2>&1
  log "rlperf run $k rc=$? after $((SECONDS - START)) s"
done
python3 scripts/run_noise.py "$R"/run*/results.json --out-md "$OUT/noise.md" >> "$R/noise.log" 2>&1
log "noise: rc=$?"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,clocks_throttle_reasons.active --format=csv \
  >> "$R/machine-after.txt" 2>&1
cp "$WORK/machine.txt" "$R/"
cp "$OUT/summary.txt" "$R/"
tar czf "$OUT/runs.tgz" -C "$R" .
