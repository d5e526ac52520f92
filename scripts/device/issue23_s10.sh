#!/usr/bin/env bash
# Issue 23, planned 2026-12-05 (session 10, no machine lent): what the next GPU session runs. Into $OUT:
#   bash scripts/device/issue23_s10.sh host   (summary.txt, gather.md, all.tgz; about 2 minutes)
#     Why host-numba's 10 % from the gather probe is gone in the placement (docs/replay-host-vs-reference.md):
#     1. the gather probe at the host's core count, `plain` against index_select, 3 fresh processes with the index
#        drawn before the timed loop (as before) and 3 with it drawn inside each timed call into one buffer
#        (`--index random-per-call`, as a placement's cpu_sample does): does the draw take the gain?
#     2. host and host-numba against reference-host interleaved, 3 fresh processes; the record now keeps each host
#        table's huge-page share: did host-numba's table get its 2 MiB pages after two others took theirs?
#   bash scripts/device/issue23_s10.sh uva    (summary.txt, tests.log, results-e.json, all.tgz)
#     for the graph's fix (its draw copied to the device first; taken back out of main until measured,
#     docs/replay-zero-copy.md: bundle main with c13b965's code reverted, branch `uva-graph` of the working
#     checkout, instead of main): the zero-copy tests, the pass probe, 5 fresh
#     processes of the four zero-copy placements at 2^20, part e (uva-fused, uva-fused-bf16 at 2^20-2^26, to
#     replace part d's points), uva-fused-bf16 against uva-bf16 interleaved in 3 fresh processes; then the 2^24
#     prefix that slowed the whole-row fp32 kernel (uva, gpu, gpu-padded, then gpu-fused), now with the split.
source "$(dirname "$0")/common.sh"
R=$WORK/s10
mkdir -p "$R"
git rev-parse HEAD >> "$OUT/summary.txt" 2>&1
case "${1:-}" in
  host)
    T=$(nproc)
    for index in random random-per-call; do
      for k in 1 2 3; do
        [ "$(left)" -lt 60 ] && { log "gather $index process $k not started: $(left) s left"; break; }
        timeout 60 python3 scripts/probe_host_gather_streaming.py --threads "$T" --variants plain --index "$index" \
          --out "$R/gather-$index-$k.json" > /dev/null 2> "$R/gather-$index-$k.log"
        log "gather probe, $index index, process $k: rc=$? after $((SECONDS - START)) s"
      done
    done
    python3 scripts/probe_host_gather_streaming.py --summarize "$R"/gather-*.json --out-md "$OUT/gather.md"
    cat "$OUT/gather.md" >> "$OUT/summary.txt"
    interleaved host 1 3 --placements host,host-numba --against reference-host
    ;;
  uva)
    timeout 120 python3 -m pytest -q -o addopts="" -p no:cacheprovider tests/replay/test_sampler.py \
      tests/replay/test_transfer.py tests/replay/test_gpu_setup.py -k "uva or fused" 2>&1 | tail -15 > "$OUT/tests.log"
    log "tests: $(tail -1 "$OUT/tests.log") after $((SECONDS - START)) s"
    zero_copy_pass_and_processes
    replay e uva-fused,uva-fused-bf16 20,22,24,26
    cp "$R/e/results.json" "$OUT/results-e.json" 2>/dev/null
    interleaved inter-uva 1 3 --placements uva-fused-bf16 --against uva-bf16 --metrics cpu_sample_then_h2d_wall
    replay prefix24 uva,gpu,gpu-padded,gpu-fused 24 --no-ceilings  # the prefix that made the whole-row kernel slow
    ;;
  *) echo "usage: issue23_s10.sh host|uva" >&2; exit 2 ;;
esac
cp "$WORK/machine.txt" "$OUT/summary.txt" "$R/"
tar czf "$OUT/all.tgz" -C "$R" .
