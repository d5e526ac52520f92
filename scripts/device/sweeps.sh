#!/usr/bin/env bash
# Device call A: the replay sweep (rlperf replay) and the env-kernel sweep (rlperf env) on the GPU host.
source "$(dirname "$0")/common.sh"
python3 -m pytest -q -p no:cacheprovider -m gpu tests/replay/test_cases.py tests/replay/multirank/ 2>&1 \
  | tee "$WORK/gpu-tests.log"
python3 -m rlperf replay --task g1_motion_tracking --sim motrix --capacity-exponents 20,22,24,26,28,30 \
  --gpu-counts 1,2,4,8 --out-json "$WORK/replay/results.json" 2>&1 | tee "$WORK/replay.log"
OUT="$WORK" bash scripts/device_env_sweep.sh 2>&1 | tail -n 60
rm -rf "$WORK/env/.numba_cache"
tar czf "$OUT/sweeps.tgz" -C "$WORK" .
