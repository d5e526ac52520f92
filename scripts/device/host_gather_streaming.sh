#!/usr/bin/env bash
# Issue 23 section 3 on the H200 host, into $OUT (< 3 minutes): the experimental host gathers
# (rlperf.replay.host_gather: plain, prefetch, 16 B streaming stores, both) against torch.index_select, timed
# interleaved round by round in one process (scripts/probe_host_gather_streaming.py), in 5 fresh processes at
# the host's core count (the `host` placement's threads), staging pinned (CUDA is there); then the table,
# made by a command. docs/replay-host-vs-reference.md says what the 2-vCPU box measured and what to read here.
# PROCS sets the count of fresh processes (default 5). Arguments go to the probe, e.g. `--h2d --variants plain,stream-line` (the copy after each gather, timed too).
source "$(dirname "$0")/common.sh"
R=$WORK/runs
mkdir -p "$R"
T=$(nproc)
cp "$WORK/machine.txt" "$R/machine.txt"
{ git rev-parse HEAD 2>/dev/null; lscpu | grep "Model name"; cat /sys/kernel/mm/transparent_hugepage/enabled; } \
  >> "$R/machine.txt" 2>&1
python3 -m pytest -q -o addopts="" -p no:cacheprovider tests/replay/test_host_gather.py 2>&1 | tail -3 \
  | tee "$OUT/parity-tests.log"
for k in $(seq "${PROCS:-5}"); do
  echo "$(date -u +%FT%TZ) start p$k load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$R/log.txt"
  timeout 40 python3 scripts/probe_host_gather_streaming.py --threads "$T" "$@" --out "$R/t$T-p$k.json" > /dev/null 2>> "$R/log.txt"
  rc=$?
  echo "$(date -u +%FT%TZ) end p$k rc=$rc" | tee -a "$R/log.txt"
done
python3 scripts/probe_host_gather_streaming.py --summarize "$R"/t*-p*.json --out-md "$OUT/summary.md"
cat "$OUT/summary.md"
tar czf "$OUT/runs.tgz" -C "$R" .
