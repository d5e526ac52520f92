#!/usr/bin/env bash
# Issue 23 §2 and §3 on the H200 in one device call, into $OUT: the GPU parity tests of the fused compact
# kernel; 5 fresh `rlperf replay` processes at 2^20 rows, each with gpu-fused-bf16, gpu-compact,
# gpu-compact-fused, host and reference-host (host and reference-host alternate which runs first); the host
# gather probe (one factor at a time, interleaved); the Markdown tables, made by commands; everything else in
# one archive (the device hands back a few files only).
source "$(dirname "$0")/common.sh"
GPU=gpu-fused-bf16,gpu-compact,gpu-compact-fused
R=$WORK/runs
mkdir -p "$R"
cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag > "$R/thp.txt" 2>&1
lscpu > "$R/lscpu.txt" 2>&1
python3 -m pytest -q -o addopts="" -p no:cacheprovider -m gpu tests/replay/test_compact_kernel.py tests/replay/test_transfer.py \
  -k "compact" 2>&1 | tail -15 > "$OUT/gpu-tests.log"
tail -1 "$OUT/gpu-tests.log"
for k in 1 2 3 4 5; do
  if [ $((k % 2)) = 1 ]; then P=$GPU,host,reference-host; else P=$GPU,reference-host,host; fi
  timeout 75 python3 -m rlperf replay --task g1_motion_tracking --sim motrix --placements $P --capacity-exponents 20 \
    --gpu-counts 1 --no-plots --no-ceilings --out-json "$R/run$k/results.json" > "$R/run$k.log" 2>&1
  echo "run $k rc=$? after ${SECONDS}s"
done
timeout 60 python3 scripts/device/probe_host_gather.py --out "$R/probe-host.jsonl" --rounds 5 > "$R/probe-host.log" 2>&1
echo "probe rc=$? after ${SECONDS}s"
python3 scripts/run_noise.py "$R"/run*/results.json --out-md "$OUT/noise.md" --pair host reference-host > /dev/null
cat "$OUT/noise.md"
python3 scripts/device/probe_host_gather.py --summarize "$R/probe-host.jsonl" | tee "$OUT/probe-host.md"
cp "$WORK/machine.txt" "$R/machine.txt"
tar czf "$OUT/runs.tgz" -C "$R" .
