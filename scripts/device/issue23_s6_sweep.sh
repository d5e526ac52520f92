#!/usr/bin/env bash
# Issue 23, one device call (< 9.7 minutes): the GPU tests of the device-copy ceiling (now timed as the gathers are,
# measure.ceilings.DEVICE_INNER held copies a window) and of the SM copy kernel, then the whole single-GPU sweep
# (replay_single.sh) with the time left. Into $OUT: gpu-tests.log, results-{a,b}.json, machine.txt, logs.tgz.
source "$(dirname "$0")/common.sh"
START=$SECONDS
timeout 90 python3 -m pytest -q -o addopts="" -p no:cacheprovider -m gpu tests/measure/test_ceilings.py \
  tests/measure/test_sm_copy.py 2>&1 | tail -15 > "$OUT/gpu-tests.log"
echo "tests: $(tail -1 "$OUT/gpu-tests.log") after $((SECONDS - START)) s"
LIMIT_S=$((${LIMIT_S:-575} - (SECONDS - START))) bash scripts/device/replay_single.sh
