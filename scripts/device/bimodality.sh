#!/usr/bin/env bash
# One device call for docs/replay-bimodality.md: the gather probe on a base tree and on this one, the GPU
# tests of the fix, then 5 fresh `rlperf replay` processes of every GPU gather at 2^20 rows; into $OUT.
#   BASE_SRC=<src of the tree to compare> WHEELS=<folder of hydra/omegaconf/antlr wheels> bash scripts/device/bimodality.sh
set -uo pipefail
: "${OUT:?OUT must name the folder whose files come back}"
cd "$(dirname "$0")/../.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
  "${WHEELS:-.wheels}"/*.whl || exit 1
export PYTHONUNBUFFERED=1 SITE=/tmp/site
GPU_PLACEMENTS=gpu,gpu-padded,gpu-fused,gpu-fused-padded,gpu-bf16,gpu-fused-bf16,gpu-compact
nvidia-smi -q -d CLOCK > "$OUT/clocks-before.txt" 2>&1
{ git rev-parse HEAD 2>/dev/null; nproc; nvidia-smi --query-gpu=name,driver_version --format=csv; } > "$OUT/machine.txt" 2>&1
PYTHONPATH=$PWD/src:$SITE python3 -m pytest -q -p no:cacheprovider -m gpu tests/measure/test_timing.py \
  tests/replay/test_storage.py tests/replay/test_gpu_setup.py tests/replay/test_cases.py 2>&1 | tee "$OUT/gpu-tests.log"
if [ -n "${BASE_SRC:-}" ]; then  # the ordering test must fail on the base tree
  PYTHONPATH=$BASE_SRC:$SITE python3 -m pytest -q -p no:cacheprovider -m gpu tests/replay/test_gpu_setup.py 2>&1 \
    | tail -4 | tee "$OUT/gpu-tests-base.log"
  PYTHONPATH=$BASE_SRC:$SITE python3 scripts/device/probe_gpu_gather.py --procs "${PROCS:-8}" --out "$OUT/probe-base.jsonl"
fi
PYTHONPATH=$PWD/src:$SITE python3 scripts/device/probe_gpu_gather.py --procs "${PROCS:-8}" --out "$OUT/probe-fix.jsonl"
W=$(mktemp -d)
for k in 1 2 3 4 5; do
  PYTHONPATH=$PWD/src:$SITE python3 -m rlperf replay --task g1_motion_tracking --sim motrix --placements $GPU_PLACEMENTS \
    --capacity-exponents 20 --gpu-counts 1 --no-plots --no-ceilings --out-json "$W/run$k/results.json" > "$W/run$k.log" 2>&1
  echo "rlperf run $k rc=$?"
done
PYTHONPATH=$PWD/src:$SITE python3 scripts/run_noise.py "$W"/run*/results.json --out-md "$W/noise.md" && cat "$W/noise.md"
nvidia-smi -q -d CLOCK > "$OUT/clocks-after.txt" 2>&1
tar czf "$OUT/rlperf-runs.tgz" -C "$W" .
