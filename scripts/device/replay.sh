#!/usr/bin/env bash
# One device call for the replay work: GPU tests, then the full replay sweep; results packed into $OUT.
source "$(dirname "$0")/common.sh"
python3 -m pytest -q -p no:cacheprovider -m gpu tests/replay/test_cases.py 2>&1 | tee "$WORK/gpu-tests.log"
python3 -m rlperf replay --task g1_motion_tracking --sim motrix --capacity-exponents 20,22,24,26,28,30 \
  --gpu-counts 1,2,4,8 --out-json "$WORK/replay/results.json" 2>&1 | tee "$WORK/replay.log"
tar czf "$OUT/replay.tgz" -C "$WORK" .
