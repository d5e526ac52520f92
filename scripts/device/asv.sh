#!/usr/bin/env bash
# Device calls B/C: the asv suites with --python=same for the commit carried in .gitbundle.
#   bash scripts/device/asv.sh REGEX...      (asv --bench regexes; results packed into $OUT/asv.tgz)
source "$(dirname "$0")/common.sh"
git init -q -b scratch . && git fetch -q .gitbundle "+HEAD:refs/heads/main" || exit 1
SHA=$(git rev-parse main)
M=$(python3 -m rlperf machine --print-name)
python3 -m rlperf machine --write --name "$M"
export ASV_PYTHONPATH="$PYTHONPATH" NUMBA_CACHE_DIR=/tmp/numba-cache NUMBA_NUM_THREADS=$(nproc)
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
# Compile the env kernels once, so asv processes load them from the cache instead of racing to compile.
python3 -c "from rlperf.envs import harness, registry; [harness.prepare(t) for t in registry.TASKS]"
bench=(); for b in "$@"; do bench+=(--bench "$b"); done
python3 -m asv run --python=same --set-commit-hash "$SHA" --machine "$M" --launch-method spawn \
  --record-samples --show-stderr "${bench[@]}" 2>&1 | tee "$WORK/asv.log" | grep -vE "^\s+(For parameters|asv: skipped|$)"
tar czf "$OUT/asv.tgz" -C . "results/$M" results/benchmarks.json -C "$WORK" asv.log machine.txt
