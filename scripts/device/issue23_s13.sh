#!/usr/bin/env bash
# Issue 23, 2026-12-05 (session 13): the zero-copy part of the H200 report after the launch arguments were built once
# (UvaReplay 8e48294, StorageLayout f78bc20), and more interleaved host processes. Into $OUT:
#   bash scripts/device/issue23_s13.sh report   (results-e.json, replay-e.log, summary.txt, all.tgz; about 3 minutes)
#     one fresh `rlperf replay` process of the four zero-copy placements at 2^20..2^26 rows, with its own ceilings:
#     the report's part e, merged over parts a-c's points of these placements.
#   bash scripts/device/issue23_s13.sh host     (summary.txt, all.tgz; about 15 s a process)
#     host against reference-host, interleaved, in as many fresh processes as fit (at most 8): the absolute
#     targets (1.87 / 4.46 ms) are judged in the process state the issue's run was in, which comes by chance.
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
  *) echo "usage: issue23_s13.sh report|host" >&2; exit 2 ;;
esac
cp "$WORK/machine.txt" "$OUT/summary.txt" "$R/"
tar czf "$OUT/all.tgz" -C "$R" .
