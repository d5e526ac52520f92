#!/usr/bin/env bash
# Issue 23, 2026-12-05 (session 9): gpu-fused now copies fp32 rows with 4 warps a row (`sample_float2_p4`), and
# uva-fused(-bf16) replay one captured CUDA graph a pass. Two device calls on one warm machine, into $OUT:
#   bash scripts/device/issue23_s9.sh check   (summary.txt, tests.log, ab-20.*, all.tgz, results-a.json)
#     1. GPU tests: the kernel probe's, the fused draws against their host oracle pass after pass (the split and
#        the graph included), every combination's rows, the first draw's order, the registry's, the pass probe's;
#     2. CUDA-event A/B of the whole-row kernels at 2^20 (the default launch is now the placement's own split);
#     3. the pass probe for uva-fused-bf16 (1 process): the graph replay's launch against 0.063 ms before;
#     4. 5 fresh `rlperf replay` processes at 2^20 of every fused GPU gather and the zero-copy pair, the order
#        rotated each process (agreement within 5 %, and uva-fused-bf16's wall against 1.4 ms);
#     5. the report's sweep, part a: every placement at 2^20, 2^22, 2^26, 2^28, 2^30 (replay_single.sh's split).
#   bash scripts/device/issue23_s9.sh sweep24 (summary.txt, results-b.json, all.tgz)
#     the sweep's part b, 2^24, then with the time left one fresh process of gpu-fused alone at 2^24 (control).
#   bash scripts/device/issue23_s9.sh interleave (summary.txt, all.tgz)
#     host and host-numba against reference-host, interleaved round by round (replay.interleave_probe), in 5 fresh
#     processes; then uva-fused-bf16 (the graph) against uva-bf16 the same way, in 3.
source "$(dirname "$0")/common.sh"
R=$WORK/s9
mkdir -p "$R"
replay() {  # replay NAME PLACEMENTS EXPONENTS [more flags]; PLACEMENTS "all": every placement
  local name=$1 placements=$2 exps=$3 which=()
  shift 3
  [ "$placements" = all ] || which=(--placements "$placements")
  [ "$(left)" -lt 45 ] && { log "$name not started: $(left) s left"; return; }
  timeout $(($(left) - 10)) python3 -m rlperf replay --task g1_motion_tracking --sim motrix "${which[@]}" \
    --capacity-exponents "$exps" --gpu-counts 1 --no-plots --out-json "$R/$name/results.json" "$@" > "$R/$name.log" 2>&1
  log "$name ($placements at 2^$exps) rc=$? after $((SECONDS - START)) s"
}
git rev-parse HEAD >> "$OUT/summary.txt" 2>&1
case "${1:-}" in
  check)
    timeout 150 python3 -m pytest -q -o addopts="" -p no:cacheprovider tests/replay/test_kernel_probe.py \
      tests/replay/test_sampler.py tests/replay/test_transfer.py tests/replay/test_gpu_setup.py \
      tests/replay/test_registry.py tests/replay/test_pass_probe.py tests/report/test_ncu_table.py 2>&1 | tail -15 \
      > "$OUT/tests.log"
    log "tests: $(tail -1 "$OUT/tests.log") after $((SECONDS - START)) s"
    timeout 90 python3 scripts/device/compact_ncu.py ab --placements gpu-fused,gpu-fused-bf16 --capacity-exponent 20 \
      --rounds 5 --out "$OUT/ab-20.jsonl" > "$OUT/ab-20.md" 2> "$R/ab-20.log"
    log "ab 2^20: rc=$? after $((SECONDS - START)) s"
    timeout 60 python3 scripts/device/probe_pass.py --placement uva-fused-bf16 --out "$R/pass-uva-fused-bf16.json" \
      > "$R/pass-uva-fused-bf16.md" 2> "$R/pass-uva-fused-bf16.log"
    log "pass probe uva-fused-bf16: rc=$? after $((SECONDS - START)) s"
    cat "$R/pass-uva-fused-bf16.md" >> "$OUT/summary.txt"
    gathers=(gpu-fused gpu-fused-padded gpu-fused-bf16 gpu-compact-fused uva-fused-bf16 uva-bf16)
    for k in 0 1 2 3 4; do  # rotate the order by k
      order=$(printf '%s\n' "${gathers[@]:k}" "${gathers[@]:0:k}" | paste -sd,)
      replay "run$((k + 1))" "$order" 20 --no-ceilings
    done
    python3 scripts/run_noise.py "$R"/run*/results.json --out-md "$R/noise.md" >> "$R/noise.log" 2>&1
    cat "$R/noise.md" >> "$OUT/summary.txt"
    # a graph capture that failed its tests would crash the whole sweep: then part a runs without the two
    # placements that capture (and says so)
    every=all
    if grep -q 'FAILED.*uva-fused' "$OUT/tests.log"; then
      every=$(python3 -c "from rlperf.replay.cases import DEFAULT_PLACEMENTS as d; \
print(','.join(p for p in d if not p.startswith('uva-fused')))")
      log "uva-fused tests failed: part a without uva-fused, uva-fused-bf16"
    fi
    replay a "$every" 20,22,26,28,30
    cp "$R/a/results.json" "$OUT/results-a.json" 2>/dev/null
    ;;
  sweep24)
    replay b all 24
    cp "$R/b/results.json" "$OUT/results-b.json" 2>/dev/null
    replay control24 gpu-fused 24 --no-ceilings
    ;;
  interleave)
    for k in 1 2 3 4 5; do
      [ "$(left)" -lt 60 ] && { log "host process $k not started: $(left) s left"; break; }
      timeout $(($(left) - 10)) python3 scripts/device/probe_interleaved.py --placements host,host-numba \
        --against reference-host --out "$R/host-$k.json" > "$R/host-$k.md" 2> "$R/host-$k.log"
      log "interleaved host process $k: rc=$? after $((SECONDS - START)) s"
    done
    python3 scripts/device/probe_interleaved.py --summarize "$R"/host-*.json --out-md "$R/host.md"
    cat "$R/host.md" >> "$OUT/summary.txt"
    for k in 1 2 3; do
      [ "$(left)" -lt 60 ] && { log "zero-copy process $k not started: $(left) s left"; break; }
      timeout $(($(left) - 10)) python3 scripts/device/probe_interleaved.py --placements uva-fused-bf16 \
        --against uva-bf16 --metrics cpu_sample_then_h2d_wall --out "$R/uva-$k.json" > "$R/uva-$k.md" \
        2> "$R/uva-$k.log"
      log "interleaved zero-copy process $k: rc=$? after $((SECONDS - START)) s"
    done
    python3 scripts/device/probe_interleaved.py --summarize "$R"/uva-*.json --out-md "$R/uva.md"
    cat "$R/uva.md" >> "$OUT/summary.txt"
    ;;
  *) echo "usage: issue23_s9.sh check|sweep24|interleave" >&2; exit 2 ;;
esac
cp "$WORK/machine.txt" "$OUT/summary.txt" "$R/"
tar czf "$OUT/all.tgz" -C "$R" .
