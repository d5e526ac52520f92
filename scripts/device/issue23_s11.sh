#!/usr/bin/env bash
# Issue 23, 2026-12-05 (session 11): the eager half of the graph's A/B. Session 11 ran `issue23_s10.sh uva` on
# branch `uva-graph` (the CUDA-graph pass with its draw copied to the device) on an H100 host, the only kind lent.
# Whether the graph stays depends on its wall against the eager launch's on the same kind of machine, so this runs
# the same parts on main (the eager `sample_int4` launch). Into $OUT (summary.txt, all.tgz; about 3 minutes):
#   bash scripts/device/issue23_s11.sh eager
#     the pass probe of uva-fused-bf16, 5 fresh processes of the four zero-copy placements at 2^20 (the order
#     rotated), uva-fused-bf16 against uva-bf16 interleaved in 3 fresh processes.
source "$(dirname "$0")/common.sh"
R=$WORK/s11
mkdir -p "$R"
git rev-parse HEAD >> "$OUT/summary.txt" 2>&1
case "${1:-}" in
  eager)
    zero_copy_pass_and_processes
    interleaved inter-uva 1 3 --placements uva-fused-bf16 --against uva-bf16 --metrics cpu_sample_then_h2d_wall
    ;;
  *) echo "usage: issue23_s11.sh eager" >&2; exit 2 ;;
esac
cp "$WORK/machine.txt" "$OUT/summary.txt" "$R/"
tar czf "$OUT/all.tgz" -C "$R" .
