#!/usr/bin/env bash
# Issue 23 §2: why the fused compact gather trails the bf16 gather at 2^20 rows (1.65x with the byte-by-byte plan,
# 1.50x with the merge plan, H200, 2026-12-04; docs/replay-compact-kernel.md). One
# device call (< 5 minutes), into $OUT:
#   1. the GPU tests of the compact kernel, of the kernel probe (launch variants give the same batch) and of the
#      kernel over compact-a16 rows;
#   2. Nsight Compute over gpu-fused-bf16, gpu-compact-fused and gpu-fused (fp32): 3 launches each after 5
#      warm-up ones (`--profile-from-start off`; the driver brackets them with cudaProfilerStart/Stop), clocks
#      left to the GPU, caches flushed before each replay pass (each pass replays the same rows); metrics and
#      sections this ncu lacks are dropped (logged); if the metric list is refused, the sections without it; if
#      the counters are refused (ERR_NVGPUCTRPERM), the log says so and step 3 still runs;
#   3. CUDA-event A/B, one factor at a time (threads a block; for the compact kernel the successor's distance
#      and a plan without its straddling vectors or its misaligned path), 5 interleaved rounds.
# Each kernel's alternative (first measured by this script on 2026-12-04) is profiled in step 2 after its
# default and is a checked row of step 3 (its batch must equal the default's byte for byte):
#   - gpu-compact-fused mixed=bytes (sample_compact): the two straddling vectors byte by byte, the default until
#     the merge plan (sample_compact_merge: whole 16-byte loads and byte masks) measured faster; the bound of
#     both is the plan=no-mixed row;
#   - gpu-fused vec=int4 (sample_float2_wide): the fp32 row with int4 loads and an 8-byte head or tail.
# And one other layout (not measured yet), profiled and timed the same way:
#   - gpu-compact-fused layout=a16 (sample_compact_a16: the merge kernel's code under its own name) over
#     compact-a16 rows, whose fields are laid out so that no batch vector straddles two source runs and every load
#     is aligned (a few bytes of padding a row). Its batch differs from the default's by padding, so its check is
#     field by field (the default storage's transitions copied into it; fields equal, padding zero, same indices).
#     Judged against 1.2x gpu-fused-bf16 (docs/replay-compact-kernel.md, "The aligned layout").
# Comes back: gpu-tests.log, summary.txt, ncu-raw.csv, ncu.md, ab.jsonl, ab.md and all.tgz (the ncu report,
# the details page as CSV and text, logs, machine identity).
source "$(dirname "$0")/common.sh"
W=$WORK/ncu
mkdir -p "$W"
LABELS=(--label sample_int4=gpu-fused-bf16 --label sample_compact_merge=gpu-compact-fused --label sample_float2_p4=gpu-fused
        --label sample_compact="gpu-compact-fused mixed=bytes" --label sample_float2_wide="gpu-fused vec=int4"
        --label sample_compact_a16="gpu-compact-fused layout=a16")
log() { echo "$*" | tee -a "$OUT/summary.txt"; }

timeout 60 python3 -m pytest -q -o addopts="" -p no:cacheprovider -m gpu tests/replay/test_compact_kernel.py \
  tests/replay/test_kernel_probe.py tests/replay/test_compact_a16.py 2>&1 | tail -15 > "$OUT/gpu-tests.log"
log "tests: $(tail -1 "$OUT/gpu-tests.log") after ${SECONDS}s"

NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
log "ncu: ${NCU:-not found} $("${NCU:-false}" --version 2>/dev/null | tail -1)"
SECTIONS=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables
          --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats)
METRICS=dram__bytes_read.sum,dram__bytes_write.sum,dram__bytes.sum.per_second,lts__t_sector_hit_rate.pct,\
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,\
lts__t_sectors_srcunit_tex_op_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active,\
launch__registers_per_thread,smsp__inst_executed.sum,gpu__time_duration.sum,sm__cycles_elapsed.max,\
gpc__cycles_elapsed.avg.per_second
[ -n "$NCU" ] && timeout 20 "$NCU" --query-metrics > "$W/query-metrics.txt" 2>&1
if grep -q "^dram__bytes" "$W/query-metrics.txt"; then  # keep the metrics this ncu knows (one unknown fails all)
  KEEP=""
  for m in ${METRICS//,/ }; do
    if grep -qE "^${m%%.*}[[:space:]]" "$W/query-metrics.txt"; then KEEP=$KEEP,$m; else log "ncu lacks $m"; fi
  done
  METRICS=${KEEP#,}
fi
[ -n "$NCU" ] && timeout 20 "$NCU" --list-sections > "$W/list-sections.txt" 2>&1
if grep -qw SpeedOfLight "$W/list-sections.txt"; then  # likewise the sections
  KEEP=()
  for ((i = 1; i < ${#SECTIONS[@]}; i += 2)); do
    s=${SECTIONS[i]}
    if grep -qw "$s" "$W/list-sections.txt"; then KEEP+=(--section "$s"); else log "ncu lacks section $s"; fi
  done
  SECTIONS=("${KEEP[@]}")
fi
profile() {  # $1: timeout s, rest: extra ncu flags
  local t=$1; shift
  timeout "$t" "$NCU" --profile-from-start off --kernel-name regex:'sample_(compact|int4|float2)' \
    --clock-control none --cache-control all "${SECTIONS[@]}" "$@" -f -o "$W/ncu" \
    python3 scripts/device/compact_ncu.py profile --warmup 5 --launches 3 --alternatives >> "$W/ncu.log" 2>&1
}
if [ -n "$NCU" ]; then
  profile 120 --metrics "$METRICS"
  rc=$?
  log "ncu with the metric list: rc=$rc after ${SECONDS}s"
  if grep -q ERR_NVGPUCTRPERM "$W/ncu.log"; then
    log "ncu: performance counters refused (ERR_NVGPUCTRPERM); only the A/B timings below answer"
  elif [ ! -s "$W/ncu.ncu-rep" ] && [ "$SECONDS" -lt 120 ]; then
    echo "=== retry: sections only ===" >> "$W/ncu.log"
    profile 80
    log "ncu, sections only: rc=$? after ${SECONDS}s"
  fi
  if [ -s "$W/ncu.ncu-rep" ]; then
    "$NCU" --import "$W/ncu.ncu-rep" --csv --page raw --print-units base > "$OUT/ncu-raw.csv" 2>> "$W/ncu.log"
    "$NCU" --import "$W/ncu.ncu-rep" --csv --page details --print-units base > "$W/ncu-details.csv" 2>> "$W/ncu.log"
    "$NCU" --import "$W/ncu.ncu-rep" --page details > "$W/ncu-details.txt" 2>> "$W/ncu.log"
    python3 scripts/ncu_table.py "$OUT/ncu-raw.csv" "${LABELS[@]}" --sample-rows 32768 > "$OUT/ncu.md" 2>> "$W/ncu.log"
    cat "$OUT/ncu.md"
  fi
  tail -5 "$W/ncu.log" | tee -a "$OUT/summary.txt"
fi

timeout 70 python3 scripts/device/compact_ncu.py ab --rounds 5 --out "$OUT/ab.jsonl" > "$OUT/ab.md" 2> "$W/ab.log"
log "ab: rc=$? after ${SECONDS}s"
cat "$OUT/ab.md"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,clocks_throttle_reasons.active --format=csv \
  >> "$W/machine-after.txt" 2>&1
cp "$WORK/machine.txt" "$W/"
tar czf "$OUT/all.tgz" -C "$W" .
