#!/usr/bin/env bash
# Issue 23, 2026-12-05 (session 9): gpu-fused now copies fp32 rows with 4 warps a row (`sample_float2_p4`), and
# uva-fused(-bf16) replay one captured CUDA graph a pass. Device calls on one warm machine, into $OUT:
#   bash scripts/device/issue23_s9.sh check   (summary.txt, tests.log, ab-20.*, results-d.json, all.tgz)
#     1. GPU tests: the kernel probe's, the fused draws against their host oracle pass after pass (the split and
#        the graph included), every combination's rows, the first draw's order, the registry's, the pass probe's;
#     2. CUDA-event A/B of the whole-row kernels at 2^20 (the default launch is now the placement's own split);
#     3. the pass probe for uva-fused-bf16 (1 process): the graph replay's launch against 0.063 ms before;
#     4. 5 fresh `rlperf replay` processes at 2^20 of the changed placements (gpu-fused, uva-fused-bf16) with
#        gpu-fused-bf16 and uva-bf16 beside them, the order rotated each process;
#     5. the report's part d: the changed placements (gpu-fused, uva-fused, uva-fused-bf16) at 2^20-2^26 in one
#        fresh process with its ceilings, to replace their points in the report;
#     6. with the time left, host and host-numba against reference-host interleaved round by round
#        (replay.interleave_probe), one fresh process each, up to 5.
#   bash scripts/device/issue23_s9.sh more    (summary.txt, all.tgz)
#     the interleaved host processes up to 5 in all (HOST_DONE: how many ran before), then uva-fused-bf16 (the
#     graph) against uva-bf16 interleaved in 3 fresh processes, then gpu-fused alone at 2^24 (the transient).
# (Its planned `uva` step never ran: no machine could be started after the graph's fix. It is in issue23_s10.sh.)
source "$(dirname "$0")/common.sh"
R=$WORK/s9
mkdir -p "$R"
git rev-parse HEAD >> "$OUT/summary.txt" 2>&1
HOST_PAIR=(--placements host,host-numba --against reference-host)
ZERO_COPY_PAIR=(--placements uva-fused-bf16 --against uva-bf16 --metrics cpu_sample_then_h2d_wall)
case "${1:-}" in
  check)
    timeout 150 python3 -m pytest -q -o addopts="" -p no:cacheprovider tests/replay/test_kernel_probe.py \
      tests/replay/test_sampler.py tests/replay/test_transfer.py tests/replay/test_gpu_setup.py \
      tests/replay/test_registry.py tests/replay/test_pass_probe.py tests/replay/test_interleave_probe.py \
      tests/report/test_ncu_table.py 2>&1 | tail -15 > "$OUT/tests.log"
    log "tests: $(tail -1 "$OUT/tests.log") after $((SECONDS - START)) s"
    timeout 90 python3 scripts/device/compact_ncu.py ab --placements gpu-fused,gpu-fused-bf16 --capacity-exponent 20 \
      --rounds 5 --out "$OUT/ab-20.jsonl" > "$OUT/ab-20.md" 2> "$R/ab-20.log"
    log "ab 2^20: rc=$? after $((SECONDS - START)) s"
    timeout 60 python3 scripts/device/probe_pass.py --placement uva-fused-bf16 --out "$R/pass-uva-fused-bf16.json" \
      > "$R/pass-uva-fused-bf16.md" 2> "$R/pass-uva-fused-bf16.log"
    log "pass probe uva-fused-bf16: rc=$? after $((SECONDS - START)) s"
    cat "$R/pass-uva-fused-bf16.md" >> "$OUT/summary.txt"
    gathers=(gpu-fused gpu-fused-bf16 uva-fused-bf16 uva-bf16)
    for k in 0 1 2 3 4; do  # rotate the order by k
      order=$(printf '%s\n' "${gathers[@]:k % 4}" "${gathers[@]:0:k % 4}" | paste -sd,)
      replay "run$((k + 1))" "$order" 20 --no-ceilings
    done
    python3 scripts/run_noise.py "$R"/run*/results.json --out-md "$R/noise.md" >> "$R/noise.log" 2>&1
    cat "$R/noise.md" >> "$OUT/summary.txt"
    replay d gpu-fused,uva-fused,uva-fused-bf16 20,22,24,26
    cp "$R/d/results.json" "$OUT/results-d.json" 2>/dev/null
    interleaved host 1 5 "${HOST_PAIR[@]}"
    ;;
  more)
    interleaved host $((${HOST_DONE:-0} + 1)) 5 "${HOST_PAIR[@]}"
    interleaved uva 1 3 "${ZERO_COPY_PAIR[@]}"
    replay control24 gpu-fused 24 --no-ceilings
    ;;
  *) echo "usage: issue23_s9.sh check|more" >&2; exit 2 ;;
esac
cp "$WORK/machine.txt" "$OUT/summary.txt" "$R/"
tar czf "$OUT/all.tgz" -C "$R" .
