#!/usr/bin/env bash
# Issue 23, 2026-12-05 (session 13): the zero-copy part of the H200 report after the launch arguments were built once
# (UvaReplay 8e48294, StorageLayout f78bc20), and more interleaved host processes. Into $OUT:
#   bash scripts/device/issue23_s13.sh report   (results-e.json, replay-e.log, summary.txt, all.tgz; about 3 minutes)
#     one fresh `rlperf replay` process of the four zero-copy placements at 2^20..2^26 rows, with its own ceilings:
#     the report's part e, merged over parts a-c's points of these placements.
#   bash scripts/device/issue23_s13.sh host     (summary.txt, all.tgz; about 15 s a process)
#     host against reference-host, interleaved, in as many fresh processes as fit (at most 8): the absolute
#     targets (1.87 / 4.46 ms) are judged in the process state the issue's run was in, which comes by chance.
#   bash scripts/device/issue23_s13.sh capacity (summary.txt, all.tgz; about 5 minutes)
#     part e read uva-bf16 at 1.300 / 1.426 / 1.482 ms at 2^20 / 2^22 / 2^24 rows in one process, uva-fused-bf16
#     flat (1.29-1.33): the capacity, or the process's later state? The pass probe of uva-bf16 (split: the draw and
#     the wait apart) at 2^20 and 2^24 alternating, 3 fresh processes each, then uva-bf16 alone at 2^24 and 2^20
#     in fresh `rlperf replay` processes, alternating.
#   bash scripts/device/issue23_s13.sh ab       (summary.txt, all.tgz; about 3 minutes)
#     uva-bf16 and uva-fused-bf16 at 2^20 at three commits (before the launch cut, after it, after the layout cache),
#     in fresh processes, the order rotated: which change bought uva-bf16's drop from 1.53 to 1.31 ms.
source "$(dirname "$0")/common.sh"
R=$WORK/s13
mkdir -p "$R"
git rev-parse HEAD >> "$OUT/summary.txt" 2>&1
case "${1:-}" in
  report)
    replay e uva,uva-bf16,uva-fused,uva-fused-bf16 20,22,24,26
    cp "$R/e/results.json" "$OUT/results-e.json" 2>/dev/null
    cp "$R/e.log" "$OUT/replay-e.log"
    ;;
  host)
    interleaved host 1 8 --placements host --against reference-host
    ;;
  capacity)
    for k in 1 2 3; do
      for e in 20 24; do
        [ "$(left)" -lt 60 ] && { log "pass probe 2^$e process $k not started: $(left) s left"; break 2; }
        timeout 90 python3 scripts/device/probe_pass.py --placement uva-bf16 --capacity-exponent "$e" \
          --modes device-held,sample,pass,split,call --out "$R/pass-$e-$k.json" > /dev/null 2> "$R/pass-$e-$k.log"
        log "pass probe uva-bf16 2^$e, process $k: rc=$? after $((SECONDS - START)) s"
      done
    done
    python3 scripts/device/probe_pass.py --summarize "$R"/pass-*.json --out-md "$R/pass.md" >> "$R/pass.log" 2>&1
    cat "$R/pass.md" >> "$OUT/summary.txt"
    for k in 1 2 3; do
      for e in 24 20; do
        replay "b$e-$k" uva-bf16 "$e" --no-ceilings
      done
    done
    for e in 24 20; do
      python3 scripts/run_noise.py "$R"/b$e-?/results.json --out-md "$R/noise-$e.md" >> "$R/noise.log" 2>&1
      cat "$R/noise-$e.md" >> "$OUT/summary.txt"
    done
    ;;
  ab)
    # uva-bf16 read 1.309 ms (5 processes) after the cuts, against 1.532-1.551 before them on this host (other
    # days): more than the H100 split probe's 0.02-0.04 ms for the arguments. Which commit bought it? Three arms in
    # their own worktrees, fresh processes, the arm order rotated each round: aa2021b (before the cuts), 8e48294
    # (the uva placements' arguments and batch view built once), f78bc20 (StorageLayout's sizes cached).
    for c in aa2021b 8e48294 f78bc20; do git worktree add -q "/tmp/w-$c" "$c" || exit 1; done
    arms=(aa2021b 8e48294 f78bc20)
    for k in 0 1 2 3; do
      for j in 0 1 2; do
        c=${arms[(j + k) % 3]}
        [ "$(left)" -lt 30 ] && { log "arm $c round $k not started: $(left) s left"; break 2; }
        (cd "/tmp/w-$c" && PYTHONPATH="/tmp/w-$c/src:/tmp/site" timeout 60 python3 -m rlperf replay \
          --task g1_motion_tracking --sim motrix --placements uva-bf16,uva-fused-bf16 --capacity-exponents 20 \
          --gpu-counts 1 --no-plots --no-ceilings --out-json "$R/ab-$c-$k/results.json" > "$R/ab-$c-$k.log" 2>&1)
        log "arm $c round $k: rc=$? after $((SECONDS - START)) s"
      done
    done
    for c in "${arms[@]}"; do
      python3 scripts/run_noise.py "$R"/ab-$c-?/results.json --out-md "$R/ab-$c.md" >> "$R/noise.log" 2>&1
      cat "$R/ab-$c.md" >> "$OUT/summary.txt"
    done
    ;;
  *) echo "usage: issue23_s13.sh report|host|capacity|ab" >&2; exit 2 ;;
esac
cp "$WORK/machine.txt" "$OUT/summary.txt" "$R/"
tar czf "$OUT/all.tgz" -C "$R" .
